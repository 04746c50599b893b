// A Hugging Face tokenizer.json read and run as the tokenizers library does (see tokenizer.h).
#include "hf/tokenizer.h"

#include "base/errors.h"
#include "base/json_input.h"
#include "hf/tokenizer_steps.h"
#include "hf/unicode_text.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <queue>
#include <sstream>
#include <unordered_map>

namespace plab::hf {

namespace {

using namespace detail;

// ---- post-processors: the special tokens around a sequence ----

struct TemplateItem {
    bool isSequence = false;
    std::vector<int> ids; // a special token's
    std::vector<std::string> tokens;
};

// ---- the BPE model ----

struct Bpe {
    std::unordered_map<std::string, int> vocab;
    std::unordered_map<uint64_t, std::pair<int, int>> merges; // (left id, right id) -> (rank, merged id)
    std::optional<int> unkId;
    bool fuseUnk = false;
    bool byteFallback = false;
    bool ignoreMerges = false;
    std::string continuingPrefix, endSuffix;
    std::array<int, 256> byteTokenIds{}; // <0xNN>'s id, or -1

    static uint64_t pairKey(int left, int right)
    {
        return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
    }

    // A symbol of a word being merged: its id and its neighbours in the linked list (-1 at the ends).
    struct Symbol {
        int id;
        int prev, next;
    };

    // The ids of one pre-tokenized word, as HF's BPE::merge_word and Word::merge_all make them.
    void tokenize(std::string_view word, std::vector<int>& out) const
    {
        if (word.empty())
            return;
        if (ignoreMerges) {
            const auto it = vocab.find(std::string(word));
            if (it != vocab.end()) {
                out.push_back(it->second);
                return;
            }
        }
        std::vector<Symbol> symbols = wordSymbols(word);
        if (symbols.empty())
            return;
        mergeAll(symbols);
        for (int i = 0; i >= 0; i = symbols[i].next)
            out.push_back(symbols[i].id);
    }

    // The word's characters as symbols (BPE::merge_word): each character's id with the continuing prefix and end
    // suffix, else its bytes' <0xNN> tokens under byte fallback, else <unk> (runs fused into one when fuse_unk).
    std::vector<Symbol> wordSymbols(std::string_view word) const
    {
        std::vector<Symbol> symbols;
        symbols.reserve(word.size());
        const auto add = [&](int id) {
            symbols.push_back({id, static_cast<int>(symbols.size()) - 1, static_cast<int>(symbols.size()) + 1});
        };
        std::optional<int> pendingUnk;
        std::string piece;
        for (size_t pos = 0; pos < word.size();) {
            const size_t length = charLength(word, pos);
            piece.assign(word.substr(pos, length));
            if (pos > 0 && !continuingPrefix.empty())
                piece.insert(0, continuingPrefix);
            if (pos + length == word.size() && !endSuffix.empty())
                piece += endSuffix;
            const auto it = vocab.find(piece);
            if (it != vocab.end()) {
                if (pendingUnk) {
                    add(*pendingUnk);
                    pendingUnk.reset();
                }
                add(it->second);
            } else {
                bool fellBack = false;
                if (byteFallback) {
                    fellBack = std::all_of(piece.begin(), piece.end(),
                                           [&](char c) { return byteTokenIds[static_cast<unsigned char>(c)] >= 0; });
                    if (fellBack)
                        for (const char c : piece)
                            add(byteTokenIds[static_cast<unsigned char>(c)]);
                }
                if (!fellBack && unkId) {
                    if (pendingUnk && !fuseUnk)
                        add(*pendingUnk);
                    pendingUnk = *unkId;
                }
            }
            pos += length;
        }
        if (pendingUnk)
            add(*pendingUnk);
        if (!symbols.empty())
            symbols.back().next = -1;
        return symbols;
    }

