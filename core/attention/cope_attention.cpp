// CoPE's fast exact attention (cope_attention.h): per block of query rows, float matrix products (Eigen) for q k^T,
// dO v^T, q E, P v and the gradients; per row, in 16-lane vectors where the work is lane-parallel and in scalar
// double where it is a running sum, the gates, positions, interpolation and softmax of core/schemes/cope.h.
#include "attention/cope_attention.h"

#include "attention/simd.h"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace plab {

using namespace kernel;

namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatrixView = Eigen::Map<RowMatrix, 0, Eigen::OuterStride<>>;
using ConstMatrixView = Eigen::Map<const RowMatrix, 0, Eigen::OuterStride<>>;

// Query rows per block: the block's score rows (32 x N floats, 512 KiB at N = 4096) and its products stay in L2.
// Measured at N = 4096, H = 8, D = 64, 2 threads: 16 and 64 rows were slower (smaller products; a block past L2).
constexpr int kBlockRows = 32;

MatrixView view(float* data, int rows, int cols, int stride)
{
    return MatrixView(data, rows, cols, Eigen::OuterStride<>(stride));
}

ConstMatrixView constView(const float* data, int rows, int cols, int stride)
{
    return ConstMatrixView(data, rows, cols, Eigen::OuterStride<>(stride));
}

int roundUpTo(int x, int m)
{
    return (x + m - 1) / m * m;
}

constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();

// σ(a) of 16 lanes from t = e^-|a|, which never overflows: 1 / (1 + t) for a >= 0, t / (1 + t) below.
inline Vec sigmoidLanes(Vec a)
{
    const Vec t = expNonPositive(vmin(a, splat(0.0f) - a));
    return select(a >= 0.0f, splat(1.0f), t) / (splat(1.0f) + t);
}

// One row's positions as the backward needs them again: ⌊p⌋, w = p - ⌊p⌋ and z[⌈p⌉] - z[⌊p⌋] per key.
struct RowPositions {
    std::vector<int> floor;
    std::vector<float> weight, step;
};

// Row i's scores (count = i + 1 keys) in place: `s` holds q_i·k_j on entry and a_ij + bias_ij on return, `gates` gets
// g_ij; `z` is z_i at integer positions; `keep` (may be null) gets the positions. The formula is copeRow's
// (core/schemes/cope.h); the reverse cumulative sum runs in double, as there, so a long row keeps its fractions.
void scoreRow(const float* z, float scale, int count, int lastPosition, float* s, float* gates, RowPositions* keep)
{
    const Vec scaleLanes = splat(scale);
    for (int j = 0; j < count; j += kLanes) {
        const Vec a = load(s + j) * scaleLanes;
        store(s + j, a);
        store(gates + j, sigmoidLanes(a));
    }
    double sum = 0;
    const double top = lastPosition;
    for (int j = count - 1; j >= 0; --j) {
        sum += gates[j];
        const double p = std::min(sum, top);
        const int lo = static_cast<int>(p); // p >= 0: truncation is the floor
        const float w = static_cast<float>(p - lo);
        const float zLo = z[lo], step = w > 0 ? z[lo + 1] - zLo : 0.0f;
        s[j] += zLo + w * step;
        if (keep) {
            keep->floor[j] = lo;
            keep->weight[j] = w;
            keep->step[j] = step;
        }
    }
}

// -inf in the lanes of the row's last 16-lane chunk past its keys, so the vector passes can read whole chunks.
void maskTail(float* s, int count)
{
    std::fill(s + count, s + roundUpTo(count, kLanes), kMinusInfinity);
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
    AlignedFloats scores, second, z, gates; // second: the backward's dO v^T, then d score
    std::vector<float> dz;
    std::vector<double> dzRow;
    RowPositions positions;
    void reserveRow(int width)
    {
        if (static_cast<int>(gates.size()) < width) {
            gates.resize(width);
            positions.floor.resize(width);
            positions.weight.resize(width);
            positions.step.resize(width);
        }
    }
};

} // namespace

void copeBlockedForward(const CopeDims& dims, const float* q, const float* k, const float* v, const float* embeddings,
                        float* out, float* logSumExp, float* probabilities, float* rowEntropy)
{
    const int T = dims.length, D = dims.headDim, P = dims.nposMax;
    const size_t sliceSize = static_cast<size_t>(T) * D;
    const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(D)));
    const int blocks = (T + kBlockRows - 1) / kBlockRows, tasks = blocks * dims.slices;
