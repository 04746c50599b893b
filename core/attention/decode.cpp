// The decode entry: new query rows against cached keys and values, with the kernel's bias, mask, cap and rotation.
#include "attention/decode.h"

#include "attention/attention_internal.h"
#include "attention/simd.h"
#include "base/bf16.h"
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

void rotateRowsAt(const PositionBias& bias, const DecodeDims& dims, float* x, int heads, size_t headStride, int count,
                  int first, int length, bool isKey)
{
    const int rotated = dims.rotaryDims > 0 ? dims.rotaryDims : dims.headDim;
    const detail::RotaryFrequencies rotary = detail::rotaryFrequencies(bias.spec(), rotated, length);
    if (!rotary.active())
        return;
    const int pairs = rotary.pairs();
    thread_local std::vector<double> cosines, sines; // (pairs): one position's rotation, shared by every head
    cosines.resize(pairs);
    sines.resize(pairs);
    const bool half = dims.pairing == RotaryPairing::RotateHalf;
    for (int r = 0; r < count; ++r) {
        for (int i = 0; i < pairs; ++i)
            rotary.rotation(first + r, i, isKey, cosines[i], sines[i]);
        for (int h = 0; h < heads; ++h) {
            float* row = x + h * headStride + static_cast<size_t>(r) * dims.headDim;
            for (int i = 0; i < pairs; ++i) {
                const int a = half ? i : 2 * i, b = half ? i + pairs : 2 * i + 1;
                const double c = cosines[i], s = sines[i], xa = row[a], xb = row[b];
                row[a] = static_cast<float>(c * xa - s * xb);
                row[b] = static_cast<float>(s * xa + c * xb);
            }
        }
    }
}

namespace {


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

// The tasks' partial softmaxes per query head of their group, merged across a row's tasks afterwards: task t's head j
// at t * group + j.
struct DecodePartials {
    std::vector<float> top;  // (tasks, group): the running max
    std::vector<double> sum; // (tasks, group): the sum of e^(s - max)
    std::vector<float> out;  // (tasks, group, D): the unnormalised output
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

// A row of the cache as float32: 16 numbers into a vector, or one, from float32 or BF16 storage (widened exactly).
inline kernel::Vec loadCached(const float* p)
{
    return kernel::load(p);
}
inline kernel::Vec loadCached(const uint16_t* p)
{
#if defined(__AVX512F__)
    const __m512i wide = _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))), 16);
    return kernel::Vec(_mm512_castsi512_ps(wide));
#else
    float row[kernel::kLanes];
    for (int i = 0; i < kernel::kLanes; ++i)
        row[i] = bf16ToFloat(p[i]);
    return kernel::load(row);
#endif
}
inline float cachedValue(const float* p)
{
    return *p;
}
inline float cachedValue(const uint16_t* p)
{
    return bf16ToFloat(*p);
}

// scores (group, n): row j holds q_j . k_i for the n keys k (n, D) and the group's queries q (group, D, rows `qStride`
// apart); the values (n, D) are prefetched on the way. One key row at a time, read once for every query of the group; the dot products in whole vectors, then a
// scalar tail where D is not a multiple of 16. Direct loops, not Eigen's product: for a (group x n) result Eigen
// packs the whole (n, D) block of keys into a panel before multiplying, which doubled the bytes a decode step moves
// (63% of a step's time at 8192 cached tokens went to that packing).
// Asks for the cache lines of `count` numbers at p ahead of their use. Why: a decode step's attention streams the
// cache from memory, and each key's few products leave the core too few loads in flight to cover the memory's
// latency (measured: about 10 GB/s of cache read where the machine streams 26).
template <typename Cached>
inline void prefetchRow(const Cached* p, int count)
{
    const char* bytes = reinterpret_cast<const char*>(p);
    for (size_t at = 0; at < count * sizeof(Cached); at += kernel::kCacheLine)
        __builtin_prefetch(bytes + at);
}

// Keys asked for ahead of the one being scored (1 KB of float32 rows at D = 64; 2, 4 or 8 measured alike).
constexpr int kPrefetchKeys = 4;

template <typename Cached>
void groupScores(const float* q, size_t qStride, int group, const Cached* keys, const Cached* values, int n, int D,
                 float* scores)
{
    const int whole = D / kernel::kLanes * kernel::kLanes;
    for (int i = 0; i < n; ++i) {
        const Cached* key = keys + static_cast<size_t>(i) * D;
        if (i + kPrefetchKeys < n)
            prefetchRow(key + kPrefetchKeys * D, D);
        prefetchRow(values + static_cast<size_t>(i) * D, D); // for groupValues, which reads them next
        for (int j = 0; j < group; ++j) {
            const float* query = q + j * qStride;
            kernel::Vec acc = kernel::splat(0.0f);
            for (int d = 0; d < whole; d += kernel::kLanes)
                acc = kernel::fusedMultiplyAdd(kernel::load(query + d), loadCached(key + d), acc);
            float dot = kernel::horizontalSum(acc);
            // The tails in explicit fused multiply-adds, as the lanes are: left to the compiler, a * b + c was
            // contracted for float storage and not for BF16, so the two storages rounded their tails apart.
            for (int d = whole; d < D; ++d)
                dot = std::fma(query[d], cachedValue(key + d), dot);
            scores[static_cast<size_t>(j) * n + i] = dot;
        }
    }
}

