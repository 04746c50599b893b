// AdamW, the warm-up + cosine learning-rate schedule and the clamp of trainable scheme values after a step.
#pragma once

#include "model/model.h"

#include <vector>

namespace plab {

// AdamW with decoupled weight decay on the tensors flagged `decay`; moments in float.
class AdamW {
public:
    explicit AdamW(size_t parameterCount);
    // One update of params from grads at learning rate lr; bias correction counts this optimiser's updates from 1,
    // so a run continued from a checkpoint's state carries on where it stopped.
    void update(Model& model, const TrainConfig& config, double lr);

    const layers::FloatBuffer& firstMoment() const { return m_m; }
    const layers::FloatBuffer& secondMoment() const { return m_v; }
    int updates() const { return m_updates; }
    // Restores a saved state; InputError when the sizes differ from the model's or a value is not finite.
    void restore(const std::vector<float>& m, const std::vector<float>& v, int updates);

private:
    layers::FloatBuffer m_m, m_v; // first and second moments, parameter layout
    int m_updates = 0;
};

// Learning rate of step s (0-based): linear warm-up to the peak, then cosine decay to the minimum.
double learningRateAt(const TrainConfig& config, int step);

// Clamps trainable scheme values into their allowed ranges (kerple r1 > 0, 0 < r2 <= 2 for power, r2 > 0 for log),
// as the KERPLE reference code clamps after each step.
void clampSchemeParameters(Model& model);

} // namespace plab
