// Forward/backward pairs of the transformer's layers: Eigen GEMMs for linear maps, OpenMP over rows elsewhere.
#include "model/layers.h"

#include "schemes/rotary_scaling.h"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace plab::layers {

namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatrixMap = Eigen::Map<RowMatrix>;
using ConstMatrixMap = Eigen::Map<const RowMatrix>;
using ArrayMap = Eigen::Map<Eigen::ArrayXf>;
using ConstArrayMap = Eigen::Map<const Eigen::ArrayXf>;

constexpr float kGeluScale = 0.7978845608028654f; // sqrt(2 / pi)
constexpr float kGeluCubic = 0.044715f;
constexpr size_t kChunk = 4096; // elementwise work per OpenMP task: big enough to amortise, small enough to balance

} // namespace

void encoderForward(float* out, const uint8_t* tokens, const float* wte, const float* pos, int B, int T, int C,
                    float scale)
{
#pragma omp parallel for schedule(static) if (static_cast <size_t>(B) * T * C > 65536)
    for (int bt = 0; bt < B * T; ++bt) {
        float* o = out + static_cast<size_t>(bt) * C;               // (C)
        const float* e = wte + static_cast<size_t>(tokens[bt]) * C; // (C)
        if (pos) {
            const float* p = pos + static_cast<size_t>(bt % T) * C; // (C)
            for (int i = 0; i < C; ++i)
                o[i] = scale * e[i] + p[i];
        } else {
            for (int i = 0; i < C; ++i)
                o[i] = scale * e[i];
        }
    }
}

void encoderBackward(float* dwte, float* dpos, const float* dout, const uint8_t* tokens, int B, int T, int C,
                     float scale)
{
    // Scatter-add: tokens repeat, so rows of dwte are shared; parallelise over channel slices instead of rows.
    const int slices = std::max(1, std::min(8, C / 16));
#pragma omp parallel for schedule(static) if (static_cast <size_t>(B) * T * C > 65536)
    for (int s = 0; s < slices; ++s) {
        const int c0 = C * s / slices, c1 = C * (s + 1) / slices;
        for (int bt = 0; bt < B * T; ++bt) {
            const float* d = dout + static_cast<size_t>(bt) * C;
            float* w = dwte + static_cast<size_t>(tokens[bt]) * C;
            for (int i = c0; i < c1; ++i)
                w[i] += scale * d[i];
            if (dpos) {
                float* p = dpos + static_cast<size_t>(bt % T) * C;
                for (int i = c0; i < c1; ++i)
                    p[i] += d[i];
            }
        }
    }
}

void layernormForward(float* out, float* mean, float* rstd, const float* inp, const float* weight, const float* bias,
                      int rows, int C)
{
    constexpr float eps = 1e-5f;
    ConstArrayMap w(weight, C), b(bias, C); // (C)
#pragma omp parallel for schedule(static) if (static_cast <size_t>(rows) * C > 32768)
    for (int r = 0; r < rows; ++r) {
        ConstArrayMap x(inp + static_cast<size_t>(r) * C, C); // (C)
        ArrayMap o(out + static_cast<size_t>(r) * C, C);      // (C)
        const float m = x.mean();
        const float v = (x - m).square().mean();
        const float s = 1.0f / std::sqrt(v + eps);
        o = (x - m) * s * w + b;
        mean[r] = m;
        rstd[r] = s;
    }
}

void layernormBackward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                       const float* weight, const float* mean, const float* rstd, int rows, int C)
{
    ConstArrayMap w(weight, C); // (C)
#pragma omp parallel if (static_cast <size_t>(rows) * C > 32768)
    {
        Eigen::ArrayXf dw = Eigen::ArrayXf::Zero(C), db = Eigen::ArrayXf::Zero(C); // this thread's share
        Eigen::ArrayXf norm(C), dnorm(C);
#pragma omp for schedule(static)
        for (int r = 0; r < rows; ++r) {
            ConstArrayMap x(inp + static_cast<size_t>(r) * C, C);
            ConstArrayMap d(dout + static_cast<size_t>(r) * C, C);
            ArrayMap dx(dinp + static_cast<size_t>(r) * C, C);
            const float s = rstd[r];
            // dx = s * (dnorm - mean(dnorm) - norm * mean(dnorm * norm)), dnorm = dout * weight
            norm = (x - mean[r]) * s;
            dnorm = d * w;
            const float dnormMean = dnorm.mean();
            const float dnormNormMean = (dnorm * norm).mean();
            db += d;
            dw += d * norm;
            dx += s * (dnorm - dnormMean - norm * dnormNormMean);
        }
#pragma omp critical(plab_layernorm_backward)
        {
            ArrayMap(dweight, C) += dw;
            ArrayMap(dbias, C) += db;
        }
    }
}

