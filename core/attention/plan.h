// The kernel's plan of one call: its passes, block sizes, per-row masks, scales and bias tables, scratch and packing.
#pragma once

#include "attention/attention.h"
#include "attention/attention_internal.h"
#include "attention/tiles.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace plab::kernel {

// One pass of an attention call. Most schemes need one; ReRoPE, leaky ReRoPE and Self-Extend add a second pass for
// the keys past the window, whose rotary positions are remapped, and attention sinks a second pass for the sink keys.
// The passes' masks are disjoint intervals per row (each non-decreasing in m), so one softmax over their union is the
// merge of the passes' partial softmaxes, and nothing N x N is ever formed.
struct Pass {
    bool custom = false;            // false: the bias's own mask
    std::vector<int> begin, end;    // (N) custom mask intervals
    double qSlope = 1, qOffset = 0; // query m is rotated at qSlope * m + qOffset
    double kSlope = 1;              // key n at kSlope * n
    // Per-row rotary positions that replace the slope rule when not empty: Self-Extend's grouped positions, (N) each.
    std::vector<double> qPositions, kPositions;

    double queryPosition(int m) const { return qPositions.empty() ? qSlope * m + qOffset : qPositions[m]; }
    double keyPosition(int n) const { return kPositions.empty() ? kSlope * n : kPositions[n]; }
};

// The passes of a call at length N (see Pass).
std::vector<Pass> passesOf(const PositionBias& bias, int N);

// How an input row is rotated: not at all (v, dO), or as a query or as a key at the row's pass position (q, k of
// rotary schemes; a no-op for the others).
enum class Rotation { None, AsQuery, AsKey };

// cos/sin of every (position, pair) from the rotary frequency table (the method's scaled frequencies, XPOS's scales
// and attention factor folded in), so rotating (and its transpose) is a table walk: the rotary step of the kernel.
// Row m of the q tables is query m at its pass position, row n of the k tables key n at its pass position.
// Pair i turns input dims (2i, 2i + 1), or (i, i + pairs) under Hugging Face's rotate_half pairing, and is packed at
// (2i, 2i + 1) either way: q and k are permuted alike, so their products are unchanged; rotating back undoes it. Dims
// past the rotated ones (partial rotary) are copied.
struct RotaryTable {
    int pairs = 0;
    int dim = 0;                               // D
    bool half = false;                         // rotate_half pairing
    std::vector<float> cosQ, sinQ, cosK, sinK; // (N, pairs)

    RotaryTable() = default; // inactive: nothing turns
    RotaryTable(const detail::RotaryFrequencies& frequencies, const AttentionDims& dims, const Pass& pass)
    {
        if (!frequencies.active())
            return;
        const int length = dims.length;
        pairs = frequencies.pairs();
        dim = dims.headDim;
        half = dims.pairing == RotaryPairing::RotateHalf;
        const size_t count = static_cast<size_t>(length) * pairs;
        cosQ.resize(count);
        sinQ.resize(count);
        cosK.resize(count);
        sinK.resize(count);
        const bool zetas = std::any_of(frequencies.logZeta.begin(), frequencies.logZeta.end(),
                                       [](double z) { return z != 0.0; });
        if (zetas || !pass.qPositions.empty() || !pass.kPositions.empty()) {
            fillEachCell(frequencies, length, pass);
            return;
        }
        fillStepped(frequencies, length, pass);
    }

    bool active() const
    {
        return pairs > 0;
    }

    // out = R_m in (packed order) for row m of the query or the key table (`as`: not Rotation::None); in and out may
    // alias only under the interleaved pairing. Packing.
    void rotate(const float* in, float* out, int m, Rotation as) const
    {
        applyRow(in, out, m, as, 1.0f);
    }
    // out = R_m^T in, from packed order back to the input's: a gradient back to the unrotated inputs.
    void rotateBack(const float* in, float* out, int m, Rotation as) const
    {
        applyRow(in, out, m, as, -1.0f);
    }

private:
    // Rows between two libm anchors of the stepped fill. Each step is one complex multiply in double, about 1e-16 of
    // rounding, so 32 steps stay eight orders of magnitude below float's 6e-8.
    static constexpr int kAnchorRows = 32;

