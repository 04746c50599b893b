// libFuzzer target for corpus validation: findInvalidUtf8 against an independent decoder, makeCorpus never crashes.
#include "model/corpus.h"
#include "base/errors.h"

#include <cstdint>
#include <cstdlib>
#include <string>

namespace {

// Reference: decode a code point the long way, then reject overlongs, surrogates and > U+10FFFF by value.
size_t referenceInvalidOffset(const std::string& s)
{
    size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        int length;
        uint32_t cp;
        if (c < 0x80) {
            length = 1;
            cp = c;
        } else if ((c & 0xE0) == 0xC0) {
            length = 2;
            cp = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            length = 3;
            cp = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            length = 4;
            cp = c & 0x07;
        } else {
            return i;
        }
        if (i + length > s.size())
            return i;
        for (int k = 1; k < length; ++k) {
            const auto b = static_cast<unsigned char>(s[i + k]);
            if ((b & 0xC0) != 0x80)
                return i;
            cp = cp << 6 | (b & 0x3F);
        }
        const uint32_t minimum[] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < minimum[length] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return i;
        i += length;
    }
    return std::string::npos;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const std::string text(reinterpret_cast<const char*>(data), size);
    if (plab::findInvalidUtf8(text) != referenceInvalidOffset(text))
        std::abort();
    // Repeat the input so that the length check passes often enough to reach the split.
    std::string longer = text;
    while (!longer.empty() && longer.size() < plab::kMinCorpusBytes)
        longer += text;
    for (const std::string* t : {&text, static_cast<const std::string*>(&longer)}) {
        try {
            const plab::Corpus c = plab::makeCorpus(*t, "fuzz.txt");
            if (c.totalBytes() != t->size() || c.validation.size() != t->size() / 10)
                std::abort();
        } catch (const plab::InputError&) {
        }
    }
    return 0;
}
