// CoPE's fast exact attention (cope_attention.h): per block of query rows, float matrix products on the fused
// kernel's register tiles (tiles.h) for q k^T, dO v^T, q E, P v and the gradients; per row, in 16-lane vectors where
// the work is lane-parallel and in scalar double where it is a running sum, the gates, positions, interpolation and
// softmax of core/schemes/cope.h.
#include "attention/cope_attention.h"

#include "attention/simd.h"
#include "attention/tiles.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace plab {

using namespace kernel;

namespace {

// Query rows per block: the block's score rows (32 x N floats, 512 KiB at N = 4096) stay in L2. Measured at N = 4096,
// H = 8, D = 64, 2 threads: 64 rows were within 3% (forward 3% faster, backward 2% slower).
constexpr int kBlockRows = 32;

// Bands that let every register tile of `rows` rows see columns (or sum over j) [0, end): the blocks are dense.
std::vector<ColumnBand> wholeBands(int rows, int end)
{
    return std::vector<ColumnBand>((rows + kRowTile - 1) / kRowTile, ColumnBand{0, end});
}

// dst (cols, ld) = src (rows, cols; row stride srcStride) transposed, columns past `rows` zero: the B^T operand of
// gemmNTBanded, whose column count must be a multiple of 16.
void packTransposed(const float* src, int rows, int cols, size_t srcStride, int ld, AlignedFloats& dst)
{
    dst.assign(static_cast<size_t>(cols) * ld, 0.0f);
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c)
            dst[static_cast<size_t>(c) * ld + r] = src[r * srcStride + c];
}

// dst (rows, ld) = src (rows, cols) with zero columns past `cols`: the B operand of gemmNNBanded.
void packPadded(const float* src, int rows, int cols, int ld, AlignedFloats& dst)
{
    dst.assign(static_cast<size_t>(rows) * ld, 0.0f);
    for (int r = 0; r < rows; ++r)
        std::copy(src + static_cast<size_t>(r) * cols, src + static_cast<size_t>(r + 1) * cols,
                  dst.begin() + static_cast<size_t>(r) * ld);
}

constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();

// σ(a) of 16 lanes from t = e^-|a|, which never overflows: 1 / (1 + t) for a >= 0, t / (1 + t) below.
inline Vec sigmoidLanes(Vec a)
{
    const Vec t = expNonPositive(vmin(a, splat(0.0f) - a));
    return select(a >= 0.0f, splat(1.0f), t) / (splat(1.0f) + t);
}

// One row's positions: ⌊p⌋, w = p - ⌊p⌋ and z[⌈p⌉] - z[⌊p⌋] per key (the backward needs them again), and z's steps
// z[p + 1] - z[p] per integer position.
struct RowPositions {
    std::vector<int> floor;
    std::vector<float> weight, step, zStep;
};

// Eight doubles: the reverse cumulative sum runs on them, one lane per key.
using Double8 = double __attribute__((vector_size(64)));
using Int8 = int32_t __attribute__((vector_size(32)));

// Lane l gets x[l] + x[l + 1] + ... + x[7]: the suffix sums within eight lanes, in three shifted adds.
inline Double8 suffixSums(Double8 x)
{
    const Double8 zero = {};
    x += __builtin_shufflevector(x, zero, 1, 2, 3, 4, 5, 6, 7, 8);
    x += __builtin_shufflevector(x, zero, 2, 3, 4, 5, 6, 7, 8, 8);
    x += __builtin_shufflevector(x, zero, 4, 5, 6, 7, 8, 8, 8, 8);
    return x;
}

// Positions p = min(carry + suffix, top) of eight keys from `first` on: their floors and fractions into `keep`.
inline void storePositions(Double8 suffix, double carry, double top, int first, RowPositions& keep)
{
    const Double8 sum = suffix + carry, clamp = Double8{} + top;
    const Double8 p = sum < clamp ? sum : clamp;
    const Int8 lo = __builtin_convertvector(p, Int8); // p >= 0: truncation is the floor
    const Double8 w = p - __builtin_convertvector(lo, Double8);
    std::memcpy(keep.floor.data() + first, &lo, sizeof lo);
    const auto w8 = __builtin_convertvector(w, Vec8);
    std::memcpy(keep.weight.data() + first, &w8, sizeof w8);
}

