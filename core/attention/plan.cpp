// The kernel's plan: the passes of a call and the packing of its inputs into zero-padded, rotated tiles.
#include "attention/plan.h"

#include "schemes/softmax_modifiers.h"

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

namespace {

// A custom pass of no rows yet: intervals and placements are filled by the caller.
Pass customPass(int N)
{
    Pass pass;
    pass.custom = true;
    pass.begin.assign(N, 0);
    pass.end.assign(N, 0);
    return pass;
}

// ReRoPE, leaky ReRoPE and Self-Extend: the near pass (distances below the method's window w, plain positions) and
// the far pass (remapped positions), each cut to the window and chunk modifiers; with attention sinks (the sinks
// modifier beside a window or chunk) two more passes, the sink keys at their near or far placement by distance.
std::vector<Pass> remappedPasses(const PositionBias& bias, int N)
{
    const RotaryScaling scaling = rotaryScaling(bias.spec(), N);
    const int w = scaling.window;
    Pass near = customPass(N), far = customPass(N), nearSinks = customPass(N), farSinks = customPass(N);
    for (int m = 0; m < N; ++m) {
        const int split = std::max(0, m - w + 1); // keys n < split are at distance >= w
        const KeyRange layer = bias.layerMaskRange(m, N);
        const KeyRange nearKeys = clipToLayerMask({split, m + 1}, bias.spec().window, bias.spec().chunk, m);
        const KeyRange farKeys = {layer.begin, std::max(layer.begin, std::min(split, layer.end))};
        near.begin[m] = nearKeys.begin;
        near.end[m] = nearKeys.end;
        far.begin[m] = farKeys.begin;
        far.end[m] = farKeys.end;
        const KeyRange sinks = bias.sinkRange(m, N); // [0, s): below every key of the two passes above
        nearSinks.begin[m] = std::min(split, sinks.end);
        nearSinks.end[m] = sinks.end;
        farSinks.end[m] = std::min(split, sinks.end);
    }
    // P = w + (m - n - w)/k = (w + (m - w)/k) - n/k; rerope (k = inf): q at w, k at 0.
    const bool leaky = std::isfinite(scaling.leak);
    for (Pass* p : {&far, &farSinks}) {
        p->qSlope = leaky ? 1.0 / scaling.leak : 0.0;
        p->qOffset = leaky ? w - w / scaling.leak : w;
        p->kSlope = leaky ? 1.0 / scaling.leak : 0.0;
        if (scaling.group > 0)
            groupedPositions(scaling, N, *p);
    }
    std::vector<Pass> passes;
    passes.push_back(std::move(near));
    passes.push_back(std::move(far));
    if (bias.sinks() > 0) {
        passes.push_back(std::move(nearSinks));
        passes.push_back(std::move(farSinks));
    }
    return passes;
}

} // namespace

std::vector<Pass> passesOf(const PositionBias& bias, int N)
{
    const SchemeSpec& spec = bias.spec();
    std::vector<Pass> passes(1);
    if (spec.info().rotary && rotaryMethodInfo(spec.scaling).remapsPositions) {
        passes = remappedPasses(bias, N);
    } else if (bias.sinks() > 0) {
        // The sink keys are the bias's own sinkRange (its one home of the rule), a pass of their own.
        Pass sinkPass = customPass(N);
        for (int m = 0; m < N; ++m) {
            const KeyRange sinks = bias.sinkRange(m, N);
            sinkPass.begin[m] = sinks.begin;
            sinkPass.end[m] = sinks.end;
        }
        passes.push_back(std::move(sinkPass));
    }
    return passes;
}

void Plan::prepareFire()
{
    fire = bias.fire();
    const int H = dims.heads;
    biasStride = static_cast<size_t>(N - 1 + keysPadded + kLanes);
    const size_t padded = roundUp(static_cast<int>(biasStride), kLanes); // fireLanes works in whole vectors
    firePsi.assign(padded, 0.0f);
    for (int r = 0; r < N; ++r)
        firePsi[N - 1 - r] = static_cast<float>(fire->psi(r));
    fireInvNorm.resize(N);
    fireDZ.resize(N);
    const double absC = std::abs(fire->params().c), signC = fire->params().c < 0 ? -1.0 : 1.0;
    for (int m = 0; m < N; ++m) {
        fireInvNorm[m] = static_cast<float>(1.0 / fire->normaliser(m));
        const double M = std::max<double>(m, fire->threshold());
        fireDZ[m] = static_cast<float>(signC * M / (absC * M + 1.0) / fire->normaliser(m));
    }
    fireDPsi.assign(padded, 0.0f);
    for (int r = 0; r < N; ++r)
        fireDPsi[N - 1 - r] = static_cast<float>(signC * r / (absC * r + 1.0));
    fireDistanceRows = 0;
    while (fireDistanceRows < N && fire->distanceOnly(fireDistanceRows))
        ++fireDistanceRows;
    const FireParams& p = fire->params();
    fireW1.assign(p.w1.begin(), p.w1.end());
    fireB1.assign(p.b1.begin(), p.b1.end());
    fireW2.assign(p.w2.begin(), p.w2.end());
    fireB2.assign(p.b2.begin(), p.b2.end());
    // Rows below T: Z(0) is everyone's normaliser, so one reversed table per head serves them all.
    std::vector<float> near(padded);
    fireNear.resize(H * biasStride);
    for (int h = 0; h < H; ++h) {
        fireLanes(h, firePsi.data(), fireInvNorm[0], static_cast<int>(padded), near.data());
        std::copy_n(near.data(), biasStride, fireNear.data() + h * biasStride);
    }
}

