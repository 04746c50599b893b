// The transformer's layers as forward/backward function pairs over flat float buffers (llm.c style).
#pragma once

#include "base/aligned_allocator.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace plab::layers {

// 64-byte aligned float storage for activations, parameters, gradients and optimizer moments (see
// base/aligned_allocator.h: with aligned buffers and offsets fixed by the shapes every run gives the same bits).
using FloatBuffer = std::vector<float, AlignedAllocator<float>>;

// Conventions: outputs first, then inputs, then sizes. Every backward ACCUMULATES (+=) into its gradient
// outputs, so a buffer read by two layers (the residual stream) gets both contributions; callers zero them.
// Matrices are row-major; linear weights are (out, in) like torch.nn.Linear.

// out[b,t,:] = scale * wte[token[b,t],:] + pos[t,:] (pos may be null: no absolute positions).
void encoderForward(float* out, const uint8_t* tokens, const float* wte, const float* pos, int B, int T, int C,
                    float scale = 1.0f);
// out (B, T, C), tokens (B, T), wte (V, C), pos (T, C)
void encoderBackward(float* dwte, float* dpos, const float* dout, const uint8_t* tokens, int B, int T, int C,
                     float scale = 1.0f);
// dwte (V, C), dpos (T, C) or null, dout (B, T, C)

// LayerNorm over the last axis, eps 1e-5; mean and rstd (rows) are kept for the backward.
void layernormForward(float* out, float* mean, float* rstd, const float* inp, const float* weight, const float* bias,
                      int rows, int C);
void layernormBackward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                       const float* weight, const float* mean, const float* rstd, int rows, int C);

// out (rows, OC) = residual (rows, OC, may be null) + inp (rows, IC) * weight^T (OC, IC) + bias (OC, may be null).
// Eigen GEMM accumulating onto residual + bias, so the residual add and the bias cost no extra pass.
void matmulForward(float* out, const float* inp, const float* weight, const float* bias, int rows, int IC, int OC,
                   const float* residual = nullptr);
// dinp (rows, IC) += dout * weight; dweight (OC, IC) += dout^T * inp; dbias (OC) += column sums (null: skipped).
void matmulBackward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp, const float* weight,
                    int rows, int IC, int OC);

// GELU, tanh approximation (GPT-2, torch approximate='tanh').
void geluForward(float* out, const float* inp, size_t n);
void geluBackward(float* dinp, const float* inp, const float* dout, size_t n);

void residualForward(float* out, const float* a, const float* b, size_t n);
void residualBackward(float* da, float* db, const float* dout, size_t n);

// qkv (B, T, 3C) with rows [q | k | v], each head-major (h * D + d) -> q, k, v (B, H, T, D).
void splitHeads(float* q, float* k, float* v, const float* qkv, int B, int T, int H, int D);
// dqkv (B, T, 3C) += the transposes of dq, dk, dv (B, H, T, D).
void splitHeadsBackward(float* dqkv, const float* dq, const float* dk, const float* dv, int B, int T, int H, int D);
// y (B, H, T, D) -> out (B, T, C = H * D); its backward is the inverse permutation (accumulating).
void mergeHeads(float* out, const float* y, int B, int T, int H, int D);
void mergeHeadsBackward(float* dy, const float* dout, int B, int T, int H, int D);

// Softmax cross-entropy per position: losses (rows) = logsumexp(logits) - logits[target]; probs (rows, V) kept.
// targets may be null (probabilities only).
void crossEntropyForward(float* losses, float* probs, const float* logits, const uint8_t* targets, int rows, int V);
// dlogits (rows, V) += (probs - onehot(target)) * dlosses[row].
void crossEntropyBackward(float* dlogits, const float* probs, const uint8_t* targets, const float* dlosses, int rows,
                          int V);

// Sinusoidal absolute positions (T, C): p[m, 2i] = sin(m w_i), p[m, 2i+1] = cos(m w_i), w_i = base^(-2i/C).
void sinusoidalTable(float* out, int T, int C, double base);

} // namespace plab::layers