    // Word::merge_all: lowest rank first, then leftmost; a queued merge whose symbols changed since is passed over.
    void mergeAll(std::vector<Symbol>& symbols) const
    {
        struct Candidate {
            int rank, pos, newId;
            bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
        };
        std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
        const auto consider = [&](int left) {
            const int right = symbols[left].next;
            if (right < 0)
                return;
            const auto it = merges.find(pairKey(symbols[left].id, symbols[right].id));
            if (it != merges.end())
                queue.push({it->second.first, left, it->second.second});
        };
        for (int i = 0; i + 1 < static_cast<int>(symbols.size()); ++i)
            consider(i);
        std::vector<bool> removed(symbols.size(), false);
        while (!queue.empty()) {
            const Candidate top = queue.top();
            queue.pop();
            if (removed[top.pos] || symbols[top.pos].next < 0)
                continue;
            const int right = symbols[top.pos].next;
            const auto it = merges.find(pairKey(symbols[top.pos].id, symbols[right].id));
            if (it == merges.end() || it->second.second != top.newId)
                continue;
            symbols[top.pos].id = top.newId;
            symbols[top.pos].next = symbols[right].next;
            if (symbols[right].next >= 0)
                symbols[symbols[right].next].prev = top.pos;
            removed[right] = true;
            if (symbols[top.pos].prev >= 0)
                consider(symbols[top.pos].prev);
            consider(top.pos);
        }
    }
};

// ---- added tokens ----

struct AddedToken {
    int id = 0;
    std::string content;
    std::string pattern; // what is matched: the content, normalized when the token is
    bool special = false, normalized = true, lstrip = false, rstrip = false, singleWord = false;
};

// A piece of the input between added tokens (addedId < 0), or one added token.
struct Section {
    std::string text;
    int addedId = -1;
    bool atStart = false;
};

// The added tokens matched on one side of the normalizer, leftmost first and longest there (aho-corasick's
// LeftmostLongest, as HF's AddedVocabulary matches).
class AddedTokenMatcher {
public:
    void add(const AddedToken* token)
    {
        if (token->pattern.empty())
            return;
        auto& list = m_byFirstByte[static_cast<unsigned char>(token->pattern[0])];
        list.push_back(token);
        std::stable_sort(list.begin(), list.end(), [](const AddedToken* a, const AddedToken* b) {
            return a->pattern.size() > b->pattern.size();
        });
        m_empty = false;
    }

    // Splits `section` (not an added token) around the tokens found in it, appending to `out`.
    void split(const Section& section, std::vector<Section>& out) const
    {
        const std::string& text = section.text;
        if (m_empty || text.empty()) {
            out.push_back(section);
            return;
        }
        size_t done = 0;   // the end of the last piece emitted
        size_t search = 0; // where the next match may start
        while (search < text.size()) {
            const AddedToken* found = nullptr;
            size_t at = search;
            for (; at < text.size() && !found; ++at)
                for (const AddedToken* token : m_byFirstByte[static_cast<unsigned char>(text[at])])
                    if (text.compare(at, token->pattern.size(), token->pattern) == 0) {
                        found = token;
                        break;
                    }
            if (!found)
                break;
            size_t start = at - 1, stop = start + found->pattern.size();
            search = stop;
            if (found->singleWord && !(isWordBoundaryBefore(text, start) && isWordBoundaryAfter(text, stop)))
                continue;
            if (found->lstrip)
                start = std::max(done, spacesBefore(text, start));
            if (found->rstrip)
                stop = spacesAfter(text, stop);
            if (done < start)
                out.push_back({text.substr(done, start - done), -1, section.atStart && done == 0});
            out.push_back({text.substr(start, stop - start), found->id, false}); // HF's token: the span, spaces too
            done = stop;
            search = std::max(search, stop);
        }
        if (done < text.size())
            out.push_back({text.substr(done), -1, section.atStart && done == 0});
    }

private:
    static bool isWordBoundaryBefore(const std::string& text, size_t pos)
    {
        if (pos == 0)
            return true;
        size_t back = pos - 1, length = 0;
        while (back > 0 && (static_cast<unsigned char>(text[back]) & 0xc0) == 0x80)
            --back;
        return !isWordChar(codePointAt(text, back, &length));
    }
    static bool isWordBoundaryAfter(const std::string& text, size_t pos)
    {
        size_t length = 0;
        return pos >= text.size() || !isWordChar(codePointAt(text, pos, &length));
    }
    // The start of the white space that ends text[0, pos).
    static size_t spacesBefore(const std::string& text, size_t pos)
    {
        while (pos > 0) {
            size_t back = pos - 1, length = 0;
            while (back > 0 && (static_cast<unsigned char>(text[back]) & 0xc0) == 0x80)
                --back;
            if (!isWhitespaceChar(codePointAt(text, back, &length)))
                break;
            pos = back;
        }
        return pos;
    }
    // The end of the white space that starts at pos.
    static size_t spacesAfter(const std::string& text, size_t pos)
    {
        size_t length = 0;
        while (pos < text.size() && isWhitespaceChar(codePointAt(text, pos, &length)))
            pos += length;
        return pos;
    }

