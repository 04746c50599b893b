// Loading each family's tensors into one block layout (product weights in the run's precision), and the forward:
// oneDNN's products (hf_products), the lab's attention kernel, the losses per block of rows.
#include "hf/hf_model.h"

#include "attention/attention.h"
#include "attention/rotation.h"
#include "attention/rotary_cache.h"
#include "attention/simd.h"
#include "base/errors.h"
#include "base/limits.h"
#include "hf/hf_family.h"
#include "hf/hf_forward_state.h"
#include "hf/hf_weights.h"
#include "schemes/position_bias.h"
#include "schemes/rotary_scaling.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numbers>

namespace plab {

namespace {

using Vector = Eigen::VectorXf;

// y = x W^T + b with W stored as Hugging Face's nn.Linear does, (out, in).
struct Linear {
    HfWeightMatrix w;
    Vector b; // empty: no bias
    void apply(const HfMatrix& x, HfMatrix& y) const { hfLinear(x, w, b, y); }
};

struct Norm {
    Vector w, b; // b empty for RMSNorm
};

HfMatrix toMatrix(std::vector<float> data, int64_t rows, int64_t cols)
{
    return Eigen::Map<HfMatrix>(data.data(), rows, cols);
}

Vector toVector(const std::vector<float>& data)
{
    return Eigen::Map<const Vector>(data.data(), static_cast<Eigen::Index>(data.size()));
}

// x <- LayerNorm or RMSNorm of each row, statistics accumulated in double.
void normalise(HfMatrix& x, const Norm& n, bool rms, double eps)
{
    const Eigen::Index cols = x.cols();
#pragma omp parallel for schedule(static) if (x.rows() > 1) // one decoding row: no team to fork
    for (Eigen::Index r = 0; r < x.rows(); ++r) {
        float* row = x.row(r).data();
        double mean = 0, square = 0;
        for (Eigen::Index c = 0; c < cols; ++c)
            mean += row[c];
        mean = rms ? 0 : mean / cols;
        for (Eigen::Index c = 0; c < cols; ++c)
            square += (row[c] - mean) * (row[c] - mean);
        const double inv = 1.0 / std::sqrt(square / cols + eps);
        for (Eigen::Index c = 0; c < cols; ++c) {
            const float y = static_cast<float>((row[c] - mean) * inv) * n.w[c];
            row[c] = n.b.size() ? y + n.b[c] : y;
        }
    }
}

// x <- act(x) elementwise (silu, gelu with erf, or gelu_new / bloom_gelu: the tanh approximation); with `gate`,
// x <- x * act(gate) (SwiGLU's up * silu(gate)).
void activate(HfMatrix& x, const std::string& act, const HfMatrix* gate = nullptr)
{
    const int kind = act == "silu" ? 0 : act == "gelu" ? 1 : 2;
    const float tanhScale = static_cast<float>(std::sqrt(2.0 / std::numbers::pi));
    const float erfScale = static_cast<float>(1.0 / std::numbers::sqrt2);
    float* data = x.data();
    const float* g = gate ? gate->data() : nullptr;
    const Eigen::Index n = x.size();
    if (kind == 0) { // SiLU through Eigen's vectorised exp: libm's scalar expf was 4% of a SmolLM2 prefill
        const Eigen::Index cols = x.cols();
#pragma omp parallel for schedule(static) if (x.rows() > 1)
        for (Eigen::Index r = 0; r < x.rows(); ++r) {
            Eigen::Map<Eigen::ArrayXf> row(data + r * cols, cols);
            const Eigen::Map<const Eigen::ArrayXf> z(g ? g + r * cols : data + r * cols, cols);
            if (g)
                row *= z / (1.0f + (-z).exp());
            else
                row = z / (1.0f + (-z).exp());
        }
        return;
    }
#pragma omp parallel for schedule(static) if (n > 65536)
    for (Eigen::Index i = 0; i < n; ++i) {
        const float z = g ? g[i] : data[i];
        float y;
        if (kind == 0)
            y = z / (1.0f + std::exp(-z));
        else if (kind == 1)
            y = 0.5f * z * (1.0f + std::erf(z * erfScale));
        else
            y = 0.5f * z * (1.0f + std::tanh(tanhScale * (z + 0.044715f * z * z * z)));
        data[i] = g ? data[i] * y : y;
    }
}

} // namespace

struct HfModel::Layer {
    // norm1 before attention, norm2 before the MLP, postAttn / postMlp on the branch outputs (gemma, olmo2): each
    // empty when the family has none there.
    Norm norm1, norm2, postAttn, postMlp, qNorm, kNorm;
    Linear q, k, v, o, gate, up, down; // gate empty outside SwiGLU; up = fc, down = proj there
    bool rope = true;
    HfLayerType type = HfLayerType::Full;
};

namespace {

// Everything a family's loader needs: the weights, the config and the shapes that follow from it.
struct Loader {
    const HfWeights& w;
    const HfConfig& c;
    HfPrecision precision;

