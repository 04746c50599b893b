// The byte-level transformer: parameters, layer-by-layer forward/backward, AdamW, evaluation and checkpoints.
#include "model.h"


#include "atomic_file.h"
#include "bias_views.h"
#include "errors.h"
#include "layers.h"
#include "random.h"
#include "safetensors.h"

#include <omp.h>

#include <algorithm>
#include <exception>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace plab {

namespace {

void checkRange(const char* what, long long value, long long lo, long long hi)
{
    if (value < lo || value > hi)
        throw InputError(std::string(what) + " = " + std::to_string(value) + " is out of range; allowed: integers in [" +
                         std::to_string(lo) + ", " + std::to_string(hi) + "]");
}

} // namespace

// ---------------------------------------------------------------- configuration

nlohmann::json ModelConfig::toJson() const
{
    const SchemeSpec spec = modelSchemeSpec(*this);
    nlohmann::json params = nlohmann::json::object();
    for (const auto& [k, v] : spec.params)
        params[k] = v;
    nlohmann::json j{{"layers", layers}, {"d_model", dModel}, {"heads", heads}, {"d_ff", dFf}, {"context", context},
                     {"vocab", vocab()}, {"scheme", scheme}, {"scheme_params", params}, {"logn", logn}, {"seed", seed}};
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
    if (!j.is_object())
        throw fail("is not a JSON object");
    auto integer = [&](const char* key) -> long long {
        if (!j.contains(key) || !j[key].is_number_integer())
            throw fail(std::string("has no integer '") + key + "'");
        return j[key].get<long long>();
    };
    ModelConfig c;
    c.layers = static_cast<int>(std::clamp(integer("layers"), -1LL, 1LL << 30));
    c.dModel = static_cast<int>(std::clamp(integer("d_model"), -1LL, 1LL << 30));
    c.heads = static_cast<int>(std::clamp(integer("heads"), -1LL, 1LL << 30));
    c.dFf = static_cast<int>(std::clamp(integer("d_ff"), -1LL, 1LL << 30));
    c.context = static_cast<int>(std::clamp(integer("context"), -1LL, 1LL << 30));
    if (j.contains("vocab") && (!j["vocab"].is_number_integer() || j["vocab"].get<long long>() != 256))
        throw fail("has vocab " + j["vocab"].dump() + "; byte-level models have 256");
    if (!j.contains("scheme") || !j["scheme"].is_string())
        throw fail("has no scheme name");
    c.scheme = j["scheme"].get<std::string>();
    if (j.contains("scheme_params")) {
        if (!j["scheme_params"].is_object())
            throw fail("scheme_params is not an object");
        for (const auto& [k, v] : j["scheme_params"].items()) {
            if (!v.is_number())
                throw fail("scheme parameter " + k + " is not a number");
            c.schemeSettings.push_back(k + "=" + exactText(v.get<double>()));
        }
    }
    if (j.contains("logn")) {
        if (!j["logn"].is_boolean())
            throw fail("logn is not a boolean");
        c.logn = j["logn"].get<bool>();
    }
    if (j.contains("scaling")) {
        if (!j["scaling"].is_string())
            throw fail("scaling is not a string");
        c.scaling = j["scaling"].get<std::string>();
    }
    if (j.contains("scaling_params")) {
        if (!j["scaling_params"].is_object())
            throw fail("scaling_params is not an object");
        for (const auto& [k, v] : j["scaling_params"].items()) {
            if (!v.is_number())
                throw fail("scaling parameter " + k + " is not a number");
            c.scalingSettings.push_back(k + "=" + exactText(v.get<double>()));
        }
    }
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
    checkRange("layers", c.layers, 1, 64);
    checkRange("d-model", c.dModel, 2, 8192);
    checkRange("heads", c.heads, 1, std::min(kMaxHeads, c.dModel));
    if (c.dModel % c.heads)
        throw InputError("d-model = " + std::to_string(c.dModel) + " is not divisible by heads = " +
                         std::to_string(c.heads) + "; the head dim is d-model / heads");
    checkRange("d-ff", c.dFf, 1, 65536);
    checkRange("context", c.context, 2, 65536);
    (void)modelSchemeSpec(c); // validates the scheme and its parameters
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
        settings = withRequiredDim(c.scheme, settings, c.headDim(), "model's head dim d-model/heads", " inside a model");
    if (info.kind == SchemeKind::Sinusoidal)
        settings = withRequiredDim(c.scheme, settings, c.dModel, "model's d-model", " inside a model");
    std::string window;
    if (info.hasWindow && !findAssignment(settings, "window", window))
        settings.push_back("window=" + std::to_string(modelDefaultWindow(c)));
    settings.insert(settings.end(), c.scalingSettings.begin(), c.scalingSettings.end());
    return makeSchemeSpec(c.scheme, c.heads, false, settings, c.context, c.logn, c.scaling);
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
    return {{"steps", steps}, {"batch", batch}, {"lr", learningRate}, {"min_lr", minLearningRate},
            {"warmup", warmup}, {"weight_decay", weightDecay}, {"beta1", beta1}, {"beta2", beta2},
            {"epsilon", epsilon}, {"grad_clip", gradClip}, {"data_seed", dataSeed}};
}

