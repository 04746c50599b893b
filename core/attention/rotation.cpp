// Rows turned by their positions' rotary rotation, in double (see rotation.h): one home for the plain twin and views.
#include "attention/rotation.h"

#include "base/errors.h"

#include <utility>

namespace plab {

namespace detail {

namespace {

// Pair i of a head: the dims it turns, (2i, 2i + 1) or, under rotate_half, (i, i + pairs).
std::pair<int, int> pairDims(const AttentionDims& dims, int i, int pairs)
{
    return dims.pairing == RotaryPairing::RotateHalf ? std::pair{i, i + pairs} : std::pair{2 * i, 2 * i + 1};
}

} // namespace

RotationMatrix rotated(const RotaryFrequencies& rotary, const AttentionDims& dims, const RotationMatrix& x, bool isKey,
                       bool transpose, const Placement& at)
{
    RotationMatrix out = x;
    const double sign = transpose ? -1.0 : 1.0;
    for (int m = 0; m < x.rows(); ++m)
        for (int i = 0; i < rotary.pairs(); ++i) {
            double c, s;
            rotary.rotation(at.at(m), i, isKey, c, s);
            const auto [a, b] = pairDims(dims, i, rotary.pairs());
            out(m, a) = c * x(m, a) - sign * s * x(m, b);
            out(m, b) = sign * s * x(m, a) + c * x(m, b);
        }
    return out;
}

} // namespace detail

void rotateRowsInPlace(const PositionBias& bias, const AttentionDims& dims, float* x, int heads, bool isKey)
{
    using FloatRows = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    const detail::RotaryFrequencies rotary = detail::rotaryFrequencies(bias.spec(), dims.rotatedDims(), dims.length);
    if (!rotary.active())
        return;
    const RotaryMethodInfo& method = rotaryMethodInfo(bias.spec().scaling);
    if (method.remapsPositions)
        throw InputError("the method " + method.name +
                         " places a query and a key by their distance, so its rotated rows alone do not give the "
                         "scores; allowed: a method that does not remap positions");
    for (int h = 0; h < heads; ++h) {
        Eigen::Map<FloatRows> rows(x + static_cast<size_t>(h) * dims.length * dims.headDim, dims.length, dims.headDim);
        const detail::RotationMatrix turned = detail::rotated(rotary, dims, rows.cast<double>(), isKey);
        rows = turned.cast<float>();
    }
}

} // namespace plab
