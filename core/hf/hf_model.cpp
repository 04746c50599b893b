// Loading each family's tensors into one block layout (product weights in the run's precision), and the forward:
// oneDNN's products (hf_products), the lab's attention kernel, the losses per block of rows.
#include "hf/hf_model.h"

#include "attention/attention.h"
#include "attention/attention_reference.h"
#include "attention/rotary_cache.h"
#include "attention/simd.h"
#include "base/errors.h"
#include "base/limits.h"
#include "hf/hf_weights.h"
#include "schemes/position_bias.h"
#include "schemes/rotary_scaling.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
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
#pragma omp parallel for schedule(static)
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
#pragma omp parallel for schedule(static)
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
#pragma omp parallel for schedule(static)
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
    Norm norm1, norm2, qNorm, kNorm;
    Linear q, k, v, o, gate, up, down; // gate empty outside SwiGLU; up = fc, down = proj there
    bool rope = true;
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
    weights.refuseOutOfScopeTensors();
    probe.load(weights);
    return weights.unreadNames();
}

void HfModel::load(const HfWeights& weights)
{
    const HfConfig& c = m_config;
    const HfPrecision precision = m_precision;
    const Loader load{weights, c, precision};
    const int C = c.hidden, H = c.heads, K = c.kvHeads, D = c.headDim, F = c.intermediate, V = c.vocab;
    for (int i = 0; i < c.layers; ++i)
        m_layers.push_back(std::make_unique<Layer>());
    switch (c.family) {
    case HfFamily::Gpt2: {
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
                parts[j]->w = HfWeightMatrix(qkv.middleRows(static_cast<Eigen::Index>(j) * C, C), precision);
                parts[j]->b = qkvBias.segment(static_cast<Eigen::Index>(j) * C, C);
            }
            l.o = load.conv1d(b + "attn.c_proj", C, C);
            l.up = load.conv1d(b + "mlp.c_fc", C, F);
            l.down = load.conv1d(b + "mlp.c_proj", F, C);
        }
        const Norm f = load.norm(p + "ln_f", C, true);
        m_finalNormW.assign(f.w.data(), f.w.data() + C);
        m_finalNormB.assign(f.b.data(), f.b.data() + C);
        break;
    }
    case HfFamily::Bloom: {
        const std::string p = weights.has("transformer.word_embeddings.weight") ? "transformer." : "";
        m_embed = load.weight(p + "word_embeddings.weight", V, C);
        const Norm e = load.norm(p + "word_embeddings_layernorm", C, true);
        m_embedNormW.assign(e.w.data(), e.w.data() + C);
        m_embedNormB.assign(e.b.data(), e.b.data() + C);
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
        const Norm f = load.norm(p + "ln_f", C, true);
        m_finalNormW.assign(f.w.data(), f.w.data() + C);
        m_finalNormB.assign(f.b.data(), f.b.data() + C);
        break;
    }
    case HfFamily::GptNeox: {
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
        const Norm f = load.norm(p + "final_layer_norm", C, true);
        m_finalNormW.assign(f.w.data(), f.w.data() + C);
        m_finalNormB.assign(f.b.data(), f.b.data() + C);
        if (!c.tiedHead)
            m_head = load.weight("embed_out.weight", V, C);
        break;
    }
    case HfFamily::Llama: {
        m_embed = load.weight("model.embed_tokens.weight", V, C);
        for (int i = 0; i < c.layers; ++i) {
            Layer& l = *m_layers[i];
            const std::string b = "model.layers." + std::to_string(i) + ".";
            l.norm1 = load.norm(b + "input_layernorm", C, false);
            l.norm2 = load.norm(b + "post_attention_layernorm", C, false);
            l.q = load.linear(b + "self_attn.q_proj", 1LL * H * D, C, c.qkvBias);
            l.k = load.linear(b + "self_attn.k_proj", 1LL * K * D, C, c.qkvBias);
            l.v = load.linear(b + "self_attn.v_proj", 1LL * K * D, C, c.qkvBias);
            l.o = load.linear(b + "self_attn.o_proj", C, 1LL * H * D, c.outputBias);
            if (c.qkNorm) {
                l.qNorm = load.norm(b + "self_attn.q_norm", D, false);
                l.kNorm = load.norm(b + "self_attn.k_norm", D, false);
            }
            l.gate = load.linear(b + "mlp.gate_proj", F, C, c.mlpBias);
            l.up = load.linear(b + "mlp.up_proj", F, C, c.mlpBias);
            l.down = load.linear(b + "mlp.down_proj", C, F, c.mlpBias);
            l.rope = c.ropeLayers[i];
        }
        const Norm f = load.norm("model.norm", C, false);
        m_finalNormW.assign(f.w.data(), f.w.data() + C);
        if (!c.tiedHead)
            m_head = load.weight("lm_head.weight", V, C);
        break;
    }
    }
}

