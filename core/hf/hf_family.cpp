// The family table (one row per model_type) and each row's reader of its own config fields, written from its
// modeling_*.py / configuration_*.py in transformers.
#include "hf/hf_family.h"

#include "base/errors.h"
#include "hf/hf_config_reader.h"

#include <cmath>

namespace plab {

namespace {

using hf_detail::ConfigReader;
using hf_detail::json;

// The dims a family's configuration class gives when config.json leaves them out (0: the field is required; kvHeads
// 0: the query heads, headDim 0: hidden / heads), and its rope_theta default.
struct DecoderDefaults {
    int vocab = 0, hidden = 0, intermediate = 0, layers = 0, heads = 0, kvHeads = 0, headDim = 0, context = 0;
    double ropeTheta = 10000.0;
};

// configuration_gemma3.py's Gemma3TextConfig defaults: a gemma3 folder's text_config often names only what differs
// (gemma-3-4b's gives hidden_size, intermediate_size, num_hidden_layers, rope_scaling and sliding_window).
constexpr DecoderDefaults kGemma3Defaults{262208, 2304, 9216, 26, 8, 4, 256, 131072, 1000000.0};
constexpr int kGemma3Window = 4096;

// The fields every decoder-layout family shares (llama's names), read after the row's flags.
void readDecoder(const ConfigReader& r, HfConfig& c, const char* epsKey = "rms_norm_eps", double epsDefault = 1e-6,
                 const DecoderDefaults& d = {})
{
    const auto dim = [&](const char* key, int fallback) {
        return fallback > 0 ? r.positiveInt(key, fallback) : r.positiveInt(key);
    };
    c.hidden = dim("hidden_size", d.hidden);
    c.layers = dim("num_hidden_layers", d.layers);
    c.heads = dim("num_attention_heads", d.heads);
    c.kvHeads = r.positiveInt("num_key_value_heads", d.kvHeads > 0 ? d.kvHeads : c.heads);
    c.headDim = r.positiveInt("head_dim", d.headDim > 0 ? d.headDim : c.hidden / c.heads);
    c.intermediate = dim("intermediate_size", d.intermediate);
    c.vocab = dim("vocab_size", d.vocab);
    c.context = dim("max_position_embeddings", d.context);
    c.normEps = r.positiveNumber(epsKey, epsDefault);
    const bool attentionBias = r.flag("attention_bias", false);
    const bool rowBias = c.qkvBias; // qwen2: q/k/v biases whatever attention_bias says, o_proj none
    c.qkvBias = rowBias || attentionBias;
    c.outputBias = !rowBias && attentionBias;
    c.mlpBias = r.flag("mlp_bias", false);
    c.scheme = "rope";
    c.rotaryFraction = r.positiveNumber("partial_rotary_factor", 1.0);
    hf_detail::readRope(r, c, "rope_theta", d.ropeTheta);
    hf_detail::finishRotary(r, c);
    c.ropeLayers.assign(c.layers, true);
    c.layerTypes.assign(c.layers, HfLayerType::Full);
}

std::vector<HfLayerType> every(const HfConfig& c, HfLayerType type)
{
    return std::vector<HfLayerType>(c.layers, type);
}

// mistral, ministral, phi3: a top-level sliding_window (not null) makes every layer slide.
void readTopLevelWindow(const ConfigReader& r, HfConfig& c)
{
    hf_detail::readLayerTypes(r, c, every(c, r.has("sliding_window") ? HfLayerType::Sliding : HfLayerType::Full));
}

void readLlama(const ConfigReader& r, HfConfig& c)
{
    readDecoder(r, c);
    hf_detail::readLayerTypes(r, c, every(c, HfLayerType::Full));
}

void readMistral(const ConfigReader& r, HfConfig& c)
{
    readDecoder(r, c);
    readTopLevelWindow(r, c);
}

// qwen2 / qwen3: sliding_window only with use_sliding_window, on the layers from max_window_layers on.
void readQwen(const ConfigReader& r, HfConfig& c)
{
    readDecoder(r, c);
    std::vector<HfLayerType> types = every(c, HfLayerType::Full);
    if (r.flag("use_sliding_window", false) && r.has("sliding_window")) {
        const json& v = r.root.contains("max_window_layers") ? r.root["max_window_layers"] : json(28);
        if (!v.is_number_integer() || v.get<long long>() < 0)
            throw r.fail("field 'max_window_layers' = " + jsonExcerpt(v) + " is not allowed; allowed: an integer >= 0");
        for (long long i = v.get<long long>(); i < c.layers; ++i)
            types[static_cast<size_t>(i)] = HfLayerType::Sliding;
    }
    hf_detail::readLayerTypes(r, c, types);
}

void readSmollm3(const ConfigReader& r, HfConfig& c)
{
    readLlama(r, c);
    // no_rope_layers[i] = 1 means layer i uses rope (transformers' own reading); the default drops it every 4th.
    if (r.has("no_rope_layers")) {
        const json& list = r.root["no_rope_layers"];
        if (!list.is_array() || static_cast<int>(list.size()) != c.layers)
            throw r.fail("field 'no_rope_layers' must be a list of " + std::to_string(c.layers) +
                         " entries 0 or 1 (one per layer)");
        for (int i = 0; i < c.layers; ++i) {
            if (!list[i].is_number_integer() || (list[i] != 0 && list[i] != 1))
                throw r.wrong("no_rope_layers[" + std::to_string(i) + "]", list[i], "0 (NoPE), 1 (rope)",
                              list[i].is_number_integer());
            c.ropeLayers[i] = list[i] == 1;
        }
    } else {
        const int interval = r.positiveInt("no_rope_layer_interval", 4);
        for (int i = 0; i < c.layers; ++i)
            c.ropeLayers[i] = (i + 1) % interval != 0;
    }
}

void readPhi3(const ConfigReader& r, HfConfig& c)
{
    readDecoder(r, c, "rms_norm_eps", 1e-5);
    readTopLevelWindow(r, c);
}

void readOlmo2(const ConfigReader& r, HfConfig& c)
{
    readDecoder(r, c, "rms_norm_eps", 1e-5);
    hf_detail::readLayerTypes(r, c, every(c, HfLayerType::Full));
}

// granite: embedding_multiplier, attention_multiplier (the score scale itself), residual_multiplier and
// logits_scaling (logits divided by it), each 1 by default as configuration_granite.py has them.
void readGranite(const ConfigReader& r, HfConfig& c)
{
    readDecoder(r, c);
    hf_detail::readLayerTypes(r, c, every(c, HfLayerType::Full));
    c.embedScale = r.positiveNumber("embedding_multiplier", 1.0);
    c.attentionScale = r.positiveNumber("attention_multiplier", 1.0);
    c.residualScale = r.positiveNumber("residual_multiplier", 1.0);
    c.logitScale = 1.0 / r.positiveNumber("logits_scaling", 1.0);
}

void readCohere(const ConfigReader& r, HfConfig& c)
{
    readDecoder(r, c, "layer_norm_eps", 1e-5);
    if (r.flag("use_qk_norm", false))
        throw r.fail("field 'use_qk_norm' = true (Command R+'s per-head LayerNorm) is not supported; allowed: false");
    c.logitScale = r.positiveNumber("logit_scale", 0.0625);
    hf_detail::readLayerTypes(r, c, every(c, HfLayerType::Full));
}

// cohere2: every sliding_window_pattern-th layer (default 4) is global and has no rotary.
void readCohere2(const ConfigReader& r, HfConfig& c)
{
    readDecoder(r, c, "layer_norm_eps", 1e-5);
    c.logitScale = r.positiveNumber("logit_scale", 0.0625);
    hf_detail::readLayerTypes(r, c, hf_detail::slidingPattern(c.layers, r.positiveInt("sliding_window_pattern", 4)));
    for (int i = 0; i < c.layers; ++i)
        c.ropeLayers[i] = c.layerTypes[i] == HfLayerType::Sliding;
}

// gemma2 / gemma3: query_pre_attn_scalar's score scale, the soft caps (null: none), embeddings x sqrt(hidden).
void readGemmaCommon(const ConfigReader& r, HfConfig& c, double attnCapDefault, double finalCapDefault)
{
    c.attentionScale = 1.0 / std::sqrt(r.positiveNumber("query_pre_attn_scalar", 256.0));
    auto cap = [&](const char* key, double fallback) {
        if (r.root.contains(key) && r.root[key].is_null())
            return 0.0;
        return r.has(key) ? r.positiveNumber(r.root[key], key) : fallback;
    };
    c.attnSoftcap = cap("attn_logit_softcapping", attnCapDefault);
    c.finalSoftcap = cap("final_logit_softcapping", finalCapDefault);
    c.embedScale = std::sqrt(static_cast<double>(static_cast<float>(c.hidden)));
}

// gemma2: layer i slides when i is even (configuration_gemma2.py's (i + 1) % 2).
void readGemma2(const ConfigReader& r, HfConfig& c)
{
    readDecoder(r, c);
    hf_detail::readLayerTypes(r, c, hf_detail::slidingPattern(c.layers, 2));
    readGemmaCommon(r, c, 50.0, 30.0);
}

// gemma3_text: 5 sliding layers to 1 full by default (sliding_window_pattern 6); the sliding layers' rotary reads
// rope_local_base_freq (default 10000) without the config's scaling. Fields left out take Gemma3TextConfig's
// defaults (kGemma3Defaults, sliding_window 4096).
void readGemma3Text(const ConfigReader& r, HfConfig& c)
{
    readDecoder(r, c, "rms_norm_eps", 1e-6, kGemma3Defaults);
    hf_detail::readLayerTypes(r, c, hf_detail::slidingPattern(c.layers, r.positiveInt("sliding_window_pattern", 6)),
                              kGemma3Window);
    if (c.slidingRopeTheta == 0)
        c.slidingRopeTheta = 10000.0;
    readGemmaCommon(r, c, 0.0, 0.0);
}

// gemma3 (the multimodal folder): its text_config is a gemma3_text config; the vision tower is not read.
void readGemma3(const ConfigReader& r, HfConfig& c)
{
    if (!r.has("text_config") || !r.root["text_config"].is_object())
        throw r.fail("field 'text_config' is missing or not an object; a gemma3 folder keeps its language model's "
                     "fields there");
    const ConfigReader text{r.root["text_config"], r.file + " (text_config)"};
    readGemma3Text(text, c);
    c.notRead = "vision_config: the vision tower (vision_tower.*, multi_modal_projector.*) is not read; the language "
                "model runs on text alone";
}

void readGpt2(const ConfigReader& r, HfConfig& c)
{
    c.hidden = r.positiveInt("n_embd");
    c.layers = r.positiveInt("n_layer");
    c.heads = c.kvHeads = r.positiveInt("n_head");
    c.headDim = c.hidden / c.heads;
    c.intermediate = r.has("n_inner") ? r.positiveInt("n_inner") : hf_detail::fourTimes(r, "n_embd", c.hidden);
    c.vocab = r.positiveInt("vocab_size");
    c.context = r.positiveInt("n_positions");
    c.normEps = r.positiveNumber("layer_norm_epsilon", 1e-5);
    c.activation = hf_detail::activationOf(r, "activation_function", "gelu_new");
    c.swiGlu = false;
    c.tiedHead = true;
    c.qkvBias = c.outputBias = c.mlpBias = true;
    c.scheme = "learned";
    for (const char* unsupported : {"scale_attn_by_inverse_layer_idx", "reorder_and_upcast_attn"})
        if (r.flag(unsupported, false))
            throw r.fail("field '" + std::string(unsupported) + "' = true is not supported; allowed: false");
    if (!r.flag("scale_attn_weights", true))
        throw r.fail("field 'scale_attn_weights' = false is not supported; allowed: true");
}

void readNeox(const ConfigReader& r, HfConfig& c)
{
    c.hidden = r.positiveInt("hidden_size");
    c.layers = r.positiveInt("num_hidden_layers");
    c.heads = c.kvHeads = r.positiveInt("num_attention_heads");
    c.headDim = c.hidden / c.heads;
    c.intermediate = r.positiveInt("intermediate_size");
    c.vocab = r.positiveInt("vocab_size");
    c.context = r.positiveInt("max_position_embeddings");
    c.normEps = r.positiveNumber("layer_norm_eps", 1e-5);
    c.swiGlu = false;
    c.parallelResidual = r.flag("use_parallel_residual", true);
    c.tiedHead = r.flag("tie_word_embeddings", false);
    c.qkvBias = c.outputBias = r.flag("attention_bias", true);
    c.mlpBias = true;
    c.scheme = "rope";
    // rotary_pct 0 rotates no dim (transformers' rotary_ndims = 0: every dim passes through): a NoPE model, as
    // `export` writes the lab's scheme none.
    const char* fractionKey = r.has("partial_rotary_factor") ? "partial_rotary_factor" : "rotary_pct";
    if (r.has(fractionKey) && r.root[fractionKey].is_number() && r.root[fractionKey].get<double>() == 0.0) {
        hf_detail::readRope(r, c, "rotary_emb_base", 10000.0);
        if (c.scaling != "none")
            throw r.fail("field 'rope_scaling' is not allowed with " + std::string(fractionKey) +
                         " = 0, which rotates no dim; allowed: no rope_scaling");
        c.scheme = "none";
        c.rotaryFraction = 0;
        c.rotaryDim = 0;
        c.ropeLayers.assign(c.layers, false);
        return;
    }
    c.rotaryFraction = r.has("partial_rotary_factor") ? r.positiveNumber("partial_rotary_factor", 1.0)
                                                      : r.positiveNumber("rotary_pct", 0.25);
    hf_detail::readRope(r, c, "rotary_emb_base", 10000.0);
    hf_detail::finishRotary(r, c);
    c.ropeLayers.assign(c.layers, true);
}

void readBloom(const ConfigReader& r, HfConfig& c)
{
    c.hidden = r.has("hidden_size") ? r.positiveInt("hidden_size") : r.positiveInt("n_embed");
    c.layers = r.positiveInt("n_layer");
    c.heads = c.kvHeads = r.positiveInt("n_head");
    c.headDim = c.hidden / c.heads;
    c.intermediate = hf_detail::fourTimes(r, r.has("hidden_size") ? "hidden_size" : "n_embed", c.hidden);
    c.vocab = r.positiveInt("vocab_size");
    c.context = r.positiveInt("seq_length", 2048); // ALiBi has no position table: the length it was trained at
    c.normEps = r.positiveNumber("layer_norm_epsilon", 1e-5);
    c.swiGlu = false;
    c.tiedHead = true;
    c.qkvBias = c.outputBias = c.mlpBias = true;
    c.scheme = "alibi";
    if (r.flag("apply_residual_connection_post_layernorm", false))
        throw r.fail("field 'apply_residual_connection_post_layernorm' = true is not supported; allowed: false");
}

constexpr auto Gpt2 = HfFamily::Gpt2;
constexpr auto Bloom = HfFamily::Bloom;
constexpr auto Neox = HfFamily::GptNeox;
constexpr auto Dec = HfFamily::Llama;
constexpr auto LN = HfNormKind::LayerNorm;
constexpr auto LN0 = HfNormKind::LayerNormNoBias;
constexpr auto RMS = HfNormKind::RmsNorm;
constexpr auto RMS1 = HfNormKind::RmsNormPlusOne;
constexpr auto Pre = HfNormPlace::Before;
constexpr auto PrePost = HfNormPlace::BeforeAndAfter;
constexpr auto Post = HfNormPlace::After;
constexpr auto NoQk = HfQkNorm::None;
constexpr auto QkHead = HfQkNorm::PerHead;
constexpr auto QkWhole = HfQkNorm::WholeProjection;

} // namespace

const std::vector<HfFamilyRow>& hfFamilyTable()
{
    // clang-format off
    static const std::vector<HfFamilyRow> rows = {
        {"gpt2", Gpt2, "gpt2", LN, Pre, NoQk, kHfTiedDefault, "activation_function", "gelu_new", readGpt2,
         "learned positions (wpe), Conv1D [in, out] weights"},
        {"bloom", Bloom, "bloom", LN, Pre, NoQk, kHfTiedDefault, nullptr, "gelu_new", readBloom,
         "ALiBi, fused per-head q/k/v, a LayerNorm after the embeddings"},
        {"gpt_neox", Neox, "gpt_neox", LN, Pre, NoQk, 0, "hidden_act", "gelu", readNeox,
         "fused per-head q/k/v, partial rotary (rotary_pct), parallel residual"},
        {"llama", Dec, "llama", RMS, Pre, NoQk, 0, "hidden_act", "silu", readLlama, "the decoder block"},
        {"mistral", Dec, "llama", RMS, Pre, NoQk, 0, "hidden_act", "silu", readMistral,
         "sliding_window on every layer, as a mask"},
        {"ministral", Dec, "llama", RMS, Pre, NoQk, 0, "hidden_act", "silu", readMistral,
         "layer_types with sliding_window"},
        {"qwen2", Dec, "llama", RMS, Pre, NoQk, kHfQkvBias, "hidden_act", "silu", readQwen,
         "q/k/v biases; use_sliding_window + max_window_layers"},
        {"qwen3", Dec, "llama", RMS, Pre, QkHead, 0, "hidden_act", "silu", readQwen,
         "per-head q/k RMSNorm; use_sliding_window + max_window_layers"},
        {"smollm3", Dec, "llama", RMS, Pre, NoQk, 0, "hidden_act", "silu", readSmollm3, "NoPE layers (no_rope_layers)"},
        {"phi3", Dec, "llama", RMS, Pre, NoQk, kHfFusedQkv | kHfFusedGateUp, "hidden_act", "silu", readPhi3,
         "fused qkv_proj and gate_up_proj, longrope, partial rotary"},
        {"olmo2", Dec, "llama", RMS, Post, QkWhole, 0, "hidden_act", "silu", readOlmo2,
         "q/k RMSNorm over the whole projection, norms after attention and MLP"},
        {"granite", Dec, "llama", RMS, Pre, NoQk, 0, "hidden_act", "silu", readGranite,
         "embedding, attention and residual multipliers, logits_scaling"},
        {"cohere", Dec, "llama", LN0, Pre, NoQk, kHfSharedNorm | kHfInterleavedRope | kHfTiedDefault, "hidden_act",
         "silu", readCohere, "LayerNorm without bias, parallel block, logit_scale, interleaved rotary pairs"},
        {"cohere2", Dec, "llama", LN0, Pre, NoQk,
         kHfSharedNorm | kHfInterleavedRope | kHfTiedDefault | kHfRopeOnSlidingOnly, "hidden_act", "silu",
         readCohere2, "cohere's block, 3 sliding layers to 1 global NoPE layer"},
        {"gemma2", Dec, "llama", RMS1, PrePost, NoQk, kHfEmbedSqrtHidden | kHfTiedDefault, "hidden_activation",
         "gelu_pytorch_tanh", readGemma2, "RMSNorm (1 + w) before and after, soft caps, 1:1 sliding"},
        {"gemma3_text", Dec, "llama", RMS1, PrePost, QkHead, kHfEmbedSqrtHidden | kHfTiedDefault,
         "hidden_activation", "gelu_pytorch_tanh", readGemma3Text,
         "gemma2's block with q/k norms, 5:1 sliding, two rotary tables"},
        {"gemma3", Dec, "llama", RMS1, PrePost, QkHead, kHfEmbedSqrtHidden | kHfTiedDefault | kHfTextConfig,
         "hidden_activation", "gelu_pytorch_tanh", readGemma3,
         "gemma3_text in a multimodal folder: text_config and the language model's tensors"},
    };
    // clang-format on
    return rows;
}

const HfFamilyRow* hfFamilyRow(std::string_view modelType)
{
    for (const HfFamilyRow& row : hfFamilyTable())
        if (modelType == row.modelType)
            return &row;
    return nullptr;
}

const char* hfLayoutName(HfFamily family)
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

namespace hf_detail {

void applyFamilyRow(const HfFamilyRow& row, const ConfigReader& r, HfConfig& c)
{
    c.family = row.layout;
    c.layoutName = row.layoutName;
    c.norm = row.norm;
    c.normPlace = row.normPlace;
    c.qkNorm = row.qkNorm;
    c.fusedQkv = row.flags & kHfFusedQkv;
    c.fusedGateUp = row.flags & kHfFusedGateUp;
    c.sharedNorm = row.flags & kHfSharedNorm;
    c.parallelResidual = c.sharedNorm;
    c.interleavedRope = row.flags & kHfInterleavedRope;
    c.qkvBias = row.flags & kHfQkvBias;
    c.swiGlu = row.layout == HfFamily::Llama;
    const ConfigReader& fields =
        (row.flags & kHfTextConfig) && r.has("text_config") && r.root["text_config"].is_object()
            ? ConfigReader{r.root["text_config"], r.file + " (text_config)"}
            : r;
    c.tiedHead = r.flag("tie_word_embeddings", fields.flag("tie_word_embeddings", row.flags & kHfTiedDefault));
    c.activation = row.activationKey ? activationOf(fields, row.activationKey, row.activationDefault)
                                     : std::string(row.activationDefault);
    row.read(r, c);
    if (c.layerTypes.empty())
        c.layerTypes.assign(c.layers, HfLayerType::Full);
}

} // namespace hf_detail

} // namespace plab
