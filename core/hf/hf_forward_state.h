// The state one forward of a folder's model carries through its layers, and a generation's key/value cache: shared by
// the forward (hf_model.cpp) and the cached decoding (hf_decode.cpp), nothing else includes it.
#pragma once

#include "attention/rotary_cache.h"
#include "hf/hf_model.h"

#include <map>
#include <memory>
#include <utility>
#include <vector>

namespace plab {

// What every layer of one forward shares: the biases of each layer kind, the kernel's dims and the reused buffers (no
// allocation after the first layer).
struct HfForwardState {
    int T = 0;          // the rows of this forward (1 while decoding)
    int biasLength = 0; // the longest sequence the biases serve (T, or a cache's capacity)
    const HfAttentionObserver* observer = nullptr;
    // The positions of full, sliding and chunked layers (hfLayerTypePositions: a method where --scaling-layers sends
    // it, a sliding layer's own table) and of NoPE layers.
    SchemeSpec full, sliding, chunked, none;
    // The kernel's bias of each (NoPE?, layer type) met so far: the positions with the type's window or chunk and the
    // family's soft cap (layerSpec), built on first use.
    std::map<std::pair<bool, HfLayerType>, std::unique_ptr<PositionBias>> biases;
    AttentionDims dims;
    HfMatrix h, q, k, v, a, attn, up, gate, m;
    std::vector<float> qh, kh, vh, observedQ, observedK;
    AttentionForward forward;
    RotaryTableCache rotaryTables; // cos and sin of every position and pair, built once for all the layers
    AttentionOptions options;
    HfKvCache::Data* cache = nullptr; // a generation's cache: filled by a prefill, read and grown while decoding
    bool decoding = false;            // one token at position cache->length against the cache
};

struct HfKvCache::Data {
    HfPositions positions{SchemeSpec{}};
    int capacity = 0;
    int length = 0;
    int kvHeads = 0, headDim = 0;
    // Per layer (kvHeads, capacity, headDim), keys rotated: float32 under the Float32 precision, BF16 under BFloat16
    // (rounded after the rotation, as a bf16 model in transformers caches them); the other pair stays empty.
    std::vector<std::vector<float>> keys, values;
    std::vector<std::vector<uint16_t>> keysBf16, valuesBf16;
    HfForwardState decodeState;                   // biases for `capacity` tokens, buffers of one row
};

} // namespace plab
