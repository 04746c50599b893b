// Fused multi-head attention with on-the-fly positional bias: forward, probabilities/entropy, backward.
#include "attention/attention.h"

#include "attention/attention_internal.h"
#include "base/errors.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#if defined(__AVX__)
#include <immintrin.h>
#endif

namespace plab {

namespace {

using detail::isRotary;

// One pass of an attention call. Most schemes need one; ReRoPE (and leaky ReRoPE) add a second pass for the keys past
// the window, whose rotary positions are remapped, and attention sinks a second pass for the sink keys. The passes'
// masks are disjoint intervals per row (each non-decreasing in m), so one softmax over their union is the merge of
// the passes' partial softmaxes, and nothing N x N is ever formed.
struct Pass {
    bool custom = false;            // false: the bias's own mask
    std::vector<int> begin, end;    // (N) custom mask intervals
    double qSlope = 1, qOffset = 0; // query m is rotated at qSlope * m + qOffset
    double kSlope = 1;              // key n at kSlope * n
};

// The passes of a call at length N (see Pass).
std::vector<Pass> passesOf(const PositionBias& bias, int N)
{
    const SchemeSpec& spec = bias.spec();
    std::vector<Pass> passes(1);
    if (spec.info().rotary && rotaryMethodInfo(spec.scaling).remapsPositions) {
        const RotaryScaling scaling = rotaryScaling(spec, N);
        const int w = scaling.window;
        Pass near, far;
        near.custom = far.custom = true;
        near.begin.resize(N);
        near.end.resize(N);
        far.begin.assign(N, 0);
        far.end.resize(N);
        for (int m = 0; m < N; ++m) {
            const int split = std::max(0, m - w + 1); // keys n < split are at distance >= w
            near.begin[m] = split;
            near.end[m] = m + 1;
            far.end[m] = split;
        }
        // P = w + (m - n - w)/k = (w + (m - w)/k) - n/k; rerope (k = inf): q at w, k at 0.
        const bool leaky = std::isfinite(scaling.leak);
        far.qSlope = leaky ? 1.0 / scaling.leak : 0.0;
        far.qOffset = leaky ? w - w / scaling.leak : w;
        far.kSlope = leaky ? 1.0 / scaling.leak : 0.0;
        passes = {std::move(near), std::move(far)};
    } else if (spec.info().hasWindow && spec.intParam("sinks") > 0) {
        const int sinks = spec.intParam("sinks");
        Pass sinkPass;
        sinkPass.custom = true;
        sinkPass.begin.assign(N, 0);
        sinkPass.end.resize(N);
        for (int m = 0; m < N; ++m)
            sinkPass.end[m] = std::max(0, std::min({sinks, bias.keyRange(m, N).begin, spec.bidirectional ? N : m + 1}));
        passes.push_back(std::move(sinkPass));
    }
    return passes;
}

// cos/sin of every (position, pair) from the rotary frequency table (the method's scaled frequencies, XPOS's scales
// and attention factor folded in), so rotating (and its transpose) is a table walk: the rotary step of the kernel.
// Row m of the q tables is query m at its pass position, row n of the k tables key n at its pass position.
struct RotaryTable {
    int pairs = 0;
    std::vector<float> cosQ, sinQ, cosK, sinK; // (N, D/2)

