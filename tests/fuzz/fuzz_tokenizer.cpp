// libFuzzer target for core/hf's tokenizer: tokenizer.json files refused with InputError or accepted, and texts
// encoded by the committed test tokenizers that come back unchanged from decode.
#include "base/errors.h"
#include "hf/tokenizer.h"
#include "hf/unicode_text.h"

#include <cstdint>
#include <cstdlib>
#include <string>

namespace {

// Byte-level and Metaspace, both of which give back any valid UTF-8 text.
const plab::hf::Tokenizer& testTokenizer(bool metaspace)
{
    static const plab::hf::Tokenizer byteLevel = plab::hf::Tokenizer::fromFolder(POSITIONLAB_TOKENIZERS "/smollm");
    static const plab::hf::Tokenizer llama2 = plab::hf::Tokenizer::fromFolder(POSITIONLAB_TOKENIZERS "/llama2");
    return metaspace ? llama2 : byteLevel;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size == 0)
        return 0;
    const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
    // The first byte picks the job: even, a tokenizer.json; odd, a text for one of the test tokenizers.
    if (data[0] % 2 == 0) {
        try {
            const plab::hf::Tokenizer tokenizer = plab::hf::Tokenizer::fromJson(rest, "fuzz tokenizer.json");
            const plab::hf::Encoding encoding = tokenizer.encode("Hello, world 123 <s> \xE4\xB8\xAD");
            tokenizer.decode(encoding.ids);
        } catch (const plab::InputError&) {
        }
        return 0;
    }
    const plab::hf::Tokenizer& tokenizer = testTokenizer(data[0] % 4 == 3);
    try {
        const plab::hf::Encoding encoding = tokenizer.encode(rest, false);
        bool special = false; // a special token in the text is not text (<s> gains Llama 2's prepended space)
        for (const int id : encoding.ids)
            special = special || tokenizer.isSpecial(id);
        if (!special && tokenizer.decode(encoding.ids) != rest)
            std::abort(); // the round trip holds for every valid UTF-8 text
    } catch (const plab::InputError&) {
        if (plab::hf::firstInvalidUtf8(rest) == std::string_view::npos)
            std::abort(); // refused a valid text
    }
    return 0;
}
