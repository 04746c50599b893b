// The kernel's forward: one query block of one head, and the strategies that share a call's blocks among threads.
#pragma once

#include "attention/plan.h"

namespace plab::kernel {

// Where one query block of one head reads its inputs and writes its results (null pointers: not wanted).
// Q: rows of stride Dp (packed, or the caller's q when D is a multiple of 16, nothing rotates and every head starts on
// a cache line), times qkScale gives q/sqrt(D). V: rows of stride Dp; only rows < N are read. Without V and out only
// lse and entropy are computed.
struct BlockIO {
    const float* Q = nullptr;
    float qkScale = 1.0f;
    KeyColumns Kt;
    const float* V = nullptr;
    float* out = nullptr;     // (N, D) of the head
    float* lse = nullptr;     // (N)
    float* entropy = nullptr; // (N)
    float* probs = nullptr;   // (N, N)
    // FoX: the head's cumulative log gates (N), Plan::logForgetOf.
    const double* logForget = nullptr;
};

// One query block of one head: the tile loop of the online softmax over the visible key tiles (see forward.cpp).
void forwardBlock(const Plan& plan, int h, int m0, const BlockIO& io, Scratch& sc);

// The inputs of a head the forward packs (rotated, scaled, zero-padded) when it cannot read the caller's rows.
enum class ForwardInput { Queries, KeyColumns, Values };

// One attentionForward call: the plan, the caller's tensors and results, and the layout of a head's packed inputs
// in a buffer (Q | K^T | V). Q (as q/sqrt(D), rotated) and V are packed to (N, Dp) only when D is not a multiple
// of 16 or q must rotate; otherwise the kernel reads the caller's rows directly. K^T is always packed, rotated.
struct ForwardCall {
    const Plan& plan;
    const float *q, *k, *v;
    AttentionForward& result;
    const AttentionOptions& options;
    bool packQ = false, packV = false;
    // Q packed as q/sqrt(D) (rotated or padded); a pack only for alignment keeps q as it is and scales in the score
    // formula, as when reading in place, so results never depend on where the caller's buffers start.
    bool scaleQInPack = false;
    size_t qSize = 0, vSize = 0, headSize = 0;
    int heads = 0, queryBlocks = 0;

    ForwardCall(const Plan& p, const float* q_, const float* k_, const float* v_, AttentionForward& r,
                const AttentionOptions& o)
        : plan(p), q(q_), k(k_), v(v_), result(r), options(o)
    {
        // The caller's rows are read in place only when every head's rows start on a cache line (see kCacheLine):
        // packing a head is N D copies against its 2 N^2 D multiply-adds.
        headSize = static_cast<size_t>(plan.N) * plan.D;
        const bool headsAligned = headSize % kLanes == 0;
        scaleQInPack = plan.rotary.active() || plan.D != plan.Dp;
        packQ = scaleQInPack || !headsAligned || !isCacheLineAligned(q);
        packV = plan.D != plan.Dp || !headsAligned || !isCacheLineAligned(v);
        qSize = packQ ? static_cast<size_t>(plan.queriesPadded) * plan.Dp : 0;
        vSize = packV ? static_cast<size_t>(plan.keysPadded) * plan.Dp : 0;
        heads = plan.dims.batch * plan.dims.heads;
        queryBlocks = (plan.N + kQueryBlock - 1) / kQueryBlock;
    }

    // Where query slice bh's keys and values start in k and v (GQA: its group's key/value head).
    size_t keyValueOffset(int bh) const { return static_cast<size_t>(plan.dims.keyValueSlice(bh)) * headSize; }

    // Packs `input` of head bh into `buffer` (Q | K^T of ktFloats | V); no-op for an input read in place.
    void pack(float* buffer, size_t ktFloats, int bh, ForwardInput input) const
    {
        switch (input) {
        case ForwardInput::Queries:
            if (packQ)
                packRows(plan, q + bh * headSize, buffer, Rotation::AsQuery, scaleQInPack ? plan.invSqrtD : 1.0f);
            break;
        case ForwardInput::KeyColumns:
            packTransposed(plan, k + keyValueOffset(bh), buffer + qSize, Rotation::AsKey);
            break;
        case ForwardInput::Values:
            if (packV)
                packRows(plan, v + keyValueOffset(bh), buffer + qSize + ktFloats, Rotation::None, 1.0f);
            break;
        }
    }

    // Where query blocks of head bh read and write: the packs in `buffer` (K^T of ktFloats with row stride ld), or
    // the caller's rows where nothing needs packing; the head's slices of the results.
    BlockIO io(const float* buffer, size_t ktFloats, size_t ld, int bh) const
    {
        const size_t rows = static_cast<size_t>(bh) * plan.N;
        BlockIO io;
        io.Q = packQ ? buffer : q + bh * headSize;
        io.qkScale = scaleQInPack ? 1.0f : plan.invSqrtD;
        io.Kt = KeyColumns{buffer + qSize, ld, 0};
        io.V = packV ? buffer + qSize + ktFloats : v + keyValueOffset(bh);
        io.out = result.out.data() + bh * headSize;
        io.lse = result.logSumExp.data() + rows;
        io.entropy = options.wantRowEntropy ? result.rowEntropy.data() + rows : nullptr;
        io.probs = options.wantProbabilities ? result.probabilities.data() + rows * plan.N : nullptr;
        io.logForget = plan.logForgetOf(bh);
        return io;
    }

    void runBlock(int bh, int qb, const BlockIO& io, Scratch& scratch) const
    {
        forwardBlock(plan, bh % plan.dims.heads, qb * kQueryBlock, io, scratch);
    }
};

// Enough heads to keep every thread busy: each thread packs a head into its own buffer and runs all of its query
// blocks, with no barrier until the end. Every block computes exactly what the other strategy computes.
void forwardHeadParallel(const ForwardCall& call);

// Few heads: pack a group of them (bounded memory), then share out their query blocks among the threads.
void forwardQueryBlockParallel(const ForwardCall& call);

// Only the row entropies (and lse) of one head, for the Entropy view and `entropy`: no values and no output. Packs
// the head's q (N, D) and k once, or zeros for the bias alone (q or k null), and shares its query blocks among the
// threads, most expensive first. FoX (plan.fox): logForget is the head's F (N), read by the row bias as in the full
// forward; null for every other plan.
void forwardEntropyOnly(const Plan& plan, int head, const float* q, const float* k, const double* logForget, float* lse,
                        float* entropy);

} // namespace plab::kernel
