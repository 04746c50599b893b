// The pre-tokenizers of a tokenizer.json (ByteLevel, Split, Digits, Metaspace, Sequence) and their reader.
#include "hf/tokenizer_steps.h"
#include "hf/unicode_text.h"

namespace plab::hf::detail {

namespace {

// GPT-2's pre-tokenizer regex, which ByteLevel applies when use_regex is true.
constexpr const char* kGpt2Pattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

struct ByteLevelPreTokenizer final : PreTokenizer {
    bool addPrefixSpace = false;
    std::optional<Regex> regex; // GPT-2's, when use_regex
    void apply(std::vector<Piece>& pieces) const override
    {
        if (addPrefixSpace)
            for (Piece& piece : pieces)
                if (!piece.text.empty() && piece.text[0] != ' ')
                    piece.text.insert(0, " ");
        if (regex)
            splitPieces(
                pieces, [&](const std::string& text, Ranges& matches) { regex->findAll(text, matches); },
                SplitBehavior::Isolated, false);
        const auto& chars = byteLevelChars();
        for (Piece& piece : pieces) {
            std::string mapped;
            mapped.reserve(piece.text.size() * 2);
            for (const char c : piece.text)
                mapped += chars[static_cast<unsigned char>(c)];
            piece.text = std::move(mapped);
        }
    }
};

struct SplitPreTokenizer final : PreTokenizer {
    Pattern pattern;
    SplitBehavior behavior;
    bool invert;
    SplitPreTokenizer(Pattern p, SplitBehavior b, bool i) : pattern(std::move(p)), behavior(b), invert(i) {}
    void apply(std::vector<Piece>& pieces) const override
    {
        splitPieces(
            pieces, [&](const std::string& text, Ranges& matches) { pattern.findAll(text, matches); }, behavior,
            invert);
    }
};

struct DigitsPreTokenizer final : PreTokenizer {
    bool individualDigits = false;
    void apply(std::vector<Piece>& pieces) const override
    {
        // Each numeric character is a match of its own; runs of them join when digits are not individual.
        const auto find = [](const std::string& text, Ranges& matches) {
            size_t length = 0;
            for (size_t pos = 0; pos < text.size(); pos += length)
                if (isNumericChar(codePointAt(text, pos, &length)))
                    matches.emplace_back(pos, pos + length);
        };
        splitPieces(pieces, find, individualDigits ? SplitBehavior::Isolated : SplitBehavior::Contiguous, false);
    }
};

struct MetaspacePreTokenizer final : PreTokenizer {
    std::string replacement;
    PrependScheme scheme = PrependScheme::Always;
    bool split = true;
    void apply(std::vector<Piece>& pieces) const override
    {
        const Pattern space(" ");
        for (Piece& piece : pieces) {
            piece.text = replaceAll(piece.text, space, replacement);
            const bool prepend = scheme == PrependScheme::Always || (scheme == PrependScheme::First && piece.atStart);
            if (prepend && !piece.text.empty() && piece.text.compare(0, replacement.size(), replacement) != 0)
                piece.text.insert(0, replacement);
        }
        if (split) {
            const Pattern mark(replacement);
            splitPieces(
                pieces, [&](const std::string& text, Ranges& matches) { mark.findAll(text, matches); },
                SplitBehavior::MergedWithNext, false);
        }
    }
};

struct SequencePreTokenizer final : PreTokenizer {
    std::vector<std::unique_ptr<PreTokenizer>> steps;
    void apply(std::vector<Piece>& pieces) const override
    {
        for (const auto& step : steps)
            step->apply(pieces);
    }
};

} // namespace

std::unique_ptr<PreTokenizer> readPreTokenizer(const Fields& fields, int& sequenceDepth, PreTokenizerKinds& kinds)
{
    const std::string type = fields.text("type");
    if (type == "ByteLevel") {
        auto step = std::make_unique<ByteLevelPreTokenizer>();
        step->addPrefixSpace = fields.flag("add_prefix_space", true);
        if (fields.flag("use_regex", true))
            step->regex.emplace(kGpt2Pattern, fields.origin() + ": " + fields.path("use_regex"));
        kinds.byteLevel = true;
        return step;
    }
    if (type == "Split")
        return std::make_unique<SplitPreTokenizer>(Pattern(fields.object("pattern")), splitBehaviorOf(fields),
                                                   fields.flag("invert", false));
    if (type == "Digits") {
        auto step = std::make_unique<DigitsPreTokenizer>();
        step->individualDigits = fields.flag("individual_digits", false);
        return step;
    }
    if (type == "Metaspace") {
        auto step = std::make_unique<MetaspacePreTokenizer>();
        step->replacement = fields.text("replacement");
        if (step->replacement.empty() || charLength(step->replacement, 0) != step->replacement.size() ||
            firstInvalidUtf8(step->replacement) != std::string_view::npos)
            fields.fail("replacement", "must be one character, not \"" + step->replacement + "\"");
        if (fields.find("prepend_scheme")) {
            const std::string scheme = fields.text("prepend_scheme");
            if (scheme == "always")
                step->scheme = PrependScheme::Always;
            else if (scheme == "first")
                step->scheme = PrependScheme::First;
            else if (scheme == "never")
                step->scheme = PrependScheme::Never;
            else
                fields.fail("prepend_scheme", "\"" + scheme + "\" is not one of always, first, never");
        } else {
            // Files written before prepend_scheme existed say add_prefix_space.
            step->scheme = fields.flag("add_prefix_space", true) ? PrependScheme::Always : PrependScheme::Never;
        }
        step->split = fields.flag("split", true);
        kinds.metaspace = true;
        return step;
    }
    if (type == "Sequence") {
        const SequenceLevel level(sequenceDepth, fields);
        auto step = std::make_unique<SequencePreTokenizer>();
        const json& list = fields.array("pretokenizers");
        for (size_t i = 0; i < list.size(); ++i)
            step->steps.push_back(readPreTokenizer(
                Fields(list[i], fields.path("pretokenizers") + "[" + std::to_string(i) + "]", fields.origin()),
                sequenceDepth, kinds));
        return step;
    }
    throw InputError(unsupportedType(fields, type, "ByteLevel, Split, Digits, Metaspace, Sequence"));
}

} // namespace plab::hf::detail
