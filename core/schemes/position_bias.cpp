// Per-distance tables, masks and the row modifiers (logn, logit-c) behind every bias view and attention kernel.
#include "schemes/position_bias.h"

#include "base/errors.h"
#include "base/limits.h"
#include "schemes/fox.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace plab {

double xposZeta(int i, int dim, double gamma)
{
    return (2.0 * i + gamma * dim) / ((1.0 + gamma) * dim);
}

std::vector<double> xposLogZeta(int dim, double gamma)
{
    std::vector<double> logZeta(dim / 2);
    for (int i = 0; i < dim / 2; ++i)
        logZeta[i] = std::log(xposZeta(i, dim, gamma));
    return logZeta;
}

namespace {

// The (H, 2L-1) table PositionBias reads, as the scheme builders below write it: value(h, r) for r = m - n in
// [-(L-1), L-1].
struct DistanceTables {
    float* values;
    size_t stride; // 2L - 1
    int heads;
    int length; // L

    float* head(int h) const { return values + static_cast<size_t>(h) * stride + (length - 1); }

    // Every head its own values.
    template <typename ValueOf>
    void fill(ValueOf&& valueOf) const
    {
        const int L = length;
        for (int h = 0; h < heads; ++h) {
            float* row = head(h);
#pragma omp parallel for schedule(static) if (L > 4096)
            for (int r = -(L - 1); r <= L - 1; ++r)
                row[r] = static_cast<float>(valueOf(h, r));
        }
    }