#pragma omp parallel
    {
        const SubnormalsFlushed flushed;
        BlockScratch scratch;
        // The longest blocks first, so the last tasks to start are short ones.
#pragma omp for schedule(dynamic, 1)
        for (int task = 0; task < tasks; ++task) {
            const int b = blocks - 1 - task / dims.slices, s = task % dims.slices;
            const int i0 = b * kBlockRows, rows = std::min(kBlockRows, T - i0), n = i0 + rows;
            const int ld = roundUpTo(n, kLanes), reach = std::min(n + 1, P);
            const float* keys = k + s * sliceSize;
            const ConstMatrixView queries = constView(q + s * sliceSize + static_cast<size_t>(i0) * D, rows, D, D);
            scratch.scores.resize(static_cast<size_t>(rows) * ld);
            scratch.z.resize(static_cast<size_t>(rows) * reach);
            scratch.reserveRow(ld);
            MatrixView scores = view(scratch.scores.data(), rows, n, ld);
            scores.noalias() = queries * constView(keys, n, D, D).transpose();
            MatrixView z = view(scratch.z.data(), rows, reach, reach);
            if (embeddings)
                z.noalias() = queries * constView(embeddings, D, reach, P);
            else
                z.setZero();
            for (int r = 0; r < rows; ++r) {
                const int i = i0 + r, count = i + 1, width = roundUpTo(count, kLanes);
                const size_t rowIndex = static_cast<size_t>(s) * T + i;
                float* row = scratch.scores.data() + static_cast<size_t>(r) * ld;
                scoreRow(scratch.z.data() + static_cast<size_t>(r) * reach, scale, count, P - 1, row,
                         scratch.gates.data(), nullptr);
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
                std::fill(row + std::min(width, n), row + n, 0.0f); // keys past the diagonal weigh nothing in P v
                logSumExp[rowIndex] = static_cast<float>(top + std::log(total));
                if (rowEntropy) // H = -Σ p (s - lse) = ln total - Σ e (s - top) / total
                    rowEntropy[rowIndex] = static_cast<float>(std::log(total) - weighted / total);
                if (probabilities) {
                    float* pRow = probabilities + rowIndex * T;
                    std::copy(row, row + count, pRow);
                    std::fill(pRow + count, pRow + T, 0.0f);
                }
            }
            view(out + (static_cast<size_t>(s) * T + i0) * D, rows, D, D).noalias() =
                scores * constView(v + s * sliceSize, n, D, D);
        }
    }
}

void copeBlockedBackward(const CopeDims& dims, const float* q, const float* k, const float* v, const float* embeddings,
                         const float* out, const float* logSumExp, const float* dOut, float* dq, float* dk, float* dv,
                         double* dEmbeddings)
{
    const int T = dims.length, D = dims.headDim, P = dims.nposMax;
    const size_t sliceSize = static_cast<size_t>(T) * D, tableSize = static_cast<size_t>(D) * P;
    const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(D)));
    const int blocks = (T + kBlockRows - 1) / kBlockRows;
    // E's gradient per slice, summed in slice order below: the same sums for any thread count.
    std::vector<std::vector<double>> sliceDE(dims.slices);
