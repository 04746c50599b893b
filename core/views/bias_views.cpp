// Bias matrices and curves for the heatmap, compare and dot views (and their CLI twins).
#include "views/bias_views.h"

#include "base/errors.h"
#include "base/limits.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace plab {

void checkStaticBiasView(const SchemeSpec& spec)
{
    if (spec.info().dataDependent) // e.g. cope: with no text there is no bias to draw, only zeros
        throw InputError("scheme " + spec.name() +
                         "'s bias depends on the input (data-dependent): it has no static bias view; see a trained "
                         "model's bias and positions on a text in Attention on text");
}

namespace {
// The head and length a view of `bias` reads.
void checkViewArguments(const PositionBias& bias, int head, int length)
{
    checkStaticBiasView(bias.spec());
    if (head < 0 || head >= bias.heads())
        throw InputError("head = " + std::to_string(head) + " is out of range; allowed: 0.." +
                         std::to_string(bias.heads() - 1));
    if (length < 1 || length > bias.maxLength())
        throw InputError("length = " + std::to_string(length) + " is out of range; allowed: integers in [1, " +
                         std::to_string(bias.maxLength()) + "]");
}
} // namespace

std::vector<float> biasViewMatrix(const PositionBias& bias, int head, int length)
{
    checkViewArguments(bias, head, length);
    checkMemoryEstimate(4.0 * length * length,
                        "a " + std::to_string(length) + " x " + std::to_string(length) + " bias matrix");
    std::vector<float> out(static_cast<size_t>(length) * length);
    bias.fillView(head, length, 0, length, out.data());
    return out;
}

int viewSamplePosition(int i, int samples, int length)
{
    return static_cast<int>((i + 0.5) * length / samples);
}

SampledView biasViewSamples(const PositionBias& bias, int head, int length, int samples)
{
    checkViewArguments(bias, head, length);
    if (samples < 1)
        throw InputError("samples = " + std::to_string(samples) + " is out of range; allowed: integers >= 1");
    const int t = std::min(samples, length);
    std::vector<int> positions(t);
    for (int i = 0; i < t; ++i)
        positions[i] = viewSamplePosition(i, t, length);
    // Each sampled row is the main view's own row (fillView: mask, sinks, logn), so the two cannot disagree.
    std::vector<float> row(length);
    SampledView out{t, std::vector<float>(static_cast<size_t>(t) * t)};
    for (int i = 0; i < t; ++i) {
        bias.fillView(head, length, positions[i], positions[i] + 1, row.data());
        for (int j = 0; j < t; ++j)
            out.values[static_cast<size_t>(i) * t + j] = row[positions[j]];
    }
    return out;
}

nlohmann::json biasMatrixMeta(const SchemeSpec& spec, int length, bool buckets, const std::vector<int>& headIndices)
{
    checkStaticBiasView(spec);
    nlohmann::json meta = schemeSpecJson(spec);
    meta["length"] = length;
    meta["values"] = buckets ? "t5 bucket index (-1 masked)" : (spec.info().rotary ? "probe score" : "bias");
    meta["head_indices"] = headIndices;
    return meta;
}

void checkBucketMapScheme(const SchemeSpec& spec)
{
    if (spec.kind != SchemeKind::T5)
        throw InputError("bucket maps are only defined for the t5 scheme, not " + spec.name(), "buckets");
}

std::vector<int32_t> t5BucketMatrix(const SchemeSpec& spec, int length)
{
    checkBucketMapScheme(spec);
    checkMemoryEstimate(4.0 * length * length,
                        "a " + std::to_string(length) + " x " + std::to_string(length) + " bucket matrix");
    const PositionBias mask(spec, length);
    const int nb = spec.intParam("num-buckets");
    const int maxd = spec.intParam("max-distance");
    // Buckets depend on the distance only: tabulate once.
    std::vector<int32_t> byDistance(2 * length - 1);
    for (int r = -(length - 1); r <= length - 1; ++r)
        byDistance[r + length - 1] = t5Bucket(-r, spec.bidirectional, nb, maxd);
    std::vector<int32_t> out(static_cast<size_t>(length) * length, -1);
#pragma omp parallel for schedule(static)
    for (int m = 0; m < length; ++m) {
        const KeyRange keys = mask.keyRange(m, length);
        for (int n = keys.begin; n < keys.end; ++n)
            out[static_cast<size_t>(m) * length + n] = byDistance[m - n + length - 1];
    }
    return out;
}

DotCurve sinusoidalDotCurve(int dim, double base, int maxDistance)
{
    if (dim < 2 || dim > 4096 || dim % 2)
        throw InputError("dim = " + std::to_string(dim) + " is out of range; allowed: even integers in [2, 4096]");
    if (!(base > 1) || !(base <= 1e12)) {
        char text[64];
        std::snprintf(text, sizeof text, "%.10g", base);
        throw InputError(std::string("base = ") + text + " is out of range; allowed: (1, 1e+12]");
    }
    if (maxDistance < 0 || maxDistance > 10000000)
        throw InputError("max-distance = " + std::to_string(maxDistance) +
                         " is out of range; allowed: integers in [0, 10000000]");
    DotCurve curve;
    curve.dim = dim;
    curve.base = base;
    curve.distance.resize(maxDistance + 1);
    curve.dot.resize(maxDistance + 1);
    std::vector<double> w(dim / 2);
    for (int i = 0; i < dim / 2; ++i)
        w[i] = rotaryFrequency(i, dim, base);
#pragma omp parallel for schedule(static) if (maxDistance > 4096)
    for (int r = 0; r <= maxDistance; ++r) {
        curve.distance[r] = r;
        curve.dot[r] = sinusoidalDot(r, w);
    }
    return curve;
}

} // namespace plab