    // Every cell by its own rotation (XPOS's per-position scales, Self-Extend's listed positions).
    void fillEachCell(const detail::RotaryFrequencies& frequencies, int length, const Pass& pass)
    {
#pragma omp parallel for schedule(static) if (length > 256)
        for (int m = 0; m < length; ++m) {
            const double qPos = pass.queryPosition(m), kPos = pass.keyPosition(m);
            for (int i = 0; i < pairs; ++i) {
                const size_t at = static_cast<size_t>(m) * pairs + i;
                double c, s;
                frequencies.rotation(qPos, i, false, c, s);
                cosQ[at] = static_cast<float>(c);
                sinQ[at] = static_cast<float>(s);
                frequencies.rotation(kPos, i, true, c, s);
                cosK[at] = static_cast<float>(c);
                sinK[at] = static_cast<float>(s);
            }
        }
    }

    // Positions on the slope rule without XPOS scales: row m + 1 is row m turned by the fixed angle slope * theta_i,
    // one complex multiply instead of a sine and a cosine per cell (the libm calls were 3% of a causal rope forward at
    // N = 4096, and more of a windowed one, whose work grows as N W but its table as N). Re-anchored on libm every
    // kAnchorRows rows and where a thread's rows begin. Where keys sit where the queries do (no offset, the same
    // slope), the key table is the query table: the attention factor scales both and nothing else differs.
    void fillStepped(const detail::RotaryFrequencies& frequencies, int length, const Pass& pass)
    {
        const bool keysAsQueries = pass.qOffset == 0.0 && pass.qSlope == pass.kSlope;
        const double factor = frequencies.attentionFactor;
        std::vector<double> stepQ(2 * pairs), stepK(2 * pairs); // (pairs, 2): cos and sin of slope * theta_i
        for (int i = 0; i < pairs; ++i) {
            stepQ[2 * i] = std::cos(pass.qSlope * frequencies.theta[i]);
            stepQ[2 * i + 1] = std::sin(pass.qSlope * frequencies.theta[i]);
            stepK[2 * i] = std::cos(pass.kSlope * frequencies.theta[i]);
            stepK[2 * i + 1] = std::sin(pass.kSlope * frequencies.theta[i]);
        }
        // One table's rows [first, end): the unscaled rotation of each pair kept in double from row to row.
        auto fill = [&](std::vector<float>& cosines, std::vector<float>& sines, const std::vector<double>& step,
                        bool queries, std::vector<double>& turn, int m) {
            const bool anchor = m % kAnchorRows == 0 || turn.empty();
            turn.resize(2 * pairs);
            const double position = queries ? pass.queryPosition(m) : pass.keyPosition(m);
            for (int i = 0; i < pairs; ++i) {
                double& c = turn[2 * i];
                double& s = turn[2 * i + 1];
                if (anchor) {
                    c = std::cos(position * frequencies.theta[i]);
                    s = std::sin(position * frequencies.theta[i]);
                } else {
                    const double c0 = c, s0 = s, dc = step[2 * i], ds = step[2 * i + 1];
                    c = c0 * dc - s0 * ds;
                    s = s0 * dc + c0 * ds;
                }
                const size_t at = static_cast<size_t>(m) * pairs + i;
                cosines[at] = static_cast<float>(c * factor);
                sines[at] = static_cast<float>(s * factor);
            }
        };
#pragma omp parallel if (length > 256)
        {
            std::vector<double> turnQ, turnK; // empty until a thread's first row: its rows start on an anchor
#pragma omp for schedule(static)
            for (int m = 0; m < length; ++m) {
                fill(cosQ, sinQ, stepQ, true, turnQ, m);
                if (!keysAsQueries)
                    fill(cosK, sinK, stepK, false, turnK, m);
            }
        }
        if (keysAsQueries) {
            cosK = cosQ;
            sinK = sinQ;
        }
    }

