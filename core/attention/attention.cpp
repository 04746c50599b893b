// Fused multi-head attention with on-the-fly positional bias: the entry points. The kernel reads in chapters:
// simd.h (the vector mappings), tiles.h (register tiles), plan.h (a call's plan and packs), forward.cpp and
// backward.cpp (the blocks and the strategies that share them among threads); this file runs their passes.
#include "attention/attention.h"

#include "attention/backward.h"
#include "attention/cope_attention.h"
#include "attention/forward.h"
#include "attention/rotary_cache.h"
#include "base/errors.h"
#include "schemes/cope.h"
#include "schemes/softmax_modifiers.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace plab {

using namespace kernel;

AttentionForward attentionForward(const PositionBias& bias, const AttentionDims& dims, const float* q, const float* k,
                                  const float* v, const AttentionOptions& options)
{
    AttentionForward result;
    attentionForward(bias, dims, q, k, v, result, options);
    return result;
}

namespace {

// CoPE's shapes and embeddings (float, (D, npos-max); empty: the reference's zeros) for an attention call.
struct CopeCall {
    CopeDims dims;
    std::vector<float> embeddings;
    const float* table() const { return embeddings.empty() ? nullptr : embeddings.data(); }
};

CopeCall copeCall(const PositionBias& bias, const AttentionDims& dims)
{
    const SchemeSpec& spec = bias.spec();
    if (dims.keyValueHeads() != dims.heads)
        throw InputError("scheme cope: grouped-query attention (kv-heads = " + std::to_string(dims.kvHeads) +
                         ") is not supported; allowed: kv-heads = heads");
    CopeCall call{{dims.batch * dims.heads, dims.length, dims.headDim, spec.intParam("npos-max")}, {}};
    const size_t tableSize = static_cast<size_t>(dims.headDim) * call.dims.nposMax;
    if (!spec.copeEmbeddings.empty() && spec.copeEmbeddings.size() != tableSize)
        throw InputError("scheme cope: learned embeddings hold " + std::to_string(spec.copeEmbeddings.size()) +
                         " values; expected head dim x npos-max = " + std::to_string(dims.headDim) + " x " +
                         std::to_string(call.dims.nposMax));
    call.embeddings.assign(spec.copeEmbeddings.begin(), spec.copeEmbeddings.end());
    return call;
}

void copeForward(const PositionBias& bias, const AttentionDims& dims, const float* q, const float* k, const float* v,
                 AttentionForward& result, const AttentionOptions& options)
{
    const CopeCall call = copeCall(bias, dims);
    const size_t rows = static_cast<size_t>(dims.batch) * dims.heads * dims.length;
    result.out.resize(dims.elements());
    result.logSumExp.resize(rows);
    if (options.wantProbabilities)
        result.probabilities.resize(rows * dims.length); // every cell written
    else
        result.probabilities.clear();
    if (options.wantRowEntropy)
        result.rowEntropy.resize(rows);
    else
        result.rowEntropy.clear();
    copeBlockedForward(call.dims, q, k, v, call.table(), result.out.data(), result.logSumExp.data(),
                       options.wantProbabilities ? result.probabilities.data() : nullptr,
                       options.wantRowEntropy ? result.rowEntropy.data() : nullptr);
}

// forwardPass on a plan already made.
void forwardPlan(const Plan& plan, const AttentionDims& dims, const float* q, const float* k, const float* v,
                 AttentionForward& result, const AttentionOptions& options);

// attentionForward for one pass (rows a pass hides entirely get lse = -inf and an undefined output); its rotary table
// from `cache` when given, else built here.
void forwardPass(const PositionBias& bias, const AttentionDims& dims, size_t passIndex, const Pass& pass,
                 const float* q, const float* k, const float* v, AttentionForward& result,
                 const AttentionOptions& options, RotaryTableCache* cache)
{
    if (cache) {
        const Plan plan(bias, dims, cache->table(bias, dims, passIndex, pass), pass);
        forwardPlan(plan, dims, q, k, v, result, options);
    } else {
        const Plan plan(bias, dims, detail::rotaryFrequencies(bias.spec(), dims.rotatedDims(), dims.length), pass);
        forwardPlan(plan, dims, q, k, v, result, options);
    }
}

void forwardPlan(const Plan& plan, const AttentionDims& dims, const float* q, const float* k, const float* v,
                 AttentionForward& result, const AttentionOptions& options)
{
    const size_t rows = static_cast<size_t>(dims.batch) * dims.heads * dims.length;
    // Every element of out, logSumExp and rowEntropy is written by exactly one query block, so these need no fill;
    // probabilities are written only over visited tiles, so masked cells must be zeroed first.
    result.out.resize(dims.elements());
    result.logSumExp.resize(rows);
    if (options.wantProbabilities)
        result.probabilities.assign(rows * dims.length, 0.0f);
    else
        result.probabilities.clear();
    if (options.wantRowEntropy)
        result.rowEntropy.resize(rows);
    else
        result.rowEntropy.clear();
    const ForwardCall call(plan, q, k, v, result, options);
    if (call.heads >= kHeadParallelMin)
        forwardHeadParallel(call);
    else
        forwardQueryBlockParallel(call);
}

// Folds the results of a second pass into `total` (the first pass's): one softmax over the union of their keys.
// Per row, with weights w_j = exp(lse_j - lse): out = sum_j w_j out_j, probabilities w_j P_j (disjoint supports),
// entropy sum_j w_j (H_j - log w_j).
void mergePass(AttentionForward& total, const AttentionForward& extra, const AttentionDims& dims)
{
    const size_t rows = total.logSumExp.size();
    const int N = dims.length, D = dims.headDim;
    const bool probs = !total.probabilities.empty(), entropy = !total.rowEntropy.empty();
#pragma omp parallel for schedule(static) if (rows > 4096)
    for (size_t row = 0; row < rows; ++row) {
        const float a = total.logSumExp[row], b = extra.logSumExp[row];
        if (b == PositionBias::kMasked)
            continue;
        float* out = total.out.data() + row * D;
        const float* more = extra.out.data() + row * D;
        if (a == PositionBias::kMasked) {
            std::copy(more, more + D, out);
            total.logSumExp[row] = b;
            if (entropy)
                total.rowEntropy[row] = extra.rowEntropy[row];
            if (probs)
                std::copy(extra.probabilities.begin() + row * N, extra.probabilities.begin() + (row + 1) * N,
                          total.probabilities.begin() + row * N);
            continue;
        }
        const double top = std::max(a, b);
        const double lse = top + std::log(std::exp(a - top) + std::exp(b - top));
        const double wa = std::exp(a - lse), wb = std::exp(b - lse);
        for (int d = 0; d < D; ++d)
            out[d] = static_cast<float>(wa * out[d] + wb * more[d]);
        if (entropy) {
            const double ha = total.rowEntropy[row], hb = extra.rowEntropy[row];
            total.rowEntropy[row] = static_cast<float>((wa > 0 ? wa * (ha - std::log(wa)) : 0.0) +
                                                       (wb > 0 ? wb * (hb - std::log(wb)) : 0.0));
        }
        if (probs) {
            float* p = total.probabilities.data() + row * N;
            const float* pe = extra.probabilities.data() + row * N;
            for (int n = 0; n < N; ++n)
                p[n] = static_cast<float>(wa * p[n] + wb * pe[n]);
        }
        total.logSumExp[row] = static_cast<float>(lse);
    }
}

// z_h of every head.
std::vector<double> sinkLogits(const SchemeSpec& spec)
{
    std::vector<double> logits(spec.heads);
    for (int h = 0; h < spec.heads; ++h)
        logits[h] = sinkLogit(spec, h);
    return logits;
}

// gpt-oss's sink logit: one more softmax column of logit z_h per row, which holds no value and is dropped after the
// softmax. Folded into a finished forward per row: lse' = log(e^lse + e^z); out, probabilities scale by
// w = e^(lse - lse'); the entropy becomes w (H - ln w) - p ln p with the sink's p = e^(z - lse'). The backward needs
// nothing else: its probabilities e^(s - lse') and delta = dO . out already carry the sink.
// `logits` holds z of each of dims.heads heads.
void applySinkLogit(const std::vector<double>& logits, const AttentionDims& dims, AttentionForward& result)
{
    const int N = dims.length, D = dims.headDim;
    const size_t rows = result.logSumExp.size();
    const bool probs = !result.probabilities.empty(), entropy = !result.rowEntropy.empty();
#pragma omp parallel for schedule(static) if (rows > 4096)
    for (size_t row = 0; row < rows; ++row) {
        const double z = logits[(row / N) % dims.heads];
        const double a = result.logSumExp[row];
        const double top = std::max(a, z);
        const double lse = top + std::log((a == PositionBias::kMasked ? 0.0 : std::exp(a - top)) + std::exp(z - top));
        const double w = a == PositionBias::kMasked ? 0.0 : std::exp(a - lse), sink = std::exp(z - lse);
        for (int d = 0; d < D; ++d)
            result.out[row * D + d] = static_cast<float>(w * result.out[row * D + d]);
        for (int n = 0; probs && n < N; ++n)
            result.probabilities[row * N + n] = static_cast<float>(w * result.probabilities[row * N + n]);
        if (entropy)
            result.rowEntropy[row] = static_cast<float>((w > 0 ? w * (result.rowEntropy[row] - std::log(w)) : 0.0) -
                                                        (sink > 0 ? sink * std::log(sink) : 0.0));
        result.logSumExp[row] = static_cast<float>(lse);
    }
}

} // namespace