    // Head-independent schemes compute the table once and copy it to every head.
    template <typename ValueOf>
    void fillShared(ValueOf&& valueOf) const
    {
        const int L = length;
        float* first = head(0);
#pragma omp parallel for schedule(static) if (L > 1024)
        for (int r = -(L - 1); r <= L - 1; ++r)
            first[r] = static_cast<float>(valueOf(r));
        for (int h = 1; h < heads; ++h)
            std::copy(values, values + stride, values + static_cast<size_t>(h) * stride);
    }
};

// dot(p_m, p_n) - d/2 of the sinusoidal embedding at distance r, frequencies w (d/2 of them): the sinusoidal bias, and
// sandwich's before its per-head scale.
double centredSinusoidalDot(int r, const std::vector<double>& w, int d)
{
    return sinusoidalDot(r, w) - d / 2.0;
}

// The centred sinusoidal dot, the same for every head.
void sinusoidalTables(const SchemeSpec& spec, const DistanceTables& t)
{
    const int d = spec.intParam("dim");
    const std::vector<double> w = rotaryFrequencies(d, spec.param("base"));
    t.fillShared([&](int r) { return centredSinusoidalDot(r, w, d); });
}

// The sinusoidal dot of |r|, scaled per head by H / (8 (h+1)).
void sandwichTables(const SchemeSpec& spec, const DistanceTables& t)
{
    const int d = spec.intParam("dim");
    const int L = t.length, H = t.heads;
    const std::vector<double> w = rotaryFrequencies(d, spec.param("base"));
    std::vector<double> dots(L);
#pragma omp parallel for schedule(static) if (L > 1024)
    for (int r = 0; r < L; ++r)
        dots[r] = centredSinusoidalDot(r, w, d);
    t.fill([&](int h, int r) { return dots[std::abs(r)] * H / (8.0 * (h + 1)); });
}

// The probe score with the length-extension method applied: logit_scale * sum_i 2 cos(P(r) θ'_i) (xpos: times
// ζ_i^(P(r)/s)); methods that depend on the sequence length (dynamic-ntk) see the table's length.
void rotaryProbeTables(const SchemeSpec& spec, const DistanceTables& t)
{
    const int d = spec.intParam("dim");
    const RotaryScaling scaling = rotaryScaling(spec, t.length);
    const bool xpos = spec.kind == SchemeKind::Xpos;
    const std::vector<double> logZeta = xpos ? xposLogZeta(d, spec.param("gamma")) : std::vector<double>{};
    const double scaleBase = xpos ? spec.param("scale-base") : 1.0;
    t.fillShared([&](int r) { return rotaryProbe(scaling, r, logZeta, scaleBase); });
}

// The learned (or prior) value of the bucket of key - query, per head.
void t5Tables(const SchemeSpec& spec, const DistanceTables& t)
{
    const int nb = spec.intParam("num-buckets");
    const int maxd = spec.intParam("max-distance");
    const int H = t.heads;
    const std::vector<double> values =
        spec.t5Values.empty() ? t5DefaultValues(H, spec.bidirectional, nb, maxd) : spec.t5Values;
    t.fill(
        [&](int h, int r) { return values[static_cast<size_t>(t5Bucket(-r, spec.bidirectional, nb, maxd)) * H + h]; });
}

void alibiTables(const SchemeSpec& spec, const DistanceTables& t)
{
    const std::vector<double> slopes = alibiSlopes(t.heads);
    t.fill([&](int h, int r) { return -slopes[h] * (spec.bidirectional ? std::abs(r) : r); });
}

// -r1 |r|^r2 (power) or -r1 log(1 + r2 |r|) (log), with learned per-head r1, r2 when the spec has them.
void kerpleTables(const SchemeSpec& spec, const DistanceTables& t)
{
    const bool power = spec.kind == SchemeKind::KerplePower;
    t.fill([&](int h, int r) {
        const double r1 = spec.kerpleR1.empty() ? spec.param("r1") : spec.kerpleR1[h];
        const double r2 = spec.kerpleR2.empty() ? spec.param("r2") : spec.kerpleR2[h];
        const double dist = std::abs(r);
        return power ? -r1 * std::pow(dist, r2) : -r1 * std::log1p(r2 * dist);
    });
}

// Which builder writes a scheme's tables; none (zero everywhere visible) for none, learned, local and bca.
void fillDistanceTables(const SchemeSpec& spec, const DistanceTables& t)
{
    switch (spec.kind) {
    case SchemeKind::None:
    case SchemeKind::Learned:
    case SchemeKind::Local:
    case SchemeKind::Bca:
        return;
    case SchemeKind::Sinusoidal:
        return sinusoidalTables(spec, t);
    case SchemeKind::Sandwich:
        return sandwichTables(spec, t);
    case SchemeKind::Rope:
    case SchemeKind::Xpos:
        return rotaryProbeTables(spec, t);
    case SchemeKind::T5:
        return t5Tables(spec, t);
    case SchemeKind::Alibi:
        return alibiTables(spec, t);
    case SchemeKind::KerplePower:
    case SchemeKind::KerpleLog:
        return kerpleTables(spec, t);
    case SchemeKind::Fire:
        return;           // a function of (m, n), not of m - n alone: PositionBias::fire()
    case SchemeKind::Fox: // the untrained gate (w = 0); a model's per-input F replaces it (AttentionDims::logForget)
        return t.fillShared([&](int r) { return -foxPriorDecay(spec.param("gate-bias")) * r; });
    case SchemeKind::Cope:
        return; // a function of the input: core/schemes/cope.h, no table
    }
}

} // namespace

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
    } else
        m_sinks = spec.sinks;
    const int H = spec.heads;
    const int L = maxLength;
    checkMemoryEstimate(4.0 * H * (2.0 * L - 1),
                        "distance tables of " + std::to_string(H) + " heads x " + std::to_string(L) + " positions");
    m_tableStride = static_cast<size_t>(2 * L - 1);
    m_viewTable.assign(static_cast<size_t>(H) * m_tableStride, 0.0f);
    fillDistanceTables(spec, {m_viewTable.data(), m_tableStride, H, L});
    if (spec.kind == SchemeKind::Fire)
        m_fire.emplace(spec.fire.empty() ? fireInitialParams(H, spec.param("c")) : spec.fire, spec.param("threshold"));
    if (info.rotary && spec.scaling == RotaryMethod::SelfExtend)
        fillGroupedProbe();
}

