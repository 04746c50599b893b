// libFuzzer target for model checkpoints: safetensors bytes -> metadata and config -> Model; only InputError may
// come out, and memory must stay bounded (libFuzzer's -malloc_limit_mb reports a config that asks for too much).
#include "model/checkpoint.h"
#include "base/errors.h"
#include "model/model.h"
#include "base/safetensors.h"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    try {
        const plab::SafetensorsFile file = plab::parseSafetensors(bytes, "fuzz.safetensors");
        const plab::LoadedCheckpoint loaded = plab::checkpointFromSafetensors(file, "fuzz.safetensors");
        (void)loaded;
    } catch (const plab::InputError&) {
    }
    return 0;
}
