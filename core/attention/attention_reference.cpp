// The fused attention kernel's plain twin (see attention_reference.h): rotate, then three passes over full (N, N)
// matrices per head, scores -> softmax -> P V, and the backward through the same matrices.
#include "attention/attention_reference.h"

#include "attention/attention_internal.h"
#include "attention/rotation.h"
#include "schemes/softmax_modifiers.h"
#include "base/errors.h"
#include "schemes/rotary_scaling.h"

#include <Eigen/Dense>

#include <cmath>
#include <limits>
#include <utility>

namespace plab {

namespace {

using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using FloatRows = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Head bh of a (B, H, N, D) tensor as an (N, D) matrix of doubles.
Matrix headOf(const float* x, const AttentionDims& dims, int bh)
{
    const size_t offset = static_cast<size_t>(bh) * dims.length * dims.headDim;
    return Eigen::Map<const FloatRows>(x + offset, dims.length, dims.headDim).cast<double>();
}

using detail::Placement;
using detail::rotated;

// ReRoPE, leaky ReRoPE and Self-Extend: the window w and the far placements of q and k; inactive for other schemes.
struct Remap {
    bool active = false;
    int window = 0;
    RotaryScaling scaling;
    Placement query, key; // the slope rules of ReRoPE and leaky ReRoPE