    std::array<std::vector<const AddedToken*>, 256> m_byFirstByte;
    bool m_empty = true;
};

} // namespace

// ---- the tokenizer ----

struct Tokenizer::Impl {
    std::string origin;
    Bpe model;
    std::vector<std::string> tokenOfId; // every id's string (added tokens included)
    std::vector<bool> hasToken;
    std::vector<AddedToken> added;
    std::unordered_map<int, size_t> addedOfId; // id -> index in `added`
    AddedTokenMatcher rawMatcher, normalizedMatcher;
    std::unique_ptr<Normalizer> normalizer;
    std::unique_ptr<PreTokenizer> preTokenizer;
    std::vector<std::vector<TemplateItem>> templates; // applied in order with addSpecialTokens
    std::unique_ptr<Decoder> decoder;
    PreTokenizerKinds kinds; // byte-level or Metaspace, for the summary

    int sequenceDepth = 0; // Sequence steps being read inside each other

    void readPostProcessor(const Fields& fields);
    void readModel(const Fields& fields);
    void readAddedTokens(const Fields& root);
    void checkIdsWithinDeclaredSize() const;
};

void Tokenizer::Impl::readPostProcessor(const Fields& fields)
{
    const std::string type = fields.text("type");
    if (type == "ByteLevel")
        return; // it moves offsets only
    if (type == "Sequence") {
        const SequenceLevel level(sequenceDepth, fields);
        const json& list = fields.array("processors");
        for (size_t i = 0; i < list.size(); ++i)
            readPostProcessor(Fields(list[i], fields.path("processors") + "[" + std::to_string(i) + "]", origin));
        return;
    }
    if (type == "RobertaProcessing" || type == "BertProcessing") {
        // [cls] A [sep], each given as [token, id].
        const auto special = [&](const std::string& key) {
            const json& pair = fields.array(key);
            if (pair.size() != 2 || !pair[0].is_string() || !pair[1].is_number_integer() ||
                pair[1].get<long long>() < 0 || pair[1].get<long long>() > (1LL << 30))
                fields.fail(key, "must be [token, id]");
            return TemplateItem{false, {pair[1].get<int>()}, {pair[0].get<std::string>()}};
        };
        templates.push_back({special("cls"), TemplateItem{true, {}, {}}, special("sep")});
        return;
    }
    if (type == "TemplateProcessing") {
        const Fields specials = fields.object("special_tokens");
        const json& single = fields.array("single");
        std::vector<TemplateItem> items;
        for (size_t i = 0; i < single.size(); ++i) {
            const Fields item(single[i], fields.path("single") + "[" + std::to_string(i) + "]", origin);
            if (item.find("Sequence")) {
                items.push_back({true, {}, {}});
                continue;
            }
            const std::string name = item.object("SpecialToken").text("id");
            if (!specials.find(name))
                specials.fail(name, "is missing (the template's single names it)");
            const Fields entry = specials.object(name);
            const json& ids = entry.array("ids");
            const json& tokens = entry.array("tokens");
            if (ids.size() != tokens.size())
                entry.fail("ids", "and tokens must be as long as each other");
            TemplateItem special;
            for (size_t k = 0; k < ids.size(); ++k) {
                if (!ids[k].is_number_integer() || ids[k].get<long long>() < 0 ||
                    ids[k].get<long long>() > (1LL << 30) || !tokens[k].is_string())
                    entry.fail("ids", "must be ids (integers >= 0) beside token strings");
                special.ids.push_back(ids[k].get<int>());
                special.tokens.push_back(tokens[k].get<std::string>());
            }
            items.push_back(std::move(special));
        }
        templates.push_back(std::move(items));
        return;
    }
    throw InputError(
        unsupportedType(fields, type, "ByteLevel, TemplateProcessing, RobertaProcessing, BertProcessing, Sequence"));
}

void Tokenizer::Impl::readModel(const Fields& fields)
{
    const std::string type = fields.find("type") ? fields.text("type") : (fields.find("merges") ? "BPE" : "");
    if (type != "BPE")
        throw InputError(fields.origin() + ": " + fields.path("type") + " \"" + type +
                         "\" is not supported (supported: BPE; WordPiece, Unigram and WordLevel models are not)");
    if (const json* dropout = fields.find("dropout"); dropout && !(dropout->is_number() && dropout->get<double>() == 0))
        fields.fail("dropout", "= " + jsonExcerpt(*dropout) +
                                   " is not supported (BPE dropout randomizes encoding; allowed: "
                                   "null)");
    const Fields vocabFields = fields.object("vocab");
    for (const auto& [token, id] : vocabFields.raw().items()) {
        if (!id.is_number_integer() || id.get<long long>() < 0 || id.get<long long>() > (1LL << 30))
            vocabFields.fail(token, "must be an id (an integer in [0, 2^30]), not " + jsonExcerpt(id, 40));
        model.vocab.emplace(token, id.get<int>());
    }
    model.continuingPrefix = fields.text("continuing_subword_prefix", "");
    model.endSuffix = fields.text("end_of_word_suffix", "");
    model.fuseUnk = fields.flag("fuse_unk", false);
    model.byteFallback = fields.flag("byte_fallback", false);
    model.ignoreMerges = fields.flag("ignore_merges", false);
    if (fields.find("unk_token")) {
        const std::string unk = fields.text("unk_token");
        const auto it = model.vocab.find(unk);
        if (it == model.vocab.end())
            fields.fail("unk_token", "\"" + unk + "\" is not in model.vocab");
        model.unkId = it->second;
    }
    for (int b = 0; b < 256; ++b) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", b);
        const auto it = model.vocab.find(name);
        model.byteTokenIds[b] = it == model.vocab.end() ? -1 : it->second;
    }

