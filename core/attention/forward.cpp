// The kernel's forward: the online softmax over key tiles of one query block, and the forward strategies.
#include "attention/forward.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace plab::kernel {

namespace {

// A product rounded before it is added, never fused into a multiply-add: the running softmax sums are then the same
// whether or not the compiler sees the horizontal sum they are added to (an opaque sum once, inlined vector adds now).
template <typename T>
inline T roundedProduct(T product)
{
#if defined(__GNUC__) && defined(__SSE2__)
    asm("" : "+x"(product));
#endif
    return product;
}

// The online softmax of row i of a query block over one key tile: `row` (width columns) holds the row's scores
// (after the mask/bias step, with maximum tileMax) and gets exp(score - new running max); the running max, sum and,
// with `entropy`, sum p (s - max) advance, and factor[i] is what the row's earlier output must be rescaled by.
inline void onlineSoftmaxRow(Scratch& sc, int i, float* row, int width, float tileMax, bool entropy)
{
    const float oldMax = sc.rowMax[i];
    const float newMax = std::max(oldMax, tileMax);
    if (newMax == PositionBias::kMasked) { // nothing visible yet: contributes nothing
        std::fill(row, row + width, 0.0f);
        sc.factor[i] = 1.0f;
        return;
    }
    const bool first = oldMax == PositionBias::kMasked;
    const float corr = first ? 0.0f : std::exp(oldMax - newMax);
    const Vec zero = splat(0.0f), mx = splat(newMax);
    Vec sum = zero, weighted = zero;
    for (int j = 0; j < width; j += kLanes) {
        const Vec x = load(row + j) - mx;
        const Vec p = expNonPositive(x);
        store(row + j, p);
        sum += p;
        if (entropy)
            weighted += select(p > zero, p * x, zero);
    }
    if (entropy)
        sc.rowWeighted[i] =
            roundedProduct(corr * (sc.rowWeighted[i] + (first ? 0.0 : double(oldMax - newMax) * sc.rowSum[i]))) +
            horizontalSum(weighted);
    sc.rowSum[i] = roundedProduct(sc.rowSum[i] * corr) + horizontalSum(sum);
    sc.rowMax[i] = newMax;
    sc.factor[i] = corr;
}

// The probabilities of one query block: the same banded scores again, normalised with the final lse; cells outside
// the bands stay 0 (the caller zeroed them).
void writeBlockProbabilities(const Plan& plan, int h, int m0, const BlockIO& io, Scratch& sc)
{
    const int N = plan.N, Dp = plan.Dp;
    const int R = std::min(kQueryBlock, N - m0);
    const int keyEnd = plan.rowEnd[m0 + R - 1];
    constexpr size_t ldS = kKeyBlock;
    float* S = sc.scores.data();
    ColumnBand bands[kQueryTiles];
    for (int c = plan.blockKeyBegin(m0); c < keyEnd; c += kKeyBlock) {
        const int w = std::min(kKeyBlock, roundUp(keyEnd - c, kLanes));
        queryBands(plan, m0, R, c, w, bands);
        gemmNTBanded(io.Q + static_cast<size_t>(m0) * Dp, Dp, io.Kt.at(c), io.Kt.ld, Dp, R, w, bands, S, ldS);
        for (int i = 0; i < R; ++i) {
            const int m = m0 + i;
            const ColumnBand band = bands[i / kRowTile];
            if (band.end <= band.begin)
                continue;
            float* row = S + i * ldS + band.begin;
            const int width = band.end - band.begin;
            float* rowBias = plan.rowBiased() ? fireTile(sc) : nullptr;
            if (rowBias)
                plan.rowBias(h, io.logForget, m, c + band.begin, width, rowBias);
            plan.scoreRow(row, h, m, c + band.begin, width, io.qkScale, rowBias);
            const Vec shift = splat(io.lse[m]);
            for (int j = 0; j < width; j += kLanes)
                store(row + j, expNonPositive(vmin(load(row + j) - shift, splat(0.0f))));
            const int valid = std::max(0, std::min(width, N - c - band.begin));
            std::copy(row, row + valid, io.probs + static_cast<size_t>(m) * N + c + band.begin);
        }
    }
}

// The row-dependent bias (FIRE, FoX with F of the head) of the block's rows over the tile's columns at c (each row over
// its register tile's band) into the thread's bias tile, which the scoring then reads row by row instead of a
// reversed distance table.
void prepareRowBiasTile(const Plan& plan, int h, const double* F, int m0, int R, int c, const ColumnBand* bands,
                        Scratch& sc, TileScoring& scoring)
{
    float* tile = fireTile(sc);
    for (int i = 0; i < R; ++i) {
        const ColumnBand band = bands[i / kRowTile];
        if (band.end > band.begin)
            plan.rowBias(h, F, m0 + i, c + band.begin, band.end - band.begin, tile + i * kKeyBlock + band.begin);
    }
    scoring.bias = tile;
    scoring.biasRowStep = kKeyBlock;
}

} // namespace

