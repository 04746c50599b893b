// Per-distance tables, masks and the logn modifier behind every bias view and attention kernel.
#include "position_bias.h"

#include "bias_views.h"
#include "errors.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace plab {

double xposZeta(int i, int dim, double gamma)
{
    return (2.0 * i + gamma * dim) / ((1.0 + gamma) * dim);
}

PositionBias::PositionBias(const SchemeSpec& spec, int maxLength) : m_spec(spec), m_maxLength(maxLength)
{
    validateSchemeSpec(spec);
    if (maxLength < 1 || maxLength > kMaxLength)
        throw InputError("length = " + std::to_string(maxLength) + " is out of range; allowed: integers in [1, " +
                         std::to_string(kMaxLength) + "]");
    const SchemeInfo& info = spec.info();
    m_hasAdditive = info.additive;
    if (info.hasWindow) {
        m_window = spec.intParam("window");
        m_sinks = spec.intParam("sinks");
    }

    const int H = spec.heads;
    const int L = maxLength;
    checkMemoryEstimate(4.0 * H * (2.0 * L - 1),
                        "distance tables of " + std::to_string(H) + " heads x " + std::to_string(L) + " positions");
    m_tableStride = static_cast<size_t>(2 * L - 1);
    m_viewTable.assign(static_cast<size_t>(H) * m_tableStride, 0.0f);

    // value(h, r) for r = m - n in [-(L-1), L-1]
    auto fill = [&](auto&& valueOf) {
        for (int h = 0; h < H; ++h) {
            float* row = m_viewTable.data() + static_cast<size_t>(h) * m_tableStride + (L - 1);
#pragma omp parallel for schedule(static) if (L > 4096)
            for (int r = -(L - 1); r <= L - 1; ++r)
                row[r] = static_cast<float>(valueOf(h, r));
        }
    };

    // Head-independent schemes compute the table once and copy it to every head.
    auto fillShared = [&](auto&& valueOf) {
        float* first = m_viewTable.data() + (L - 1);
#pragma omp parallel for schedule(static) if (L > 1024)
        for (int r = -(L - 1); r <= L - 1; ++r)
            first[r] = static_cast<float>(valueOf(r));
        for (int h = 1; h < H; ++h)
            std::copy(m_viewTable.begin(), m_viewTable.begin() + m_tableStride,
                      m_viewTable.begin() + static_cast<std::ptrdiff_t>(h * m_tableStride));
    };
    auto frequencies = [](int d, double base) { return rotaryFrequencies(d, base); };

    switch (spec.kind) {
    case SchemeKind::None:
    case SchemeKind::Learned:
    case SchemeKind::Local:
    case SchemeKind::Bca:
        break; // zero everywhere visible
    case SchemeKind::Sinusoidal: {
        const int d = spec.intParam("dim");
        const std::vector<double> w = frequencies(d, spec.param("base"));
        fillShared([&](int r) { return sinusoidalDot(r, w) - d / 2.0; });
        break;
    }
    case SchemeKind::Sandwich: {
        const int d = spec.intParam("dim");
        const std::vector<double> w = frequencies(d, spec.param("base"));
        std::vector<double> dots(L);
#pragma omp parallel for schedule(static) if (L > 1024)
        for (int r = 0; r < L; ++r)
            dots[r] = sinusoidalDot(r, w) - d / 2.0;
        fill([&](int h, int r) { return dots[std::abs(r)] * H / (8.0 * (h + 1)); });
        break;
    }
    case SchemeKind::Rope:
    case SchemeKind::Xpos: {
        // The probe score with the length-extension method applied: logit_scale * sum_i 2 cos(P(r) θ'_i) (xpos: times
        // ζ_i^(P(r)/s)); methods that depend on the sequence length (dynamic-ntk) see maxLength.
        const int d = spec.intParam("dim");
        const RotaryScaling scaling = rotaryScaling(spec, L);
        const bool xpos = spec.kind == SchemeKind::Xpos;
        std::vector<double> logZeta;
        for (int i = 0; xpos && i < d / 2; ++i)
            logZeta.push_back(std::log(xposZeta(i, d, spec.param("gamma"))));
        const double scaleBase = xpos ? spec.param("scale-base") : 1.0;
        fillShared([&](int r) { return rotaryProbe(scaling, r, logZeta, scaleBase); });
        break;
    }
    case SchemeKind::T5: {
        const int nb = spec.intParam("num-buckets");
        const int maxd = spec.intParam("max-distance");
        const std::vector<double> values =
            spec.t5Values.empty() ? t5DefaultValues(H, spec.bidirectional, nb, maxd) : spec.t5Values;
        fill([&](int h, int r) {
            return values[static_cast<size_t>(t5Bucket(-r, spec.bidirectional, nb, maxd)) * H + h];
        });
        break;
    }
    case SchemeKind::Alibi: {
        const std::vector<double> slopes = alibiSlopes(H);
        fill([&](int h, int r) { return -slopes[h] * (spec.bidirectional ? std::abs(r) : r); });
        break;
    }
    case SchemeKind::KerplePower:
    case SchemeKind::KerpleLog: {
        const bool power = spec.kind == SchemeKind::KerplePower;
        fill([&](int h, int r) {
            const double r1 = spec.kerpleR1.empty() ? spec.param("r1") : spec.kerpleR1[h];
            const double r2 = spec.kerpleR2.empty() ? spec.param("r2") : spec.kerpleR2[h];
            const double dist = std::abs(r);
            return power ? -r1 * std::pow(dist, r2) : -r1 * std::log1p(r2 * dist);
        });
        break;
    }
    }
}

