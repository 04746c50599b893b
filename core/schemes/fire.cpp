// FIRE's bias function, its reference-code prior and its exact parameter gradients.
#include "schemes/fire.h"

#include "base/random.h"

#include <algorithm>

namespace plab {

FireParams fireInitialParams(int heads, double c)
{
    Rng rng(0x46495245); // "FIRE": one fixed stream, so the prior depends on the heads alone
    auto uniform = [&](std::vector<double>& values, size_t count, double bound) {
        values.resize(count);
        for (double& v : values)
            v = bound * (2.0 * rng.uniform() - 1.0);
    };
    FireParams p;
    uniform(p.w1, kFireWidth, 1.0);
    uniform(p.b1, kFireWidth, 1.0);
    const double bound = 1.0 / std::sqrt(static_cast<double>(kFireWidth));
    uniform(p.w2, static_cast<size_t>(heads) * kFireWidth, bound);
    uniform(p.b2, heads, bound);
    p.c = c;
    p.lMultiplier = 1.0;
    return p;
}

FireParams fireZeroGradient(int heads)
{
    FireParams g;
    g.w1.assign(kFireWidth, 0.0);
    g.b1.assign(kFireWidth, 0.0);
    g.w2.assign(static_cast<size_t>(heads) * kFireWidth, 0.0);
    g.b2.assign(heads, 0.0);
    return g;
}

FireFunction::FireFunction(const FireParams& params, double initialThreshold)
    : m_p(params), m_initialThreshold(initialThreshold), m_threshold(std::abs(params.lMultiplier) * initialThreshold)
{
}

double FireFunction::mlp(int h, double x) const
{
    const double* w2 = m_p.w2.data() + static_cast<size_t>(h) * kFireWidth;
    double sum = m_p.b2[h];
    for (int k = 0; k < kFireWidth; ++k)
        sum += w2[k] * std::max(m_p.w1[k] * x + m_p.b1[k], 0.0);
    return sum;
}

void FireFunction::accumulate(int h, int m, int n, double g, FireParams& grad) const
{
    const double x = input(m, n);
    const double* w2 = m_p.w2.data() + static_cast<size_t>(h) * kFireWidth;
    double* dw2 = grad.w2.data() + static_cast<size_t>(h) * kFireWidth;
    grad.b2[h] += g;
    double dx = 0;
    for (int k = 0; k < kFireWidth; ++k) {
        const double z = m_p.w1[k] * x + m_p.b1[k];
        if (z <= 0)
            continue;
        dw2[k] += g * z;
        const double gz = g * w2[k];
        grad.w1[k] += gz * x;
        grad.b1[k] += gz;
        dx += gz * m_p.w1[k];
    }
    if (dx == 0)
        return;
    // x = ψ(r) / Z, Z = ψ(M) + eps, M = max(m, T): through ψ's |c| in numerator and Z, and T = |μ| T0 in Z (m < T).
    const double absC = std::abs(m_p.c), signC = m_p.c < 0 ? -1.0 : 1.0;
    const double r = m - n;
    const double M = std::max<double>(m, m_threshold);
    const double Z = normaliser(m);
    const double dPsiR = signC * r / (absC * r + 1.0);
    const double dZdc = signC * M / (absC * M + 1.0);
    grad.c += dx * (dPsiR - x * dZdc) / Z;
    if (m < m_threshold) {
        const double signMu = m_p.lMultiplier < 0 ? -1.0 : 1.0;
        const double dZdmu = absC / (absC * m_threshold + 1.0) * m_initialThreshold * signMu;
        grad.lMultiplier += dx * (-x * dZdmu / Z);
    }
}

void addFireGradient(FireParams& grad, const FireParams& other)
{
    auto add = [](std::vector<double>& a, const std::vector<double>& b) {
        for (size_t i = 0; i < a.size() && i < b.size(); ++i)
            a[i] += b[i];
    };
    add(grad.w1, other.w1);
    add(grad.b1, other.b1);
    add(grad.w2, other.w2);
    add(grad.b2, other.b2);
    grad.c += other.c;
    grad.lMultiplier += other.lMultiplier;
}

} // namespace plab
