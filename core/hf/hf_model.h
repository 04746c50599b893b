// A Hugging Face checkpoint loaded into float32 and its forward (logits) through the lab's fused attention kernel.
#pragma once

#include "hf/hf_config.h"
#include "hf/hf_products.h"

#include <Eigen/Core>

#include <memory>
#include <string>
#include <vector>

namespace plab {

// The float32 bytes a folder's model takes once loaded (weights converted, whatever their stored dtype), plus a margin
// for one forward's activations at the model's context. The number checked before loading.
double hfModelMemoryBytes(const HfConfig& config);

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

    struct Layer;

private:
    HfConfig m_config;
    double m_parameters = 0;
    HfMatrix m_embed;     // (vocab, hidden)
    HfMatrix m_positions; // gpt2's wpe (context, hidden)
    HfMatrix m_head;      // (vocab, hidden) when untied
    std::vector<float> m_embedNormW, m_embedNormB, m_finalNormW, m_finalNormB;
    std::vector<std::unique_ptr<Layer>> m_layers;
};

} // namespace plab