KeyRange PositionBias::keyRange(int m, int length) const
{
    return maskKeyRange(m_spec.kind, m_spec.bidirectional, m_window, m, length);
}

KeyRange PositionBias::sinkRange(int m, int length) const
{
    if (m_sinks == 0)
        return {0, 0};
    return {0, std::max(0, std::min({m_sinks, keyRange(m, length).begin, m_spec.bidirectional ? length : m + 1}))};
}

namespace {
// The spec and length visiblePairs and nominalPairs count over.
void checkPairCountArguments(const SchemeSpec& spec, int length)
{
    validateSchemeSpec(spec);
    if (length < 1 || length > kMaxLength)
        throw InputError("length = " + std::to_string(length) + " is out of range; allowed: integers in [1, " +
                         std::to_string(kMaxLength) + "]");
}
} // namespace

double visiblePairs(const SchemeSpec& spec, int length)
{
    checkPairCountArguments(spec, length);
    const int window = spec.info().hasWindow ? spec.intParam("window") : 0;
    double pairs = 0;
    const int sinks = spec.info().hasWindow ? spec.intParam("sinks") : 0;
    for (int m = 0; m < length; ++m) {
        const KeyRange keys = maskKeyRange(spec.kind, spec.bidirectional, window, m, length);
        pairs += keys.size() + std::max(0, std::min({sinks, keys.begin, spec.bidirectional ? length : m + 1}));
    }
    return pairs;
}

double nominalPairs(const SchemeSpec& spec, int length)
{
    checkPairCountArguments(spec, length);
    const double n = length;
    if (!spec.info().hasWindow)
        return spec.bidirectional ? n * n : n * n / 2;
    const int window = spec.intParam("window");
    int widest = 0;
    for (int m = 0; m < length; ++m)
        widest = std::max(widest, maskKeyRange(spec.kind, spec.bidirectional, window, m, length).size());
    return n * widest;
}

float PositionBias::rowScale(int m) const
{
    if (!m_spec.logn || m + 1 <= m_spec.context)
        return 1.0f;
    return static_cast<float>(std::log(m + 1.0) / std::log(static_cast<double>(m_spec.context)));
}

void PositionBias::fillView(int h, int length, int rowBegin, int rowEnd, float* out) const
{
    const float* table = distanceTable(h);
#pragma omp parallel for schedule(static)
    for (int m = rowBegin; m < rowEnd; ++m) {
        float* row = out + static_cast<size_t>(m - rowBegin) * length;
        const KeyRange keys = keyRange(m, length);
        const KeyRange sinks = sinkRange(m, length);
        const float scale = rowScale(m);
        std::fill(row, row + keys.begin, kMasked);
        for (int n = sinks.begin; n < sinks.end; ++n)
            row[n] = table[m - n] * scale;
        for (int n = keys.begin; n < keys.end; ++n)
            row[n] = table[m - n] * scale;
        std::fill(row + keys.end, row + length, kMasked);
    }
}

void applyRotary(const SchemeSpec& spec, float* x, int rows, int dim, int positionOffset, bool isKey)
{
    if (spec.kind != SchemeKind::Rope && spec.kind != SchemeKind::Xpos)
        return;
    if (dim % 2 != 0)
        throw InputError("rotary schemes need an even head dimension, got " + std::to_string(dim));
    if (rotaryMethodInfo(spec.scaling).remapsPositions)
        throw InputError("scaling " + rotaryMethodInfo(spec.scaling).name +
                         " remaps relative positions; it is not a rotation of each row alone");
    const RotaryScaling scaling = rotaryScaling(dim, spec.param("base"), spec.scaling, spec.scalingParams,
                                                scalingContext(spec), positionOffset + rows);
    const bool xpos = spec.kind == SchemeKind::Xpos;
    const double gamma = xpos ? spec.param("gamma") : 0.0;
    const double scaleBase = xpos ? spec.param("scale-base") : 1.0;
    const int pairs = dim / 2;
    const std::vector<double>& freq = scaling.thetaScaled;
    std::vector<double> logZeta(pairs);
    for (int i = 0; i < pairs; ++i)
        logZeta[i] = xpos ? std::log(xposZeta(i, dim, gamma)) : 0.0;
#pragma omp parallel for schedule(static) if (rows > 256)
    for (int row = 0; row < rows; ++row) {
        const double pos = positionOffset + row;
        float* v = x + static_cast<size_t>(row) * dim;
        for (int i = 0; i < pairs; ++i) {
            const double angle = pos * freq[i];
            double c = std::cos(angle) * scaling.attentionFactor, s = std::sin(angle) * scaling.attentionFactor;
            if (xpos) {
                const double scale = std::exp((isKey ? -pos : pos) / scaleBase * logZeta[i]);
                c *= scale;
                s *= scale;
            }
            const double x0 = v[2 * i], x1 = v[2 * i + 1];
            v[2 * i] = static_cast<float>(x0 * c - x1 * s);
            v[2 * i + 1] = static_cast<float>(x0 * s + x1 * c);
        }
    }
}

} // namespace plab