// out rows [j0, j0 + Rows) of (group, D), columns [d0, d0 + Vecs * 16): += sum_i p(j, i) v_i, the accumulators in
// registers over all n values, so each value row is loaded once per block.
template <int Rows, int Vecs, typename Cached>
void valuesBlock(const float* p, int n, const Cached* values, int D, int j0, int d0, float* out)
{
    kernel::Vec acc[Rows][Vecs];
    for (int j = 0; j < Rows; ++j)
        for (int v = 0; v < Vecs; ++v)
            acc[j][v] = kernel::load(out + static_cast<size_t>(j0 + j) * D + d0 + v * kernel::kLanes);
    for (int i = 0; i < n; ++i) {
        const Cached* value = values + static_cast<size_t>(i) * D + d0;
        kernel::Vec row[Vecs];
        for (int v = 0; v < Vecs; ++v)
            row[v] = loadCached(value + v * kernel::kLanes);
        for (int j = 0; j < Rows; ++j) {
            const kernel::Vec weight = kernel::splat(p[static_cast<size_t>(j0 + j) * n + i]);
            for (int v = 0; v < Vecs; ++v)
                acc[j][v] = kernel::fusedMultiplyAdd(weight, row[v], acc[j][v]);
        }
    }
    for (int j = 0; j < Rows; ++j)
        for (int v = 0; v < Vecs; ++v)
            kernel::store(out + static_cast<size_t>(j0 + j) * D + d0 + v * kernel::kLanes, acc[j][v]);
}

template <int Rows, typename Cached>
void valuesRows(const float* p, int n, const Cached* values, int D, int j0, float* out)
{
    const int whole = D / kernel::kLanes * kernel::kLanes;
    int d0 = 0;
    for (; d0 + 4 * kernel::kLanes <= whole; d0 += 4 * kernel::kLanes)
        valuesBlock<Rows, 4>(p, n, values, D, j0, d0, out);
    for (; d0 < whole; d0 += kernel::kLanes)
        valuesBlock<Rows, 1>(p, n, values, D, j0, d0, out);
    for (int j = j0; j < j0 + Rows; ++j) // the scalar tail where D is not a multiple of 16
        for (int d = whole; d < D; ++d) {
            float sum = out[static_cast<size_t>(j) * D + d];
            for (int i = 0; i < n; ++i)
                sum = std::fma(p[static_cast<size_t>(j) * n + i], cachedValue(values + static_cast<size_t>(i) * D + d),
                               sum);
            out[static_cast<size_t>(j) * D + d] = sum;
        }
}

// out (group, D) = p (group, n) times the values (n, D), in blocks of up to 4 query rows by 64 columns.
template <typename Cached>
void groupValues(const float* p, int group, const Cached* values, int n, int D, float* out)
{
    std::fill_n(out, static_cast<size_t>(group) * D, 0.0f);
    int j0 = 0;
    for (; j0 + 4 <= group; j0 += 4)
        valuesRows<4>(p, n, values, D, j0, out);
    switch (group - j0) {
    case 3: valuesRows<3>(p, n, values, D, j0, out); break;
    case 2: valuesRows<2>(p, n, values, D, j0, out); break;
    case 1: valuesRows<1>(p, n, values, D, j0, out); break;
    default: break;
    }
}

// One task: the scores of its group's query rows against its keys (groupScores), the kernel's score formula per
// cell ((q . k / sqrt(D) + b_h(m, n)) * rowScale, then the soft cap), e^(s - max) per row, then the values' product.
// The kernel's score formula on one row of q . k products, in place: s = (dot / sqrt(D) + b_h(m, n)) * rowScale, then
// the soft cap; returns the row's max. Without an additive bias or a cap (rope, NoPE) in whole vectors, the same
// products in the same order.
float scoreRow(const PositionBias& bias, int h, int m, int firstKey, float invSqrtD, float scale, float cap, float* row,
               int n)
{
    float top = -std::numeric_limits<float>::infinity();
    int i = 0;
    if (!bias.hasAdditive() && cap <= 0) {
        kernel::Vec tops = kernel::splat(top);
        for (; i + kernel::kLanes <= n; i += kernel::kLanes) {
            const kernel::Vec value = kernel::load(row + i) * invSqrtD * scale;
            kernel::store(row + i, value);
            tops = kernel::vmax(tops, value);
        }
        top = kernel::horizontalMax(tops);
    }
    for (; i < n; ++i) {
        float value = (row[i] * invSqrtD + bias.additive(h, m, firstKey + i)) * scale;
        if (cap > 0)
            value = static_cast<float>(PositionBias::capped(value, cap));
        row[i] = value;
        top = std::max(top, value);
    }
    return top;
}