    // sign +1: R_m, input order to packed; -1: R_m^T, packed order to input.
    void applyRow(const float* in, float* out, int m, Rotation as, float sign) const
    {
        const bool isKey = as == Rotation::AsKey;
        const float* c = (isKey ? cosK.data() : cosQ.data()) + static_cast<size_t>(m) * pairs;
        const float* s = (isKey ? sinK.data() : sinQ.data()) + static_cast<size_t>(m) * pairs;
        if (!half) {
            for (int i = 0; i < pairs; ++i) {
                const float x0 = in[2 * i], x1 = in[2 * i + 1];
                out[2 * i] = x0 * c[i] - sign * x1 * s[i];
                out[2 * i + 1] = sign * x0 * s[i] + x1 * c[i];
            }
        } else if (sign > 0) {
            for (int i = 0; i < pairs; ++i) {
                const float x0 = in[i], x1 = in[i + pairs];
                out[2 * i] = x0 * c[i] - x1 * s[i];
                out[2 * i + 1] = x0 * s[i] + x1 * c[i];
            }
        } else {
            for (int i = 0; i < pairs; ++i) {
                const float x0 = in[2 * i], x1 = in[2 * i + 1];
                out[i] = x0 * c[i] + x1 * s[i];
                out[i + pairs] = -x0 * s[i] + x1 * c[i];
            }
        }
        std::copy(in + 2 * pairs, in + dim, out + 2 * pairs);
    }
};

constexpr int kQueryBlock = 64;   // query rows per work item
constexpr int kKeyBlock = 320;    // key columns per forward tile: a W = 256 window block (W + 64 keys) in one tile
constexpr int kBackKeyBlock = 64; // key rows per backward work item (pass 1)
// From this many (batch, head) pairs on, forward and backward give each head to one thread (the backward then runs
// single-pass, FlashAttention-2 style); below it, heads are split into blocks shared by all threads (the backward
// in two passes). A constant, so results never depend on the thread count.
constexpr int kHeadParallelMin = 4;
// Columns of slack in the head-parallel forward's sliding K^T window (see attentionForward): a slide copies the
// window's live columns once per this many columns of progress.
constexpr int kKeyWindowSlack = 512;
// Below this many floating-point operations (4 D per visible query-key pair, all heads) a call runs on the calling
// thread: waking a team costs more than the work (a model step on short sequences calls attention per layer). The
// results do not change, since they never depend on the thread count.
constexpr double kParallelMinFlops = 4e6;

// Everything per call that does not depend on the head: sizes, per-row masks and scales, bias tables.
struct Plan {
    const PositionBias& bias;
    AttentionDims dims;
    int N = 0, D = 0;
    int Dp = 0;            // head dim padded to 16
    int keysPadded = 0;    // N padded to 16: tiles of 16 keys may run past N into zero padding
    int queriesPadded = 0; // rows of packed Q/dO (N: query tiles never run past N)
    // Row stride of the transposed packs K^T, V^T: one vector more than keysPadded, so that walking down a column
    // block does not hit the same L1 set on every row when N is a power of two.
    int ldT = 0;
    float invSqrtD = 1;
    RotaryTable ownRotary;     // built by this plan, unless a caller's table (RotaryTableCache) is shared
    const RotaryTable& rotary; // the table the passes read: ownRotary or the shared one
    bool useBias = false;
    bool useScale = false;
    float softcap = 0;                 // the scores' soft cap c (SchemeSpec::softcap); 0: none
    std::vector<int> rowBegin, rowEnd; // (N): visible keys [rowBegin[m], rowEnd[m]) of row m
    std::vector<float> rowScale;       // (N): the row modifiers' factor of row m (logn, logit-c)
    size_t biasStride = 0;
    std::vector<float> reversedBias; // (H, biasStride): [h][n - m + N - 1] = b_h(m, n), 0 past the table
    double visiblePairs = 0;         // sum over rows of the visible keys, for one head
    // FIRE (bias.fire()): its bias depends on the row as well as on m - n, so tiles read it from fireRow, never from
    // reversedBias. Rows m < fireDistanceRows (m below the threshold T) share one function of m - n, kept reversed in
    // fireNear; later rows evaluate the MLP on x = ψ(m - n) / Z(m) per tile. Float copies of the MLP.
    const FireFunction* fire = nullptr;
    int fireDistanceRows = 0;
    std::vector<float> firePsi;     // (biasStride): [n - m + N - 1] = ψ(m - n) for 0 <= m - n < N, else 0
    std::vector<float> fireInvNorm; // (N): 1 / Z(m), Z(m) = ψ(max(m, T)) + eps
    std::vector<float> fireNear;    // (H, biasStride): reversed as reversedBias, the rows below T
    std::vector<float> fireW1, fireB1, fireW2, fireB2;
    std::vector<float> fireDPsi; // (biasStride), reversed as firePsi: d ψ(m - n) / d c
    std::vector<float> fireDZ;   // (N): d Z(m) / d c, divided by Z(m)
    // FoX with this input's gates (dims.logForget): row m of slice bh gets F_m - F_n at key n, F the slice's (N)
    // cumulative log gates, each cell subtracted in double and then rounded (foxRow), so rows far into a long sequence
    // keep float's precision near their own position however large |F| grows. Replaces the scheme's table.
    bool fox = false;
    // SSMax: row m's factor on head h is rowScale[m] s_h ln(n_m), n_m the keys of the whole row (every pass's): one
    // table per head, which rowScales(h) returns instead of rowScale.
    std::vector<float> headRowScale; // (H, N) with ssmax, else empty

