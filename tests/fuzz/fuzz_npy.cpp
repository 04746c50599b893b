// libFuzzer target for the .npy reader: the in-memory and the streaming reader must agree, round-trip, never crash.
#include "base/errors.h"
#include "base/npy.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>

namespace {

bool sameArray(const plab::NpyArray& a, const plab::NpyArray& b)
{
    return a.shape == b.shape && a.data.size() == b.data.size() &&
           (a.data.empty() || std::memcmp(a.data.data(), b.data.data(), a.data.size() * sizeof(float)) == 0);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    for (bool requireFinite : {true, false}) {
        plab::NpyArray fromMemory, fromStream;
        bool memoryOk = false, streamOk = false;
        // Anything but InputError escapes and libFuzzer reports it: only InputError is a proper refusal.
        try {
            fromMemory = plab::parseNpy(bytes, "fuzz.npy", requireFinite);
            memoryOk = true;
        } catch (const plab::InputError&) {
        }
        try {
            std::istringstream in(bytes);
            fromStream = plab::readNpy(in, "fuzz.npy", requireFinite);
            streamOk = true;
        } catch (const plab::InputError&) {
        }
        if (memoryOk != streamOk || (memoryOk && !sameArray(fromMemory, fromStream)))
            std::abort(); // the two readers disagree
        if (!memoryOk)
            continue;
        uint64_t count = 1;
        for (int64_t d : fromMemory.shape)
            count *= static_cast<uint64_t>(d);
        if (count != fromMemory.data.size())
            std::abort();
        // What we read, we can write and read back identically.
        std::string again = plab::npyHeader(fromMemory.shape);
        again.append(reinterpret_cast<const char*>(fromMemory.data.data()), fromMemory.data.size() * sizeof(float));
        if (!sameArray(plab::parseNpy(again, "again.npy", false), fromMemory))
            std::abort();
    }
    return 0;
}
