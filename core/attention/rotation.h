// Rows turned by their positions' rotary rotation, in double: the plain twin's rotation and rotateRowsInPlace.
#pragma once

#include "attention/attention_internal.h"
#include "schemes/rotary_scaling.h"

#include <Eigen/Dense>

namespace plab {

// Rows x (heads, N, D) turned in place as the kernel turns q (isKey false) or k (isKey true) at positions 0..N-1: the
// bias's rotary table, dims' pairing and partial rotary. Nothing happens for schemes that do not rotate. For views that
// rebuild scores from q and k one cell at a time (a real model's attention maps, core/hf/hf_attention); methods that
// remap positions (rerope, leaky-rerope, self-extend) have no single placement, so they are refused (InputError).
void rotateRowsInPlace(const PositionBias& bias, const AttentionDims& dims, float* x, int heads, bool isKey);

namespace detail {

using RotationMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Where a head's rows are rotated: row m at slope * m + offset (plain: at m). ReRoPE's keys past the window use a
// second placement, q at w + (m - w)/k and k at n/k (rerope: q at w, k at 0), so P(m, n) = w + (m - n - w)/k.
// Self-Extend's far placement is grouped: row m at `grouped`'s position of it.
struct Placement {
    double slope = 1, offset = 0;
    const RotaryScaling* grouped = nullptr;
    bool query = false; // with `grouped`: the query's position, else the key's

    double at(int m) const
    {
        if (grouped)
            return query ? grouped->groupedQueryPosition(m) : grouped->groupedKeyPosition(m);
        return slope * m + offset;
    }
};

// Row m of x (N, D) turned by its position's rotation R_m (transpose: by R_m^T, which carries gradients back).
// The dims past the rotated ones (partial rotary) pass unchanged.
RotationMatrix rotated(const RotaryFrequencies& rotary, const AttentionDims& dims, const RotationMatrix& x, bool isKey,
                       bool transpose = false, const Placement& at = {});

} // namespace detail

} // namespace plab