// One query block of one head: the tile loop of the online softmax over the visible key tiles. Per tile: the products
// Q K^T with the mask/bias step in their epilogue (TileScoring), the online softmax per row, then O = factor .* O + P
// V. With io.probs, a second pass over the same tiles writes the normalised probabilities (the same scores, so they
// agree with out and lse).
void forwardBlock(const Plan& plan, int h, int m0, const BlockIO& io, Scratch& sc)
{
    const int N = plan.N, D = plan.D, Dp = plan.Dp;
    const int R = std::min(kQueryBlock, N - m0);
    const int keyEnd = plan.rowEnd[m0 + R - 1];
    constexpr size_t ldS = kKeyBlock;
    float* S = sc.scores.data();
    float* O = sc.acc.data();
    std::fill(O, O + static_cast<size_t>(R) * Dp, 0.0f);
    std::fill(sc.rowMax.begin(), sc.rowMax.end(), PositionBias::kMasked);
    std::fill(sc.rowSum.begin(), sc.rowSum.end(), 0.0f);
    std::fill(sc.rowWeighted.begin(), sc.rowWeighted.end(), 0.0);
    std::fill(sc.factor.begin(), sc.factor.end(), 1.0f);
    ColumnBand bands[kQueryTiles]; // per register tile of rows, in the current key tile
    TileScoring scoring;           // the mask/bias step, in the products' epilogue
    scoring.rowBegin = plan.rowBegin.data() + m0;
    scoring.rowEnd = plan.rowEnd.data() + m0;
    scoring.rowScale = plan.useScale ? plan.rowScales(h) + m0 : nullptr;
    scoring.qkScale = io.qkScale;
    scoring.softcap = plan.softcap;
    scoring.rowBest = sc.rowBest.data();
    for (int c = plan.blockKeyBegin(m0); c < keyEnd; c += kKeyBlock) {
        const int w = std::min(kKeyBlock, roundUp(keyEnd - c, kLanes));
        queryBands(plan, m0, R, c, w, bands);
        scoring.column = c;
        scoring.bias = plan.useBias ? plan.reversedBias.data() + h * plan.biasStride + (c - m0 + N - 1) : nullptr;
        if (plan.rowBiased())
            prepareRowBiasTile(plan, h, io.logForget, m0, R, c, bands, sc, scoring);
        std::fill(sc.rowBest.begin(), sc.rowBest.end(), PositionBias::kMasked);
        gemmNTBanded(io.Q + static_cast<size_t>(m0) * Dp, Dp, io.Kt.at(c), io.Kt.ld, Dp, R, w, bands, S, ldS, &scoring);
        for (int i = 0; i < R; ++i) {
            const ColumnBand band = bands[i / kRowTile];
            float* row = S + i * ldS + band.begin;
            const int width = band.end - band.begin;
            const float tileMax =
                width > 0 ? horizontalMax(load(sc.rowBest.data() + i * kLanes)) : PositionBias::kMasked;
            onlineSoftmaxRow(sc, i, row, width, tileMax, io.entropy != nullptr);
        }
        // Columns past N have probability 0: leave their (nonexistent) value rows out.
        if (io.V)
            gemmNNBanded(S, ldS, 1, io.V + static_cast<size_t>(c) * Dp, Dp, std::min(w, N - c), R, Dp, bands, O, Dp,
                         sc.factor.data());
    }
    for (int i = 0; i < R; ++i) {
        const int m = m0 + i;
        const float inv = 1.0f / sc.rowSum[i];
        for (int d = 0; io.out && d < D; ++d)
            io.out[static_cast<size_t>(m) * D + d] = O[static_cast<size_t>(i) * Dp + d] * inv;
        io.lse[m] = sc.rowMax[i] + std::log(sc.rowSum[i]);
        if (io.entropy)
            io.entropy[m] =
                static_cast<float>(std::log(static_cast<double>(sc.rowSum[i])) - sc.rowWeighted[i] / sc.rowSum[i]);
    }
    if (io.probs)
        writeBlockProbabilities(plan, h, m0, io, sc);
}

