// The decode entry: new query rows against cached keys and values, with the kernel's bias, mask, cap and rotation.
#include "attention/decode.h"

#include "attention/attention_internal.h"
#include "base/errors.h"
#include "schemes/rotary_scaling.h"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace plab {

std::string decodeUnsupportedReason(const SchemeSpec& spec)
{
    if (detail::isRotary(spec)) {
        const RotaryMethodInfo& method = rotaryMethodInfo(spec.scaling);
        if (method.remapsPositions)
            return "the method " + method.name +
                   " places each key by its distance to the query, so a cached key has no single rotation "
                   "(transformers has no cache for it either); allowed: a method that does not remap positions";
    }
    if (spec.kind == SchemeKind::Xpos)
        return "xpos scales a key by its own position and the query's, not supported by the cache";
    if (spec.kind == SchemeKind::Fire || spec.kind == SchemeKind::Fox || spec.kind == SchemeKind::Cope)
        return "scheme " + spec.name() + " computes its bias from more than the pair's distance";
    if (spec.ssmax || spec.sinkLogit)
        return "ssmax and the sink logit are not supported by the cache";
    return {};
}

void rotateRowsAt(const PositionBias& bias, const DecodeDims& dims, float* x, int count, int first, int length,
                  bool isKey)
{
    const int rotated = dims.rotaryDims > 0 ? dims.rotaryDims : dims.headDim;
    const detail::RotaryFrequencies rotary = detail::rotaryFrequencies(bias.spec(), rotated, length);
    if (!rotary.active())
        return;
    const int pairs = rotary.pairs();
    for (int r = 0; r < count; ++r) {
        float* row = x + static_cast<size_t>(r) * dims.headDim;
        for (int i = 0; i < pairs; ++i) {
            double c, s;
            rotary.rotation(first + r, i, isKey, c, s);
            const int a = dims.pairing == RotaryPairing::RotateHalf ? i : 2 * i;
            const int b = dims.pairing == RotaryPairing::RotateHalf ? i + pairs : 2 * i + 1;
            const double xa = row[a], xb = row[b];
            row[a] = static_cast<float>(c * xa - s * xb);
            row[b] = static_cast<float>(s * xa + c * xb);
        }
    }
}

namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstRows = Eigen::Map<const RowMatrix, 0, Eigen::OuterStride<>>;

// Keys per task: a row's visible keys are cut into chunks of at most this many, each a task of its own, so a long
// cache keeps every thread busy however few key/value heads there are (flash-decoding). Fixed, not a function of the
// threads, so the logits do not depend on --threads.
constexpr int kChunkKeys = 256;

// One task of a decode call: query row r of the `group` query heads that read key/value head g, over the keys
// [begin, end) of the row's visible ranges. The group's queries are one (group x D) block, so each cached key and
// value is read once per task, not once per query head (with GQA the cache is what a long decode step streams).
struct DecodeTask {
    int g = 0, r = 0;
    int begin = 0, end = 0; // keys, inside one visible range
};

// A task's partial softmax per query head of its group: the running max, the sum of e^(s - max) and the unnormalised
// output, merged across a row's tasks afterwards.
struct DecodePartial {
    std::vector<float> top;  // (group)
    std::vector<double> sum; // (group)
    RowMatrix out;           // (group, D)
};

// The tasks of a call: each (key/value head, query row)'s visible keys (sink range, then key range) cut into chunks of
// at most kChunkKeys.
std::vector<DecodeTask> decodeTasks(const PositionBias& bias, const DecodeDims& dims)
{
    std::vector<DecodeTask> tasks;
    const int length = dims.keys();
    for (int g = 0; g < dims.kvHeads; ++g)
        for (int r = 0; r < dims.queries; ++r) {
            const int m = dims.offset + r;
            const KeyRange ranges[2] = {bias.sinkRange(m, length), bias.keyRange(m, length)};
            for (const KeyRange& range : ranges)
                for (int begin = range.begin; begin < range.end; begin += kChunkKeys)
                    tasks.push_back({g, r, begin, std::min(range.end, begin + kChunkKeys)});
        }
    return tasks;
}