#pragma omp parallel
    {
        const SubnormalsFlushed flushed;
        BlockScratch scratch;
        RowMatrix tableGradient; // (D, reach) of one block, added to the slice's double sums
#pragma omp for schedule(dynamic, 1)
        for (int s = 0; s < dims.slices; ++s) {
            std::vector<double>& dE = sliceDE[s];
            dE.assign(tableSize, 0.0);
            const size_t base = s * sliceSize;
            MatrixView dKeys = view(dk + base, T, D, D), dValues = view(dv + base, T, D, D);
            dKeys.setZero();
            dValues.setZero();
            for (int b = 0; b < blocks; ++b) {
                const int i0 = b * kBlockRows, rows = std::min(kBlockRows, T - i0), n = i0 + rows;
                const int ld = roundUpTo(n, kLanes), reach = std::min(n + 1, P);
                const size_t first = base + static_cast<size_t>(i0) * D;
                const ConstMatrixView queries = constView(q + first, rows, D, D);
                const ConstMatrixView gradOut = constView(dOut + first, rows, D, D);
                const ConstMatrixView keys = constView(k + base, n, D, D);
                scratch.scores.resize(static_cast<size_t>(rows) * ld);
                scratch.second.resize(static_cast<size_t>(rows) * ld);
                scratch.z.resize(static_cast<size_t>(rows) * reach);
                scratch.dz.assign(static_cast<size_t>(rows) * reach, 0.0f);
                scratch.dzRow.resize(reach + 1); // one past: the upper bin of a clamped position, weight 0
                scratch.reserveRow(ld);
                MatrixView probs = view(scratch.scores.data(), rows, n, ld);
                MatrixView dScores = view(scratch.second.data(), rows, n, ld);
                probs.noalias() = queries * keys.transpose();
                dScores.noalias() = gradOut * constView(v + base, n, D, D).transpose();
                MatrixView z = view(scratch.z.data(), rows, reach, reach);
                if (embeddings)
                    z.noalias() = queries * constView(embeddings, D, reach, P);
                else
                    z.setZero();
                for (int r = 0; r < rows; ++r) {
                    const int i = i0 + r, count = i + 1, width = roundUpTo(count, kLanes);
                    const size_t rowIndex = static_cast<size_t>(s) * T + i;
                    float* row = scratch.scores.data() + static_cast<size_t>(r) * ld;
                    float* dRow = scratch.second.data() + static_cast<size_t>(r) * ld;
                    const float* gates = scratch.gates.data();
                    const RowPositions& kept = scratch.positions;
                    scoreRow(scratch.z.data() + static_cast<size_t>(r) * reach, scale, count, P - 1, row,
                             scratch.gates.data(), &scratch.positions);
                    maskTail(row, count);
                    double delta = 0; // Σ_j P_ij dP_ij = dO_i · out_i
                    for (int d = 0; d < D; ++d)
                        delta += static_cast<double>(dOut[rowIndex * D + d]) * out[rowIndex * D + d];
                    const Vec lse = splat(logSumExp[rowIndex]), deltaLanes = splat(static_cast<float>(delta));
                    for (int j = 0; j < width; j += kLanes) {
                        const Vec prob = expNonPositive(load(row + j) - lse);
                        store(row + j, prob);
                        store(dRow + j, prob * (load(dRow + j) - deltaLanes)); // d loss / d (a_ij + bias_ij)
                    }
                    // Along the row: ds into z's bins (bias = z[lo] + w (z[lo + 1] - z[lo])) and, through w, into
                    // the position; p_ij = Σ_{t=j..i} g_it, so d loss / d g_it = Σ_{j<=t} d loss / d p_ij, a forward
                    // running sum that joins the gate's logit, the score's own. ⌊p⌋ falls as j rises, so each bin's
                    // sum is kept in a register until ⌊p⌋ moves on (no store-to-load chain per key).
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
                    std::fill(row + count, row + n, 0.0f); // keys past the diagonal: no gradient
                    std::fill(dRow + count, dRow + n, 0.0f);
                    std::copy(scratch.dzRow.begin(), scratch.dzRow.begin() + reach,
                              scratch.dz.begin() + static_cast<size_t>(r) * reach);
                }
                const ConstMatrixView dz = constView(scratch.dz.data(), rows, reach, reach);
                dValues.topRows(n).noalias() += probs.transpose() * gradOut;
                dKeys.topRows(n).noalias() += dScores.transpose() * queries;
                MatrixView dQueries = view(dq + first, rows, D, D);
                dQueries.noalias() = dScores * keys;
                if (embeddings) // z_i[p] = q_i · E[:, p]
                    dQueries.noalias() += dz * constView(embeddings, D, reach, P).transpose();
                tableGradient.noalias() = queries.transpose() * dz;
                for (int d = 0; d < D; ++d)
                    for (int p = 0; p < reach; ++p)
                        dE[static_cast<size_t>(d) * P + p] += tableGradient(d, p);
            }
        }
    }
    std::fill(dEmbeddings, dEmbeddings + tableSize, 0.0);
    for (const std::vector<double>& part : sliceDE)
        for (size_t e = 0; e < tableSize; ++e)
            dEmbeddings[e] += part[e];
}

} // namespace plab