// Row i's scores (count = i + 1 keys) in place: `s` holds q_i·k_j on entry and a_ij + bias_ij on return, `gates` gets
// g_ij, `keep` the positions; `z` is z_i at integer positions 0 .. reach - 1. The formula is copeRow's
// (core/schemes/cope.h). The reverse cumulative sum runs in double, as there, so a long row keeps its fractions:
// sixteen keys at a time from the diagonal down, suffix sums within each half, a carried total across chunks.
void scoreRow(const float* z, int reach, float scale, int count, int lastPosition, float* s, float* gates,
              RowPositions& keep)
{
    const Vec scaleLanes = splat(scale);
    for (int j = 0; j < count; j += kLanes) {
        const Vec a = load(s + j) * scaleLanes;
        store(s + j, a);
        store(gates + j, sigmoidLanes(a));
    }
    const double top = lastPosition;
    double carry = 0;
    for (int j = roundUp(count, kLanes) - kLanes; j >= 0; j -= kLanes) {
        const Vec g = select(iota() < static_cast<float>(count - j), load(gates + j), splat(0.0f)); // 0 past i
        const Double8 low = __builtin_convertvector(lowHalf(g), Double8);
        const Double8 high = suffixSums(__builtin_convertvector(highHalf(g), Double8));
        const Double8 lowSums = suffixSums(low) + high[0];
        storePositions(high, carry, top, j + 8, keep);
        storePositions(lowSums, carry, top, j, keep);
        carry += lowSums[0];
    }
    // bias = z[⌊p⌋] + w (z[⌊p⌋ + 1] - z[⌊p⌋]); at an integer p (w = 0, as where p clamps) the step is 0, as copeRow's
    // z[⌈p⌉] - z[⌊p⌋].
    float* zStep = keep.zStep.data();
    for (int p = 0; p + 1 < reach; ++p)
        zStep[p] = z[p + 1] - z[p];
    zStep[reach - 1] = 0;
    const int* floors = keep.floor.data();
    const float* weights = keep.weight.data();
    float* steps = keep.step.data();
    for (int j = 0; j < count; ++j) {
        const int lo = floors[j];
        const float w = weights[j], step = w > 0 ? zStep[lo] : 0.0f;
        steps[j] = step;
        s[j] += z[lo] + w * step;
    }
}

// -inf in the lanes of the row's last 16-lane chunk past its keys, so the vector passes can read whole chunks.
void maskTail(float* s, int count)
{
    std::fill(s + count, s + roundUp(count, kLanes), kMinusInfinity);
}

// The largest of s[0, width), width a multiple of 16.
float rowMaximum(const float* s, int width)
{
    Vec best = splat(kMinusInfinity);
    for (int j = 0; j < width; j += kLanes)
        best = vmax(best, load(s + j));
    return horizontalMax(best);
}

// Per-thread buffers of one row block, reused from block to block.
struct BlockScratch {
    AlignedFloats scores, second, z, dz, acc, table; // second: the backward's dO v^T, then d score
    AlignedFloats queries, gradOut;                  // the backward's block rows padded to 16-float rows
    std::vector<double> dzRow;
    std::vector<float> gates;
    RowPositions positions;
    void reserveRow(int width)
    {
        if (static_cast<int>(gates.size()) < width) {
            gates.resize(width);
            positions.floor.resize(width);
            positions.weight.resize(width);
            positions.step.resize(width);
            positions.zStep.resize(width + 1); // reach <= i + 2 <= width + 1
        }
    }
};

// E's columns 0 .. used - 1 (the positions a row of this length can reach; npos-max may be far larger) packed for both
// of its products: as B^T of z = q E (D, roundUp(used)) and as B of dz E^T (used, Dp).
struct PackedTable {
    AlignedFloats forward, transposed;
    int stride = 0;
    PackedTable(const float* embeddings, int D, int P, int used, int Dp)
    {
        if (!embeddings)
            return;
        stride = roundUp(used, kLanes);
        forward.assign(static_cast<size_t>(D) * stride, 0.0f);
        for (int d = 0; d < D; ++d)
            std::copy(embeddings + static_cast<size_t>(d) * P, embeddings + static_cast<size_t>(d) * P + used,
                      forward.begin() + static_cast<size_t>(d) * stride);
        packTransposed(embeddings, D, used, P, Dp, transposed);
    }
};