    // `frequencies`: the rotary step's table; empty when q and k must not rotate. The pass's mask and rotary positions
    // replace the bias's own when the pass is custom.
    Plan(const PositionBias& b, const AttentionDims& d, const detail::RotaryFrequencies& frequencies, const Pass& pass)
        : bias(b), dims(d), N(d.length), D(d.headDim), ownRotary(frequencies, d, pass), rotary(ownRotary)
    {
        prepare(pass);
    }
    // The same with the rotary table already built for this bias, dims and pass (RotaryTableCache).
    Plan(const PositionBias& b, const AttentionDims& d, const RotaryTable& shared, const Pass& pass)
        : bias(b), dims(d), N(d.length), D(d.headDim), rotary(shared)
    {
        prepare(pass);
    }
    Plan(const Plan&) = delete;
    Plan& operator=(const Plan&) = delete;

    // Everything but the rotary table: sizes, per-row masks and scales, bias tables.
    void prepare(const Pass& pass)
    {
        const PositionBias& b = bias;
        const AttentionDims& d = dims;
        Dp = roundUp(D, kLanes);
        keysPadded = roundUp(N, kLanes);
        ldT = keysPadded + kLanes;
        queriesPadded = N;
        invSqrtD = static_cast<float>(1.0 / std::sqrt(static_cast<double>(D)));
        softcap = bias.softcap();
        rowBegin.assign(queriesPadded, 0);
        rowEnd.assign(queriesPadded, 0);
        rowScale.assign(queriesPadded, 1.0f);
        for (int m = 0; m < N; ++m) {
            const KeyRange keys = pass.custom ? KeyRange{pass.begin[m], pass.end[m]} : bias.keyRange(m, N);
            rowBegin[m] = keys.begin;
            rowEnd[m] = keys.end;
            visiblePairs += keys.end - keys.begin;
            rowScale[m] = bias.rowScale(m, N);
            useScale = useScale || rowScale[m] != 1.0f;
        }
        if (b.spec().ssmax)
            prepareSsmax();
        fox = d.logForget != nullptr;
        if (bias.fire())
            prepareFire();
        else if (bias.hasAdditive() && !fox) {
            const int H = d.heads;
            biasStride = static_cast<size_t>(N - 1 + keysPadded + kLanes);
            reversedBias.assign(H * biasStride, 0.0f);
            for (int h = 0; h < H; ++h) {
                const float* table = bias.distanceTable(h);
                float* rev = reversedBias.data() + h * biasStride;
                for (int t = -(N - 1); t <= N - 1; ++t) {
                    rev[t + N - 1] = table[-t];
                    useBias = useBias || table[-t] != 0.0f; // local and bca only mask
                }
            }
        }
    }