void validateTrainConfig(const TrainConfig& c)
{
    checkRange("steps", c.steps, 0, 100000000);
    checkRange("batch", c.batch, 1, 65536);
    checkRange("warmup", c.warmup, 0, 100000000);
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

const std::vector<Preset>& presets()
{
    // One row per preset; every training entry point (CLI train, the GUI's Train tab, lessons) reads this table.
    static const std::vector<Preset> table = {
        // name, summary, layers, d_model, heads, d_ff, context, batch, steps, lr, min lr, warmup, eval bytes
        // Tuned so sinusoidal and rope degrade (ppl(16L)/ppl(L) 2.5-2.9x and 3.0-4.6x) while alibi and local stay flat
        // (0.98-1.03x) for seeds 1, 2, 3, 7, 11, 23 and 42, in about 15 s a scheme on 2 cores.
        {"demo", "Figure 1 of the ALiBi paper in about 15 s a scheme: 2 layers, d_model 128, 8 heads, d_ff 256, context 32",
         2, 128, 8, 256, 32, 16, 1200, 3e-3, 3e-4, 100, 16384},
        {"tiny", "seconds: 1 layer, d_model 64, 4 heads, context 32 (too small to show extrapolation)",
         1, 64, 4, 256, 32, 8, 1500, 2e-3, 2e-4, 100, 16384},
        {"quick", "minutes: 2 layers, d_model 128, 8 heads, context 64", 2, 128, 8, 512, 64, 16, 1500, 2e-3, 2e-4, 100,
         65536},
        {"large", "the throughput benchmark: 4 layers, d_model 512, 8 heads, context 256", 4, 512, 8, 2048, 256, 8, 2000,
         6e-4, 6e-5, 200, 65536},
    };
    return table;
}

std::vector<std::string> presetNames()
{
    std::vector<std::string> names;
    for (const Preset& p : presets())
        names.push_back(p.name);
    return names;
}

const Preset& presetByName(std::string_view name)
{
    for (const Preset& p : presets())
        if (p.name == name)
            return p;
    std::string allowed;
    for (const Preset& p : presets())
        allowed += (allowed.empty() ? "" : ", ") + p.name;
    throw InputError("preset '" + std::string(name) + "' is unknown; allowed: " + allowed);
}

void applyPreset(std::string_view name, ModelConfig& m, TrainConfig& t)
{
    const Preset& p = presetByName(name);
    m.layers = p.layers;
    m.dModel = p.dModel;
    m.heads = p.heads;
    m.dFf = p.dFf;
    m.context = p.context;
    t.batch = p.batch;
    t.steps = p.steps;
    t.learningRate = p.learningRate;
    t.minLearningRate = p.minLearningRate;
    t.warmup = p.warmup;
}

// ---------------------------------------------------------------- the model

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
    return tensors;
}

const ParameterTensor& Model::tensor(const std::string& name) const
{
    return m_tensors.at(m_tensorIndex.at(name));
}

Model::Model(const ModelConfig& config)
    : m_config(config)
{
    validateModelConfig(config);
    m_baseSpec = modelSchemeSpec(config);
    const int H = config.heads, L = config.layers;
    m_tensors = modelTensorLayout(config);
    for (size_t i = 0; i < m_tensors.size(); ++i)
        m_tensorIndex[m_tensors[i].name] = i;
    m_params.assign(m_tensors.back().offset + m_tensors.back().size, 0.0f);
    m_grads.assign(m_params.size(), 0.0f);

    for (int l = 0; l < L; ++l) {
        const std::string p = "layers." + std::to_string(l) + ".";
        auto at = [&](const char* n) { return tensor(p + n).offset; };
        m_layerParams.push_back({at("ln1.weight"), at("ln1.bias"), at("attn.qkv.weight"), at("attn.qkv.bias"),
                                 at("attn.out.weight"), at("attn.out.bias"), at("ln2.weight"), at("ln2.bias"),
                                 at("mlp.fc.weight"), at("mlp.fc.bias"), at("mlp.proj.weight"), at("mlp.proj.bias")});
    }

    // GPT-2 initialisation, one seeded stream in tensor order.
    Rng rng(config.seed);
    const double residualScale = 1.0 / std::sqrt(2.0 * L);
    for (const ParameterTensor& t : m_tensors) {
        float* w = m_params.data() + t.offset;
        const bool isLayerNormWeight = t.shape.size() == 1 && t.name.ends_with(".weight");
        if (t.name == "scheme.t5_bias") {
            const std::vector<double> prior = t5DefaultValues(H, false, m_baseSpec.intParam("num-buckets"),
                                                              m_baseSpec.intParam("max-distance"));
            for (size_t i = 0; i < t.size; ++i)
                w[i] = static_cast<float>(prior[i]);
        } else if (t.name == "scheme.kerple_r1" || t.name == "scheme.kerple_r2") {
            std::fill(w, w + t.size, static_cast<float>(m_baseSpec.param(t.name == "scheme.kerple_r1" ? "r1" : "r2")));
        } else if (isLayerNormWeight) {
            std::fill(w, w + t.size, 1.0f);
        } else if (t.shape.size() == 2) {
            const bool residual = t.name.ends_with("attn.out.weight") || t.name.ends_with("mlp.proj.weight");
            const double std = 0.02 * (residual ? residualScale : 1.0);
            for (size_t i = 0; i < t.size; ++i)
                w[i] = static_cast<float>(std * rng.normal());
        } // biases stay 0
    }
}

void Model::setScaling(const std::string& method, const std::vector<std::string>& settings)
{
    ModelConfig c = m_config;
    c.scaling = method;
    c.scalingSettings = settings;
    m_baseSpec = modelSchemeSpec(c); // throws InputError before anything changes
    m_config = std::move(c);
    m_bias.reset();
    parametersChanged();
}

