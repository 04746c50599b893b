// The byte-level transformer: initialisation, layer-by-layer forward/backward over thread slices, q/k for views.
#include "model/model.h"

#include "model/corpus.h"
#include "base/errors.h"
#include "model/layers.h"
#include "base/random.h"
#include "schemes/fox.h"
#include "schemes/softmax_modifiers.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <exception>

namespace plab {

const ParameterTensor& Model::tensor(const std::string& name) const
{
    return m_tensors.at(m_tensorIndex.at(name));
}

Model::Model(const ModelConfig& config, ConfigCheck check) : m_config(config)
{
    if (check == ConfigCheck::Validate)
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
        auto offsetOf = [&](const char* n) { return tensor(p + n).offset; };
        m_layerParams.push_back({offsetOf("ln1.weight"), offsetOf("ln1.bias"), offsetOf("attn.qkv.weight"),
                                 offsetOf("attn.qkv.bias"), offsetOf("attn.out.weight"), offsetOf("attn.out.bias"),
                                 offsetOf("ln2.weight"), offsetOf("ln2.bias"), offsetOf("mlp.fc.weight"),
                                 offsetOf("mlp.fc.bias"), offsetOf("mlp.proj.weight"), offsetOf("mlp.proj.bias")});
        if (m_tensorIndex.count(p + "attn.forget.weight")) {
            m_layerParams.back().forget = true;
            m_layerParams.back().forgetw = offsetOf("attn.forget.weight");
            m_layerParams.back().forgetb = offsetOf("attn.forget.bias");
        }
    }

