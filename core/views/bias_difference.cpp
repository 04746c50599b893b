// A − B of two bias views: masked-in-either cells stay masked, never NaN or +inf.
#include "views/bias_difference.h"

#include "base/errors.h"

#include <cfloat>
#include <cmath>
#include <limits>
#include <string>

namespace plab {

namespace {

constexpr float kMasked = -std::numeric_limits<float>::infinity();

} // namespace

void maskedDifference(const float* a, const float* b, size_t count, float* out)
{
#pragma omp parallel for schedule(static) if (count > (1u << 16))
    for (long long i = 0; i < static_cast<long long>(count); ++i) {
        const float x = a[i];
        const float y = b[i];
        if (!std::isfinite(x) || !std::isfinite(y)) {
            out[i] = kMasked;
            continue;
        }
        // In double, then to float: the same as a correctly rounded float subtraction (53 >= 2 * 24 + 2 bits makes
        // the double rounding harmless), except that an overflow saturates instead of turning into an infinity.
        const double d = static_cast<double>(x) - static_cast<double>(y);
        out[i] = d > FLT_MAX ? FLT_MAX : (d < -FLT_MAX ? -FLT_MAX : static_cast<float>(d));
    }
}

std::vector<float> maskedDifference(const std::vector<float>& a, const std::vector<float>& b)
{
    if (a.size() != b.size())
        throw InputError("difference of two views: sizes " + std::to_string(a.size()) + " and " +
                         std::to_string(b.size()) + " differ; both views need the same length");
    std::vector<float> out(a.size());
    maskedDifference(a.data(), b.data(), a.size(), out.data());
    return out;
}

} // namespace plab
