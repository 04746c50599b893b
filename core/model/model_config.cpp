// Model and training configurations: JSON round trip, validation, the scheme inside a model, the tensor layout.
#include "model/model_config.h"

#include "base/limits.h"
#include "base/errors.h"
#include "schemes/catalog_table.h"
#include "schemes/position_bias.h"
#include "schemes/rotary_scaling.h"

#include <algorithm>
#include <limits>

namespace plab {

nlohmann::json modelShapeJson(const ModelConfig& c)
{
    nlohmann::json j{{"layers", c.layers}, {"d_model", c.dModel},  {"heads", c.heads},
                     {"d_ff", c.dFf},      {"context", c.context}, {"logn", c.logn}};
    if (c.nopeEvery > 0) // only then: configs (and sweep grids, and their hashes) without a schedule read as they did
        j["nope_every"] = c.nopeEvery;
    if (c.ssmax) // as nope_every: only when set
        j["ssmax"] = true;
    if (c.sinkLogit)
        j["sink_logit"] = true;
    if (c.temperature.tuning) { // Llama 4's names
        j["attn_temperature_tuning"] = true;
        j["floor_scale"] = c.temperature.floorScale;
        j["attn_scale"] = c.temperature.attnScale;
    }
    // The layer types, as nope_every only when set; window and chunk resolved (Hugging Face's names), so a changed
    // default never changes a recorded model.
    if (!c.layerTypes.empty())
        j["layer_types"] = c.layerTypes;
    if (c.window != 0 || (!c.layerTypes.empty() && modelHasLayerType(c, LayerType::Sliding)))
        j["sliding_window"] = c.window != 0 ? c.window : modelLayerWindow(c);
    if (c.chunk != 0 || (!c.layerTypes.empty() && modelHasLayerType(c, LayerType::Chunked)))
        j["attention_chunk_size"] = c.chunk != 0 ? c.chunk : modelLayerChunk(c);
    if (!c.fullScheme.empty())
        j["full_scheme"] = c.fullScheme;
    if (!c.fullSettings.empty())
        j["full_settings"] = c.fullSettings;
    return j;
}

std::string modelOptionsLabel(const ModelConfig& c)
{
    std::string label;
    auto add = [&label](const std::string& part) { label += (label.empty() ? "" : " ") + part; };
    if (c.nopeEvery > 0)
        add("nope_every=" + std::to_string(c.nopeEvery));
    if (c.temperature.tuning)
        add("temperature(F=" + catalog::shortNumberText(c.temperature.floorScale) +
            ", β=" + catalog::shortNumberText(c.temperature.attnScale) + ")");
    if (c.ssmax)
        add("ssmax");
    if (c.sinkLogit)
        add("sink_logit");
    if (!c.layerTypes.empty()) {
        add("layers=" + layerTypesText(c.layerTypes));
        if (modelHasLayerType(c, LayerType::Sliding))
            add("window=" + std::to_string(modelLayerWindow(c)));
        if (modelHasLayerType(c, LayerType::Chunked))
            add("chunk=" + std::to_string(modelLayerChunk(c)));
        if (!c.fullScheme.empty() || !c.fullSettings.empty()) {
            std::string full = "full=" + (c.fullScheme.empty() ? c.scheme : c.fullScheme);
            for (const std::string& setting : c.fullSettings)
                full += ":" + setting;
            add(full);
        }
    }
    return label;
}

namespace {

constexpr int kMaxLayerSpan = 1000000; // the window and chunk modifiers' largest value (modifierParams)

// layer_types, sliding_window, attention_chunk_size, full_scheme and full_settings of a model JSON (all optional: a
// model without them has no layer types). Their values are validateLayerTypes' to check.
void readLayerTypes(const nlohmann::json& j, ModelConfig& c, const std::string& source)
{
    auto fail = [&](const std::string& what) { return InputError(source + ": model config " + what); };
    auto strings = [&](const char* key) {
        std::vector<std::string> out;
        if (!j.contains(key))
            return out;
        if (!j[key].is_array())
            throw fail(std::string(key) + " is not a list of strings");
        for (const nlohmann::json& v : j[key]) {
            if (!v.is_string())
                throw fail(std::string(key) + " holds " + v.dump() + ", not a string");
            out.push_back(v.get<std::string>());
        }
        return out;
    };
    c.layerTypes = strings("layer_types");
    if (j.contains("layer_types") && c.layerTypes.empty())
        throw fail("layer_types is an empty list; allowed: a list of " + [] {
            std::string names;
            for (const std::string& n : layerTypeNames())
                names += (names.empty() ? "" : ", ") + n;
            return names;
        }());
    for (auto [key, value] : {std::pair{"sliding_window", &c.window}, std::pair{"attention_chunk_size", &c.chunk}})
        if (j.contains(key)) {
            if (!j[key].is_number_integer())
                throw fail(std::string(key) + " is not an integer");
            const long long v = j[key].get<long long>();
            if (v < 1 || v > kMaxLayerSpan) // 0 would read as "the default": refused as --window 0 is
                throw fail(std::string(key) + " = " + std::to_string(v) + " is out of range; allowed: integers in [1, " +
                           std::to_string(kMaxLayerSpan) + "]");
            *value = static_cast<int>(v);
        }
    if (j.contains("full_scheme")) {
        if (!j["full_scheme"].is_string())
            throw fail("full_scheme is not a string");
        c.fullScheme = j["full_scheme"].get<std::string>();
    }
    c.fullSettings = strings("full_settings");
}

} // namespace

void readModelShape(const nlohmann::json& j, ModelConfig& c, const std::string& source)
{
    auto fail = [&](const std::string& what) { return InputError(source + ": model config " + what); };
    if (!j.is_object())
        throw fail("is not a JSON object");
    // Clamped to one past validateModelConfig's ranges at most, so an absurd value is refused there, not wrapped.
    auto integer = [&](const char* key) -> int {
        if (!j.contains(key) || !j[key].is_number_integer())
            throw fail(std::string("has no integer '") + key + "'");
        return static_cast<int>(std::clamp(j[key].get<long long>(), -1LL, 1LL << 30));
    };
    c.layers = integer("layers");
    c.dModel = integer("d_model");
    c.heads = integer("heads");
    c.dFf = integer("d_ff");
    c.context = integer("context");
    if (j.contains("logn")) {
        if (!j["logn"].is_boolean())
            throw fail("logn is not a boolean");
        c.logn = j["logn"].get<bool>();
    }
    if (j.contains("nope_every"))
        c.nopeEvery = integer("nope_every");
    for (auto [key, flag] : {std::pair{"ssmax", &c.ssmax}, std::pair{"sink_logit", &c.sinkLogit}})
        if (j.contains(key)) {
            if (!j[key].is_boolean())
                throw fail(std::string(key) + " is not a boolean");
            *flag = j[key].get<bool>();
        }
    readLayerTypes(j, c, source);
    if (j.contains("attn_temperature_tuning")) {
        if (!j["attn_temperature_tuning"].is_boolean())
            throw fail("attn_temperature_tuning is not a boolean");
        c.temperature.tuning = j["attn_temperature_tuning"].get<bool>();
        for (const char* key : {"floor_scale", "attn_scale"})
            if (!j.contains(key) || !j[key].is_number())
                throw fail(std::string("has no number '") + key + "' beside attn_temperature_tuning");
        c.temperature.floorScale = j["floor_scale"].get<double>();
        c.temperature.attnScale = j["attn_scale"].get<double>();
    }
}

nlohmann::json ModelConfig::toJson() const
{
    const SchemeSpec spec = modelSchemeSpec(*this);
    nlohmann::json params = nlohmann::json::object();
    for (const auto& [k, v] : spec.params)
        params[k] = v;
    // The layer-type modifiers with them, as the settings that set them (fromJson reads them back through --set's
    // rule); local's and bca's own window and sinks are among spec.params already.
    for (const auto& [k, v] : {std::pair{"window", double(spec.window)},
                               {"chunk", double(spec.chunk)},
                               {"sinks", double(spec.sinks)},
                               {"softcap", spec.softcap}})
        if (v > 0)
            params[k] = v;
    nlohmann::json j = modelShapeJson(*this);
    j["vocab"] = vocab();
    j["scheme"] = scheme;
    j["scheme_params"] = params;
    j["seed"] = seed;
    if (spec.scaling != RotaryMethod::None) {
        j["scaling"] = rotaryMethodInfo(spec.scaling).name;
        j["scaling_params"] = nlohmann::json::object();
        for (const auto& [k, v] : spec.scalingParams)
            j["scaling_params"][k] = v;
    }
    return j;
}

ModelConfig ModelConfig::fromJson(const nlohmann::json& j, const std::string& source)
{
    auto fail = [&](const std::string& what) { return InputError(source + ": model config " + what); };
    ModelConfig c;
    readModelShape(j, c, source);
    if (j.contains("vocab") && (!j["vocab"].is_number_integer() || j["vocab"].get<long long>() != 256))
        throw fail("has vocab " + j["vocab"].dump() + "; byte-level models have 256");
    if (!j.contains("scheme") || !j["scheme"].is_string())
        throw fail("has no scheme name");
    c.scheme = j["scheme"].get<std::string>();
    // scheme_params and scaling_params: objects of numbers, kept as the NAME=VALUE settings --set takes.
    auto settings = [&](const std::string& key, const std::string& owner) {
        std::vector<std::string> out;
        if (!j.contains(key))
            return out;
        if (!j[key].is_object())
            throw fail(key + " is not an object");
        for (const auto& [k, v] : j[key].items()) {
            if (!v.is_number())
                throw fail(owner + " parameter " + k + " is not a number");
            out.push_back(k + "=" + exactText(v.get<double>()));
        }
        return out;
    };
    c.schemeSettings = settings("scheme_params", "scheme");
    if (j.contains("scaling")) {
        if (!j["scaling"].is_string())
            throw fail("scaling is not a string");
        c.scaling = j["scaling"].get<std::string>();
    }
    c.scalingSettings = settings("scaling_params", "scaling");
    if (j.contains("seed")) {
        if (!j["seed"].is_number_unsigned())
            throw fail("seed is not a non-negative integer");
        c.seed = j["seed"].get<uint64_t>();
    }
    try {
        validateModelConfig(c);
    } catch (const InputError& e) {
        throw InputError(source + ": " + e.what());
    }
    return c;
}

namespace {

// Whether the full layers attend with a spec of their own (--full-scheme or --full-set), not the model's scheme.
bool ownFullSpec(const ModelConfig& c)
{
    return !c.layerTypes.empty() && (!c.fullScheme.empty() || !c.fullSettings.empty());
}

std::string namesText(const std::vector<std::string>& names)
{
    std::string text;
    for (const std::string& n : names)
        text += (text.empty() ? "" : ", ") + n;
    return text;
}

// The layer-type options, each refused with its name, value and what is allowed (the CLI's options share the names).
void validateLayerTypes(const ModelConfig& c)
{
    // Without layer types no layer has a type (every layer is the scheme's), so nothing may be set for one.
    auto present = [&](LayerType t) { return !c.layerTypes.empty() && modelHasLayerType(c, t); };
    auto requireType = [&](bool given, const std::string& what, LayerType t) {
        if (given && !present(t))
            throw InputError(what + " applies to " + layerTypeNames()[int(t)] + " layers and the model has none" +
                                 (c.layerTypes.empty() ? std::string(" (no --layer-types)")
                                                       : " (layer-types = " + namesText(c.layerTypes) + ")") +
                                 "; allowed: with a " + layerTypeNames()[int(t)] + " layer in --layer-types",
                             what.substr(0, what.find(' ')));
    };
    if (c.window != 0)
        checkIntegerRange("window", c.window, 1, kMaxLayerSpan);
    if (c.chunk != 0)
        checkIntegerRange("chunk", c.chunk, 1, kMaxLayerSpan);
    for (const std::string& name : c.layerTypes)
        (void)layerTypeByName(name);
    if (c.layerTypes.size() > static_cast<size_t>(c.layers))
        throw InputError("layer-types = " + namesText(c.layerTypes) + " has " + std::to_string(c.layerTypes.size()) +
                             " entries and the model " + std::to_string(c.layers) +
                             " layers; allowed: at most one entry per layer (the list repeats over the layers)",
                         "layer-types");
    requireType(c.window != 0, "window = " + std::to_string(c.window), LayerType::Sliding);
    requireType(c.chunk != 0, "chunk = " + std::to_string(c.chunk), LayerType::Chunked);
    requireType(!c.fullScheme.empty(), "full-scheme = " + c.fullScheme, LayerType::Full);
    if (!c.fullSettings.empty())
        requireType(true, "full-set = " + c.fullSettings.front(), LayerType::Full);
    if (c.layerTypes.empty())
        return;
    if (c.nopeEvery != 0)
        throw InputError("nope-every = " + std::to_string(c.nopeEvery) + " and --layer-types both set each layer's "
                         "positions; allowed: one of them (--full-scheme none makes the full layers NoPE)",
                         "nope-every");
    const SchemeInfo& info = schemeByName(c.scheme);
    if (info.hasWindow)
        throw InputError("scheme " + info.name + " has a window of its own; allowed with --layer-types: a scheme "
                         "without one (the sliding layers' window is --window)", "layer-types");
    for (const auto& [settings, where] : {std::pair{&c.schemeSettings, "--set"}, std::pair{&c.fullSettings, "--full-set"}})
        for (const char* name : {"window", "chunk", "sinks"}) {
            std::string value;
            if (findAssignment(*settings, name, value))
                throw InputError(std::string(where) + " " + name + "=" + value + " with --layer-types: the layer types "
                                 "set each layer's mask; allowed: --window W (sliding layers), --chunk C (chunked "
                                 "layers), no sinks");
        }
    if (ownFullSpec(c)) {
        const SchemeInfo& full = schemeByName(c.fullScheme.empty() ? c.scheme : c.fullScheme);
        if (!fullLayerSchemeAllowed(full)) {
            std::vector<std::string> allowed;
            for (const SchemeInfo& s : schemeCatalog())
                if (fullLayerSchemeAllowed(s))
                    allowed.push_back(s.name);
            throw InputError(std::string(c.fullScheme.empty() ? "--full-set with scheme " : "full-scheme = ") +
                                 full.name + ": the full layers' own scheme cannot have learned values, absolute "
                                 "positions, gates or a window; allowed: " + namesText(allowed),
                             c.fullScheme.empty() ? "" : "full-scheme");
        }
    }
    for (int t = 0; t < 3; ++t) // each type's spec once: its scheme, settings and mask together
        for (int l = 0; l < c.layers; ++l)
            if (int(modelLayerType(c, l)) == t) {
                (void)modelLayerSchemeSpec(c, l);
                break;
            }
}

} // namespace

bool fullLayerSchemeAllowed(const SchemeInfo& info)
{
    return !info.trainable && !info.absolute && !info.hasWindow && !info.dataDependent &&
           info.kind != SchemeKind::Fox && info.kind != SchemeKind::Fire && info.kind != SchemeKind::Cope;
}

const std::vector<std::string>& layerTypeNames()
{
    static const std::vector<std::string> names{"full", "sliding", "chunked"};
    return names;
}

LayerType layerTypeByName(const std::string& name)
{
    const std::vector<std::string>& names = layerTypeNames();
    for (size_t i = 0; i < names.size(); ++i)
        if (names[i] == name)
            return static_cast<LayerType>(i);
    throw InputError("layer-types = '" + name + "' is not a layer type; allowed: sliding, full, chunked (a comma list "
                     "repeating over the layers)", "layer-types");
}

LayerType modelLayerType(const ModelConfig& c, int layer)
{
    if (c.layerTypes.empty())
        return LayerType::Full;
    return layerTypeByName(c.layerTypes[static_cast<size_t>(layer) % c.layerTypes.size()]);
}

bool modelHasLayerType(const ModelConfig& c, LayerType type)
{
    for (int l = 0; l < c.layers; ++l)
        if (modelLayerType(c, l) == type)
            return true;
    return false;
}

int modelDefaultLayerSpan(const ModelConfig& c)
{
    return std::max(1, c.context / 4);
}

int modelLayerWindow(const ModelConfig& c)
{
    return c.window > 0 ? c.window : modelDefaultLayerSpan(c);
}

int modelLayerChunk(const ModelConfig& c)
{
    return c.chunk > 0 ? c.chunk : modelDefaultLayerSpan(c);
}

std::string layerTypesText(const std::vector<std::string>& types)
{
    std::string text;
    for (size_t i = 0; i < types.size();) {
        size_t run = 1;
        while (i + run < types.size() && types[i + run] == types[i])
            ++run;
        text += (text.empty() ? "" : ",") + types[i] + (run > 1 ? "×" + std::to_string(run) : std::string());
        i += run;
    }
    return text;
}

void validateModelConfig(const ModelConfig& c)
{
    checkIntegerRange("layers", c.layers, 1, 64);
    checkIntegerRange("d-model", c.dModel, 2, 8192);
    checkIntegerRange("heads", c.heads, 1, std::min(kMaxHeads, c.dModel));
    if (c.dModel % c.heads)
        throw InputError("d-model = " + std::to_string(c.dModel) + " is not divisible by heads = " +
                         std::to_string(c.heads) + "; the head dim is d-model / heads");
    checkIntegerRange("d-ff", c.dFf, 1, 65536);
    checkIntegerRange("context", c.context, 2, 65536);
    (void)modelSchemeSpec(c); // validates the scheme and its parameters
    if (c.nopeEvery != 0) {
        if (c.nopeEvery < 2 || c.nopeEvery > c.layers)
            throw InputError("nope-every = " + std::to_string(c.nopeEvery) + " is out of range; allowed: 0 (off) or " +
                             (c.layers >= 2 ? "integers in [2, " + std::to_string(c.layers) + "]"
                                            : std::string("nothing else with 1 layer")) +
                             " (layer l is NoPE when (l + 1) % K = 0, so K > layers would leave none)");
        if (!schemeByName(c.scheme).rotary)
            throw InputError("nope-every = " + std::to_string(c.nopeEvery) + " needs a rotary scheme (rope, xpos) on " +
                             "the other layers; scheme " + c.scheme + " is not rotary");
    }
    validateLayerTypes(c);
    validateAttentionTemperature(c.temperature);
    const bool nopeFullLayers = !c.layerTypes.empty() && modelHasLayerType(c, LayerType::Full) &&
                                (c.fullScheme.empty() ? c.scheme : c.fullScheme) == "none";
    if (c.temperature.tuning && c.nopeEvery == 0 && c.scheme != "none" && !nopeFullLayers)
        throw InputError("attn_temperature_tuning acts on NoPE layers only and this model has none; allowed: with "
                         "nope-every >= 2, scheme none or --full-scheme none");
    const double count = static_cast<double>(modelParameterCount(c));
    // Weights, gradients and the two AdamW moments, before anything is allocated.
    checkMemoryEstimate(16.0 * count, "a model of " + std::to_string(static_cast<long long>(count)) +
                                          " parameters (weights, gradients, AdamW moments)");
}

size_t modelParameterCount(const ModelConfig& c)
{
    const std::vector<ParameterTensor> layout = modelTensorLayout(c);
    return layout.back().offset + layout.back().size;
}

SchemeSpec modelSchemeSpec(const ModelConfig& c)
{
    const SchemeInfo& info = schemeByName(c.scheme);
    std::vector<std::string> settings = c.schemeSettings;
    if (info.rotary)
        settings =
            withRequiredDim(c.scheme, settings, c.headDim(), "model's head dim d-model/heads", " inside a model");
    if (info.kind == SchemeKind::Sinusoidal)
        settings = withRequiredDim(c.scheme, settings, c.dModel, "model's d-model", " inside a model");
    std::string window;
    if (info.hasWindow && !findAssignment(settings, "window", window))
        settings.push_back("window=" + std::to_string(modelDefaultWindow(c)));
    // The method's settings set the method's parameters only (eval --set, a checkpoint's scaling_params): a scheme
    // parameter among them would silently change the scheme.
    const RotaryMethodInfo& method = rotaryMethodByName(c.scaling);
    for (const std::string& s : c.scalingSettings)
        checkMethodSetting(method, s);
    settings.insert(settings.end(), c.scalingSettings.begin(), c.scalingSettings.end());
    SchemeSpec spec = makeSchemeSpec(c.scheme, c.heads, false, settings, c.context, c.logn, c.scaling);
    if (info.kind == SchemeKind::None) // every layer is a NoPE layer
        spec.temperature = c.temperature;
    spec.ssmax = c.ssmax;
    spec.sinkLogit = c.sinkLogit;
    return spec;
}

bool modelLayerUsesScheme(const ModelConfig& c, int layer)
{
    if (!c.layerTypes.empty())
        return c.scheme != "none" && !modelLayerHasFullSpec(c, layer);
    return c.scheme != "none" && (c.nopeEvery < 2 || (layer + 1) % c.nopeEvery != 0);
}

void applyModelLayerMask(const ModelConfig& c, int layer, SchemeSpec& spec)
{
    const LayerType type = modelLayerType(c, layer);
    if (type == LayerType::Full)
        return;
    if (type == LayerType::Sliding)
        setModifier(spec, "window", modelLayerWindow(c));
    else
        setModifier(spec, "chunk", modelLayerChunk(c));
    validateSchemeSpec(spec); // the mask with the scheme: cope refuses one, a bidirectional spec cannot hold one
}

SchemeSpec modelFullLayerSpec(const ModelConfig& c)
{
    ModelConfig full = c;
    full.layerTypes.clear();
    full.window = full.chunk = 0;
    full.fullScheme.clear();
    full.fullSettings.clear();
    if (!c.fullScheme.empty()) {
        full.scheme = c.fullScheme;
        full.schemeSettings = c.fullSettings;
    } else {
        full.schemeSettings.insert(full.schemeSettings.end(), c.fullSettings.begin(), c.fullSettings.end());
    }
    if (!schemeByName(full.scheme).rotary) { // the length-extension method acts on rotary layers only
        full.scaling = "none";
        full.scalingSettings.clear();
    }
    SchemeSpec spec = modelSchemeSpec(full);
    const SchemeSpec schemeLayers = modelSchemeSpec(c);
    if (spec.logitC == 0) // logit-c and the soft cap act on every layer, as on a schedule's NoPE layers
        spec.logitC = schemeLayers.logitC;
    if (spec.softcap == 0)
        spec.softcap = schemeLayers.softcap;
    return spec;
}

bool modelLayerHasFullSpec(const ModelConfig& c, int layer)
{
    return ownFullSpec(c) && modelLayerType(c, layer) == LayerType::Full;
}

SchemeSpec modelLayerSchemeSpec(const ModelConfig& c, int layer)
{
    if (modelLayerHasFullSpec(c, layer))
        return modelFullLayerSpec(c);
    if (c.scheme == "none" || modelLayerUsesScheme(c, layer)) { // scheme none: its settings (a window) on every layer
        SchemeSpec spec = modelSchemeSpec(c);
        applyModelLayerMask(c, layer, spec);
        return spec;
    }
    SchemeSpec spec = makeSchemeSpec("none", c.heads, false, {}, c.context, c.logn);
    spec.temperature = c.temperature;
    const SchemeSpec schemeLayers = modelSchemeSpec(c);
    spec.logitC = schemeLayers.logitC;   // logit-c scales every layer's scores, NoPE layers' too
    spec.softcap = schemeLayers.softcap; // so does the soft cap (Gemma 2 caps every layer); a window or chunk stays on
                                         // the scheme's layers: rope with a window and NoPE every K is RNoPE-SWA
    spec.ssmax = c.ssmax;                // the softmax modifiers act on every layer
    spec.sinkLogit = c.sinkLogit;
    return spec;
}

int modelDefaultWindow(const ModelConfig& c)
{
    // Windows chain through the layers: a token reaches layers * (W - 1) positions back. The largest W whose reach
    // stays inside one training window makes every evaluated token repeat a configuration seen in training.
    const int layers = std::max(1, c.layers);
    int window = std::max(1, (c.context - 1) / layers + 1);
    if (schemeByName(c.scheme).kind == SchemeKind::Bca)
        window = std::max(2, window / 2 * 2); // two whole blocks of window/2
    return window;
}

nlohmann::json TrainConfig::toJson() const
{
    return {{"steps", steps},       {"batch", batch},
            {"lr", learningRate},   {"min_lr", minLearningRate},
            {"warmup", warmup},     {"weight_decay", weightDecay},
            {"beta1", beta1},       {"beta2", beta2},
            {"epsilon", epsilon},   {"grad_clip", gradClip},
            {"data_seed", dataSeed}};
}

TrainConfig TrainConfig::fromJson(const nlohmann::json& j, const std::string& source)
{
    auto fail = [&](const std::string& what) { return InputError(source + ": training config " + what); };
    if (!j.is_object())
        throw fail("is not a JSON object");
    auto field = [&](const char* key, bool integer) -> const nlohmann::json& {
        if (!j.contains(key) || !(integer ? j[key].is_number_integer() : j[key].is_number()))
            throw fail(std::string("has no ") + (integer ? "integer" : "number") + " '" + key + "'");
        return j[key];
    };
    // Kept inside int, so a value past it is refused by validateTrainConfig, not wrapped.
    auto integer = [&](const char* key) {
        return static_cast<int>(std::clamp<long long>(
            field(key, true).get<long long>(), std::numeric_limits<int>::min(), std::numeric_limits<int>::max()));
    };
    auto number = [&](const char* key) { return field(key, false).get<double>(); };
    TrainConfig c;
    c.steps = integer("steps");
    c.batch = integer("batch");
    c.learningRate = number("lr");
    c.minLearningRate = number("min_lr");
    c.warmup = integer("warmup");
    c.weightDecay = number("weight_decay");
    c.beta1 = number("beta1");
    c.beta2 = number("beta2");
    c.epsilon = number("epsilon");
    c.gradClip = number("grad_clip");
    if (j.contains("data_seed")) {
        if (!j["data_seed"].is_number_unsigned())
            throw fail("data_seed is not a non-negative integer");
        c.dataSeed = j["data_seed"].get<uint64_t>();
    }
    try {
        validateTrainConfig(c);
    } catch (const InputError& e) {
        throw InputError(source + ": " + e.what());
    }
    return c;
}

void validateTrainConfig(const TrainConfig& c)
{
    checkIntegerRange("steps", c.steps, 0, 100000000);
    checkIntegerRange("batch", c.batch, 1, 65536);
    checkIntegerRange("warmup", c.warmup, 0, 100000000);
    auto real = [](const char* what, double v, double lo, double hi) {
        if (!(v >= lo && v <= hi))
            throw InputError(std::string(what) + " = " + exactText(v) + " is out of range; allowed: [" + exactText(lo) +
                             ", " + exactText(hi) + "]");
    };
    real("lr", c.learningRate, 0, 10);
    real("min-lr", c.minLearningRate, 0, c.learningRate);
    real("weight-decay", c.weightDecay, 0, 10);
    real("beta1", c.beta1, 0, 0.999999);
    real("beta2", c.beta2, 0, 0.999999);
    real("epsilon", c.epsilon, 1e-30, 1);
    real("grad-clip", c.gradClip, 0, 1e6);
}

std::vector<ParameterTensor> modelTensorLayout(const ModelConfig& config)
{
    const SchemeSpec spec = modelSchemeSpec(config);
    const int C = config.dModel, F = config.dFf, H = config.heads, V = config.vocab(), L = config.layers;
    std::vector<ParameterTensor> tensors;
    auto add = [&](const std::string& name, std::vector<int64_t> shape, bool decay) {
        ParameterTensor t;
        t.name = name;
        t.size = 1;
        for (int64_t d : shape)
            t.size *= static_cast<size_t>(d);
        t.shape = std::move(shape);
        t.offset = tensors.empty() ? 0 : tensors.back().offset + tensors.back().size;
        t.decay = decay;
        tensors.push_back(std::move(t));
    };
    add("wte.weight", {V, C}, true);
    if (spec.kind == SchemeKind::Learned)
        add("wpe.weight", {config.context, C}, true);
    for (int l = 0; l < L; ++l) {
        const std::string p = "layers." + std::to_string(l) + ".";
        add(p + "ln1.weight", {C}, false);
        add(p + "ln1.bias", {C}, false);
        add(p + "attn.qkv.weight", {3 * C, C}, true);
        add(p + "attn.qkv.bias", {3 * C}, false);
        add(p + "attn.out.weight", {C, C}, true);
        add(p + "attn.out.bias", {C}, false);
        if (spec.kind == SchemeKind::Fox && modelLayerUsesScheme(config, l)) { // FoX's forget gate, per head
            add(p + "attn.forget.weight", {H, C}, true);
            add(p + "attn.forget.bias", {H}, false);
        }
        add(p + "ln2.weight", {C}, false);
        add(p + "ln2.bias", {C}, false);
        add(p + "mlp.fc.weight", {F, C}, true);
        add(p + "mlp.fc.bias", {F}, false);
        add(p + "mlp.proj.weight", {C, F}, true);
        add(p + "mlp.proj.bias", {C}, false);
    }
    add("ln_f.weight", {C}, false);
    add("ln_f.bias", {C}, false);
    if (spec.kind == SchemeKind::T5)
        add("scheme.t5_bias", {spec.intParam("num-buckets"), H}, false);
    if (spec.kind == SchemeKind::KerplePower || spec.kind == SchemeKind::KerpleLog) {
        add("scheme.kerple_r1", {H}, false);
        add("scheme.kerple_r2", {H}, false);
    }
    // The softmax modifiers' per-head values, shared by the layers as the schemes' learned values are.
    if (config.ssmax)
        add("scheme.ssmax_scale", {H}, false);
    if (config.sinkLogit)
        add("scheme.sink_logit", {H}, false);
    if (spec.kind == SchemeKind::Fire) { // FIRE's MLP 1 -> 32 -> H, c and the threshold multiplier, never decayed
        add("scheme.fire_w1", {kFireWidth}, false);
        add("scheme.fire_b1", {kFireWidth}, false);
        add("scheme.fire_w2", {H, kFireWidth}, false);
        add("scheme.fire_b2", {H}, false);
        add("scheme.fire_c", {1}, false);
        add("scheme.fire_l_multiplier", {1}, false);
    }
    if (spec.kind == SchemeKind::Cope) // CoPE's position embeddings per layer, shared by its heads, never decayed
        add("scheme.cope_pos_emb", {config.layers, config.headDim(), spec.intParam("npos-max")}, false);
    return tensors;
}

int modelMaxLength(const ModelConfig& config)
{
    return schemeByName(config.scheme).kind == SchemeKind::Learned ? config.context : kMaxLength;
}

} // namespace plab
