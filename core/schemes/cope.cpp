// CoPE's double twin: each causal row is computed whole in double (O(length) scratch per row, never a length x
// length buffer), forward and backward, OpenMP over the (batch, head) slices; the oracle of the blocked fast path.
#include "schemes/cope.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace plab {

namespace {

double dot(const float* a, const float* b, int n)
{
    double sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int d = 0; d < n; ++d)
        sum += static_cast<double>(a[d]) * b[d];
    return sum;
}

double sigmoid(double x)
{
    return x >= 0 ? 1.0 / (1.0 + std::exp(-x)) : std::exp(x) / (1.0 + std::exp(x));
}

} // namespace

void copeRow(const CopeDims& dims, const float* qRow, const float* keys, const float* embeddings, int i, CopeRow& row)
{
    const int D = dims.headDim, P = dims.nposMax, n = i + 1;
    const double scale = 1.0 / std::sqrt(static_cast<double>(D));
    row.logits.resize(n);
    row.gates.resize(n);
    row.positions.resize(n);
    row.bias.resize(n);
    row.scores.resize(n);
    for (int j = 0; j < n; ++j) {
        row.logits[j] = dot(qRow, keys + static_cast<size_t>(j) * D, D) * scale;
        row.gates[j] = sigmoid(row.logits[j]);
    }
    // p_ij = Σ_{t=j..i} g_it: the reverse cumulative sum along the row, in double so long rows keep their fractions.
    double sum = 0;
    for (int j = i; j >= 0; --j) {
        sum += row.gates[j];
        row.positions[j] = std::min(sum, static_cast<double>(P - 1));
    }
    // p_ij <= i + 1, so z is needed at integer positions 0 .. min(i + 1, P - 1) only.
    const int reach = std::min(i + 2, P);
    row.z.assign(reach, 0.0);
    for (int d = 0; embeddings && d < D; ++d) {
        const float* e = embeddings + static_cast<size_t>(d) * P;
        const double qd = qRow[d];
        for (int p = 0; p < reach; ++p)
            row.z[p] += qd * e[p];
    }
    for (int j = 0; j < n; ++j) {
        const double p = row.positions[j];
        const int lo = static_cast<int>(std::floor(p)), hi = static_cast<int>(std::ceil(p));
        row.bias[j] = row.z[lo] + (p - lo) * (row.z[hi] - row.z[lo]);
        row.scores[j] = row.logits[j] + row.bias[j];
    }
}

void copeAttentionForward(const CopeDims& dims, const float* q, const float* k, const float* v, const float* embeddings,
                          float* out, float* logSumExp, float* probabilities, float* rowEntropy)
{
    const int T = dims.length, D = dims.headDim;
    const size_t sliceSize = static_cast<size_t>(T) * D;
#pragma omp parallel for schedule(dynamic, 1)
    for (int s = 0; s < dims.slices; ++s) {
        CopeRow row;
        std::vector<double> weights(T), acc(D);
        const float* keys = k + s * sliceSize;
        const float* values = v + s * sliceSize;
        for (int i = 0; i < T; ++i) {
            const size_t rowIndex = static_cast<size_t>(s) * T + i;
            copeRow(dims, q + s * sliceSize + static_cast<size_t>(i) * D, keys, embeddings, i, row);
            const double top = *std::max_element(row.scores.begin(), row.scores.end());
            double total = 0;
            for (int j = 0; j <= i; ++j)
                total += weights[j] = std::exp(row.scores[j] - top);
            const double lse = top + std::log(total);
            std::fill(acc.begin(), acc.end(), 0.0);
            double entropy = 0;
            for (int j = 0; j <= i; ++j) {
                const double p = weights[j] / total;
                weights[j] = p;
                const float* vj = values + static_cast<size_t>(j) * D;
                for (int d = 0; d < D; ++d)
                    acc[d] += p * vj[d];
                if (p > 0)
                    entropy -= p * (row.scores[j] - lse);
            }
            for (int d = 0; d < D; ++d)
                out[rowIndex * D + d] = static_cast<float>(acc[d]);
            logSumExp[rowIndex] = static_cast<float>(lse);
            if (rowEntropy)
                rowEntropy[rowIndex] = static_cast<float>(entropy);
            if (probabilities) {
                float* pRow = probabilities + rowIndex * T;
                for (int j = 0; j < T; ++j)
                    pRow[j] = j <= i ? static_cast<float>(weights[j]) : 0.0f;
            }
        }
    }
}

