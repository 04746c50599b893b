// SSMax and the sink logit, the softmax-side modifiers of any scheme: their values per head and their priors.
#pragma once

#include "schemes/schemes.h"

namespace plab {

// SSMax's s_h (Nakanishi 2025): the learned value, else the prior 1 / ln(context), under which row m's factor
// s ln n equals logn's ln(m + 1) / ln(L) for a causal row (1 without a context above 1).
double ssmaxScale(const SchemeSpec& spec, int h);
// The factor of row m's scores on head h: s_h ln(n), n the keys the row sees (its softmax's size). 1 without ssmax.
double ssmaxFactor(const SchemeSpec& spec, int h, int visibleKeys);
// gpt-oss's sink logit z_h of head h: the learned value, else 0 (a sink as strong as a zero score).
double sinkLogit(const SchemeSpec& spec, int h);
// Refuses learned values of the wrong count, non-finite ones, and s_h = 0 (its gradient is taken through final / s).
void validateSoftmaxModifiers(const SchemeSpec& spec); // throws InputError

} // namespace plab