// One task: the scores of its group's query rows against its keys in one product, the kernel's score formula per
// cell ((q . k / sqrt(D) + b_h(m, n)) * rowScale, then the soft cap), e^(s - max) per row, then the values' product.
void decodeTask(const PositionBias& bias, const DecodeDims& dims, const DecodeTask& task, const float* q,
                const float* kCache, const float* vCache, DecodePartial& part)
{
    const int D = dims.headDim, group = dims.heads / dims.kvHeads, length = dims.keys();
    const int m = dims.offset + task.r, n = task.end - task.begin;
    const float invSqrtD = 1.0f / std::sqrt(static_cast<float>(D));
    const float scale = bias.rowScale(m, length), cap = bias.softcap();
    const size_t headRows = static_cast<size_t>(dims.capacity) * D;
    // The group's rows: head h = g * group + j, row r, at q[(h * queries + r) * D].
    const ConstRows queries(q + (static_cast<size_t>(task.g) * group * dims.queries + task.r) * D, group, D,
                            Eigen::OuterStride<>(static_cast<Eigen::Index>(dims.queries) * D));
    const ConstRows keys(kCache + task.g * headRows + static_cast<size_t>(task.begin) * D, n, D,
                         Eigen::OuterStride<>(D));
    const ConstRows values(vCache + task.g * headRows + static_cast<size_t>(task.begin) * D, n, D,
                           Eigen::OuterStride<>(D));
    RowMatrix scores = queries * keys.transpose(); // (group, n)
    part.top.assign(group, -std::numeric_limits<float>::infinity());
    part.sum.assign(group, 0.0);
    for (int j = 0; j < group; ++j) {
        const int h = task.g * group + j;
        float* row = scores.data() + static_cast<size_t>(j) * n;
        float top = -std::numeric_limits<float>::infinity();
        for (int i = 0; i < n; ++i) {
            float value = (row[i] * invSqrtD + bias.additive(h, m, task.begin + i)) * scale;
            if (cap > 0)
                value = static_cast<float>(PositionBias::capped(value, cap));
            row[i] = value;
            top = std::max(top, value);
        }
        Eigen::Map<Eigen::ArrayXf> s(row, n);
        if (top == -std::numeric_limits<float>::infinity()) // no key of the chunk counts (an infinite bias)
            s.setZero();
        else
            s = (s - top).exp();
        part.top[j] = top;
        part.sum[j] = s.sum();
    }
    part.out.noalias() = scores * values; // (group, D)
}

} // namespace

void attentionDecode(const PositionBias& bias, const DecodeDims& dims, const float* q, const float* kCache,
                     const float* vCache, float* out)
{
    const std::string reason = decodeUnsupportedReason(bias.spec());
    if (!reason.empty())
        throw InputError("cached decoding: " + reason);
    if (dims.kvHeads < 1 || dims.heads % dims.kvHeads != 0 || dims.keys() > dims.capacity ||
        dims.keys() > bias.maxLength() || bias.heads() != dims.heads)
        throw InputError("cached decoding: " + std::to_string(dims.keys()) + " keys in a cache of " +
                         std::to_string(dims.capacity) + " rows (bias of " + std::to_string(bias.maxLength()) +
                         " positions, " + std::to_string(bias.heads()) + " heads for " + std::to_string(dims.heads) +
                         " query and " + std::to_string(dims.kvHeads) + " key/value heads)");
    const int D = dims.headDim, group = dims.heads / dims.kvHeads;
    // Threads only when the rows hold enough work to pay for a team (a short cache decodes on the calling thread).
    const bool parallel = static_cast<double>(dims.heads) * dims.queries * dims.keys() * D >= 65536.0;
    const std::vector<DecodeTask> tasks = decodeTasks(bias, dims);
    std::vector<DecodePartial> parts(tasks.size());
#pragma omp parallel for schedule(dynamic) if (parallel)
    for (size_t t = 0; t < tasks.size(); ++t)
        decodeTask(bias, dims, tasks[t], q, kCache, vCache, parts[t]);
    // Merge each row's tasks (contiguous in `tasks`, merged in their order, so the result does not depend on the
    // threads): out = sum_t e^(top_t - M) out_t / sum_t e^(top_t - M) sum_t, M the row's largest max.
    for (size_t first = 0; first < tasks.size();) {
        size_t last = first;
        while (last < tasks.size() && tasks[last].g == tasks[first].g && tasks[last].r == tasks[first].r)
            ++last;
        for (int j = 0; j < group; ++j) {
            const int h = tasks[first].g * group + j;
            float M = -std::numeric_limits<float>::infinity();
            for (size_t t = first; t < last; ++t)
                M = std::max(M, parts[t].top[j]);
            Eigen::Map<Eigen::VectorXf> o(out + (static_cast<size_t>(h) * dims.queries + tasks[first].r) * D, D);
            o.setZero();
            double sum = 0;
            for (size_t t = first; t < last; ++t) {
                if (parts[t].sum[j] == 0) // every score of the chunk -inf: nothing to add
                    continue;
                const float w = std::exp(parts[t].top[j] - M);
                sum += w * parts[t].sum[j];
                o += w * parts[t].out.row(j).transpose();
            }
            o /= static_cast<float>(sum);
        }
        first = last;
    }
}

} // namespace plab