void PositionBias::fillGroupedProbe()
{
    const RotaryScaling scaling = rotaryScaling(m_spec, m_maxLength);
    if (scaling.group <= 0)
        return;
    const bool xpos = m_spec.kind == SchemeKind::Xpos;
    const std::vector<double> logZeta =
        xpos ? xposLogZeta(m_spec.intParam("dim"), m_spec.param("gamma")) : std::vector<double>{};
    const double scaleBase = xpos ? m_spec.param("scale-base") : 1.0;
    // The largest P: query L - 1 against key 0.
    const int most = static_cast<int>(scaling.groupedQueryPosition(m_maxLength - 1) - scaling.groupedKeyPosition(0));
    m_groupedProbe.resize(static_cast<size_t>(most) + 1);
    for (int p = 0; p <= most; ++p)
        m_groupedProbe[p] = static_cast<float>(rotaryProbeAtPosition(scaling, p, logZeta, scaleBase));
    m_grouped = scaling;
}

KeyRange PositionBias::keyRange(int m, int length) const
{
    return clipToLayerMask(maskKeyRange(m_spec.kind, m_spec.bidirectional, m_window, m, length), m_spec.window,
                           m_spec.chunk, m);
}

KeyRange PositionBias::sinkRange(int m, int length) const
{
    if (m_sinks == 0)
        return {0, 0};
    return maskSinkRange(m_sinks, m_spec.bidirectional, keyRange(m, length), m, length);
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
    const int sinks = spec.info().hasWindow ? spec.intParam("sinks") : spec.sinks;
    for (int m = 0; m < length; ++m) {
        const KeyRange keys =
            clipToLayerMask(maskKeyRange(spec.kind, spec.bidirectional, window, m, length), spec.window, spec.chunk, m);
        pairs += keys.size() + maskSinkRange(sinks, spec.bidirectional, keys, m, length).size();
    }
    return pairs;
}

double nominalPairs(const SchemeSpec& spec, int length)
{
    checkPairCountArguments(spec, length);
    const double n = length;
    if (!spec.info().hasWindow && spec.window == 0 && spec.chunk == 0)
        return spec.bidirectional ? n * n : n * n / 2;
    const int window = spec.info().hasWindow ? spec.intParam("window") : 0;
    int widest = 0;
    for (int m = 0; m < length; ++m)
        widest = std::max(widest, clipToLayerMask(maskKeyRange(spec.kind, spec.bidirectional, window, m, length),
                                                  spec.window, spec.chunk, m)
                                      .size());
    return n * widest;
}

float PositionBias::rowScale(int m, int length) const
{
    const double scale = m_spec.temperature.factor(m) * logitLengthScale(m_spec.logitC, length, m_spec.context);
    if (!m_spec.logn || m + 1 <= m_spec.context)
        return static_cast<float>(scale);
    return static_cast<float>(scale * std::log(m + 1.0) / std::log(static_cast<double>(m_spec.context)));
}

void PositionBias::fillView(int h, int length, int rowBegin, int rowEnd, float* out) const
{
    const float* table = distanceTable(h);
#pragma omp parallel for schedule(static)
    for (int m = rowBegin; m < rowEnd; ++m) {
        float* row = out + static_cast<size_t>(m - rowBegin) * length;
        const KeyRange keys = keyRange(m, length);
        const KeyRange sinks = sinkRange(m, length);
        const float scale = rowScale(m, length);
        std::fill(row, row + keys.begin, kMasked);
        for (int n = sinks.begin; n < sinks.end; ++n)
            row[n] = table[m - n] * scale;
        for (int n = keys.begin; n < keys.end; ++n)
            row[n] = (m_fire ? fireValue(h, m, n) : isGrouped(m, n) ? groupedValue(m, n) : table[m - n]) * scale;
        std::fill(row + keys.end, row + length, kMasked);
        for (int n = 0; m_spec.softcap > 0 && n < length; ++n) // the cap after the row scale, as in the kernel
            if (row[n] != kMasked)
                row[n] = static_cast<float>(capped(row[n], m_spec.softcap));
    }
}

double attentionWork(const SchemeSpec& spec, const std::vector<int>& lengths, int headDim)
{
    if (headDim < 0)
        throw InputError("head-dim = " + std::to_string(headDim) + " is out of range; allowed: integers >= 0");
    const double dim = std::max(headDim, kMinWorkDim);
    double pairs = 0;
    for (int n : lengths)
        pairs += visiblePairs(spec, n);
    return 4.0 * dim * spec.heads * pairs;
}

} // namespace plab
