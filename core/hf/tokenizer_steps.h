// The parts of a tokenizer.json that tokenizer.cpp assembles (internal to core/hf): reading its fields, patterns and
// splits, and the normalizer, pre-tokenizer and decoder steps, each read by its own file.
#pragma once

#include "base/errors.h"
#include "base/json_input.h"
#include "hf/regex.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace plab::hf::detail {

using json = nlohmann::json;
using Ranges = std::vector<std::pair<size_t, size_t>>;

// Sequence normalizers, pre-tokenizers, decoders and post-processors nest; real files use one or two levels.
constexpr int kMaxSequenceDepth = 16;

// ---- reading tokenizer.json: every message names the file and the field ----

class Fields {
public:
    Fields(const json& object, std::string path, const std::string& origin)
        : m_object(object), m_path(std::move(path)), m_origin(origin)
    {
        if (!object.is_object())
            throw InputError(m_origin + ": " + (m_path.empty() ? "the top level" : m_path) +
                             " must be an object, not " + jsonExcerpt(object));
    }

    std::string path(const std::string& key) const { return m_path.empty() ? key : m_path + "." + key; }
    [[noreturn]] void fail(const std::string& key, const std::string& what) const
    {
        throw InputError(m_origin + ": " + path(key) + " " + what);
    }
    // The member, or nullptr when it is absent or null.
    const json* find(const std::string& key) const
    {
        const auto it = m_object.find(key);
        return it == m_object.end() || it->is_null() ? nullptr : &*it;
    }
    const json& required(const std::string& key) const
    {
        const json* value = find(key);
        if (!value)
            fail(key, "is missing");
        return *value;
    }
    std::string text(const std::string& key) const
    {
        const json& value = required(key);
        if (!value.is_string())
            fail(key, "must be a string, not " + jsonExcerpt(value));
        return value.get<std::string>();
    }
    std::string text(const std::string& key, const std::string& fallback) const
    {
        return find(key) ? text(key) : fallback;
    }
    bool flag(const std::string& key, bool fallback) const
    {
        const json* value = find(key);
        if (!value)
            return fallback;
        if (!value->is_boolean())
            fail(key, "must be true or false, not " + jsonExcerpt(*value));
        return value->get<bool>();
    }
    long long integer(const std::string& key, long long lo, long long hi) const
    {
        const json& value = required(key);
        if (!value.is_number_integer() || value.get<long long>() < lo || value.get<long long>() > hi)
            fail(key, "must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], not " +
                          jsonExcerpt(value));
        return value.get<long long>();
    }
    Fields object(const std::string& key) const { return Fields(required(key), path(key), m_origin); }
    const json& array(const std::string& key) const
    {
        const json& value = required(key);
        if (!value.is_array())
            fail(key, "must be an array");
        return value;
    }
    const std::string& origin() const { return m_origin; }
    const std::string& ownPath() const { return m_path; }
    const json& raw() const { return m_object; }

private:
    const json& m_object;
    std::string m_path;
    const std::string& m_origin;
};

// "ORIGIN: PATH.type \"TYPE\" is not supported (supported: ...)".
std::string unsupportedType(const Fields& fields, const std::string& type, const std::string& supported);

// Entered around each Sequence read: InputError past kMaxSequenceDepth, so a Sequence nested thousands deep is refused
// by name instead of recursing until the stack runs out. `depth` counts the Sequence steps being read inside each
// other.
class SequenceLevel {
public:
    SequenceLevel(int& depth, const Fields& fields) : m_depth(depth)
    {
        if (++m_depth > kMaxSequenceDepth) {
            --m_depth;
            throw InputError(fields.origin() + ": " + fields.ownPath() + " nests Sequence steps more than " +
                             std::to_string(kMaxSequenceDepth) + " deep; allowed: at most " +
                             std::to_string(kMaxSequenceDepth) + " levels");
        }
    }
    ~SequenceLevel() { --m_depth; }
    SequenceLevel(const SequenceLevel&) = delete;
    SequenceLevel& operator=(const SequenceLevel&) = delete;

private:
    int& m_depth;
};

// ---- patterns: a literal string or a regex ----

class Pattern {
public:
    // A {"String": s} or {"Regex": r} object.
    explicit Pattern(const Fields& fields)
    {
        if (fields.find("String")) {
            m_literal = fields.text("String");
            if (m_literal.empty())
                fields.fail("String", "must not be empty");
        } else if (fields.find("Regex")) {
            m_regex.emplace(fields.text("Regex"), fields.origin() + ": " + fields.path("Regex"));
        } else {
            throw InputError(fields.origin() + ": " + fields.ownPath() + " must hold \"String\" or \"Regex\"");
        }
    }
    explicit Pattern(std::string literal) : m_literal(std::move(literal)) {}

    void findAll(std::string_view text, Ranges& matches) const
    {
        if (m_regex) {
            m_regex->findAll(text, matches);
            return;
        }
        for (size_t pos = text.find(m_literal); pos != std::string_view::npos;
             pos = text.find(m_literal, pos + m_literal.size()))
            matches.emplace_back(pos, pos + m_literal.size());
    }

private:
    std::string m_literal;
    std::optional<Regex> m_regex;
};

// `text` with every match of `pattern` replaced by `content`.
std::string replaceAll(std::string_view text, const Pattern& pattern, std::string_view content);

// ---- splitting a piece, as NormalizedString::split does ----

enum class SplitBehavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

SplitBehavior splitBehaviorOf(const Fields& fields);
// The kept ranges of a text of `length` bytes split at `matches` (sorted, not overlapping), empty ones left out.
Ranges splitRanges(size_t length, const Ranges& matches, SplitBehavior behavior, bool invert);

// A piece of text between pre-tokenizer steps; `atStart` when it begins the whole input (Metaspace's "first").
struct Piece {
    std::string text;
    bool atStart = false;
};

// Every piece split at what `find` matches in it, as `behavior` keeps the matches.
void splitPieces(std::vector<Piece>& pieces, const std::function<void(const std::string&, Ranges&)>& find,
                 SplitBehavior behavior, bool invert);

enum class PrependScheme { Always, First, Never };

// ---- the steps (tokenizer_normalizers.cpp, tokenizer_pretokenizers.cpp, tokenizer_decoders.cpp) ----

struct Normalizer {
    virtual ~Normalizer() = default;
    virtual void apply(std::string& text) const = 0;
};

// The normalizer a tokenizer.json's "normalizer" object describes (Sequences counted in `sequenceDepth`).
std::unique_ptr<Normalizer> readNormalizer(const Fields& fields, int& sequenceDepth);
// Whether a Sequence normalizer prepends Metaspace's mark "\xE2\x96\x81" (Llama 2's files, which have no
// pre-tokenizer): the tokenizer is then a Metaspace one.
bool prependsMetaspaceMark(const Normalizer& normalizer);

struct PreTokenizer {
    virtual ~PreTokenizer() = default;
    virtual void apply(std::vector<Piece>& pieces) const = 0;
};

// What the pre-tokenizer read says of the tokenizer's kind, for its summary.
struct PreTokenizerKinds {
    bool byteLevel = false, metaspace = false;
};
std::unique_ptr<PreTokenizer> readPreTokenizer(const Fields& fields, int& sequenceDepth, PreTokenizerKinds& kinds);

struct Decoder {
    virtual ~Decoder() = default;
    virtual void apply(std::vector<std::string>& tokens) const = 0;
};

std::unique_ptr<Decoder> readDecoder(const Fields& fields, int& sequenceDepth);

} // namespace plab::hf::detail
