// The Hugging Face forward's matrix products (nn.Linear's y = x W^T + b) in float32, through oneDNN's matmul.
#pragma once

#include <Eigen/Core>

namespace plab {

using HfMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// y (T, out) = x (T, in) * w^T + bias, with w stored as nn.Linear does, (out, in), and bias empty or of size out.
// oneDNN runs it on the calling thread's OpenMP team (omp_get_max_threads; one thread inside a parallel region), with
// the kernels the CPU reports (its cpuid dispatch, not a table of core names). Resizes y; x and y must not alias.
void hfLinear(const HfMatrix& x, const HfMatrix& w, const Eigen::VectorXf& bias, HfMatrix& y);

} // namespace plab
