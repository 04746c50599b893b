// PositionBias: a scheme's bias, probe view and mask for any (head, m, n), computed on demand from per-distance tables.
#pragma once

#include "schemes/rotary_scaling.h"
#include "schemes/schemes.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

namespace plab {

// The keys a query may see form one interval for every scheme: [begin, end).
struct KeyRange {
    int begin = 0;
    int end = 0;
    int size() const { return end > begin ? end - begin : 0; }
};

// The mask of every scheme as intervals: keys visible to query m in a sequence of `length` (causal: [0, m];
// bidirectional: all; local: the window; bca: own block of window/2 and the previous one). `window` is the
// local/bca window (ignored otherwise). PositionBias::keyRange and visiblePairs() both read it.
inline KeyRange maskKeyRange(SchemeKind kind, bool bidirectional, int window, int m, int length)
{
    switch (kind) {
    case SchemeKind::Local:
        if (bidirectional)
            return {m - window + 1 > 0 ? m - window + 1 : 0, m + window < length ? m + window : length};
        return {m - window + 1 > 0 ? m - window + 1 : 0, m + 1};
    case SchemeKind::Bca: {
        const int block = window / 2;
        const int begin = (m / block - 1) * block;
        return {begin > 0 ? begin : 0, m + 1};
    }
    default:
        return bidirectional ? KeyRange{0, length} : KeyRange{0, m + 1};
    }
}

// The layer-type modifiers' mask (SchemeSpec::window W, ::chunk C; 0: off) on a scheme's keys of query m: the interval
// `keys` cut to [m - W + 1, m] and to m's chunk [⌊m/C⌋ C, m]. Both cuts' ends never decrease in m, so the result stays
// an interval whose ends never decrease (the kernel's block skipping rests on that); an empty cut is [begin, begin).
// The one home of the window and chunk rule: PositionBias::keyRange, the kernel's passes and visiblePairs read it.
inline KeyRange clipToLayerMask(KeyRange keys, int window, int chunk, int m)
{
    int begin = keys.begin, end = keys.end;
    if (window > 0)
        begin = std::max(begin, m - window + 1);
    if (chunk > 0)
        begin = std::max(begin, m / chunk * chunk);
    if (window > 0 || chunk > 0)
        end = std::min(end, m + 1);
    return {begin, std::max(begin, end)};
}

// Attention sinks (local, bca with sinks = S; any causal scheme with the sinks modifier beside a window or chunk): keys
// [0, min(S, keys.begin)) stay visible to query m as well, and only keys n <= m when causal; empty without sinks.
// `keys` is maskKeyRange's interval for m, so the two are disjoint. The one home of the sink rule:
// PositionBias::sinkRange and visiblePairs() read it.
inline KeyRange maskSinkRange(int sinks, bool bidirectional, KeyRange keys, int m, int length)
{
    const int end = std::min({sinks, keys.begin, bidirectional ? length : m + 1});
    return {0, end > 0 ? end : 0};
}

// Every bias of the design table depends on the relative distance r = m - n only, plus a mask that is an
// interval of keys per query. PositionBias stores, per head, one table over r in [-(L-1), L-1] (O(H L)
// memory, never an L x L matrix), so kernels and views read entries on demand.
class PositionBias {
public:
    // Prepares tables for sequences of up to `maxLength` positions. Throws InputError on a bad spec or length.
    PositionBias(const SchemeSpec& spec, int maxLength);

    const SchemeSpec& spec() const { return m_spec; }
    int maxLength() const { return m_maxLength; }
    int heads() const { return m_spec.heads; }

    // Keys visible to query m in a sequence of `length` (<= maxLength) positions.
    KeyRange keyRange(int m, int length) const;
    // Attention sinks visible to query m besides keyRange (maskSinkRange); empty for schemes without sinks.
    KeyRange sinkRange(int m, int length) const;
    // The sink count: local's and bca's parameter, else the sinks modifier; 0 without sinks.
    int sinks() const { return m_sinks; }
    // The keys the window and chunk modifiers leave to query m of any pass (clipToLayerMask of [0, length)).
    KeyRange layerMaskRange(int m, int length) const
    {
        return clipToLayerMask({0, length}, m_spec.window, m_spec.chunk, m);
    }
    // The soft cap c of the scores (SchemeSpec::softcap; 0: none) and the one scalar evaluation of it, c tanh(s/c).
    float softcap() const { return static_cast<float>(m_spec.softcap); }
    static double capped(double score, double cap) { return cap > 0 ? cap * std::tanh(score / cap) : score; }
    bool visible(int m, int n, int length) const
    {
        const KeyRange r = keyRange(m, length);
        const KeyRange s = sinkRange(m, length);
        return (n >= r.begin && n < r.end) || (n >= s.begin && n < s.end);
    }