    // GPT-2 initialisation, one seeded stream in tensor order.
    Rng rng(config.seed);
    const double residualScale = 1.0 / std::sqrt(2.0 * L);
    for (const ParameterTensor& t : m_tensors) {
        float* w = m_params.data() + t.offset;
        const bool isLayerNormWeight = t.shape.size() == 1 && t.name.ends_with(".weight");
        if (t.name == "scheme.t5_bias") {
            const std::vector<double> prior =
                t5DefaultValues(H, false, m_baseSpec.intParam("num-buckets"), m_baseSpec.intParam("max-distance"));
            for (size_t i = 0; i < t.size; ++i)
                w[i] = static_cast<float>(prior[i]);
        } else if (t.name == "scheme.ssmax_scale" || t.name == "scheme.sink_logit") {
            // The priors: SSMax's 1 / ln(context) (its factor is then logn's at the context), the sink's 0.
            for (size_t h = 0; h < t.size; ++h)
                w[h] = static_cast<float>(t.name == "scheme.sink_logit" ? sinkLogit(m_baseSpec, int(h))
                                                                        : ssmaxScale(m_baseSpec, int(h)));
        } else if (t.name.starts_with("scheme.fire_")) {
            // The reference code's initialisation, the same prior the untrained bias view shows.
            const FireParams prior = fireInitialParams(H, m_baseSpec.param("c"));
            const std::vector<double> one = {t.name == "scheme.fire_c" ? prior.c : prior.lMultiplier};
            const std::vector<double>& values = t.name == "scheme.fire_w1"   ? prior.w1
                                                : t.name == "scheme.fire_b1" ? prior.b1
                                                : t.name == "scheme.fire_w2" ? prior.w2
                                                : t.name == "scheme.fire_b2" ? prior.b2
                                                                             : one;
            for (size_t i = 0; i < t.size; ++i)
                w[i] = static_cast<float>(values[i]);
        } else if (t.name.ends_with("attn.forget.bias")) {
            // FoX's reference code starts the gate's bias at 0 (f ≈ 1/2); gate-bias sets another start.
            std::fill(w, w + t.size, static_cast<float>(m_baseSpec.param("gate-bias")));
        } else if (t.name == "scheme.cope_pos_emb") {
            std::fill(w, w + t.size, 0.0f); // the reference code's initialisation: no position signal yet
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
    m_nopeBias.reset();
    m_typeBiases.clear();
    m_copeBiases.clear();
    parametersChanged();
}

namespace {

// The learned softmax modifiers of the model's tensors into `spec` (any layer's: they are shared).
void fillSoftmaxModifiers(const Model& model, SchemeSpec& spec)
{
    auto values = [&](const char* name) {
        const ParameterTensor& t = model.tensor(name);
        const float* p = model.parameters().data() + t.offset;
        return std::vector<double>(p, p + t.size);
    };
    if (spec.ssmax)
        spec.ssmaxScales = values("scheme.ssmax_scale");
    if (spec.sinkLogit)
        spec.sinkLogits = values("scheme.sink_logit");
}

} // namespace

SchemeSpec Model::schemeSpec() const
{
    SchemeSpec spec = m_baseSpec;
    fillSoftmaxModifiers(*this, spec);
    if (spec.kind == SchemeKind::T5) {
        const ParameterTensor& t = tensor("scheme.t5_bias");
        spec.t5Values.assign(m_params.begin() + t.offset, m_params.begin() + t.offset + t.size);
    } else if (spec.kind == SchemeKind::KerplePower || spec.kind == SchemeKind::KerpleLog) {
        const ParameterTensor& r1 = tensor("scheme.kerple_r1");
        const ParameterTensor& r2 = tensor("scheme.kerple_r2");
        spec.kerpleR1.assign(m_params.begin() + r1.offset, m_params.begin() + r1.offset + r1.size);
        spec.kerpleR2.assign(m_params.begin() + r2.offset, m_params.begin() + r2.offset + r2.size);
    } else if (spec.kind == SchemeKind::Fire) {
        auto values = [&](const char* name) {
            const ParameterTensor& t = tensor(name);
            return std::vector<double>(m_params.begin() + t.offset, m_params.begin() + t.offset + t.size);
        };
        spec.fire.w1 = values("scheme.fire_w1");
        spec.fire.b1 = values("scheme.fire_b1");
        spec.fire.w2 = values("scheme.fire_w2");
        spec.fire.b2 = values("scheme.fire_b2");
        spec.fire.c = values("scheme.fire_c")[0];
        spec.fire.lMultiplier = values("scheme.fire_l_multiplier")[0];
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
    return modelMaxLength(m_config);
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
        if (m_baseSpec.kind == SchemeKind::Fox) {
            a.forgetLogits.resize(BT * m_config.heads);
            a.logForget.resize(BT * m_config.heads);
        }
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
    const bool trainable = m_baseSpec.info().trainable || m_config.ssmax || m_config.sinkLogit;
    if (!m_bias || m_bias->maxLength() < T || (trainable && m_biasVersion != m_version)) {
        const int length = std::max({T, m_config.context, m_bias ? m_bias->maxLength() : 0});
        m_bias = std::make_unique<PositionBias>(schemeSpec(), length);
        if (m_config.nopeEvery > 0) {
            SchemeSpec nope = modelLayerSchemeSpec(m_config, m_config.nopeEvery - 1);
            fillSoftmaxModifiers(*this, nope);
            m_nopeBias = std::make_unique<PositionBias>(nope, length);
        }
        m_typeBiases.clear();
        for (int l = 0; !m_config.layerTypes.empty() && l < m_config.layers; ++l) {
            const size_t type = static_cast<size_t>(modelLayerType(m_config, l));
            m_typeBiases.resize(std::max(m_typeBiases.size(), type + 1));
            if (!m_typeBiases[type] && !(m_baseSpec.kind == SchemeKind::Cope && modelLayerUsesScheme(m_config, l)))
                m_typeBiases[type] = std::make_unique<PositionBias>(layerSchemeSpec(l), length);
        }
        m_copeBiases.clear();
        for (int l = 0; m_baseSpec.kind == SchemeKind::Cope && l < m_config.layers; ++l)
            m_copeBiases.push_back(modelLayerUsesScheme(m_config, l)
                                       ? std::make_unique<PositionBias>(layerSchemeSpec(l), length)
                                       : nullptr);
        m_biasVersion = m_version;
    }
    return *m_bias;
}

const PositionBias& Model::layerBias(int layer, const PositionBias& schemeBias) const
{
    if (!m_copeBiases.empty() && m_copeBiases[layer])
        return *m_copeBiases[layer];
    if (!m_config.layerTypes.empty()) {
        const size_t type = static_cast<size_t>(modelLayerType(m_config, layer));
        if (type < m_typeBiases.size() && m_typeBiases[type])
            return *m_typeBiases[type];
    }
    return m_nopeBias && !modelLayerUsesScheme(m_config, layer) ? *m_nopeBias : schemeBias;
}

SchemeSpec Model::layerSchemeSpec(int layer) const
{
    if (m_baseSpec.kind == SchemeKind::Cope && modelLayerUsesScheme(m_config, layer)) {
        SchemeSpec spec = schemeSpec();
        const ParameterTensor& t = tensor("scheme.cope_pos_emb"); // (layers, D, npos-max): this layer's slab
        const size_t slab = t.size / m_config.layers, begin = t.offset + slab * layer;
        spec.copeEmbeddings.assign(m_params.begin() + begin, m_params.begin() + begin + slab);
        return spec;
    }
    if (modelLayerUsesScheme(m_config, layer) || (m_config.scheme == "none" && !modelLayerHasFullSpec(m_config, layer))) {
        SchemeSpec spec = schemeSpec();
        applyModelLayerMask(m_config, layer, spec); // a sliding or chunked layer's mask on the learned values
        return spec;
    }
    SchemeSpec spec = modelLayerSchemeSpec(m_config, layer);
    fillSoftmaxModifiers(*this, spec);
    return spec;
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

float Model::forward(const uint8_t* inputs, const uint8_t* targets, int B, int T, const float* weights)
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
    const float* pos = absolutePositions(T); // caches filled before threads read them
    const PositionBias& bias = positionBias(T);
    planSlices(B, T);
    for (LayerActs& a : m_acts)
        a.attn.resize(m_slices.size());
    forEachSlice([&](int s) { forwardSlice(s, T, bias, pos); });
    if (!targets)
        return 0.0f;
    if (weights) {
        double sum = 0, weightSum = 0;
        for (int i = 0; i < BT; ++i) {
            if (!(weights[i] >= 0))
                throw InputError("forward: loss weight " + std::to_string(weights[i]) + " at token " +
                                 std::to_string(i) + "; allowed: numbers >= 0");
            sum += static_cast<double>(weights[i]) * m_losses[i];
            weightSum += weights[i];
        }
        if (weightSum <= 0)
            throw InputError("forward: every loss weight is 0; allowed: weights >= 0, at least one above 0");
        m_lossWeights.assign(weights, weights + BT);
        return static_cast<float>(sum / weightSum);
    }
    m_lossWeights.clear();
    double sum = 0;
    for (int i = 0; i < BT; ++i)
        sum += m_losses[i];
    return static_cast<float>(sum / BT);
}

void Model::forwardSlice(int slice, int T, const PositionBias& bias, const float* pos)
{
    const int C = m_config.dModel, F = m_config.dFf, H = m_config.heads, D = m_config.headDim(), V = m_config.vocab();
    const int b0 = m_slices[slice].b0, B = m_slices[slice].b1 - b0, BT = B * T;
    const size_t o =
        static_cast<size_t>(b0) * T;       // first token of the slice; every buffer is (B, T, ...) or (B, H, T, D)
    const float* params = m_params.data(); // + LayerParams offsets: one tensor's values
    const AttentionDims dims{B, H, T, D};

    layers::encoderForward(m_encoded.data() + o * C, m_inputs.data() + o, param("wte.weight"), pos, B, T, C,
                           embeddingScale());
    const float* x = m_encoded.data() + o * C; // (B, T, C) residual stream entering the layer
    for (int l = 0; l < m_config.layers; ++l) {
        checkCancelled();
        LayerActs& a = m_acts[l];
        const LayerParams& w = m_layerParams[l];
        float* ln1 = a.ln1.data() + o * C;     // (B, T, C)
        float* qkv = a.qkv.data() + o * 3 * C; // (B, T, 3C)
        float* q = a.q.data() + o * C;         // (B, H, T, D)
        float* k = a.k.data() + o * C;
        float* v = a.v.data() + o * C;
        float* atty = a.atty.data() + o * C;       // (B, T, C)
        float* res2 = a.res2.data() + o * C;       // (B, T, C)
        float* ln2 = a.ln2.data() + o * C;         // (B, T, C)
        float* fch = a.fch.data() + o * F;         // (B, T, F)
        float* fchGelu = a.fchGelu.data() + o * F; // (B, T, F)
        float* res3 = a.res3.data() + o * C;       // (B, T, C)
        layers::layernormForward(ln1, a.ln1Mean.data() + o, a.ln1Rstd.data() + o, x, params + w.ln1w, params + w.ln1b,
                                 BT, C);
        layers::matmulForward(qkv, ln1, params + w.qkvw, params + w.qkvb, BT, C, 3 * C);
        layers::splitHeads(q, k, v, qkv, B, T, H, D);
        AttentionDims layerDims = dims;
        // FoX: F per (sequence, head) from this input's gates.
        if (w.forget) {
            float* z = a.forgetLogits.data() + o * H; // (B, T, H)
            layers::matmulForward(z, ln1, params + w.forgetw, params + w.forgetb, BT, C, H);
            double* F = a.logForget.data() + o * H; // (B, H, T)
            for (int b = 0; b < B; ++b)
                for (int h = 0; h < H; ++h)
                    foxCumulativeLogGates(z + static_cast<size_t>(b) * T * H + h, T, H,
                                          F + (static_cast<size_t>(b) * H + h) * T);
            layerDims.logForget = F;
        }
        attentionForward(layerBias(l, bias), layerDims, q, k, v, a.attn[slice]); // reuses the step's buffers
        layers::mergeHeads(atty, a.attn[slice].out.data(), B, T, H, D);
        // res2 = x + atty W^T + b, the residual add fused into the GEMM.
        layers::matmulForward(res2, atty, params + w.attprojw, params + w.attprojb, BT, C, C, x);
        layers::layernormForward(ln2, a.ln2Mean.data() + o, a.ln2Rstd.data() + o, res2, params + w.ln2w,
                                 params + w.ln2b, BT, C);
        layers::matmulForward(fch, ln2, params + w.fcw, params + w.fcb, BT, C, F);
        layers::geluForward(fchGelu, fch, static_cast<size_t>(BT) * F);
        layers::matmulForward(res3, fchGelu, params + w.fcprojw, params + w.fcprojb, BT, F, C, res2);
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
    if (m_baseSpec.kind == SchemeKind::Fox)
        m_dforget.resize(static_cast<size_t>(BT) * m_config.heads);
    m_dfchGelu.resize(BT * F);
    m_dfch.resize(BT * F);
    if (m_lossWeights.empty()) {
        m_dlosses.assign(BT, 1.0f / BT);
    } else { // d(sum(w l) / sum(w)) / d(l_i) = w_i / sum(w)
        double weightSum = 0;
        for (float w : m_lossWeights)
            weightSum += w;
        m_dlosses.resize(BT);
        for (int i = 0; i < BT; ++i)
            m_dlosses[i] = static_cast<float>(m_lossWeights[i] / weightSum);
    }
    // Slice 0 accumulates into gradients(); the others into their own buffers, summed afterwards.
    const int parts = static_cast<int>(m_slices.size());
    m_sliceGrads.resize(parts - 1);
    m_attnGrads.resize(parts);
    forEachSlice([&](int s) {
        float* grads = m_grads.data();
        if (s > 0) {
            m_sliceGrads[s - 1].assign(m_grads.size(), 0.0f);
            grads = m_sliceGrads[s - 1].data();
        }
        backwardSlice(s, bias, grads);
    });
    if (parts > 1) {
        const long n = static_cast<long>(m_grads.size());
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; ++i)
            for (int s = 1; s < parts; ++s)
                m_grads[i] += m_sliceGrads[s - 1][i];
    }
}

namespace {

// Adds layer `layer`'s gradients of the scheme's own parameters (T5 buckets, KERPLE, SSMax, sinks, FIRE, CoPE) to their
// tensors; gradOf(name) is a tensor's part of the gradients.
template <typename GradOf>
void addSchemeGradients(SchemeKind kind, int layer, const AttentionGradients& g, const GradOf& gradOf)
{
    auto addTo = [&](const char* name, const std::vector<double>& values) {
        float* d = gradOf(name);
        for (size_t i = 0; i < values.size(); ++i)
            d[i] += static_cast<float>(values[i]);
    };
    if (kind == SchemeKind::T5)
        addTo("scheme.t5_bias", g.dT5Values);
    if (kind == SchemeKind::KerplePower || kind == SchemeKind::KerpleLog) {
        addTo("scheme.kerple_r1", g.dKerpleR1);
        addTo("scheme.kerple_r2", g.dKerpleR2);
    }
    for (auto [name, values] :
         {std::pair{"scheme.ssmax_scale", &g.dSsmaxScales}, std::pair{"scheme.sink_logit", &g.dSinkLogits}})
        if (!values->empty())
            addTo(name, *values);
    if (!g.dFire.empty()) {
        addTo("scheme.fire_w1", g.dFire.w1);
        addTo("scheme.fire_b1", g.dFire.b1);
        addTo("scheme.fire_w2", g.dFire.w2);
        addTo("scheme.fire_b2", g.dFire.b2);
        addTo("scheme.fire_c", {g.dFire.c});
        addTo("scheme.fire_l_multiplier", {g.dFire.lMultiplier});
    }
    if (!g.dCopeEmbeddings.empty()) { // this layer's slab of (layers, D, npos-max)
        float* d = gradOf("scheme.cope_pos_emb") + layer * g.dCopeEmbeddings.size();
        for (size_t i = 0; i < g.dCopeEmbeddings.size(); ++i)
            d[i] += static_cast<float>(g.dCopeEmbeddings[i]);
    }
}

} // namespace

void Model::backwardSlice(int slice, const PositionBias& bias, float* grads)
{
    const int T = m_T;
    const int C = m_config.dModel, F = m_config.dFf, H = m_config.heads, D = m_config.headDim(), V = m_config.vocab();
    const int b0 = m_slices[slice].b0, B = m_slices[slice].b1 - b0, BT = B * T;
    const size_t o = static_cast<size_t>(b0) * T;
    const float* params = m_params.data();
    const AttentionDims dims{B, H, T, D};
    auto zero = [](layers::FloatBuffer& v, size_t offset, size_t n) -> float* {
        std::fill(v.begin() + static_cast<std::ptrdiff_t>(offset), v.begin() + static_cast<std::ptrdiff_t>(offset + n),
                  0.0f);
        return v.data() + offset;
    };
    auto gradOf = [&](const char* name) { return grads + tensor(name).offset; }; // a tensor's part of `grads`
    // This slice's part of every scratch gradient (backward functions accumulate, so each is zeroed before use).
    float* dlogits = zero(m_dlogits, o * V, static_cast<size_t>(BT) * V); // (B, T, V)
    float* dres = zero(m_dres, o * C, static_cast<size_t>(BT) * C);       // (B, T, C) gradient of the residual stream
    float* dln = m_dln.data() + o * C;                                    // (B, T, C) gradient of a LayerNorm output
    const size_t nC = static_cast<size_t>(BT) * C, nF = static_cast<size_t>(BT) * F;

    layers::crossEntropyBackward(dlogits, m_probs.data() + o * V, m_targets.data() + o, m_dlosses.data() + o, BT, V);
    zero(m_dln, o * C, nC);
    layers::matmulBackward(dln, gradOf("wte.weight"), nullptr, dlogits, m_lnf.data() + o * C, param("wte.weight"), BT,
                           C, V);
    const float* xLast = (m_config.layers ? m_acts.back().res3.data() : m_encoded.data()) + o * C;
    layers::layernormBackward(dres, gradOf("ln_f.weight"), gradOf("ln_f.bias"), dln, xLast, param("ln_f.weight"),
                              m_lnfMean.data() + o, m_lnfRstd.data() + o, BT, C);

    for (int l = m_config.layers - 1; l >= 0; --l) {
        checkCancelled();
        LayerActs& a = m_acts[l];
        const LayerParams& w = m_layerParams[l];
        const float* x = (l ? m_acts[l - 1].res3.data() : m_encoded.data()) + o * C; // (B, T, C) this layer's input
        // dres holds d(res3). MLP branch: res3 = res2 + proj(gelu(fc(ln2(res2)))).
        float* dfchGelu = zero(m_dfchGelu, o * F, nF);
        layers::matmulBackward(dfchGelu, grads + w.fcprojw, grads + w.fcprojb, dres, a.fchGelu.data() + o * F,
                               params + w.fcprojw, BT, F, C);
        float* dfch = zero(m_dfch, o * F, nF);
        layers::geluBackward(dfch, a.fch.data() + o * F, dfchGelu, nF);
        zero(m_dln, o * C, nC);
        layers::matmulBackward(dln, grads + w.fcw, grads + w.fcb, dfch, a.ln2.data() + o * C, params + w.fcw, BT, C, F);
        layers::layernormBackward(dres, grads + w.ln2w, grads + w.ln2b, dln, a.res2.data() + o * C, params + w.ln2w,
                                  a.ln2Mean.data() + o, a.ln2Rstd.data() + o, BT, C);
        // dres now holds d(res2). Attention branch: res2 = x + out(attention(qkv(ln1(x)))).
        float* datty = zero(m_datty, o * C, nC);
        layers::matmulBackward(datty, grads + w.attprojw, grads + w.attprojb, dres, a.atty.data() + o * C,
                               params + w.attprojw, BT, C, C);
        float* dy = zero(m_dy, o * C, nC); // (B, H, T, D)
        layers::mergeHeadsBackward(dy, datty, B, T, H, D);
        AttentionGradients& g = m_attnGrads[slice];
        AttentionDims layerDims = dims;
        layerDims.logForget = w.forget ? a.logForget.data() + o * H : nullptr;
        attentionBackward(layerBias(l, bias), layerDims, a.q.data() + o * C, a.k.data() + o * C, a.v.data() + o * C,
                          a.attn[slice], dy, g);
        addSchemeGradients(m_baseSpec.kind, l, g, gradOf);
        float* dqkv = zero(m_dqkv, o * 3 * C, 3 * nC);
        layers::splitHeadsBackward(dqkv, g.dq.data(), g.dk.data(), g.dv.data(), B, T, H, D);
        zero(m_dln, o * C, nC);
        layers::matmulBackward(dln, grads + w.qkvw, grads + w.qkvb, dqkv, a.ln1.data() + o * C, params + w.qkvw, BT, C,
                               3 * C);
        if (w.forget) { // FoX: dL/dF back through the cumulative sum and ln σ to the gate logits, then its linear map
            const float* z = a.forgetLogits.data() + o * H;
            float* dz = m_dforget.data() + o * H; // (B, T, H), every element written
            for (int b = 0; b < B; ++b)
                for (int h = 0; h < H; ++h)
                    foxGateLogitGradients(z + static_cast<size_t>(b) * T * H + h,
                                          g.dLogForget.data() + (static_cast<size_t>(b) * H + h) * T, T, H,
                                          dz + static_cast<size_t>(b) * T * H + h);
            layers::matmulBackward(dln, grads + w.forgetw, grads + w.forgetb, dz, a.ln1.data() + o * C,
                                   params + w.forgetw, BT, C, H);
        }
        layers::layernormBackward(dres, grads + w.ln1w, grads + w.ln1b, dln, x, params + w.ln1w, a.ln1Mean.data() + o,
                                  a.ln1Rstd.data() + o, BT, C);
        // dres now holds d(x), the gradient entering the layer below.
    }
    layers::encoderBackward(gradOf("wte.weight"),
                            m_baseSpec.kind == SchemeKind::Learned ? gradOf("wpe.weight") : nullptr, dres,
                            m_inputs.data() + o, B, T, C, embeddingScale());
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
    double attention = 0; // per layer: a sliding or chunked layer's band costs N W, not N^2
    for (int l = 0; l < config.layers; ++l)
        attention += config.layerTypes.empty() ? attentionWork(spec, lengths, config.headDim())
                                               : attentionWork(modelLayerSchemeSpec(config, l), lengths,
                                                               config.headDim());
    return attention + 2.0 * static_cast<double>(modelParameterCount(config)) * tokens;
}

QkProvider modelQkProvider(Model& model, std::vector<uint8_t> text, int layer)
{
    checkIntegerRange("layer", layer, 0, model.config().layers - 1);
    if (text.empty())
        throw InputError("the text for the model's queries and keys is empty");
    return [&model, text = std::move(text), layer](int length) {
        if (length > model.maxLength())
            throw InputError("length " + std::to_string(length) + " is unsupported: the learned position table has " +
                             std::to_string(model.config().context) + " rows");
        const std::vector<uint8_t> tokens = repeatedText(text, length); // (1, N)
        model.forward(tokens.data(), nullptr, 1, length);
        QkSample s;
        s.heads = model.config().heads;
        s.length = length;
        s.headDim = model.config().headDim();
        s.q.assign(model.layerQueries(layer).begin(), model.layerQueries(layer).end()); // (1, H, N, D)
        s.k.assign(model.layerKeys(layer).begin(), model.layerKeys(layer).end());
        // FoX: this text's gates (1, H, N) from the same forward, so the curve scores F_m - F_n as the model does.
        s.logForget = model.layerLogForget(layer); // empty for other schemes (fox has no NoPE schedule)
        return s;
    };
}

ModelEntropyCurve modelEntropyCurve(Model& model, std::vector<uint8_t> text, int layer,
                                    const std::vector<int>& lengths, const EntropyProgress& progress)
{
    ModelEntropyCurve curve;
    const QkProvider provider = modelQkProvider(model, std::move(text), layer); // checks the layer first
    curve.spec = model.layerSchemeSpec(layer);
    curve.points = entropyCurve(curve.spec, lengths, provider, progress);
    return curve;
}

} // namespace plab