const HfWeightMatrix& HfModel::head() const
{
    return m_head.empty() ? m_embed : m_head;
}

HfMatrix HfModel::logits(const std::vector<int>& ids, const SchemeSpec& positions) const
{
    HfMatrix hidden, out;
    forward(ids, positions, nullptr, &hidden, HfForwardOutput::Logits);
    hfLinear(hidden, head(), Vector(), out);
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
                                             const SchemeSpec& positions, int blockRows) const
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
        hfLinear(block, head(), Vector(), logits);
#pragma omp parallel for schedule(static)
        for (Eigen::Index r = 0; r < count; ++r) {
            const float* row = logits.row(r).data();
            losses[static_cast<size_t>(begin + r)] = logSumExp(row, V) - row[targets[begin + r]];
        }
    }
    return losses;
}

bool HfModel::observeAttention(const std::vector<int>& ids, const SchemeSpec& positions,
                               const HfAttentionObserver& observer) const
{
    return forward(ids, positions, &observer, nullptr, HfForwardOutput::None);
}

bool HfModel::forward(const std::vector<int>& ids, const SchemeSpec& positions, const HfAttentionObserver* observer,
                      HfMatrix* hidden, HfForwardOutput output) const
{
    const HfConfig& c = m_config;
    const int T = static_cast<int>(ids.size());
    const int C = c.hidden, H = c.heads, K = c.kvHeads, D = c.headDim;
    if (T < 1)
        throw InputError("no token ids given; allowed: at least one id");
    if (c.family == HfFamily::Gpt2 && T > c.context)
        throw InputError("the text has " + std::to_string(T) + " tokens, more than the " + std::to_string(c.context) +
                         " learned positions of " + c.modelType + " (n_positions in " + c.folder + "/config.json)");
    if (c.slidingWindow > 0 && T > c.slidingWindow)
        throw InputError("the text has " + std::to_string(T) + " tokens, more than the sliding window " +
                         std::to_string(c.slidingWindow) + " of " + c.folder +
                         "/config.json; sliding-window attention is not implemented yet");
    checkIntegerRange("the number of tokens", T, 1, kMaxLength);
    // One layer's activations and the logits the caller keeps, before any of them is allocated.
    checkMemoryEstimate(hfForwardBytes(c, T, m_precision, output),
                        "logits of " + std::to_string(T) + " tokens over a vocabulary of " + std::to_string(c.vocab));
    HfMatrix x(T, C);
    for (int t = 0; t < T; ++t) {
        if (ids[t] < 0 || ids[t] >= c.vocab)
            throw InputError("token id " + std::to_string(ids[t]) + " at position " + std::to_string(t) +
                             " is out of range; allowed: integers in [0, " + std::to_string(c.vocab - 1) +
                             "] (vocab_size " + std::to_string(c.vocab) + ")");
        m_embed.row(ids[t], x.row(t).data());
        if (m_positions.size())
            x.row(t) += m_positions.row(t);
    }
    if (!m_embedNormW.empty())
        normalise(x, {toVector(m_embedNormW), toVector(m_embedNormB)}, c.rmsNorm, c.normEps);

    // Rotary: the kernel turns q and k (the lab's frequencies and method from rotaryScaling, with Hugging Face's
    // rotate_half pairing over the first rotaryDim dims), so the methods that remap positions (rerope, leaky-rerope,
    // self-extend) work as on the lab's own models. Layers without rotary (smollm3's NoPE layers) take the causal
    // mask alone.
    const bool rotary = positions.kind == SchemeKind::Rope;
    const PositionBias bias(
        positions.kind == SchemeKind::Alibi || rotary ? positions : makeSchemeSpec("none", H, false), T);
    const PositionBias noRotary(makeSchemeSpec("none", H, false), T);
    AttentionDims dims{1, H, T, D};
    dims.kvHeads = K; // GQA: the kernel reads each group's key/value head in place
    dims.pairing = RotaryPairing::RotateHalf;
    dims.rotaryDims = rotary ? c.rotaryDim : 0;

    HfMatrix h, q, k, v, a(T, H * D), attn, up, gate, m; // reused by every layer: no allocation after the first
    std::vector<float> qh(dims.elements()), kh(static_cast<size_t>(K) * T * D), vh(kh.size());
    std::vector<float> observedQ, observedK; // the observer's rotated copies
    AttentionForward forward;
    RotaryTableCache rotaryTables; // cos and sin of every position and pair, built once for all the layers
    AttentionOptions options;
    options.wantRowEntropy = observer != nullptr;
    for (size_t layerIndex = 0; layerIndex < m_layers.size(); ++layerIndex) {
        const Layer& l = *m_layers[layerIndex];
        h = x;
        normalise(h, l.norm1, c.rmsNorm, c.normEps);
        l.q.apply(h, q);
        l.k.apply(h, k);
        l.v.apply(h, v);
        if (c.qkNorm) {
            Eigen::Map<HfMatrix> qHeads(q.data(), static_cast<Eigen::Index>(T) * H, D);
            Eigen::Map<HfMatrix> kHeads(k.data(), static_cast<Eigen::Index>(T) * K, D);
            HfMatrix qCopy = qHeads, kCopy = kHeads;
            normalise(qCopy, l.qNorm, true, c.normEps);
            normalise(kCopy, l.kNorm, true, c.normEps);
            qHeads = qCopy;
            kHeads = kCopy;
        }
        // (T, heads*D) -> (heads, T, D), the kernel's layout.
#pragma omp parallel for schedule(static)
        for (int t = 0; t < T; ++t) {
            for (int hd = 0; hd < H; ++hd)
                std::copy_n(q.row(t).data() + static_cast<size_t>(hd) * D, D,
                            qh.data() + (static_cast<size_t>(hd) * T + t) * D);
            for (int hd = 0; hd < K; ++hd) {
                std::copy_n(k.row(t).data() + static_cast<size_t>(hd) * D, D,
                            kh.data() + (static_cast<size_t>(hd) * T + t) * D);
                std::copy_n(v.row(t).data() + static_cast<size_t>(hd) * D, D,
                            vh.data() + (static_cast<size_t>(hd) * T + t) * D);
            }
        }
        const PositionBias& layerBias = rotary && !l.rope ? noRotary : bias;
        attentionForward(layerBias, dims, qh.data(), kh.data(), vh.data(), forward, options, rotaryTables);
        if (observer) {
            // The observer rebuilds scores from q and k one cell at a time, so it gets them turned as the kernel
            // turned them (the kernel rotates its own packed copies, not qh and kh).
            observedQ = qh;
            observedK = kh;
            rotateRowsInPlace(layerBias, dims, observedQ.data(), H, false);
            rotateRowsInPlace(layerBias, dims, observedK.data(), K, true);
            if (!(*observer)(
                    {static_cast<int>(layerIndex), layerBias, dims, observedQ.data(), observedK.data(), forward}))
                return false;
        }
#pragma omp parallel for schedule(static)
        for (int hd = 0; hd < H; ++hd)
            for (int t = 0; t < T; ++t)
                std::copy_n(forward.out.data() + (static_cast<size_t>(hd) * T + t) * D, D,
                            a.row(t).data() + static_cast<size_t>(hd) * D);
        l.o.apply(a, attn);

        auto mlp = [&](const HfMatrix& input, HfMatrix& out) {
            h = input;
            normalise(h, l.norm2, c.rmsNorm, c.normEps);
            l.up.apply(h, up);
            if (!l.gate.w.empty()) {
                l.gate.apply(h, gate);
                activate(up, c.activation, &gate);
            } else {
                activate(up, c.activation);
            }
            l.down.apply(up, out);
        };
        if (c.parallelResidual) {
            mlp(x, m);
            x += attn + m;
        } else {
            x += attn;
            mlp(x, m);
            x += m;
        }
    }
    if (!hidden)
        return true;
    normalise(x, {toVector(m_finalNormW), m_finalNormB.empty() ? Vector() : toVector(m_finalNormB)}, c.rmsNorm,
              c.normEps);
    *hidden = std::move(x);
    return true;
}

const char* hfFamilyName(HfFamily family)
{
    switch (family) {
    case HfFamily::Gpt2:
        return "gpt2";
    case HfFamily::Bloom:
        return "bloom";
    case HfFamily::GptNeox:
        return "gpt_neox";
    case HfFamily::Llama:
        return "llama";
    }
    return "";
}

nlohmann::json hfSummaryJson(const HfConfig& c, HfPrecision precision)
{
    const SchemeSpec positions = hfPositionSpec(c);
    const double memory = hfModelMemoryBytes(c, precision);
    nlohmann::json doc{{"folder", c.folder},
                       {"model_type", c.modelType},
                       {"family", hfFamilyName(c.family)},
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
                       {"rotary_pairing", c.scheme == "rope" ? "rotate_half" : ""},
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
    // Tensors a load would skip (Pythia's old attention masks), from the weights' headers; null without weights.
    doc["skipped_tensors"] =
        hfFolderHasWeights(c.folder) ? nlohmann::json(HfModel::unreadTensors(c.folder)) : nlohmann::json();
    return doc;
}

} // namespace plab
