// UTF-8 and Unicode helpers of the tokenizer (see unicode_text.h).
#include "hf/unicode_text.h"

#include "base/errors.h"

#include <cstdlib>
#include <memory>

#include <utf8proc.h>

namespace plab::hf {

namespace {

// The length of the valid UTF-8 sequence at text[pos], or 0 when it is not one (RFC 3629's table, as Rust checks).
size_t validSequenceLength(std::string_view text, size_t pos)
{
    const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
    const unsigned char b0 = byte(pos);
    const size_t left = text.size() - pos;
    if (b0 < 0x80)
        return 1;
    const auto continuation = [&](size_t i, unsigned char lo = 0x80, unsigned char hi = 0xbf) {
        return pos + i < text.size() && byte(pos + i) >= lo && byte(pos + i) <= hi;
    };
    if (b0 >= 0xc2 && b0 <= 0xdf)
        return left >= 2 && continuation(1) ? 2 : 0;
    if (b0 >= 0xe0 && b0 <= 0xef) {
        const unsigned char lo = b0 == 0xe0 ? 0xa0 : 0x80, hi = b0 == 0xed ? 0x9f : 0xbf;
        return continuation(1, lo, hi) && continuation(2) ? 3 : 0;
    }
    if (b0 >= 0xf0 && b0 <= 0xf4) {
        const unsigned char lo = b0 == 0xf0 ? 0x90 : 0x80, hi = b0 == 0xf4 ? 0x8f : 0xbf;
        return continuation(1, lo, hi) && continuation(2) && continuation(3) ? 4 : 0;
    }
    return 0;
}

// How many bytes of an invalid sequence at text[pos] make its maximal subpart (one U+FFFD each, as Rust and the
// Unicode standard's "substitution of maximal subparts" say): the lead byte and the continuation bytes that were
// still allowed after it.
size_t invalidSubpartLength(std::string_view text, size_t pos)
{
    const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
    const unsigned char b0 = byte(pos);
    size_t need = 0;
    unsigned char lo = 0x80, hi = 0xbf;
    if (b0 >= 0xc2 && b0 <= 0xdf)
        need = 1;
    else if (b0 >= 0xe0 && b0 <= 0xef) {
        need = 2;
        lo = b0 == 0xe0 ? 0xa0 : 0x80;
        hi = b0 == 0xed ? 0x9f : 0xbf;
    } else if (b0 >= 0xf0 && b0 <= 0xf4) {
        need = 3;
        lo = b0 == 0xf0 ? 0x90 : 0x80;
        hi = b0 == 0xf4 ? 0x8f : 0xbf;
    } else
        return 1;
    size_t length = 1;
    for (size_t i = 1; i <= need && pos + i < text.size(); ++i) {
        const unsigned char b = byte(pos + i);
        if (b < (i == 1 ? lo : 0x80) || b > (i == 1 ? hi : 0xbf))
            break;
        ++length;
    }
    return length;
}

// The malloc'd result of utf8proc as a std::string, or InputError naming what failed.
std::string takeUtf8proc(utf8proc_uint8_t* result, const char* what)
{
    if (!result)
        throw InputError(std::string("tokenizer: ") + what + " failed (the text is not valid UTF-8)");
    std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owned(result, &std::free);
    return std::string(reinterpret_cast<const char*>(result));
}

} // namespace

size_t firstInvalidUtf8(std::string_view text)
{
    for (size_t pos = 0; pos < text.size();) {
        const size_t length = validSequenceLength(text, pos);
        if (length == 0)
            return pos;
        pos += length;
    }
    return std::string_view::npos;
}

char32_t codePointAt(std::string_view text, size_t pos, size_t* length)
{
    const auto byte = [&](size_t i) { return static_cast<char32_t>(static_cast<unsigned char>(text[pos + i])); };
    const char32_t b0 = byte(0);
    if (b0 < 0x80) {
        *length = 1;
        return b0;
    }
    if (b0 < 0xe0) {
        *length = 2;
        return ((b0 & 0x1f) << 6) | (byte(1) & 0x3f);
    }
    if (b0 < 0xf0) {
        *length = 3;
        return ((b0 & 0x0f) << 12) | ((byte(1) & 0x3f) << 6) | (byte(2) & 0x3f);
    }
    *length = 4;
    return ((b0 & 0x07) << 18) | ((byte(1) & 0x3f) << 12) | ((byte(2) & 0x3f) << 6) | (byte(3) & 0x3f);
}

size_t charLength(std::string_view text, size_t pos)
{
    const unsigned char b0 = static_cast<unsigned char>(text[pos]);
    return b0 < 0x80 ? 1 : b0 < 0xe0 ? 2 : b0 < 0xf0 ? 3 : 4;
}

void appendUtf8(std::string& out, char32_t cp)
{
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xc0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xe0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
        out += static_cast<char>(0xf0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    }
}

std::string utf8Lossy(std::string_view bytes)
{
    std::string out;
    out.reserve(bytes.size());
    for (size_t pos = 0; pos < bytes.size();) {
        const size_t length = validSequenceLength(bytes, pos);
        if (length > 0) {
            out.append(bytes.substr(pos, length));
            pos += length;
        } else {
            out += "\xEF\xBF\xBD";
            pos += invalidSubpartLength(bytes, pos);
        }
    }
    return out;
}

bool isNumericChar(char32_t cp)
{
    const auto category = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
    return category == UTF8PROC_CATEGORY_ND || category == UTF8PROC_CATEGORY_NL || category == UTF8PROC_CATEGORY_NO;
}

bool isWordChar(char32_t cp)
{
    // UTS #18's \w, which HF's added tokens test with the regex crate for single_word: Alphabetic (letters, Nl),
    // marks, decimal digits, connector punctuation and the join controls.
    const auto category = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
    return (category >= UTF8PROC_CATEGORY_LU && category <= UTF8PROC_CATEGORY_ME) || category == UTF8PROC_CATEGORY_ND ||
           category == UTF8PROC_CATEGORY_NL || category == UTF8PROC_CATEGORY_PC || cp == 0x200c || cp == 0x200d;
}

bool isWhitespaceChar(char32_t cp)
{
    // Unicode's White_Space property, the set Rust's char::is_whitespace tests.
    return (cp >= 0x09 && cp <= 0x0d) || cp == 0x20 || cp == 0x85 || cp == 0xa0 || cp == 0x1680 ||
           (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 || cp == 0x202f || cp == 0x205f ||
           cp == 0x3000;
}

std::string normalizeText(std::string_view text, NormalForm form)
{
    // utf8proc reads a NUL-terminated string: a text holding U+0000 is normalized piece by piece around it.
    std::string out;
    size_t start = 0;
    while (true) {
        const size_t nul = text.find('\0', start);
        const std::string piece(
            text.substr(start, nul == std::string_view::npos ? std::string_view::npos : nul - start));
        const auto* input = reinterpret_cast<const utf8proc_uint8_t*>(piece.c_str());
        switch (form) {
        case NormalForm::Nfc:
            out += takeUtf8proc(utf8proc_NFC(input), "NFC");
            break;
        case NormalForm::Nfd:
            out += takeUtf8proc(utf8proc_NFD(input), "NFD");
            break;
        case NormalForm::Nfkc:
            out += takeUtf8proc(utf8proc_NFKC(input), "NFKC");
            break;
        case NormalForm::Nfkd:
            out += takeUtf8proc(utf8proc_NFKD(input), "NFKD");
            break;
        }
        if (nul == std::string_view::npos)
            return out;
        out += '\0';
        start = nul + 1;
    }
}

std::string lowercaseText(std::string_view text)
{
    std::string out;
    out.reserve(text.size());
    for (size_t pos = 0; pos < text.size();) {
        size_t length = 0;
        const char32_t cp = codePointAt(text, pos, &length);
        appendUtf8(out, static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp))));
        pos += length;
    }
    return out;
}

namespace {

// bytes_to_unicode: printable Latin-1 bytes stand for themselves, the other 68 for U+0100 upwards in byte order.
struct ByteLevelTable {
    std::array<std::string, 256> chars;
    std::array<int, 512> byteOf{};
    ByteLevelTable()
    {
        byteOf.fill(-1);
        int next = 256;
        for (int b = 0; b < 256; ++b) {
            const bool printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
            const char32_t cp = printable ? static_cast<char32_t>(b) : static_cast<char32_t>(next++);
            appendUtf8(chars[b], cp);
            byteOf[cp] = b;
        }
    }
};

const ByteLevelTable& byteLevelTable()
{
    static const ByteLevelTable table;
    return table;
}

} // namespace

const std::array<std::string, 256>& byteLevelChars()
{
    return byteLevelTable().chars;
}

int byteOfByteLevelChar(char32_t cp)
{
    return cp < 512 ? byteLevelTable().byteOf[cp] : -1;
}

} // namespace plab::hf
