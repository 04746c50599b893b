// The lab's Model and a Hugging Face HfModel behind LanguageModel: their windows' per-token losses and methods.
#include "runs/language_model.h"

#include "base/errors.h"
#include "hf/hf_model.h"
#include "model/model.h"
#include "model/model_config.h"
#include "runs/method_comparison.h"
#include "schemes/rotary_scaling.h"

#include <algorithm>
#include <cmath>

namespace plab {

std::vector<int32_t> bytesAsTokens(const std::vector<uint8_t>& bytes)
{
    return std::vector<int32_t>(bytes.begin(), bytes.end());
}

// --- the lab's byte model ---

std::string ByteLanguageModel::scheme() const
{
    return m_model.config().scheme;
}

bool ByteLanguageModel::rotary() const
{
    return schemeByName(m_model.config().scheme).rotary;
}

int ByteLanguageModel::context() const
{
    return m_model.config().context;
}

int ByteLanguageModel::maxLength() const
{
    return m_model.maxLength();
}

std::string ByteLanguageModel::scaling() const
{
    return m_model.config().scaling;
}

std::vector<std::string> ByteLanguageModel::scalingSettings() const
{
    return m_model.config().scalingSettings;
}

std::vector<std::string> ByteLanguageModel::methodSettings(const std::string& method, int longestLength) const
{
    return methodDefaultSettings(rotaryMethodByName(method), m_model.config().context, longestLength);
}

SchemeSpec ByteLanguageModel::positionsUnder(const std::string& method, const std::vector<std::string>& settings) const
{
    ModelConfig c = m_model.config();
    c.scaling = method;
    c.scalingSettings = settings;
    return modelSchemeSpec(c); // InputError naming the parameter, its value and what is allowed
}

void ByteLanguageModel::setScaling(const std::string& method, const std::vector<std::string>& settings)
{
    m_model.setScaling(method, settings);
}

double ByteLanguageModel::windowBytes(int length) const
{
    return m_model.activationBytes(1, length);
}

void ByteLanguageModel::windowLosses(const int32_t* inputs, const int32_t* targets, int B, int T,
                                     std::vector<double>& losses)
{
    const size_t n = static_cast<size_t>(B) * T;
    m_inputs.resize(n);
    m_targets.resize(n);
    for (size_t i = 0; i < n; ++i) {
        // Callers pass bytesAsTokens; anything else is a programming error, named rather than wrapped.
        if (inputs[i] < 0 || inputs[i] > 255 || targets[i] < 0 || targets[i] > 255)
            throw InputError("token id " + std::to_string(inputs[i] < 0 || inputs[i] > 255 ? inputs[i] : targets[i]) +
                             " is out of range for a byte-level model; allowed: 0..255");
        m_inputs[i] = static_cast<uint8_t>(inputs[i]);
        m_targets[i] = static_cast<uint8_t>(targets[i]);
    }
    m_model.forward(m_inputs.data(), m_targets.data(), B, T);
    const layers::FloatBuffer& tokenLosses = m_model.tokenLosses();
    losses.assign(tokenLosses.begin(), tokenLosses.begin() + static_cast<std::ptrdiff_t>(n));
}

void ByteLanguageModel::setCancelFlag(const std::atomic<bool>* flag)
{
    m_model.setCancelFlag(flag);
}

// --- a Hugging Face folder ---

HfLanguageModel::HfLanguageModel(const HfModel& model)
    : m_model(model), m_scaling(model.config().scheme == "rope" ? model.config().scaling : "none"),
      m_positions(hfPositionSpec(model.config()))
{
}

std::string HfLanguageModel::scheme() const
{
    return m_model.config().scheme;
}

bool HfLanguageModel::rotary() const
{
    return m_model.config().scheme == "rope";
}

int HfLanguageModel::context() const
{
    return m_model.config().context;
}

int HfLanguageModel::maxLength() const
{
    // Learned positions stop at the position table (gpt2's n_positions); a sliding window is not implemented, so a
    // longer window would be refused by HfModel::logits.
    const HfConfig& c = m_model.config();
    if (c.scheme == "learned")
        return c.context;
    return c.slidingWindow > 0 ? std::min(c.slidingWindow, kMaxLength) : kMaxLength;
}

int HfLanguageModel::vocabulary() const
{
    return m_model.config().vocab;
}

std::vector<std::string> HfLanguageModel::methodSettings(const std::string& method, int longestLength) const
{
    const HfConfig& c = m_model.config();
    if (method == c.scaling)
        return c.scalingSettings; // the config's own method keeps the config's settings
    return methodDefaultSettings(rotaryMethodByName(method), c.context, longestLength);
}

SchemeSpec HfLanguageModel::positionsUnder(const std::string& method, const std::vector<std::string>& settings) const
{
    return hfPositionSpec(m_model.config(), method, settings);
}

void HfLanguageModel::setScaling(const std::string& method, const std::vector<std::string>& settings)
{
    m_positions = positionsUnder(method, settings);
    m_scaling = method;
    m_settings = settings;
}

double HfLanguageModel::windowBytes(int length) const
{
    return hfForwardBytes(m_model.config(), length, m_model.precision(), HfForwardOutput::Losses);
}

void HfLanguageModel::windowLosses(const int32_t* inputs, const int32_t* targets, int B, int T,
                                   std::vector<double>& losses)
{
    losses.assign(static_cast<size_t>(B) * T, 0.0);
    std::vector<int> ids(T), next(T);
    for (int b = 0; b < B; ++b) {
        std::copy_n(inputs + static_cast<size_t>(b) * T, T, ids.begin());
        std::copy_n(targets + static_cast<size_t>(b) * T, T, next.begin());
        const std::vector<double> window = m_model.nextTokenLosses(ids, next, m_positions);
        std::copy(window.begin(), window.end(), losses.begin() + static_cast<std::ptrdiff_t>(b) * T);
    }
}

} // namespace plab
