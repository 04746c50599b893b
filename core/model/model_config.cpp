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
    return label;
}

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
    validateAttentionTemperature(c.temperature);
    if (c.temperature.tuning && c.nopeEvery == 0 && c.scheme != "none")
        throw InputError("attn_temperature_tuning acts on NoPE layers only and this model has none; allowed: with "
                         "nope-every >= 2 or scheme none");
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
    return c.scheme != "none" && (c.nopeEvery < 2 || (layer + 1) % c.nopeEvery != 0);
}

SchemeSpec modelLayerSchemeSpec(const ModelConfig& c, int layer)
{
    if (c.scheme == "none" || modelLayerUsesScheme(c, layer)) // scheme none: its settings (a window) on every layer
        return modelSchemeSpec(c);
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
