// A Hugging Face tokenizer.json (BPE, byte-level or Metaspace with byte fallback): encode and decode as HF does.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace plab::hf {

// The tokens of a text: ids and, beside each, the token's string as the vocabulary spells it ("Ġworld", "▁the",
// "<0x0A>", "<|endoftext|>").
struct Encoding {
    std::vector<int> ids;
    std::vector<std::string> tokens;
};

// What a tokenizer.json can hold, as this reader supports it:
// - model: BPE with "a b" or ["a", "b"] merges, byte_fallback, unk_token (fuse_unk), ignore_merges,
//   continuing_subword_prefix and end_of_word_suffix (WordPiece, Unigram and WordLevel are refused by name);
// - normalizer: NFC, NFD, NFKC, NFKD, Lowercase, Prepend, Replace, Strip, Sequence;
// - pre_tokenizer: ByteLevel (add_prefix_space, use_regex), Split (String or Regex pattern, every behavior, invert),
//   Digits, Metaspace (prepend_scheme always/first/never, split), Sequence;
// - post_processor: ByteLevel, TemplateProcessing, RobertaProcessing, BertProcessing, Sequence (the special tokens
//   they add);
// - decoder: ByteLevel, Metaspace, Replace, ByteFallback, Fuse, Strip, Sequence;
// - added_tokens, special or not, normalized or not, with lstrip, rstrip and single_word: split off before
//   pre-tokenization, longest match first, as HF's AddedVocabulary does.
// Encoding and decoding are const and thread-safe.
class Tokenizer {
public:
    // Reads a tokenizer.json. InputError naming the file and the field for a malformed file, and naming the type for
    // a model, normalizer, pre-tokenizer, post-processor or decoder that is not supported.
    static Tokenizer fromFile(const std::string& path);
    // The tokenizer.json of a model folder; InputError naming the folder and the missing file.
    static Tokenizer fromFolder(const std::string& folder);
    // A tokenizer.json's text; `origin` names it in messages.
    static Tokenizer fromJson(std::string_view json, const std::string& origin);

    ~Tokenizer();
    Tokenizer(Tokenizer&&) noexcept;
    Tokenizer& operator=(Tokenizer&&) noexcept;

    // The tokens of `text` (UTF-8: InputError at the byte offset of an invalid sequence). With `addSpecialTokens` the
    // post-processor's tokens are added too (Llama's <s> first), as HF's encode does by default.
    Encoding encode(std::string_view text, bool addSpecialTokens = true) const;
    // The text of `ids` through the decoder; special tokens left out with `skipSpecialTokens`. InputError for an id
    // outside the vocabulary (naming it and the vocabulary's size). decode(encode(x)) == x for any valid UTF-8 x when
    // no normalizer changes x (NFC does) and no decoder strips what the pre-tokenizer did not add (as in HF).
    std::string decode(const std::vector<int>& ids, bool skipSpecialTokens = false) const;

    // The number of ids: the model's vocabulary and the added tokens (the largest id + 1).
    int vocabSize() const;
    // A token's string (InputError outside [0, vocabSize())), and the id of a string when it is a token.
    std::string idToToken(int id) const;
    std::optional<int> tokenToId(std::string_view token) const;
    bool isSpecial(int id) const;
    // A short description: "BPE, byte-level, 658 tokens" or "BPE, Metaspace with byte fallback, 713 tokens".
    std::string summary() const;

private:
    struct Impl;
    explicit Tokenizer(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

} // namespace plab::hf
