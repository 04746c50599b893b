// SSMax's and the sink logit's values per head, their priors and their checks.
#include "schemes/softmax_modifiers.h"

#include "base/errors.h"
#include "schemes/catalog_table.h"

#include <cmath>
#include <string>

namespace plab {

double ssmaxScale(const SchemeSpec& spec, int h)
{
    if (!spec.ssmaxScales.empty())
        return spec.ssmaxScales[h];
    return spec.context > 1 ? 1.0 / std::log(static_cast<double>(spec.context)) : 1.0;
}

double ssmaxFactor(const SchemeSpec& spec, int h, int visibleKeys)
{
    return spec.ssmax ? ssmaxScale(spec, h) * std::log(static_cast<double>(std::max(visibleKeys, 1))) : 1.0;
}

double sinkLogit(const SchemeSpec& spec, int h)
{
    return spec.sinkLogits.empty() ? 0.0 : spec.sinkLogits[h];
}

void validateSoftmaxModifiers(const SchemeSpec& spec)
{
    auto check = [&](const std::vector<double>& values, bool on, const std::string& what, bool nonZero) {
        if (values.empty())
            return;
        if (!on)
            throw InputError(what + ": learned values given without the modifier");
        if (values.size() != static_cast<size_t>(spec.heads))
            throw InputError(what + ": " + std::to_string(values.size()) +
                             " per-head values, expected heads = " + std::to_string(spec.heads));
        for (size_t h = 0; h < values.size(); ++h)
            if (!std::isfinite(values[h]) || (nonZero && values[h] == 0))
                throw InputError(what + " of head " + std::to_string(h) + " = " + catalog::shortNumberText(values[h]) +
                                 " is out of range; allowed: finite" + (nonZero ? " and not 0" : ""));
    };
    check(spec.ssmaxScales, spec.ssmax, "ssmax scale", true);
    check(spec.sinkLogits, spec.sinkLogit, "sink logit", false);
}

} // namespace plab
