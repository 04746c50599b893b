// CoPE's fast exact attention: blocks of query rows whose products (q k, dO v, q E and the gradients) are float
// matrix products, with each row's gates, positions, interpolation and softmax in between, forward and backward.
#pragma once

#include "schemes/cope.h"

namespace plab {

// The same calls, shapes and results as copeAttentionForward / copeAttentionBackward (core/schemes/cope.h, the
// double twin kept as their oracle), to the float tolerance tst_cope states: the products in float, the sums along a
// row (positions, the softmax's total, E's gradient bins) in double. OpenMP over (slice, row block) forward and over
// slices backward; both give the same bits for any thread count (each row and each slice is computed by one thread
// in a fixed order, E's gradient is summed over slices in slice order). Safe inside an enclosing parallel region.
void copeBlockedForward(const CopeDims& dims, const float* q, const float* k, const float* v, const float* embeddings,
                        float* out, float* logSumExp, float* probabilities = nullptr, float* rowEntropy = nullptr);

void copeBlockedBackward(const CopeDims& dims, const float* q, const float* k, const float* v, const float* embeddings,
                         const float* out, const float* logSumExp, const float* dOut, float* dq, float* dk, float* dv,
                         double* dEmbeddings);

} // namespace plab
