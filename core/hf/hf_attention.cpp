// A real model's attention maps, sinks and entropy by position, from the kernel's row normalisers and entropies.
#include "hf/hf_attention.h"

#include "base/errors.h"
#include "base/limits.h"

#include <cmath>
#include <limits>
#include <string>

namespace plab {

namespace {

// The kernel's score s(m, n) of query row `q` and key row `k` (attention.h): (q . k / sqrt(D) + b_h(m, n)) * rowScale,
// soft-capped when the scheme caps.
float kernelScore(const PositionBias& bias, int head, int m, int n, const float* q, const float* k, int D, int length)
{
    float dot = 0;
    for (int d = 0; d < D; ++d)
        dot += q[d] * k[d];
    return static_cast<float>(PositionBias::capped(
        (dot / std::sqrt(static_cast<float>(D)) + bias.additive(head, m, n)) * bias.rowScale(m, length),
        bias.softcap()));
}

void checkIndex(const char* what, int value, int count)
{
    if (value < 0 || value >= count)
        throw InputError(std::string(what) + " " + std::to_string(value) + " is out of range; allowed: 0.." +
                         std::to_string(count - 1));
}

} // namespace

HfAttentionCapture captureHfAttention(const HfModel& model, const std::vector<int>& ids, const HfPositions& positions,
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
        capture.layerSchemes.push_back(a.bias.spec());
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
                // A sliding or chunked layer hides key 0 from the rows past its window: no mass there.
                const KeyRange keys = a.bias.keyRange(m, N), sinks = a.bias.sinkRange(m, N);
                if (!(keys.begin <= 0 && 0 < keys.end) && !(sinks.begin <= 0 && 0 < sinks.end))
                    continue;
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

// The inverse of rowStart: the largest i with rowStart(i) <= m.
int HfAttentionMap::rowBlock(int m) const
{
    return static_cast<int>((static_cast<int64_t>(m - rowBegin + 1) * rows - 1) / (rowEnd - rowBegin));
}

int HfAttentionMap::colBlock(int n) const
{
    return static_cast<int>((static_cast<int64_t>(n - colBegin + 1) * cols - 1) / (colEnd - colBegin));
}

namespace {

void checkWindow(int rowBegin, int rowEnd, int colBegin, int colEnd, int T)
{
    if (rowBegin < 0 || rowEnd > T || colBegin < 0 || colEnd > T || colEnd <= colBegin || rowEnd <= rowBegin)
        throw InputError("the map window rows [" + std::to_string(rowBegin) + ", " + std::to_string(rowEnd) +
                         ") x columns [" + std::to_string(colBegin) + ", " + std::to_string(colEnd) +
                         ") is outside the " + std::to_string(T) + " tokens; allowed: non-empty ranges in [0, " +
                         std::to_string(T) + "]");
}

HfAttentionMap emptyMap(int maxCells, int rowBegin, int rowEnd, int colBegin, int colEnd, HfMapReduce reduce)
{
    HfAttentionMap map;
    map.rowBegin = rowBegin;
    map.rowEnd = rowEnd;
    map.colBegin = colBegin;
    map.colEnd = colEnd;
    map.rows = std::min(rowEnd - rowBegin, maxCells);
    map.cols = std::min(colEnd - colBegin, maxCells);
    map.reduce = reduce;
    map.values.assign(static_cast<size_t>(map.rows) * map.cols, -std::numeric_limits<float>::infinity());
    return map;
}

} // namespace

HfAttentionMap hfAttentionMap(const HfAttentionCapture& capture, int layer, int head, int maxCells, int rowBegin,
                              int rowEnd, int colBegin, int colEnd, bool sampleRows, HfMapReduce reduce)
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
    checkWindow(rowBegin, rowEnd, colBegin, colEnd, T);
    HfAttentionMap map = emptyMap(maxCells, rowBegin, rowEnd, colBegin, colEnd, reduce);

    const PositionBias bias(capture.layerSchemes.at(static_cast<size_t>(layer)), T);
    const int groupSize = capture.heads / capture.kvHeads;
    const float* q = capture.q[layer].data() + static_cast<size_t>(head) * T * D;
    const float* k = capture.k[layer].data() + static_cast<size_t>(head / groupSize) * T * D;
    const float* lse = capture.logSumExp[layer].data() + static_cast<size_t>(head) * T;
    const float invSqrtD = 1.0f / std::sqrt(static_cast<float>(D));
    std::vector<int> colBlock(static_cast<size_t>(colEnd - colBegin));
    for (int n = colBegin; n < colEnd; ++n)
        colBlock[n - colBegin] = map.colBlock(n);
    std::vector<float> rowPeak(map.rows, 0.0f), rowPeakPastFirst(map.rows, 0.0f);
#pragma omp parallel for schedule(dynamic)
    for (int i = 0; i < map.rows; ++i) {
        std::vector<double> sum(reduce == HfMapReduce::Mean ? map.cols : 0, 0.0);
        std::vector<int> count(map.cols, 0);
        float* cell = map.values.data() + static_cast<size_t>(i) * map.cols;
        const int rowStop = i + 1 < map.rows ? map.rowStart(i + 1) : rowEnd;
        for (int m = sampleRows ? rowStop - 1 : map.rowStart(i); m < rowStop; ++m) {
            // The visible keys of row m are its mask interval and its sinks (disjoint), cut to the window: one score
            // each, as the kernel computes it (kernelScore), with the row's factors read once.
            const float scale = bias.rowScale(m, T);
            const float* qm = q + static_cast<size_t>(m) * D;
            for (const KeyRange& r : {bias.keyRange(m, T), bias.sinkRange(m, T)})
                for (int n = std::max(r.begin, colBegin); n < std::min(r.end, colEnd); ++n) {
                    const float* kn = k + static_cast<size_t>(n) * D;
                    float dot = 0;
                    for (int d = 0; d < D; ++d)
                        dot += qm[d] * kn[d];
                    const float s = static_cast<float>(
                        PositionBias::capped((dot * invSqrtD + bias.additive(head, m, n)) * scale, bias.softcap()));
                    const float p = std::exp(s - lse[m]);
                    const int j = colBlock[n - colBegin];
                    if (reduce == HfMapReduce::Mean)
                        sum[j] += p;
                    else if (count[j] == 0 || p > cell[j])
                        cell[j] = p;
                    ++count[j];
                    rowPeak[i] = std::max(rowPeak[i], p);
                    if (n > 0)
                        rowPeakPastFirst[i] = std::max(rowPeakPastFirst[i], p);
                }
        }
        if (reduce == HfMapReduce::Mean)
            for (int j = 0; j < map.cols; ++j)
                if (count[j])
                    cell[j] = static_cast<float>(sum[j] / count[j]);
    }
    for (int i = 0; i < map.rows; ++i) {
        map.peak = std::max(map.peak, rowPeak[i]);
        map.peakPastFirstKey = std::max(map.peakPastFirstKey, rowPeakPastFirst[i]);
    }
    return map;
}

HfAttentionMap hfResampleMap(const std::vector<const HfAttentionMap*>& sources, int maxCells, int rowBegin, int rowEnd,
                             int colBegin, int colEnd)
{
    if (sources.empty())
        throw InputError("no map to resample");
    for (const HfAttentionMap* source : sources)
        if (source->reduce != HfMapReduce::Max)
            throw InputError("only max maps can be resampled: a block's mean needs its pair counts");
    checkIntegerRange("the map's cells per side", maxCells, 1, kMaxLength);
    const HfAttentionMap& overview = *sources.back();
    if (rowBegin < overview.rowBegin || rowEnd > overview.rowEnd || colBegin < overview.colBegin ||
        colEnd > overview.colEnd || rowEnd <= rowBegin || colEnd <= colBegin)
        throw InputError("the map window rows [" + std::to_string(rowBegin) + ", " + std::to_string(rowEnd) +
                         ") x columns [" + std::to_string(colBegin) + ", " + std::to_string(colEnd) +
                         ") is outside the map it is resampled from; allowed: non-empty ranges inside rows [" +
                         std::to_string(overview.rowBegin) + ", " + std::to_string(overview.rowEnd) + ") x columns [" +
                         std::to_string(overview.colBegin) + ", " + std::to_string(overview.colEnd) + ")");
    HfAttentionMap map = emptyMap(maxCells, rowBegin, rowEnd, colBegin, colEnd, HfMapReduce::Max);
    map.peak = overview.peak;
    map.peakPastFirstKey = overview.peakPastFirstKey;
    // A source's block size along each axis (tokens, rounded up): a source serves a cell when it is no coarser.
    auto blockSize = [](int begin, int end, int cells) { return (end - begin + cells - 1) / cells; };
    const int cellRows = blockSize(rowBegin, rowEnd, map.rows), cellCols = blockSize(colBegin, colEnd, map.cols);
#pragma omp parallel for schedule(static)
    for (int i = 0; i < map.rows; ++i) {
        const int m0 = map.rowStart(i), m1 = i + 1 < map.rows ? map.rowStart(i + 1) : rowEnd;
        for (int j = 0; j < map.cols; ++j) {
            const int n0 = map.colStart(j), n1 = j + 1 < map.cols ? map.colStart(j + 1) : colEnd;
            const HfAttentionMap* from = &overview;
            for (const HfAttentionMap* source : sources)
                if (source->rowBegin <= m0 && m1 <= source->rowEnd && source->colBegin <= n0 && n1 <= source->colEnd &&
                    blockSize(source->rowBegin, source->rowEnd, source->rows) <= std::max(1, cellRows) &&
                    blockSize(source->colBegin, source->colEnd, source->cols) <= std::max(1, cellCols)) {
                    from = source;
                    break;
                }
            float best = -std::numeric_limits<float>::infinity();
            for (int a = from->rowBlock(m0); a <= from->rowBlock(m1 - 1); ++a)
                for (int b = from->colBlock(n0); b <= from->colBlock(n1 - 1); ++b)
                    best = std::max(best, from->values[static_cast<size_t>(a) * from->cols + b]);
            map.values[static_cast<size_t>(i) * map.cols + j] = best;
        }
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

std::vector<HfEntropyByType> hfEntropyByLayerType(const HfAttentionCapture& capture, const HfConfig& config)
{
    if (static_cast<int>(config.layerTypes.size()) != capture.layers)
        throw InputError("the capture has " + std::to_string(capture.layers) + " layers and " + config.folder +
                         " has " + std::to_string(config.layerTypes.size()) + "; allowed: a capture of every layer");
    const std::vector<double> byLayer = hfEntropyByPosition(capture);
    const int T = capture.length;
    std::vector<HfEntropyByType> out;
    for (const HfLayerType type : {HfLayerType::Full, HfLayerType::Sliding, HfLayerType::Chunked}) {
        HfEntropyByType group{type, 0, std::vector<double>(static_cast<size_t>(T), 0.0)};
        for (int l = 0; l < capture.layers; ++l)
            if (config.layerTypes[l] == type) {
                ++group.layers;
                for (int m = 0; m < T; ++m)
                    group.entropy[m] += byLayer[static_cast<size_t>(l) * T + m];
            }
        if (group.layers == 0)
            continue;
        for (double& e : group.entropy)
            e /= group.layers;
        out.push_back(std::move(group));
    }
    return out;
}

namespace {

// The capture of layer `layer` alone (as layer 0 of a one-layer capture, maps kept), the forward stopped after it;
// `out` receives the kernel's output when given.
HfAttentionCapture captureOneLayer(const HfModel& model, const std::vector<int>& ids, const HfPositions& positions,
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
        capture.layerSchemes.push_back(a.bias.spec());
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

HfLayerAttentionResult hfLayerAttention(const HfModel& model, const std::vector<int>& ids, const HfPositions& positions,
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

std::vector<EntropyPoint> hfEntropyCurve(const HfModel& model, const std::vector<int>& ids, const HfPositions& positions,
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