    const json& merges = fields.array("merges");
    model.merges.reserve(merges.size());
    for (size_t rank = 0; rank < merges.size(); ++rank) {
        const std::string where = "merges[" + std::to_string(rank) + "]";
        std::string left, right;
        const json& merge = merges[rank];
        if (merge.is_string()) {
            const std::string line = merge.get<std::string>();
            const size_t space = line.find(' ');
            if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos)
                fields.fail(where, "\"" + line + "\" must be two tokens with one space between them");
            left = line.substr(0, space);
            right = line.substr(space + 1);
        } else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() && merge[1].is_string()) {
            left = merge[0].get<std::string>();
            right = merge[1].get<std::string>();
        } else {
            fields.fail(where, "must be \"a b\" or [\"a\", \"b\"], not " + jsonExcerpt(merge));
        }
        const std::string joined = left + right.substr(std::min(model.continuingPrefix.size(), right.size()));
        for (const std::string& token : {std::cref(left), std::cref(right), std::cref(joined)})
            if (!model.vocab.count(token))
                fields.fail(where, "names \"" + token + "\", which is not in model.vocab");
        model.merges.emplace(Bpe::pairKey(model.vocab.at(left), model.vocab.at(right)),
                             std::make_pair(static_cast<int>(rank), model.vocab.at(joined)));
    }
}

void Tokenizer::Impl::readAddedTokens(const Fields& root)
{
    if (!root.find("added_tokens"))
        return;
    const json& list = root.array("added_tokens");
    for (size_t i = 0; i < list.size(); ++i) {
        const Fields fields(list[i], "added_tokens[" + std::to_string(i) + "]", origin);
        AddedToken token;
        token.id = static_cast<int>(fields.integer("id", 0, 1LL << 30));
        token.content = fields.text("content");
        if (token.content.empty())
            fields.fail("content", "must not be empty");
        if (firstInvalidUtf8(token.content) != std::string_view::npos)
            fields.fail("content", "is not valid UTF-8");
        token.special = fields.flag("special", false);
        token.normalized = fields.flag("normalized", !token.special);
        token.lstrip = fields.flag("lstrip", false);
        token.rstrip = fields.flag("rstrip", false);
        token.singleWord = fields.flag("single_word", false);
        added.push_back(std::move(token));
    }
}