void matmulForward(float* out, const float* inp, const float* weight, const float* bias, int rows, int IC, int OC,
                   const float* residual)
{
    MatrixMap O(out, rows, OC);       // (rows, OC)
    ConstMatrixMap I(inp, rows, IC);  // (rows, IC)
    ConstMatrixMap W(weight, OC, IC); // (OC, IC)
    if (!residual && !bias) {
        O.noalias() = I * W.transpose();
        return;
    }
    // Start from residual + bias, then let the GEMM accumulate (it would otherwise clear O first).
#pragma omp parallel for schedule(static) if (static_cast <size_t>(rows) * OC > 65536)
    for (int r = 0; r < rows; ++r) {
        float* o = out + static_cast<size_t>(r) * OC;
        const float* res = residual ? residual + static_cast<size_t>(r) * OC : nullptr;
        if (res && bias)
            for (int c = 0; c < OC; ++c)
                o[c] = res[c] + bias[c];
        else if (res)
            std::memmove(o, res, sizeof(float) * OC);
        else
            std::memcpy(o, bias, sizeof(float) * OC);
    }
    O.noalias() += I * W.transpose();
}

void matmulBackward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp, const float* weight,
                    int rows, int IC, int OC)
{
    ConstMatrixMap dO(dout, rows, OC); // (rows, OC)
    ConstMatrixMap I(inp, rows, IC);   // (rows, IC)
    ConstMatrixMap W(weight, OC, IC);  // (OC, IC)
    if (dinp) {
        MatrixMap dI(dinp, rows, IC);
        dI.noalias() += dO * W;
    }
    MatrixMap dW(dweight, OC, IC);
    dW.noalias() += dO.transpose() * I;
    if (dbias) {
        Eigen::Map<Eigen::RowVectorXf> db(dbias, OC);
        db += dO.colwise().sum();
    }
}

void geluForward(float* out, const float* inp, size_t n)
{
    const auto chunks = static_cast<long>((n + kChunk - 1) / kChunk);
#pragma omp parallel for schedule(static) if (n > 2 * kChunk)
    for (long c = 0; c < chunks; ++c) {
        const size_t begin = c * kChunk, len = std::min(kChunk, n - begin);
        ConstArrayMap x(inp + begin, static_cast<Eigen::Index>(len));
        ArrayMap y(out + begin, static_cast<Eigen::Index>(len));
        y = 0.5f * x * (1.0f + (kGeluScale * (x + kGeluCubic * x.cube())).tanh());
    }
}

void geluBackward(float* dinp, const float* inp, const float* dout, size_t n)
{
    const auto chunks = static_cast<long>((n + kChunk - 1) / kChunk);
#pragma omp parallel for schedule(static) if (n > 2 * kChunk)
    for (long c = 0; c < chunks; ++c) {
        const size_t begin = c * kChunk, len = std::min(kChunk, n - begin);
        ConstArrayMap x(inp + begin, static_cast<Eigen::Index>(len));
        ConstArrayMap d(dout + begin, static_cast<Eigen::Index>(len));
        ArrayMap dx(dinp + begin, static_cast<Eigen::Index>(len));
        const Eigen::ArrayXf t = (kGeluScale * (x + kGeluCubic * x.cube())).tanh();
        dx += d * (0.5f * (1.0f + t) +
                   0.5f * x * (1.0f - t.square()) * kGeluScale * (1.0f + 3.0f * kGeluCubic * x.square()));
    }
}

void residualForward(float* out, const float* a, const float* b, size_t n)
{
#pragma omp parallel for schedule(static) if (n > 65536)
    for (size_t i = 0; i < n; ++i)
        out[i] = a[i] + b[i];
}

void residualBackward(float* da, float* db, const float* dout, size_t n)
{
#pragma omp parallel for schedule(static) if (n > 65536)
    for (size_t i = 0; i < n; ++i) {
        da[i] += dout[i];
        db[i] += dout[i];
    }
}