void Plan::prepareSsmax()
{
    const int H = dims.heads;
    headRowScale.resize(static_cast<size_t>(H) * N);
    for (int m = 0; m < N; ++m) {
        const int keys = bias.keyRange(m, N).size() + bias.sinkRange(m, N).size();
        for (int h = 0; h < H; ++h)
            headRowScale[static_cast<size_t>(h) * N + m] =
                static_cast<float>(bias.rowScale(m, N) * ssmaxFactor(bias.spec(), h, keys));
    }
    useScale = true;
}

void Plan::fireLanes(int h, const float* psi, float invNorm, int w, float* out) const
{
    const float* w2 = fireW2.data() + static_cast<size_t>(h) * kFireWidth;
    const Vec zero = splat(0.0f), scale = splat(invNorm);
    for (int j = 0; j < w; j += kLanes) {
        const Vec x = load(psi + j) * scale;
        Vec acc = splat(fireB2[h]);
        for (int k = 0; k < kFireWidth; ++k)
            acc = fusedMultiplyAdd(vmax(fusedMultiplyAdd(x, splat(fireW1[k]), splat(fireB1[k])), zero), splat(w2[k]),
                                   acc);
        store(out + j, acc);
    }
}

void Plan::fireGradientRow(int h, int m, int n0, int n1, const float* G, FireParams& grad) const
{
    const size_t at = static_cast<size_t>(n0 - m + N - 1);
    const float* psi = firePsi.data() + at;
    const float* dPsi = fireDPsi.data() + at;
    const float* w2 = fireW2.data() + static_cast<size_t>(h) * kFireWidth;
    const Vec zero = splat(0.0f), invZ = splat(fireInvNorm[m]), dZ = splat(fireDZ[m]);
    Vec dw2[kFireWidth], dw1[kFireWidth], db1[kFireWidth], db2 = zero, dc = zero;
    for (int k = 0; k < kFireWidth; ++k)
        dw2[k] = dw1[k] = db1[k] = zero;
    for (int j = 0; j < n1 - n0; j += kLanes) {
        float tail[kLanes] = {}; // lanes past n1: no gradient, and no read past G's row
        const int count = std::min(kLanes, n1 - n0 - j);
        if (count < kLanes)
            std::copy_n(G + j, count, tail);
        const Vec g = load(count < kLanes ? tail : G + j);
        const Vec x = load(psi + j) * invZ;
        Vec dx = zero;
        for (int k = 0; k < kFireWidth; ++k) {
            const Vec z = fusedMultiplyAdd(x, splat(fireW1[k]), splat(fireB1[k]));
            const IVec active = z > zero;
            dw2[k] += select(active, g * z, zero);
            const Vec gz = select(active, g * w2[k], zero);
            dw1[k] += gz * x;
            db1[k] += gz;
            dx += gz * fireW1[k];
        }
        db2 += g;
        dc += dx * (load(dPsi + j) * invZ - x * dZ); // d x / d c = (d ψ(r) / d c - x d Z / d c) / Z
    }
    double* gw2 = grad.w2.data() + static_cast<size_t>(h) * kFireWidth;
    for (int k = 0; k < kFireWidth; ++k) {
        gw2[k] += horizontalSum(dw2[k]);
        grad.w1[k] += horizontalSum(dw1[k]);
        grad.b1[k] += horizontalSum(db1[k]);
    }
    grad.b2[h] += horizontalSum(db2);
    grad.c += horizontalSum(dc);
}

void Plan::fireRow(int h, int m, int c, int w, float* out) const
{
    const size_t at = static_cast<size_t>(c - m + N - 1);
    if (m < fireDistanceRows)
        std::copy_n(fireNear.data() + h * biasStride + at, w, out);
    else
        fireLanes(h, firePsi.data() + at, fireInvNorm[m], w, out);
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