// row[i] = e^(row[i] - top) in place (all 0 when top is -inf: no key of the chunk counts), returning their sum. The
// kernel's e^x on whole vectors, the tail padded with -inf, and the sum in lanes then halves: the same numbers
// wherever the row's buffer sits (Eigen's exp and sum switch between scalar and vector code by the buffer's
// alignment, which differs between the threads' buffers, so the logits depended on the thread a chunk ran on).
double exponentiateRow(float* row, int n, float top)
{
    if (top == -std::numeric_limits<float>::infinity()) {
        std::fill_n(row, n, 0.0f);
        return 0;
    }
    kernel::Vec sums = kernel::splat(0.0f);
    for (int i = 0; i < n; i += kernel::kLanes) {
        const int lanes = std::min(kernel::kLanes, n - i);
        float padded[kernel::kLanes];
        std::fill_n(padded, kernel::kLanes, -std::numeric_limits<float>::infinity());
        std::copy_n(row + i, lanes, padded);
        const kernel::Vec p = kernel::expNonPositive(kernel::load(padded) - top);
        kernel::store(padded, p);
        std::copy_n(padded, lanes, row + i);
        sums += p;
    }
    return kernel::horizontalSum(sums);
}

// One task (task t of the call): the scores of its group's query rows against its keys (groupScores), the kernel's
// score formula per cell (scoreRow), e^(s - max) per row, then the values' product, into the call's partials.
template <typename Cached>
void decodeTask(const PositionBias& bias, const DecodeDims& dims, const DecodeTask& task, const float* q,
                const Cached* kCache, const Cached* vCache, size_t t, DecodePartials& parts)
{
    const int D = dims.headDim, group = dims.heads / dims.kvHeads, length = dims.keys();
    const int m = dims.offset + task.r, n = task.end - task.begin;
    const float invSqrtD = 1.0f / std::sqrt(static_cast<float>(D));
    const float scale = bias.rowScale(m, length), cap = bias.softcap();
    const size_t headRows = static_cast<size_t>(dims.capacity) * D;
    // The group's rows: head h = g * group + j, row r, at q[(h * queries + r) * D].
    const float* queries = q + (static_cast<size_t>(task.g) * group * dims.queries + task.r) * D;
    const Cached* keys = kCache + task.g * headRows + static_cast<size_t>(task.begin) * D;
    const Cached* values = vCache + task.g * headRows + static_cast<size_t>(task.begin) * D;
    thread_local std::vector<float> scoreBuffer;
    scoreBuffer.resize(static_cast<size_t>(group) * n);
    float* scores = scoreBuffer.data(); // (group, n)
    groupScores(queries, static_cast<size_t>(dims.queries) * D, group, keys, values, n, D, scores);
    for (int j = 0; j < group; ++j) {
        float* row = scores + static_cast<size_t>(j) * n;
        const float top = scoreRow(bias, task.g * group + j, m, task.begin, invSqrtD, scale, cap, row, n);
        parts.top[t * group + j] = top;
        parts.sum[t * group + j] = exponentiateRow(row, n, top);
    }
    groupValues(scores, group, values, n, D, parts.out.data() + t * group * D); // (group, D)
}

template <typename Cached>
void decodeCached(const PositionBias& bias, const DecodeDims& dims, const float* q, const Cached* kCache,
                  const Cached* vCache, float* out)
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
    DecodePartials parts;
    parts.top.resize(tasks.size() * group);
    parts.sum.resize(tasks.size() * group);
    parts.out.resize(tasks.size() * group * D);
#pragma omp parallel for schedule(dynamic) if (parallel)
    for (size_t t = 0; t < tasks.size(); ++t)
        decodeTask(bias, dims, tasks[t], q, kCache, vCache, t, parts);
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
                M = std::max(M, parts.top[t * group + j]);
            Eigen::Map<Eigen::VectorXf> o(out + (static_cast<size_t>(h) * dims.queries + tasks[first].r) * D, D);
            o.setZero();
            double sum = 0;
            for (size_t t = first; t < last; ++t) {
                if (parts.sum[t * group + j] == 0) // every score of the chunk -inf: nothing to add
                    continue;
                const float w = std::exp(parts.top[t * group + j] - M);
                sum += w * parts.sum[t * group + j];
                o += w * Eigen::Map<const Eigen::VectorXf>(parts.out.data() + (t * group + j) * D, D);
            }
            o /= static_cast<float>(sum);
        }
        first = last;
    }
}

} // namespace

void attentionDecode(const PositionBias& bias, const DecodeDims& dims, const float* q, const float* kCache,
                     const float* vCache, float* out)
{
    decodeCached(bias, dims, q, kCache, vCache, out);
}

void attentionDecode(const PositionBias& bias, const DecodeDims& dims, const float* q, const uint16_t* kCache,
                     const uint16_t* vCache, float* out)
{
    decodeCached(bias, dims, q, kCache, vCache, out);
}

} // namespace plab
