// CoPE (Golovneva et al. 2024): contextual positions p = Σ σ(q·k), their interpolated learned embeddings, and the
// exact causal attention with them row by row in double, forward and backward: the twin that the fast blocked path
// (core/attention/cope_attention.h, which attention calls) is tested against.
#pragma once

#include <vector>

namespace plab {

// One call's shapes. q, k, v, out and their gradients are (slices, length, headDim) row-major: a slice is one
// (batch, head) sequence. The embeddings E are (headDim, nposMax) row-major, [d * nposMax + p], shared by every slice
// (the reference code shares them across the heads of a layer); null means the reference's initialisation, all 0.
struct CopeDims {
    int slices = 1;
    int length = 1;
    int headDim = 1;
    int nposMax = 1;
};

// The formula, the one home of it. For a causal query row i and keys j <= i, with scaled logits a_ij = q_i·k_j/√D:
// gates g_ij = σ(a_ij), positions p_ij = min(Σ_{t=j..i} g_it, nposMax - 1), z_i[p] = q_i·E[:, p] at integer p, and
// the bias is z_i interpolated at p_ij: z_i[⌊p⌋] + (p - ⌊p⌋)(z_i[⌈p⌉] - z_i[⌊p⌋]). The final scores a_ij + bias_ij go
// into the causal softmax. The row's values in double, for the kernel, the view and the tests alike.
struct CopeRow {
    std::vector<double> logits;    // (i + 1) a_ij
    std::vector<double> gates;     // (i + 1) g_ij
    std::vector<double> positions; // (i + 1) p_ij, clamped
    std::vector<double> z;         // (min(i + 2, nposMax)) z_i[p], every integer position a p_ij can reach
    std::vector<double> bias;      // (i + 1) bias_ij
    std::vector<double> scores;    // (i + 1) a_ij + bias_ij
};

// Row i of one slice: qRow (headDim), keys (length, headDim), embeddings as in CopeDims (null: 0).
void copeRow(const CopeDims& dims, const float* qRow, const float* keys, const float* embeddings, int i, CopeRow& row);

// Attention output (slices, length, headDim) and row log-sum-exp (slices, length); probabilities (slices, length,
// length) with 0 above the diagonal and row entropies (slices, length) in nats when not null. OpenMP over slices.
// The double twin: every row through copeRow, O(length) scratch per row; slow (about 18x rope's fused kernel), kept
// as the oracle of copeBlockedForward / copeBlockedBackward.
void copeAttentionForward(const CopeDims& dims, const float* q, const float* k, const float* v, const float* embeddings,
                          float* out, float* logSumExp, float* probabilities = nullptr, float* rowEntropy = nullptr);

// Gradients of sum(dOut · out) with respect to q, k, v (each (slices, length, headDim), overwritten) and E
// ((headDim, nposMax), overwritten; summed over slices in slice order, so any thread count gives the same sums),
// from the forward's out and logSumExp. At an integer position the interpolation's derivative in p is taken as
// z[⌈p⌉] - z[⌊p⌋] = 0, as the reference code's autograd takes it (w = p - ⌊p⌋ with ⌈p⌉ = ⌊p⌋).
void copeAttentionBackward(const CopeDims& dims, const float* q, const float* k, const float* v,
                           const float* embeddings, const float* out, const float* logSumExp, const float* dOut,
                           float* dq, float* dk, float* dv, double* dEmbeddings);

} // namespace plab
