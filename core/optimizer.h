// AdamW, the warm-up + cosine learning-rate schedule and the clamp of trainable scheme values after a step.
#pragma once

#include "model.h"

#include <vector>

namespace plab {

// AdamW with decoupled weight decay on the tensors flagged `decay`; moments in float.
class AdamW {
public:
    explicit AdamW(size_t parameterCount);
    // One update of params from grads at learning rate lr; step counts from 1 (bias correction).
    void update(Model& model, const TrainConfig& config, double lr, int step);

private:
    std::vector<float> m_m, m_v; // first and second moments, parameter layout
};

// Learning rate of step s (0-based): linear warm-up to the peak, then cosine decay to the minimum.
double learningRateAt(const TrainConfig& config, int step);

// Clamps trainable scheme values into their allowed ranges (kerple r1 > 0, 0 < r2 <= 2 for power, r2 > 0 for log),
// as the KERPLE reference code clamps after each step.
void clampSchemeParameters(Model& model);

} // namespace plab
