// FIRE's bias view as curves: a trained model's learned function of the distance beside its untrained prior.
#pragma once

#include "base/matrix_output.h"
#include "schemes/schemes.h"

#include <vector>

namespace plab {

// b_h(m, m - r) for r = 0..m of one query row m, per head, for the spec's learned FIRE and for the prior it started
// from (fireInitialParams with the catalogue's c and threshold of the spec). The row matters past the threshold T,
// where FIRE divides by ψ(m): the same distance reads differently in a longer sequence.
struct FireCurves {
    int row = 0;
    double learnedThreshold = 0, priorThreshold = 0; // T of each
    std::vector<int> distance;                       // 0..row
    std::vector<std::vector<double>> learned;        // (H, row + 1)
    std::vector<std::vector<double>> prior;          // (H, row + 1)
};

// Throws InputError unless the spec is fire and 0 <= row < kMaxLength.
FireCurves fireCurves(const SchemeSpec& spec, int row);

// The curves as a table (distance, head, learned, untrained; meta: row and both thresholds): the one layout of
// `fire-curve`'s files and the Bias view's export.
Table fireCurvesTable(const FireCurves& curves);

} // namespace plab
