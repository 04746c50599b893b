// --scaling-layers: which layer types a method applied zero-shot reaches, and the positions each type then reads.
#include "hf/hf_scaling_layers.h"

#include "base/errors.h"

#include <algorithm>

namespace plab {

const char* hfScalingLayersName(HfScalingLayers layers)
{
    switch (layers) {
    case HfScalingLayers::Full:
        return "full";
    case HfScalingLayers::Sliding:
        return "sliding";
    case HfScalingLayers::All:
        return "all";
    }
    return "";
}

HfScalingLayers hfScalingLayersByName(std::string_view name)
{
    for (const HfScalingLayers l : {HfScalingLayers::Full, HfScalingLayers::Sliding, HfScalingLayers::All})
        if (name == hfScalingLayersName(l))
            return l;
    throw InputError("scaling layers '" + std::string(name) +
                     "' is not known; allowed: full (full_attention layers), sliding (sliding_attention and "
                     "chunked_attention layers), all");
}

bool hfScalingReaches(const HfConfig& config, HfScalingLayers layers, HfLayerType type)
{
    if (layers == HfScalingLayers::All)
        return true;
    // A window or chunk that spans the whole trained context hides nothing: the layer is full in all but name.
    const bool local = (type == HfLayerType::Sliding && config.slidingWindow < config.context) ||
                       (type == HfLayerType::Chunked && config.chunkSize < config.context);
    return local == (layers == HfScalingLayers::Sliding);
}

SchemeSpec hfLayerTypePositions(const HfConfig& config, const HfPositions& positions, HfLayerType type)
{
    if (positions.spec.kind != SchemeKind::Rope)
        return positions.spec;
    if (!hfScalingReaches(config, positions.layers, type))
        return type == HfLayerType::Sliding ? hfSlidingPositionSpec(config) : hfPositionSpec(config);
    SchemeSpec spec = positions.spec;
    if (type == HfLayerType::Sliding && config.slidingRopeTheta > 0) { // gemma3: the sliding layers' own table
        spec.params["base"] = config.slidingRopeTheta;
        spec.params["keep"] = config.slidingRopeKeep;
    }
    return spec;
}

void checkHfScalingReach(const HfConfig& config, HfScalingLayers layers)
{
    if (config.scheme != "rope")
        return;
    for (size_t i = 0; i < config.layerTypes.size(); ++i)
        if (config.ropeLayers[i] && hfScalingReaches(config, layers, config.layerTypes[i]))
            return;
    std::vector<std::string> reaching;
    for (const HfScalingLayers l : {HfScalingLayers::Full, HfScalingLayers::Sliding, HfScalingLayers::All})
        for (size_t i = 0; i < config.layerTypes.size(); ++i)
            if (config.ropeLayers[i] && hfScalingReaches(config, l, config.layerTypes[i])) {
                reaching.push_back(hfScalingLayersName(l));
                break;
            }
    std::string allowed;
    for (const std::string& r : reaching)
        allowed += (allowed.empty() ? "" : ", ") + r;
    throw InputError("scaling layers '" + std::string(hfScalingLayersName(layers)) +
                     "' reach no layer with rotary positions in " + config.folder + " (layer pattern " +
                     hfLayerStrip(config) + ", window " + std::to_string(config.slidingWindow) + ", context " +
                     std::to_string(config.context) + "), so the method would change nothing; allowed: " + allowed);
}

void checkHfMethodsReach(const HfConfig& config, const std::vector<std::string>& methods, HfScalingLayers layers)
{
    const bool applied = std::any_of(methods.begin(), methods.end(),
                                     [&](const std::string& m) { return !m.empty() && m != config.scaling; });
    if (applied) {
        checkHfScalingReach(config, layers);
        return;
    }
    if (layers != HfScalingLayers::Full)
        throw InputError(std::string("--scaling-layers ") + hfScalingLayersName(layers) +
                         " names the layers a method applied zero-shot reaches, but the list holds no method other "
                         "than the config's own (" +
                         (config.scaling.empty() ? "none" : config.scaling) +
                         "); allowed: a list with another method, or full layers");
}

std::vector<HfLayerTypeTable> hfLayerTypeTables(const HfConfig& config, const HfPositions& positions)
{
    std::vector<HfLayerTypeTable> tables;
    for (const HfLayerType type : {HfLayerType::Full, HfLayerType::Sliding, HfLayerType::Chunked}) {
        int count = 0;
        for (size_t i = 0; i < config.layerTypes.size(); ++i)
            count += config.layerTypes[i] == type && config.ropeLayers[i];
        if (count > 0)
            tables.push_back({type, count, hfLayerTypePositions(config, positions, type)});
    }
    return tables;
}

} // namespace plab
