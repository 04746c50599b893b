// FIRE (Li et al., ICLR 2024): the learned bias function of the normalised distance, its prior and its gradients.
#pragma once

#include <cmath>
#include <vector>

namespace plab {

// The MLP's hidden width (1 -> 32 -> H, as in the paper) and the normaliser's epsilon of its reference code.
constexpr int kFireWidth = 32;
constexpr double kFireEps = 1e-6;

// The learned values of FIRE, and (same shape) their gradients. b_h(m, n) = MLP_h(x), x = ψ(m - n) / (ψ(max(m, T)) +
// eps), ψ(t) = ln(|c| t + 1), T = |lMultiplier| · threshold, MLP_h(x) = b2_h + sum_k w2_hk relu(w1_k x + b1_k).
struct FireParams {
    std::vector<double> w1, b1; // (kFireWidth): the first layer, 1 -> width
    std::vector<double> w2;     // (heads, kFireWidth) row-major: the second layer, width -> heads
    std::vector<double> b2;     // (heads)
    double c = 0;               // ψ's scale
    double lMultiplier = 0;     // the reference code learns T as a multiple of its initial value
    bool empty() const { return w1.empty(); }
    bool operator==(const FireParams&) const = default;
};

// The untrained prior, as the paper's reference code initialises it: PyTorch's default nn.Linear initialisation
// (weights and biases uniform in ±1/sqrt(fan_in): ±1 for the first layer, ±1/sqrt(32) for the second) drawn from one
// fixed seed, so every untrained FIRE of the same heads is the same; c = `c`, lMultiplier = 1.
FireParams fireInitialParams(int heads, double c);

// FireParams of `heads` heads, all zero: a gradient to accumulate into.
FireParams fireZeroGradient(int heads);

// The bias function of one FireParams with the threshold parameter T0 (T = |lMultiplier| T0): the one home of FIRE's
// formula. Causal: distances m - n >= 0.
class FireFunction {
public:
    FireFunction(const FireParams& params, double initialThreshold);

    const FireParams& params() const { return m_p; }
    int heads() const { return static_cast<int>(m_p.b2.size()); }
    double threshold() const { return m_threshold; }
    double psi(double t) const { return std::log(std::abs(m_p.c) * t + 1.0); }
    // The rows whose bias depends on the distance alone: m < T, normalised by ψ(T) (at m = T too, but there the
    // gradient of T is one-sided: accumulate takes it as 0, as for the rows past T).
    bool distanceOnly(int m) const { return m < m_threshold; }
    double normaliser(int m) const { return psi(std::max<double>(m, m_threshold)) + kFireEps; }
    double input(int m, int n) const { return psi(m - n) / normaliser(m); }
    double mlp(int h, double x) const;
    double bias(int h, int m, int n) const { return mlp(h, input(m, n)); }

    // Adds to `grad` the gradient of g · b_h(m, n) with respect to every parameter (c and lMultiplier through x).
    void accumulate(int h, int m, int n, double g, FireParams& grad) const;

private:
    FireParams m_p;
    double m_initialThreshold = 0;
    double m_threshold = 0;
};

// grad += other (same shape).
void addFireGradient(FireParams& grad, const FireParams& other);

} // namespace plab