SchemeSpec Model::schemeSpec() const
{
    SchemeSpec spec = m_baseSpec;
    if (spec.kind == SchemeKind::T5) {
        const ParameterTensor& t = tensor("scheme.t5_bias");
        spec.t5Values.assign(m_params.begin() + t.offset, m_params.begin() + t.offset + t.size);
    } else if (spec.kind == SchemeKind::KerplePower || spec.kind == SchemeKind::KerpleLog) {
        const ParameterTensor& r1 = tensor("scheme.kerple_r1");
        const ParameterTensor& r2 = tensor("scheme.kerple_r2");
        spec.kerpleR1.assign(m_params.begin() + r1.offset, m_params.begin() + r1.offset + r1.size);
        spec.kerpleR2.assign(m_params.begin() + r2.offset, m_params.begin() + r2.offset + r2.size);
    }
    return spec;
}

float Model::embeddingScale() const
{
    // Sinusoids have unit amplitude while the embedding starts at N(0, 0.02): scale tokens by sqrt(d_model) as the
    // original Transformer and fairseq (the ALiBi paper's sinusoidal baseline) do, so positions do not drown them.
    return m_baseSpec.kind == SchemeKind::Sinusoidal ? std::sqrt(static_cast<float>(m_config.dModel)) : 1.0f;
}

int Model::maxLength() const
{
    return m_baseSpec.kind == SchemeKind::Learned ? m_config.context : kMaxLength;
}

double Model::activationBytes(int B, int T) const
{
    const double C = m_config.dModel, F = m_config.dFf, V = m_config.vocab();
    const double perToken = m_config.layers * (C * 12 + 2 * F + 8) + 2 * C + 2 * V + 4;
    return 4.0 * perToken * B * T;
}

void Model::resizeActivations(int B, int T)
{
    if (B == m_B && T == m_T)
        return;
    const size_t BT = static_cast<size_t>(B) * T;
    const size_t C = m_config.dModel, F = m_config.dFf, V = m_config.vocab();
    m_inputs.resize(BT);
    m_targets.resize(BT);
    m_encoded.resize(BT * C);
    m_acts.resize(m_config.layers);
    for (LayerActs& a : m_acts) {
        a.ln1.resize(BT * C);
        a.ln1Mean.resize(BT);
        a.ln1Rstd.resize(BT);
        a.qkv.resize(BT * 3 * C);
        a.q.resize(BT * C);
        a.k.resize(BT * C);
        a.v.resize(BT * C);
        a.atty.resize(BT * C);
        a.res2.resize(BT * C);
        a.ln2.resize(BT * C);
        a.ln2Mean.resize(BT);
        a.ln2Rstd.resize(BT);
        a.fch.resize(BT * F);
        a.fchGelu.resize(BT * F);
        a.res3.resize(BT * C);
    }
    m_lnf.resize(BT * C);
    m_lnfMean.resize(BT);
    m_lnfRstd.resize(BT);
    m_logits.resize(BT * V);
    m_probs.resize(BT * V);
    m_losses.resize(BT);
    m_B = B;
    m_T = T;
}

const PositionBias& Model::positionBias(int T)
{
    const bool trainable = m_baseSpec.info().trainable;
    if (!m_bias || m_bias->maxLength() < T || (trainable && m_biasVersion != m_version)) {
        const int length = std::max({T, m_config.context, m_bias ? m_bias->maxLength() : 0});
        m_bias = std::make_unique<PositionBias>(schemeSpec(), length);
        m_biasVersion = m_version;
    }
    return *m_bias;
}

const float* Model::absolutePositions(int T)
{
    const int C = m_config.dModel;
    if (m_baseSpec.kind == SchemeKind::Learned)
        return param("wpe.weight");
    if (m_baseSpec.kind != SchemeKind::Sinusoidal)
        return nullptr;
    if (m_sinusoid.size() < static_cast<size_t>(T) * C) { // rows are prefix-stable: a longer table serves shorter T
        m_sinusoid.resize(static_cast<size_t>(T) * C);
        layers::sinusoidalTable(m_sinusoid.data(), T, C, m_baseSpec.param("base"));
    }
    return m_sinusoid.data();
}

void Model::checkCancelled() const
{
    if (m_cancel && m_cancel->load(std::memory_order_relaxed))
        throw RunError("cancelled");
}

void Model::planSlices(int B, int T)
{
    // Data parallel: each thread runs whole layers on its own sequences (single-threaded GEMMs and attention inside),
    // so a step has two fork/joins instead of one per layer. One slice when there is one sequence or little work.
    int parts = omp_in_parallel() ? 1 : std::min(omp_get_max_threads(), B);
    if (static_cast<double>(B) * T * m_config.dModel < 32768)
        parts = 1;
    m_slices.clear();
    for (int s = 0; s < parts; ++s)
        m_slices.push_back({B * s / parts, B * (s + 1) / parts});
}

template <typename Work>
void Model::forEachSlice(const Work& work)
{
    const int parts = static_cast<int>(m_slices.size());
    if (parts == 1) {
        work(0);
        return;
    }
    std::exception_ptr error;
    // The runtime may give fewer threads than asked (OMP_THREAD_LIMIT, OMP_DYNAMIC, a busy nested level): each
    // thread then takes every team-size-th slice, so no slice is ever skipped. Slices are independent and summed in
    // slice order afterwards, so results do not depend on who ran them.
#pragma omp parallel num_threads(parts)
    {
        for (int s = omp_get_thread_num(); s < parts; s += omp_get_num_threads()) {
            try {
                work(s);
            } catch (...) {
#pragma omp critical(plab_model_slice_error)
                error = std::current_exception();
            }
        }
    }
    if (error)
        std::rethrow_exception(error);
}

