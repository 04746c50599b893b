// Cell-wise difference of two bias views (the Compare tab's "A − B" panel), with the masks combined explicitly.
#pragma once

#include <cstddef>
#include <vector>

namespace plab {

// a - b of two row-major views of equal size whose masked cells are -inf (as biasViewMatrix writes them).
// A cell masked in either input is masked (-inf) in the result: plain float arithmetic would give -inf for
// -inf - finite, +inf for finite - (-inf) and NaN for -inf - (-inf), none of which is a difference. Any non-finite
// input (+inf, NaN) counts as masked too. Finite differences are the correctly rounded float a - b, except that one
// beyond the float range saturates at +-FLT_MAX, so -inf in the result always means "masked".
// Different sizes are refused with InputError naming both.
std::vector<float> maskedDifference(const std::vector<float>& a, const std::vector<float>& b);

// The same on raw buffers of `count` values each; `out` may alias neither input.
void maskedDifference(const float* a, const float* b, size_t count, float* out);

} // namespace plab