// z = q E for the block's rows (rows, ldz), zero without embeddings.
void positionLogits(const float* queries, int rows, int D, const PackedTable& table, float* z, int ldz)
{
    if (table.forward.empty()) {
        std::fill(z, z + static_cast<size_t>(rows) * ldz, 0.0f);
        return;
    }
    const std::vector<ColumnBand> bands = wholeBands(rows, ldz);
    gemmNTBanded(queries, D, table.forward.data(), table.stride, D, rows, ldz, bands.data(), z, ldz);
}

} // namespace

void copeBlockedForward(const CopeDims& dims, const float* q, const float* k, const float* v, const float* embeddings,
                        float* out, float* logSumExp, float* probabilities, float* rowEntropy)
{
    const int T = dims.length, D = dims.headDim, P = dims.nposMax, Dp = roundUp(D, kLanes), ldT = roundUp(T, kLanes);
    const size_t sliceSize = static_cast<size_t>(T) * D;
    const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(D)));
    const int blocks = (T + kBlockRows - 1) / kBlockRows, tasks = blocks * dims.slices;
    const int used = std::min(T + 1, P); // every reach is at most this
    const PackedTable table(embeddings, D, P, used, Dp);
    // Every slice's k^T (D, ldT) and v (T, Dp), packed once for all of its row blocks.
    std::vector<AlignedFloats> keysT(dims.slices), values(dims.slices);
#pragma omp parallel
    {
        const SubnormalsFlushed flushed;
#pragma omp for schedule(static)
        for (int s = 0; s < dims.slices; ++s) {
            packTransposed(k + s * sliceSize, T, D, D, ldT, keysT[s]);
            packPadded(v + s * sliceSize, T, D, Dp, values[s]);
        }
        BlockScratch scratch;
        // The longest blocks first, so the last tasks to start are short ones.
#pragma omp for schedule(dynamic, 1)
        for (int task = 0; task < tasks; ++task) {
            const int b = blocks - 1 - task / dims.slices, s = task % dims.slices;
            const int i0 = b * kBlockRows, rows = std::min(kBlockRows, T - i0), n = i0 + rows;
            const int ld = roundUp(n, kLanes), reach = std::min(n + 1, P), ldz = roundUp(reach, kLanes);
            const float* queries = q + s * sliceSize + static_cast<size_t>(i0) * D;
            scratch.scores.resize(static_cast<size_t>(rows) * ld);
            scratch.z.resize(static_cast<size_t>(rows) * ldz);
            scratch.acc.assign(static_cast<size_t>(rows) * Dp, 0.0f);
            scratch.reserveRow(ld);
            const std::vector<ColumnBand> bands = wholeBands(rows, ld);
            gemmNTBanded(queries, D, keysT[s].data(), ldT, D, rows, ld, bands.data(), scratch.scores.data(), ld);
            positionLogits(queries, rows, D, table, scratch.z.data(), ldz);
            for (int r = 0; r < rows; ++r) {
                const int i = i0 + r, count = i + 1, width = roundUp(count, kLanes);
                const size_t rowIndex = static_cast<size_t>(s) * T + i;
                float* row = scratch.scores.data() + static_cast<size_t>(r) * ld;
                scoreRow(scratch.z.data() + static_cast<size_t>(r) * ldz, std::min(i + 2, P), scale, count, P - 1, row,
                         scratch.gates.data(), scratch.positions);
                maskTail(row, count);
                const float top = rowMaximum(row, width);
                const Vec topLanes = splat(top);
                // The total in double over 16-lane partial sums: a long row adds thousands of terms.
                double total = 0, weighted = 0;
                for (int j = 0; j < width; j += kLanes) {
                    const Vec shifted = load(row + j) - topLanes;
                    const Vec e = expNonPositive(shifted);
                    store(row + j, e);
                    total += horizontalSum(e);
                    if (rowEntropy) // Σ e (s - top), with the masked lanes' 0 · -inf left out
                        weighted += horizontalSum(select(e > 0.0f, e * shifted, splat(0.0f)));
                }
                const Vec inverse = splat(static_cast<float>(1.0 / total));
                for (int j = 0; j < width; j += kLanes)
                    store(row + j, load(row + j) * inverse);
                std::fill(row + width, row + ld, 0.0f); // keys past the diagonal weigh nothing in P v
                logSumExp[rowIndex] = static_cast<float>(top + std::log(total));
                if (rowEntropy) // H = -Σ p (s - lse) = ln total - Σ e (s - top) / total
                    rowEntropy[rowIndex] = static_cast<float>(std::log(total) - weighted / total);
                if (probabilities) {
                    float* pRow = probabilities + rowIndex * T;
                    std::copy(row, row + count, pRow);
                    std::fill(pRow + count, pRow + T, 0.0f);
                }
            }
            const std::vector<ColumnBand> keyBands = wholeBands(rows, n);
            gemmNNBanded(scratch.scores.data(), ld, 1, values[s].data(), Dp, n, rows, Dp, keyBands.data(),
                         scratch.acc.data(), Dp, nullptr);
            for (int r = 0; r < rows; ++r)
                std::copy(scratch.acc.begin() + static_cast<size_t>(r) * Dp,
                          scratch.acc.begin() + static_cast<size_t>(r) * Dp + D,
                          out + (static_cast<size_t>(s) * T + i0 + r) * D);
        }
    }
}

