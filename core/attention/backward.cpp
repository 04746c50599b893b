// The kernel's backward: the softmax backward per row, one key block, one query block, and the backward strategies.
#include "attention/backward.h"

#include <algorithm>

namespace plab::kernel {

namespace {

// dq rows [m0, m1) of one head from the accumulated dS K (rows from m0, stride Dp): times 1/sqrt(D), rotated back.
void writeQueryGradient(const Plan& plan, const float* dQ, int m0, int m1, float* dq)
{
    std::vector<float> row(plan.Dp);
    for (int m = m0; m < m1; ++m) {
        for (int d = 0; d < plan.D; ++d)
            row[d] = dQ[static_cast<size_t>(m - m0) * plan.Dp + d] * plan.invSqrtD;
        float* target = dq + static_cast<size_t>(m) * plan.D;
        if (plan.rotary.active())
            plan.rotary.rotateBack(row.data(), target, m, Rotation::AsQuery);
        else
            std::copy(row.begin(), row.begin() + plan.D, target);
    }
}

// What a backward work item gathers besides dq, dk, dv and the per-distance bias gradient. FIRE: the thread's bias
// tile (a row of it per call) and the item's gradient of the MLP for the rows past the distance-only ones (theirs
// goes per distance, as for t5 and kerple). SSMax: scoreDot[m] += sum_n dL/ds(m, n) s(m, n) over the final scores,
// from which the kernel's caller takes the gradient of s_h (d s / d s_h = s / s_h).
struct RowExtras {
    float* fireRow = nullptr; // the row-dependent bias of the row (FIRE, FoX)
    FireParams* fireGrad = nullptr;
    double* scoreDot = nullptr;        // indexed by the row m
    const double* logForget = nullptr; // FoX: the head's cumulative log gates (N)
};

// Softmax backward of row m over the columns [band.begin, band.end) of a tile starting at key c: s holds the raw
// scores Q K^T and ds the products dO V^T; afterwards s holds P and ds holds dS = P (dP - delta) * rowScale (times
// the soft cap's slope 1 - tanh^2 under a cap), the gradient of the bias-and-scores before the logn factor. With dist
// (indexed by m - n), adds dS per distance; FIRE's rows past its distance-only ones add theirs to fire.grad pair by
// pair instead.
inline void softmaxBackwardRow(const Plan& plan, int h, int m, int c, ColumnBand band, float* s, float* ds, float lse,
                               float delta, double* dist, RowExtras extras = {})
{
    if (plan.rowBiased())
        plan.rowBias(h, extras.logForget, m, c + band.begin, band.end - band.begin, extras.fireRow);
    plan.scoreRow(s + band.begin, h, m, c + band.begin, band.end - band.begin, 1.0f,
                  plan.rowBiased() ? extras.fireRow : nullptr);
    const Vec shift = splat(lse), dl = splat(delta);
    const float g = plan.rowScales(h)[m];
    if (extras.scoreDot) {
        const Vec zero = splat(0.0f);
        Vec dot = zero;
        for (int j = band.begin; j < band.end; j += kLanes) {
            const Vec score = load(s + j);
            const Vec p = expNonPositive(vmin(score - shift, zero));
            const Vec grad = p * (load(ds + j) - dl);
            dot += select(p > zero, grad * score, zero); // masked lanes: p = 0 and score = -inf
            store(s + j, p);
            store(ds + j, grad * g);
        }
        extras.scoreDot[m] += horizontalSum(dot);
    } else if (plan.softcap > 0) { // through the cap: d capped / d score = 1 - (capped / c)^2
        for (int j = band.begin; j < band.end; j += kLanes) {
            const Vec capped = load(s + j);
            const Vec p = expNonPositive(vmin(capped - shift, splat(0.0f)));
            store(s + j, p);
            store(ds + j, p * (load(ds + j) - dl) * softcapSlope(capped, plan.softcap) * g);
        }
    } else {
        for (int j = band.begin; j < band.end; j += kLanes) {
            const Vec p = expNonPositive(vmin(load(s + j) - shift, splat(0.0f)));
            store(s + j, p);
            store(ds + j, p * (load(ds + j) - dl) * g);
        }
    }
    if (dist) {
        const int lo = std::max(plan.rowBegin[m], c + band.begin), hi = std::min(plan.rowEnd[m], c + band.end);
        if (plan.fire && m >= plan.fireDistanceRows) {
            if (extras.fireGrad && hi > lo)
                plan.fireGradientRow(h, m, lo, hi, ds + (lo - c), *extras.fireGrad);
            return;
        }
        double* at = dist + m;
        for (int n = lo; n < hi; ++n)
            at[-n] += ds[n - c];
    }
}

// Backward pass 1, one key block of one head: recomputes P and dS for every query that sees these keys and
// accumulates dK and dV (which belong to this item alone).
// With `dQ` (the head's (N, Dp) accumulator) it also adds dS K to the queries' rows, and with `dist` (indexed by
// r = m - n) the bias gradient: the single-pass FlashAttention-2 backward for a head owned by one thread.
// FoX (logForget, the head's F): with dLogForget (the head's (N)) it writes dL/dF_n = -sum_m dS(m, n) of its keys, the
// gradient of their column term -F_n (the row term F_m adds sum_n dS(m, n) = 0 to F_m: a softmax's rows sum to 1).
void backwardKeyBlock(const Plan& plan, int h, int n0, const BackwardPacks& pk, const float* lse, Scratch& sc,
                      float* dk, float* dv, float* dQ = nullptr, double* dist = nullptr, FireParams* fireGrad = nullptr,
                      double* scoreDot = nullptr, const double* logForget = nullptr, double* dLogForget = nullptr)
{
    const RowExtras extras{plan.rowBiased() ? fireTile(sc) : nullptr, fireGrad, scoreDot, logForget};
    const int N = plan.N, D = plan.D, Dp = plan.Dp;
    const int n1 = std::min(N, n0 + kBackKeyBlock);
    const int wk = roundUp(n1 - n0, kLanes);
    // Key ranges are intervals whose ends never decrease with m, so the queries seeing [n0, n1) are an interval.
    const int* begin = plan.rowBegin.data();
    const int* end = plan.rowEnd.data();
    const int mA = static_cast<int>(std::partition_point(end, end + N, [&](int e) { return e <= n0; }) - end);
    const int mB = static_cast<int>(std::partition_point(begin, begin + N, [&](int b) { return b < n1; }) - begin);
    constexpr size_t ldS = kKeyBlock;
    float* S = sc.scores.data();
    float* dP = sc.dscores.data();
    float* dK = sc.acc2.data();
    float* dV = sc.acc3.data();
    std::fill(dK, dK + static_cast<size_t>(wk) * Dp, 0.0f);
    std::fill(dV, dV + static_cast<size_t>(wk) * Dp, 0.0f);
    // FoX: sum over the queries of dS(m, n), per key of the block.
    double keySums[kBackKeyBlock] = {};
    ColumnBand bands[kQueryTiles]; // per register tile of queries: the key columns its rows see
    ColumnBand byKey[kKeyTiles];   // per register tile of keys: the queries that see them
    for (int q0 = mA; q0 < mB; q0 += kQueryBlock) {
        const int R = std::min(kQueryBlock, mB - q0);
        queryBands(plan, q0, R, n0, wk, bands);
        keyBands(plan, n0, wk, q0, R, byKey);
        gemmNTBanded(pk.Qs + static_cast<size_t>(q0) * Dp, Dp, pk.Kt + n0, plan.ldT, Dp, R, wk, bands, S, ldS);
        gemmNTBanded(pk.dOs + static_cast<size_t>(q0) * Dp, Dp, pk.Vt + n0, plan.ldT, Dp, R, wk, bands, dP, ldS);
        for (int i = 0; i < R; ++i) {
            const ColumnBand band = bands[i / kRowTile];
            float* s = S + i * ldS;
            float* ds = dP + i * ldS;
            // The products over queries below read whole rows: cells outside the band are zero.
            std::fill(s, s + band.begin, 0.0f);
            std::fill(ds, ds + band.begin, 0.0f);
            std::fill(s + band.end, s + wk, 0.0f);
            std::fill(ds + band.end, ds + wk, 0.0f);
            if (band.end > band.begin)
                softmaxBackwardRow(plan, h, q0 + i, n0, band, s, ds, lse[q0 + i], pk.delta[q0 + i], dist, extras);
            for (int j = band.begin; dLogForget && j < band.end; ++j) // cells outside the band are zero
                keySums[j] += ds[j];
        }
        // dV += P^T dO, dK += dS^T (Q / sqrt(D)): A(i = key, j = query) = tile[j][i].
        gemmNNBanded(S, 1, ldS, pk.dOs + static_cast<size_t>(q0) * Dp, Dp, R, wk, Dp, byKey, dV, Dp, nullptr);
        gemmNNBanded(dP, 1, ldS, pk.Qs + static_cast<size_t>(q0) * Dp, Dp, R, wk, Dp, byKey, dK, Dp, nullptr);
        if (dQ)
            gemmNNBanded(dP, ldS, 1, pk.Ks + static_cast<size_t>(n0) * Dp, Dp, wk, R, Dp, bands,
                         dQ + static_cast<size_t>(q0) * Dp, Dp, nullptr);
    }
    for (int n = n0; dLogForget && n < n1; ++n)
        dLogForget[n] = -keySums[n - n0];
    for (int n = n0; n < n1; ++n) {
        const float* kRow = dK + static_cast<size_t>(n - n0) * Dp;
        const float* vRow = dV + static_cast<size_t>(n - n0) * Dp;
        std::copy(vRow, vRow + D, dv + static_cast<size_t>(n) * D);
        float* target = dk + static_cast<size_t>(n) * D;
        if (plan.rotary.active())
            plan.rotary.rotateBack(kRow, target, n, Rotation::AsKey);
        else
            std::copy(kRow, kRow + D, target);
    }
}

// Backward pass 2, one query block of one head: recomputes P and dS over the visible keys and accumulates dQ
// (this item's alone) and, for trainable biases, the bias gradient per distance into `dist` (at r - distBase).
void backwardQueryBlock(const Plan& plan, int h, int m0, const BackwardPacks& pk, const float* lse, Scratch& sc,
                        float* dq, double* dist, int distBase, FireParams* fireGrad = nullptr,
                        double* scoreDot = nullptr, const double* logForget = nullptr)
{
    const RowExtras extras{plan.rowBiased() ? fireTile(sc) : nullptr, fireGrad, scoreDot, logForget};
    const int N = plan.N, Dp = plan.Dp;
    const int R = std::min(kQueryBlock, N - m0);
    const int keyEnd = plan.rowEnd[m0 + R - 1];
    constexpr size_t ldS = kKeyBlock;
    float* S = sc.scores.data();
    float* dP = sc.dscores.data();
    float* dQ = sc.acc.data();
    std::fill(dQ, dQ + static_cast<size_t>(R) * Dp, 0.0f);
    ColumnBand bands[kQueryTiles]; // per register tile of rows: the key columns they see in the current tile
    for (int c = plan.blockKeyBegin(m0); c < keyEnd; c += kKeyBlock) {
        const int w = std::min(kKeyBlock, roundUp(keyEnd - c, kLanes));
        queryBands(plan, m0, R, c, w, bands);
        gemmNTBanded(pk.Qs + static_cast<size_t>(m0) * Dp, Dp, pk.Kt + c, plan.ldT, Dp, R, w, bands, S, ldS);
        gemmNTBanded(pk.dOs + static_cast<size_t>(m0) * Dp, Dp, pk.Vt + c, plan.ldT, Dp, R, w, bands, dP, ldS);
        for (int i = 0; i < R; ++i) {
            const ColumnBand band = bands[i / kRowTile];
            if (band.end > band.begin)
                softmaxBackwardRow(plan, h, m0 + i, c, band, S + i * ldS, dP + i * ldS, lse[m0 + i], pk.delta[m0 + i],
                                   dist ? dist - distBase : nullptr, extras);
        }
        gemmNNBanded(dP, ldS, 1, pk.Ks + static_cast<size_t>(c) * Dp, Dp, w, R, Dp, bands, dQ, Dp, nullptr);
    }
    writeQueryGradient(plan, dQ, m0, m0 + R, dq);
}

} // namespace

// ---- backward strategies ----

void backwardHeadParallel(const BackwardCall& call, std::vector<double>& distanceGrad)
{
    const Plan& plan = call.plan;
    const int N = plan.N, keyBlocks = (N + kBackKeyBlock - 1) / kBackKeyBlock;
    std::vector<std::vector<double>> headDist(call.trainable ? call.heads : 0);
    std::vector<FireParams> headFire(plan.fire ? call.heads : 0, fireZeroGradient(plan.fire ? plan.dims.heads : 0));
#pragma omp parallel if (plan.worthThreads(call.heads))
    {
        const SubnormalsFlushed flushed;
        Scratch scratch(plan.Dp);
        AlignedFloats buffers(BackwardPacks::floats(plan), 0.0f);
        const BackwardPacks pk(plan, buffers.data());
        AlignedFloats dQ(BackwardPacks::qSize(plan));
#pragma omp for schedule(dynamic)
        for (int bh = 0; bh < call.heads; ++bh) {
            for (BackwardInput input : kBackwardInputs)
                call.pack(pk, bh, input);
            std::fill(dQ.begin(), dQ.end(), 0.0f);
            double* dist = nullptr;
            if (call.trainable) {
                headDist[bh].assign(call.distStride, 0.0);
                dist = headDist[bh].data() + (N - 1);
            }
            for (int block = 0; block < keyBlocks; ++block)
                backwardKeyBlock(plan, bh % plan.dims.heads, block * kBackKeyBlock, pk, call.lse(bh), scratch,
                                 call.grads.dk.data() + bh * call.headSize, call.grads.dv.data() + bh * call.headSize,
                                 dQ.data(), dist, plan.fire ? &headFire[bh] : nullptr, call.scoreDotOf(bh),
                                 plan.logForgetOf(bh), call.dLogForgetOf(bh));
            writeQueryGradient(plan, dQ.data(), 0, N, call.grads.dq.data() + bh * call.headSize);
        }
    }
    for (int bh = 0; call.trainable && bh < call.heads; ++bh) // fixed order: the same sum for any thread count
        for (size_t i = 0; i < call.distStride; ++i)
            distanceGrad[(bh % plan.dims.heads) * call.distStride + i] += headDist[bh][i];
    for (const FireParams& g : headFire) // in head order, as above
        addFireGradient(call.grads.dFire, g);
}

namespace {

// The bias gradient of the two-pass backward: one buffer per (head of the group, query block) over the distances the
// block can touch, summed in a fixed order afterwards, so the result does not depend on the thread count.
struct QueryBlockDistances {
    int queryBlocks = 0;
    std::vector<std::vector<double>> buffers;
    std::vector<int> bases; // distance r of each buffer's first entry