    // Whether the bias depends on the row as well as on m - n (FIRE, FoX): tiles then read it from rowBias.
    bool rowBiased() const { return fire || fox; }
    // FoX's cumulative log gates of (batch, head) slice bh, or null without them.
    const double* logForgetOf(int bh) const { return fox ? dims.logForget + static_cast<size_t>(bh) * N : nullptr; }
    // The row-dependent bias of row m at key columns [c, c + w) into out: FoX's from F (the slice's logForgetOf),
    // else FIRE's of head h.
    void rowBias(int h, const double* F, int m, int c, int w, float* out) const
    {
        if (F)
            foxRow(F, m, c, w, out);
        else
            fireRow(h, m, c, w, out);
    }
    // FoX's bias F_m - F_n of row m at key columns n in [c, c + w), 0 at n > m or n >= N (masked anyway).
    void foxRow(const double* F, int m, int c, int w, float* out) const
    {
        const int visible = std::clamp(std::min(m + 1, N) - c, 0, w);
        const double Fm = F[m];
        for (int j = 0; j < visible; ++j)
            out[j] = static_cast<float>(Fm - F[c + j]);
        std::fill(out + visible, out + w, 0.0f);
    }
    // FIRE's bias of row m at key columns [c, c + w), w a multiple of 16, into out (0 at n > m: masked anyway).
    void fireRow(int h, int m, int c, int w, float* out) const;
    // The MLP of head h on x = psi[j] * invNorm, j < w (a multiple of 16): the one float evaluation of fireRow.
    void fireLanes(int h, const float* psi, float invNorm, int w, float* out) const;
    // Adds to `grad` the gradient of sum_n G[n - n0] b_h(m, n) over keys [n0, n1) of a row m >= fireDistanceRows (past
    // T, where the threshold has no gradient): FireFunction::accumulate in float vectors, summed per row in double.
    void fireGradientRow(int h, int m, int n0, int n1, const float* G, FireParams& grad) const;
    // Fills the fire* fields from bias.fire() (the constructor's FIRE step).
    void prepareFire();
    // Fills headRowScale (the constructor's SSMax step).
    void prepareSsmax();
    // The row factors of head h: rowScale, or SSMax's per-head table.
    const float* rowScales(int h) const
    {
        return headRowScale.empty() ? rowScale.data() : headRowScale.data() + static_cast<size_t>(h) * N;
    }

    // The key columns the tiles of the query block starting at row m0 read: from its first row's first visible key
    // rounded down to a lane, to its last row's end rounded up (masks are intervals whose ends never decrease in m).
    int blockKeyBegin(int m0) const { return rowBegin[m0] / kLanes * kLanes; }
    int blockColumnEnd(int m0) const { return roundUp(std::max(rowEnd[std::min(N, m0 + kQueryBlock) - 1], 1), kLanes); }

    // Whether a call over `heads` (batch x head) pairs is worth a thread team (see kParallelMinFlops).
    bool worthThreads(int heads) const { return 4.0 * D * visiblePairs * heads >= kParallelMinFlops; }

    // The mask/bias step (scoreLanes) of the backward's and the probabilities' tiles, for row m over columns
    // [c, c + w): from the raw products S = q . k to the scores in place.
    // qkScale is 1/sqrt(D) when q was not packed pre-scaled, else 1. Returns the row maximum (-inf when nothing in
    // the tile is visible).
    // rowBias (fire, fox: rowBias's output for these columns) replaces the distance table.
    float scoreRow(float* S, int h, int m, int c, int w, float qkScale = 1.0f, const float* rowBias = nullptr) const
    {
        const int lo = std::max(rowBegin[m], c) - c;
        const int hi = std::min(rowEnd[m], c + w) - c;
        if (lo >= hi) {
            std::fill(S, S + w, PositionBias::kMasked);
            return PositionBias::kMasked;
        }
        const float* rev = rowBias   ? rowBias
                           : useBias ? reversedBias.data() + h * biasStride + (c - m + N - 1)
                                     : nullptr;
        const float* scale = useScale ? rowScales(h) + m : nullptr;
        Vec best = splat(PositionBias::kMasked);
        for (int j = 0; j < w; j += kLanes) {
            const Vec s = scoreLanes(load(S + j), qkScale, rev ? rev + j : nullptr, scale, lo - j, hi - j, softcap);
            store(S + j, s);
            best = vmax(best, s);
        }
        return horizontalMax(best);
    }
};

// Per-thread scratch tiles.
struct Scratch {
    AlignedFloats scores;                      // (kQueryBlock, kKeyBlock): scores, then probabilities
    AlignedFloats dscores;                     // (kQueryBlock, kKeyBlock): backward dP, then dS
    AlignedFloats acc;                         // (kQueryBlock, Dp): forward O, backward dQ
    AlignedFloats acc2;                        // (kBackKeyBlock, Dp): backward dK
    AlignedFloats acc3;                        // (kBackKeyBlock, Dp): backward dV
    std::vector<float> rowMax, rowSum, factor; // (kQueryBlock): online softmax state, rescale factor of this tile
    std::vector<double> rowWeighted;           // (kQueryBlock): sum p (s - max), for the entropy
    AlignedFloats rowBest;                     // (kQueryBlock, 16): per-lane maximum of a row's scores in a tile
    AlignedFloats fireBias;                    // FIRE's or FoX's bias tile (kQueryBlock, kKeyBlock), sized on first use

