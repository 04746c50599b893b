// A Hugging Face checkpoint loaded into float32 and its forward (logits) through the lab's fused attention kernel.
#pragma once

#include "attention/attention.h"
#include "hf/hf_config.h"
#include "hf/hf_products.h"

#include <Eigen/Core>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace plab {

// The float32 bytes a folder's model takes once loaded (weights converted, whatever their stored dtype), plus a margin
// for one forward's activations at the model's context. The number checked before loading.
double hfModelMemoryBytes(const HfConfig& config);

// One layer's attention as the kernel computed it during a forward (HfModel::observeAttention).
struct HfLayerAttention {
    int layer = 0;
    const PositionBias& bias;        // what the kernel added: none or ALiBi (rotary is already in q and k)
    const AttentionDims& dims;       // heads, kvHeads, length T, head dim D
    const float* q;                  // (heads, T, D), after rotary and q/k norm, as the kernel read it
    const float* k;                  // (kvHeads, T, D), likewise
    const AttentionForward& forward; // out, logSumExp and rowEntropy (nats) of every (head, query)
};
// Called after each layer's attention; false stops the forward there.
using HfAttentionObserver = std::function<bool(const HfLayerAttention&)>;

class HfModel {
public:
    // Reads config.json, checks the memory estimate against what the machine has available (InputError naming both
    // sizes), then maps the weights and converts every tensor the family needs to float32, checking names and shapes.
    explicit HfModel(const std::string& folder);
    ~HfModel();
    HfModel(const HfModel&) = delete;
    HfModel& operator=(const HfModel&) = delete;

    const HfConfig& config() const { return m_config; }
    double parameterCount() const { return m_parameters; }

    // Logits (T, vocab) of `ids` at positions 0..T-1 under `positions` (hfPositionSpec: the config's own scaling or a
    // method applied zero-shot). Activations and accumulators are float32. InputError for an id outside the vocabulary
    // or, for learned positions, more tokens than the model's position table (naming both).
    HfMatrix logits(const std::vector<int>& ids, const SchemeSpec& positions) const;
    // The same forward without the output head, handing each layer's attention (row entropies requested) to
    // `observer`; false when the observer stopped it.
    bool observeAttention(const std::vector<int>& ids, const SchemeSpec& positions,
                          const HfAttentionObserver& observer) const;

    struct Layer;

private:
    // logits() and observeAttention(): `out` null skips the output head.
    bool forward(const std::vector<int>& ids, const SchemeSpec& positions, const HfAttentionObserver* observer,
                 HfMatrix* out) const;
    HfConfig m_config;
    double m_parameters = 0;
    HfMatrix m_embed;     // (vocab, hidden)
    HfMatrix m_positions; // gpt2's wpe (context, hidden)
    HfMatrix m_head;      // (vocab, hidden) when untied
    std::vector<float> m_embedNormW, m_embedNormB, m_finalNormW, m_finalNormB;
    std::vector<std::unique_ptr<Layer>> m_layers;
};

} // namespace plab
