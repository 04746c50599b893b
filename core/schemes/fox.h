// FoX (Forgetting Transformer, Lin et al., ICLR 2025): the forget gate's formulas, their one home.
#pragma once

#include <cmath>
#include <cstddef>

namespace plab {

// ln σ(z), without overflow or cancellation at either end (ln σ(z) = z - ln(1 + e^z) = -ln(1 + e^-z)).
inline double logSigmoid(double z)
{
    return z < 0 ? z - std::log1p(std::exp(z)) : -std::log1p(std::exp(-z));
}

// d ln σ(z) / dz = 1 - σ(z) = σ(-z).
inline double logSigmoidSlope(double z)
{
    return 1.0 / (1.0 + std::exp(z));
}

// The decay per token of a gate of constant logit b (a gate weight of 0, as an untrained model nearly has):
// -ln σ(b) = ln(1 + e^-b), so F_m - F_n = -(m - n) ln(1 + e^-b), an ALiBi line. What the scheme's bias view shows.
inline double foxPriorDecay(double gateBias)
{
    return -logSigmoid(gateBias);
}

// One head's cumulative log forget gates F_t = sum_{l <= t} ln σ(z_l), t < T, from gate logits z_t = z[t * stride],
// summed in double (F reaches -T ln 2 and beyond; the kernel subtracts two of them, which float would not keep).
void foxCumulativeLogGates(const float* z, int T, size_t stride, double* F);

// The gradient of the gate logits from dL/dF: dz_t = σ(-z_t) sum_{l >= t} dF_l (F_l holds ln σ(z_t) for every
// l >= t), written to dz[t * stride].
void foxGateLogitGradients(const float* z, const double* dF, int T, size_t stride, float* dz);

} // namespace plab
