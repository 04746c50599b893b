// FoX's cumulative log forget gates and their gradient through the cumulative sum and ln σ.
#include "schemes/fox.h"

namespace plab {

void foxCumulativeLogGates(const float* z, int T, size_t stride, double* F)
{
    double sum = 0;
    for (int t = 0; t < T; ++t) {
        sum += logSigmoid(z[static_cast<size_t>(t) * stride]);
        F[t] = sum;
    }
}

void foxGateLogitGradients(const float* z, const double* dF, int T, size_t stride, float* dz)
{
    double suffix = 0; // sum_{l >= t} dF_l
    for (int t = T - 1; t >= 0; --t) {
        suffix += dF[t];
        const size_t at = static_cast<size_t>(t) * stride;
        dz[at] = static_cast<float>(logSigmoidSlope(z[at]) * suffix);
    }
}

} // namespace plab