    HfMatrix matrix(const std::string& name, int64_t rows, int64_t cols) const
    {
        return toMatrix(w.take(name, {rows, cols}), rows, cols);
    }
    Vector vector(const std::string& name, int64_t n) const { return toVector(w.take(name, {n})); }
    Norm norm(const std::string& name, int64_t n, bool withBias) const
    {
        Norm out;
        out.w = vector(name + ".weight", n);
        if (withBias)
            out.b = vector(name + ".bias", n);
        return out;
    }
    // Under BFloat16 a tensor stored as BF16 is read in place from the mapping (HfModel keeps it open): no copy.
    HfWeightMatrix weight(const std::string& name, int64_t rows, int64_t cols) const
    {
        if (precision == HfPrecision::BFloat16)
            if (const uint16_t* mapped = w.mappedBf16(name, {rows, cols}))
                return HfWeightMatrix(mapped, rows, cols);
        return HfWeightMatrix(matrix(name, rows, cols), precision);
    }
    Linear linear(const std::string& name, int64_t out, int64_t in, bool withBias) const
    {
        Linear l;
        l.w = weight(name + ".weight", out, in);
        if (withBias)
            l.b = vector(name + ".bias", out);
        return l;
    }

    // gpt_neox and bloom fuse q, k and v per head: output row h*3D + j*D + d is part j (q, k, v), head h, dim d.
    void splitPerHead(const std::string& name, HfModel::Layer& layer) const
    {
        const int H = c.heads, D = c.headDim, C = c.hidden;
        const HfMatrix fused = matrix(name + ".weight", 3LL * C, C);
        const Vector bias = c.qkvBias ? vector(name + ".bias", 3LL * C) : Vector();
        Linear* parts[3] = {&layer.q, &layer.k, &layer.v};
        for (int j = 0; j < 3; ++j) {
            HfMatrix part(C, C);
            if (bias.size())
                parts[j]->b.resize(C);
            for (int h = 0; h < H; ++h)
                for (int d = 0; d < D; ++d) {
                    part.row(h * D + d) = fused.row(h * 3 * D + j * D + d);
                    if (bias.size())
                        parts[j]->b[h * D + d] = bias[h * 3 * D + j * D + d];
                }
            parts[j]->w = HfWeightMatrix(std::move(part), precision);
        }
    }

