// Fused multi-head attention with on-the-fly positional bias: forward, probabilities/entropy, backward.
#pragma once

#include "schemes/position_bias.h"

#include <vector>

namespace plab {

// How a rotary scheme pairs a head's dims: the lab's own models turn (2i, 2i + 1); Hugging Face's rotate_half turns
// dim i with i + r/2 (r the rotated dims).
enum class RotaryPairing { Interleaved, RotateHalf };

// Layout of every tensor: contiguous row-major. q, k, v, out, dq, dk, dv: (B, H, N, D).
// Scores: s(m, n) = (q_m . k_n / sqrt(D) + b_h(m, n)) * rowScale(m), masked keys excluded.
// Rotary schemes (rope, xpos) are applied inside, with their length-extension method (scaled frequencies, logit
// scale, ReRoPE's remapped positions as a second pass over the keys past the window): callers pass q and k *before*
// rotation and get gradients with respect to those unrotated inputs (AttentionDims: which dims turn, how they pair;
// Self-Extend's grouped positions are a second pass like ReRoPE's). Attention sinks of local/bca are a second pass
// too; passes are merged by their log-sum-exp, never through an N x N matrix.
struct AttentionDims {
    int batch = 1;
    int heads = 1;
    int length = 1;  // N
    int headDim = 1; // D
    // Grouped-query attention (forward only): k and v hold (B, kvHeads, N, D) and query head h reads key/value head
    // h / (heads / kvHeads), in place, never copied per query head. 0: kvHeads = heads (k and v like q).
    int kvHeads = 0;
    // Rotary schemes: the pairing, and how many leading dims of a head turn (partial rotary, as Hugging Face's
    // rotary_pct and partial_rotary_factor); the rest pass unchanged. 0: all headDim dims. The scheme's frequencies
    // and method are those of a head of rotaryDims dims.
    RotaryPairing pairing = RotaryPairing::Interleaved;
    int rotaryDims = 0;
    // FoX (scheme fox): the cumulative log forget gates F (B, H, N), F_n = sum_{l <= n} ln f_l, of this input; the
    // score of (m, n) gets F_m - F_n instead of the scheme's table (the untrained gate's line). Null: the table. Only
    // the fox scheme reads it. In double: F grows like N ln 2 and the kernel subtracts two of them.
    const double* logForget = nullptr;
    size_t elements() const { return static_cast<size_t>(batch) * heads * length * headDim; }
    int keyValueHeads() const { return kvHeads > 0 ? kvHeads : heads; }
    int rotatedDims() const { return rotaryDims > 0 ? rotaryDims : headDim; }
    // Index of the (batch, key/value head) slice that query slice bh = b * heads + h reads.
    int keyValueSlice(int bh) const
    {
        const int kv = keyValueHeads();
        return (bh / heads) * kv + (bh % heads) / (heads / kv);
    }
};

struct AttentionOptions {
    bool wantProbabilities = false; // fill probabilities (B, H, N, N); masked cells 0
    bool wantRowEntropy = false;    // fill rowEntropy (B, H, N), nats
};

struct AttentionForward {
    std::vector<float> out;       // (B, H, N, D)
    std::vector<float> logSumExp; // (B, H, N) row log-sum-exp of the scores, all backward needs besides q, k, v, out
    std::vector<float> probabilities; // (B, H, N, N) only when requested
    std::vector<float> rowEntropy;    // (B, H, N) only when requested
};

// cope is not fused: its blocked path (attention/cope_attention.h: float products on the kernel's tiles, each row's
// positions and softmax whole) takes the same calls and options.
// Tiled FlashAttention-style kernel: query blocks x key tiles with an online softmax, bias read from the per-distance
// tables, tiles a mask hides never visited (local/bca cost O(N W)); extra memory O(N D) per thread, never N x N
// unless probabilities are requested. OpenMP over (batch, head) or (head, query block); results are bit-identical
// for any thread count. Safe inside an enclosing parallel region (then it runs on the calling thread).
// Throws InputError when dims disagree with the bias (heads, length > maxLength) or the head dim is odd for rotary.
AttentionForward attentionForward(const PositionBias& bias, const AttentionDims& dims, const float* q, const float* k,
                                  const float* v, const AttentionOptions& options = {});
// The same into `result`, reusing its buffers: vectors that already have the right size are overwritten in place,
// without reallocation or zero-fill, so a caller that runs attention repeatedly (training steps, a live view, a
// benchmark) pays no page faults for the output. Unrequested probabilities/rowEntropy are cleared.
void attentionForward(const PositionBias& bias, const AttentionDims& dims, const float* q, const float* k,
                      const float* v, AttentionForward& result, const AttentionOptions& options = {});

// Row entropies (nats) of head `head`, rows 0..length-1, through the same kernel blocks as attentionForward, for
// q and k of shape (length, headDim) row-major, unrotated (rotary schemes rotate inside, as in attentionForward), or,
// with q == nullptr, from the bias alone (q = k = 0). What every entropy number of the app (CLI `entropy`, GUI view)
// comes from. FoX: `logForget`, this head's cumulative log forget gates F (length values) of the input q and k came
// from, gives the scores F_m - F_n as AttentionDims::logForget does in attentionForward; null: the scheme's table.
// InputError when it is given for another scheme.
std::vector<double> attentionRowEntropies(const PositionBias& bias, int head, int length, const float* q,
                                          const float* k, int headDim, const double* logForget = nullptr);

struct AttentionGradients {
    std::vector<float> dq, dk, dv; // (B, H, N, D), w.r.t. the unrotated q and k
    std::vector<double> dT5Values; // (num-buckets, H) when the scheme is t5
    std::vector<double> dKerpleR1; // (H) when the scheme is kerple-power or kerple-log
    std::vector<double> dKerpleR2; // (H)
    FireParams dFire;              // fire's MLP, c and threshold multiplier; empty for other schemes
    std::vector<double> dSsmaxScales; // (H) with ssmax
    std::vector<double> dSinkLogits;  // (H) with a sink logit
    std::vector<double> dLogForget;   // (B, H, N) dL/dF with AttentionDims::logForget (fox), else empty
    std::vector<double> dCopeEmbeddings; // (D, npos-max) with cope; empty for other schemes
};

// Backward from dOut (B, H, N, D), using the forward's out and logSumExp; never materialises N x N (scores and
// probabilities are recomputed per tile, FlashAttention-2 style). Deterministic for any thread count.
AttentionGradients attentionBackward(const PositionBias& bias, const AttentionDims& dims, const float* q,
                                     const float* k, const float* v, const AttentionForward& forward,
                                     const float* dOut);

// The same, overwriting `grads` in place: no reallocation once its buffers are large enough and no zero-fill (every
// element is written once). Training steps and benchmarks call this, so a call at large N times attention, not the
// allocator's fresh pages.
void attentionBackward(const PositionBias& bias, const AttentionDims& dims, const float* q, const float* k,
                       const float* v, const AttentionForward& forward, const float* dOut, AttentionGradients& grads);

} // namespace plab
