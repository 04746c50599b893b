// FoX's positional bias on a text: the (T, T) matrix F_m - F_n a trained model's forget gates give one head.
#pragma once

#include "model/model.h"

#include <Eigen/Core>

#include <cstdint>
#include <vector>

namespace plab {

// The bias FoX adds to head `head`'s scores in layer `layer` while `model` reads `text` (its bytes, at most
// model.maxLength()): B(m, n) = F_m - F_n = sum_{n < l <= m} ln f_l for n <= m, the log of how much the gates between
// key n and query m let through (0 on the diagonal, <= 0 below it). Cells n > m, which the causal mask hides, hold 0,
// so the matrix is finite everywhere. Runs the model's forward on a copy of its weights (`model` is untouched).
// InputError for a model whose scheme is not fox, a NoPE layer of its schedule, an empty or too long text, or a layer
// or head out of range.
Eigen::MatrixXf foxBiasOnText(const Model& model, const std::vector<uint8_t>& text, int layer, int head);

// The same matrix from one head's cumulative log gates F (T values, a forward's Model::layerLogForget row): F_m - F_n
// for n <= m (differences taken in double), 0 above the diagonal.
Eigen::MatrixXf foxBiasFromLogForget(const double* logForget, int length);

} // namespace plab