float Model::forward(const uint8_t* inputs, const uint8_t* targets, int B, int T)
{
    if (B < 1 || T < 1)
        throw InputError("forward: batch and length must be >= 1");
    if (T > maxLength())
        throw InputError("length " + std::to_string(T) + " is unsupported: the learned position table has " +
                         std::to_string(m_config.context) + " rows (the training context)");
    resizeActivations(B, T);
    const int BT = B * T;
    std::copy(inputs, inputs + BT, m_inputs.begin());
    m_haveTargets = targets != nullptr;
    if (targets)
        std::copy(targets, targets + BT, m_targets.begin());
    const float* pos = absolutePositions(T);      // caches filled before threads read them
    const PositionBias& bias = positionBias(T);
    planSlices(B, T);
    for (LayerActs& a : m_acts)
        a.attn.resize(m_slices.size());
    forEachSlice([&](int s) { forwardSlice(s, T, bias, pos); });
    if (!targets)
        return 0.0f;
    double sum = 0;
    for (int i = 0; i < BT; ++i)
        sum += m_losses[i];
    return static_cast<float>(sum / BT);
}

void Model::forwardSlice(int slice, int T, const PositionBias& bias, const float* pos)
{
    const int C = m_config.dModel, F = m_config.dFf, H = m_config.heads, D = m_config.headDim(), V = m_config.vocab();
    const int b0 = m_slices[slice].b0, B = m_slices[slice].b1 - b0, BT = B * T;
    const size_t o = static_cast<size_t>(b0) * T; // first token of the slice; every buffer is (B, T, ...) or (B, H, T, D)
    const float* P = m_params.data();
    const AttentionDims dims{B, H, T, D};

    layers::encoderForward(m_encoded.data() + o * C, m_inputs.data() + o, param("wte.weight"), pos, B, T, C,
                           embeddingScale());
    const float* x = m_encoded.data() + o * C; // (B, T, C) residual stream entering the layer
    for (int l = 0; l < m_config.layers; ++l) {
        checkCancelled();
        LayerActs& a = m_acts[l];
        const LayerParams& w = m_layerParams[l];
        float* ln1 = a.ln1.data() + o * C;           // (B, T, C)
        float* qkv = a.qkv.data() + o * 3 * C;       // (B, T, 3C)
        float* q = a.q.data() + o * C;               // (B, H, T, D)
        float* k = a.k.data() + o * C;
        float* v = a.v.data() + o * C;
        float* atty = a.atty.data() + o * C;         // (B, T, C)
        float* res2 = a.res2.data() + o * C;         // (B, T, C)
        float* ln2 = a.ln2.data() + o * C;           // (B, T, C)
        float* fch = a.fch.data() + o * F;           // (B, T, F)
        float* fchGelu = a.fchGelu.data() + o * F;   // (B, T, F)
        float* res3 = a.res3.data() + o * C;         // (B, T, C)
        layers::layernormForward(ln1, a.ln1Mean.data() + o, a.ln1Rstd.data() + o, x, P + w.ln1w, P + w.ln1b, BT, C);
        layers::matmulForward(qkv, ln1, P + w.qkvw, P + w.qkvb, BT, C, 3 * C);
        layers::splitHeads(q, k, v, qkv, B, T, H, D);
        attentionForward(bias, dims, q, k, v, a.attn[slice]); // reuses the step's buffers
        layers::mergeHeads(atty, a.attn[slice].out.data(), B, T, H, D);
        // res2 = x + atty W^T + b, the residual add fused into the GEMM.
        layers::matmulForward(res2, atty, P + w.attprojw, P + w.attprojb, BT, C, C, x);
        layers::layernormForward(ln2, a.ln2Mean.data() + o, a.ln2Rstd.data() + o, res2, P + w.ln2w, P + w.ln2b, BT, C);
        layers::matmulForward(fch, ln2, P + w.fcw, P + w.fcb, BT, C, F);
        layers::geluForward(fchGelu, fch, static_cast<size_t>(BT) * F);
        layers::matmulForward(res3, fchGelu, P + w.fcprojw, P + w.fcprojb, BT, F, C, res2);
        x = res3;
    }
    float* lnf = m_lnf.data() + o * C; // (B, T, C)
    layers::layernormForward(lnf, m_lnfMean.data() + o, m_lnfRstd.data() + o, x, param("ln_f.weight"),
                             param("ln_f.bias"), BT, C);
    layers::matmulForward(m_logits.data() + o * V, lnf, param("wte.weight"), nullptr, BT, C, V); // tied head
    layers::crossEntropyForward(m_haveTargets ? m_losses.data() + o : nullptr, m_probs.data() + o * V,
                                m_logits.data() + o * V, m_haveTargets ? m_targets.data() + o : nullptr, BT, V);
}

void Model::zeroGradients()
{
    std::fill(m_grads.begin(), m_grads.end(), 0.0f);
}