namespace {

// One query row i of the backward, in place: the row's scores become P, dRow (dO v^T on entry) becomes d loss / d a,
// and the row's d loss / d z (reach bins) goes to dz. `z` is the row's position logits, `out` and `dOut` its rows.
void backwardRow(int i, int P, int D, int ld, float scale, float lseValue, const float* z, const float* out,
                 const float* dOut, float* row, float* dRow, float* dz, int reach, BlockScratch& scratch)
{
    const int count = i + 1, width = roundUp(count, kLanes);
    const float* gates = scratch.gates.data();
    const RowPositions& kept = scratch.positions;
    scoreRow(z, std::min(i + 2, P), scale, count, P - 1, row, scratch.gates.data(), scratch.positions);
    maskTail(row, count);
    double delta = 0; // Σ_j P_ij dP_ij = dO_i · out_i
    for (int d = 0; d < D; ++d)
        delta += static_cast<double>(dOut[d]) * out[d];
    const Vec lse = splat(lseValue), deltaLanes = splat(static_cast<float>(delta));
    for (int j = 0; j < width; j += kLanes) {
        const Vec prob = expNonPositive(load(row + j) - lse);
        store(row + j, prob);
        store(dRow + j, prob * (load(dRow + j) - deltaLanes)); // d loss / d (a_ij + bias_ij)
    }
    // Along the row: ds into z's bins (bias = z[lo] + w (z[lo + 1] - z[lo])) and, through w, into the position;
    // p_ij = Σ_{t=j..i} g_it, so d loss / d g_it = Σ_{j<=t} d loss / d p_ij, a forward running sum that joins the
    // gate's logit, the score's own. ⌊p⌋ falls as j rises, so each bin's sum is kept in a register until ⌊p⌋ moves on
    // (no store-to-load chain per key).
    std::fill(scratch.dzRow.begin(), scratch.dzRow.end(), 0.0);
    double prefix = 0, lower = 0, upper = 0;
    int bin = kept.floor[0];
    for (int t = 0; t < count; ++t) {
        const double ds = dRow[t];
        const int lo = kept.floor[t];
        if (lo != bin) {
            scratch.dzRow[bin] += lower;
            scratch.dzRow[bin + 1] += upper;
            bin = lo;
            lower = upper = 0;
        }
        const double w = kept.weight[t];
        lower += (1 - w) * ds;
        upper += w * ds;
        prefix += kept.step[t] * ds;
        const double g = gates[t];
        dRow[t] = static_cast<float>((ds + prefix * g * (1 - g)) * scale); // a_ij = q_i·k_j / √D
    }
    scratch.dzRow[bin] += lower;
    scratch.dzRow[bin + 1] += upper;
    std::fill(row + width, row + ld, 0.0f); // keys past the diagonal: no gradient
    std::fill(dRow + count, dRow + ld, 0.0f);
    std::copy(scratch.dzRow.begin(), scratch.dzRow.begin() + reach, dz);
}

// One slice's packed operands and (T, Dp) gradient sums over its keys.
struct SlicePacks {
    AlignedFloats keysT, valuesT, keys, dKeys, dValues;
};

// The products of one block of `rows` query rows from `i0` (n = i0 + rows keys), once its rows hold P and dS and dz
// is filled: dV, dK += P^T dO, dS^T q; dq = dS k + dz E^T; dE (D, reach) += q^T dz, accumulated in double into dE.
void blockProducts(int i0, int rows, int D, int Dp, int used, int reach, int ld, int ldz, const float* qBlock,
                   const PackedTable& table, BlockScratch& scratch, SlicePacks& packs, float* dqBlock,
                   std::vector<double>& dE)
{
    const int n = i0 + rows;
    // The score tiles read transposed (sai = 1, saj = ld).
    const std::vector<ColumnBand> queryBands = wholeBands(n, rows);
    gemmNNBanded(scratch.scores.data(), 1, ld, scratch.gradOut.data(), Dp, rows, n, Dp, queryBands.data(),
                 packs.dValues.data(), Dp, nullptr);
    gemmNNBanded(scratch.second.data(), 1, ld, scratch.queries.data(), Dp, rows, n, Dp, queryBands.data(),
                 packs.dKeys.data(), Dp, nullptr);
    // dq = dS k + dz E^T (z_i[p] = q_i · E[:, p]).
    scratch.acc.assign(static_cast<size_t>(rows) * Dp, 0.0f);
    const std::vector<ColumnBand> keyBands = wholeBands(rows, n);
    gemmNNBanded(scratch.second.data(), ld, 1, packs.keys.data(), Dp, n, rows, Dp, keyBands.data(), scratch.acc.data(),
                 Dp, nullptr);
    if (!table.transposed.empty()) {
        const std::vector<ColumnBand> binBands = wholeBands(rows, reach);
        gemmNNBanded(scratch.dz.data(), ldz, 1, table.transposed.data(), Dp, reach, rows, Dp, binBands.data(),
                     scratch.acc.data(), Dp, nullptr);
    }
    for (int r = 0; r < rows; ++r)
        std::copy(scratch.acc.begin() + static_cast<size_t>(r) * Dp,
                  scratch.acc.begin() + static_cast<size_t>(r) * Dp + D, dqBlock + r * D);
    // dE: q read transposed (sai = 1, saj = D), in float per block, then in double.
    scratch.table.assign(static_cast<size_t>(D) * ldz, 0.0f);
    const std::vector<ColumnBand> dimBands = wholeBands(D, rows);
    gemmNNBanded(qBlock, 1, D, scratch.dz.data(), ldz, rows, D, ldz, dimBands.data(), scratch.table.data(), ldz,
                 nullptr);
    for (int d = 0; d < D; ++d)
        for (int p = 0; p < reach; ++p)
            dE[static_cast<size_t>(d) * used + p] += scratch.table[static_cast<size_t>(d) * ldz + p];
}

} // namespace

