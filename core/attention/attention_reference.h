// The fused attention kernel's plain twin: the same maths in three readable passes, in double; the tests' oracle.
#pragma once

#include "attention/attention.h"

#include <vector>

namespace plab {

struct AttentionReferenceForward {
    std::vector<double> out;           // (B, H, N, D)
    std::vector<double> logSumExp;     // (B, H, N)
    std::vector<double> probabilities; // (B, H, N, N), masked cells 0
    std::vector<double> rowEntropy;    // (B, H, N), nats
};

struct AttentionReferenceGradients {
    std::vector<double> dq, dk, dv; // (B, H, N, D), w.r.t. the unrotated q and k
    std::vector<double> dT5Values;  // (num-buckets, H) when the scheme is t5
    std::vector<double> dKerpleR1;  // (H) when the scheme is kerple-power or kerple-log
    std::vector<double> dKerpleR2;  // (H)
    FireParams dFire;               // fire: pair by pair through FireFunction::accumulate
    std::vector<double> dSsmaxScales; // (H) with ssmax
    std::vector<double> dSinkLogits;  // (H) with a sink logit
    std::vector<double> dLogForget;   // (B, H, N) with AttentionDims::logForget (fox): dL/dF, row and column terms
};

// What attentionForward computes, the textbook way: scores S = (Q K^T / sqrt(D) + bias) * rowScale with the mask as
// -inf, P = softmax(S) row by row, out = P V, for every (batch, head); rope and xpos rotate q and k first (with their
// method's frequencies and attention factor; past rerope's window q and k are rotated at the remapped positions, and
// attention sinks widen the mask). Materialises
// (N, N) per head and runs in double, so it is slow and exact: for reading and for testing, never for the app.
// Same inputs, layout and errors as attentionForward.
AttentionReferenceForward attentionForwardReference(const PositionBias& bias, const AttentionDims& dims, const float* q,
                                                    const float* k, const float* v);

// What attentionBackward computes, the textbook way: the gradients of sum(dOut * out) with respect to q, k, v (before
// rotation) and the trainable bias parameters, through the full (N, N) matrices of the forward above.
AttentionReferenceGradients attentionBackwardReference(const PositionBias& bias, const AttentionDims& dims,
                                                       const float* q, const float* k, const float* v,
                                                       const float* dOut);

} // namespace plab
