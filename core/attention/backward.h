// The kernel's backward: the packed inputs of a head, and the strategies that share a call's blocks among threads.
#pragma once

#include "attention/plan.h"

namespace plab::kernel {

// A head's packed inputs for the backward: Q/sqrt(D) and dO (N, Dp); K (keysPadded, Dp); K^T, V^T (Dp, keysPadded,
// row stride ldT); delta (N).
enum class BackwardInput { Queries, KeyRows, KeyColumns, ValueColumns, OutputGradient };
constexpr BackwardInput kBackwardInputs[] = {BackwardInput::Queries, BackwardInput::KeyRows, BackwardInput::KeyColumns,
                                             BackwardInput::ValueColumns, BackwardInput::OutputGradient};
constexpr int kBackwardInputCount = 5;

struct BackwardPacks {
    float *Qs, *dOs, *Ks, *Kt, *Vt, *delta;

    static size_t qSize(const Plan& plan) { return static_cast<size_t>(plan.queriesPadded) * plan.Dp; }
    static size_t kSize(const Plan& plan) { return static_cast<size_t>(plan.ldT) * plan.Dp; } // fits both K layouts
    // Rounded up to whole vectors, so that every head's packs in a buffer of several start on a cache line.
    static size_t floats(const Plan& plan)
    {
        return 2 * qSize(plan) + 3 * kSize(plan) + roundUp(plan.queriesPadded, kLanes);
    }
    BackwardPacks(const Plan& plan, float* base)
    {
        const size_t q = qSize(plan), k = kSize(plan);
        Qs = base;
        dOs = base + q;
        Ks = base + 2 * q;
        Kt = base + 2 * q + k;
        Vt = base + 2 * q + 2 * k;
        delta = base + 2 * q + 3 * k;
    }
};

// One attentionBackward call: the plan, the caller's tensors, the gradients it writes.
struct BackwardCall {
    const Plan& plan;
    const float *q, *k, *v, *dOut;
    const AttentionForward& forward;
    AttentionGradients& grads;
    bool trainable = false; // the bias has parameters: accumulate the gradient per distance
    size_t headSize = 0, distStride = 0;
    int heads = 0;
    // SSMax: (B H, N) sums over each row of dL/ds s (RowExtras::scoreDot), set by the caller; null without ssmax.
    double* scoreDot = nullptr;
    double* scoreDotOf(int bh) const { return scoreDot ? scoreDot + static_cast<size_t>(bh) * plan.N : nullptr; }

    BackwardCall(const Plan& p, const float* q_, const float* k_, const float* v_, const float* dOut_,
                 const AttentionForward& f, AttentionGradients& g)
        : plan(p), q(q_), k(k_), v(v_), dOut(dOut_), forward(f), grads(g)
    {
        trainable = detail::hasTrainableBias(plan.bias.spec());
        headSize = static_cast<size_t>(plan.N) * plan.D;
        distStride = static_cast<size_t>(2 * plan.N - 1);
        heads = plan.dims.batch * plan.dims.heads;
    }

    // FoX: where slice bh's dL/dF goes (grads.dLogForget, sized by the caller), or null without per-input gates.
    double* dLogForgetOf(int bh) const
    {
        return plan.fox ? grads.dLogForget.data() + static_cast<size_t>(bh) * plan.N : nullptr;
    }

    const float* lse(int bh) const { return forward.logSumExp.data() + static_cast<size_t>(bh) * plan.N; }

    // Packs `input` of head bh into `pk`.
    void pack(const BackwardPacks& pk, int bh, BackwardInput input) const
    {
        const float* kh = k + bh * headSize;
        switch (input) {
        case BackwardInput::Queries:
            packRows(plan, q + bh * headSize, pk.Qs, Rotation::AsQuery, plan.invSqrtD);
            break;
        case BackwardInput::KeyRows:
            packRows(plan, kh, pk.Ks, Rotation::AsKey, 1.0f);
            break;
        case BackwardInput::KeyColumns:
            packTransposed(plan, kh, pk.Kt, Rotation::AsKey);
            break;
        case BackwardInput::ValueColumns:
            packTransposed(plan, v + bh * headSize, pk.Vt, Rotation::None);
            break;
        case BackwardInput::OutputGradient: {
            packRows(plan, dOut + bh * headSize, pk.dOs, Rotation::None, 1.0f);
            // delta_m = dO_m . O_m, the softmax backward's row term.
            const float* o = forward.out.data() + bh * headSize;
            const float* dO = dOut + bh * headSize;
            for (int m = 0; m < plan.N; ++m) {
                double sum = 0;
                for (int d = 0; d < plan.D; ++d)
                    sum += static_cast<double>(dO[m * plan.D + d]) * o[m * plan.D + d];
                pk.delta[m] = static_cast<float>(sum);
            }
            break;
        }
        }
    }
};

// Enough heads to keep every thread busy: each (batch, head) belongs to one thread, which packs it and runs the
// single-pass backward over its key blocks (dQ accumulated in place, bias gradient per head). Adds the bias gradient
// per (head, distance) to distanceGrad.
void backwardHeadParallel(const BackwardCall& call, std::vector<double>& distanceGrad);

// Few heads: parallel over key blocks (dK, dV) and query blocks (dQ, bias) of a group of heads, in two passes that
// recompute the scores, so every output still has exactly one writer. Adds the bias gradient to distanceGrad.
void backwardTwoPass(const BackwardCall& call, std::vector<double>& distanceGrad);

} // namespace plab::kernel