namespace {

void forwardAllPasses(const PositionBias& bias, const AttentionDims& dims, const float* q, const float* k,
                      const float* v, AttentionForward& result, const AttentionOptions& options,
                      RotaryTableCache* cache)
{
    detail::validateAttention(bias, dims);
    if (bias.spec().kind == SchemeKind::Cope)
        return copeForward(bias, dims, q, k, v, result, options);
    const std::vector<Pass> passes = passesOf(bias, dims.length);
    forwardPass(bias, dims, 0, passes[0], q, k, v, result, options, cache);
    for (size_t i = 1; i < passes.size(); ++i) {
        AttentionForward extra;
        forwardPass(bias, dims, i, passes[i], q, k, v, extra, options, cache);
        mergePass(result, extra, dims);
    }
    if (bias.spec().sinkLogit)
        applySinkLogit(sinkLogits(bias.spec()), dims, result);
}

} // namespace

void attentionForward(const PositionBias& bias, const AttentionDims& dims, const float* q, const float* k,
                      const float* v, AttentionForward& result, const AttentionOptions& options)
{
    forwardAllPasses(bias, dims, q, k, v, result, options, nullptr);
}

void attentionForward(const PositionBias& bias, const AttentionDims& dims, const float* q, const float* k,
                      const float* v, AttentionForward& result, const AttentionOptions& options,
                      RotaryTableCache& cache)
{
    forwardAllPasses(bias, dims, q, k, v, result, options, &cache);
}