void copeBlockedBackward(const CopeDims& dims, const float* q, const float* k, const float* v, const float* embeddings,
                         const float* out, const float* logSumExp, const float* dOut, float* dq, float* dk, float* dv,
                         double* dEmbeddings)
{
    const int T = dims.length, D = dims.headDim, P = dims.nposMax, Dp = roundUp(D, kLanes), ldT = roundUp(T, kLanes);
    const size_t sliceSize = static_cast<size_t>(T) * D, tableSize = static_cast<size_t>(D) * P;
    const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(D)));
    const int blocks = (T + kBlockRows - 1) / kBlockRows;
    const int used = std::min(T + 1, P); // every reach is at most this
    const PackedTable table(embeddings, D, P, used, Dp);
    // E's gradient per slice over its reachable columns (D, used), summed in slice order below: the same sums for any
    // thread count.
    std::vector<std::vector<double>> sliceDE(dims.slices);
#pragma omp parallel
    {
        const SubnormalsFlushed flushed;
        BlockScratch scratch;
        SlicePacks packs;
#pragma omp for schedule(dynamic, 1)
        for (int s = 0; s < dims.slices; ++s) {
            std::vector<double>& dE = sliceDE[s];
            dE.assign(static_cast<size_t>(D) * used, 0.0);
            const size_t base = s * sliceSize;
            packTransposed(k + base, T, D, D, ldT, packs.keysT);
            packTransposed(v + base, T, D, D, ldT, packs.valuesT);
            packPadded(k + base, T, D, Dp, packs.keys);
            packs.dKeys.assign(static_cast<size_t>(T) * Dp, 0.0f);
            packs.dValues.assign(static_cast<size_t>(T) * Dp, 0.0f);
            for (int b = 0; b < blocks; ++b) {
                const int i0 = b * kBlockRows, rows = std::min(kBlockRows, T - i0), n = i0 + rows;
                const int ld = roundUp(n, kLanes), reach = std::min(n + 1, P), ldz = roundUp(reach, kLanes);
                const size_t first = base + static_cast<size_t>(i0) * D;
                scratch.scores.resize(static_cast<size_t>(rows) * ld);
                scratch.second.resize(static_cast<size_t>(rows) * ld);
                scratch.z.resize(static_cast<size_t>(rows) * ldz);
                scratch.dz.assign(static_cast<size_t>(rows) * ldz, 0.0f);
                scratch.dzRow.resize(reach + 1); // one past: the upper bin of a clamped position, weight 0
                scratch.reserveRow(ld);
                packPadded(q + first, rows, D, Dp, scratch.queries);
                packPadded(dOut + first, rows, D, Dp, scratch.gradOut);
                const std::vector<ColumnBand> bands = wholeBands(rows, ld);
                gemmNTBanded(q + first, D, packs.keysT.data(), ldT, D, rows, ld, bands.data(), scratch.scores.data(),
                             ld);
                gemmNTBanded(dOut + first, D, packs.valuesT.data(), ldT, D, rows, ld, bands.data(),
                             scratch.second.data(), ld);
                positionLogits(q + first, rows, D, table, scratch.z.data(), ldz);
                for (int r = 0; r < rows; ++r) {
                    const size_t rowIndex = static_cast<size_t>(s) * T + i0 + r;
                    backwardRow(i0 + r, P, D, ld, scale, logSumExp[rowIndex],
                                scratch.z.data() + static_cast<size_t>(r) * ldz, out + rowIndex * D,
                                dOut + rowIndex * D, scratch.scores.data() + static_cast<size_t>(r) * ld,
                                scratch.second.data() + static_cast<size_t>(r) * ld,
                                scratch.dz.data() + static_cast<size_t>(r) * ldz, reach, scratch);
                }
                blockProducts(i0, rows, D, Dp, used, reach, ld, ldz, q + first, table, scratch, packs, dq + first, dE);
            }
            for (int t = 0; t < T; ++t) {
                std::copy(packs.dKeys.begin() + static_cast<size_t>(t) * Dp,
                          packs.dKeys.begin() + static_cast<size_t>(t) * Dp + D,
                          dk + base + static_cast<size_t>(t) * D);
                std::copy(packs.dValues.begin() + static_cast<size_t>(t) * Dp,
                          packs.dValues.begin() + static_cast<size_t>(t) * Dp + D,
                          dv + base + static_cast<size_t>(t) * D);
            }
        }
    }
    std::fill(dEmbeddings, dEmbeddings + tableSize, 0.0);
    for (const std::vector<double>& part : sliceDE)
        for (int d = 0; d < D; ++d)
            for (int p = 0; p < used; ++p)
                dEmbeddings[static_cast<size_t>(d) * P + p] += part[static_cast<size_t>(d) * used + p];
}

} // namespace plab
