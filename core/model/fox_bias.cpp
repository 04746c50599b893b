// FoX's per-input bias matrix from a forward of the model's weights over a text.
#include "model/fox_bias.h"

#include "base/errors.h"

#include <string>

namespace plab {

Eigen::MatrixXf foxBiasOnText(const Model& model, const std::vector<uint8_t>& text, int layer, int head)
{
    const ModelConfig& config = model.config();
    if (config.scheme != "fox")
        throw InputError("the model's scheme is " + config.scheme + "; the forget-gate bias needs a fox model");
    checkIntegerRange("layer", layer, 0, config.layers - 1);
    checkIntegerRange("head", head, 0, config.heads - 1);
    if (!modelLayerUsesScheme(config, layer))
        throw InputError("layer = " + std::to_string(layer) +
                         " is a NoPE layer of the model's schedule: it has no forget gate; allowed: a fox layer");
    const int T = static_cast<int>(text.size());
    if (T < 1)
        throw InputError("the text for the forget-gate bias is empty");
    if (T > model.maxLength())
        throw InputError("the text has " + std::to_string(T) + " bytes; allowed: at most " +
                         std::to_string(model.maxLength()));
    Model reader(config, ConfigCheck::Validated); // the same weights, its own activations
    reader.parameters() = model.parameters();
    reader.parametersChanged();
    reader.forward(text.data(), nullptr, 1, T);
    return foxBiasFromLogForget(reader.layerLogForget(layer).data() + static_cast<size_t>(head) * T, T); // (1, H, T)
}

Eigen::MatrixXf foxBiasFromLogForget(const double* logForget, int length)
{
    Eigen::MatrixXf bias = Eigen::MatrixXf::Zero(length, length);
    for (int m = 0; m < length; ++m)
        for (int n = 0; n <= m; ++n)
            bias(m, n) = static_cast<float>(logForget[m] - logForget[n]);
    return bias;
}

} // namespace plab
