// The decode entry: new query rows against cached keys and values, with the kernel's bias, mask, cap and rotation.
#include "attention/decode.h"

#include "attention/attention_internal.h"
#include "base/errors.h"
#include "schemes/rotary_scaling.h"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
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

void rotateRowsAt(const PositionBias& bias, const DecodeDims& dims, float* x, int count, int first, int length,
                  bool isKey)
{
    const int rotated = dims.rotaryDims > 0 ? dims.rotaryDims : dims.headDim;
    const detail::RotaryFrequencies rotary = detail::rotaryFrequencies(bias.spec(), rotated, length);
    if (!rotary.active())
        return;
    const int pairs = rotary.pairs();
    for (int r = 0; r < count; ++r) {
        float* row = x + static_cast<size_t>(r) * dims.headDim;
        for (int i = 0; i < pairs; ++i) {
            double c, s;
            rotary.rotation(first + r, i, isKey, c, s);
            const int a = dims.pairing == RotaryPairing::RotateHalf ? i : 2 * i;
            const int b = dims.pairing == RotaryPairing::RotateHalf ? i + pairs : 2 * i + 1;
            const double xa = row[a], xb = row[b];
            row[a] = static_cast<float>(c * xa - s * xb);
            row[b] = static_cast<float>(s * xa + c * xb);
        }
    }
}

namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstRows = Eigen::Map<const RowMatrix, 0, Eigen::OuterStride<>>;

// One query row m of head h: the visible keys' scores into `scores`, softmax, then the values' weighted sum.
void decodeRow(const PositionBias& bias, const DecodeDims& dims, int h, int m, const float* q, const float* k,
               const float* v, float* out, std::vector<float>& scores)
{
    const int D = dims.headDim, length = dims.keys();
    const float invSqrtD = 1.0f / std::sqrt(static_cast<float>(D));
    const float scale = bias.rowScale(m, length), cap = bias.softcap();
    const Eigen::Map<const Eigen::VectorXf> qm(q, D);
    Eigen::Map<Eigen::VectorXf> o(out, D);
    o.setZero();
    const KeyRange ranges[2] = {bias.sinkRange(m, length), bias.keyRange(m, length)};
    float top = -std::numeric_limits<float>::infinity();
    for (const KeyRange& r : ranges) {
        if (r.size() == 0)
            continue;
        const ConstRows keys(k + static_cast<size_t>(r.begin) * D, r.size(), D, Eigen::OuterStride<>(D));
        Eigen::Map<Eigen::VectorXf> s(scores.data() + r.begin, r.size());
        s.noalias() = keys * qm;
        for (int n = r.begin; n < r.end; ++n) {
            float value = (scores[n] * invSqrtD + bias.additive(h, m, n)) * scale;
            if (cap > 0)
                value = static_cast<float>(PositionBias::capped(value, cap));
            scores[n] = value;
            top = std::max(top, value);
        }
    }
    double sum = 0;
    for (const KeyRange& r : ranges) {
        if (r.size() == 0)
            continue;
        Eigen::Map<Eigen::ArrayXf> s(scores.data() + r.begin, r.size());
        s = (s - top).exp();
        sum += s.sum();
        const ConstRows values(v + static_cast<size_t>(r.begin) * D, r.size(), D, Eigen::OuterStride<>(D));
        o.noalias() += values.transpose() * s.matrix();
    }
    o /= static_cast<float>(sum);
}

} // namespace

void attentionDecode(const PositionBias& bias, const DecodeDims& dims, const float* q, const float* kCache,
                     const float* vCache, float* out)
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
    const size_t headRows = static_cast<size_t>(dims.capacity) * D;
#pragma omp parallel
    {
        std::vector<float> scores(static_cast<size_t>(dims.keys()));
#pragma omp for schedule(static) collapse(2)
        for (int h = 0; h < dims.heads; ++h)
            for (int r = 0; r < dims.queries; ++r) {
                const size_t row = (static_cast<size_t>(h) * dims.queries + r) * D;
                decodeRow(bias, dims, h, dims.offset + r, q + row, kCache + (h / group) * headRows,
                          vCache + (h / group) * headRows, out + row, scores);
            }
    }
}

} // namespace plab
