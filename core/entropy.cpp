// Row entropies of attention distributions, streamed row block by row block (never an N x N matrix in memory).
#include "entropy.h"

#include "bias_views.h"
#include "errors.h"
#include "random.h"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>

namespace plab {

QkProvider randomQkProvider(const SchemeSpec& spec, int headDim, uint64_t seed)
{
    if (headDim < 1 || headDim > 4096)
        throw InputError("head-dim = " + std::to_string(headDim) + " is out of range; allowed: integers in [1, 4096]");
    if (spec.info().rotary && headDim % 2)
        throw InputError("head-dim = " + std::to_string(headDim) + " must be even for the rotary scheme " + spec.name());
    return [spec, headDim, seed](int length) {
        QkSample s;
        s.heads = spec.heads;
        s.length = length;
        s.headDim = headDim;
        const size_t perHead = static_cast<size_t>(length) * headDim;
        s.q.resize(perHead * spec.heads);
        s.k.resize(perHead * spec.heads);
        for (int h = 0; h < spec.heads; ++h) {
            Rng rngQ(seed * 1000003ULL + 2 * h);
            Rng rngK(seed * 1000003ULL + 2 * h + 1);
            for (size_t i = 0; i < perHead; ++i) {
                s.q[h * perHead + i] = static_cast<float>(rngQ.normal());
                s.k[h * perHead + i] = static_cast<float>(rngK.normal());
            }
            applyRotary(spec, s.q.data() + h * perHead, length, headDim, 0, false);
            applyRotary(spec, s.k.data() + h * perHead, length, headDim, 0, true);
        }
        return s;
    };
}

std::vector<double> rowEntropies(const PositionBias& bias, int head, int length, const float* q, const float* k, int headDim)
{
    using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    std::vector<double> entropy(length);
    const float* table = bias.distanceTable(head);
    const bool additive = bias.hasAdditive();
    const float invSqrtD = q ? 1.0f / std::sqrt(static_cast<float>(headDim)) : 0.0f;
    constexpr int kRowBlock = 64;
    const int blocks = (length + kRowBlock - 1) / kRowBlock;
#pragma omp parallel
    {
        RowMatrix scores;
        std::vector<double> row;
#pragma omp for schedule(dynamic)
        for (int b = 0; b < blocks; ++b) {
            const int m0 = b * kRowBlock;
            const int m1 = std::min(length, m0 + kRowBlock);
            const KeyRange first = bias.keyRange(m0, length);
            const KeyRange last = bias.keyRange(m1 - 1, length);
            const int n0 = first.begin;
            const int n1 = std::max(first.end, last.end);
            if (q) {
                Eigen::Map<const RowMatrix> Q(q + static_cast<size_t>(m0) * headDim, m1 - m0, headDim);
                Eigen::Map<const RowMatrix> K(k + static_cast<size_t>(n0) * headDim, n1 - n0, headDim);
                scores.noalias() = Q * K.transpose();
            }
            for (int m = m0; m < m1; ++m) {
                const KeyRange keys = bias.keyRange(m, length);
                const double scale = bias.rowScale(m);
                row.resize(keys.size());
                double maxScore = -INFINITY;
                for (int n = keys.begin; n < keys.end; ++n) {
                    double s = 0;
                    if (q)
                        s = scores(m - m0, n - n0) * invSqrtD;
                    if (additive)
                        s += table[m - n];
                    s *= scale;
                    row[n - keys.begin] = s;
                    maxScore = std::max(maxScore, s);
                }
                double z = 0, weighted = 0;
                for (double s : row) {
                    const double e = std::exp(s - maxScore);
                    z += e;
                    weighted += e * (s - maxScore);
                }
                entropy[m] = std::log(z) - weighted / z;
            }
        }
    }
    return entropy;
}

std::vector<EntropyPoint> entropyCurve(const SchemeSpec& spec, const std::vector<int>& lengths, const QkProvider& provider)
{
    if (lengths.empty())
        throw InputError("lengths: at least one length is needed");
    int maxLength = 0;
    for (int n : lengths) {
        if (n < 1 || n > kMaxLength)
            throw InputError("length = " + std::to_string(n) + " is out of range; allowed: integers in [1, " +
                             std::to_string(kMaxLength) + "]");
        maxLength = std::max(maxLength, n);
    }
    const PositionBias bias(spec, maxLength);
    std::vector<EntropyPoint> points;
    for (int n : lengths) {
        QkSample sample;
        if (provider) {
            // (H, N, D) twice, plus a block of scores per thread.
            checkMemoryEstimate(2.0 * 4.0 * spec.heads * n * 64 + 2.0 * 4.0 * 64 * n, "q and k at length " + std::to_string(n));
            sample = provider(n);
        }
        for (int h = 0; h < spec.heads; ++h) {
            const size_t offset = static_cast<size_t>(h) * n * sample.headDim;
            const std::vector<double> rows = rowEntropies(bias, h, n, provider ? sample.q.data() + offset : nullptr,
                                                          provider ? sample.k.data() + offset : nullptr, sample.headDim);
            double sum = 0;
            for (double e : rows)
                sum += e;
            points.push_back({n, h, rows.back(), sum / n});
        }
    }
    return points;
}

} // namespace plab