// The id table is sized by the largest id, so a 2 KB file with one id of 2^30 would ask for gigabytes. Ids (the
// vocabulary's, the added tokens', the post-processor's) are bounded by the declared size, the vocabulary's entries
// plus the added tokens: real files number their tokens from 0 with few gaps (an added token may reuse a vocabulary
// id), so twice that plus 256 leaves room for gaps while the table stays proportional to the file.
void Tokenizer::Impl::checkIdsWithinDeclaredSize() const
{
    const long long declared = static_cast<long long>(model.vocab.size() + added.size());
    const long long limit = 2 * declared + 256;
    const auto refuse = [&](const std::string& where, long long id) {
        throw InputError(origin + ": " + where + " has id " + std::to_string(id) +
                         ", far past the declared size; allowed: ids below " + std::to_string(limit) + " (twice the " +
                         std::to_string(model.vocab.size()) + " model.vocab entries + " + std::to_string(added.size()) +
                         " added tokens, plus 256)");
    };
    for (const auto& [token, id] : model.vocab)
        if (id >= limit)
            refuse("model.vocab." + jsonExcerpt(json(token), 40), id);
    for (size_t i = 0; i < added.size(); ++i)
        if (added[i].id >= limit)
            refuse("added_tokens[" + std::to_string(i) + "] (" + jsonExcerpt(json(added[i].content), 40) + ")",
                   added[i].id);
    for (const auto& items : templates)
        for (const TemplateItem& item : items)
            for (const int id : item.ids)
                if (id >= limit)
                    refuse("post_processor (a special token)", id);
}

Tokenizer Tokenizer::fromJson(std::string_view text, const std::string& origin)
{
    auto impl = std::make_unique<Impl>();
    impl->origin = origin;
    const json root = parseUntrustedJson(text, origin);
    const Fields fields(root, "", impl->origin);
    impl->readModel(fields.object("model"));
    impl->readAddedTokens(fields);
    if (fields.find("normalizer"))
        impl->normalizer = readNormalizer(fields.object("normalizer"), impl->sequenceDepth);
    if (fields.find("pre_tokenizer"))
        impl->preTokenizer = readPreTokenizer(fields.object("pre_tokenizer"), impl->sequenceDepth, impl->kinds);
    if (fields.find("post_processor"))
        impl->readPostProcessor(fields.object("post_processor"));
    if (fields.find("decoder"))
        impl->decoder = readDecoder(fields.object("decoder"), impl->sequenceDepth);
    if (impl->normalizer && !impl->preTokenizer && prependsMetaspaceMark(*impl->normalizer))
        impl->kinds.metaspace = true;

    impl->checkIdsWithinDeclaredSize();
    // Every id's string: the model's vocabulary, then the added tokens (which win, as in HF).
    int size = 0;
    for (const auto& [token, id] : impl->model.vocab)
        size = std::max(size, id + 1);
    for (const AddedToken& token : impl->added)
        size = std::max(size, token.id + 1);
    impl->tokenOfId.assign(size, {});
    impl->hasToken.assign(size, false);
    for (const auto& [token, id] : impl->model.vocab) {
        impl->tokenOfId[id] = token;
        impl->hasToken[id] = true;
    }
    for (size_t i = 0; i < impl->added.size(); ++i) {
        AddedToken& token = impl->added[i];
        impl->tokenOfId[token.id] = token.content;
        impl->hasToken[token.id] = true;
        impl->addedOfId[token.id] = i;
        token.pattern = token.content;
        if (token.normalized && impl->normalizer)
            impl->normalizer->apply(token.pattern);
    }
    for (const AddedToken& token : impl->added)
        (token.normalized ? impl->normalizedMatcher : impl->rawMatcher).add(&token);
    return Tokenizer(std::move(impl));
}

Tokenizer Tokenizer::fromFile(const std::string& path)
{
    std::ifstream file(path, std::ios::binary);
    if (!file)
        throw InputError("tokenizer file '" + path + "' cannot be read (" +
                         (std::filesystem::exists(path) ? "permission or I/O error" : "no such file") + ")");
    std::ostringstream text;
    text << file.rdbuf();
    return fromJson(text.str(), "tokenizer file '" + path + "'");
}

Tokenizer Tokenizer::fromFolder(const std::string& folder)
{
    const std::filesystem::path path = std::filesystem::path(folder) / "tokenizer.json";
    std::error_code error;
    if (!std::filesystem::is_directory(folder, error))
        throw InputError("model folder '" + folder + "' does not exist or is not a folder");
    if (!std::filesystem::exists(path, error))
        throw InputError("model folder '" + folder + "' has no tokenizer.json (a Hugging Face model folder holds " +
                         "config.json, the weights and tokenizer.json)");
    return fromFile(path.string());
}

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
Tokenizer::~Tokenizer() = default;
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;