struct RotaryTableCache::Entry {
    const PositionBias* bias = nullptr;
    size_t passIndex = 0;
    int length = 0, headDim = 0, rotaryDims = 0;
    RotaryPairing pairing = RotaryPairing::Interleaved;
    RotaryTable table;
};

RotaryTableCache::RotaryTableCache() = default;
RotaryTableCache::~RotaryTableCache() = default;

const RotaryTable& RotaryTableCache::table(const PositionBias& bias, const AttentionDims& dims, size_t passIndex,
                                           const Pass& pass)
{
    // One entry per (bias, pass): a model whose layers alternate two biases (rotary and NoPE layers) keeps both.
    for (const std::unique_ptr<Entry>& entry : m_entries)
        if (entry->bias == &bias && entry->passIndex == passIndex && entry->length == dims.length &&
            entry->headDim == dims.headDim && entry->rotaryDims == dims.rotaryDims && entry->pairing == dims.pairing)
            return entry->table;
    auto entry = std::make_unique<Entry>();
    entry->bias = &bias;
    entry->passIndex = passIndex;
    entry->length = dims.length;
    entry->headDim = dims.headDim;
    entry->rotaryDims = dims.rotaryDims;
    entry->pairing = dims.pairing;
    entry->table = RotaryTable(detail::rotaryFrequencies(bias.spec(), dims.rotatedDims(), dims.length), dims, pass);
    m_entries.push_back(std::move(entry));
    return m_entries.back()->table;
}

