// Whole-matrix and curve views built on PositionBias: bias heatmaps, T5 bucket maps, the sinusoidal dot curve.
#pragma once

#include "position_bias.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace plab {

// Refuses (InputError) a request whose memory would exceed what the tool allows, naming the estimate.
void checkMemoryEstimate(double bytes, const std::string& what);
constexpr double kMemoryBudgetBytes = 8.0 * (1ull << 30);

// ---- compute-time guard: refuse, before computing, a job that would run for hours ----
// Work is counted as `bench attention` counts it: 4 D flops (q.k and p.v) per visible (query, key) pair and head.
// The rate is deliberately conservative: measured on the 2-core development machine while others compiled, the
// entropy path ran at 50-60 GFLOP/s counted this way for D <= 16 and 80-105 at D = 64, the attention kernel at 80
// (1 or 2 threads, loaded) to 170 (quiet). So a job estimated under the limit finishes within it even on one thread
// of a busy machine, and a refused one would really have taken several minutes at least.
constexpr double kWorkFlopsPerSecond = 20e9;
constexpr double kWorkLimitSeconds = 600;
// Per visible pair the softmax, bias and entropy cost about as much as a dot product of this many dimensions, whatever
// D is: head dims below it (and the bias-only entropy, D = 0) count as this many.
constexpr int kMinWorkDim = 16;

// Attention work of one pass over sequences of every length in `lengths` with the spec's heads and mask, head dim D.
double attentionWork(const SchemeSpec& spec, const std::vector<int>& lengths, int headDim);
// Estimated seconds of `flops` at kWorkFlopsPerSecond.
double estimatedSeconds(double flops);
// Refuses (InputError) work estimated above kWorkLimitSeconds, before anything is computed: one line naming `what`,
// the estimate (time, flops, rate), the limit and `howToProceed`.
void checkWorkEstimate(double flops, const std::string& what, const std::string& howToProceed);

// Bias view of head h, (N, N) row-major, masked cells -inf, rows scaled by logn when enabled.
std::vector<float> biasViewMatrix(const PositionBias& bias, int head, int length);

// Metadata of an exported stack of bias matrices (the CLI's `bias` and the Bias tab's data): schemeSpecJson(spec)
// plus the length, what the values are (bias, probe score or t5 bucket index) and the heads in the stack.
nlohmann::json biasMatrixMeta(const SchemeSpec& spec, int length, bool buckets, const std::vector<int>& headIndices);

// T5 bucket index of every (m, n), (N, N) row-major; masked cells -1.
std::vector<int32_t> t5BucketMatrix(const SchemeSpec& spec, int length);

// dot(p_m, p_n) of sinusoidal embeddings for distances 0..maxDistance.
struct DotCurve {
    int dim = 128;
    double base = 10000;
    std::vector<int> distance;
    std::vector<double> dot; // sum_{i<d/2} cos(r w_i)
    double halfDim() const { return dim / 2.0; }
};
DotCurve sinusoidalDotCurve(int dim, double base, int maxDistance); // validates dim, base, maxDistance

} // namespace plab
