// The decoders of a tokenizer.json (ByteLevel, Metaspace, Replace, ByteFallback, Fuse, Strip, Sequence) and their
// reader.
#include "hf/tokenizer_steps.h"
#include "hf/unicode_text.h"

#include <cctype>
#include <cstdio>

namespace plab::hf::detail {

namespace {

constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";

struct ByteLevelDecoder final : Decoder {
    void apply(std::vector<std::string>& tokens) const override
    {
        // A token made of byte-level characters stands for their bytes; any other token for its own UTF-8 bytes.
        std::string bytes;
        for (const std::string& token : tokens) {
            std::string own;
            bool allByteLevel = true;
            size_t length = 0;
            for (size_t pos = 0; pos < token.size() && allByteLevel; pos += length) {
                const int byte = byteOfByteLevelChar(codePointAt(token, pos, &length));
                if (byte < 0)
                    allByteLevel = false;
                else
                    own += static_cast<char>(byte);
            }
            bytes += allByteLevel ? own : token;
        }
        tokens = {utf8Lossy(bytes)};
    }
};

struct MetaspaceDecoder final : Decoder {
    std::string replacement;
    PrependScheme scheme = PrependScheme::Always;
    void apply(std::vector<std::string>& tokens) const override
    {
        // The first token loses its replacement characters (the prepended space), the others turn them into spaces.
        const Pattern mark(replacement);
        for (size_t i = 0; i < tokens.size(); ++i)
            tokens[i] = replaceAll(tokens[i], mark, i == 0 && scheme != PrependScheme::Never ? "" : " ");
    }
};

struct ReplaceDecoder final : Decoder {
    Pattern pattern;
    std::string content;
    ReplaceDecoder(Pattern p, std::string c) : pattern(std::move(p)), content(std::move(c)) {}
    void apply(std::vector<std::string>& tokens) const override
    {
        for (std::string& token : tokens)
            token = replaceAll(token, pattern, content);
    }
};

struct ByteFallbackDecoder final : Decoder {
    void apply(std::vector<std::string>& tokens) const override
    {
        // Runs of <0xNN> tokens become their bytes when those are UTF-8, else one U+FFFD per byte (as HF does).
        std::vector<std::string> out;
        std::string bytes;
        size_t byteCount = 0;
        const auto flush = [&] {
            if (byteCount == 0)
                return;
            if (firstInvalidUtf8(bytes) == std::string_view::npos)
                out.push_back(bytes);
            else
                for (size_t i = 0; i < byteCount; ++i)
                    out.emplace_back(kReplacementChar);
            bytes.clear();
            byteCount = 0;
        };
        for (std::string& token : tokens) {
            unsigned value = 0;
            const bool isByte = token.size() == 6 && token.compare(0, 3, "<0x") == 0 && token[5] == '>' &&
                                std::isxdigit(static_cast<unsigned char>(token[3])) &&
                                std::isxdigit(static_cast<unsigned char>(token[4])) &&
                                std::sscanf(token.c_str() + 3, "%2x", &value) == 1;
            if (isByte) {
                bytes += static_cast<char>(value);
                ++byteCount;
            } else {
                flush();
                out.push_back(std::move(token));
            }
        }
        flush();
        tokens = std::move(out);
    }
};

struct FuseDecoder final : Decoder {
    void apply(std::vector<std::string>& tokens) const override
    {
        std::string all;
        for (const std::string& token : tokens)
            all += token;
        tokens = {all};
    }
};

struct StripDecoder final : Decoder {
    char32_t content = U' ';
    size_t start = 0, stop = 0;
    void apply(std::vector<std::string>& tokens) const override
    {
        // Up to `start` leading and `stop` trailing `content` characters of each token.
        for (std::string& token : tokens) {
            std::vector<std::pair<size_t, char32_t>> chars; // byte offset, code point
            size_t length = 0;
            for (size_t pos = 0; pos < token.size(); pos += length)
                chars.emplace_back(pos, codePointAt(token, pos, &length));
            size_t first = 0, last = chars.size();
            while (first < std::min(start, chars.size()) && chars[first].second == content)
                ++first;
            for (size_t i = 0; i < stop && last > first && chars[last - 1].second == content; ++i)
                --last;
            const size_t from = first < chars.size() ? chars[first].first : token.size();
            const size_t to = last < chars.size() ? chars[last].first : token.size();
            token = token.substr(from, to - from);
        }
    }
};

struct SequenceDecoder final : Decoder {
    std::vector<std::unique_ptr<Decoder>> steps;
    void apply(std::vector<std::string>& tokens) const override
    {
        for (const auto& step : steps)
            step->apply(tokens);
    }
};

} // namespace

std::unique_ptr<Decoder> readDecoder(const Fields& fields, int& sequenceDepth)
{
    const std::string type = fields.text("type");
    if (type == "ByteLevel")
        return std::make_unique<ByteLevelDecoder>();
    if (type == "Metaspace") {
        auto step = std::make_unique<MetaspaceDecoder>();
        step->replacement = fields.text("replacement");
        const std::string scheme =
            fields.text("prepend_scheme", fields.flag("add_prefix_space", true) ? "always" : "never");
        step->scheme = scheme == "never"   ? PrependScheme::Never
                       : scheme == "first" ? PrependScheme::First
                                           : PrependScheme::Always;
        return step;
    }
    if (type == "Replace")
        return std::make_unique<ReplaceDecoder>(Pattern(fields.object("pattern")), fields.text("content"));
    if (type == "ByteFallback")
        return std::make_unique<ByteFallbackDecoder>();
    if (type == "Fuse")
        return std::make_unique<FuseDecoder>();
    if (type == "Strip") {
        auto step = std::make_unique<StripDecoder>();
        const std::string content = fields.text("content");
        size_t length = 0;
        if (content.empty() || firstInvalidUtf8(content) != std::string_view::npos ||
            (codePointAt(content, 0, &length), length != content.size()))
            fields.fail("content", "must be one character, not \"" + content + "\"");
        step->content = codePointAt(content, 0, &length);
        step->start = static_cast<size_t>(fields.integer("start", 0, 1 << 20));
        step->stop = static_cast<size_t>(fields.integer("stop", 0, 1 << 20));
        return step;
    }
    if (type == "Sequence") {
        const SequenceLevel level(sequenceDepth, fields);
        auto step = std::make_unique<SequenceDecoder>();
        const json& list = fields.array("decoders");
        for (size_t i = 0; i < list.size(); ++i)
            step->steps.push_back(
                readDecoder(Fields(list[i], fields.path("decoders") + "[" + std::to_string(i) + "]", fields.origin()),
                            sequenceDepth));
        return step;
    }
    throw InputError(
        unsupportedType(fields, type, "ByteLevel, Metaspace, Replace, ByteFallback, Fuse, Strip, Sequence"));
}

} // namespace plab::hf::detail