std::vector<double> attentionRowEntropies(const PositionBias& bias, int head, int length, const float* q,
                                          const float* k, int headDim, const double* logForget)
{
    if (head < 0 || head >= bias.heads())
        throw InputError("head = " + std::to_string(head) + " is out of range; allowed: integers in [0, " +
                         std::to_string(bias.heads() - 1) + "]");
    // Bias alone: q = k = 0 of a token dimension (2, so rotary schemes pass validation; nothing is rotated).
    const bool biasOnly = q == nullptr || k == nullptr;
    AttentionDims dims{1, bias.heads(), length, biasOnly ? 2 : headDim};
    // FoX: marks the plans as fox (the row bias from F instead of the table); the head's F itself goes to
    // forwardEntropyOnly, since these dims hold every head but the call reads one.
    dims.logForget = logForget;
    detail::validateAttention(bias, dims);
    if (bias.spec().kind == SchemeKind::Cope) { // its scores need q and k: the bias alone is q = k = 0
        const std::vector<float> zeros(biasOnly ? static_cast<size_t>(length) * dims.headDim : 0, 0.0f);
        const AttentionDims one{1, 1, length, dims.headDim};
        const float* qh = biasOnly ? zeros.data() : q; // one head's (length, headDim)
        const float* kh = biasOnly ? zeros.data() : k;
        SchemeSpec single = bias.spec();
        single.heads = 1;
        if (biasOnly) // z = q · E = 0 whatever E is
            single.copeEmbeddings.clear();
        AttentionForward part;
        copeForward(PositionBias(single, length), one, qh, kh, kh, part, {false, true});
        return {part.rowEntropy.begin(), part.rowEntropy.end()};
    }
    AttentionForward total; // only logSumExp and rowEntropy (out stays empty: D = 0 for the merge)
    const AttentionDims statsDims{1, 1, length, 0};
    bool first = true;
    // q and k arrive unrotated, as in attentionForward: each pass rotates them at its positions.
    const detail::RotaryFrequencies frequencies =
        biasOnly ? detail::RotaryFrequencies{} : detail::rotaryFrequencies(bias.spec(), headDim, length);
    for (const Pass& pass : passesOf(bias, length)) {
        const Plan plan(bias, dims, frequencies, pass);
        AttentionForward part;
        part.logSumExp.resize(length);
        part.rowEntropy.resize(length);
        forwardEntropyOnly(plan, head, biasOnly ? nullptr : q, biasOnly ? nullptr : k, logForget, part.logSumExp.data(),
                           part.rowEntropy.data());
        if (first)
            total = std::move(part);
        else
            mergePass(total, part, statsDims);
        first = false;
    }
    if (bias.spec().sinkLogit) // the rows of this one head
        applySinkLogit({sinkLogit(bias.spec(), head)}, statsDims, total);
    return {total.rowEntropy.begin(), total.rowEntropy.end()};
}

AttentionGradients attentionBackward(const PositionBias& bias, const AttentionDims& dims, const float* q,
                                     const float* k, const float* v, const AttentionForward& forward, const float* dOut)
{
    AttentionGradients grads;
    attentionBackward(bias, dims, q, k, v, forward, dOut, grads);
    return grads;
}

namespace {

// attentionBackward for one pass, with the forward's out and lse of the whole call: a pass's probabilities are then
// already its share of the joint softmax, and so are its gradients.
void backwardPass(const PositionBias& bias, const AttentionDims& dims, const Pass& pass, const float* q, const float* k,
                  const float* v, const AttentionForward& forward, const float* dOut, AttentionGradients& grads,
                  double* scoreDot)
{
    const Plan plan(bias, dims, detail::rotaryFrequencies(bias.spec(), dims.rotatedDims(), dims.length), pass);
    // Every element of dq, dk and dv is written once: dk, dv by the key block owning the row, dq by the head's
    // (or the query block's) final write. The bias gradients are assigned for their schemes and empty otherwise.
    grads.dq.resize(dims.elements());
    grads.dk.resize(dims.elements());
    grads.dv.resize(dims.elements());
    BackwardCall call(plan, q, k, v, dOut, forward, grads);
    call.scoreDot = scoreDot;
    std::vector<double> distanceGrad(call.trainable ? dims.heads * call.distStride : 0, 0.0);
    grads.dFire = bias.fire() ? fireZeroGradient(dims.heads) : FireParams{}; // the strategies add the later rows
    grads.dLogForget.assign(dims.logForget ? dims.elements() / dims.headDim : 0, 0.0); // key blocks write theirs
    if (call.heads >= kHeadParallelMin)
        backwardHeadParallel(call, distanceGrad);
    else
        backwardTwoPass(call, distanceGrad);
    detail::biasParameterGradients(bias, distanceGrad, dims.length, grads.dT5Values, grads.dKerpleR1, grads.dKerpleR2);
    if (bias.fire())
        detail::fireDistanceGradients(bias, distanceGrad, dims.length, grads.dFire);
}

// The softmax modifiers' gradients, from what the passes left. SSMax: d loss / d s_h = sum dL/ds s / s_h over the
// final scores s (each a multiple of s_h), summed per row by the passes in scoreDot. Sink logit: its column's
// gradient p_sink (0 - delta) per row, delta = dO . out (the column has no value, so dP = 0 there).
void softmaxModifierGradients(const PositionBias& bias, const AttentionDims& dims, const AttentionForward& forward,
                              const float* dOut, const std::vector<double>& scoreDot, AttentionGradients& grads)
{
    const SchemeSpec& spec = bias.spec();
    const int N = dims.length, D = dims.headDim, heads = dims.batch * dims.heads;
    grads.dSsmaxScales.assign(spec.ssmax ? dims.heads : 0, 0.0);
    grads.dSinkLogits.assign(spec.sinkLogit ? dims.heads : 0, 0.0);
    for (int bh = 0; bh < heads; ++bh) { // in order: the same sums for any thread count
        const int h = bh % dims.heads;
        for (int m = 0; m < N; ++m) {
            const size_t row = static_cast<size_t>(bh) * N + m;
            if (spec.ssmax)
                grads.dSsmaxScales[h] += scoreDot[row] / ssmaxScale(spec, h);
            if (spec.sinkLogit) {
                double delta = 0;
                for (int d = 0; d < D; ++d)
                    delta += static_cast<double>(dOut[row * D + d]) * forward.out[row * D + d];
                grads.dSinkLogits[h] -= std::exp(sinkLogit(spec, h) - forward.logSumExp[row]) * delta;
            }
        }
    }
}

} // namespace

