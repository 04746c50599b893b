// The kernel's SIMD mappings: one 16-float vector on AVX-512 (a zmm register), AVX2 or SSE (two halves), and e^x.
#pragma once

#include "base/aligned_allocator.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__AVX__)
#include <immintrin.h>
#elif defined(__SSE__)
#include <xmmintrin.h>
#endif

// GCC/Clang vector extensions, 16 floats (one AVX-512 register, two AVX2 ones). Internal to the kernel
// (core/attention).
namespace plab::kernel {

constexpr int kLanes = 16;

// ---- memory: every buffer the tiles read starts on a cache line (AlignedFloats, base/aligned_allocator.h) ----

constexpr size_t kCacheLine = 64;
static_assert(static_cast<size_t>(AlignedAllocator<float>::kAlignment) == kCacheLine);

inline bool isCacheLineAligned(const void* p)
{
    return reinterpret_cast<uintptr_t>(p) % kCacheLine == 0;
}

// ---- subnormals: flushed to zero while the kernel runs ----

// Flush-to-zero and denormals-are-zero (MXCSR bits 0x8000 and 0x0040) on the calling thread for the guard's lifetime,
// the thread's own setting restored after. Every worker thread of the kernel holds one in its parallel region.
// Why: under a steep bias (ALiBi's slopes) most p = e^(s - max) of a tile are tiny, and the products p v and the
// running sums then pass through subnormal numbers, which Intel cores handle in microcode assists, each costing
// about a hundred cycles: on an Emerald Rapids Xeon the forward ran 26-36% faster with them flushed, the backward
// 14-30%. Why the results do not change beyond the tests' tolerances: a subnormal is below 2^-126 = 1.2e-38 in
// magnitude, and every softmax row has a term p = 1 at its maximum (sum >= 1), so flushing a product or a sum term
// changes an output, a log-sum-exp or a gradient by less than N * 1.2e-38 times the largest |v| (or |dO|), many
// orders below float rounding (6e-8 relative); inputs q, k, v that are themselves subnormal read as 0 likewise.
// e^x itself never returns a subnormal (below kExpLowest it is exactly 0).
class SubnormalsFlushed {
public:
    SubnormalsFlushed()
    {
#if defined(__SSE__)
        saved_ = _mm_getcsr();
        _mm_setcsr(saved_ | kFlushBits);
#endif
    }
    ~SubnormalsFlushed()
    {
#if defined(__SSE__)
        _mm_setcsr(saved_);
#endif
    }
    SubnormalsFlushed(const SubnormalsFlushed&) = delete;
    SubnormalsFlushed& operator=(const SubnormalsFlushed&) = delete;

private:
    static constexpr unsigned kFlushBits = 0x8040; // FTZ | DAZ
    unsigned saved_ = 0;
};

// ---- the vector ----
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

} // namespace plab::kernel
