// Whole-matrix and curve views built on PositionBias: bias heatmaps, T5 bucket maps, the sinusoidal dot curve.
#pragma once

#include "schemes/position_bias.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace plab {

// InputError for a scheme whose bias depends on the input (SchemeInfo::dataDependent, e.g. cope): a bias view
// without a text would draw zeros. Every static bias view (matrix, thumbnails, exported metadata) checks it.
void checkStaticBiasView(const SchemeSpec& spec);

// Bias view of head h, (N, N) row-major, masked cells -inf, rows scaled by logn when enabled.
std::vector<float> biasViewMatrix(const PositionBias& bias, int head, int length);

// The main view's row or column shown by sample i of `samples` evenly spaced over `length` positions: the cell
// centre (i + 0.5) length / samples.
int viewSamplePosition(int i, int samples, int length);

// Bias view of head h sampled on a T x T grid, T = min(samples, length): cell (i, j) is biasViewMatrix's cell at
// (viewSamplePosition(i, T, length), viewSamplePosition(j, T, length)), masked cells (sinks and all) included.
// The Bias tab's per-head thumbnails. O(T length) work, never the (N, N) matrix.
struct SampledView {
    int size = 0;              // T
    std::vector<float> values; // (T, T) row-major
};
SampledView biasViewSamples(const PositionBias& bias, int head, int length, int samples);

// Metadata of an exported stack of bias matrices (the CLI's `bias` and the Bias tab's data): schemeSpecJson(spec)
// plus the length, what the values are (bias, probe score or t5 bucket index) and the heads in the stack.
nlohmann::json biasMatrixMeta(const SchemeSpec& spec, int length, bool buckets, const std::vector<int>& headIndices);

// T5 bucket index of every (m, n), (N, N) row-major; masked cells -1.
std::vector<int32_t> t5BucketMatrix(const SchemeSpec& spec, int length);
// The rule t5BucketMatrix refuses with, for callers that check before any work: InputError unless the scheme is t5.
void checkBucketMapScheme(const SchemeSpec& spec);

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
