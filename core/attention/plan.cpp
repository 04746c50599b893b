// The kernel's plan: the passes of a call and the packing of its inputs into zero-padded, rotated tiles.
#include "attention/plan.h"

#include <algorithm>
#include <cstring>

namespace plab::kernel {

namespace {

// Self-Extend's far pass: every query and key at its grouped position (RotaryScaling's formulas), not a linear rule.
void groupedPositions(const RotaryScaling& scaling, int N, Pass& far)
{
    far.qPositions.resize(N);
    far.kPositions.resize(N);
    for (int m = 0; m < N; ++m) {
        far.qPositions[m] = scaling.groupedQueryPosition(m);
        far.kPositions[m] = scaling.groupedKeyPosition(m);
    }
}

} // namespace

std::vector<Pass> passesOf(const PositionBias& bias, int N)
{
    const SchemeSpec& spec = bias.spec();
    std::vector<Pass> passes(1);
    if (spec.info().rotary && rotaryMethodInfo(spec.scaling).remapsPositions) {
        const RotaryScaling scaling = rotaryScaling(spec, N);
        const int w = scaling.window;
        Pass near, far;
        near.custom = far.custom = true;
        near.begin.resize(N);
        near.end.resize(N);
        far.begin.assign(N, 0);
        far.end.resize(N);
        for (int m = 0; m < N; ++m) {
            const int split = std::max(0, m - w + 1); // keys n < split are at distance >= w
            near.begin[m] = split;
            near.end[m] = m + 1;
            far.end[m] = split;
        }
        // P = w + (m - n - w)/k = (w + (m - w)/k) - n/k; rerope (k = inf): q at w, k at 0.
        const bool leaky = std::isfinite(scaling.leak);
        far.qSlope = leaky ? 1.0 / scaling.leak : 0.0;
        far.qOffset = leaky ? w - w / scaling.leak : w;
        far.kSlope = leaky ? 1.0 / scaling.leak : 0.0;
        if (scaling.group > 0)
            groupedPositions(scaling, N, far);
        passes = {std::move(near), std::move(far)};
    } else if (spec.info().hasWindow && spec.intParam("sinks") > 0) {
        // The sink keys are the bias's own sinkRange (its one home of the rule), a pass of their own.
        Pass sinkPass;
        sinkPass.custom = true;
        sinkPass.begin.resize(N);
        sinkPass.end.resize(N);
        for (int m = 0; m < N; ++m) {
            const KeyRange sinks = bias.sinkRange(m, N);
            sinkPass.begin[m] = sinks.begin;
            sinkPass.end[m] = sinks.end;
        }
        passes.push_back(std::move(sinkPass));
    }
    return passes;
}

int groupSize(const AttentionDims& dims, size_t bytesPerHead, size_t budget)
{
    const size_t fit = std::max<size_t>(1, budget / std::max<size_t>(1, bytesPerHead));
    return static_cast<int>(std::min<size_t>(fit, static_cast<size_t>(dims.batch) * dims.heads));
}

// Packs rows [0, N) of x (N, D) as (rows, Dp) zero-padded, rotated for rotary schemes and times `scale`.
void packRows(const Plan& plan, const float* x, float* out, Rotation rotation, float scale)
{
    std::vector<float> row(plan.D);
    for (int m = 0; m < plan.N; ++m) {
        const float* in = x + static_cast<size_t>(m) * plan.D;
        if (rotation != Rotation::None && plan.rotary.active()) {
            plan.rotary.rotate(in, row.data(), m, rotation);
            in = row.data();
        }
        float* o = out + static_cast<size_t>(m) * plan.Dp;
        for (int d = 0; d < plan.D; ++d)
            o[d] = in[d] * scale;
    }
}

void packColumns(const Plan& plan, const float* x, float* out, size_t ld, int base, Rotation rotation, int n0, int n1)
{
    const bool rotating = rotation != Rotation::None && plan.rotary.active();
    std::vector<float> row(rotating ? plan.D : 0);
    for (int n = n0; n < n1; ++n) {
        const float* in = x + static_cast<size_t>(n) * plan.D;
        if (rotating) {
            plan.rotary.rotate(in, row.data(), n, rotation);
            in = row.data();
        }
        float* column = out + (n - base);
        for (int d = 0; d < plan.D; ++d)
            column[static_cast<size_t>(d) * ld] = in[d];
    }
}

// Packs all of x (N, D) transposed into (Dp, keysPadded) with row stride ldT, rotated for rotary schemes.
void packTransposed(const Plan& plan, const float* x, float* out, Rotation rotation)
{
    packColumns(plan, x, out, plan.ldT, 0, rotation, 0, plan.N);
}

} // namespace plab::kernel