    // gpt2's Conv1D stores weights [in, out]: transposed once here into nn.Linear's (out, in).
    HfMatrix conv1dWeight(const std::string& name, int64_t in, int64_t out) const
    {
        return matrix(name + ".weight", in, out).transpose();
    }
    Linear conv1d(const std::string& name, int64_t in, int64_t out) const
    {
        return {HfWeightMatrix(conv1dWeight(name, in, out), precision), vector(name + ".bias", out)};
    }
};

} // namespace

double hfForwardBytes(const HfConfig& config, int length, HfPrecision precision, HfForwardOutput output)
{
    // One layer's float32 activations (hidden states, q/k/v, attention output, MLP), the logit rows held at once, and
    // under BF16 the rounded copy of a product's input (2 bytes, counted as half a float).
    const double T = length;
    const double logitRows = output == HfForwardOutput::Logits   ? T
                             : output == HfForwardOutput::Losses ? std::min(T, 1.0 * kHfLossRows)
                                                                 : 0;
    double floats = T * (6.0 * config.hidden + 4.0 * config.heads * config.headDim + 3.0 * config.intermediate) +
                    logitRows * config.vocab;
    if (precision == HfPrecision::BFloat16)
        floats += 0.5 * T * std::max({config.hidden, config.intermediate, config.heads * config.headDim});
    return 4.0 * floats;
}

double hfModelMemoryBytes(const HfConfig& config, HfPrecision precision)
{
    // The weights in the products' precision (norms and biases, a few thousandths of the parameters, counted alike),
    // plus one forward with its logits at a 2048-token window, plus a margin for the program itself.
    const int T = std::min(config.context, 2048);
    return hfWeightBytes(precision) * config.parameterCount() +
           hfForwardBytes(config, T, precision, HfForwardOutput::Logits) + 64.0 * (1 << 20);
}

namespace {

// A loaded norm as the plain vectors the forward keeps (the bias left empty where the norm has none: RMSNorm).
void keepNorm(const Norm& n, std::vector<float>& w, std::vector<float>& b)
{
    w.assign(n.w.data(), n.w.data() + n.w.size());
    if (n.b.size())
        b.assign(n.b.data(), n.b.data() + n.b.size());
}

} // namespace

// gpt2: Conv1D [in, out] weights, q/k/v fused in c_attn, learned positions (wpe).
void HfModel::loadGpt2(const HfWeights& weights)
{
    const HfConfig& c = m_config;
    const Loader load{weights, c, m_precision};
    const int C = c.hidden, F = c.intermediate, V = c.vocab;
    const std::string p = weights.has("wte.weight") ? "" : "transformer.";
    m_embed = load.weight(p + "wte.weight", V, C);
    m_positions = load.matrix(p + "wpe.weight", c.context, C);
    for (int i = 0; i < c.layers; ++i) {
        Layer& l = *m_layers[i];
        const std::string b = p + "h." + std::to_string(i) + ".";
        l.norm1 = load.norm(b + "ln_1", C, true);
        l.norm2 = load.norm(b + "ln_2", C, true);
        const HfMatrix qkv = load.conv1dWeight(b + "attn.c_attn", C, 3LL * C);
        const Vector qkvBias = load.vector(b + "attn.c_attn.bias", 3LL * C);
        Linear* parts[3] = {&l.q, &l.k, &l.v};
        for (int j = 0; j < 3; ++j) {
            parts[j]->w = HfWeightMatrix(qkv.middleRows(static_cast<Eigen::Index>(j) * C, C), m_precision);
            parts[j]->b = qkvBias.segment(static_cast<Eigen::Index>(j) * C, C);
        }
        l.o = load.conv1d(b + "attn.c_proj", C, C);
        l.up = load.conv1d(b + "mlp.c_fc", C, F);
        l.down = load.conv1d(b + "mlp.c_proj", F, C);
    }
    keepNorm(load.norm(p + "ln_f", C, true), m_finalNormW, m_finalNormB);
}

// bloom: fused per-head q/k/v, a LayerNorm after the embeddings.
void HfModel::loadBloom(const HfWeights& weights)
{
    const HfConfig& c = m_config;
    const Loader load{weights, c, m_precision};
    const int C = c.hidden, F = c.intermediate, V = c.vocab;
    const std::string p = weights.has("transformer.word_embeddings.weight") ? "transformer." : "";
    m_embed = load.weight(p + "word_embeddings.weight", V, C);
    keepNorm(load.norm(p + "word_embeddings_layernorm", C, true), m_embedNormW, m_embedNormB);
    for (int i = 0; i < c.layers; ++i) {
        Layer& l = *m_layers[i];
        const std::string b = p + "h." + std::to_string(i) + ".";
        l.norm1 = load.norm(b + "input_layernorm", C, true);
        l.norm2 = load.norm(b + "post_attention_layernorm", C, true);
        load.splitPerHead(b + "self_attention.query_key_value", l);
        l.o = load.linear(b + "self_attention.dense", C, C, true);
        l.up = load.linear(b + "mlp.dense_h_to_4h", F, C, true);
        l.down = load.linear(b + "mlp.dense_4h_to_h", C, F, true);
    }
    keepNorm(load.norm(p + "ln_f", C, true), m_finalNormW, m_finalNormB);
}

// gpt_neox: fused per-head q/k/v, an untied head embed_out unless tied.
void HfModel::loadNeox(const HfWeights& weights)
{
    const HfConfig& c = m_config;
    const Loader load{weights, c, m_precision};
    const int C = c.hidden, F = c.intermediate, V = c.vocab;
    const std::string p = "gpt_neox.";
    m_embed = load.weight(p + "embed_in.weight", V, C);
    for (int i = 0; i < c.layers; ++i) {
        Layer& l = *m_layers[i];
        const std::string b = p + "layers." + std::to_string(i) + ".";
        l.norm1 = load.norm(b + "input_layernorm", C, true);
        l.norm2 = load.norm(b + "post_attention_layernorm", C, true);
        load.splitPerHead(b + "attention.query_key_value", l);
        l.o = load.linear(b + "attention.dense", C, C, c.outputBias);
        l.up = load.linear(b + "mlp.dense_h_to_4h", F, C, true);
        l.down = load.linear(b + "mlp.dense_4h_to_h", C, F, true);
    }
    keepNorm(load.norm(p + "final_layer_norm", C, true), m_finalNormW, m_finalNormB);
    if (!c.tiedHead)
        m_head = load.weight("embed_out.weight", V, C);
}

HfModel::~HfModel() = default;

HfModel::HfModel(const std::string& folder, HfPrecision precision)
    : m_config(readHfConfig(folder)), m_precision(precision)
{
    const HfConfig& c = m_config;
    checkHfPrecisionSupported(precision);
    checkFitsInMemory(hfModelMemoryBytes(c, precision),
                      "model " + folder + " (" + c.modelType + ", about " +
                          std::to_string(static_cast<long long>(c.parameterCount() / 1e6)) + // at most 2^50: checkSizes
                          " M parameters, loaded with " +
                          (precision == HfPrecision::BFloat16 ? "BF16 weights)" : "float32 weights)"));
    m_weights = std::make_unique<HfWeights>(folder);
    if (c.notRead.empty()) // a family that names what it leaves unread (gemma3's vision tower) opens without it
        m_weights->refuseOutOfScopeTensors();
    load(*m_weights);
    m_parameters = c.parameterCount();
    m_skipped = m_weights->unreadNames();
    if (precision == HfPrecision::Float32)
        m_weights.reset(); // every tensor was converted: the mapping is no longer read
}

HfModel::HfModel(HfConfig config) : m_config(std::move(config)) {}

std::vector<std::string> HfModel::unreadTensors(const std::string& folder)
{
    // The family's own loader, run over a miniature of the config (the same family, flags and layers, every size 1 or
    // 2) against the headers alone: the names it takes are the names a real load takes, at a few bytes per tensor.
    HfConfig tiny = readHfConfig(folder);
    tiny.heads = tiny.heads / tiny.kvHeads; // keeps heads a multiple of kvHeads with kvHeads = 1
    tiny.kvHeads = 1;
    tiny.headDim = 2;
    tiny.hidden = tiny.heads * tiny.headDim; // the fused layouts (gpt2, bloom, gpt_neox) need hidden = heads x D
    tiny.intermediate = 2;
    tiny.vocab = 2;
    tiny.context = 2;
    HfModel probe(std::move(tiny));
    const HfWeights weights(folder, HfWeights::Use::NamesOnly);
    if (probe.m_config.notRead.empty())
        weights.refuseOutOfScopeTensors();
    probe.load(weights);
    return weights.unreadNames();
}

void HfModel::load(const HfWeights& weights)
{
    const HfConfig& c = m_config;
    for (int i = 0; i < c.layers; ++i)
        m_layers.push_back(std::make_unique<Layer>());
    switch (c.family) {
    case HfFamily::Gpt2:
        loadGpt2(weights);
        break;
    case HfFamily::Bloom:
        loadBloom(weights);
        break;
    case HfFamily::GptNeox:
        loadNeox(weights);
        break;
    case HfFamily::Llama:
        loadDecoder(weights);
        break;
    }
}

namespace {

// A decoder family's norm: LayerNorm with or without bias, RMSNorm, or Gemma's (1 + w) folded into the weights once.
Norm decoderNorm(const Loader& load, const HfConfig& c, const std::string& name, int64_t n)
{
    Norm out = load.norm(name, n, c.norm == HfNormKind::LayerNorm);
    if (c.norm == HfNormKind::RmsNormPlusOne)
        out.w.array() += 1.0f;
    return out;
}

// A fused product's rows [begin, begin + rows) as its own weight (phi3's qkv_proj and gate_up_proj).
Linear rowsOf(const HfMatrix& fused, int64_t begin, int64_t rows, HfPrecision precision)
{
    return {HfWeightMatrix(HfMatrix(fused.middleRows(begin, rows)), precision), Vector()};
}

// Where a decoder's tensors sit: model.* (text models), or a gemma3 folder's language model (transformers v4's
// language_model.model.*, v5's model.language_model.*); its vision tower and projector are not read.
std::string decoderPrefix(const HfWeights& w)
{
    for (const char* prefix : {"model.", "language_model.model.", "model.language_model."})
        if (w.has(std::string(prefix) + "embed_tokens.weight"))
            return prefix;
    return "model.";
}

} // namespace

void HfModel::loadDecoder(const HfWeights& weights)
{
    const HfConfig& c = m_config;
    const Loader load{weights, c, m_precision};
    const int C = c.hidden, H = c.heads, K = c.kvHeads, D = c.headDim, F = c.intermediate, V = c.vocab;
    const std::string p = decoderPrefix(weights);
    m_embed = load.weight(p + "embed_tokens.weight", V, C);
    for (int i = 0; i < c.layers; ++i) {
        Layer& l = *m_layers[i];
        const std::string b = p + "layers." + std::to_string(i) + ".";
        if (c.normPlace != HfNormPlace::After)
            l.norm1 = decoderNorm(load, c, b + "input_layernorm", C);
        if (c.normPlace == HfNormPlace::Before && !c.sharedNorm)
            l.norm2 = decoderNorm(load, c, b + "post_attention_layernorm", C);
        if (c.normPlace != HfNormPlace::Before) {
            l.postAttn = decoderNorm(load, c, b + "post_attention_layernorm", C);
            l.postMlp = decoderNorm(load, c, b + "post_feedforward_layernorm", C);
        }
        if (c.normPlace == HfNormPlace::BeforeAndAfter)
            l.norm2 = decoderNorm(load, c, b + "pre_feedforward_layernorm", C);
        if (c.fusedQkv) {
            const HfMatrix qkv = load.matrix(b + "self_attn.qkv_proj.weight", 1LL * (H + 2 * K) * D, C);
            l.q = rowsOf(qkv, 0, 1LL * H * D, m_precision);
            l.k = rowsOf(qkv, 1LL * H * D, 1LL * K * D, m_precision);
            l.v = rowsOf(qkv, 1LL * (H + K) * D, 1LL * K * D, m_precision);
        } else {
            l.q = load.linear(b + "self_attn.q_proj", 1LL * H * D, C, c.qkvBias);
            l.k = load.linear(b + "self_attn.k_proj", 1LL * K * D, C, c.qkvBias);
            l.v = load.linear(b + "self_attn.v_proj", 1LL * K * D, C, c.qkvBias);
        }
        l.o = load.linear(b + "self_attn.o_proj", C, 1LL * H * D, c.outputBias);
        if (c.qkNorm != HfQkNorm::None) {
            const bool whole = c.qkNorm == HfQkNorm::WholeProjection;
            l.qNorm = decoderNorm(load, c, b + "self_attn.q_norm", whole ? 1LL * H * D : D);
            l.kNorm = decoderNorm(load, c, b + "self_attn.k_norm", whole ? 1LL * K * D : D);
        }
        if (c.fusedGateUp) {
            const HfMatrix gateUp = load.matrix(b + "mlp.gate_up_proj.weight", 2LL * F, C);
            l.gate = rowsOf(gateUp, 0, F, m_precision);
            l.up = rowsOf(gateUp, F, F, m_precision);
        } else {
            l.gate = load.linear(b + "mlp.gate_proj", F, C, c.mlpBias);
            l.up = load.linear(b + "mlp.up_proj", F, C, c.mlpBias);
        }
        l.down = load.linear(b + "mlp.down_proj", C, F, c.mlpBias);
        l.rope = c.ropeLayers[i];
        l.type = c.layerTypes[i];
    }
    keepNorm(decoderNorm(load, c, p + "norm", C), m_finalNormW, m_finalNormB);
    if (!c.tiedHead)
        m_head = load.weight(
            weights.has("language_model.lm_head.weight") ? "language_model.lm_head.weight" : "lm_head.weight", V, C);
}

void HfModel::finishLogits(HfMatrix& logits) const
{
    const HfConfig& c = m_config;
    if (c.logitScale != 1)
        logits *= static_cast<float>(c.logitScale);
    if (c.finalSoftcap > 0) {
        const float cap = static_cast<float>(c.finalSoftcap);
        logits = (logits.array() / cap).tanh() * cap;
    }
}

const HfWeightMatrix& HfModel::head() const
{
    return m_head.empty() ? m_embed : m_head;
}

HfMatrix HfModel::logits(const std::vector<int>& ids, const HfPositions& positions) const
{
    HfMatrix hidden, out;
    forward(ids, positions, nullptr, &hidden, HfForwardOutput::Logits);
    headLogits(hidden, out);
    return out;
}

HfMatrix HfModel::tailLogits(const std::vector<int>& ids, const HfPositions& positions, int rows) const
{
    HfMatrix hidden, out;
    forward(ids, positions, nullptr, &hidden, HfForwardOutput::Losses);
    const long n = std::clamp<long>(rows, 0, hidden.rows());
    HfMatrix tail = hidden.bottomRows(n);
    headLogits(tail, out); // the final norm is per row: the tail's alone equals the whole's tail
    return out;
}

namespace {

// log Σ e^x over a row of logits: −log softmax(row)[t] is this minus row[t]. The terms e^(x − max) are taken 16 at a
// time by the kernel's vector e^x (about 1 ulp) and summed in float over 256 terms (16 per lane, so a partial sum is
// off by at most ~16 ulp of itself), each partial added in double: the loss moves by ~1e-7 nats against a double e^x,
// far inside the stated bf16/f32 tolerances, where the scalar double e^x of every vocabulary entry had cost about a
// tenth of a perplexity pass of a 150k-token vocabulary. Terms below 2^-126 of the max flush to 0 (< 1e-33 of a sum >=
// 1).
double logSumExp(const float* row, int n)
{
    using namespace kernel;
    int i = 0;
    float top = -std::numeric_limits<float>::infinity();
    if (n >= kLanes) {
        Vec m = load(row);
        for (i = kLanes; i + kLanes <= n; i += kLanes)
            m = vmax(m, load(row + i));
        top = horizontalMax(m);
    }
    for (; i < n; ++i)
        top = std::max(top, row[i]);
    const Vec shift = splat(top);
    double sum = 0;
    constexpr int kChunk = 16 * kLanes;
    i = 0;
    for (; i + kChunk <= n; i += kChunk) {
        Vec partial = splat(0.0f);
        for (int j = i; j < i + kChunk; j += kLanes)
            partial += expNonPositive(load(row + j) - shift);
        sum += horizontalSum(partial);
    }
    for (; i + kLanes <= n; i += kLanes)
        sum += horizontalSum(expNonPositive(load(row + i) - shift));
    for (; i < n; ++i)
        sum += std::exp(static_cast<double>(row[i]) - top);
    return top + std::log(sum);
}

} // namespace

std::vector<double> HfModel::nextTokenLosses(const std::vector<int>& ids, const std::vector<int>& targets,
                                             const HfPositions& positions, int blockRows) const
{
    checkIntegerRange("the rows of logits per block", blockRows, 1, kHfLossRows);
    const int V = m_config.vocab;
    if (targets.size() > ids.size())
        throw InputError(std::to_string(targets.size()) + " targets for " + std::to_string(ids.size()) +
                         " tokens; allowed: at most one target per token");
    for (const int target : targets)
        if (target < 0 || target >= V)
            throw InputError("token id " + std::to_string(target) + " is out of range; allowed: integers in [0, " +
                             std::to_string(V - 1) + "] (vocab_size " + std::to_string(V) + ")");
    HfMatrix hidden, block, logits;
    forward(ids, positions, nullptr, &hidden, HfForwardOutput::Losses);
    const Eigen::Index rows = static_cast<Eigen::Index>(targets.size());
    std::vector<double> losses(targets.size());
    // blockRows rows of logits at a time: memory O(blockRows x vocab), never (T, vocab).
    for (Eigen::Index begin = 0; begin < rows; begin += blockRows) {
        const Eigen::Index count = std::min<Eigen::Index>(blockRows, rows - begin);
        block = hidden.middleRows(begin, count);
        headLogits(block, logits); // the final norm is per row: normed here, block by block
#pragma omp parallel for schedule(static)
        for (Eigen::Index r = 0; r < count; ++r) {
            const float* row = logits.row(r).data();
            losses[static_cast<size_t>(begin + r)] = logSumExp(row, V) - row[targets[begin + r]];
        }
    }
    return losses;
}

bool HfModel::observeAttention(const std::vector<int>& ids, const HfPositions& positions,
                               const HfAttentionObserver& observer) const
{
    return forward(ids, positions, &observer, nullptr, HfForwardOutput::None);
}

void HfModel::embed(const std::vector<int>& ids, int first, HfMatrix& x) const
{
    const HfConfig& c = m_config;
    const int T = static_cast<int>(ids.size());
    x.resize(T, c.hidden);
    for (int t = 0; t < T; ++t) {
        if (ids[t] < 0 || ids[t] >= c.vocab)
            throw InputError("token id " + std::to_string(ids[t]) + " at position " + std::to_string(first + t) +
                             " is out of range; allowed: integers in [0, " + std::to_string(c.vocab - 1) +
                             "] (vocab_size " + std::to_string(c.vocab) + ")");
        m_embed.row(ids[t], x.row(t).data());
        if (m_positions.size())
            x.row(t) += m_positions.row(first + t);
    }
    if (c.embedScale != 1) // gemma's sqrt(hidden) rounded to float32, as its normalizer tensor; granite's multiplier
        x *= static_cast<float>(c.embedScale);
    if (!m_embedNormW.empty())
        normalise(x, {toVector(m_embedNormW), toVector(m_embedNormB)}, false, c.normEps);
}

void HfModel::initState(HfForwardState& state, const HfPositions& positions, int rows, int biasLength) const
{
    // Rotary: the kernel turns q and k (the lab's frequencies and method from rotaryScaling, with the family's
    // pairing over the first rotaryDim dims), so the methods that remap positions (rerope, leaky-rerope, self-extend)
    // work as on the lab's own models. Layers without rotary (NoPE) take the causal mask alone; each layer type reads
    // hfLayerTypePositions (the method on the types --scaling-layers names, the config's own rope elsewhere).
    const HfConfig& c = m_config;
    const int H = c.heads, K = c.kvHeads, D = c.headDim;
    const bool rotary = positions.spec.kind == SchemeKind::Rope;
    state.T = rows;
    state.biasLength = biasLength;
    state.none = makeSchemeSpec("none", H, false);
    state.full = positions.spec.kind == SchemeKind::Alibi || rotary ? positions.spec : state.none;
    state.sliding = state.chunked = state.full;
    if (rotary) {
        state.full = hfLayerTypePositions(c, positions, HfLayerType::Full);
        state.sliding = hfLayerTypePositions(c, positions, HfLayerType::Sliding);
        state.chunked = hfLayerTypePositions(c, positions, HfLayerType::Chunked);
    }
    state.dims = AttentionDims{1, H, rows, D};
    state.dims.kvHeads = K; // GQA: the kernel reads each group's key/value head in place
    state.dims.pairing = c.interleavedRope ? RotaryPairing::Interleaved : RotaryPairing::RotateHalf;
    state.dims.rotaryDims = rotary ? c.rotaryDim : 0;
    state.a.resize(rows, H * D);
    state.qh.resize(state.dims.elements());
    state.kh.resize(static_cast<size_t>(K) * rows * D);
    state.vh.resize(state.kh.size());
}

bool HfModel::forward(const std::vector<int>& ids, const HfPositions& positions, const HfAttentionObserver* observer,
                      HfMatrix* hidden, HfForwardOutput output, HfKvCache::Data* cache) const
{
    const HfConfig& c = m_config;
    const int T = static_cast<int>(ids.size());
    if (T < 1)
        throw InputError("no token ids given; allowed: at least one id");
    if (c.family == HfFamily::Gpt2 && T > c.context)
        throw InputError("the text has " + std::to_string(T) + " tokens, more than the " + std::to_string(c.context) +
                         " learned positions of " + c.modelType + " (n_positions in " + c.folder + "/config.json)");
    checkIntegerRange("the number of tokens", T, 1, kMaxLength);
    // One layer's activations and the logits the caller keeps, before any of them is allocated.
    checkMemoryEstimate(hfForwardBytes(c, T, m_precision, output),
                        "logits of " + std::to_string(T) + " tokens over a vocabulary of " + std::to_string(c.vocab));
    HfMatrix x;
    embed(ids, 0, x);
    HfForwardState state;
    initState(state, positions, T, T);
    state.observer = observer;
    state.options.wantRowEntropy = observer != nullptr;
    state.cache = cache;
    for (size_t layerIndex = 0; layerIndex < m_layers.size(); ++layerIndex)
        if (!runLayer(layerIndex, state, x))
            return false;
    if (!hidden)
        return true;
    *hidden = std::move(x);
    return true;
}

void HfModel::headLogits(HfMatrix& hidden, HfMatrix& logits) const
{
    const HfConfig& c = m_config;
    normalise(hidden, {toVector(m_finalNormW), m_finalNormB.empty() ? Vector() : toVector(m_finalNormB)},
              c.norm != HfNormKind::LayerNorm && c.norm != HfNormKind::LayerNormNoBias, c.normEps);
    hfLinear(hidden, head(), Vector(), logits);
    finishLogits(logits);
}

namespace {

// (T, heads*D) <-> (heads, T, D), the kernel's layout.
void toHeads(const HfMatrix& x, int heads, int D, float* out)
{
    const int T = static_cast<int>(x.rows());
#pragma omp parallel for schedule(static) if (T > 1)
    for (int t = 0; t < T; ++t)
        for (int hd = 0; hd < heads; ++hd)
            std::copy_n(x.row(t).data() + static_cast<size_t>(hd) * D, D, out + (static_cast<size_t>(hd) * T + t) * D);
}

void fromHeads(const float* in, int heads, int D, HfMatrix& x)
{
    const int T = static_cast<int>(x.rows());
#pragma omp parallel for schedule(static) if (T > 1)
    for (int hd = 0; hd < heads; ++hd)
        for (int t = 0; t < T; ++t)
            std::copy_n(in + (static_cast<size_t>(hd) * T + t) * D, D, x.row(t).data() + static_cast<size_t>(hd) * D);
}

// One layer kind's kernel spec: `spec` with the layer type's window (sliding) or chunk (chunked), and the family's
// attention soft cap. A window or chunk of at least T tokens hides nothing and is left off.
SchemeSpec layerSpec(const HfConfig& c, SchemeSpec spec, HfLayerType type, int T)
{
    if (type == HfLayerType::Sliding && c.slidingWindow < T)
        setModifier(spec, "window", c.slidingWindow);
    if (type == HfLayerType::Chunked && c.chunkSize < T)
        setModifier(spec, "chunk", c.chunkSize);
    if (c.attnSoftcap > 0)
        setModifier(spec, "softcap", c.attnSoftcap);
    return spec;
}

// q/k norms: over each head's D dims (qwen3, gemma3) or over the whole projection (olmo2).
void normaliseHeads(HfMatrix& x, const Norm& norm, HfQkNorm kind, int heads, int D, double eps)
{
    if (kind == HfQkNorm::WholeProjection) {
        normalise(x, norm, true, eps);
        return;
    }
    Eigen::Map<HfMatrix> perHead(x.data(), x.rows() * heads, D);
    HfMatrix copy = perHead;
    normalise(copy, norm, true, eps);
    perHead = copy;
}

} // namespace

bool HfModel::runLayer(size_t index, HfForwardState& s, HfMatrix& x) const
{
    const HfConfig& c = m_config;
    const Layer& l = *m_layers[index];
    const int H = c.heads, K = c.kvHeads, D = c.headDim;
    const bool rms = c.norm == HfNormKind::RmsNorm || c.norm == HfNormKind::RmsNormPlusOne;
    s.h = x;
    if (l.norm1.w.size())
        normalise(s.h, l.norm1, rms, c.normEps);
    hfLinearSameInput(s.h, {{&l.q.w, &l.q.b, &s.q}, {&l.k.w, &l.k.b, &s.k}, {&l.v.w, &l.v.b, &s.v}});
    if (c.qkNorm != HfQkNorm::None) {
        normaliseHeads(s.q, l.qNorm, c.qkNorm, H, D, c.normEps);
        normaliseHeads(s.k, l.kNorm, c.qkNorm, K, D, c.normEps);
    }
    if (c.attentionScale > 0) // the kernel divides by sqrt(D): q carries the family's own scale instead
        s.q *= static_cast<float>(c.attentionScale * std::sqrt(static_cast<double>(D)));
    toHeads(s.q, H, D, s.qh.data());
    toHeads(s.k, K, D, s.kh.data());
    toHeads(s.v, K, D, s.vh.data());
    const bool nope = s.dims.rotaryDims > 0 && !l.rope;
    std::unique_ptr<PositionBias>& slot = s.biases[{nope, l.type}];
    if (!slot)
        slot = std::make_unique<PositionBias>(layerSpec(c,
                                                        nope                             ? s.none
                                                        : l.type == HfLayerType::Sliding ? s.sliding
                                                        : l.type == HfLayerType::Chunked ? s.chunked
                                                                                         : s.full,
                                                        l.type, s.biasLength),
                                              s.biasLength);
    const PositionBias& bias = *slot;
    attend(index, s, bias);
    if (s.observer) {
        // The observer rebuilds scores from q and k one cell at a time, so it gets them turned as the kernel
        // turned them (the kernel rotates its own packed copies, not qh and kh).
        s.observedQ = s.qh;
        s.observedK = s.kh;
        rotateRowsInPlace(bias, s.dims, s.observedQ.data(), H, false);
        rotateRowsInPlace(bias, s.dims, s.observedK.data(), K, true);
        if (!(*s.observer)({static_cast<int>(index), bias, s.dims, s.observedQ.data(), s.observedK.data(), s.forward}))
            return false;
    }
    fromHeads(s.forward.out.data(), H, D, s.a);
    l.o.apply(s.a, s.attn);
    if (l.postAttn.w.size())
        normalise(s.attn, l.postAttn, rms, c.normEps);
    const float residual = static_cast<float>(c.residualScale);
    auto mlp = [&](const HfMatrix& input, HfMatrix& out) {
        if (&input != &s.h)
            s.h = input;
        if (l.norm2.w.size())
            normalise(s.h, l.norm2, rms, c.normEps);
        if (!l.gate.w.empty()) {
            hfLinearSameInput(s.h, {{&l.up.w, &l.up.b, &s.up}, {&l.gate.w, &l.gate.b, &s.gate}});
            activate(s.up, c.activation, &s.gate);
        } else {
            l.up.apply(s.h, s.up);
            activate(s.up, c.activation);
        }
        l.down.apply(s.up, out);
        if (l.postMlp.w.size())
            normalise(out, l.postMlp, rms, c.normEps);
    };
    if (c.parallelResidual) { // gpt_neox: the MLP reads ln2(x); cohere: the attention's own input norm
        mlp(c.sharedNorm ? s.h : x, s.m);
        x += residual * (s.attn + s.m);
    } else {
        x += residual * s.attn;
        mlp(x, s.m);
        x += residual * s.m;
    }
    return true;
}

namespace {

// inspect --json's layer types (issue 29): one word per layer, the windows, the soft caps and each type's rope.
void addLayerTypes(nlohmann::json& doc, const HfConfig& c)
{
    nlohmann::json types = nlohmann::json::array();
    for (const HfLayerType t : c.layerTypes)
        types.push_back(hfLayerTypeName(t));
    doc["layer_types"] = types;
    doc["sliding_window"] = c.slidingWindow > 0 ? nlohmann::json(c.slidingWindow) : nlohmann::json();
    doc["attention_chunk_size"] = c.chunkSize > 0 ? nlohmann::json(c.chunkSize) : nlohmann::json();
    doc["softcap"] = {{"attention", c.attnSoftcap > 0 ? nlohmann::json(c.attnSoftcap) : nlohmann::json()},
                      {"final", c.finalSoftcap > 0 ? nlohmann::json(c.finalSoftcap) : nlohmann::json()}};
    if (c.scheme == "rope") {
        nlohmann::json rope = {{"full_attention", hfPositionText(hfPositionSpec(c))}};
        if (c.hasSliding())
            rope["sliding_attention"] = hfPositionText(hfSlidingPositionSpec(c));
        doc["rope_by_layer_type"] = rope;
    }
}

} // namespace

nlohmann::json hfSummaryJson(const HfConfig& c, HfPrecision precision)
{
    const SchemeSpec positions = hfPositionSpec(c);
    const double memory = hfModelMemoryBytes(c, precision);
    nlohmann::json doc{{"folder", c.folder},
                       {"model_type", c.modelType},
                       {"family", hfLayoutName(c.family)},
                       {"layers", c.layers},
                       {"hidden", c.hidden},
                       {"heads", c.heads},
                       {"kv_heads", c.kvHeads},
                       {"head_dim", c.headDim},
                       {"intermediate", c.intermediate},
                       {"vocab", c.vocab},
                       {"context", c.context},
                       {"scheme", c.scheme},
                       {"rope_theta", c.scheme == "rope" ? nlohmann::json(c.ropeTheta) : nlohmann::json()},
                       {"rotary_dim", c.rotaryDim},
                       {"rotary_pairing", c.scheme != "rope"  ? ""
                                          : c.interleavedRope ? "interleaved"
                                                              : "rotate_half"},
                       {"scaling", c.scaling},
                       {"scaling_settings", c.scalingSettings},
                       {"positions", hfPositionText(positions)},
                       {"tied_head", c.tiedHead},
                       {"parameters", static_cast<long long>(c.parameterCount())},
                       {"precision", hfPrecisionName(precision)},
                       {"memory_bytes", static_cast<long long>(memory)}};
    nlohmann::json nope = nlohmann::json::array();
    for (size_t i = 0; i < c.ropeLayers.size(); ++i)
        if (!c.ropeLayers[i])
            nope.push_back(i);
    doc["nope_layers"] = nope;
    addLayerTypes(doc, c);
    if (!c.notRead.empty())
        doc["not_read"] = c.notRead;
    // Tensors a load would skip (Pythia's old attention masks), from the weights' headers; null without weights.
    doc["skipped_tensors"] =
        hfFolderHasWeights(c.folder) ? nlohmann::json(HfModel::unreadTensors(c.folder)) : nlohmann::json();
    return doc;
}

} // namespace plab