// ---- forward strategies: which thread runs which (head, query block), and where its packed inputs live ----

namespace {

// The head-parallel forward's K^T, packed just ahead of the query blocks that first read it, so each block finds its
// keys in L1/L2 instead of in a whole-head pack that at large N has long been evicted to memory. When the first
// visible key moves on with the rows (local, bca), the pack is a window of `columns`: the widest span a block's tiles
// read plus slack, slid back to its start when full. It then stays in L2 however long N is, instead of streaming
// D x N floats through memory per head. Otherwise (causal, bidirectional) it is the whole head.
struct KeyColumnWindow {
    const Plan& plan;
    int columns = 0;    // columns the window holds
    size_t ld = 0;      // its row stride
    int packedKeys = 0; // columns [base, packedKeys) hold the current head's keys

    explicit KeyColumnWindow(const Plan& p) : plan(p)
    {
        int widestSpan = 0;
        for (int m0 = 0; m0 < plan.N; m0 += kQueryBlock)
            widestSpan = std::max(widestSpan, plan.blockColumnEnd(m0) - plan.blockKeyBegin(m0));
        const bool sliding = widestSpan + kKeyWindowSlack < plan.keysPadded;
        columns = sliding ? widestSpan + kKeyWindowSlack : plan.keysPadded;
        ld = static_cast<size_t>(columns) + kLanes; // as ldT: no L1 set aliasing down a column
    }
    size_t floats() const { return ld * plan.Dp; }

    // Makes the columns the query block at m0 reads present in `data`, seen through Kt (whose `base` may move), from
    // the head's keys kHead; returns the end of the keys packed so far.
    int prepare(const float* kHead, float* data, KeyColumns& Kt, int m0)
    {
        const int N = plan.N, D = plan.D;
        const int keyBegin = plan.blockKeyBegin(m0), columnEnd = plan.blockColumnEnd(m0);
        if (columnEnd - Kt.base > columns) {
            // Slide: keep the packed columns this block still reads, at the start of the window.
            const int keep = std::max(0, packedKeys - keyBegin);
            for (int d = 0; d < D; ++d) {
                float* row = data + static_cast<size_t>(d) * ld;
                std::memmove(row, row + (keyBegin - Kt.base), sizeof(float) * keep);
            }
            Kt.base = keyBegin;
            packedKeys = std::max(packedKeys, keyBegin);
        }
        const int needed = std::min(N, columnEnd);
        if (needed > packedKeys) {
            packColumns(plan, kHead, data, ld, Kt.base, Rotation::AsKey, packedKeys, needed);
            packedKeys = needed;
        }
        // Tiles may run past N into padding, which must read as zeros whatever a slide left there.
        for (int d = 0; columnEnd > N && d < D; ++d)
            std::fill_n(data + static_cast<size_t>(d) * ld + (N - Kt.base), columnEnd - N, 0.0f);
        return needed;
    }
};

// Asks for the next query block's new inputs now, so at large N (inputs beyond the last-level cache) they arrive
// while this block computes: its q rows, output rows, and the keys/values it adds to the window (from `packedEnd`).
void prefetchNextBlock(const ForwardCall& call, const BlockIO& io, int bh, int nextBlock, int packedEnd)
{
    const Plan& plan = call.plan;
    const int N = plan.N, D = plan.D;
    const size_t m1 = static_cast<size_t>(nextBlock) * kQueryBlock;
    const size_t rowsNext = std::min<size_t>(kQueryBlock, N - m1);
    const int nextEnd = std::min(N, plan.rowEnd[std::min<size_t>(N, m1 + kQueryBlock) - 1]);
    auto prefetch = [](const float* p, size_t floats, int write) {
        for (size_t i = 0; i < floats; i += 16)
            write ? __builtin_prefetch(p + i, 1) : __builtin_prefetch(p + i, 0);
    };
    const size_t qStride = call.packQ ? plan.Dp : D, vStride = call.packV ? plan.Dp : D;
    prefetch(io.Q + m1 * qStride, rowsNext * qStride, 0);
    prefetch(io.out + m1 * D, rowsNext * D, 1);
    if (nextEnd > packedEnd) {
        prefetch(call.k + call.keyValueOffset(bh) + static_cast<size_t>(packedEnd) * D, size_t(nextEnd - packedEnd) * D,
                 0);
        prefetch(io.V + static_cast<size_t>(packedEnd) * vStride, size_t(nextEnd - packedEnd) * vStride, 0);
    }
}

} // namespace

