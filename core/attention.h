// Fused multi-head attention with on-the-fly positional bias: forward, probabilities/entropy, backward.
#pragma once

#include "position_bias.h"

#include <vector>

namespace plab {

// Layout of every tensor: contiguous row-major. q, k, v, out, dq, dk, dv: (B, H, N, D).
// Scores: s(m, n) = (q_m . k_n / sqrt(D) + b_h(m, n)) * rowScale(m), masked keys excluded.
// Rotary schemes (rope, xpos) are applied inside: callers pass q and k *before* rotation and get gradients
// with respect to those unrotated inputs.
struct AttentionDims {
    int batch = 1;
    int heads = 1;
    int length = 1;  // N
    int headDim = 1; // D
    size_t elements() const { return static_cast<size_t>(batch) * heads * length * headDim; }
};

struct AttentionOptions {
    bool wantProbabilities = false; // fill probabilities (B, H, N, N); masked cells 0
    bool wantRowEntropy = false;    // fill rowEntropy (B, H, N), nats
};

struct AttentionForward {
    std::vector<float> out;           // (B, H, N, D)
    std::vector<float> logSumExp;     // (B, H, N) row log-sum-exp of the scores, all backward needs besides q, k, v, out
    std::vector<float> probabilities; // (B, H, N, N) only when requested
    std::vector<float> rowEntropy;    // (B, H, N) only when requested
};

// Throws InputError when dims disagree with the bias (heads, length > maxLength) or the head dim is odd for rotary.
AttentionForward attentionForward(const PositionBias& bias, const AttentionDims& dims, const float* q, const float* k,
                                  const float* v, const AttentionOptions& options = {});

struct AttentionGradients {
    std::vector<float> dq, dk, dv;     // (B, H, N, D), w.r.t. the unrotated q and k
    std::vector<double> dT5Values;     // (num-buckets, H) when the scheme is t5
    std::vector<double> dKerpleR1;     // (H) when the scheme is kerple-power or kerple-log
    std::vector<double> dKerpleR2;     // (H)
};

// Backward from dOut (B, H, N, D), using the forward's out and logSumExp; never materialises N x N.
AttentionGradients attentionBackward(const PositionBias& bias, const AttentionDims& dims, const float* q, const float* k,
                                     const float* v, const AttentionForward& forward, const float* dOut);

} // namespace plab
