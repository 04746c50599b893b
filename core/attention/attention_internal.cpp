// What the fused attention kernel and its plain twin share: checks, the rotary frequency table, bias gradients.
#include "attention/attention_internal.h"

#include "base/errors.h"

#include <cmath>
#include <string>

namespace plab::detail {

bool isRotary(const SchemeSpec& spec)
{
    return spec.kind == SchemeKind::Rope || spec.kind == SchemeKind::Xpos;
}

bool hasTrainableBias(const SchemeSpec& spec)
{
    return spec.kind == SchemeKind::T5 || spec.kind == SchemeKind::KerplePower || spec.kind == SchemeKind::KerpleLog ||
           spec.kind == SchemeKind::Fire;
}

void validateAttention(const PositionBias& bias, const AttentionDims& dims)
{
    auto range = [](const char* what, int value, int lo, int hi) {
        if (value < lo || value > hi)
            throw InputError(std::string(what) + " = " + std::to_string(value) +
                             " is out of range; allowed: integers in [" + std::to_string(lo) + ", " +
                             std::to_string(hi) + "]");
    };
    range("batch", dims.batch, 1, 1 << 20);
    range("heads", dims.heads, 1, kMaxHeads);
    range("length", dims.length, 1, bias.maxLength());
    range("head-dim", dims.headDim, 1, 4096);
    range("kv-heads", dims.kvHeads, 0, dims.heads);
    if (dims.kvHeads > 0 && dims.heads % dims.kvHeads)
        throw InputError("heads = " + std::to_string(dims.heads) + " is not a multiple of kv-heads = " +
                         std::to_string(dims.kvHeads) + "; grouped-query attention shares each key/value head among "
                         "an equal number of query heads");
    if (dims.heads != bias.heads())
        throw InputError("heads = " + std::to_string(dims.heads) + " does not match the scheme's " +
                         std::to_string(bias.heads()) + " heads");
    if (dims.logForget && bias.spec().kind != SchemeKind::Fox)
        throw InputError("per-input forget gates are given for the scheme " + bias.spec().name() +
                         "; only fox reads them");
    range("rotary-dims", dims.rotaryDims, 0, dims.headDim);
    if (isRotary(bias.spec()) && dims.rotaryDims % 2)
        throw InputError("rotary-dims = " + std::to_string(dims.rotaryDims) + " must be even for the rotary scheme " +
                         bias.spec().name());
    if (isRotary(bias.spec()) && dims.headDim % 2 && dims.rotaryDims == 0)
        throw InputError("head-dim = " + std::to_string(dims.headDim) + " must be even for the rotary scheme " +
                         bias.spec().name());
}

RotaryFrequencies rotaryFrequencies(const SchemeSpec& spec, int headDim, int length)
{
    RotaryFrequencies table;
    if (!isRotary(spec))
        return table;
    const int pairs = headDim / 2;
    const bool xpos = spec.kind == SchemeKind::Xpos;
    // The head dim decides the pairs (callers check spec dim == D where it matters, checkRotaryHeadDim).
    const RotaryScaling scaling = rotaryScaling(headDim, spec.param("base"), rotaryShape(spec), spec.scaling,
                                                spec.scalingParams, scalingContext(spec), length, spec.shortFactors,
                                                spec.longFactors, spec.yarnTruncate);
    table.theta = scaling.thetaScaled;
    table.attentionFactor = scaling.attentionFactor;
    table.logZeta = xpos ? xposLogZeta(headDim, spec.param("gamma")) : std::vector<double>(pairs, 0.0);
    table.scaleBase = xpos ? spec.param("scale-base") : 1.0;
    return table;
}

void RotaryFrequencies::rotation(double m, int i, bool isKey, double& c, double& s) const
{
    const double angle = m * theta[i];
    // The key's scale is 1 / the query's (not exp of the negated exponent), so q and k scales cancel exactly.
    const double up = logZeta[i] != 0.0 ? std::exp(m / scaleBase * logZeta[i]) : 1.0;
    const double scale = (isKey ? 1.0 / up : up) * attentionFactor;
    c = std::cos(angle) * scale;
    s = std::sin(angle) * scale;
}

void biasParameterGradients(const PositionBias& bias, const std::vector<double>& distanceGrad, int length,
                            std::vector<double>& dT5Values, std::vector<double>& dKerpleR1,
                            std::vector<double>& dKerpleR2)
{
    const SchemeSpec& spec = bias.spec();
    const int H = spec.heads;
    const size_t stride = static_cast<size_t>(2 * length - 1);
    auto g = [&](int h, int r) { return distanceGrad[h * stride + (r + length - 1)]; };
    dT5Values.clear();
    dKerpleR1.clear();
    dKerpleR2.clear();
    if (spec.kind == SchemeKind::T5) {
        const int nb = spec.intParam("num-buckets");
        const int maxd = spec.intParam("max-distance");
        dT5Values.assign(static_cast<size_t>(nb) * H, 0.0);
        for (int r = -(length - 1); r <= length - 1; ++r) {
            const int bucket = t5Bucket(-r, spec.bidirectional, nb, maxd);
            for (int h = 0; h < H; ++h)
                dT5Values[static_cast<size_t>(bucket) * H + h] += g(h, r);
        }
    } else if (spec.kind == SchemeKind::KerplePower || spec.kind == SchemeKind::KerpleLog) {
        const bool power = spec.kind == SchemeKind::KerplePower;
        dKerpleR1.assign(H, 0.0);
        dKerpleR2.assign(H, 0.0);
        for (int h = 0; h < H; ++h) {
            const double r1 = spec.kerpleR1.empty() ? spec.param("r1") : spec.kerpleR1[h];
            const double r2 = spec.kerpleR2.empty() ? spec.param("r2") : spec.kerpleR2[h];
            for (int r = -(length - 1); r <= length - 1; ++r) {
                const double gr = g(h, r);
                if (gr == 0.0)
                    continue;
                const double d = std::abs(r);
                if (power) {
                    const double f = std::pow(d, r2);
                    dKerpleR1[h] -= gr * f;
                    if (d > 0)
                        dKerpleR2[h] -= gr * r1 * f * std::log(d);
                } else {
                    dKerpleR1[h] -= gr * std::log1p(r2 * d);
                    dKerpleR2[h] -= gr * r1 * d / (1.0 + r2 * d);
                }
            }
        }
    }
}

void fireDistanceGradients(const PositionBias& bias, const std::vector<double>& distanceGrad, int length,
                           FireParams& dFire)
{
    const FireFunction* fire = bias.fire();
    const int H = bias.heads();
    const size_t stride = static_cast<size_t>(2 * length - 1);
    for (int h = 0; h < H; ++h)
        for (int r = 0; r < length; ++r) {
            const double g = distanceGrad[h * stride + (r + length - 1)];
            if (g != 0.0 && fire->distanceOnly(r)) // a row m = r < T holds distance r: its x stands for all of them
                fire->accumulate(h, r, 0, g, dFire);
        }
}

} // namespace plab::detail
