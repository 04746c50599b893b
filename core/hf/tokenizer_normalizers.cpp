// The normalizers of a tokenizer.json (NFC/NFD/NFKC/NFKD, Lowercase, Prepend, Replace, Strip, Sequence) and their
// reader.
#include "hf/tokenizer_steps.h"
#include "hf/unicode_text.h"

namespace plab::hf::detail {

namespace {

struct UnicodeNormalizer final : Normalizer {
    NormalForm form;
    explicit UnicodeNormalizer(NormalForm f) : form(f) {}
    void apply(std::string& text) const override { text = normalizeText(text, form); }
};

struct LowercaseNormalizer final : Normalizer {
    void apply(std::string& text) const override { text = lowercaseText(text); }
};

struct PrependNormalizer final : Normalizer {
    std::string prefix;
    void apply(std::string& text) const override
    {
        if (!text.empty()) // HF prepends to a text that has a first character only
            text.insert(0, prefix);
    }
};

struct ReplaceNormalizer final : Normalizer {
    Pattern pattern;
    std::string content;
    ReplaceNormalizer(Pattern p, std::string c) : pattern(std::move(p)), content(std::move(c)) {}
    void apply(std::string& text) const override { text = replaceAll(text, pattern, content); }
};

struct StripNormalizer final : Normalizer {
    bool left = true, right = true;
    void apply(std::string& text) const override
    {
        size_t start = 0, end = text.size();
        size_t length = 0;
        while (left && start < end && isWhitespaceChar(codePointAt(text, start, &length)))
            start += length;
        while (right && end > start) {
            size_t back = end - 1;
            while (back > start && (static_cast<unsigned char>(text[back]) & 0xc0) == 0x80)
                --back;
            if (!isWhitespaceChar(codePointAt(text, back, &length)))
                break;
            end = back;
        }
        text = text.substr(start, end - start);
    }
};

struct SequenceNormalizer final : Normalizer {
    std::vector<std::unique_ptr<Normalizer>> steps;
    void apply(std::string& text) const override
    {
        for (const auto& step : steps)
            step->apply(text);
    }
};

} // namespace

std::unique_ptr<Normalizer> readNormalizer(const Fields& fields, int& sequenceDepth)
{
    const std::string type = fields.text("type");
    if (type == "NFC" || type == "NFD" || type == "NFKC" || type == "NFKD") {
        const NormalForm form = type == "NFC"    ? NormalForm::Nfc
                                : type == "NFD"  ? NormalForm::Nfd
                                : type == "NFKC" ? NormalForm::Nfkc
                                                 : NormalForm::Nfkd;
        return std::make_unique<UnicodeNormalizer>(form);
    }
    if (type == "Lowercase")
        return std::make_unique<LowercaseNormalizer>();
    if (type == "Prepend") {
        auto step = std::make_unique<PrependNormalizer>();
        step->prefix = fields.text("prepend");
        return step;
    }
    if (type == "Replace")
        return std::make_unique<ReplaceNormalizer>(Pattern(fields.object("pattern")), fields.text("content"));
    if (type == "Strip") {
        auto step = std::make_unique<StripNormalizer>();
        step->left = fields.flag("strip_left", true);
        step->right = fields.flag("strip_right", true);
        return step;
    }
    if (type == "Sequence") {
        const SequenceLevel level(sequenceDepth, fields);
        auto step = std::make_unique<SequenceNormalizer>();
        const json& list = fields.array("normalizers");
        for (size_t i = 0; i < list.size(); ++i)
            step->steps.push_back(readNormalizer(
                Fields(list[i], fields.path("normalizers") + "[" + std::to_string(i) + "]", fields.origin()),
                sequenceDepth));
        return step;
    }
    throw InputError(
        unsupportedType(fields, type, "NFC, NFD, NFKC, NFKD, Lowercase, Prepend, Replace, Strip, Sequence"));
}

bool prependsMetaspaceMark(const Normalizer& normalizer)
{
    if (const auto* sequence = dynamic_cast<const SequenceNormalizer*>(&normalizer))
        for (const auto& step : sequence->steps)
            if (const auto* prepend = dynamic_cast<const PrependNormalizer*>(step.get()))
                if (prepend->prefix == "\xE2\x96\x81") // Llama 2's ▁
                    return true;
    return false;
}

} // namespace plab::hf::detail