void splitHeads(float* q, float* k, float* v, const float* qkv, int B, int T, int H, int D)
{
    const int C = H * D;
#pragma omp parallel for collapse(2) schedule(static) if (static_cast <size_t>(B) * T * C > 65536)
    for (int b = 0; b < B; ++b)
        for (int h = 0; h < H; ++h)
            for (int t = 0; t < T; ++t) {
                const float* row = qkv + (static_cast<size_t>(b) * T + t) * 3 * C + h * D; // (3C) at head h
                const size_t at = ((static_cast<size_t>(b) * H + h) * T + t) * D;
                std::memcpy(q + at, row, sizeof(float) * D);
                std::memcpy(k + at, row + C, sizeof(float) * D);
                std::memcpy(v + at, row + 2 * C, sizeof(float) * D);
            }
}

void splitHeadsBackward(float* dqkv, const float* dq, const float* dk, const float* dv, int B, int T, int H, int D)
{
    const int C = H * D;
#pragma omp parallel for collapse(2) schedule(static) if (static_cast <size_t>(B) * T * C > 65536)
    for (int b = 0; b < B; ++b)
        for (int t = 0; t < T; ++t) {
            float* row = dqkv + (static_cast<size_t>(b) * T + t) * 3 * C;
            for (int h = 0; h < H; ++h) {
                const size_t at = ((static_cast<size_t>(b) * H + h) * T + t) * D;
                for (int d = 0; d < D; ++d) {
                    row[h * D + d] += dq[at + d];
                    row[C + h * D + d] += dk[at + d];
                    row[2 * C + h * D + d] += dv[at + d];
                }
            }
        }
}

void mergeHeads(float* out, const float* y, int B, int T, int H, int D)
{
    const int C = H * D;
#pragma omp parallel for collapse(2) schedule(static) if (static_cast <size_t>(B) * T * C > 65536)
    for (int b = 0; b < B; ++b)
        for (int t = 0; t < T; ++t)
            for (int h = 0; h < H; ++h)
                std::memcpy(out + (static_cast<size_t>(b) * T + t) * C + h * D,
                            y + ((static_cast<size_t>(b) * H + h) * T + t) * D, sizeof(float) * D);
}

void mergeHeadsBackward(float* dy, const float* dout, int B, int T, int H, int D)
{
    const int C = H * D;
#pragma omp parallel for collapse(2) schedule(static) if (static_cast <size_t>(B) * T * C > 65536)
    for (int b = 0; b < B; ++b)
        for (int h = 0; h < H; ++h)
            for (int t = 0; t < T; ++t) {
                float* to = dy + ((static_cast<size_t>(b) * H + h) * T + t) * D;
                const float* from = dout + (static_cast<size_t>(b) * T + t) * C + h * D;
                for (int d = 0; d < D; ++d)
                    to[d] += from[d];
            }
}

void crossEntropyForward(float* losses, float* probs, const float* logits, const uint8_t* targets, int rows, int V)
{
#pragma omp parallel for schedule(static) if (static_cast <size_t>(rows) * V > 32768)
    for (int r = 0; r < rows; ++r) {
        ConstArrayMap x(logits + static_cast<size_t>(r) * V, V); // (V)
        ArrayMap p(probs + static_cast<size_t>(r) * V, V);       // (V)
        const float maxLogit = x.maxCoeff();
        p = (x - maxLogit).exp();
        const float sum = p.sum();
        p /= sum;
        if (targets && losses)
            losses[r] = std::log(sum) + maxLogit - x[targets[r]];
    }
}

void crossEntropyBackward(float* dlogits, const float* probs, const uint8_t* targets, const float* dlosses, int rows,
                          int V)
{
#pragma omp parallel for schedule(static) if (static_cast <size_t>(rows) * V > 32768)
    for (int r = 0; r < rows; ++r) {
        ArrayMap dl(dlogits + static_cast<size_t>(r) * V, V);
        ConstArrayMap p(probs + static_cast<size_t>(r) * V, V);
        const float g = dlosses[r];
        dl += g * p;
        dl[targets[r]] -= g;
    }
}

void sinusoidalTable(float* out, int T, int C, double base)
{
#pragma omp parallel for schedule(static) if (static_cast <size_t>(T) * C > 65536)
    for (int m = 0; m < T; ++m)
        for (int i = 0; i < C / 2; ++i) {
            const double angle = m * rotaryFrequency(i, C, base);
            out[static_cast<size_t>(m) * C + 2 * i] = static_cast<float>(std::sin(angle));
            out[static_cast<size_t>(m) * C + 2 * i + 1] = static_cast<float>(std::cos(angle));
        }
}

} // namespace plab::layers