void Model::backward()
{
    if (!m_haveTargets || m_B == 0)
        throw std::logic_error("Model::backward needs a forward with targets first");
    const int BT = m_B * m_T;
    const size_t C = m_config.dModel, F = m_config.dFf, V = m_config.vocab();
    const PositionBias& bias = positionBias(m_T);
    // Scratch gradients (B, T, ...) shared by the slices, each slice zeroing its own part; (B, H, T, D) for dy.
    m_dlogits.resize(BT * V);
    m_dres.resize(BT * C);
    m_dln.resize(BT * C);
    m_datty.resize(BT * C);
    m_dy.resize(BT * C);
    m_dqkv.resize(BT * 3 * C);
    m_dfchGelu.resize(BT * F);
    m_dfch.resize(BT * F);
    m_dlosses.assign(BT, 1.0f / BT);
    // Slice 0 accumulates into gradients(); the others into their own buffers, summed afterwards.
    const int parts = static_cast<int>(m_slices.size());
    m_sliceGrads.resize(parts - 1);
    m_attnGrads.resize(parts);
    forEachSlice([&](int s) {
        float* G = m_grads.data();
        if (s > 0) {
            m_sliceGrads[s - 1].assign(m_grads.size(), 0.0f);
            G = m_sliceGrads[s - 1].data();
        }
        backwardSlice(s, bias, G);
    });
    if (parts > 1) {
        const long n = static_cast<long>(m_grads.size());
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; ++i)
            for (int s = 1; s < parts; ++s)
                m_grads[i] += m_sliceGrads[s - 1][i];
    }
}

void Model::backwardSlice(int slice, const PositionBias& bias, float* G)
{
    const int T = m_T;
    const int C = m_config.dModel, F = m_config.dFf, H = m_config.heads, D = m_config.headDim(), V = m_config.vocab();
    const int b0 = m_slices[slice].b0, B = m_slices[slice].b1 - b0, BT = B * T;
    const size_t o = static_cast<size_t>(b0) * T;
    const float* P = m_params.data();
    const AttentionDims dims{B, H, T, D};
    auto zero = [](layers::FloatBuffer& v, size_t offset, size_t n) -> float* {
        std::fill(v.begin() + static_cast<std::ptrdiff_t>(offset), v.begin() + static_cast<std::ptrdiff_t>(offset + n), 0.0f);
        return v.data() + offset;
    };
    auto at = [&](const char* name) { return G + tensor(name).offset; };
    // This slice's part of every scratch gradient (backward functions accumulate, so each is zeroed before use).
    float* dlogits = zero(m_dlogits, o * V, static_cast<size_t>(BT) * V); // (B, T, V)
    float* dres = zero(m_dres, o * C, static_cast<size_t>(BT) * C);       // (B, T, C) gradient of the residual stream
    float* dln = m_dln.data() + o * C;                                     // (B, T, C) gradient of a LayerNorm output
    const size_t nC = static_cast<size_t>(BT) * C, nF = static_cast<size_t>(BT) * F;

    layers::crossEntropyBackward(dlogits, m_probs.data() + o * V, m_targets.data() + o, m_dlosses.data() + o, BT, V);
    zero(m_dln, o * C, nC);
    layers::matmulBackward(dln, at("wte.weight"), nullptr, dlogits, m_lnf.data() + o * C, param("wte.weight"), BT, C, V);
    const float* xLast = (m_config.layers ? m_acts.back().res3.data() : m_encoded.data()) + o * C;
    layers::layernormBackward(dres, at("ln_f.weight"), at("ln_f.bias"), dln, xLast, param("ln_f.weight"),
                              m_lnfMean.data() + o, m_lnfRstd.data() + o, BT, C);

    const bool t5 = m_baseSpec.kind == SchemeKind::T5;
    const bool kerple = m_baseSpec.kind == SchemeKind::KerplePower || m_baseSpec.kind == SchemeKind::KerpleLog;
    for (int l = m_config.layers - 1; l >= 0; --l) {
        checkCancelled();
        LayerActs& a = m_acts[l];
        const LayerParams& w = m_layerParams[l];
        const float* x = (l ? m_acts[l - 1].res3.data() : m_encoded.data()) + o * C; // (B, T, C) this layer's input
        // dres holds d(res3). MLP branch: res3 = res2 + proj(gelu(fc(ln2(res2)))).
        float* dfchGelu = zero(m_dfchGelu, o * F, nF);
        layers::matmulBackward(dfchGelu, G + w.fcprojw, G + w.fcprojb, dres, a.fchGelu.data() + o * F, P + w.fcprojw,
                               BT, F, C);
        float* dfch = zero(m_dfch, o * F, nF);
        layers::geluBackward(dfch, a.fch.data() + o * F, dfchGelu, nF);
        zero(m_dln, o * C, nC);
        layers::matmulBackward(dln, G + w.fcw, G + w.fcb, dfch, a.ln2.data() + o * C, P + w.fcw, BT, C, F);
        layers::layernormBackward(dres, G + w.ln2w, G + w.ln2b, dln, a.res2.data() + o * C, P + w.ln2w,
                                  a.ln2Mean.data() + o, a.ln2Rstd.data() + o, BT, C);
        // dres now holds d(res2). Attention branch: res2 = x + out(attention(qkv(ln1(x)))).
        float* datty = zero(m_datty, o * C, nC);
        layers::matmulBackward(datty, G + w.attprojw, G + w.attprojb, dres, a.atty.data() + o * C, P + w.attprojw,
                               BT, C, C);
        float* dy = zero(m_dy, o * C, nC); // (B, H, T, D)
        layers::mergeHeadsBackward(dy, datty, B, T, H, D);
        AttentionGradients& g = m_attnGrads[slice];
        attentionBackward(bias, dims, a.q.data() + o * C, a.k.data() + o * C, a.v.data() + o * C, a.attn[slice], dy, g);
        if (t5) {
            float* dt = at("scheme.t5_bias");
            for (size_t i = 0; i < g.dT5Values.size(); ++i)
                dt[i] += static_cast<float>(g.dT5Values[i]);
        }
        if (kerple) {
            float* d1 = at("scheme.kerple_r1");
            float* d2 = at("scheme.kerple_r2");
            for (size_t i = 0; i < g.dKerpleR1.size(); ++i)
                d1[i] += static_cast<float>(g.dKerpleR1[i]);
            for (size_t i = 0; i < g.dKerpleR2.size(); ++i)
                d2[i] += static_cast<float>(g.dKerpleR2[i]);
        }
        float* dqkv = zero(m_dqkv, o * 3 * C, 3 * nC);
        layers::splitHeadsBackward(dqkv, g.dq.data(), g.dk.data(), g.dv.data(), B, T, H, D);
        zero(m_dln, o * C, nC);
        layers::matmulBackward(dln, G + w.qkvw, G + w.qkvb, dqkv, a.ln1.data() + o * C, P + w.qkvw, BT, C, 3 * C);
        layers::layernormBackward(dres, G + w.ln1w, G + w.ln1b, dln, x, P + w.ln1w, a.ln1Mean.data() + o,
                                  a.ln1Rstd.data() + o, BT, C);
        // dres now holds d(x), the gradient entering the layer below.
    }
    layers::encoderBackward(at("wte.weight"), m_baseSpec.kind == SchemeKind::Learned ? at("wpe.weight") : nullptr, dres,
                            m_inputs.data() + o, B, T, C, embeddingScale());
}

