// The kernel's register tiles: small matrix products on packed, zero-padded tiles, with the mask/bias step fused in.
#pragma once

#include "attention/simd.h"
#include "schemes/position_bias.h"

#include <cstddef>

namespace plab::kernel {

// Rows and 16-column blocks per register tile. AVX-512: 6 x 4 accumulators + 4 B rows + 1 broadcast of 32 zmm
// registers. AVX2: 6 x 1 accumulators of two ymm halves + 2 for B + 1 broadcast of 16 ymm, the classic 6 x 16 shape
// (measured at N = 4096, causal ALiBi, 2 threads: 118 GFLOP/s; 3 x 2 and 2 x 2 spill and give 70, 4 x 1 gives 64).
constexpr int kRowTile = 6;
#if defined(__AVX512F__)
constexpr int kColTile = 4;
#else
constexpr int kColTile = 1;
#endif

// Gemma 2's soft cap of 16 scores, c tanh(s/c) (cap > 0): tanh|y| = (1 - t)/(1 + t) with t = e^(-2|y|) <= 1, so
// the kernel's e^x of non-positive arguments serves, and |result| < c for any finite s. Absolute error about c 2^-23.
inline Vec softcapLanes(Vec s, float cap)
{
    const Vec y = s * (1.0f / cap);
    const Vec a = vmax(y, splat(0.0f) - y);
    const Vec t = expNonPositive(splat(-2.0f) * a);
    const Vec magnitude = (splat(1.0f) - t) / (splat(1.0f) + t) * cap;
    return select(y < splat(0.0f), splat(0.0f) - magnitude, magnitude);
}

// The score formula, its one home: 16 raw products s = q . k of one row become (s * qkScale + b) * rowScale, with b
// the row's 16 additive biases (null: none) and rowScale its logn factor (1: none); s * qkScale + b is one fused
// multiply-add. With a soft cap c > 0 (SchemeSpec::softcap) that score then becomes c tanh(score / c).
inline Vec scoreFormula(Vec s, Vec qkScale, const float* bias, float rowScale, float softcap = 0.0f)
{
    s = bias ? fusedMultiplyAdd(s, qkScale, load(bias)) : s * qkScale;
    if (rowScale != 1.0f)
        s = s * rowScale;
    return softcap > 0.0f ? softcapLanes(s, softcap) : s;
}

// The derivative of the capped score by the uncapped one, 1 - tanh^2 = 1 - (capped / c)^2, from the capped scores
// (the backward holds only those); 0 in masked lanes (-inf), where p = 0 anyway.
inline Vec softcapSlope(Vec capped, float cap)
{
    const Vec y = capped * (1.0f / cap);
    return splat(1.0f) - vmin(y * y, splat(1.0f));
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

// The mask/bias step of 16 lanes (bias, rowScale: null for none; softcap 0: none).
inline Vec scoreLanes(Vec s, float qkScale, const float* bias, const float* rowScale, int lo, int hi,
                      float softcap = 0.0f)
{
    return maskLanes(scoreFormula(s, splat(qkScale), bias, rowScale ? *rowScale : 1.0f, softcap), lo, hi);
}

// The forward's mask/bias step, folded into the epilogue of its Q K^T products while the products are still in
// registers: row i of the query block gets its scores (scoreLanes) and its per-lane running maximum rowBest, without
// a pass over the stored tile. Pointers are offset to the block's first row; `column` is the tile's first key column.
struct TileScoring {
    const int* rowBegin = nullptr;
    const int* rowEnd = nullptr;
    const float* rowScale = nullptr; // null: no logn factor
    const float* bias = nullptr;     // null: no additive bias; else row i, tile column j at bias[j + i * biasRowStep]
    int biasRowStep = -1;            // -1: a reversed distance table; a tile's row stride: a bias tile (fire)
    float qkScale = 1.0f;
    float softcap = 0.0f; // the soft cap c of the scores; 0: none
    int column = 0;
    float* rowBest = nullptr; // (rows, 16)
};

// The one accumulator of every register tile: acc (RB x 16*CB) = A (RB x J) * B (J x 16*CB), A(r, j) = A[r*sai + j*saj]
// (any layout: rows of Q or dO with saj = 1, a score tile read transposed with sai = 1), B rows of stride ldb.
// Every loop over the register tile is unrolled in full (#pragma GCC unroll), and this function and its epilogues are
// always inlined into the tile: where GCC 12 leaves a loop rolled or `acc` behind a call, `acc` lives in memory, and
// each tile stores 24 zeros, spills 24 accumulators after the J loop and reloads them.
template <int RB, int CB>
[[gnu::always_inline]] inline void accumulateTile(Vec (&acc)[RB][CB], const float* A, size_t sai, size_t saj,
                                                  const float* B, size_t ldb, int J)
{
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
}

// The products' epilogue (Q K^T, dO V^T): C = acc, or with `scoring` the scores of rows row0.. of a query block at
// tile columns col0.. (the mask/bias step, TileScoring), each row's per-lane maximum kept in rowBest.
template <int RB, int CB>
[[gnu::always_inline]] inline void storeProducts(const Vec (&acc)[RB][CB], float* C, size_t ldc,
                                                 const TileScoring* scoring, int row0, int col0)
{
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
    // The common rows (no logn factor, no soft cap, no mask edge) take a branch-free path, decided once per row: tested
    // per vector, the general path's branches cost the causal ALiBi forward about 8% (Zen 4, N = 4096).
    const bool plainScores = !sc.rowScale && sc.softcap == 0.0f;
#pragma GCC unroll 8
    for (int r = 0; r < RB; ++r) {
        const int i = row0 + r;
        const int lo = sc.rowBegin[i] - sc.column - col0, hi = sc.rowEnd[i] - sc.column - col0; // visible, from C
        const bool masked = lo > 0 || hi < CB * kLanes;
        const float* bias = sc.bias ? sc.bias + (col0 + i * sc.biasRowStep) : nullptr;
        Vec best = load(sc.rowBest + i * kLanes);
        if (plainScores && !masked) {
            if (bias) {
#pragma GCC unroll 4
                for (int c = 0; c < CB; ++c) {
                    const Vec s = scoreFormula(acc[r][c], qkScale, bias + c * kLanes, 1.0f);
                    store(C + r * ldc + c * kLanes, s);
                    best = vmax(best, s);
                }
            } else {
#pragma GCC unroll 4
                for (int c = 0; c < CB; ++c) {
                    const Vec s = scoreFormula(acc[r][c], qkScale, nullptr, 1.0f);
                    store(C + r * ldc + c * kLanes, s);
                    best = vmax(best, s);
                }
            }
            store(sc.rowBest + i * kLanes, best);
            continue;
        }
        const float rowScale = sc.rowScale ? sc.rowScale[i] : 1.0f;
#pragma GCC unroll 4
        for (int c = 0; c < CB; ++c) {
            Vec s = scoreFormula(acc[r][c], qkScale, bias ? bias + c * kLanes : nullptr, rowScale, sc.softcap);
            if (masked)
                s = maskLanes(s, lo - c * kLanes, hi - c * kLanes);
            store(C + r * ldc + c * kLanes, s);
            best = vmax(best, s);
        }
        store(sc.rowBest + i * kLanes, best);
    }
}

// The accumulating epilogue (P V, the gradients): C = rowFactor .* C + acc (rowFactor null: C + acc).
template <int RB, int CB>
[[gnu::always_inline]] inline void addProducts(const Vec (&acc)[RB][CB], float* C, size_t ldc, const float* rowFactor)
{
#pragma GCC unroll 8
    for (int r = 0; r < RB; ++r)
#pragma GCC unroll 8
        for (int c = 0; c < CB; ++c) {
            float* out = C + r * ldc + c * kLanes;
            const Vec old = load(out);
            store(out, (rowFactor ? old * rowFactor[r] : old) + acc[r][c]);
        }
}

// C (RB x 16*CB) = A (RB x K, stride lda) * Bt (K x 16*CB, stride ldb), or its scores (storeProducts).
template <int RB, int CB>
[[gnu::always_inline]] inline void tileNT(const float* A, size_t lda, const float* Bt, size_t ldb, int K, float* C,
                                          size_t ldc, const TileScoring* scoring, int row0, int col0)
{
    Vec acc[RB][CB];
    accumulateTile(acc, A, lda, 1, Bt, ldb, K);
    storeProducts(acc, C, ldc, scoring, row0, col0);
}

// C (RB x 16*CB) = rowFactor .* C + A * B, A(i, j) = A[i*sai + j*saj] (any layout), B (J x 16*CB, stride ldb).
template <int RB, int CB>
inline void tileNN(const float* A, size_t sai, size_t saj, const float* B, size_t ldb, int J, float* C, size_t ldc,
                   const float* rowFactor)
{
    Vec acc[RB][CB];
    accumulateTile(acc, A, sai, saj, B, ldb, J);
    addProducts(acc, C, ldc, rowFactor);
}

inline int roundUp(int x, int m)
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

// One out-of-line function per column count with its six row counts' tiles inlined (tileNT is always inlined), the
// shape GCC chose when all of the kernel was one file: left to itself across the chapters it called tileNT out of line
// instead, and the forward lost 2-4% on Zen 4 (alternating runs, per CPU-second).
template <int CB>
[[gnu::noinline]] inline void tileNTRows(int rows, const float* A, size_t lda, const float* Bt, size_t ldb, int K,
                                         float* C, size_t ldc, const TileScoring* sc, int row0, int col0)
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
inline void gemmNTBanded(const float* A, size_t lda, const float* Bt, size_t ldb, int K, int rows, int w,
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
inline void tileNNRows(int rows, const float* A, size_t sai, size_t saj, const float* B, size_t ldb, int J, float* C,
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
inline void gemmNNBanded(const float* A, size_t sai, size_t saj, const float* B, size_t ldb, int J, int rows, int cols,
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

} // namespace plab::kernel