    explicit Scratch(int Dp)
        : scores(kQueryBlock * kKeyBlock), dscores(kQueryBlock * kKeyBlock), acc(kQueryBlock * Dp),
          acc2(kBackKeyBlock * Dp), acc3(kBackKeyBlock * Dp), rowMax(kQueryBlock), rowSum(kQueryBlock),
          factor(kQueryBlock), rowWeighted(kQueryBlock), rowBest(kQueryBlock * kLanes)
    {
    }
};

// The row-dependent bias tile (FIRE, FoX) of a thread, sized on first use (other schemes never allocate it).
inline float* fireTile(Scratch& sc)
{
    if (sc.fireBias.empty())
        sc.fireBias.resize(static_cast<size_t>(kQueryBlock) * kKeyBlock);
    return sc.fireBias.data();
}

// How many (batch, head) pairs to pack at once so the packed copies stay within `budget` bytes.
int groupSize(const AttentionDims& dims, size_t bytesPerHead, size_t budget);

// Packs rows [0, N) of x (N, D) as (rows, Dp) zero-padded, rotated for rotary schemes and times `scale`.
void packRows(const Plan& plan, const float* x, float* out, Rotation rotation, float scale);

// Transposed keys (Dp rows): column n lives at data[d * ld + (n - base)]. A whole-head pack has base 0 and ld =
// plan.ldT; the head-parallel forward keeps only a sliding window of columns when a mask's keys leave (local, bca).
struct KeyColumns {
    const float* data = nullptr;
    size_t ld = 0;
    int base = 0;
    const float* at(int column) const { return data + (column - base); }
};

// Packs rows [n0, n1) of x (N, D) transposed into columns n - base of `out` (Dp rows of stride ld), rotated for
// rotary schemes.
void packColumns(const Plan& plan, const float* x, float* out, size_t ld, int base, Rotation rotation, int n0, int n1);

// Packs all of x (N, D) transposed into (Dp, keysPadded) with row stride ldT, rotated for rotary schemes.
void packTransposed(const Plan& plan, const float* x, float* out, Rotation rotation);

// Bands of key columns [c, c + w) for the register tiles of query rows [m0, m0 + R): the columns any of a tile's rows
// sees, 16-aligned (rowBegin and rowEnd never decrease with m). For products over keys: QK^T, P V, dS K.
inline void queryBands(const Plan& plan, int m0, int R, int c, int w, ColumnBand* bands)
{
    for (int r = 0; r < R; r += kRowTile) {
        const int last = m0 + std::min(R, r + kRowTile) - 1;
        const int begin = std::max(plan.rowBegin[m0 + r] - c, 0) / kLanes * kLanes;
        const int end = std::min(w, roundUp(std::max(plan.rowEnd[last] - c, 0), kLanes));
        bands[r / kRowTile] = {begin, std::max(begin, end)};
    }
}

// Bands of query rows [q0, q0 + R) for the register tiles of key rows [n0, n0 + wk): the queries (relative to q0)
// that see any key of a tile. For products over queries: P^T dO, dS^T Q.
inline void keyBands(const Plan& plan, int n0, int wk, int q0, int R, ColumnBand* bands)
{
    const int* begin = plan.rowBegin.data() + q0;
    const int* end = plan.rowEnd.data() + q0;
    for (int r = 0; r < wk; r += kRowTile) {
        const int a = n0 + r, b = n0 + std::min(wk, r + kRowTile);
        const int first = static_cast<int>(std::partition_point(end, end + R, [&](int e) { return e <= a; }) - end);
        const int last = static_cast<int>(std::partition_point(begin, begin + R, [&](int x) { return x < b; }) - begin);
        bands[r / kRowTile] = {first, std::max(first, last)};
    }
}

constexpr int kQueryTiles = (kQueryBlock + kRowTile - 1) / kRowTile; // register tiles in a query block
constexpr int kKeyTiles = (kBackKeyBlock + kRowTile - 1) / kRowTile; // register tiles in a backward key block

} // namespace plab::kernel
