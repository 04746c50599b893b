// A real model's attention maps, sinks and entropy by position, from the kernel's row normalisers and entropies.
#include "hf/hf_attention.h"

#include "base/errors.h"
#include "base/limits.h"

#include <cmath>
#include <limits>
#include <string>

namespace plab {

namespace {

// The kernel's score s(m, n) of query row `q` and key row `k` (attention.h): (q . k / sqrt(D) + b_h(m, n)) * rowScale.
float kernelScore(const PositionBias& bias, int head, int m, int n, const float* q, const float* k, int D, int length)
{
    float dot = 0;
    for (int d = 0; d < D; ++d)
        dot += q[d] * k[d];
    return (dot / std::sqrt(static_cast<float>(D)) + bias.additive(head, m, n)) * bias.rowScale(m, length);
}

void checkIndex(const char* what, int value, int count)
{
    if (value < 0 || value >= count)
        throw InputError(std::string(what) + " " + std::to_string(value) + " is out of range; allowed: 0.." +
                         std::to_string(count - 1));
}

} // namespace

HfAttentionCapture captureHfAttention(const HfModel& model, const std::vector<int>& ids, const SchemeSpec& positions,
                                      bool keepMaps, const HfAttentionProgress& progress)
{
    const HfConfig& c = model.config();
    HfAttentionCapture capture;
    capture.layers = c.layers;
    capture.heads = c.heads;
    capture.kvHeads = c.kvHeads;
    capture.length = static_cast<int>(ids.size());
    capture.headDim = c.headDim;
    const double T = static_cast<double>(ids.size());
    checkMemoryEstimate(4.0 * c.layers * T * (2.0 * c.heads + (keepMaps ? (c.heads + c.kvHeads) * c.headDim : 0)),
                        "the attention of " + std::to_string(ids.size()) + " tokens in " + std::to_string(c.layers) +
                            " layers of " + c.folder);
    capture.sinkMass.assign(static_cast<size_t>(c.layers) * c.heads, 0.0);
    const bool finished = model.observeAttention(ids, positions, [&](const HfLayerAttention& a) {
        const int H = a.dims.heads, N = a.dims.length, D = a.dims.headDim;
        if (a.layer == 0)
            capture.kernelScheme = a.bias.spec();
        capture.logSumExp.push_back(a.forward.logSumExp);
        capture.rowEntropy.push_back(a.forward.rowEntropy);
        if (keepMaps) {
            capture.q.emplace_back(a.q, a.q + static_cast<size_t>(H) * N * D);
            capture.k.emplace_back(a.k, a.k + static_cast<size_t>(a.dims.keyValueHeads()) * N * D);
        }
#pragma omp parallel for schedule(static)
        for (int h = 0; h < H; ++h) {
            const float* k0 = a.k + static_cast<size_t>(a.dims.keyValueSlice(h)) * N * D;
            double mass = 0;
            for (int m = 0; m < N; ++m) {
                const float s = kernelScore(a.bias, h, m, 0, a.q + (static_cast<size_t>(h) * N + m) * D, k0, D, N);
                mass += std::exp(static_cast<double>(s) - a.forward.logSumExp[static_cast<size_t>(h) * N + m]);
            }
            capture.sinkMass[static_cast<size_t>(a.layer) * H + h] = mass / N;
        }
        return !progress || progress(a.layer + 1, c.layers);
    });
    return finished ? capture : HfAttentionCapture{};
}

int HfAttentionMap::rowStart(int i) const
{
    return rowBegin + static_cast<int>(static_cast<int64_t>(rowEnd - rowBegin) * i / rows);
}

int HfAttentionMap::colStart(int j) const
{
    return colBegin + static_cast<int>(static_cast<int64_t>(colEnd - colBegin) * j / cols);
}

HfAttentionMap hfAttentionMap(const HfAttentionCapture& capture, int layer, int head, int maxCells, int rowBegin,
                              int rowEnd, int colBegin, int colEnd, bool sampleRows)
{
    if (!capture.hasMaps())
        throw InputError("the attention was captured without its maps; capture it again with them kept");
    checkIndex("layer", layer, capture.layers);
    checkIndex("head", head, capture.heads);
    checkIntegerRange("the map's cells per side", maxCells, 1, kMaxLength);
    const int T = capture.length, D = capture.headDim;
    if (rowEnd <= rowBegin) {
        rowBegin = colBegin = 0;
        rowEnd = colEnd = T;
    }
    if (rowBegin < 0 || rowEnd > T || colBegin < 0 || colEnd > T || colEnd <= colBegin)
        throw InputError("the map window rows [" + std::to_string(rowBegin) + ", " + std::to_string(rowEnd) +
                         ") x columns [" + std::to_string(colBegin) + ", " + std::to_string(colEnd) +
                         ") is outside the " + std::to_string(T) + " tokens; allowed: non-empty ranges in [0, " +
                         std::to_string(T) + "]");
    HfAttentionMap map;
    map.rowBegin = rowBegin;
    map.rowEnd = rowEnd;
    map.colBegin = colBegin;
    map.colEnd = colEnd;
    map.rows = std::min(rowEnd - rowBegin, maxCells);
    map.cols = std::min(colEnd - colBegin, maxCells);
    map.values.assign(static_cast<size_t>(map.rows) * map.cols, 0.0f);

    const PositionBias bias(capture.kernelScheme, T);
    const int groupSize = capture.heads / capture.kvHeads;
    const float* q = capture.q[layer].data() + static_cast<size_t>(head) * T * D;
    const float* k = capture.k[layer].data() + static_cast<size_t>(head / groupSize) * T * D;
    const float* lse = capture.logSumExp[layer].data() + static_cast<size_t>(head) * T;
    std::vector<int> colBlock(static_cast<size_t>(colEnd - colBegin));
    for (int j = 0; j < map.cols; ++j)
        for (int n = map.colStart(j); n < (j + 1 < map.cols ? map.colStart(j + 1) : colEnd); ++n)
            colBlock[n - colBegin] = j;
#pragma omp parallel for schedule(dynamic)
    for (int i = 0; i < map.rows; ++i) {
        std::vector<double> sum(map.cols, 0.0);
        std::vector<int> count(map.cols, 0);
        const int rowStop = i + 1 < map.rows ? map.rowStart(i + 1) : rowEnd;
        for (int m = sampleRows ? rowStop - 1 : map.rowStart(i); m < rowStop; ++m)
            for (int n = colBegin; n < colEnd; ++n) {
                if (!bias.visible(m, n, T))
                    continue;
                const float s =
                    kernelScore(bias, head, m, n, q + static_cast<size_t>(m) * D, k + static_cast<size_t>(n) * D, D, T);
                sum[colBlock[n - colBegin]] += std::exp(static_cast<double>(s) - lse[m]);
                ++count[colBlock[n - colBegin]];
            }
        for (int j = 0; j < map.cols; ++j)
            map.values[static_cast<size_t>(i) * map.cols + j] =
                count[j] ? static_cast<float>(sum[j] / count[j]) : -std::numeric_limits<float>::infinity();
    }
    return map;
}

std::vector<double> hfEntropyByPosition(const HfAttentionCapture& capture)
{
    const int T = capture.length, H = capture.heads;
    std::vector<double> out(static_cast<size_t>(capture.rowEntropy.size()) * T, 0.0);
    for (size_t l = 0; l < capture.rowEntropy.size(); ++l)
        for (int h = 0; h < H; ++h)
            for (int m = 0; m < T; ++m)
                out[l * T + m] += capture.rowEntropy[l][static_cast<size_t>(h) * T + m] / H;
    return out;
}

namespace {

// The capture of layer `layer` alone (as layer 0 of a one-layer capture, maps kept), the forward stopped after it;
// `out` receives the kernel's output when given.
HfAttentionCapture captureOneLayer(const HfModel& model, const std::vector<int>& ids, const SchemeSpec& positions,
                                   int layer, std::vector<float>* out)
{
    const HfConfig& c = model.config();
    checkIndex("layer", layer, c.layers);
    const double T = static_cast<double>(ids.size());
    checkMemoryEstimate(4.0 * T * ((c.heads + c.kvHeads) * c.headDim + 2.0 * c.heads),
                        "layer " + std::to_string(layer) + "'s attention of " + std::to_string(ids.size()) +
                            " tokens of " + c.folder);
    HfAttentionCapture capture;
    capture.layers = 1;
    capture.heads = c.heads;
    capture.kvHeads = c.kvHeads;
    capture.length = static_cast<int>(ids.size());
    capture.headDim = c.headDim;
    model.observeAttention(ids, positions, [&](const HfLayerAttention& a) {
        if (a.layer < layer)
            return true;
        const int H = a.dims.heads, N = a.dims.length, D = a.dims.headDim;
        capture.kernelScheme = a.bias.spec();
        capture.logSumExp.push_back(a.forward.logSumExp);
        capture.rowEntropy.push_back(a.forward.rowEntropy);
        capture.q.emplace_back(a.q, a.q + static_cast<size_t>(H) * N * D);
        capture.k.emplace_back(a.k, a.k + static_cast<size_t>(a.dims.keyValueHeads()) * N * D);
        if (out)
            *out = a.forward.out;
        return false;
    });
    return capture;
}

} // namespace

HfLayerAttentionResult hfLayerAttention(const HfModel& model, const std::vector<int>& ids, const SchemeSpec& positions,
                                        int layer, bool probabilities)
{
    const HfConfig& c = model.config();
    const int T = static_cast<int>(ids.size());
    if (probabilities)
        checkMemoryEstimate(4.0 * c.heads * double(T) * T,
                            "the probabilities (heads, T, T) of " + std::to_string(T) + " tokens");
    HfLayerAttentionResult result;
    const HfAttentionCapture capture = captureOneLayer(model, ids, positions, layer, &result.out);
    result.heads = c.heads;
    result.length = T;
    result.headDim = c.headDim;
    if (!probabilities)
        return result;
    result.probabilities.reserve(static_cast<size_t>(c.heads) * T * T);
    for (int h = 0; h < c.heads; ++h) {
        const HfAttentionMap map = hfAttentionMap(capture, 0, h, T); // one pair per cell: the exact probabilities
        for (float p : map.values)
            result.probabilities.push_back(std::isfinite(p) ? p : 0.0f); // -inf: the causal mask's pairs
    }
    return result;
}

std::vector<EntropyPoint> hfEntropyCurve(const HfModel& model, const std::vector<int>& ids, const SchemeSpec& positions,
                                         int layer, const std::vector<int>& lengths)
{
    checkIndex("layer", layer, model.config().layers);
    std::vector<EntropyPoint> points;
    for (const int n : lengths) {
        if (n < 1 || n > static_cast<int>(ids.size()))
            throw InputError("length " + std::to_string(n) + " is outside the text's " + std::to_string(ids.size()) +
                             " tokens; allowed: 1.." + std::to_string(ids.size()));
        const std::vector<int> window(ids.begin(), ids.begin() + n);
        const HfAttentionCapture capture = captureOneLayer(model, window, positions, layer, nullptr);
        const std::vector<float>& rows = capture.rowEntropy.front(); // (heads, n)
        for (int h = 0; h < capture.heads; ++h) {
            const float* row = rows.data() + static_cast<size_t>(h) * n;
            double sum = 0;
            for (int m = 0; m < n; ++m)
                sum += row[m];
            points.push_back({n, h, row[n - 1], sum / n});
        }
    }
    return points;
}

} // namespace plab