    // The far placements; Self-Extend's point into this remap's scaling.
    Placement farQuery() const { return grouped(query, true); }
    Placement farKey() const { return grouped(key, false); }
    Placement grouped(Placement p, bool isQuery) const
    {
        if (scaling.group > 0) {
            p.grouped = &scaling;
            p.query = isQuery;
        }
        return p;
    }
    bool far(int m, int n) const { return active && m - n >= window; }
};

Remap remapOf(const PositionBias& bias, int length)
{
    const SchemeSpec& spec = bias.spec();
    Remap r;
    if (!detail::isRotary(spec) || !rotaryMethodInfo(spec.scaling).remapsPositions)
        return r;
    const RotaryScaling scaling = rotaryScaling(spec, length);
    r.active = true;
    r.window = scaling.window;
    const bool leaky = std::isfinite(scaling.leak);
    r.query = {leaky ? 1.0 / scaling.leak : 0.0, leaky ? r.window - r.window / scaling.leak : double(r.window)};
    r.key = {leaky ? 1.0 / scaling.leak : 0.0, 0.0};
    r.scaling = scaling;
    return r;
}

// One head's forward: the rotated inputs and the probabilities, all the backward needs.
struct HeadForward {
    Matrix Q, K, V;       // (N, D), Q and K rotated
    Matrix Qfar, Kfar;    // (N, D) rotated at the far placements (ReRoPE only)
    Matrix P;             // (N, N)
    Matrix S;             // (N, N) the final scores, masked cells -inf
    Matrix capSlope;      // (N, N) with a soft cap: d final / d uncapped score = 1 - tanh^2(z / c); else empty
    Eigen::VectorXd sink; // (N) the sink column's probability per row (0 without a sink logit)
};

// Whether query m sees key n, cell by cell as the design states the layer-type modifiers, not through the kernel's
// intervals (clipToLayerMask): the scheme's own mask (maskKeyRange: causal, local, bca), cut to the window
// m - W < n <= m and to the chunk ⌊n/C⌋ = ⌊m/C⌋, n <= m; the sinks n < S, n <= m stay visible beside them. Without
// a window or chunk: the bias's own visible() (its mask and local's or bca's sinks).
bool twinVisible(const PositionBias& bias, int m, int n, int N)
{
    const SchemeSpec& spec = bias.spec();
    if (spec.window == 0 && spec.chunk == 0)
        return bias.visible(m, n, N);
    const int ownWindow = spec.info().hasWindow ? spec.intParam("window") : 0;
    const KeyRange own = maskKeyRange(spec.kind, spec.bidirectional, ownWindow, m, N);
    const bool inOwn = n >= own.begin && n < own.end;
    const bool inWindow = spec.window == 0 || (m - spec.window < n && n <= m);
    const bool inChunk = spec.chunk == 0 || (n / spec.chunk == m / spec.chunk && n <= m);
    const bool sink = n < bias.sinks() && n <= m;
    return (inOwn && inWindow && inChunk) || sink;
}

// The factor of row m's scores on head h: rowScale (logn, temperature) times SSMax's s_h ln(n_m), n_m the row's keys.
double rowFactor(const PositionBias& bias, int h, int m, int N)
{
    if (!bias.spec().ssmax)
        return bias.rowScale(m, N);
    int keys = 0;
    for (int n = 0; n < N; ++n)
        keys += twinVisible(bias, m, n, N);
    return bias.rowScale(m, N) * ssmaxFactor(bias.spec(), h, keys);
}

// The additive bias in double where the scheme has it so: FIRE's function itself, FoX's F_m - F_n of slice bh from
// this input's gates (the others' tables are float).
double additiveExact(const PositionBias& bias, const AttentionDims& dims, int bh, int m, int n)
{
    if (dims.logForget) {
        const double* F = dims.logForget + static_cast<size_t>(bh) * dims.length;
        return F[m] - F[n];
    }
    const int h = bh % dims.heads;
    return bias.fire() ? bias.fire()->bias(h, m, n) : bias.additive(h, m, n);
}

HeadForward forwardHead(const PositionBias& bias, const AttentionDims& dims, const float* q, const float* k,
                        const float* v, int bh, double* logSumExp, double* rowEntropy)
{
    const detail::RotaryFrequencies rotary = detail::rotaryFrequencies(bias.spec(), dims.rotatedDims(), dims.length);
    const int N = dims.length, h = bh % dims.heads;
    HeadForward f;
    f.Q = rotated(rotary, dims, headOf(q, dims, bh), false);
    f.K = rotated(rotary, dims, headOf(k, dims, bh), true);
    f.V = headOf(v, dims, bh);
    // Pass 1, scores: (Q K^T / sqrt(D) + bias) * rowScale, masked cells -inf; past ReRoPE's window with the far
    // placements instead.
    Matrix S = f.Q * f.K.transpose() / std::sqrt(static_cast<double>(dims.headDim)); // (N, N)
    const Remap remap = remapOf(bias, N);
    if (remap.active) {
        f.Qfar = rotated(rotary, dims, headOf(q, dims, bh), false, false, remap.farQuery());
        f.Kfar = rotated(rotary, dims, headOf(k, dims, bh), true, false, remap.farKey());
        const Matrix far = f.Qfar * f.Kfar.transpose() / std::sqrt(static_cast<double>(dims.headDim)); // (N, N)
        for (int m = 0; m < N; ++m)
            for (int n = 0; n < N; ++n)
                if (remap.far(m, n))
                    S(m, n) = far(m, n);
    }
    // A soft cap c maps each visible score z to c tanh(z / c), after the bias and the row factor.
    const double cap = bias.spec().softcap;
    if (cap > 0)
        f.capSlope = Matrix::Zero(N, N);
    for (int m = 0; m < N; ++m) {
        const double factor = rowFactor(bias, h, m, N);
        for (int n = 0; n < N; ++n) { // twinVisible: the mask with the modifiers and attention sinks
            if (!twinVisible(bias, m, n, N)) {
                S(m, n) = -std::numeric_limits<double>::infinity();
                continue;
            }
            const double z = (S(m, n) + additiveExact(bias, dims, bh, m, n)) * factor;
            S(m, n) = cap > 0 ? cap * std::tanh(z / cap) : z;
            if (cap > 0)
                f.capSlope(m, n) = 1.0 - std::tanh(z / cap) * std::tanh(z / cap);
        }
    }
    // Pass 2, softmax of every row (exp(-inf) = 0 for masked cells), its log-sum-exp and its entropy
    // -sum p log p = lse - sum p s over the visible cells (log p = s - lse).
    // A sink logit z is one more column of the softmax, holding no value.
    f.P.resize(N, N); // (N, N)
    f.sink = Eigen::VectorXd::Zero(N);
    const bool sink = bias.spec().sinkLogit;
    const double z = sink ? sinkLogit(bias.spec(), h) : 0.0;
    for (int m = 0; m < N; ++m) {
        const double rowMax = sink ? std::max(S.row(m).maxCoeff(), z) : S.row(m).maxCoeff();
        // std::exp, not Eigen's exp, which clamps -inf to e^-708: masked cells must be exactly 0.
        f.P.row(m) = (S.row(m).array() - rowMax).unaryExpr([](double x) { return std::exp(x); });
        const double sum = f.P.row(m).sum() + (sink ? std::exp(z - rowMax) : 0.0);
        f.P.row(m) /= sum;
        logSumExp[m] = rowMax + std::log(sum);
        f.sink(m) = sink ? std::exp(z - logSumExp[m]) : 0.0;
        rowEntropy[m] = logSumExp[m] -
                        (f.P.row(m).array() > 0).select(f.P.row(m).array() * S.row(m).array(), 0.0).sum() -
                        f.sink(m) * z;
    }
    f.S = S;
    return f;
}

void store(const Matrix& x, std::vector<double>& target, size_t offset)
{
    Eigen::Map<Matrix>(target.data() + offset, x.rows(), x.cols()) = x;
}

} // namespace

AttentionReferenceForward attentionForwardReference(const PositionBias& bias, const AttentionDims& dims, const float* q,
                                                    const float* k, const float* v)
{
    detail::validateAttention(bias, dims);
    if (bias.spec().kind == SchemeKind::Cope) // never silently without its positions
        throw InputError("the plain twin does not compute cope; its own exact path is core/schemes/cope.h");
    const int N = dims.length, heads = dims.batch * dims.heads;
    AttentionReferenceForward result;
    result.out.resize(dims.elements());
    result.logSumExp.resize(static_cast<size_t>(heads) * N);
    result.rowEntropy.resize(static_cast<size_t>(heads) * N);
    result.probabilities.resize(static_cast<size_t>(heads) * N * N);
    // Heads are independent: one per thread, each with single-threaded matrix products (as Eigen runs them inside a
    // parallel region), so the results do not depend on the thread count.
#pragma omp parallel for schedule(dynamic)
    for (int bh = 0; bh < heads; ++bh) {
        const size_t row = static_cast<size_t>(bh) * N;
        const HeadForward f = forwardHead(bias, dims, q, k, v, bh, &result.logSumExp[row], &result.rowEntropy[row]);
        store(f.P, result.probabilities, row * N);
        // Pass 3, the output: P V.
        store(f.P * f.V, result.out, row * dims.headDim); // (N, D)
    }
    return result;
}

namespace {

// Head bh's d loss / d q and d loss / d k (at `offset`) from its score gradient dS (N, N), back through the rotation;
// under ReRoPE the far cells' gradient flows through the far placements.
void storeQueryKeyGradients(const PositionBias& bias, const AttentionDims& dims,
                            const detail::RotaryFrequencies& rotary, const HeadForward& f, Matrix dS, size_t offset,
                            AttentionReferenceGradients& g)
{
    const int N = dims.length;
    const double invSqrtD = 1.0 / std::sqrt(static_cast<double>(dims.headDim));
    const Remap remap = remapOf(bias, N);
    if (!remap.active) {
        store(rotated(rotary, dims, dS * f.K * invSqrtD, false, true), g.dq, offset);            // (N, D)
        store(rotated(rotary, dims, dS.transpose() * f.Q * invSqrtD, true, true), g.dk, offset); // (N, D)
        return;
    }
    Matrix dSfar = Matrix::Zero(N, N);
    for (int m = 0; m < N; ++m)
        for (int n = 0; n < N; ++n)
            if (remap.far(m, n)) {
                dSfar(m, n) = dS(m, n);
                dS(m, n) = 0;
            }
    store(rotated(rotary, dims, dS * f.K * invSqrtD, false, true) +
              rotated(rotary, dims, dSfar * f.Kfar * invSqrtD, false, true, remap.farQuery()),
          g.dq, offset);
    store(rotated(rotary, dims, dS.transpose() * f.Q * invSqrtD, true, true) +
              rotated(rotary, dims, dSfar.transpose() * f.Qfar * invSqrtD, true, true, remap.farKey()),
          g.dk, offset);
}

} // namespace

AttentionReferenceGradients attentionBackwardReference(const PositionBias& bias, const AttentionDims& dims,
                                                       const float* q, const float* k, const float* v,
                                                       const float* dOut)
{
    detail::validateAttention(bias, dims);
    if (bias.spec().kind == SchemeKind::Cope) // never silently without its positions
        throw InputError("the plain twin does not compute cope; its own exact path is core/schemes/cope.h");
    const int N = dims.length, heads = dims.batch * dims.heads;
    const detail::RotaryFrequencies rotary = detail::rotaryFrequencies(bias.spec(), dims.rotatedDims(), dims.length);
    AttentionReferenceGradients g;
    g.dq.resize(dims.elements());
    g.dk.resize(dims.elements());
    g.dv.resize(dims.elements());
    const size_t stride = static_cast<size_t>(2 * N - 1);
    std::vector<double> headDistanceGrad(heads * stride, 0.0); // (B H, 2N - 1): d loss / d bias at r = m - n
    // FIRE's bias depends on the row too: its gradient goes pair by pair, per (batch, head), summed in order below.
    std::vector<FireParams> headFire(bias.fire() ? heads : 0, fireZeroGradient(dims.heads));
    // The softmax modifiers' gradients per (batch, head), summed in order below.
    std::vector<double> headSsmax(heads, 0.0), headSink(heads, 0.0);
    g.dLogForget.assign(dims.logForget ? static_cast<size_t>(heads) * N : 0, 0.0); // (B H, N), one slice per thread
#pragma omp parallel for schedule(dynamic) // heads in parallel, as in the forward
    for (int bh = 0; bh < heads; ++bh) {
        std::vector<double> lse(N), entropy(N);
        const HeadForward f = forwardHead(bias, dims, q, k, v, bh, lse.data(), entropy.data());
        const Matrix dO = headOf(dOut, dims, bh); // (N, D)
        const Matrix dP = dO * f.V.transpose();   // (N, N)
        // Softmax backward: dS = P .* (dP - rowsum(P .* dP)), then through the logn factor of each row.
        const Eigen::VectorXd delta = (f.P.array() * dP.array()).rowwise().sum(); // (N)
        Matrix dS = f.P.array() * (dP.colwise() - delta).array();                 // (N, N)
        if (f.capSlope.size())                                                    // back through the soft cap
            dS = dS.cwiseProduct(f.capSlope);
        const int h = bh % dims.heads;
        for (int m = 0; m < N; ++m) {
            // SSMax: every final score is a multiple of s_h. Sink: its column's dS = p_sink (0 - delta).
            for (int n = 0; bias.spec().ssmax && n < N; ++n)
                if (twinVisible(bias, m, n, N))
                    headSsmax[bh] += dS(m, n) * f.S(m, n) / ssmaxScale(bias.spec(), h);
            headSink[bh] -= f.sink(m) * delta(m);
            dS.row(m) *= rowFactor(bias, h, m, N);
            for (int n = 0; n < N; ++n) // the bias depends on r = m - n alone; masked cells are 0
                headDistanceGrad[bh * stride + (m - n + N - 1)] += dS(m, n);
            for (int n = 0; bias.fire() && n <= m; ++n)
                bias.fire()->accumulate(h, m, n, dS(m, n), headFire[bh]);
            // FoX: the cell's bias F_m - F_n, both terms (the kernel drops the row term, whose sum is 0).
            for (int n = 0; dims.logForget && n < N; ++n) {
                g.dLogForget[static_cast<size_t>(bh) * N + m] += dS(m, n);
                g.dLogForget[static_cast<size_t>(bh) * N + n] -= dS(m, n);
            }
        }
        const size_t offset = static_cast<size_t>(bh) * N * dims.headDim;
        store(f.P.transpose() * dO, g.dv, offset); // (N, D)
        storeQueryKeyGradients(bias, dims, rotary, f, std::move(dS), offset, g);
    }
    std::vector<double> distanceGrad(dims.heads * stride, 0.0); // (H, 2N - 1), summed over the batch in order
    for (int bh = 0; bh < heads; ++bh)
        for (size_t i = 0; i < stride; ++i)
            distanceGrad[(bh % dims.heads) * stride + i] += headDistanceGrad[bh * stride + i];
    detail::biasParameterGradients(bias, distanceGrad, N, g.dT5Values, g.dKerpleR1, g.dKerpleR2);
    g.dSsmaxScales.assign(bias.spec().ssmax ? dims.heads : 0, 0.0);
    g.dSinkLogits.assign(bias.spec().sinkLogit ? dims.heads : 0, 0.0);
    for (int bh = 0; bh < heads; ++bh) {
        if (bias.spec().ssmax)
            g.dSsmaxScales[bh % dims.heads] += headSsmax[bh];
        if (bias.spec().sinkLogit)
            g.dSinkLogits[bh % dims.heads] += headSink[bh];
    }
    if (bias.fire()) {
        g.dFire = fireZeroGradient(dims.heads);
        for (const FireParams& part : headFire)
            addFireGradient(g.dFire, part);
    }
    return g;
}

} // namespace plab
