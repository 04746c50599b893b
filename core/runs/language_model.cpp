// The lab's Model and a Hugging Face HfModel behind LanguageModel: their windows' per-token losses and methods.
#include "runs/language_model.h"

#include "base/errors.h"
#include "hf/hf_model.h"
#include "hf/tokenizer.h"
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
    return hfMaxLength(m_model.config());
}

int HfLanguageModel::vocabulary() const
{
    return m_model.config().vocab;
}

std::vector<std::string> HfLanguageModel::methodSettings(const std::string& method, int longestLength) const
{
    return hfMethodSettings(m_model.config(), method, longestLength);
}

std::vector<std::string> hfMethodSettings(const HfConfig& config, const std::string& method, int longestLength)
{
    if (method == config.scaling)
        return config.scalingSettings; // the config's own method keeps the config's settings
    return methodDefaultSettings(rotaryMethodByName(method), config.context, longestLength);
}

std::string wholeUtf8Characters(const std::vector<uint8_t>& bytes)
{
    size_t begin = 0, end = bytes.size();
    while (begin < end && begin < 3 && (bytes[begin] & 0xC0) == 0x80) // continuation bytes of a cut character
        ++begin;
    for (size_t back = 1; back <= 3 && back <= end - begin; ++back) {
        const uint8_t b = bytes[end - back];
        if ((b & 0xC0) == 0x80)
            continue;
        const size_t need = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
        if (need > back)
            end -= back; // the last character is incomplete
        break;
    }
    return std::string(bytes.begin() + static_cast<std::ptrdiff_t>(begin),
                       bytes.begin() + static_cast<std::ptrdiff_t>(end));
}

std::vector<int32_t> folderTextTokens(const hf::Tokenizer& tokenizer, const std::vector<uint8_t>& bytes,
                                      const std::string& textName)
{
    try {
        const std::vector<int> ids = tokenizer.encode(wholeUtf8Characters(bytes)).ids;
        return std::vector<int32_t>(ids.begin(), ids.end());
    } catch (const InputError& e) {
        throw InputError(textName + ": " + e.what(), e.parameter());
    }
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
        // The config's own method without settings is each layer type's own rope; a method set goes where m_layers says.
        const bool own = m_scaling == m_model.config().scaling && m_settings.empty();
        const std::vector<double> window =
            m_model.nextTokenLosses(ids, next, HfPositions(m_positions, own ? HfScalingLayers::Full : m_layers));
        std::copy(window.begin(), window.end(), losses.begin() + static_cast<std::ptrdiff_t>(b) * T);
    }
}

} // namespace plab
