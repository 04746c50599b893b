// The Hugging Face forward's matrix products (nn.Linear's y = x W^T + b) through oneDNN's matmul, in float32 or BF16.
#pragma once

#include "base/bf16.h"

#include <Eigen/Core>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace plab {

using HfMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// How a real model's matrix products compute (the one home of the names, the default and the CPU check):
// - Float32 (the default): weights, activations and accumulators float32;
// - BFloat16: weights kept in BF16 (half the memory), each product's input rounded to BF16 (nearest even), products
//   accumulated in float32 into a float32 output. Everything else (attention, norms, softmax, residuals) stays float32,
//   except that a generation's key/value cache holds BF16 (HfKvCache), as a bf16 model in transformers holds it.
enum class HfPrecision { Float32, BFloat16 };

// "f32" or "bf16": InputError naming the value and what is allowed otherwise.
HfPrecision hfPrecisionFromName(const std::string& name);
const char* hfPrecisionName(HfPrecision precision);
// Bytes one weight takes under `precision`: 4 or 2.
double hfWeightBytes(HfPrecision precision);
// InputError naming the missing CPU feature when `precision` has no native kernels on this CPU (BF16 needs
// avx512_bf16, as /proc/cpuinfo spells it; without it oneDNN would emulate the products, slower than float32).
void checkHfPrecisionSupported(HfPrecision precision);

// A weight matrix (out, in) as nn.Linear stores it, held in one precision: float32, or BF16 bits (the float's top
// half).
class HfWeightMatrix {
public:
    HfWeightMatrix() = default;
    // Takes `w` (float32); under BFloat16 rounds it to BF16 (exact for weights stored as BF16) and frees the floats.
    HfWeightMatrix(HfMatrix w, HfPrecision precision);
    // BF16 weights (rows, cols) read in place from `mapped` (a checkpoint's mapping, which must outlive this).
    HfWeightMatrix(const uint16_t* mapped, Eigen::Index rows, Eigen::Index cols);

    Eigen::Index rows() const { return m_rows; }
    Eigen::Index cols() const { return m_cols; }
    bool empty() const { return m_rows == 0; }
    HfPrecision precision() const { return m_precision; }
    const HfMatrix& floats() const { return m_floats; } // under Float32
    // Under BFloat16: rows x cols BF16 bits, row-major (out, in), owned or in a mapping.
    const uint16_t* bf16() const { return m_mapped ? m_mapped : m_bf16.data(); }
    // Row r as float32 into out[0..cols) (an embedding lookup).
    void row(Eigen::Index r, float* out) const;

private:
    HfPrecision m_precision = HfPrecision::Float32;
    Eigen::Index m_rows = 0, m_cols = 0;
    HfMatrix m_floats;
    std::vector<uint16_t> m_bf16;
    const uint16_t* m_mapped = nullptr;
};

// Products of at most this many rows (a decoding step's) run as dot products over the weights' rows (no oneDNN call).
constexpr int kHfFewRows = 4;

// y (T, out) = x (T, in) * w^T + bias, with w (out, in) and bias empty or of size out, in w's precision (under BF16 x
// is rounded to BF16 first; the output is float32 either way). oneDNN runs it on the calling thread's OpenMP team
// (omp_get_max_threads; one thread inside a parallel region), with the kernels the CPU reports (its cpuid dispatch,
// not a table of core names). Resizes y; x and y must not alias.
void hfLinear(const HfMatrix& x, const HfWeightMatrix& w, const Eigen::VectorXf& bias, HfMatrix& y);

// One product of hfLinearSameInput: y = x W^T + b.
struct HfLinearJob {
    const HfWeightMatrix* w = nullptr;
    const Eigen::VectorXf* bias = nullptr; // empty vector: none
    HfMatrix* y = nullptr;
};
// Several products of the same x (q, k and v; up and gate), each exactly hfLinear's. For a decoding step's few rows
// they share one OpenMP region over all their outputs (and one BF16 rounding of x) instead of one region each: a
// region's fork and join cost a step more than its share of the products.
void hfLinearSameInput(const HfMatrix& x, std::initializer_list<HfLinearJob> jobs);

} // namespace plab
