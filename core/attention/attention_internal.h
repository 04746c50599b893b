// What the fused attention kernel (attention.cpp) and its plain twin (attention_reference.cpp) share: checks, the
// rotary frequency table and the bias parameter gradients. Not part of core's interface.
#pragma once

#include "attention/attention.h"

#include <vector>

namespace plab::detail {

// Throws InputError when dims disagree with the bias (heads, length > maxLength) or the head dim is odd for rotary.
void validateAttention(const PositionBias& bias, const AttentionDims& dims);

bool isRotary(const SchemeSpec& spec);
// t5 and kerple: their bias has parameters that the backward returns gradients for.
bool hasTrainableBias(const SchemeSpec& spec);

// The rotary step's only input: per pair i of a head, the angle theta_i a position step turns it by, and XPOS's
// log zeta_i. Position m turns pair i by m theta_i and scales q by zeta_i^(m/s), k by zeta_i^(-m/s). Methods that
// stretch rotary schemes to longer contexts change this table (core/schemes/rotary_scaling.h: theta'_i and the attention
// factor) and, for rerope, the positions (the kernel's passes), not the kernels.
struct RotaryFrequencies {
    std::vector<double> theta;    // (D/2) theta'_i; empty when the scheme does not rotate
    std::vector<double> logZeta;  // (D/2); all 0 for rope
    double scaleBase = 1.0;       // XPOS's s
    double attentionFactor = 1.0; // multiplies cos and sin of q and of k (YaRN), so the logits scale by its square

    bool active() const { return !theta.empty(); }
    int pairs() const { return static_cast<int>(theta.size()); }
    // cos and sin of pair i at position m (fractional for leaky rerope), times XPOS's scale (isKey: its inverse) and
    // the attention factor; R_m = [[c, -s], [s, c]].
    void rotation(double m, int i, bool isKey, double& c, double& s) const;
};

// The table of `spec` for head dim `headDim` at sequence length `length` (dynamic-ntk reads it); empty for schemes that
// do not rotate.
RotaryFrequencies rotaryFrequencies(const SchemeSpec& spec, int headDim, int length);

// Parameter gradients of trainable biases (t5 values, kerple r1 and r2) from the loss gradient summed per head and
// distance: distanceGrad[h * (2 length - 1) + (r + length - 1)], r = m - n. Vectors of other schemes are cleared.
void biasParameterGradients(const PositionBias& bias, const std::vector<double>& distanceGrad, int length,
                            std::vector<double>& dT5Values, std::vector<double>& dKerpleR1,
                            std::vector<double>& dKerpleR2);

// FIRE's gradient from its distance-only rows (m < T), summed per head and distance as for biasParameterGradients
// (the kernel adds the later rows' gradient pair by pair): added to dFire.
void fireDistanceGradients(const PositionBias& bias, const std::vector<double>& distanceGrad, int length,
                           FireParams& dFire);

} // namespace plab::detail