    QueryBlockDistances(bool trainable, int group, int blocks)
        : queryBlocks(blocks), buffers(trainable ? group * blocks : 0), bases(buffers.size(), 0)
    {
    }
    // Zeroed buffer for block `block` of group member g, indexed by r - base; null when nothing is trainable.
    double* start(const Plan& plan, int g, int block, int& base)
    {
        base = 0;
        if (buffers.empty())
            return nullptr;
        const int m0 = block * kQueryBlock, last = std::min(plan.N, m0 + kQueryBlock) - 1;
        base = m0 - (plan.rowEnd[last] - 1); // r = m - n over the block's rows and visible keys
        std::vector<double>& buffer = buffers[g * queryBlocks + block];
        buffer.assign(last - plan.rowBegin[m0] - base + 1, 0.0);
        bases[g * queryBlocks + block] = base;
        return buffer.data();
    }
    // Adds member g's buffers to `target` (indexed by r).
    void addTo(int g, double* target) const
    {
        for (int block = 0; block < queryBlocks; ++block) {
            const std::vector<double>& buffer = buffers[g * queryBlocks + block];
            for (size_t i = 0; i < buffer.size(); ++i)
                target[bases[g * queryBlocks + block] + static_cast<int>(i)] += buffer[i];
        }
    }
};

} // namespace

void backwardTwoPass(const BackwardCall& call, std::vector<double>& distanceGrad)
{
    const Plan& plan = call.plan;
    const int N = plan.N, H = plan.dims.heads;
    const size_t perHead = BackwardPacks::floats(plan);
    const int group = groupSize(plan.dims, perHead * sizeof(float), size_t(32) << 20);
    AlignedFloats buffers(group * perHead, 0.0f);
    const int keyBlocks = (N + kBackKeyBlock - 1) / kBackKeyBlock, queryBlocks = (N + kQueryBlock - 1) / kQueryBlock;
    QueryBlockDistances distances(call.trainable, group, queryBlocks);
    // FIRE's pair-by-pair gradient: one buffer per (group member, query block), summed in a fixed order.
    std::vector<FireParams> blockFire(plan.fire ? group * queryBlocks : 0, fireZeroGradient(plan.fire ? H : 0));
#pragma omp parallel if (plan.worthThreads(call.heads))
    {
        const SubnormalsFlushed flushed;
        Scratch scratch(plan.Dp);
        for (int first = 0; first < call.heads; first += group) {
            const int count = std::min(group, call.heads - first);
#pragma omp for schedule(dynamic)
            for (int task = 0; task < kBackwardInputCount * count; ++task)
                call.pack(BackwardPacks(plan, buffers.data() + (task / kBackwardInputCount) * perHead),
                          first + task / kBackwardInputCount, kBackwardInputs[task % kBackwardInputCount]);
            const int pass1 = count * keyBlocks;
#pragma omp for schedule(dynamic)
            for (int item = 0; item < pass1 + count * queryBlocks; ++item) {
                const bool keyItem = item < pass1;
                const int index = keyItem ? item : item - pass1;
                const int g = index % count, bh = first + g;
                const int block = (keyItem ? keyBlocks : queryBlocks) - 1 - index / count;
                const BackwardPacks pk(plan, buffers.data() + g * perHead);
                if (keyItem) {
                    backwardKeyBlock(plan, bh % H, block * kBackKeyBlock, pk, call.lse(bh), scratch,
                                     call.grads.dk.data() + bh * call.headSize,
                                     call.grads.dv.data() + bh * call.headSize, nullptr, nullptr, nullptr, nullptr,
                                     plan.logForgetOf(bh), call.dLogForgetOf(bh));
                    continue;
                }
                int base = 0;
                double* dist = distances.start(plan, g, block, base);
                FireParams* fireGrad = nullptr;
                if (plan.fire) {
                    fireGrad = &blockFire[g * queryBlocks + block];
                    *fireGrad = fireZeroGradient(H);
                }
                backwardQueryBlock(plan, bh % H, block * kQueryBlock, pk, call.lse(bh), scratch,
                                   call.grads.dq.data() + bh * call.headSize, dist, base, fireGrad, call.scoreDotOf(bh),
                                   plan.logForgetOf(bh));
            }
            if (call.trainable) {
#pragma omp single
                for (int g = 0; g < count; ++g) {
                    distances.addTo(g, distanceGrad.data() + ((first + g) % H) * call.distStride + (N - 1));
                    for (int block = 0; plan.fire && block < queryBlocks; ++block)
                        addFireGradient(call.grads.dFire, blockFire[g * queryBlocks + block]);
                }
            }
        }
    }
}

} // namespace plab::kernel