    RotaryTable(const detail::RotaryFrequencies& frequencies, int length, const Pass& pass)
    {
        if (!frequencies.active())
            return;
        pairs = frequencies.pairs();
        const size_t count = static_cast<size_t>(length) * pairs;
        cosQ.resize(count);
        sinQ.resize(count);
        cosK.resize(count);
        sinK.resize(count);
#pragma omp parallel for schedule(static) if (length > 256)
        for (int m = 0; m < length; ++m) {
            const double qPos = pass.qSlope * m + pass.qOffset, kPos = pass.kSlope * m;
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

    bool active() const
    {
        return pairs > 0;
    }

    // out = R_m in (transpose: R_m^T in) for the row of position m; in and out may alias.
    void applyRow(const float* in, float* out, int m, bool isKey, bool transpose) const
    {
        const float* c = (isKey ? cosK.data() : cosQ.data()) + static_cast<size_t>(m) * pairs;
        const float* s = (isKey ? sinK.data() : sinQ.data()) + static_cast<size_t>(m) * pairs;
        const float sign = transpose ? -1.0f : 1.0f;
        for (int i = 0; i < pairs; ++i) {
            const float x0 = in[2 * i], x1 = in[2 * i + 1];
            out[2 * i] = x0 * c[i] - sign * x1 * s[i];
            out[2 * i + 1] = sign * x0 * s[i] + x1 * c[i];
        }
    }
};

// ---- SIMD building blocks: GCC/Clang vector extensions, 16 floats (one AVX-512 register, two AVX2 ones) ----

constexpr int kLanes = 16;
using Vec8 = float __attribute__((vector_size(32))); // halves and quarters of a Vec, for horizontal reductions
using Vec4 = float __attribute__((vector_size(16)));
using IVec8 = int32_t __attribute__((vector_size(32)));

#if defined(__AVX512F__)
using Vec = float __attribute__((vector_size(64)));
using IVec = int32_t __attribute__((vector_size(64))); // lane masks (-1 / 0) and integer lanes

// Unaligned loads and stores through memcpy: both compilers emit vmovups, and clang (which ignores aligned(4)
// on vector typedefs) cannot assume 64-byte alignment.
inline Vec load(const float* p)
{
    Vec v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
inline void store(float* p, Vec v)
{
    std::memcpy(p, &v, sizeof v);
}
inline Vec splat(float x)
{
    return Vec{x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x};
}
inline Vec select(IVec mask, Vec a, Vec b)
{
    return mask ? a : b;
}
inline Vec8 lowHalf(Vec v)
{
    return __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7);
}
inline Vec8 highHalf(Vec v)
{
    return __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
}
inline Vec iota()
{
    return Vec{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
}
#else
// Without AVX-512 a 64-byte vector type has no machine register, and GCC 12 then keeps every Vec in memory and moves
// it through general registers 8 bytes at a time: the AVX2 kernel ran at 8% of the FMA peak. Two native halves, each
// one ymm register, keep the kernel's 16-lane shape (tiles, bands, masks) and let the compiler allocate registers.
struct Vec {
    Vec8 lo, hi;
};
struct IVec {
    IVec8 lo, hi;
};
inline Vec load(const float* p)
{
    Vec v;
    std::memcpy(&v.lo, p, sizeof v.lo);
    std::memcpy(&v.hi, p + 8, sizeof v.hi);
    return v;
}
inline void store(float* p, Vec v)
{
    std::memcpy(p, &v.lo, sizeof v.lo);
    std::memcpy(p + 8, &v.hi, sizeof v.hi);
}
inline Vec splat(float x)
{
    const Vec8 h = {x, x, x, x, x, x, x, x};
    return {h, h};
}
inline Vec select(IVec mask, Vec a, Vec b)
{
    return {mask.lo ? a.lo : b.lo, mask.hi ? a.hi : b.hi};
}
inline Vec8 lowHalf(Vec v)
{
    return v.lo;
}
inline Vec8 highHalf(Vec v)
{
    return v.hi;
}
inline Vec iota()
{
    return {Vec8{0, 1, 2, 3, 4, 5, 6, 7}, Vec8{8, 9, 10, 11, 12, 13, 14, 15}};
}
// Lane-wise arithmetic and comparisons, as the vector extensions give them to the AVX-512 Vec.
#define PLAB_VEC_ARITHMETIC(op)                                                                                        \
    inline Vec operator op(Vec a, Vec b)                                                                               \
    {                                                                                                                  \
        return {a.lo op b.lo, a.hi op b.hi};                                                                           \
    }                                                                                                                  \
    inline Vec operator op(Vec a, float b)                                                                             \
    {                                                                                                                  \
        return {a.lo op b, a.hi op b};                                                                                 \
    }                                                                                                                  \
    inline Vec operator op(float a, Vec b)                                                                             \
    {                                                                                                                  \
        return {a op b.lo, a op b.hi};                                                                                 \
    }                                                                                                                  \
    inline Vec& operator op##=(Vec& a, Vec b)                                                                          \
    {                                                                                                                  \
        return a = a op b;                                                                                             \
    }                                                                                                                  \
    inline Vec& operator op##=(Vec& a, float b)                                                                        \
    {                                                                                                                  \
        return a = a op b;                                                                                             \
    }
PLAB_VEC_ARITHMETIC(+)
PLAB_VEC_ARITHMETIC(-)
PLAB_VEC_ARITHMETIC(*)
PLAB_VEC_ARITHMETIC(/)
#undef PLAB_VEC_ARITHMETIC
#define PLAB_VEC_COMPARISON(op)                                                                                        \
    inline IVec operator op(Vec a, Vec b)                                                                              \
    {                                                                                                                  \
        return {a.lo op b.lo, a.hi op b.hi};                                                                           \
    }                                                                                                                  \
    inline IVec operator op(Vec a, float b)                                                                            \
    {                                                                                                                  \
        return {a.lo op b, a.hi op b};                                                                                 \
    }
PLAB_VEC_COMPARISON(<)
PLAB_VEC_COMPARISON(>)
PLAB_VEC_COMPARISON(<=)
PLAB_VEC_COMPARISON(>=)
#undef PLAB_VEC_COMPARISON
inline IVec operator&(IVec a, IVec b)
{
    return {a.lo & b.lo, a.hi & b.hi};
}
#endif

inline Vec vmax(Vec a, Vec b)
{
    return select(a > b, a, b);
}
inline Vec vmin(Vec a, Vec b)
{
    return select(a < b, a, b);
}
inline Vec8 vmax8(Vec8 a, Vec8 b)
{
    return a > b ? a : b;
}
inline float horizontalMax(const Vec& v)
{
    const Vec8 a = vmax8(lowHalf(v), highHalf(v));
    const Vec4 b = __builtin_shufflevector(a, a, 0, 1, 2, 3), c = __builtin_shufflevector(a, a, 4, 5, 6, 7);
    const Vec4 m = b > c ? b : c;
    return std::max(std::max(m[0], m[1]), std::max(m[2], m[3]));
}
inline float horizontalSum(const Vec& v)
{
    // Pairwise, in a fixed order (lane i += lane i + 8, then + 4, + 2, + 1), so the sum never depends on anything but
    // the data; in halving vector adds rather than through memory.
    const Vec8 a = lowHalf(v) + highHalf(v);
    const Vec4 b = __builtin_shufflevector(a, a, 0, 1, 2, 3) + __builtin_shufflevector(a, a, 4, 5, 6, 7);
    return (b[0] + b[2]) + (b[1] + b[3]);
}

// e^x for x <= 0 (including -inf -> 0): x = n ln2 + r with n = round(x log2 e) and |r| <= ln2/2 (ln2 in two parts,
// Cody and Waite, so r carries no error of its own), e^r by a degree-6 minimax polynomial, times 2^n: within about 1
// ulp of e^x; results below 2^-126 (x < kExpLowest) flush to 0. expParts gives e^x = p * 2^n for any vector type V
// (a Vec, or a native half of one); lanes below kExpLowest hold garbage there, which the callers mask.
constexpr float kExpLowest = -87.3f;
#if defined(__AVX512F__)
inline Vec roundToInteger(Vec x)
{
    return _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
#elif defined(__AVX__)
inline Vec8 roundToInteger(Vec8 x)
{
    return _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
#else
inline Vec8 roundToInteger(Vec8 x)
{
    const Vec8 magic = Vec8{} + 12582912.0f; // 1.5 * 2^23: adding it rounds to an integer
    return (x + magic) - magic;
}
#endif
template <typename V>
struct ExpParts {
    V p, n;
};
template <typename V>
inline ExpParts<V> expParts(V x)
{
    const V n = roundToInteger(x * 1.44269504088896341f);
    const V r = (x - n * 0.693359375f) - n * -2.12194440e-4f;
    V p = V{} + 1.3836838770657778e-3f; // minimax on [-ln2/2, ln2/2]: relative error 1.9e-9 before float rounding
    p = p * r + 8.374813944101334e-3f;
    p = p * r + 4.166822507977486e-2f;
    p = p * r + 1.6666419804096222e-1f;
    p = p * r + 4.9999991059303284e-1f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    return {p, n};
}
#if defined(__AVX512F__)
inline Vec expNonPositive(Vec x)
{
    const ExpParts<Vec> e = expParts(x);
    // p * 2^n in one vscalefps (exact: n is in [-126, 0] where it matters, so 2^n is a normal float), with the zero
    // for x < kExpLowest as its mask.
    const __mmask16 kept = _mm512_cmp_ps_mask(x, splat(kExpLowest), _CMP_NLT_US);
    return _mm512_maskz_scalef_ps(kept, e.p, e.n);
}
#else
// One native half at a time, so the constants and temporaries fit in the 16 ymm registers instead of spilling.
inline Vec8 expNonPositiveHalf(Vec8 x)
{
    const ExpParts<Vec8> e = expParts(x);
    const IVec8 bits = (__builtin_convertvector(e.n, IVec8) + 127) << 23; // 2^n from the exponent bits
    Vec8 scale;
    std::memcpy(&scale, &bits, sizeof scale);
    return x < kExpLowest ? Vec8{} : e.p * scale;
}
inline Vec expNonPositive(Vec x)
{
    return {expNonPositiveHalf(x.lo), expNonPositiveHalf(x.hi)};
}
#endif

// ---- register-tiled small matrix products on packed, zero-padded tiles ----

// Loads a row of B once into a register: left alone, compilers fold the load into every FMA that uses it, which
// doubles the loads per FMA and makes the products load-bound.
inline void keepInRegister(Vec& v)
{
#if defined(__GNUC__) && defined(__AVX512F__)
    asm("" : "+v"(v)); // a Vec is exactly one zmm register
#elif defined(__GNUC__) && defined(__AVX__)
    asm("" : "+x"(v.lo), "+x"(v.hi)); // two ymm registers
#else
    (void)v; // SSE: a half spans two registers, leave it to the compiler
#endif
}

// Rows and 16-column blocks per register tile. AVX-512: 6 x 4 accumulators + 4 B rows + 1 broadcast of 32 zmm
// registers. AVX2: 6 x 1 accumulators of two ymm halves + 2 for B + 1 broadcast of 16 ymm, the classic 6 x 16 shape
// (measured at N = 4096, causal ALiBi, 2 threads: 118 GFLOP/s; 3 x 2 and 2 x 2 spill and give 70, 4 x 1 gives 64).
constexpr int kRowTile = 6;
#if defined(__AVX512F__)
constexpr int kColTile = 4;
#else
constexpr int kColTile = 1;
#endif

// a * b + c in one rounding wherever the machine has FMA: written out, a * b + c may or may not be contracted, and the
// score formula must round alike in every place it is evaluated.
inline Vec fusedMultiplyAdd(Vec a, Vec b, Vec c)
{
#if defined(__AVX512F__)
    return _mm512_fmadd_ps(a, b, c);
#elif defined(__FMA__)
    return {_mm256_fmadd_ps(a.lo, b.lo, c.lo), _mm256_fmadd_ps(a.hi, b.hi, c.hi)};
#else
    return a * b + c;
#endif
}

// The score formula, its one home: 16 raw products s = q . k of one row become (s * qkScale + b) * rowScale, with b
// the row's 16 additive biases (null: none) and rowScale its logn factor (1: none); s * qkScale + b is one fused
// multiply-add.
inline Vec scoreFormula(Vec s, Vec qkScale, const float* bias, float rowScale)
{
    s = bias ? fusedMultiplyAdd(s, qkScale, load(bias)) : s * qkScale;
    return rowScale != 1.0f ? s * rowScale : s;
}

// -inf in the lanes outside [lo, hi), the row's visible keys counted from the first lane.
inline Vec maskLanes(Vec s, int lo, int hi)
{
    if (lo <= 0 && hi >= kLanes)
        return s;
    const Vec index = iota();
    return select((index >= static_cast<float>(lo)) & (index < static_cast<float>(hi)), s,
                  splat(PositionBias::kMasked));
}

// The mask/bias step of 16 lanes (bias, rowScale: null for none).
inline Vec scoreLanes(Vec s, float qkScale, const float* bias, const float* rowScale, int lo, int hi)
{
    return maskLanes(scoreFormula(s, splat(qkScale), bias, rowScale ? *rowScale : 1.0f), lo, hi);
}

// The forward's mask/bias step, folded into the epilogue of its Q K^T products while the products are still in
// registers: row i of the query block gets its scores (scoreLanes) and its per-lane running maximum rowBest, without
// a pass over the stored tile. Pointers are offset to the block's first row; `column` is the tile's first key column.
struct TileScoring {
    const int* rowBegin = nullptr;
    const int* rowEnd = nullptr;
    const float* rowScale = nullptr; // null: no logn factor
    const float* bias = nullptr;     // null: no additive bias; else row i, tile column j at bias[j - i]
    float qkScale = 1.0f;
    int column = 0;
    float* rowBest = nullptr; // (rows, 16)
};

// C (RB x 16*CB) = A (RB x K, stride lda) * Bt (K x 16*CB, stride ldb). With `scoring`, C holds rows row0.. of a
// query block at tile columns col0.., and gets scores instead of raw products.
// Every loop over the register tile is unrolled in full (#pragma GCC unroll): where GCC 12 leaves one rolled, `acc`
// lives in memory, and each call stores 24 zeros, spills 24 accumulators after the K loop and reloads them.
template <int RB, int CB>
inline void tileNT(const float* A, size_t lda, const float* Bt, size_t ldb, int K, float* C, size_t ldc,
                   const TileScoring* scoring, int row0, int col0)
{
    Vec acc[RB][CB];
#pragma GCC unroll 8
    for (int r = 0; r < RB; ++r)
#pragma GCC unroll 8
        for (int c = 0; c < CB; ++c)
            acc[r][c] = splat(0.0f);
    for (int d = 0; d < K; ++d) {
        Vec b[CB];
#pragma GCC unroll 8
        for (int c = 0; c < CB; ++c) {
            b[c] = load(Bt + d * ldb + c * kLanes);
            keepInRegister(b[c]);
        }
#pragma GCC unroll 8
        for (int r = 0; r < RB; ++r) {
            const Vec a = splat(A[r * lda + d]);
#pragma GCC unroll 8
            for (int c = 0; c < CB; ++c)
                acc[r][c] += a * b[c];
        }
    }
    if (!scoring) {
#pragma GCC unroll 8
        for (int r = 0; r < RB; ++r)
#pragma GCC unroll 8
            for (int c = 0; c < CB; ++c)
                store(C + r * ldc + c * kLanes, acc[r][c]);
        return;
    }
    // A copy: the stores to C (floats) could otherwise alias its qkScale, and each would reload every field.
    const TileScoring sc = *scoring;
    const Vec qkScale = splat(sc.qkScale);
#pragma GCC unroll 8
    for (int r = 0; r < RB; ++r) {
        const int i = row0 + r;
        const int lo = sc.rowBegin[i] - sc.column - col0, hi = sc.rowEnd[i] - sc.column - col0; // visible, from C
        const bool masked = lo > 0 || hi < CB * kLanes;
        const float* bias = sc.bias ? sc.bias + (col0 - i) : nullptr;
        const float rowScale = sc.rowScale ? sc.rowScale[i] : 1.0f;
        Vec best = load(sc.rowBest + i * kLanes);
#pragma GCC unroll 4
        for (int c = 0; c < CB; ++c) {
            Vec s = scoreFormula(acc[r][c], qkScale, bias ? bias + c * kLanes : nullptr, rowScale);
            if (masked)
                s = maskLanes(s, lo - c * kLanes, hi - c * kLanes);
            store(C + r * ldc + c * kLanes, s);
            best = vmax(best, s);
        }
        store(sc.rowBest + i * kLanes, best);
    }
}

// C (RB x 16*CB) = rowFactor .* C + A * B, A(i, j) = A[i*sai + j*saj] (any layout), B (J x 16*CB, stride ldb).
template <int RB, int CB>
inline void tileNN(const float* A, size_t sai, size_t saj, const float* B, size_t ldb, int J, float* C, size_t ldc,
                   const float* rowFactor)
{
    Vec acc[RB][CB];
#pragma GCC unroll 8
    for (int r = 0; r < RB; ++r)
#pragma GCC unroll 8
        for (int c = 0; c < CB; ++c)
            acc[r][c] = splat(0.0f);
    for (int j = 0; j < J; ++j) {
        Vec b[CB];
#pragma GCC unroll 8
        for (int c = 0; c < CB; ++c) {
            b[c] = load(B + j * ldb + c * kLanes);
            keepInRegister(b[c]);
        }
#pragma GCC unroll 8
        for (int r = 0; r < RB; ++r) {
            const Vec a = splat(A[r * sai + j * saj]);
#pragma GCC unroll 8
            for (int c = 0; c < CB; ++c)
                acc[r][c] += a * b[c];
        }
    }
#pragma GCC unroll 8
    for (int r = 0; r < RB; ++r)
#pragma GCC unroll 8
        for (int c = 0; c < CB; ++c) {
            float* out = C + r * ldc + c * kLanes;
            const Vec old = load(out);
            store(out, (rowFactor ? old * rowFactor[r] : old) + acc[r][c]);
        }
}

int roundUp(int x, int m)
{
    return (x + m - 1) / m * m;
}

// Under a mask, the rows of one register tile (kRowTile rows) see only a band of a key tile's columns: a
// causal diagonal, or a window's start. `ColumnBand`s give, per register tile, the columns [begin, end) (multiples of
// 16) that any of its rows sees; the banded products compute only those, so a tile crossed by a mask edge costs
// about its visible part instead of the whole tile. Columns outside a band are never read afterwards.
struct ColumnBand {
    int begin = 0, end = 0;
};

template <int CB>
void tileNTRows(int rows, const float* A, size_t lda, const float* Bt, size_t ldb, int K, float* C, size_t ldc,
                const TileScoring* sc, int row0, int col0)
{
    switch (rows) {
    case 6:
        tileNT<6, CB>(A, lda, Bt, ldb, K, C, ldc, sc, row0, col0);
        break;
    case 5:
        tileNT<5, CB>(A, lda, Bt, ldb, K, C, ldc, sc, row0, col0);
        break;
    case 4:
        tileNT<4, CB>(A, lda, Bt, ldb, K, C, ldc, sc, row0, col0);
        break;
    case 3:
        tileNT<3, CB>(A, lda, Bt, ldb, K, C, ldc, sc, row0, col0);
        break;
    case 2:
        tileNT<2, CB>(A, lda, Bt, ldb, K, C, ldc, sc, row0, col0);
        break;
    case 1:
        tileNT<1, CB>(A, lda, Bt, ldb, K, C, ldc, sc, row0, col0);
        break;
    default:
        break;
    }
}

// C = A (rows x K) * Bt (K x w), only within each register tile's band (bands[r / kRowTile]). Column blocks outermost,
// so a block of Bt stays in L1 while the row tiles pass over it. With `scoring`, C gets the scores (TileScoring).
void gemmNTBanded(const float* A, size_t lda, const float* Bt, size_t ldb, int K, int rows, int w,
                  const ColumnBand* bands, float* C, size_t ldc, const TileScoring* scoring = nullptr)
{
    for (int c0 = 0; c0 < w; c0 += kColTile * kLanes) {
        for (int r = 0; r < rows; r += kRowTile) {
            const ColumnBand& band = bands[r / kRowTile];
            const int a = std::max(band.begin, c0), b = std::min(band.end, c0 + kColTile * kLanes);
            if (a >= b)
                continue;
            const int rb = std::min(kRowTile, rows - r);
            const float* Ar = A + r * lda;
            float* Cr = C + r * ldc + a;
            switch ((b - a) / kLanes) {
            case 4:
                if constexpr (kColTile >= 4)
                    tileNTRows<4>(rb, Ar, lda, Bt + a, ldb, K, Cr, ldc, scoring, r, a);
                break;
            case 3:
                if constexpr (kColTile >= 3)
                    tileNTRows<3>(rb, Ar, lda, Bt + a, ldb, K, Cr, ldc, scoring, r, a);
                break;
            case 2:
                if constexpr (kColTile >= 2)
                    tileNTRows<2>(rb, Ar, lda, Bt + a, ldb, K, Cr, ldc, scoring, r, a);
                break;
            default:
                tileNTRows<1>(rb, Ar, lda, Bt + a, ldb, K, Cr, ldc, scoring, r, a);
                break;
            }
        }
    }
}

template <int CB>
void tileNNRows(int rows, const float* A, size_t sai, size_t saj, const float* B, size_t ldb, int J, float* C,
                size_t ldc, const float* rowFactor)
{
    switch (rows) {
    case 6:
        tileNN<6, CB>(A, sai, saj, B, ldb, J, C, ldc, rowFactor);
        break;
    case 5:
        tileNN<5, CB>(A, sai, saj, B, ldb, J, C, ldc, rowFactor);
        break;
    case 4:
        tileNN<4, CB>(A, sai, saj, B, ldb, J, C, ldc, rowFactor);
        break;
    case 3:
        tileNN<3, CB>(A, sai, saj, B, ldb, J, C, ldc, rowFactor);
        break;
    case 2:
        tileNN<2, CB>(A, sai, saj, B, ldb, J, C, ldc, rowFactor);
        break;
    case 1:
        tileNN<1, CB>(A, sai, saj, B, ldb, J, C, ldc, rowFactor);
        break;
    default:
        break;
    }
}

// C (rows x cols) = rowFactor .* C + A (rows x J) * B (J x cols), A(i, j) = A[i*sai + j*saj], where register tile
// r / kRowTile sums only over its band of j, clipped to [0, J): outside it that tile's A must be zero. Every row is
// rescaled (rowFactor may be null), even a tile with an empty band.
void gemmNNBanded(const float* A, size_t sai, size_t saj, const float* B, size_t ldb, int J, int rows, int cols,
                  const ColumnBand* bands, float* C, size_t ldc, const float* rowFactor)
{
    for (int c0 = 0; c0 < cols; c0 += kColTile * kLanes) {
        for (int r = 0; r < rows; r += kRowTile) {
            const ColumnBand& band = bands[r / kRowTile];
            const int j0 = std::min(band.begin, J), j1 = std::max(j0, std::min(band.end, J));
            const int rb = std::min(kRowTile, rows - r);
            const float* Ar = A + r * sai + j0 * saj;
            const float* Bj = B + static_cast<size_t>(j0) * ldb + c0;
            float* Cr = C + r * ldc + c0;
            const float* f = rowFactor ? rowFactor + r : nullptr;
            switch (std::min(kColTile, (cols - c0) / kLanes)) {
            case 4:
                if constexpr (kColTile >= 4)
                    tileNNRows<4>(rb, Ar, sai, saj, Bj, ldb, j1 - j0, Cr, ldc, f);
                break;
            case 3:
                if constexpr (kColTile >= 3)
                    tileNNRows<3>(rb, Ar, sai, saj, Bj, ldb, j1 - j0, Cr, ldc, f);
                break;
            case 2:
                if constexpr (kColTile >= 2)
                    tileNNRows<2>(rb, Ar, sai, saj, Bj, ldb, j1 - j0, Cr, ldc, f);
                break;
            default:
                tileNNRows<1>(rb, Ar, sai, saj, Bj, ldb, j1 - j0, Cr, ldc, f);
                break;
            }
        }
    }
}

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
    RotaryTable rotary;
    bool useBias = false;
    bool useScale = false;
    std::vector<int> rowBegin, rowEnd; // (N): visible keys [rowBegin[m], rowEnd[m]) of row m
    std::vector<float> rowScale;       // (N): the logn factor of row m
    size_t biasStride = 0;
    std::vector<float> reversedBias; // (H, biasStride): [h][n - m + N - 1] = b_h(m, n), 0 past the table
    double visiblePairs = 0;         // sum over rows of the visible keys, for one head

    // `frequencies`: the rotary step's table; empty when q and k must not rotate. The pass's mask and rotary positions
    // replace the bias's own when the pass is custom.
    Plan(const PositionBias& b, const AttentionDims& d, const detail::RotaryFrequencies& frequencies, const Pass& pass)
        : bias(b), dims(d), N(d.length), D(d.headDim), rotary(frequencies, d.length, pass)
    {
        Dp = roundUp(D, kLanes);
        keysPadded = roundUp(N, kLanes);
        ldT = keysPadded + kLanes;
        queriesPadded = N;
        invSqrtD = static_cast<float>(1.0 / std::sqrt(static_cast<double>(D)));
        rowBegin.assign(queriesPadded, 0);
        rowEnd.assign(queriesPadded, 0);
        rowScale.assign(queriesPadded, 1.0f);
        for (int m = 0; m < N; ++m) {
            const KeyRange keys = pass.custom ? KeyRange{pass.begin[m], pass.end[m]} : bias.keyRange(m, N);
            rowBegin[m] = keys.begin;
            rowEnd[m] = keys.end;
            visiblePairs += keys.end - keys.begin;
            rowScale[m] = bias.rowScale(m);
            useScale = useScale || rowScale[m] != 1.0f;
        }
        if (bias.hasAdditive()) {
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
    float scoreRow(float* S, int h, int m, int c, int w, float qkScale = 1.0f) const
    {
        const int lo = std::max(rowBegin[m], c) - c;
        const int hi = std::min(rowEnd[m], c + w) - c;
        if (lo >= hi) {
            std::fill(S, S + w, PositionBias::kMasked);
            return PositionBias::kMasked;
        }
        const float* rev = useBias ? reversedBias.data() + h * biasStride + (c - m + N - 1) : nullptr;
        const float* scale = useScale ? &rowScale[m] : nullptr;
        Vec best = splat(PositionBias::kMasked);
        for (int j = 0; j < w; j += kLanes) {
            const Vec s = scoreLanes(load(S + j), qkScale, rev ? rev + j : nullptr, scale, lo - j, hi - j);
            store(S + j, s);
            best = vmax(best, s);
        }
        return horizontalMax(best);
    }
};

// Per-thread scratch tiles.
struct Scratch {
    std::vector<float> scores;                 // (kQueryBlock, kKeyBlock): scores, then probabilities
    std::vector<float> dscores;                // (kQueryBlock, kKeyBlock): backward dP, then dS
    std::vector<float> acc;                    // (kQueryBlock, Dp): forward O, backward dQ
    std::vector<float> acc2;                   // (kBackKeyBlock, Dp): backward dK
    std::vector<float> acc3;                   // (kBackKeyBlock, Dp): backward dV
    std::vector<float> rowMax, rowSum, factor; // (kQueryBlock): online softmax state, rescale factor of this tile
    std::vector<double> rowWeighted;           // (kQueryBlock): sum p (s - max), for the entropy
    std::vector<float> rowBest;                // (kQueryBlock, 16): per-lane maximum of a row's scores in a tile

    explicit Scratch(int Dp)
        : scores(kQueryBlock * kKeyBlock), dscores(kQueryBlock * kKeyBlock), acc(kQueryBlock * Dp),
          acc2(kBackKeyBlock * Dp), acc3(kBackKeyBlock * Dp), rowMax(kQueryBlock), rowSum(kQueryBlock),
          factor(kQueryBlock), rowWeighted(kQueryBlock), rowBest(kQueryBlock * kLanes)
    {
    }
};

// How many (batch, head) pairs to pack at once so the packed copies stay within `budget` bytes.
int groupSize(const AttentionDims& dims, size_t bytesPerHead, size_t budget)
{
    const size_t fit = std::max<size_t>(1, budget / std::max<size_t>(1, bytesPerHead));
    return static_cast<int>(std::min<size_t>(fit, static_cast<size_t>(dims.batch) * dims.heads));
}

// Packs rows [0, N) of x (N, D) as (rows, Dp) zero-padded, rotated for rotary schemes and times `scale`.
void packRows(const Plan& plan, const float* x, float* out, bool isKey, bool rotate, float scale)
{
    std::vector<float> row(plan.D);
    for (int m = 0; m < plan.N; ++m) {
        const float* in = x + static_cast<size_t>(m) * plan.D;
        if (rotate && plan.rotary.active()) {
            plan.rotary.applyRow(in, row.data(), m, isKey, false);
            in = row.data();
        }
        float* o = out + static_cast<size_t>(m) * plan.Dp;
        for (int d = 0; d < plan.D; ++d)
            o[d] = in[d] * scale;
    }
}

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
void packColumns(const Plan& plan, const float* x, float* out, size_t ld, int base, bool isKey, bool rotate, int n0,
                 int n1)
{
    const bool rotating = rotate && plan.rotary.active();
    std::vector<float> row(rotating ? plan.D : 0);
    for (int n = n0; n < n1; ++n) {
        const float* in = x + static_cast<size_t>(n) * plan.D;
        if (rotating) {
            plan.rotary.applyRow(in, row.data(), n, isKey, false);
            in = row.data();
        }
        float* column = out + (n - base);
        for (int d = 0; d < plan.D; ++d)
            column[static_cast<size_t>(d) * ld] = in[d];
    }
}

// Packs all of x (N, D) transposed into (Dp, keysPadded) with row stride ldT, rotated for rotary schemes.
void packTransposed(const Plan& plan, const float* x, float* out, bool isKey, bool rotate)
{
    packColumns(plan, x, out, plan.ldT, 0, isKey, rotate, 0, plan.N);
}

// Bands of key columns [c, c + w) for the register tiles of query rows [m0, m0 + R): the columns any of a tile's rows
// sees, 16-aligned (rowBegin and rowEnd never decrease with m). For products over keys: QK^T, P V, dS K.
void queryBands(const Plan& plan, int m0, int R, int c, int w, ColumnBand* bands)
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
void keyBands(const Plan& plan, int n0, int wk, int q0, int R, ColumnBand* bands)
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

// ---- forward: one query block of one head ----

// A product rounded before it is added, never fused into a multiply-add: the running softmax sums are then the same
// whether or not the compiler sees the horizontal sum they are added to (an opaque sum once, inlined vector adds now).
template <typename T>
inline T roundedProduct(T product)
{
#if defined(__GNUC__) && defined(__SSE2__)
    asm("" : "+x"(product));
#endif
    return product;
}

// The online softmax of row i of a query block over one key tile: `row` (width columns) holds the row's scores
// (after the mask/bias step, with maximum tileMax) and gets exp(score - new running max); the running max, sum and,
// with `entropy`, sum p (s - max) advance, and factor[i] is what the row's earlier output must be rescaled by.
inline void onlineSoftmaxRow(Scratch& sc, int i, float* row, int width, float tileMax, bool entropy)
{
    const float oldMax = sc.rowMax[i];
    const float newMax = std::max(oldMax, tileMax);
    if (newMax == PositionBias::kMasked) { // nothing visible yet: contributes nothing
        std::fill(row, row + width, 0.0f);
        sc.factor[i] = 1.0f;
        return;
    }
    const bool first = oldMax == PositionBias::kMasked;
    const float corr = first ? 0.0f : std::exp(oldMax - newMax);
    const Vec zero = splat(0.0f), mx = splat(newMax);
    Vec sum = zero, weighted = zero;
    for (int j = 0; j < width; j += kLanes) {
        const Vec x = load(row + j) - mx;
        const Vec p = expNonPositive(x);
        store(row + j, p);
        sum += p;
        if (entropy)
            weighted += select(p > zero, p * x, zero);
    }
    if (entropy)
        sc.rowWeighted[i] =
            roundedProduct(corr * (sc.rowWeighted[i] + (first ? 0.0 : double(oldMax - newMax) * sc.rowSum[i]))) +
            horizontalSum(weighted);
    sc.rowSum[i] = roundedProduct(sc.rowSum[i] * corr) + horizontalSum(sum);
    sc.rowMax[i] = newMax;
    sc.factor[i] = corr;
}

// Where one query block of one head reads its inputs and writes its results (null pointers: not wanted).
// Q: rows of stride Dp (packed, or the caller's q when D is a multiple of 16 and nothing rotates), times qkScale
// gives q/sqrt(D). V: rows of stride Dp; only rows < N are read. Without V and out only lse and entropy are computed.
struct BlockIO {
    const float* Q = nullptr;
    float qkScale = 1.0f;
    KeyColumns Kt;
    const float* V = nullptr;
    float* out = nullptr;     // (N, D) of the head
    float* lse = nullptr;     // (N)
    float* entropy = nullptr; // (N)
    float* probs = nullptr;   // (N, N)
};

// The probabilities of one query block: the same banded scores again, normalised with the final lse; cells outside
// the bands stay 0 (the caller zeroed them).
void writeBlockProbabilities(const Plan& plan, int h, int m0, const BlockIO& io, Scratch& sc)
{
    const int N = plan.N, Dp = plan.Dp;
    const int R = std::min(kQueryBlock, N - m0);
    const int keyEnd = plan.rowEnd[m0 + R - 1];
    constexpr size_t ldS = kKeyBlock;
    float* S = sc.scores.data();
    ColumnBand bands[kQueryTiles];
    for (int c = plan.blockKeyBegin(m0); c < keyEnd; c += kKeyBlock) {
        const int w = std::min(kKeyBlock, roundUp(keyEnd - c, kLanes));
        queryBands(plan, m0, R, c, w, bands);
        gemmNTBanded(io.Q + static_cast<size_t>(m0) * Dp, Dp, io.Kt.at(c), io.Kt.ld, Dp, R, w, bands, S, ldS);
        for (int i = 0; i < R; ++i) {
            const int m = m0 + i;
            const ColumnBand band = bands[i / kRowTile];
            if (band.end <= band.begin)
                continue;
            float* row = S + i * ldS + band.begin;
            const int width = band.end - band.begin;
            plan.scoreRow(row, h, m, c + band.begin, width, io.qkScale);
            const Vec shift = splat(io.lse[m]);
            for (int j = 0; j < width; j += kLanes)
                store(row + j, expNonPositive(vmin(load(row + j) - shift, splat(0.0f))));
            const int valid = std::max(0, std::min(width, N - c - band.begin));
            std::copy(row, row + valid, io.probs + static_cast<size_t>(m) * N + c + band.begin);
        }
    }
}

// One query block of one head: the tile loop of the online softmax over the visible key tiles. Per tile: the products
// Q K^T with the mask/bias step in their epilogue (TileScoring), the online softmax per row, then O = factor .* O + P
// V. With io.probs, a second pass over the same tiles writes the normalised probabilities (the same scores, so they
// agree with out and lse).
void forwardBlock(const Plan& plan, int h, int m0, const BlockIO& io, Scratch& sc)
{
    const int N = plan.N, D = plan.D, Dp = plan.Dp;
    const int R = std::min(kQueryBlock, N - m0);
    const int keyEnd = plan.rowEnd[m0 + R - 1];
    constexpr size_t ldS = kKeyBlock;
    float* S = sc.scores.data();
    float* O = sc.acc.data();
    std::fill(O, O + static_cast<size_t>(R) * Dp, 0.0f);
    std::fill(sc.rowMax.begin(), sc.rowMax.end(), PositionBias::kMasked);
    std::fill(sc.rowSum.begin(), sc.rowSum.end(), 0.0f);
    std::fill(sc.rowWeighted.begin(), sc.rowWeighted.end(), 0.0);
    std::fill(sc.factor.begin(), sc.factor.end(), 1.0f);
    ColumnBand bands[kQueryTiles]; // per register tile of rows, in the current key tile
    TileScoring scoring;           // the mask/bias step, in the products' epilogue
    scoring.rowBegin = plan.rowBegin.data() + m0;
    scoring.rowEnd = plan.rowEnd.data() + m0;
    scoring.rowScale = plan.useScale ? plan.rowScale.data() + m0 : nullptr;
    scoring.qkScale = io.qkScale;
    scoring.rowBest = sc.rowBest.data();
    for (int c = plan.blockKeyBegin(m0); c < keyEnd; c += kKeyBlock) {
        const int w = std::min(kKeyBlock, roundUp(keyEnd - c, kLanes));
        queryBands(plan, m0, R, c, w, bands);
        scoring.column = c;
        scoring.bias = plan.useBias ? plan.reversedBias.data() + h * plan.biasStride + (c - m0 + N - 1) : nullptr;
        std::fill(sc.rowBest.begin(), sc.rowBest.end(), PositionBias::kMasked);
        gemmNTBanded(io.Q + static_cast<size_t>(m0) * Dp, Dp, io.Kt.at(c), io.Kt.ld, Dp, R, w, bands, S, ldS, &scoring);
        for (int i = 0; i < R; ++i) {
            const ColumnBand band = bands[i / kRowTile];
            float* row = S + i * ldS + band.begin;
            const int width = band.end - band.begin;
            const float tileMax =
                width > 0 ? horizontalMax(load(sc.rowBest.data() + i * kLanes)) : PositionBias::kMasked;
            onlineSoftmaxRow(sc, i, row, width, tileMax, io.entropy != nullptr);
        }
        // Columns past N have probability 0: leave their (nonexistent) value rows out.
        if (io.V)
            gemmNNBanded(S, ldS, 1, io.V + static_cast<size_t>(c) * Dp, Dp, std::min(w, N - c), R, Dp, bands, O, Dp,
                         sc.factor.data());
    }
    for (int i = 0; i < R; ++i) {
        const int m = m0 + i;
        const float inv = 1.0f / sc.rowSum[i];
        for (int d = 0; io.out && d < D; ++d)
            io.out[static_cast<size_t>(m) * D + d] = O[static_cast<size_t>(i) * Dp + d] * inv;
        io.lse[m] = sc.rowMax[i] + std::log(sc.rowSum[i]);
        if (io.entropy)
            io.entropy[m] =
                static_cast<float>(std::log(static_cast<double>(sc.rowSum[i])) - sc.rowWeighted[i] / sc.rowSum[i]);
    }
    if (io.probs)
        writeBlockProbabilities(plan, h, m0, io, sc);
}

// ---- forward strategies: which thread runs which (head, query block), and where its packed inputs live ----

// The inputs of a head the forward packs (rotated, scaled, zero-padded) when it cannot read the caller's rows.
enum class ForwardInput { Queries, KeyColumns, Values };

// One attentionForward call: the plan, the caller's tensors and results, and the layout of a head's packed inputs
// in a buffer (Q | K^T | V). Q (as q/sqrt(D), rotated) and V are packed to (N, Dp) only when D is not a multiple
// of 16 or q must rotate; otherwise the kernel reads the caller's rows directly. K^T is always packed, rotated.
struct ForwardCall {
    const Plan& plan;
    const float *q, *k, *v;
    AttentionForward& result;
    const AttentionOptions& options;
    bool packQ = false, packV = false;
    size_t qSize = 0, vSize = 0, headSize = 0;
    int heads = 0, queryBlocks = 0;

    ForwardCall(const Plan& p, const float* q_, const float* k_, const float* v_, AttentionForward& r,
                const AttentionOptions& o)
        : plan(p), q(q_), k(k_), v(v_), result(r), options(o)
    {
        packQ = plan.rotary.active() || plan.D != plan.Dp;
        packV = plan.D != plan.Dp;
        qSize = packQ ? static_cast<size_t>(plan.queriesPadded) * plan.Dp : 0;
        vSize = packV ? static_cast<size_t>(plan.keysPadded) * plan.Dp : 0;
        headSize = static_cast<size_t>(plan.N) * plan.D;
        heads = plan.dims.batch * plan.dims.heads;
        queryBlocks = (plan.N + kQueryBlock - 1) / kQueryBlock;
    }

    // Packs `input` of head bh into `buffer` (Q | K^T of ktFloats | V); no-op for an input read in place.
    void pack(float* buffer, size_t ktFloats, int bh, ForwardInput input) const
    {
        switch (input) {
        case ForwardInput::Queries:
            if (packQ)
                packRows(plan, q + bh * headSize, buffer, false, true, plan.invSqrtD);
            break;
        case ForwardInput::KeyColumns:
            packTransposed(plan, k + bh * headSize, buffer + qSize, true, true);
            break;
        case ForwardInput::Values:
            if (packV)
                packRows(plan, v + bh * headSize, buffer + qSize + ktFloats, false, false, 1.0f);
            break;
        }
    }

    // Where query blocks of head bh read and write: the packs in `buffer` (K^T of ktFloats with row stride ld), or
    // the caller's rows where nothing needs packing; the head's slices of the results.
    BlockIO io(const float* buffer, size_t ktFloats, size_t ld, int bh) const
    {
        const size_t rows = static_cast<size_t>(bh) * plan.N;
        BlockIO io;
        io.Q = packQ ? buffer : q + bh * headSize;
        io.qkScale = packQ ? 1.0f : plan.invSqrtD;
        io.Kt = KeyColumns{buffer + qSize, ld, 0};
        io.V = packV ? buffer + qSize + ktFloats : v + bh * headSize;
        io.out = result.out.data() + bh * headSize;
        io.lse = result.logSumExp.data() + rows;
        io.entropy = options.wantRowEntropy ? result.rowEntropy.data() + rows : nullptr;
        io.probs = options.wantProbabilities ? result.probabilities.data() + rows * plan.N : nullptr;
        return io;
    }

    void runBlock(int bh, int qb, const BlockIO& io, Scratch& scratch) const
    {
        forwardBlock(plan, bh % plan.dims.heads, qb * kQueryBlock, io, scratch);
    }
};

// The head-parallel forward's K^T, packed just ahead of the query blocks that first read it, so each block finds its
// keys in L1/L2 instead of in a whole-head pack that at large N has long been evicted to memory. When the first
// visible key moves on with the rows (local, bca), the pack is a window of `columns`: the widest span a block's tiles
// read plus slack, slid back to its start when full. It then stays in L2 however long N is, instead of streaming
// D x N floats through memory per head. Otherwise (causal, bidirectional) it is the whole head.
struct KeyColumnWindow {
    const Plan& plan;
    int columns = 0;    // columns the window holds
    size_t ld = 0;      // its row stride
    int packedKeys = 0; // columns [base, packedKeys) hold the current head's keys

    explicit KeyColumnWindow(const Plan& p) : plan(p)
    {
        int widestSpan = 0;
        for (int m0 = 0; m0 < plan.N; m0 += kQueryBlock)
            widestSpan = std::max(widestSpan, plan.blockColumnEnd(m0) - plan.blockKeyBegin(m0));
        const bool sliding = widestSpan + kKeyWindowSlack < plan.keysPadded;
        columns = sliding ? widestSpan + kKeyWindowSlack : plan.keysPadded;
        ld = static_cast<size_t>(columns) + kLanes; // as ldT: no L1 set aliasing down a column
    }
    size_t floats() const { return ld * plan.Dp; }

    // Makes the columns the query block at m0 reads present in `data`, seen through Kt (whose `base` may move), from
    // the head's keys kHead; returns the end of the keys packed so far.
    int prepare(const float* kHead, float* data, KeyColumns& Kt, int m0)
    {
        const int N = plan.N, D = plan.D;
        const int keyBegin = plan.blockKeyBegin(m0), columnEnd = plan.blockColumnEnd(m0);
        if (columnEnd - Kt.base > columns) {
            // Slide: keep the packed columns this block still reads, at the start of the window.
            const int keep = std::max(0, packedKeys - keyBegin);
            for (int d = 0; d < D; ++d) {
                float* row = data + static_cast<size_t>(d) * ld;
                std::memmove(row, row + (keyBegin - Kt.base), sizeof(float) * keep);
            }
            Kt.base = keyBegin;
            packedKeys = std::max(packedKeys, keyBegin);
        }
        const int needed = std::min(N, columnEnd);
        if (needed > packedKeys) {
            packColumns(plan, kHead, data, ld, Kt.base, true, true, packedKeys, needed);
            packedKeys = needed;
        }
        // Tiles may run past N into padding, which must read as zeros whatever a slide left there.
        for (int d = 0; columnEnd > N && d < D; ++d)
            std::fill_n(data + static_cast<size_t>(d) * ld + (N - Kt.base), columnEnd - N, 0.0f);
        return needed;
    }
};

// Asks for the next query block's new inputs now, so at large N (inputs beyond the last-level cache) they arrive
// while this block computes: its q rows, output rows, and the keys/values it adds to the window (from `packedEnd`).
void prefetchNextBlock(const ForwardCall& call, const BlockIO& io, int bh, int nextBlock, int packedEnd)
{
    const Plan& plan = call.plan;
    const int N = plan.N, D = plan.D;
    const size_t m1 = static_cast<size_t>(nextBlock) * kQueryBlock;
    const size_t rowsNext = std::min<size_t>(kQueryBlock, N - m1);
    const int nextEnd = std::min(N, plan.rowEnd[std::min<size_t>(N, m1 + kQueryBlock) - 1]);
    auto prefetch = [](const float* p, size_t floats, int write) {
        for (size_t i = 0; i < floats; i += 16)
            write ? __builtin_prefetch(p + i, 1) : __builtin_prefetch(p + i, 0);
    };
    const size_t qStride = call.packQ ? plan.Dp : D, vStride = call.packV ? plan.Dp : D;
    prefetch(io.Q + m1 * qStride, rowsNext * qStride, 0);
    prefetch(io.out + m1 * D, rowsNext * D, 1);
    if (nextEnd > packedEnd) {
        prefetch(call.k + bh * call.headSize + static_cast<size_t>(packedEnd) * D, size_t(nextEnd - packedEnd) * D, 0);
        prefetch(io.V + static_cast<size_t>(packedEnd) * vStride, size_t(nextEnd - packedEnd) * vStride, 0);
    }
}

// Enough heads to keep every thread busy: each thread packs a head into its own buffer and runs all of its query
// blocks, with no barrier until the end. Every block computes exactly what the other strategy computes.
void forwardHeadParallel(const ForwardCall& call)
{
    const Plan& plan = call.plan;
#pragma omp parallel if (plan.worthThreads(call.heads))
    {
        Scratch scratch(plan.Dp);
        KeyColumnWindow window(plan);
        std::vector<float> buffer(call.qSize + window.floats() + call.vSize, 0.0f);
#pragma omp for schedule(dynamic)
        for (int bh = 0; bh < call.heads; ++bh) {
            call.pack(buffer.data(), window.floats(), bh, ForwardInput::Queries);
            call.pack(buffer.data(), window.floats(), bh, ForwardInput::Values);
            BlockIO io = call.io(buffer.data(), window.floats(), window.ld, bh);
            window.packedKeys = 0;
            for (int qb = 0; qb < call.queryBlocks; ++qb) {
                const int packedEnd =
                    window.prepare(call.k + bh * call.headSize, buffer.data() + call.qSize, io.Kt, qb * kQueryBlock);
                if (qb + 1 < call.queryBlocks)
                    prefetchNextBlock(call, io, bh, qb + 1, packedEnd);
                call.runBlock(bh, qb, io, scratch);
            }
        }
    }
}

// Few heads: pack a group of them (bounded memory), then share out their query blocks among the threads.
void forwardQueryBlockParallel(const ForwardCall& call)
{
    const Plan& plan = call.plan;
    const size_t kSize = static_cast<size_t>(plan.ldT) * plan.Dp;
    const size_t perHead = call.qSize + kSize + call.vSize;
    const int group = groupSize(plan.dims, perHead * sizeof(float), size_t(16) << 20);
    std::vector<float> packed(group * perHead, 0.0f);
    constexpr ForwardInput inputs[] = {ForwardInput::Queries, ForwardInput::KeyColumns, ForwardInput::Values};
#pragma omp parallel if (plan.worthThreads(call.heads))
    {
        Scratch scratch(plan.Dp);
        for (int first = 0; first < call.heads; first += group) {
            const int count = std::min(group, call.heads - first);
#pragma omp for schedule(dynamic)
            for (int task = 0; task < 3 * count; ++task)
                call.pack(packed.data() + (task / 3) * perHead, kSize, first + task / 3, inputs[task % 3]);
                // Most expensive blocks (last rows under a causal mask) first, for balance.
#pragma omp for schedule(dynamic)
            for (int item = 0; item < count * call.queryBlocks; ++item) {
                const int qb = call.queryBlocks - 1 - item / count, g = item % count;
                call.runBlock(first + g, qb, call.io(packed.data() + g * perHead, kSize, plan.ldT, first + g), scratch);
            }
        }
    }
}

// ---- backward: the softmax backward per row, one key block, one query block ----

// dq rows [m0, m1) of one head from the accumulated dS K (rows from m0, stride Dp): times 1/sqrt(D), rotated back.
void writeQueryGradient(const Plan& plan, const float* dQ, int m0, int m1, float* dq)
{
    std::vector<float> row(plan.Dp);
    for (int m = m0; m < m1; ++m) {
        for (int d = 0; d < plan.D; ++d)
            row[d] = dQ[static_cast<size_t>(m - m0) * plan.Dp + d] * plan.invSqrtD;
        float* target = dq + static_cast<size_t>(m) * plan.D;
        if (plan.rotary.active())
            plan.rotary.applyRow(row.data(), target, m, false, true);
        else
            std::copy(row.begin(), row.begin() + plan.D, target);
    }
}

// A head's packed inputs for the backward: Q/sqrt(D) and dO (N, Dp); K (keysPadded, Dp); K^T, V^T (Dp, keysPadded,
// row stride ldT); delta (N).
enum class BackwardInput { Queries, KeyRows, KeyColumns, ValueColumns, OutputGradient };
constexpr BackwardInput kBackwardInputs[] = {BackwardInput::Queries, BackwardInput::KeyRows, BackwardInput::KeyColumns,
                                             BackwardInput::ValueColumns, BackwardInput::OutputGradient};
constexpr int kBackwardInputCount = 5;

struct BackwardPacks {
    float *Qs, *dOs, *Ks, *Kt, *Vt, *delta;

    static size_t qSize(const Plan& plan) { return static_cast<size_t>(plan.queriesPadded) * plan.Dp; }
    static size_t kSize(const Plan& plan) { return static_cast<size_t>(plan.ldT) * plan.Dp; } // fits both K layouts
    static size_t floats(const Plan& plan) { return 2 * qSize(plan) + 3 * kSize(plan) + plan.queriesPadded; }
    BackwardPacks(const Plan& plan, float* base)
    {
        const size_t q = qSize(plan), k = kSize(plan);
        Qs = base;
        dOs = base + q;
        Ks = base + 2 * q;
        Kt = base + 2 * q + k;
        Vt = base + 2 * q + 2 * k;
        delta = base + 2 * q + 3 * k;
    }
};

// Softmax backward of row m over the columns [band.begin, band.end) of a tile starting at key c: s holds the raw
// scores Q K^T and ds the products dO V^T; afterwards s holds P and ds holds dS = P (dP - delta) * rowScale, the
// gradient of the bias-and-scores before the logn factor. With dist (indexed by m - n), adds dS per distance.
inline void softmaxBackwardRow(const Plan& plan, int h, int m, int c, ColumnBand band, float* s, float* ds, float lse,
                               float delta, double* dist)
{
    plan.scoreRow(s + band.begin, h, m, c + band.begin, band.end - band.begin);
    const Vec shift = splat(lse), dl = splat(delta);
    const float g = plan.rowScale[m];
    for (int j = band.begin; j < band.end; j += kLanes) {
        const Vec p = expNonPositive(vmin(load(s + j) - shift, splat(0.0f)));
        store(s + j, p);
        store(ds + j, p * (load(ds + j) - dl) * g);
    }
    if (dist) {
        const int lo = std::max(plan.rowBegin[m], c + band.begin), hi = std::min(plan.rowEnd[m], c + band.end);
        double* at = dist + m;
        for (int n = lo; n < hi; ++n)
            at[-n] += ds[n - c];
    }
}

// Backward pass 1, one key block of one head: recomputes P and dS for every query that sees these keys and
// accumulates dK and dV (which belong to this item alone).
// With `dQ` (the head's (N, Dp) accumulator) it also adds dS K to the queries' rows, and with `dist` (indexed by
// r = m - n) the bias gradient: the single-pass FlashAttention-2 backward for a head owned by one thread.
void backwardKeyBlock(const Plan& plan, int h, int n0, const BackwardPacks& pk, const float* lse, Scratch& sc,
                      float* dk, float* dv, float* dQ = nullptr, double* dist = nullptr)
{
    const int N = plan.N, D = plan.D, Dp = plan.Dp;
    const int n1 = std::min(N, n0 + kBackKeyBlock);
    const int wk = roundUp(n1 - n0, kLanes);
    // Key ranges are intervals whose ends never decrease with m, so the queries seeing [n0, n1) are an interval.
    const int* begin = plan.rowBegin.data();
    const int* end = plan.rowEnd.data();
    const int mA = static_cast<int>(std::partition_point(end, end + N, [&](int e) { return e <= n0; }) - end);
    const int mB = static_cast<int>(std::partition_point(begin, begin + N, [&](int b) { return b < n1; }) - begin);
    constexpr size_t ldS = kKeyBlock;
    float* S = sc.scores.data();
    float* dP = sc.dscores.data();
    float* dK = sc.acc2.data();
    float* dV = sc.acc3.data();
    std::fill(dK, dK + static_cast<size_t>(wk) * Dp, 0.0f);
    std::fill(dV, dV + static_cast<size_t>(wk) * Dp, 0.0f);
    ColumnBand bands[kQueryTiles]; // per register tile of queries: the key columns its rows see
    ColumnBand byKey[kKeyTiles];   // per register tile of keys: the queries that see them
    for (int q0 = mA; q0 < mB; q0 += kQueryBlock) {
        const int R = std::min(kQueryBlock, mB - q0);
        queryBands(plan, q0, R, n0, wk, bands);
        keyBands(plan, n0, wk, q0, R, byKey);
        gemmNTBanded(pk.Qs + static_cast<size_t>(q0) * Dp, Dp, pk.Kt + n0, plan.ldT, Dp, R, wk, bands, S, ldS);
        gemmNTBanded(pk.dOs + static_cast<size_t>(q0) * Dp, Dp, pk.Vt + n0, plan.ldT, Dp, R, wk, bands, dP, ldS);
        for (int i = 0; i < R; ++i) {
            const ColumnBand band = bands[i / kRowTile];
            float* s = S + i * ldS;
            float* ds = dP + i * ldS;
            // The products over queries below read whole rows: cells outside the band are zero.
            std::fill(s, s + band.begin, 0.0f);
            std::fill(ds, ds + band.begin, 0.0f);
            std::fill(s + band.end, s + wk, 0.0f);
            std::fill(ds + band.end, ds + wk, 0.0f);
            if (band.end > band.begin)
                softmaxBackwardRow(plan, h, q0 + i, n0, band, s, ds, lse[q0 + i], pk.delta[q0 + i], dist);
        }
        // dV += P^T dO, dK += dS^T (Q / sqrt(D)): A(i = key, j = query) = tile[j][i].
        gemmNNBanded(S, 1, ldS, pk.dOs + static_cast<size_t>(q0) * Dp, Dp, R, wk, Dp, byKey, dV, Dp, nullptr);
        gemmNNBanded(dP, 1, ldS, pk.Qs + static_cast<size_t>(q0) * Dp, Dp, R, wk, Dp, byKey, dK, Dp, nullptr);
        if (dQ)
            gemmNNBanded(dP, ldS, 1, pk.Ks + static_cast<size_t>(n0) * Dp, Dp, wk, R, Dp, bands,
                         dQ + static_cast<size_t>(q0) * Dp, Dp, nullptr);
    }
    for (int n = n0; n < n1; ++n) {
        const float* kRow = dK + static_cast<size_t>(n - n0) * Dp;
        const float* vRow = dV + static_cast<size_t>(n - n0) * Dp;
        std::copy(vRow, vRow + D, dv + static_cast<size_t>(n) * D);
        float* target = dk + static_cast<size_t>(n) * D;
        if (plan.rotary.active())
            plan.rotary.applyRow(kRow, target, n, true, true);
        else
            std::copy(kRow, kRow + D, target);
    }
}

// Backward pass 2, one query block of one head: recomputes P and dS over the visible keys and accumulates dQ
// (this item's alone) and, for trainable biases, the bias gradient per distance into `dist` (at r - distBase).
void backwardQueryBlock(const Plan& plan, int h, int m0, const BackwardPacks& pk, const float* lse, Scratch& sc,
                        float* dq, double* dist, int distBase)
{
    const int N = plan.N, Dp = plan.Dp;
    const int R = std::min(kQueryBlock, N - m0);
    const int keyEnd = plan.rowEnd[m0 + R - 1];
    constexpr size_t ldS = kKeyBlock;
    float* S = sc.scores.data();
    float* dP = sc.dscores.data();
    float* dQ = sc.acc.data();
    std::fill(dQ, dQ + static_cast<size_t>(R) * Dp, 0.0f);
    ColumnBand bands[kQueryTiles]; // per register tile of rows: the key columns they see in the current tile
    for (int c = plan.blockKeyBegin(m0); c < keyEnd; c += kKeyBlock) {
        const int w = std::min(kKeyBlock, roundUp(keyEnd - c, kLanes));
        queryBands(plan, m0, R, c, w, bands);
        gemmNTBanded(pk.Qs + static_cast<size_t>(m0) * Dp, Dp, pk.Kt + c, plan.ldT, Dp, R, w, bands, S, ldS);
        gemmNTBanded(pk.dOs + static_cast<size_t>(m0) * Dp, Dp, pk.Vt + c, plan.ldT, Dp, R, w, bands, dP, ldS);
        for (int i = 0; i < R; ++i) {
            const ColumnBand band = bands[i / kRowTile];
            if (band.end > band.begin)
                softmaxBackwardRow(plan, h, m0 + i, c, band, S + i * ldS, dP + i * ldS, lse[m0 + i], pk.delta[m0 + i],
                                   dist ? dist - distBase : nullptr);
        }
        gemmNNBanded(dP, ldS, 1, pk.Ks + static_cast<size_t>(c) * Dp, Dp, w, R, Dp, bands, dQ, Dp, nullptr);
    }
    writeQueryGradient(plan, dQ, m0, m0 + R, dq);
}

// ---- backward strategies ----

// One attentionBackward call: the plan, the caller's tensors, the gradients it writes.
struct BackwardCall {
    const Plan& plan;
    const float *q, *k, *v, *dOut;
    const AttentionForward& forward;
    AttentionGradients& grads;
    bool trainable = false; // the bias has parameters: accumulate the gradient per distance
    size_t headSize = 0, distStride = 0;
    int heads = 0;

    BackwardCall(const Plan& p, const float* q_, const float* k_, const float* v_, const float* dOut_,
                 const AttentionForward& f, AttentionGradients& g)
        : plan(p), q(q_), k(k_), v(v_), dOut(dOut_), forward(f), grads(g)
    {
        trainable = detail::hasTrainableBias(plan.bias.spec());
        headSize = static_cast<size_t>(plan.N) * plan.D;
        distStride = static_cast<size_t>(2 * plan.N - 1);
        heads = plan.dims.batch * plan.dims.heads;
    }

    const float* lse(int bh) const { return forward.logSumExp.data() + static_cast<size_t>(bh) * plan.N; }

    // Packs `input` of head bh into `pk`.
    void pack(const BackwardPacks& pk, int bh, BackwardInput input) const
    {
        const float* kh = k + bh * headSize;
        switch (input) {
        case BackwardInput::Queries:
            packRows(plan, q + bh * headSize, pk.Qs, false, true, plan.invSqrtD);
            break;
        case BackwardInput::KeyRows:
            packRows(plan, kh, pk.Ks, true, true, 1.0f);
            break;
        case BackwardInput::KeyColumns:
            packTransposed(plan, kh, pk.Kt, true, true);
            break;
        case BackwardInput::ValueColumns:
            packTransposed(plan, v + bh * headSize, pk.Vt, false, false);
            break;
        case BackwardInput::OutputGradient: {
            packRows(plan, dOut + bh * headSize, pk.dOs, false, false, 1.0f);
            // delta_m = dO_m . O_m, the softmax backward's row term.
            const float* o = forward.out.data() + bh * headSize;
            const float* dO = dOut + bh * headSize;
            for (int m = 0; m < plan.N; ++m) {
                double sum = 0;
                for (int d = 0; d < plan.D; ++d)
                    sum += static_cast<double>(dO[m * plan.D + d]) * o[m * plan.D + d];
                pk.delta[m] = static_cast<float>(sum);
            }
            break;
        }
        }
    }
};

// Enough heads to keep every thread busy: each (batch, head) belongs to one thread, which packs it and runs the
// single-pass backward over its key blocks (dQ accumulated in place, bias gradient per head). Adds the bias gradient
// per (head, distance) to distanceGrad.
void backwardHeadParallel(const BackwardCall& call, std::vector<double>& distanceGrad)
{
    const Plan& plan = call.plan;
    const int N = plan.N, keyBlocks = (N + kBackKeyBlock - 1) / kBackKeyBlock;
    std::vector<std::vector<double>> headDist(call.trainable ? call.heads : 0);
#pragma omp parallel if (plan.worthThreads(call.heads))
    {
        Scratch scratch(plan.Dp);
        std::vector<float> buffers(BackwardPacks::floats(plan), 0.0f);
        const BackwardPacks pk(plan, buffers.data());
        std::vector<float> dQ(BackwardPacks::qSize(plan));
#pragma omp for schedule(dynamic)
        for (int bh = 0; bh < call.heads; ++bh) {
            for (BackwardInput input : kBackwardInputs)
                call.pack(pk, bh, input);
            std::fill(dQ.begin(), dQ.end(), 0.0f);
            double* dist = nullptr;
            if (call.trainable) {
                headDist[bh].assign(call.distStride, 0.0);
                dist = headDist[bh].data() + (N - 1);
            }
            for (int block = 0; block < keyBlocks; ++block)
                backwardKeyBlock(plan, bh % plan.dims.heads, block * kBackKeyBlock, pk, call.lse(bh), scratch,
                                 call.grads.dk.data() + bh * call.headSize, call.grads.dv.data() + bh * call.headSize,
                                 dQ.data(), dist);
            writeQueryGradient(plan, dQ.data(), 0, N, call.grads.dq.data() + bh * call.headSize);
        }
    }
    for (int bh = 0; call.trainable && bh < call.heads; ++bh) // fixed order: the same sum for any thread count
        for (size_t i = 0; i < call.distStride; ++i)
            distanceGrad[(bh % plan.dims.heads) * call.distStride + i] += headDist[bh][i];
}

// The bias gradient of the two-pass backward: one buffer per (head of the group, query block) over the distances the
// block can touch, summed in a fixed order afterwards, so the result does not depend on the thread count.
struct QueryBlockDistances {
    int queryBlocks = 0;
    std::vector<std::vector<double>> buffers;
    std::vector<int> bases; // distance r of each buffer's first entry

    QueryBlockDistances(bool trainable, int group, int blocks)
        : queryBlocks(blocks), buffers(trainable ? group * blocks : 0), bases(buffers.size(), 0)
    {
    }
    // Zeroed buffer for block `block` of group member g, indexed by r - base; null when nothing is trainable.
    double* start(const Plan& plan, int g, int block, int& base)
    {
        base = 0;
        if (buffers.empty())
            return nullptr;
        const int m0 = block * kQueryBlock, last = std::min(plan.N, m0 + kQueryBlock) - 1;
        base = m0 - (plan.rowEnd[last] - 1); // r = m - n over the block's rows and visible keys
        std::vector<double>& buffer = buffers[g * queryBlocks + block];
        buffer.assign(last - plan.rowBegin[m0] - base + 1, 0.0);
        bases[g * queryBlocks + block] = base;
        return buffer.data();
    }
    // Adds member g's buffers to `target` (indexed by r).
    void addTo(int g, double* target) const
    {
        for (int block = 0; block < queryBlocks; ++block) {
            const std::vector<double>& buffer = buffers[g * queryBlocks + block];
            for (size_t i = 0; i < buffer.size(); ++i)
                target[bases[g * queryBlocks + block] + static_cast<int>(i)] += buffer[i];
        }
    }
};

// Few heads: parallel over key blocks (dK, dV) and query blocks (dQ, bias) of a group of heads, in two passes that
// recompute the scores, so every output still has exactly one writer. Adds the bias gradient to distanceGrad.
void backwardTwoPass(const BackwardCall& call, std::vector<double>& distanceGrad)
{
    const Plan& plan = call.plan;
    const int N = plan.N, H = plan.dims.heads;
    const size_t perHead = BackwardPacks::floats(plan);
    const int group = groupSize(plan.dims, perHead * sizeof(float), size_t(32) << 20);
    std::vector<float> buffers(group * perHead, 0.0f);
    const int keyBlocks = (N + kBackKeyBlock - 1) / kBackKeyBlock, queryBlocks = (N + kQueryBlock - 1) / kQueryBlock;
    QueryBlockDistances distances(call.trainable, group, queryBlocks);
#pragma omp parallel if (plan.worthThreads(call.heads))
    {
        Scratch scratch(plan.Dp);
        for (int first = 0; first < call.heads; first += group) {
            const int count = std::min(group, call.heads - first);
#pragma omp for schedule(dynamic)
            for (int task = 0; task < kBackwardInputCount * count; ++task)
                call.pack(BackwardPacks(plan, buffers.data() + (task / kBackwardInputCount) * perHead),
                          first + task / kBackwardInputCount, kBackwardInputs[task % kBackwardInputCount]);
            const int pass1 = count * keyBlocks;
#pragma omp for schedule(dynamic)
            for (int item = 0; item < pass1 + count * queryBlocks; ++item) {
                const bool keyItem = item < pass1;
                const int index = keyItem ? item : item - pass1;
                const int g = index % count, bh = first + g;
                const int block = (keyItem ? keyBlocks : queryBlocks) - 1 - index / count;
                const BackwardPacks pk(plan, buffers.data() + g * perHead);
                if (keyItem) {
                    backwardKeyBlock(plan, bh % H, block * kBackKeyBlock, pk, call.lse(bh), scratch,
                                     call.grads.dk.data() + bh * call.headSize,
                                     call.grads.dv.data() + bh * call.headSize);
                    continue;
                }
                int base = 0;
                double* dist = distances.start(plan, g, block, base);
                backwardQueryBlock(plan, bh % H, block * kQueryBlock, pk, call.lse(bh), scratch,
                                   call.grads.dq.data() + bh * call.headSize, dist, base);
            }
            if (call.trainable) {
#pragma omp single
                for (int g = 0; g < count; ++g)
                    distances.addTo(g, distanceGrad.data() + ((first + g) % H) * call.distStride + (N - 1));
            }
        }
    }
}

} // namespace

AttentionForward attentionForward(const PositionBias& bias, const AttentionDims& dims, const float* q, const float* k,
                                  const float* v, const AttentionOptions& options)
{
    AttentionForward result;
    attentionForward(bias, dims, q, k, v, result, options);
    return result;
}

namespace {

// attentionForward for one pass (rows a pass hides entirely get lse = -inf and an undefined output).
void forwardPass(const PositionBias& bias, const AttentionDims& dims, const Pass& pass, const float* q, const float* k,
                 const float* v, AttentionForward& result, const AttentionOptions& options)
{
    const Plan plan(bias, dims, detail::rotaryFrequencies(bias.spec(), dims.headDim, dims.length), pass);
    const size_t rows = static_cast<size_t>(dims.batch) * dims.heads * dims.length;
    // Every element of out, logSumExp and rowEntropy is written by exactly one query block, so these need no fill;
    // probabilities are written only over visited tiles, so masked cells must be zeroed first.
    result.out.resize(dims.elements());
    result.logSumExp.resize(rows);
    if (options.wantProbabilities)
        result.probabilities.assign(rows * dims.length, 0.0f);
    else
        result.probabilities.clear();
    if (options.wantRowEntropy)
        result.rowEntropy.resize(rows);
    else
        result.rowEntropy.clear();
    const ForwardCall call(plan, q, k, v, result, options);
    if (call.heads >= kHeadParallelMin)
        forwardHeadParallel(call);
    else
        forwardQueryBlockParallel(call);
}

// Folds the results of a second pass into `total` (the first pass's): one softmax over the union of their keys.
// Per row, with weights w_j = exp(lse_j - lse): out = sum_j w_j out_j, probabilities w_j P_j (disjoint supports),
// entropy sum_j w_j (H_j - log w_j).
void mergePass(AttentionForward& total, const AttentionForward& extra, const AttentionDims& dims)
{
    const size_t rows = total.logSumExp.size();
    const int N = dims.length, D = dims.headDim;
    const bool probs = !total.probabilities.empty(), entropy = !total.rowEntropy.empty();
#pragma omp parallel for schedule(static) if (rows > 4096)
    for (size_t row = 0; row < rows; ++row) {
        const float a = total.logSumExp[row], b = extra.logSumExp[row];
        if (b == PositionBias::kMasked)
            continue;
        float* out = total.out.data() + row * D;
        const float* more = extra.out.data() + row * D;
        if (a == PositionBias::kMasked) {
            std::copy(more, more + D, out);
            total.logSumExp[row] = b;
            if (entropy)
                total.rowEntropy[row] = extra.rowEntropy[row];
            if (probs)
                std::copy(extra.probabilities.begin() + row * N, extra.probabilities.begin() + (row + 1) * N,
                          total.probabilities.begin() + row * N);
            continue;
        }
        const double top = std::max(a, b);
        const double lse = top + std::log(std::exp(a - top) + std::exp(b - top));
        const double wa = std::exp(a - lse), wb = std::exp(b - lse);
        for (int d = 0; d < D; ++d)
            out[d] = static_cast<float>(wa * out[d] + wb * more[d]);
        if (entropy) {
            const double ha = total.rowEntropy[row], hb = extra.rowEntropy[row];
            total.rowEntropy[row] = static_cast<float>((wa > 0 ? wa * (ha - std::log(wa)) : 0.0) +
                                                       (wb > 0 ? wb * (hb - std::log(wb)) : 0.0));
        }
        if (probs) {
            float* p = total.probabilities.data() + row * N;
            const float* pe = extra.probabilities.data() + row * N;
            for (int n = 0; n < N; ++n)
                p[n] = static_cast<float>(wa * p[n] + wb * pe[n]);
        }
        total.logSumExp[row] = static_cast<float>(lse);
    }
}

} // namespace

void attentionForward(const PositionBias& bias, const AttentionDims& dims, const float* q, const float* k,
                      const float* v, AttentionForward& result, const AttentionOptions& options)
{
    detail::validateAttention(bias, dims);
    const std::vector<Pass> passes = passesOf(bias, dims.length);
    forwardPass(bias, dims, passes[0], q, k, v, result, options);
    for (size_t i = 1; i < passes.size(); ++i) {
        AttentionForward extra;
        forwardPass(bias, dims, passes[i], q, k, v, extra, options);
        mergePass(result, extra, dims);
    }
}

std::vector<double> attentionRowEntropies(const PositionBias& bias, int head, int length, const float* q,
                                          const float* k, int headDim)
{
    if (head < 0 || head >= bias.heads())
        throw InputError("head = " + std::to_string(head) + " is out of range; allowed: integers in [0, " +
                         std::to_string(bias.heads() - 1) + "]");
    // Bias alone: q = k = 0 of a token dimension (2, so rotary schemes pass validation; nothing is rotated).
    const bool biasOnly = q == nullptr || k == nullptr;
    const AttentionDims dims{1, bias.heads(), length, biasOnly ? 2 : headDim};
    detail::validateAttention(bias, dims);
    AttentionForward total; // only logSumExp and rowEntropy (out stays empty: D = 0 for the merge)
    const AttentionDims statsDims{1, 1, length, 0};
    bool first = true;
    // q and k arrive unrotated, as in attentionForward: each pass rotates them at its positions.
    const detail::RotaryFrequencies frequencies =
        biasOnly ? detail::RotaryFrequencies{} : detail::rotaryFrequencies(bias.spec(), headDim, length);
    for (const Pass& pass : passesOf(bias, length)) {
        const Plan plan(bias, dims, frequencies, pass);
        const size_t qSize = static_cast<size_t>(plan.queriesPadded) * plan.Dp;
        const size_t kSize = static_cast<size_t>(plan.ldT) * plan.Dp;
        std::vector<float> Qs(qSize, 0.0f), Kt(kSize, 0.0f);
        if (!biasOnly) {
            packRows(plan, q, Qs.data(), false, true, plan.invSqrtD);
            packTransposed(plan, k, Kt.data(), true, true);
        }
        AttentionForward part;
        part.logSumExp.resize(length);
        part.rowEntropy.resize(length);
        BlockIO io;
        io.Q = Qs.data();
        io.Kt = {Kt.data(), size_t(plan.ldT), 0};
        io.lse = part.logSumExp.data();
        io.entropy = part.rowEntropy.data();
        const int queryBlocks = (length + kQueryBlock - 1) / kQueryBlock;
#pragma omp parallel if (plan.worthThreads(1))
        {
            Scratch scratch(plan.Dp);
#pragma omp for schedule(dynamic)
            for (int item = 0; item < queryBlocks; ++item)
                forwardBlock(plan, head, (queryBlocks - 1 - item) * kQueryBlock, io, scratch);
        }
        if (first)
            total = std::move(part);
        else
            mergePass(total, part, statsDims);
        first = false;
    }
    return {total.rowEntropy.begin(), total.rowEntropy.end()};
}

AttentionGradients attentionBackward(const PositionBias& bias, const AttentionDims& dims, const float* q,
                                     const float* k, const float* v, const AttentionForward& forward, const float* dOut)
{
    AttentionGradients grads;
    attentionBackward(bias, dims, q, k, v, forward, dOut, grads);
    return grads;
}

namespace {

// attentionBackward for one pass, with the forward's out and lse of the whole call: a pass's probabilities are then
// already its share of the joint softmax, and so are its gradients.
void backwardPass(const PositionBias& bias, const AttentionDims& dims, const Pass& pass, const float* q, const float* k,
                  const float* v, const AttentionForward& forward, const float* dOut, AttentionGradients& grads)
{
    const Plan plan(bias, dims, detail::rotaryFrequencies(bias.spec(), dims.headDim, dims.length), pass);
    // Every element of dq, dk and dv is written once: dk, dv by the key block owning the row, dq by the head's
    // (or the query block's) final write. The bias gradients are assigned for their schemes and empty otherwise.
    grads.dq.resize(dims.elements());
    grads.dk.resize(dims.elements());
    grads.dv.resize(dims.elements());
    const BackwardCall call(plan, q, k, v, dOut, forward, grads);
    std::vector<double> distanceGrad(call.trainable ? dims.heads * call.distStride : 0, 0.0);
    if (call.heads >= kHeadParallelMin)
        backwardHeadParallel(call, distanceGrad);
    else
        backwardTwoPass(call, distanceGrad);
    detail::biasParameterGradients(bias, distanceGrad, dims.length, grads.dT5Values, grads.dKerpleR1, grads.dKerpleR2);
}

} // namespace

void attentionBackward(const PositionBias& bias, const AttentionDims& dims, const float* q, const float* k,
                       const float* v, const AttentionForward& forward, const float* dOut, AttentionGradients& grads)
{
    detail::validateAttention(bias, dims);
    if (forward.out.size() != dims.elements() || forward.logSumExp.size() != dims.elements() / dims.headDim)
        throw InputError("attentionBackward: the forward result does not match the dimensions");
    const std::vector<Pass> passes = passesOf(bias, dims.length);
    backwardPass(bias, dims, passes[0], q, k, v, forward, dOut, grads);
    for (size_t i = 1; i < passes.size(); ++i) {
        AttentionGradients extra;
        backwardPass(bias, dims, passes[i], q, k, v, forward, dOut, extra);
        const size_t count = grads.dq.size();
#pragma omp parallel for schedule(static) if (count > 65536)
        for (size_t e = 0; e < count; ++e) {
            grads.dq[e] += extra.dq[e];
            grads.dk[e] += extra.dk[e];
            grads.dv[e] += extra.dv[e];
        }
    }
}

} // namespace plab