Encoding Tokenizer::encode(std::string_view text, bool addSpecialTokens) const
{
    const Impl& impl = *m_impl;
    if (const size_t bad = firstInvalidUtf8(text); bad != std::string_view::npos)
        throw InputError("the text is not valid UTF-8 (at byte " + std::to_string(bad) + " of " +
                         std::to_string(text.size()) + ")");

    // Added tokens matched on the raw text, then the rest normalized and matched again, as HF's AddedVocabulary does.
    std::vector<Section> raw, sections;
    impl.rawMatcher.split({std::string(text), -1, true}, raw);
    for (Section& section : raw) {
        if (section.addedId >= 0) {
            sections.push_back(std::move(section));
            continue;
        }
        if (impl.normalizer)
            impl.normalizer->apply(section.text);
        impl.normalizedMatcher.split(section, sections);
    }

    Encoding encoding;
    // Words repeat: each distinct pre-token goes through BPE once per call (no shared state, so encode stays
    // thread-safe).
    std::unordered_map<std::string, std::vector<int>> cache;
    std::vector<Piece> pieces;
    for (const Section& section : sections) {
        if (section.addedId >= 0) {
            encoding.ids.push_back(section.addedId);
            encoding.tokens.push_back(section.text);
            continue;
        }
        pieces.assign(1, {section.text, section.atStart});
        if (impl.preTokenizer)
            impl.preTokenizer->apply(pieces);
        const size_t first = encoding.ids.size();
        for (const Piece& piece : pieces) {
            if (piece.text.size() > 256) { // long runs (whitespace, digits) rarely repeat
                impl.model.tokenize(piece.text, encoding.ids);
                continue;
            }
            auto [it, isNew] = cache.try_emplace(piece.text);
            if (isNew)
                impl.model.tokenize(piece.text, it->second);
            encoding.ids.insert(encoding.ids.end(), it->second.begin(), it->second.end());
        }
        for (size_t i = first; i < encoding.ids.size(); ++i)
            encoding.tokens.push_back(impl.tokenOfId[encoding.ids[i]]);
    }
    if (addSpecialTokens)
        for (const auto& items : impl.templates) {
            Encoding wrapped;
            for (const TemplateItem& item : items) {
                const Encoding& part = item.isSequence ? encoding : Encoding{item.ids, item.tokens};
                wrapped.ids.insert(wrapped.ids.end(), part.ids.begin(), part.ids.end());
                wrapped.tokens.insert(wrapped.tokens.end(), part.tokens.begin(), part.tokens.end());
            }
            encoding = std::move(wrapped);
        }
    return encoding;
}

std::string Tokenizer::decode(const std::vector<int>& ids, bool skipSpecialTokens) const
{
    std::vector<std::string> tokens;
    tokens.reserve(ids.size());
    for (const int id : ids)
        if (!(skipSpecialTokens && isSpecial(id)))
            tokens.push_back(idToToken(id));
    if (!m_impl->decoder) {
        // HF joins the tokens with spaces when there is no decoder.
        std::string joined;
        for (size_t i = 0; i < tokens.size(); ++i)
            joined += (i ? " " : "") + tokens[i];
        return joined;
    }
    m_impl->decoder->apply(tokens);
    std::string text;
    for (const std::string& token : tokens)
        text += token;
    return text;
}

int Tokenizer::vocabSize() const
{
    return static_cast<int>(m_impl->tokenOfId.size());
}

std::string Tokenizer::idToToken(int id) const
{
    if (id < 0 || id >= vocabSize() || !m_impl->hasToken[id])
        throw InputError("token id " + std::to_string(id) + " is not in the vocabulary (" +
                         std::to_string(vocabSize()) + " ids, 0 to " + std::to_string(vocabSize() - 1) + ")");
    return m_impl->tokenOfId[id];
}

std::optional<int> Tokenizer::tokenToId(std::string_view token) const
{
    for (const AddedToken& added : m_impl->added)
        if (added.content == token)
            return added.id;
    const auto it = m_impl->model.vocab.find(std::string(token));
    return it == m_impl->model.vocab.end() ? std::nullopt : std::optional<int>(it->second);
}

bool Tokenizer::isSpecial(int id) const
{
    const auto it = m_impl->addedOfId.find(id);
    return it != m_impl->addedOfId.end() && m_impl->added[it->second].special;
}

std::string Tokenizer::summary() const
{
    const std::string kind = m_impl->kinds.byteLevel ? "byte-level"
                             : m_impl->kinds.metaspace
                                 ? (m_impl->model.byteFallback ? "Metaspace with byte fallback" : "Metaspace")
                                 : "plain";
    return "BPE, " + kind + ", " + std::to_string(vocabSize()) + " tokens";
}

} // namespace plab::hf
