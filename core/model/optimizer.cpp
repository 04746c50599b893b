// AdamW, the learning-rate schedule and the clamp of trainable scheme values.
#include "model/optimizer.h"

#include "base/errors.h"

#include <algorithm>
#include <cmath>

namespace plab {

AdamW::AdamW(size_t parameterCount) : m_m(parameterCount, 0.0f), m_v(parameterCount, 0.0f) {}

void AdamW::restore(const std::vector<float>& m, const std::vector<float>& v, int updates)
{
    if (m.size() != m_m.size() || v.size() != m_v.size())
        throw InputError("optimizer state of " + std::to_string(m.size()) + " values does not fit a model of " +
                         std::to_string(m_m.size()) + " parameters");
    if (updates < 0)
        throw InputError("optimizer_updates = " + std::to_string(updates) + " must be >= 0");
    for (size_t i = 0; i < m.size(); ++i)
        if (!std::isfinite(m[i]) || !std::isfinite(v[i]) || v[i] < 0)
            throw InputError("optimizer state holds a non-finite or negative second moment at " + std::to_string(i));
    m_m.assign(m.begin(), m.end());
    m_v.assign(v.begin(), v.end());
    m_updates = updates;
}

void AdamW::update(Model& model, const TrainConfig& config, double lr)
{
    const int step = ++m_updates;
    float* p = model.parameters().data();
    const float* g = model.gradients().data();
    const float b1 = static_cast<float>(config.beta1), b2 = static_cast<float>(config.beta2);
    const float c1 = static_cast<float>(1.0 / (1.0 - std::pow(config.beta1, step)));
    const float c2 = static_cast<float>(1.0 / (1.0 - std::pow(config.beta2, step)));
    const float eps = static_cast<float>(config.epsilon), rate = static_cast<float>(lr);
    for (const ParameterTensor& t : model.tensors()) {
        const float decay = t.decay ? static_cast<float>(config.weightDecay) : 0.0f;
        const long begin = static_cast<long>(t.offset), end = static_cast<long>(t.offset + t.size);
#pragma omp parallel for schedule(static) if (t.size > 65536)
        for (long i = begin; i < end; ++i) {
            const float m = b1 * m_m[i] + (1 - b1) * g[i];
            const float v = b2 * m_v[i] + (1 - b2) * g[i] * g[i];
            m_m[i] = m;
            m_v[i] = v;
            p[i] -= rate * ((m * c1) / (std::sqrt(v * c2) + eps) + decay * p[i]);
        }
    }
    model.parametersChanged();
}

double learningRateAt(const TrainConfig& c, int step)
{
    if (c.warmup > 0 && step < c.warmup)
        return c.learningRate * (step + 1) / c.warmup;
    const int decaySteps = std::max(1, c.steps - c.warmup);
    const double progress = std::clamp(static_cast<double>(step - c.warmup) / decaySteps, 0.0, 1.0);
    return c.minLearningRate + 0.5 * (c.learningRate - c.minLearningRate) * (1.0 + std::cos(M_PI * progress));
}

void clampSchemeParameters(Model& model)
{
    const SchemeKind kind = model.schemeSpec().kind;
    if (kind != SchemeKind::KerplePower && kind != SchemeKind::KerpleLog)
        return;
    // KERPLE's reference code clamps its parameters after every step; the bias needs r1 > 0 and r2 in (0, 2].
    constexpr float floor = 1e-2f;
    const ParameterTensor& r1 = model.tensor("scheme.kerple_r1");
    const ParameterTensor& r2 = model.tensor("scheme.kerple_r2");
    float* p = model.parameters().data();
    for (size_t i = 0; i < r1.size; ++i)
        p[r1.offset + i] = std::max(p[r1.offset + i], floor);
    for (size_t i = 0; i < r2.size; ++i)
        p[r2.offset + i] = std::clamp(p[r2.offset + i], floor, kind == SchemeKind::KerplePower ? 2.0f : 1e6f);
    model.parametersChanged();
}

} // namespace plab