void forwardHeadParallel(const ForwardCall& call)
{
    const Plan& plan = call.plan;
#pragma omp parallel if (plan.worthThreads(call.heads))
    {
        const SubnormalsFlushed flushed;
        Scratch scratch(plan.Dp);
        KeyColumnWindow window(plan);
        AlignedFloats buffer(call.qSize + window.floats() + call.vSize, 0.0f);
#pragma omp for schedule(dynamic)
        for (int bh = 0; bh < call.heads; ++bh) {
            call.pack(buffer.data(), window.floats(), bh, ForwardInput::Queries);
            call.pack(buffer.data(), window.floats(), bh, ForwardInput::Values);
            BlockIO io = call.io(buffer.data(), window.floats(), window.ld, bh);
            window.packedKeys = 0;
            for (int qb = 0; qb < call.queryBlocks; ++qb) {
                const int packedEnd = window.prepare(call.k + call.keyValueOffset(bh), buffer.data() + call.qSize,
                                                     io.Kt, qb * kQueryBlock);
                if (qb + 1 < call.queryBlocks)
                    prefetchNextBlock(call, io, bh, qb + 1, packedEnd);
                call.runBlock(bh, qb, io, scratch);
            }
        }
    }
}

// Few heads: pack a group of them (bounded memory), then share out their query blocks among the threads.
void forwardQueryBlockParallel(const ForwardCall& call)
{
    const Plan& plan = call.plan;
    const size_t kSize = static_cast<size_t>(plan.ldT) * plan.Dp;
    const size_t perHead = call.qSize + kSize + call.vSize;
    const int group = groupSize(plan.dims, perHead * sizeof(float), size_t(16) << 20);
    AlignedFloats packed(group * perHead, 0.0f);
    constexpr ForwardInput inputs[] = {ForwardInput::Queries, ForwardInput::KeyColumns, ForwardInput::Values};
#pragma omp parallel if (plan.worthThreads(call.heads))
    {
        const SubnormalsFlushed flushed;
        Scratch scratch(plan.Dp);
        for (int first = 0; first < call.heads; first += group) {
            const int count = std::min(group, call.heads - first);
#pragma omp for schedule(dynamic)
            for (int task = 0; task < 3 * count; ++task)
                call.pack(packed.data() + (task / 3) * perHead, kSize, first + task / 3, inputs[task % 3]);
                // Most expensive blocks (last rows under a causal mask) first, for balance.
#pragma omp for schedule(dynamic)
            for (int item = 0; item < count * call.queryBlocks; ++item) {
                const int qb = call.queryBlocks - 1 - item / count, g = item % count;
                call.runBlock(first + g, qb, call.io(packed.data() + g * perHead, kSize, plan.ldT, first + g), scratch);
            }
        }
    }
}

void forwardEntropyOnly(const Plan& plan, int head, const float* q, const float* k, const double* logForget, float* lse,
                        float* entropy)
{
    if (plan.fox != (logForget != nullptr)) // a fox plan without F would read FIRE's row bias
        throw std::logic_error("forwardEntropyOnly: the head's forget gates must come with a fox plan, and only then");
    AlignedFloats Qs(static_cast<size_t>(plan.queriesPadded) * plan.Dp, 0.0f);
    AlignedFloats Kt(static_cast<size_t>(plan.ldT) * plan.Dp, 0.0f);
    if (q && k) {
        packRows(plan, q, Qs.data(), Rotation::AsQuery, plan.invSqrtD);
        packTransposed(plan, k, Kt.data(), Rotation::AsKey);
    }
    BlockIO io;
    io.Q = Qs.data();
    io.Kt = {Kt.data(), size_t(plan.ldT), 0};
    io.lse = lse;
    io.entropy = entropy;
    io.logForget = logForget;
    const int queryBlocks = (plan.N + kQueryBlock - 1) / kQueryBlock;
#pragma omp parallel if (plan.worthThreads(1))
    {
        const SubnormalsFlushed flushed;
        Scratch scratch(plan.Dp);
#pragma omp for schedule(dynamic)
        for (int item = 0; item < queryBlocks; ++item)
            forwardBlock(plan, head, (queryBlocks - 1 - item) * kQueryBlock, io, scratch);
    }
}

} // namespace plab::kernel
