// UTF-8 and Unicode helpers of the tokenizer: code points, character classes, normal forms (utf8proc), byte-level.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace plab::hf {

// The byte length of the first invalid sequence's start in `text`, or npos when `text` is valid UTF-8 (no surrogates,
// no overlong forms, nothing above U+10FFFF).
size_t firstInvalidUtf8(std::string_view text);

// The code point starting at text[pos] (valid UTF-8 assumed) and its length in bytes.
char32_t codePointAt(std::string_view text, size_t pos, size_t* length);
// The length in bytes of the UTF-8 character starting at text[pos] (valid UTF-8 assumed).
size_t charLength(std::string_view text, size_t pos);
void appendUtf8(std::string& out, char32_t cp);

// `bytes` as text, each maximal invalid subsequence replaced by U+FFFD, as Rust's String::from_utf8_lossy does (the
// Hugging Face decoders' rule for byte sequences that are not UTF-8).
std::string utf8Lossy(std::string_view bytes);

// Unicode classes as Rust's char methods define them (the Hugging Face pre-tokenizers and added tokens use these).
bool isNumericChar(char32_t cp);    // char::is_numeric: categories Nd, Nl, No
bool isWordChar(char32_t cp);       // the regex crate's \w: letters, marks, Nd, Nl, Pc and the joiners U+200C/D
bool isWhitespaceChar(char32_t cp); // char::is_whitespace: the White_Space property

// Normal forms and lower case of valid UTF-8 text (utf8proc).
enum class NormalForm { Nfc, Nfd, Nfkc, Nfkd };
std::string normalizeText(std::string_view text, NormalForm form);
std::string lowercaseText(std::string_view text);

// GPT-2's byte-level alphabet: every byte as one printable character (bytes_to_unicode), and back.
const std::array<std::string, 256>& byteLevelChars();
// The byte a byte-level character stands for, or -1 when `cp` is not one of the 256.
int byteOfByteLevelChar(char32_t cp);

} // namespace plab::hf
