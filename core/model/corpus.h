// Text corpora for the byte-level model: UTF-8 validation, the default fortunes corpus, the train/validation split.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace plab {

// Byte-level tokens: every byte of the UTF-8 text is one token, so the vocabulary is 256.
constexpr int kByteVocab = 256;

// Shortest corpus accepted: enough bytes for a validation split that holds at least a few windows.
constexpr size_t kMinCorpusBytes = 2048;

// Where the Debian `fortunes` package (fortunes-min + fortunes) puts its text files.
constexpr const char* kFortunesDir = "/usr/share/games/fortunes";

struct Corpus {
    std::string source;              // file path, or "fortunes (N files in DIR)"
    std::vector<uint8_t> train;      // (T_train) first 90% of the bytes
    std::vector<uint8_t> validation; // (T_val) last 10%, held out
    size_t totalBytes() const { return train.size() + validation.size(); }
};

// `bytes` bytes of `text` repeated end to end (cut at `bytes`, so also the first bytes of a longer text): how the
// model views read a short text past the training context. Empty when `text` is empty.
std::vector<uint8_t> repeatedText(const std::vector<uint8_t>& text, size_t bytes);

// Returns the byte offset of the first invalid UTF-8 sequence, or npos when `text` is valid UTF-8
// (no overlong forms, no surrogates, nothing above U+10FFFF).
size_t findInvalidUtf8(std::string_view text);

// Validates text and splits it: the last 10% (rounded down) is validation, the rest training.
// Throws InputError naming `source` when the text is empty, not UTF-8 (with the byte offset), contains NUL
// bytes (binary), or is shorter than kMinCorpusBytes.
Corpus makeCorpus(std::string text, const std::string& source);

// Reads a UTF-8 text file; InputError for a missing/unreadable file plus everything makeCorpus refuses.
Corpus loadCorpusFile(const std::string& path);

// The default corpus: every fortunes text file in `dir` (sorted by name; not the .dat indexes, not the .u8
// symlinks, not the offensive subdirectory), concatenated with the "%" separator lines dropped.
// InputError with a set-up hint when the directory holds none.
Corpus loadDefaultCorpus(const std::string& dir = kFortunesDir);

// The text of the default corpus, before splitting (also what the GUI shows as its source).
std::string defaultCorpusText(const std::string& dir = kFortunesDir, int* fileCount = nullptr);

} // namespace plab
