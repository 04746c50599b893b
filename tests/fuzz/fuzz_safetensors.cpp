// libFuzzer target for the safetensors reader: refuse with InputError or accept, and what it accepts round-trips.
#include "base/errors.h"
#include "base/safetensors.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    plab::SafetensorsFile file;
    try {
        file = plab::parseSafetensors(bytes, "fuzz.safetensors");
    } catch (const plab::InputError&) {
        return 0; // a proper refusal; anything else escapes and is reported
    }
    std::vector<plab::TensorView> views;
    for (const auto& [name, tensor] : file.tensors) {
        uint64_t count = 1;
        for (int64_t d : tensor.shape)
            count *= static_cast<uint64_t>(d);
        if (count != tensor.data.size())
            std::abort(); // shape and data disagree
        views.push_back({name, tensor.shape, tensor.data.data()});
    }
    static const float dummy = 0;
    for (auto& v : views)
        if (!v.data)
            v.data = &dummy; // empty tensors: serialize wants a pointer only when there is data
    const std::string again = plab::serializeSafetensors(views, file.metadata);
    const plab::SafetensorsFile back = plab::parseSafetensors(again, "again.safetensors");
    if (back.metadata != file.metadata || back.tensors.size() != file.tensors.size())
        std::abort();
    for (const auto& [name, tensor] : file.tensors) {
        const auto it = back.tensors.find(name);
        if (it == back.tensors.end() || it->second.shape != tensor.shape ||
            it->second.data.size() != tensor.data.size() ||
            (!tensor.data.empty() &&
             std::memcmp(it->second.data.data(), tensor.data.data(), tensor.data.size() * sizeof(float)) != 0))
            std::abort();
    }
    return 0;
}