// ---------------------------------------------------------------- optimisation

AdamW::AdamW(size_t parameterCount)
    : m_m(parameterCount, 0.0f), m_v(parameterCount, 0.0f)
{
}

void AdamW::restore(std::vector<float> m, std::vector<float> v, int updates)
{
    if (m.size() != m_m.size() || v.size() != m_v.size())
        throw InputError("optimizer state of " + std::to_string(m.size()) + " values does not fit a model of " +
                         std::to_string(m_m.size()) + " parameters");
    if (updates < 0)
        throw InputError("optimizer_updates = " + std::to_string(updates) + " must be >= 0");
    for (size_t i = 0; i < m.size(); ++i)
        if (!std::isfinite(m[i]) || !std::isfinite(v[i]) || v[i] < 0)
            throw InputError("optimizer state holds a non-finite or negative second moment at " + std::to_string(i));
    m_m = std::move(m);
    m_v = std::move(v);
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

// ---------------------------------------------------------------- evaluation

EvalMode evalModeFromName(std::string_view name)
{
    if (name == "nonoverlapping")
        return EvalMode::NonOverlapping;
    if (name == "sliding")
        return EvalMode::Sliding;
    throw InputError("mode '" + std::string(name) + "' is unknown; allowed: nonoverlapping, sliding");
}

std::vector<EvalPoint> evaluateModel(Model& model, const std::vector<uint8_t>& fullText, const EvalOptions& options)
{
    if (options.lengths.empty())
        throw InputError("lengths: at least one length is needed");
    for (int L : options.lengths)
        checkRange("length", L, 1, kMaxLength);
    if (options.stride < 0)
        throw InputError("stride = " + std::to_string(options.stride) + " must be >= 1 (or 0 for length/2)");
    size_t size = fullText.size();
    if (options.maxTokens)
        size = std::min(size, options.maxTokens + 1);
    if (size < 2)
        throw InputError("the evaluation text has " + std::to_string(fullText.size()) + " bytes; at least 2 are needed");
    const uint8_t* text = fullText.data();
    const size_t scoredTotal = size - 1; // every byte after the first is predicted once

    struct Window {
        size_t start;
        int length;    // tokens in the window
        int scoreFrom; // first scored position inside it
    };
    // Windows of every supported length, for progress accounting.
    std::vector<std::vector<Window>> plans;
    double totalWork = 0;
    for (int L : options.lengths) {
        std::vector<Window> windows;
        if (L <= model.maxLength()) {
            if (options.mode == EvalMode::NonOverlapping) {
                for (size_t s = 0; s < scoredTotal; s += L)
                    windows.push_back({s, static_cast<int>(std::min<size_t>(L, scoredTotal - s)), 0});
            } else {
                const int stride = options.stride ? options.stride : std::max(1, L / 2);
                if (stride > L)
                    throw InputError("stride = " + std::to_string(stride) + " exceeds the window length " +
                                     std::to_string(L) + "; allowed: [1, length]");
                size_t end = std::min<size_t>(L, scoredTotal); // tokens scored so far
                windows.push_back({0, static_cast<int>(end), 0});
                while (end < scoredTotal) {
                    const size_t newEnd = std::min(end + stride, scoredTotal);
                    const size_t start = newEnd > static_cast<size_t>(L) ? newEnd - L : 0;
                    windows.push_back({start, static_cast<int>(newEnd - start), static_cast<int>(end - start)});
                    end = newEnd;
                }
            }
        }
        for (const Window& w : windows)
            totalWork += static_cast<double>(w.length) * (1.0 + w.length / 512.0);
        plans.push_back(std::move(windows));
    }

    std::vector<EvalPoint> points;
    double doneWork = 0;
    std::vector<uint8_t> inputs, targets;
    for (size_t li = 0; li < options.lengths.size(); ++li) {
        const int L = options.lengths[li];
        EvalPoint point;
        point.length = L;
        if (L > model.maxLength()) {
            point.supported = false;
            point.note = "learned positions stop at the training context " + std::to_string(model.config().context);
            point.loss = point.perplexity = point.bitsPerByte = std::nan("");
            points.push_back(point);
            continue;
        }
        const std::vector<Window>& windows = plans[li];
        checkMemoryEstimate(model.activationBytes(1, L), "evaluating windows of " + std::to_string(L) + " bytes");
        // Batch windows of equal length; keep activations within ~512 MB.
        const double perWindow = model.activationBytes(1, L) + 1.0;
        const int maxBatch = static_cast<int>(std::clamp<double>(
            std::min(512.0 * 1024 * 1024 / perWindow, static_cast<double>(options.tokensPerBatch) / L), 1, 4096));
        double lossSum = 0;
        size_t scored = 0;
        size_t i = 0;
        while (i < windows.size()) {
            size_t j = i;
            while (j < windows.size() && static_cast<int>(j - i) < maxBatch && windows[j].length == windows[i].length)
                ++j;
            const int B = static_cast<int>(j - i), T = windows[i].length;
            inputs.resize(static_cast<size_t>(B) * T);
            targets.resize(inputs.size());
            for (int b = 0; b < B; ++b) {
                const Window& w = windows[i + b];
                std::copy(text + w.start, text + w.start + T, inputs.begin() + static_cast<size_t>(b) * T);
                std::copy(text + w.start + 1, text + w.start + T + 1, targets.begin() + static_cast<size_t>(b) * T);
            }
            model.forward(inputs.data(), targets.data(), B, T);
            const std::vector<float>& losses = model.tokenLosses();
            for (int b = 0; b < B; ++b) {
                const Window& w = windows[i + b];
                for (int t = w.scoreFrom; t < T; ++t)
                    lossSum += losses[static_cast<size_t>(b) * T + t];
                scored += T - w.scoreFrom;
                doneWork += static_cast<double>(T) * (1.0 + T / 512.0);
            }
            if (options.progress && !options.progress(totalWork > 0 ? doneWork / totalWork : 1.0))
                throw RunError("evaluation cancelled");
            i = j;
        }
        point.tokens = scored;
        point.loss = lossSum / static_cast<double>(scored);
        point.perplexity = std::exp(point.loss);
        point.bitsPerByte = point.loss / std::log(2.0);
        points.push_back(point);
    }
    return points;
}

// ---------------------------------------------------------------- checkpoints

namespace {
constexpr const char* kFormatName = "positionlab-model";
constexpr const char* kFormatVersion = "1";
} // namespace

std::string checkpointBytes(const Model& model, const CheckpointInfo& info)
{
    std::vector<TensorView> views;
    for (const ParameterTensor& t : model.tensors())
        views.push_back({t.name, t.shape, model.parameters().data() + t.offset});
    std::map<std::string, std::string> meta;
    meta["format"] = kFormatName;
    meta["format_version"] = kFormatVersion;
    meta["config"] = model.config().toJson().dump();
    meta["scheme"] = model.config().scheme;
    meta["step"] = std::to_string(info.step);
    meta["train_loss"] = exactText(info.trainLoss);
    if (info.optimizer) {
        const int64_t count = static_cast<int64_t>(model.parameterCount());
        views.push_back({"optimizer.exp_avg", {count}, info.optimizer->firstMoment().data()});
        views.push_back({"optimizer.exp_avg_sq", {count}, info.optimizer->secondMoment().data()});
        meta["optimizer_updates"] = std::to_string(info.optimizer->updates());
    }
    if (!info.corpus.empty())
        meta["corpus"] = info.corpus;
    if (!info.training.is_null())
        meta["training"] = info.training.dump();
    return serializeSafetensors(views, meta);
}

void saveCheckpoint(const Model& model, const CheckpointInfo& info, const std::string& path)
{
    writeFileAtomically(path, checkpointBytes(model, info));
}

LoadedCheckpoint checkpointFromSafetensors(const SafetensorsFile& file, const std::string& source)
{
    auto fail = [&](const std::string& what) { return InputError("checkpoint " + source + ": " + what); };
    auto metaValue = [&](const char* key) -> const std::string& {
        auto it = file.metadata.find(key);
        if (it == file.metadata.end())
            throw fail(std::string("__metadata__ has no '") + key + "' (not a PositionLab model checkpoint?)");
        return it->second;
    };
    if (metaValue("format") != kFormatName)
        throw fail("__metadata__ format is '" + metaValue("format") + "', expected '" + kFormatName + "'");
    if (metaValue("format_version") != kFormatVersion)
        throw fail("format_version " + metaValue("format_version") + " is not supported (this build reads " +
                   kFormatVersion + ")");
    nlohmann::json configJson;
    try {
        configJson = nlohmann::json::parse(metaValue("config"));
    } catch (const nlohmann::json::exception& e) {
        throw fail(std::string("the config in __metadata__ is not valid JSON: ") + e.what());
    }
    const ModelConfig config = ModelConfig::fromJson(configJson, "checkpoint " + source);
    if (const auto it = file.metadata.find("scheme"); it != file.metadata.end() && it->second != config.scheme)
        throw fail("__metadata__ scheme '" + it->second + "' disagrees with the config's '" + config.scheme + "'");
    // Every tensor the config implies must be in the file with its shape before a model of that size is allocated.
    const std::vector<ParameterTensor> layout = modelTensorLayout(config);
    for (const ParameterTensor& t : layout) {
        auto it = file.tensors.find(t.name);
        if (it == file.tensors.end())
            throw fail("tensor '" + t.name + "' is missing");
        if (it->second.shape != t.shape) {
            Tensor expected;
            expected.shape = t.shape;
            throw fail("tensor '" + t.name + "' has shape " + it->second.shapeText() + ", the config needs " +
                       expected.shapeText());
        }
        for (float v : it->second.data)
            if (!std::isfinite(v))
                throw fail("tensor '" + t.name + "' holds a non-finite value");
    }
    LoadedCheckpoint loaded;
    loaded.model = std::make_unique<Model>(config);
    Model& model = *loaded.model;
    for (const ParameterTensor& t : model.tensors()) {
        const Tensor& src = file.tensors.at(t.name);
        std::copy(src.data.begin(), src.data.end(), model.parameters().begin() + t.offset);
    }
    const bool hasOptimizer = file.tensors.count("optimizer.exp_avg") && file.tensors.count("optimizer.exp_avg_sq");
    for (const auto& [name, tensor] : file.tensors) {
        (void)tensor;
        bool known = hasOptimizer && (name == "optimizer.exp_avg" || name == "optimizer.exp_avg_sq");
        for (const ParameterTensor& t : model.tensors())
            known = known || t.name == name;
        if (!known)
            throw fail("unexpected tensor '" + name + "' for a " + config.scheme + " model of " +
                       std::to_string(config.layers) + " layers");
    }
    model.parametersChanged();
    try {
        validateSchemeSpec(model.schemeSpec());
    } catch (const InputError& e) {
        throw fail(e.what());
    }
    const std::string& stepText = metaValue("step");
    try {
        loaded.info.step = static_cast<int>(parseInteger(stepText, "step", 0, 2000000000));
    } catch (const InputError&) {
        throw fail("__metadata__ step '" + stepText + "' is not a non-negative integer");
    }
    if (auto it = file.metadata.find("train_loss"); it != file.metadata.end()) {
        try {
            loaded.info.trainLoss = parseNumber(it->second, "train_loss");
        } catch (const InputError&) {
            loaded.info.trainLoss = std::nan("");
        }
    }
    if (auto it = file.metadata.find("corpus"); it != file.metadata.end())
        loaded.info.corpus = it->second;
    if (auto it = file.metadata.find("training"); it != file.metadata.end())
        loaded.info.training = nlohmann::json::parse(it->second, nullptr, false);
    if (loaded.info.training.is_discarded())
        loaded.info.training = nullptr;
    if (hasOptimizer) {
        const auto it = file.metadata.find("optimizer_updates");
        int updates = 0;
        try {
            updates = static_cast<int>(parseInteger(it == file.metadata.end() ? "" : it->second, "optimizer_updates", 0,
                                                    2000000000));
            loaded.optimizer = std::make_unique<AdamW>(model.parameterCount());
            loaded.optimizer->restore(file.tensors.at("optimizer.exp_avg").data,
                                      file.tensors.at("optimizer.exp_avg_sq").data, updates);
        } catch (const InputError& e) {
            throw fail(e.what());
        }
    }
    return loaded;
}

LoadedCheckpoint loadCheckpoint(const std::string& path)
{
    return checkpointFromSafetensors(readSafetensors(path), path);
}

int modelLayer(const ModelConfig& config, std::optional<long long> requested)
{
    if (!requested)
        return config.layers - 1;
    if (*requested < 0 || *requested >= config.layers)
        throw InputError("layer = " + std::to_string(*requested) + " is out of range; allowed: integers in [0, " +
                         std::to_string(config.layers - 1) + "] (the model has " + std::to_string(config.layers) +
                         (config.layers == 1 ? " layer)" : " layers)"));
    return static_cast<int>(*requested);
}

double modelForwardWork(const ModelConfig& config, const std::vector<int>& lengths)
{
    const SchemeSpec spec = modelSchemeSpec(config);
    double tokens = 0;
    for (int n : lengths)
        tokens += n;
    return config.layers * attentionWork(spec, lengths, config.headDim()) +
           2.0 * static_cast<double>(modelParameterCount(config)) * tokens;
}

QkProvider modelQkProvider(Model& model, std::vector<uint8_t> text, int layer)
{
    checkRange("layer", layer, 0, model.config().layers - 1);
    if (text.empty())
        throw InputError("the text for the model's queries and keys is empty");
    return [&model, text = std::move(text), layer](int length) {
        if (length > model.maxLength())
            throw InputError("length " + std::to_string(length) + " is unsupported: the learned position table has " +
                             std::to_string(model.config().context) + " rows");
        std::vector<uint8_t> tokens(length); // (1, N) the text's first bytes, repeated when it is shorter
        for (int i = 0; i < length; ++i)
            tokens[i] = text[static_cast<size_t>(i) % text.size()];
        model.forward(tokens.data(), nullptr, 1, length);
        QkSample s;
        s.heads = model.config().heads;
        s.length = length;
        s.headDim = model.config().headDim();
        s.q.assign(model.layerQueries(layer).begin(), model.layerQueries(layer).end()); // (1, H, N, D)
        s.k.assign(model.layerKeys(layer).begin(), model.layerKeys(layer).end());
        return s;
    };
}

} // namespace plab