namespace {

// One slice's sums and one row's work vectors in the reference backward, all in double.
struct CopeSliceGradients {
    std::vector<double> dScore, dPos, dz, dqRow; // per key of the row, per bin, per dimension
    std::vector<double> dk, dv;                  // (T, D) of the slice
    CopeSliceGradients(int T, int D, int P, size_t sliceSize)
        : dScore(T), dPos(T), dz(std::min(T + 1, P)), dqRow(D), dk(sliceSize, 0.0), dv(sliceSize, 0.0)
    {
    }
};

// Row i's d loss / d score (the gates' share included) into g.dScore, d loss / d z into g.dz, and P_i^T dO_i into dV.
void rowScoreGradients(int i, int D, const CopeRow& row, const float* go, double lse, double delta, const float* values,
                       CopeSliceGradients& g)
{
    std::fill(g.dz.begin(), g.dz.begin() + static_cast<int>(row.z.size()), 0.0);
    for (int j = 0; j <= i; ++j) {
        const double prob = std::exp(row.scores[j] - lse);
        const float* vj = values + static_cast<size_t>(j) * D;
        double* dvj = g.dv.data() + static_cast<size_t>(j) * D;
        for (int d = 0; d < D; ++d)
            dvj[d] += prob * go[d];
        const double ds = prob * (dot(go, vj, D) - delta); // d loss / d (a_ij + bias_ij)
        g.dScore[j] = ds;
        // bias = z[lo] + w (z[hi] - z[lo]), w = p - lo: into z and, through w, into the position.
        const double p = row.positions[j];
        const int lo = static_cast<int>(std::floor(p)), hi = static_cast<int>(std::ceil(p));
        const double w = p - lo;
        g.dz[lo] += (1 - w) * ds;
        g.dz[hi] += w * ds;
        // The clamp passes no gradient past nposMax - 1 (there lo = hi, so this is 0 anyway).
        g.dPos[j] = (row.z[hi] - row.z[lo]) * ds;
    }
    // p_ij = Σ_{t=j..i} g_it, so d loss / d g_it = Σ_{j<=t} d loss / d p_ij: a forward cumulative sum; the gate's
    // logit is the score's too, so its gradient joins dScore.
    double prefix = 0;
    for (int t = 0; t <= i; ++t) {
        prefix += g.dPos[t];
        g.dScore[t] += prefix * row.gates[t] * (1 - row.gates[t]);
    }
}

// From row i's dScore and dz: dq_i into g.dqRow, and the row's shares of dK and dE (z_i[p] = q_i · E[:, p]).
void rowInputGradients(int i, int D, int P, int reach, double scale, const float* qi, const float* keys,
                       const float* embeddings, CopeSliceGradients& g, std::vector<double>& dE)
{
    std::fill(g.dqRow.begin(), g.dqRow.end(), 0.0);
    for (int j = 0; j <= i; ++j) {
        const double da = g.dScore[j] * scale; // a_ij = q_i·k_j / √D
        const float* kj = keys + static_cast<size_t>(j) * D;
        double* dkj = g.dk.data() + static_cast<size_t>(j) * D;
        for (int d = 0; d < D; ++d) {
            g.dqRow[d] += da * kj[d];
            dkj[d] += da * qi[d];
        }
    }
    for (int d = 0; embeddings && d < D; ++d) {
        const float* e = embeddings + static_cast<size_t>(d) * P;
        double* de = dE.data() + static_cast<size_t>(d) * P;
        double sum = 0;
        for (int p = 0; p < reach; ++p) {
            sum += g.dz[p] * e[p];
            de[p] += g.dz[p] * qi[d];
        }
        g.dqRow[d] += sum;
    }
    for (int d = 0; !embeddings && d < D; ++d) // E = 0: z has no gradient into q, but E has one
        for (int p = 0; p < reach; ++p)
            dE[static_cast<size_t>(d) * P + p] += g.dz[p] * qi[d];
}

} // namespace

void copeAttentionBackward(const CopeDims& dims, const float* q, const float* k, const float* v,
                           const float* embeddings, const float* out, const float* logSumExp, const float* dOut,
                           float* dq, float* dk, float* dv, double* dEmbeddings)
{
    const int T = dims.length, D = dims.headDim, P = dims.nposMax;
    const size_t sliceSize = static_cast<size_t>(T) * D, tableSize = static_cast<size_t>(D) * P;
    const double scale = 1.0 / std::sqrt(static_cast<double>(D));
    // E's gradient per slice, summed in slice order below: the same sums for any thread count.
    std::vector<std::vector<double>> sliceDE(dims.slices);
#pragma omp parallel for schedule(dynamic, 1)
    for (int s = 0; s < dims.slices; ++s) {
        CopeRow row;
        CopeSliceGradients g(T, D, P, sliceSize);
        std::vector<double>& dE = sliceDE[s];
        dE.assign(tableSize, 0.0);
        const float* keys = k + s * sliceSize;
        for (int i = 0; i < T; ++i) {
            const size_t rowIndex = static_cast<size_t>(s) * T + i;
            const float* qi = q + rowIndex * D;
            const float* go = dOut + rowIndex * D;
            copeRow(dims, qi, keys, embeddings, i, row);
            const double delta = dot(go, out + rowIndex * D, D); // Σ_j P_ij dP_ij = dO_i · out_i
            rowScoreGradients(i, D, row, go, logSumExp[rowIndex], delta, v + s * sliceSize, g);
            rowInputGradients(i, D, P, static_cast<int>(row.z.size()), scale, qi, keys, embeddings, g, dE);
            for (int d = 0; d < D; ++d)
                dq[rowIndex * D + d] = static_cast<float>(g.dqRow[d]);
        }
        for (size_t e = 0; e < sliceSize; ++e) {
            dk[s * sliceSize + e] = static_cast<float>(g.dk[e]);
            dv[s * sliceSize + e] = static_cast<float>(g.dv[e]);
        }
    }
    std::fill(dEmbeddings, dEmbeddings + tableSize, 0.0);
    for (const std::vector<double>& part : sliceDE)
        for (size_t e = 0; e < tableSize; ++e)
            dEmbeddings[e] += part[e];
}

} // namespace plab