    // True when the scheme adds a bias to the attention scores (t5, alibi, kerple, sandwich; local/bca add 0).
    bool hasAdditive() const { return m_hasAdditive; }
    // Additive score bias of head h at (m, n), ignoring the mask (0 for rotary/absolute schemes and `none`).
    float additive(int h, int m, int n) const
    {
        if (m_fire)
            return fireValue(h, m, n);
        return m_hasAdditive ? m_viewTable[static_cast<size_t>(h) * m_tableStride + (m - n + m_maxLength - 1)] : 0.0f;
    }
    // FIRE's bias function (learned or its prior), null for other schemes. Its bias depends on the row m as well as on
    // m - n, so the distance tables below do not hold it: read additive(), view() or the function itself.
    const FireFunction* fire() const { return m_fire ? &*m_fire : nullptr; }
    // Pointer to head h's table at distance r = 0; valid for r in [-(maxLength-1), maxLength-1]. Not for fire.
    const float* distanceTable(int h) const
    {
        return m_viewTable.data() + static_cast<size_t>(h) * m_tableStride + (m_maxLength - 1);
    }

    // What the bias heatmap shows, ignoring the mask: the additive bias, the rotary probe score
    // (q = k = all-ones, no 1/sqrt(d)), or dot(p_m, p_n) - d/2 for sinusoidal.
    float view(int h, int m, int n) const
    {
        if (m_fire)
            return fireValue(h, m, n);
        if (isGrouped(m, n))
            return groupedValue(m, n);
        return m_viewTable[static_cast<size_t>(h) * m_tableStride + (m - n + m_maxLength - 1)];
    }

    // The row modifiers' factor for row m of a sequence of `length` positions: logn's log(m+1)/log(context) past the
    // context (else 1), times Llama 4's temperature (AttentionTemperature::factor), times logit-c's
    // logitLengthScale of the sequence.
    float rowScale(int m, int length) const;

    // Fills out[(m - rowBegin) * length + n] for m in [rowBegin, rowEnd), n in [0, length) with the
    // masked view (times rowScale), masked cells -inf. Parallel over rows with OpenMP.
    void fillView(int h, int length, int rowBegin, int rowEnd, float* out) const;

    static constexpr float kMasked = -std::numeric_limits<float>::infinity();

private:
    void fillGroupedProbe(); // Self-Extend's exact view (m_grouped, m_groupedProbe)
    // Self-Extend past its window: P(m, n) = ⌊m/G⌋ - ⌊n/G⌋ + w - ⌊w/G⌋ depends on m, not on m - n alone, so the view
    // reads the probe at that exact P (m_groupedProbe, by integer P), as the kernel's grouped pass computes it.
    bool isGrouped(int m, int n) const { return m_grouped && n <= m && m - n >= m_grouped->window; }
    float groupedValue(int m, int n) const
    {
        const double p = m_grouped->groupedQueryPosition(m) - m_grouped->groupedKeyPosition(n); // a whole number
        return m_groupedProbe[static_cast<size_t>(p)];
    }
    // FIRE at a causal pair; 0 at n > m, where it is never visible.
    float fireValue(int h, int m, int n) const { return n <= m ? static_cast<float>(m_fire->bias(h, m, n)) : 0.0f; }

    SchemeSpec m_spec;
    std::optional<FireFunction> m_fire;
    int m_maxLength = 0;
    size_t m_tableStride = 0; // 2 * maxLength - 1
    bool m_hasAdditive = false;
    int m_window = 0;
    int m_sinks = 0;
    std::vector<float> m_viewTable;         // (H, 2L-1)
    std::optional<RotaryScaling> m_grouped; // Self-Extend's scaling (its G and w); empty for every other scheme
    std::vector<float> m_groupedProbe;      // the probe at each integer P up to the largest P(m, n)
};

// Largest length any view or kernel accepts; beyond it memory estimates are refused before allocation.
constexpr int kMaxLength = 1 << 20;

// Visible (query, key) pairs of one sequence of `length` under the spec's mask: the sum of maskKeyRange sizes over
// the rows (no tables built, O(length)). Causal n(n+1)/2, bidirectional n^2, a window about n W.
double visiblePairs(const SchemeSpec& spec, int length);
// Attention work of one pass over sequences of every length in `lengths` with the spec's heads and mask, head dim D.
double attentionWork(const SchemeSpec& spec, const std::vector<int>& lengths, int headDim);

// The nominal pair count benchmarks quote (issue 3's FLOP convention, 4 D per pair and head): length^2 / 2 causal,
// length^2 bidirectional, and for a window length * K with K the most keys any row sees (W for causal local), as
// if the first rows saw as many. visiblePairs() is the work actually done.
double nominalPairs(const SchemeSpec& spec, int length);

// XPOS per-frequency decay ζ_i = (2i + γd)/((1+γ)d).
double xposZeta(int i, int dim, double gamma);
// log ζ_i for every pair i < dim/2: the decay table the probe view and the kernels' rotation read.
std::vector<double> xposLogZeta(int dim, double gamma);

} // namespace plab
