// FIRE's learned bias curve beside its untrained prior, for the bias view and the fire-curve verb.
#include "views/fire_curves.h"

#include "base/errors.h"
#include "schemes/position_bias.h"

#include <string>

namespace plab {

FireCurves fireCurves(const SchemeSpec& spec, int row)
{
    if (spec.kind != SchemeKind::Fire)
        throw InputError("scheme " + spec.name() + " has no learned bias function; the FIRE curves need scheme fire");
    validateSchemeSpec(spec);
    if (row < 0 || row >= kMaxLength)
        throw InputError("row = " + std::to_string(row) + " is out of range; allowed: integers in [0, " +
                         std::to_string(kMaxLength - 1) + "]");
    const FireParams priorParams = fireInitialParams(spec.heads, spec.param("c"));
    const FireFunction learned(spec.fire.empty() ? priorParams : spec.fire, spec.param("threshold"));
    const FireFunction prior(priorParams, spec.param("threshold"));
    FireCurves curves;
    curves.row = row;
    curves.learnedThreshold = learned.threshold();
    curves.priorThreshold = prior.threshold();
    curves.learned.assign(spec.heads, {});
    curves.prior.assign(spec.heads, {});
    for (int r = 0; r <= row; ++r)
        curves.distance.push_back(r);
    for (int h = 0; h < spec.heads; ++h)
        for (int r = 0; r <= row; ++r) {
            curves.learned[h].push_back(learned.bias(h, row, row - r));
            curves.prior[h].push_back(prior.bias(h, row, row - r));
        }
    return curves;
}

Table fireCurvesTable(const FireCurves& curves)
{
    Table t;
    t.columns = {"distance", "head", "learned", "untrained"};
    t.integerColumns = 2;
    t.meta = {{"row", curves.row},
              {"threshold_learned", curves.learnedThreshold},
              {"threshold_untrained", curves.priorThreshold}};
    for (size_t h = 0; h < curves.learned.size(); ++h)
        for (size_t i = 0; i < curves.distance.size(); ++i)
            t.rows.push_back({double(curves.distance[i]), double(h), curves.learned[h][i], curves.prior[h][i]});
    return t;
}

} // namespace plab