void attentionBackward(const PositionBias& bias, const AttentionDims& dims, const float* q, const float* k,
                       const float* v, const AttentionForward& forward, const float* dOut, AttentionGradients& grads)
{
    if (dims.keyValueHeads() != dims.heads)
        throw InputError("grouped-query attention (kv-heads = " + std::to_string(dims.kvHeads) +
                         ") has a forward only; the backward needs kv-heads = heads");
    detail::validateAttention(bias, dims);
    if (forward.out.size() != dims.elements() || forward.logSumExp.size() != dims.elements() / dims.headDim)
        throw InputError("attentionBackward: the forward result does not match the dimensions");
    if (bias.spec().kind == SchemeKind::Cope) {
        const CopeCall call = copeCall(bias, dims);
        grads.dq.resize(dims.elements());
        grads.dk.resize(dims.elements());
        grads.dv.resize(dims.elements());
        grads.dCopeEmbeddings.resize(static_cast<size_t>(dims.headDim) * call.dims.nposMax);
        copeBlockedBackward(call.dims, q, k, v, call.table(), forward.out.data(), forward.logSumExp.data(), dOut,
                            grads.dq.data(), grads.dk.data(), grads.dv.data(), grads.dCopeEmbeddings.data());
        grads.dT5Values.clear();
        grads.dKerpleR1.clear();
        grads.dKerpleR2.clear();
        grads.dFire = {};
        grads.dSsmaxScales.clear();
        grads.dSinkLogits.clear();
        return;
    }
    grads.dCopeEmbeddings.clear();
    const std::vector<Pass> passes = passesOf(bias, dims.length);
    std::vector<double> scoreDot(bias.spec().ssmax ? dims.elements() / dims.headDim : 0, 0.0); // (B H, N)
    double* dot = scoreDot.empty() ? nullptr : scoreDot.data();
    backwardPass(bias, dims, passes[0], q, k, v, forward, dOut, grads, dot);
    for (size_t i = 1; i < passes.size(); ++i) {
        AttentionGradients extra;
        backwardPass(bias, dims, passes[i], q, k, v, forward, dOut, extra, dot);
        const size_t count = grads.dq.size();
#pragma omp parallel for schedule(static) if (count > 65536)
        for (size_t e = 0; e < count; ++e) {
            grads.dq[e] += extra.dq[e];
            grads.dk[e] += extra.dk[e];
            grads.dv[e] += extra.dv[e];
        }
        for (size_t e = 0; e < extra.dLogForget.size(); ++e) // FoX has one pass; kept right should another come
            grads.dLogForget[e] += extra.dLogForget[e];
        // The bias parameters' gradients of the pass's cells (sinks beside a window or chunk of t5, kerple, fire).
        for (auto [total, part] :
             {std::pair{&grads.dT5Values, &extra.dT5Values}, std::pair{&grads.dKerpleR1, &extra.dKerpleR1},
              std::pair{&grads.dKerpleR2, &extra.dKerpleR2}})
            for (size_t e = 0; e < part->size(); ++e)
                (*total)[e] += (*part)[e];
        if (bias.fire())
            addFireGradient(grads.dFire, extra.dFire);
    }
    softmaxModifierGradients(bias, dims, forward, dOut, scoreDot, grads);
}

} // namespace plab
