// config.json read through the family table (hf_family.cpp): the rope dicts in every spelling, layer types and
// windows, and rope scaling mapped onto the lab's methods.
#include "hf/hf_config.h"

#include "base/errors.h"
#include "base/json_input.h"
#include "hf/hf_config_reader.h"
#include "hf/hf_family.h"
#include "schemes/position_bias.h"
#include "schemes/rotary_scaling.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <optional>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace plab {

namespace hf_detail {

std::string activationOf(const ConfigReader& r, const char* key, const std::string& fallback)
{
    const std::string act = r.text(key, fallback);
    if (act == "silu" || act == "swish")
        return "silu";
    if (act == "gelu")
        return "gelu";
    if (act == "gelu_new" || act == "gelu_pytorch_tanh" || act == "gelu_fast")
        return "gelu_new";
    throw r.fail("field '" + std::string(key) + "' = \"" + act +
                 "\" is not supported; allowed: silu, gelu, gelu_new, gelu_pytorch_tanh");
}

std::string numberText(double v)
{
    std::ostringstream s;
    s << v;
    return s.str();
}

// longrope (Phi-3 style): short_factor and long_factor lists; L = original_max_position_embeddings, top-level (Phi-3)
// or in the rope dict, and then s = max_position_embeddings / L as modeling_rope_utils.py takes it; without it
// L = max_position_embeddings and s = the dict's factor. The lists' length is checked against the rotary dims later
// (hfPositionSpec, validateRotaryScaling).
void readLongrope(const ConfigReader& r, HfConfig& c, const json& rope, const std::string& where)
{
    c.scaling = "longrope";
    auto list = [&](const char* key, std::vector<double>& out) {
        if (!rope.contains(key) || !rope[key].is_array() || rope[key].empty())
            throw r.fail("field '" + where + "." + key +
                         "' is missing or not a list; rope type 'longrope' needs a list of positive numbers, one per "
                         "rotated pair");
        for (size_t i = 0; i < rope[key].size(); ++i)
            out.push_back(r.positiveNumber(rope[key][i], where + "." + key + "[" + std::to_string(i) + "]"));
    };
    list("short_factor", c.longropeShort);
    list("long_factor", c.longropeLong);
    const int maxPositions = r.positiveInt("max_position_embeddings");
    int original = 0;
    if (r.has("original_max_position_embeddings"))
        original = r.positiveInt("original_max_position_embeddings");
    else if (rope.contains("original_max_position_embeddings") && !rope["original_max_position_embeddings"].is_null())
        original =
            r.positiveIntFrom(rope["original_max_position_embeddings"], where + ".original_max_position_embeddings");
    double factor = 1;
    if (original > 0) {
        factor = static_cast<double>(maxPositions) / original;
        c.scalingSettings.push_back("original-context=" + std::to_string(original));
    } else if (rope.contains("factor") && !rope["factor"].is_null()) {
        factor = r.positiveNumber(rope["factor"], where + ".factor");
    }
    if (factor < 1)
        throw r.fail("longrope's factor " + numberText(factor) +
                     (original > 0 ? " (max_position_embeddings / original_max_position_embeddings)" : "") +
                     " is not allowed; allowed: at least 1");
    c.scalingSettings.push_back("factor=" + numberText(factor));
    if (rope.contains("attention_factor") && !rope["attention_factor"].is_null())
        c.scalingSettings.push_back(
            "attention-factor=" + numberText(r.positiveNumber(rope["attention_factor"], where + ".attention_factor")));
}

// Gemma's proportional rope (modeling_rope_utils.py's _compute_proportional_rope_parameters): the whole head's pairs
// (i, i + head_dim/2), θ_i = theta^(-2i/head_dim) for the first rope_angles = int(partial_rotary_factor x head_dim //
// 2) pairs (rounded down) and 0 for the rest, all divided by the dict's factor (default 1). In the lab's words: rope
// over the whole head with keep = rope_angles / (head_dim/2), a fraction whose keptPairs (round half up) gives back
// exactly rope_angles, and pi with that factor when it is not 1.
void readProportional(const ConfigReader& r, HfConfig& c, const json& rope, const std::string& where)
{
    const double proportion = c.rotaryFraction;
    const int pairs = c.headDim / 2;
    const int angles = static_cast<int>(std::floor(proportion * c.headDim / 2));
    if (angles < 1 || angles > pairs)
        throw r.fail("field '" + where + ".partial_rotary_factor' = " + numberText(proportion) + " turns int(" +
                     numberText(proportion) + " x head_dim " + std::to_string(c.headDim) +
                     " // 2) = " + std::to_string(angles) + " pairs under rope type 'proportional'; allowed: 1 to " +
                     std::to_string(pairs) + " pairs (a factor in [" + numberText(2.0 / c.headDim) + ", 1])");
    c.rotaryFraction = 1; // proportional rope always spans the whole head
    c.ropeKeep = static_cast<double>(angles) / pairs;
    const double factor =
        rope.contains("factor") && !rope["factor"].is_null() ? r.positiveNumber(rope["factor"], where + ".factor") : 1;
    c.scaling = factor == 1 ? "none" : "pi";
    if (factor != 1)
        c.scalingSettings.push_back("factor=" + numberText(factor));
}

bool isLayerTypeKey(const std::string& key)
{
    return key.size() > 10 && key.compare(key.size() - 10, 10, "_attention") == 0;
}

// modeling_rope_utils.py's yarn: without attention_factor, mscale and mscale_all_dim together give it as
// get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim), get_mscale(s, m) = 0.1 m ln s + 1 (1 for s <= 1);
// either alone leaves the default.
void yarnMscale(const ConfigReader& r, HfConfig& c, const json& rope, const std::string& where)
{
    auto number = [&](const char* key) -> const json* {
        return rope.contains(key) && !rope[key].is_null() ? &rope[key] : nullptr;
    };
    const json* mscale = number("mscale");
    const json* mscaleAll = number("mscale_all_dim");
    if (number("attention_factor") || !mscale || !mscaleAll)
        return;
    const double factor = r.positiveNumber(*number("factor"), where + ".factor");
    auto get = [&](double m) { return factor <= 1 ? 1.0 : 0.1 * m * std::log(factor) + 1.0; };
    c.scalingSettings.push_back("attention-factor=" +
                                numberText(get(r.positiveNumber(*mscale, where + ".mscale")) /
                                           get(r.positiveNumber(*mscaleAll, where + ".mscale_all_dim"))));
}

// One rope dict into c's table: rope_theta (the dict's, else `theta`), partial_rotary_factor, the type and its
// settings as the lab's method.
void readRopeDict(const ConfigReader& r, HfConfig& c, const json& rope, const std::string& where, double theta);

// The rope dicts of every spelling: transformers v5's rope_parameters (flat, or keyed by layer type), or rope_scaling
// (type / rope_type) beside a top-level rope_theta (`thetaKey` names the family's own: rotary_emb_base for gpt_neox).
// The sliding layers' own table: a keyed dict's sliding_attention entry, or v4's rope_local_base_freq (gemma3).
void readRope(const ConfigReader& r, HfConfig& c, const char* thetaKey, double thetaDefault)
{
    const double theta = r.has("rope_theta") ? r.positiveNumber(r.root["rope_theta"], "rope_theta")
                                             : r.positiveNumber(thetaKey, thetaDefault);
    const char* key = r.has("rope_parameters") ? "rope_parameters" : r.has("rope_scaling") ? "rope_scaling" : nullptr;
    if (!key) {
        readRopeDict(r, c, json::object(), "", theta);
    } else if (!r.root[key].is_object()) {
        throw r.wrong(key, r.root[key], "an object");
    } else if (std::any_of(r.root[key].items().begin(), r.root[key].items().end(),
                           [](const auto& item) { return isLayerTypeKey(item.key()); })) {
        const json& keyed = r.root[key];
        for (const auto& item : keyed.items())
            if (item.key() != "full_attention" && item.key() != "sliding_attention" &&
                item.key() != "chunked_attention")
                throw r.fail("field '" + std::string(key) + "." + item.key() +
                             "' names an unknown layer type; allowed: full_attention, sliding_attention, "
                             "chunked_attention");
        readRopeDict(r, c, keyed.contains("full_attention") ? keyed["full_attention"] : json::object(),
                     std::string(key) + ".full_attention", theta);
        if (keyed.contains("sliding_attention")) {
            HfConfig local = c;
            local.scalingSettings.clear();
            readRopeDict(r, local, keyed["sliding_attention"], std::string(key) + ".sliding_attention", theta);
            c.slidingRopeTheta = local.ropeTheta;
            c.slidingScaling = local.scaling;
            c.slidingScalingSettings = local.scalingSettings;
            c.slidingRopeKeep = local.ropeKeep;
            c.slidingYarnTruncate = local.yarnTruncate;
        }
    } else {
        readRopeDict(r, c, r.root[key], key, theta);
    }
    if (r.has("rope_local_base_freq") && c.slidingRopeTheta == 0) // gemma3 v4: sliding layers' default rope
        c.slidingRopeTheta = r.positiveNumber(r.root["rope_local_base_freq"], "rope_local_base_freq");
}

namespace {

// A rope dict's type: rope_type (v5) or type (v4), "default" when neither is given.
std::string ropeTypeOf(const ConfigReader& r, const json& rope, const std::string& where)
{
    for (const char* key : {"rope_type", "type"})
        if (rope.contains(key) && !rope[key].is_null()) {
            if (!rope[key].is_string())
                throw r.wrong(where + "." + key, rope[key], "a string");
            return rope[key].get<std::string>();
        }
    return "default";
}

// How the card names a rope dict's method: its type with the settings read ("yarn (factor=4, ...)").
std::string scalingTextOf(const HfConfig& c, const std::string& type)
{
    std::string text = type;
    std::string list;
    for (const std::string& s : c.scalingSettings)
        list += (list.empty() ? "" : ", ") + s;
    if (c.ropeKeep < 1)
        list += (list.empty() ? "" : ", ") + std::string("keep=") + numberText(c.ropeKeep);
    if (!c.yarnTruncate)
        list += ", truncate=false";
    if (!list.empty())
        text += " (" + list + ")";
    return text;
}

} // namespace

void readRopeDict(const ConfigReader& r, HfConfig& c, const json& rope, const std::string& where, double theta)
{
    if (!rope.is_object())
        throw r.fail("field '" + where + "' is not an object");
    c.ropeTheta = theta;
    c.ropeKeep = 1;
    c.yarnTruncate = true;
    if (rope.contains("rope_theta"))
        c.ropeTheta = r.positiveNumber(rope["rope_theta"], where + ".rope_theta");
    if (rope.contains("partial_rotary_factor"))
        c.rotaryFraction = r.positiveNumber(rope["partial_rotary_factor"], where + ".partial_rotary_factor");
    const std::string type = ropeTypeOf(r, rope, where);
    auto number = [&](const char* key) -> const json* {
        return rope.contains(key) && !rope[key].is_null() ? &rope[key] : nullptr;
    };
    auto set = [&](const char* key, const char* labName) {
        if (const json* v = number(key))
            c.scalingSettings.push_back(std::string(labName) + "=" +
                                        numberText(r.positiveNumber(*v, where + "." + key)));
    };
    auto needFactor = [&] {
        if (!number("factor"))
            throw r.fail("field '" + where + ".factor' is missing; rope type '" + type + "' needs it");
        set("factor", "factor");
    };
    if (type == "default") {
        c.scaling = "none";
    } else if (type == "linear") {
        c.scaling = "pi";
        needFactor();
    } else if (type == "dynamic") {
        c.scaling = "dynamic-ntk";
        needFactor();
        set("original_max_position_embeddings", "original-context");
    } else if (type == "yarn") {
        c.scaling = "yarn";
        needFactor();
        set("beta_fast", "beta-fast");
        set("beta_slow", "beta-slow");
        set("attention_factor", "attention-factor");
        set("original_max_position_embeddings", "original-context");
        yarnMscale(r, c, rope, where);
        if (rope.contains("truncate") && !rope["truncate"].is_null()) {
            if (!rope["truncate"].is_boolean())
                throw r.wrong(where + ".truncate", rope["truncate"], "true, false");
            c.yarnTruncate = rope["truncate"].get<bool>();
        }
    } else if (type == "llama3") {
        c.scaling = "llama3";
        needFactor();
        set("low_freq_factor", "low-freq-factor");
        set("high_freq_factor", "high-freq-factor");
        set("original_max_position_embeddings", "original-context");
    } else if (type == "longrope") {
        readLongrope(r, c, rope, where);
    } else if (type == "proportional") {
        readProportional(r, c, rope, where);
    } else {
        throw r.fail("field '" + where + ".rope_type' = \"" + type +
                     "\" is not supported; allowed: default, linear (pi), dynamic (dynamic-ntk), yarn, llama3, "
                     "longrope, proportional");
    }
    if (c.scaling != "none" || c.ropeKeep < 1)
        c.scalingText = scalingTextOf(c, type);
}

void finishRotary(const ConfigReader& r, HfConfig& c)
{
    const int dim = static_cast<int>(c.headDim * c.rotaryFraction);
    if (c.rotaryFraction > 1 || dim < 2 || dim % 2)
        throw r.fail("the rotary dims int(head_dim " + std::to_string(c.headDim) + " x partial rotary factor " +
                     numberText(c.rotaryFraction) + ") = " + std::to_string(dim) +
                     " are not allowed; allowed: an even number in [2, head_dim]");
    c.rotaryDim = dim;
    for (const auto* list : {&c.longropeShort, &c.longropeLong})
        if (!list->empty() && static_cast<int>(list->size()) != dim / 2)
            throw r.fail("field 'rope_scaling." + std::string(list == &c.longropeShort ? "short" : "long") +
                         "_factor' holds " + std::to_string(list->size()) + " values; allowed: one per rotated pair, " +
                         std::to_string(dim / 2) + " (rotary dims " + std::to_string(dim) + " / 2)");
}

// layer_types in every spelling transformers has used, into c.layerTypes, with the windows their types need:
// layer_types itself; sliding_window_pattern P (gemma3, cohere2: layer i slides unless (i + 1) % P == 0); else the
// family's default, `fallback` (gemma2's alternation, qwen's use_sliding_window + max_window_layers, mistral's
// top-level sliding_window on every layer), given as one type per layer.
std::vector<HfLayerType> slidingPattern(int layers, int period)
{
    std::vector<HfLayerType> types(layers);
    for (int i = 0; i < layers; ++i)
        types[i] = (i + 1) % period ? HfLayerType::Sliding : HfLayerType::Full;
    return types;
}

void readLayerTypes(const ConfigReader& r, HfConfig& c, const std::vector<HfLayerType>& fallback, int windowDefault)
{
    c.layerTypes = fallback;
    if (r.has("layer_types")) {
        const json& list = r.root["layer_types"];
        if (!list.is_array() || static_cast<int>(list.size()) != c.layers)
            throw r.fail("field 'layer_types' must be a list of " + std::to_string(c.layers) +
                         " entries (one per layer, num_hidden_layers); allowed values: full_attention, "
                         "sliding_attention, chunked_attention");
        for (int i = 0; i < c.layers; ++i) {
            const std::string word = list[i].is_string() ? list[i].get<std::string>() : jsonExcerpt(list[i]);
            if (word == "full_attention")
                c.layerTypes[i] = HfLayerType::Full;
            else if (word == "sliding_attention")
                c.layerTypes[i] = HfLayerType::Sliding;
            else if (word == "chunked_attention")
                c.layerTypes[i] = HfLayerType::Chunked;
            else
                throw r.fail("field 'layer_types' entry " + std::to_string(i) + " = \"" + word +
                             "\" is not allowed; allowed: full_attention, sliding_attention, chunked_attention");
        }
    } else if (r.has("sliding_window_pattern")) {
        c.layerTypes = slidingPattern(c.layers, r.positiveInt("sliding_window_pattern"));
    }
    const auto uses = [&](HfLayerType t) {
        return std::find(c.layerTypes.begin(), c.layerTypes.end(), t) != c.layerTypes.end();
    };
    if (uses(HfLayerType::Sliding)) {
        if (!r.has("sliding_window") && windowDefault > 0)
            c.slidingWindow = windowDefault;
        else if (!r.has("sliding_window"))
            throw r.fail("field 'sliding_window' is missing; sliding_attention layers need it (a positive integer)");
        else
            c.slidingWindow = r.positiveInt("sliding_window");
    }
    if (uses(HfLayerType::Chunked)) {
        if (!r.has("attention_chunk_size"))
            throw r.fail("field 'attention_chunk_size' is missing; chunked_attention layers need it (a positive "
                         "integer)");
        c.chunkSize = r.positiveInt("attention_chunk_size");
    }
}

// 4 x the hidden size (gpt2's default n_inner, bloom's MLP), refused by name when it overflows the lab's sizes.
int fourTimes(const ConfigReader& r, const char* key, int hidden)
{
    const long long width = 4LL * hidden;
    if (width > (1LL << 30))
        throw r.fail("the MLP width 4 x " + std::string(key) + " = " + std::to_string(width) +
                     " is not allowed; allowed: " + key + " up to 2^28");
    return static_cast<int>(width);
}

// Sizes a config implies, in checked 64-bit arithmetic: every field alone may be up to 2^30, but their products size
// tensors and reach int arithmetic in the forward, and the parameter total reaches casts in messages. Refused by name.
void checkSizes(const ConfigReader& r, const HfConfig& c)
{
    if (c.heads > kMaxHeads)
        throw r.fail("the number of attention heads " + std::to_string(c.heads) + " is not allowed; allowed: 1 to " +
                     std::to_string(kMaxHeads));
    constexpr long long kMaxValues = 1LL << 40; // one tensor: 4 TiB in float32, past any model the lab could hold
    const auto product = [&](const std::string& what, long long a, long long b, long long limit) {
        long long out = 0;
        if (__builtin_mul_overflow(a, b, &out) || out > limit)
            throw r.fail(what + ": " + std::to_string(a) + " x " + std::to_string(b) +
                         " values is absurd; allowed: at most 2^" +
                         std::to_string(std::bit_width(uint64_t(limit)) - 1));
    };
    product("the attention width (heads x head_dim)", c.heads, c.headDim, 1LL << 30);
    product("the key/value width (key/value heads x head_dim)", c.kvHeads, c.headDim, 1LL << 30);
    product("the embedding (vocab_size x hidden size)", c.vocab, c.hidden, kMaxValues);
    product("a query projection (heads x head_dim x hidden size)", 1LL * c.heads * c.headDim, c.hidden, kMaxValues);
    product("an MLP projection (intermediate size x hidden size)", c.intermediate, c.hidden, kMaxValues);
    if (c.family == HfFamily::Gpt2)
        product("the position table (n_positions x n_embd)", c.context, c.hidden, kMaxValues);
    const double parameters = c.parameterCount();
    if (!(parameters <= 0x1p50))
        throw r.fail("the sizes describe about " + numberText(parameters) +
                     " parameters, which is absurd; allowed: at most 2^50 (num_hidden_layers " +
                     std::to_string(c.layers) + ", hidden size " + std::to_string(c.hidden) + ")");
}

} // namespace hf_detail

using hf_detail::ConfigReader;
using hf_detail::json;

const std::vector<std::string>& supportedModelTypes()
{
    static const std::vector<std::string> types = [] {
        std::vector<std::string> out;
        for (const HfFamilyRow& row : hfFamilyTable())
            out.push_back(row.modelType);
        return out;
    }();
    return types;
}

std::optional<std::string> hfOutOfScopeReason(std::string_view modelType)
{
    static const std::vector<std::pair<std::vector<std::string_view>, std::string_view>> outOfScope = {
        {{"mixtral", "qwen2_moe", "qwen3_moe", "gpt_oss", "olmoe", "granitemoe", "granitemoeshared", "phimoe", "dbrx",
          "jetmoe", "llama4", "llama4_text", "deepseek"},
         "a mixture-of-experts model (a router picks experts per token; the lab's blocks have one MLP)"},
        {{"deepseek_v2", "deepseek_v3", "kimi_k2"},
         "multi-head latent attention (keys and values through a shared low-rank latent, with a decoupled rotary "
         "part), which the lab's attention does not have"},
        {{"mamba", "mamba2", "falcon_mamba", "jamba", "falcon_h1", "zamba", "zamba2", "bamba", "granitemoehybrid",
          "nemotron_h", "rwkv", "recurrent_gemma"},
         "a state-space or recurrent hybrid (Mamba or RNN layers beside attention); the lab runs attention-only "
         "transformers"},
        {{"llava", "llava_next", "llava_onevision", "qwen2_vl", "qwen2_5_vl", "mllama", "idefics3", "paligemma",
          "smolvlm", "pixtral", "mistral3", "internvl"},
         "a multimodal model (a vision encoder beside the language model); the lab reads text-only folders"},
    };
    for (const auto& [types, reason] : outOfScope)
        if (std::find(types.begin(), types.end(), modelType) != types.end())
            return std::string(reason);
    return std::nullopt;
}

std::optional<std::string> hfOutOfScopeTensorReason(std::string_view tensorName)
{
    // The spellings of transformers' multimodal models: a vision tower and the projector into the text model.
    for (const std::string_view part : {"vision_tower.", "vision_model.", "visual.", "multi_modal_projector.",
                                        "vision_embed_tokens.", "image_newline", "vision_encoder."})
        if (tensorName.starts_with(part) ||
            tensorName.find(std::string(".") + std::string(part)) != std::string_view::npos)
            return "it belongs to a vision encoder (" + std::string(part) +
                   "...); the lab runs the text model only, so a multimodal folder is refused rather than opened "
                   "without its vision part";
    return std::nullopt;
}

const char* hfLayerTypeName(HfLayerType type)
{
    switch (type) {
    case HfLayerType::Full:
        return "full_attention";
    case HfLayerType::Sliding:
        return "sliding_attention";
    case HfLayerType::Chunked:
        return "chunked_attention";
    }
    return "";
}

std::string hfLayerStrip(const HfConfig& config)
{
    std::string strip;
    for (const HfLayerType t : config.layerTypes)
        strip += t == HfLayerType::Sliding ? 'S' : t == HfLayerType::Chunked ? 'C' : 'F';
    return strip;
}

bool HfConfig::hasSliding() const
{
    return std::find(layerTypes.begin(), layerTypes.end(), HfLayerType::Sliding) != layerTypes.end();
}

double HfConfig::parameterCount() const
{
    const double C = hidden, D = headDim, H = heads, K = kvHeads, F = intermediate, V = vocab;
    double attention = C * D * (H + 2 * K) + H * D * C;
    if (qkvBias)
        attention += D * (H + 2 * K);
    if (outputBias)
        attention += C;
    double mlp = (swiGlu ? 3 : 2) * C * F + (mlpBias ? F + C : 0);
    const double perNorm = norm == HfNormKind::LayerNorm ? 2 * C : C;
    const double blockNorms = sharedNorm ? 1 : normPlace == HfNormPlace::BeforeAndAfter ? 4 : 2;
    const double qk = qkNorm == HfQkNorm::PerHead ? 2 * D : qkNorm == HfQkNorm::WholeProjection ? (H + K) * D : 0;
    double total = layers * (attention + mlp + blockNorms * perNorm + qk) + V * C + (tiedHead ? 0 : V * C) + perNorm;
    if (family == HfFamily::Gpt2)
        total += static_cast<double>(context) * C;
    if (family == HfFamily::Bloom)
        total += 2 * C;
    return total;
}

double HfConfig::prefillFlops(int length) const
{
    const double C = hidden, D = headDim, H = heads, K = kvHeads, F = intermediate, T = length;
    const double weights = layers * (C * D * (H + 2 * K) + H * D * C + (swiGlu ? 3 : 2) * C * F) + double(vocab) * C;
    // A visible pair costs at least what it costs at D = 64: below that the softmax, masks and tile overheads, not the
    // products, set the kernel's time (measured on 2 Zen 4 cores: 1.9 ns a pair for a D = 8 folder's 200000-token
    // forward, against 1.4 ns at D = 64), and an estimate by D alone came out 4.4x short.
    const double pairDim = std::max(headDim, 64);
    return 2 * weights * T + layers * 4 * pairDim * H * T * (T + 1) / 2;
}

HfConfig readHfConfig(const std::string& folder)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(folder, ec))
        throw InputError("model folder " + folder + " does not exist or is not a folder");
    const std::string file = (fs::path(folder) / "config.json").string();
    if (!fs::exists(file, ec))
        throw InputError("model folder " + folder +
                         " has no config.json; a Hugging Face model folder holds config.json, the weights "
                         "(model.safetensors or shards with model.safetensors.index.json) and tokenizer.json");
    const json root = readUntrustedJsonFile(file);
    if (!root.is_object())
        throw InputError(file + " holds " + jsonKindName(root) + " (" + jsonExcerpt(root) +
                         "); allowed: a JSON object of the model's settings");
    const ConfigReader r{root, file};
    HfConfig c;
    c.folder = folder;
    std::string supported;
    for (const std::string& t : supportedModelTypes())
        supported += (supported.empty() ? "" : ", ") + t;
    if (!r.has("model_type"))
        throw r.fail("field 'model_type' is missing; allowed: one of " + supported);
    if (!root["model_type"].is_string())
        throw r.wrong("model_type", root["model_type"], "a string, one of " + supported);
    c.modelType = root["model_type"].get<std::string>();
    if (const std::optional<std::string> reason = hfOutOfScopeReason(c.modelType))
        throw r.fail("model_type \"" + c.modelType + "\" is out of scope: " + *reason + "; supported: " + supported);
    const HfFamilyRow* row = hfFamilyRow(c.modelType);
    if (!row) {
        throw r.fail("model_type \"" + c.modelType + "\" is not supported; supported: " + supported);
    }
    applyFamilyRow(*row, r, c);
    if (c.heads % c.kvHeads)
        throw r.fail("num_attention_heads = " + std::to_string(c.heads) +
                     " is not a multiple of num_key_value_heads = " + std::to_string(c.kvHeads));
    if (c.family != HfFamily::Llama && c.hidden % c.heads)
        throw r.fail("the hidden size " + std::to_string(c.hidden) + " is not a multiple of the heads " +
                     std::to_string(c.heads));
    checkSizes(r, c);
    return c;
}

SchemeSpec hfPositionSpec(const HfConfig& config, std::string_view scaling, const std::vector<std::string>& settings)
{
    if (config.scheme != "rope") {
        if (!scaling.empty() && scaling != "none")
            throw InputError("scaling " + std::string(scaling) + " is not allowed for " + config.modelType +
                             " (positions: " + config.scheme + "); rotary methods apply to rope models only");
        if (!settings.empty())
            throw InputError("setting '" + settings.front() + "' is not allowed for " + config.modelType +
                             " (positions: " + config.scheme + "), which has no method parameters");
        return makeSchemeSpec(config.scheme == "alibi" ? "alibi" : "none", config.heads, false);
    }
    const std::string method = scaling.empty() ? config.scaling : std::string(scaling);
    std::vector<std::string> assignments = {"dim=" + std::to_string(config.rotaryDim),
                                            "base=" + exactText(config.ropeTheta)};
    if (config.ropeKeep < 1) // proportional rope: the pairs past rope_angles do not turn, whatever the method
        assignments.push_back("keep=" + exactText(config.ropeKeep));
    try { // the config's own rope alone, so that a value it cannot hold (rope_theta 2^63) is refused naming the file
        std::vector<std::string> own = assignments;
        own.insert(own.end(), config.scalingSettings.begin(), config.scalingSettings.end());
        (void)makeSchemeSpec("rope", config.heads, false, own, config.context, false, config.scaling);
    } catch (const InputError& e) {
        throw InputError(config.folder + "/config.json: " + e.what() +
                         " (the rope base is rope_theta, its dims head_dim x partial_rotary_factor)");
    }
    if (method == config.scaling)
        assignments.insert(assignments.end(), config.scalingSettings.begin(), config.scalingSettings.end());
    const RotaryMethodInfo& info = rotaryMethodByName(method);
    for (const std::string& s : settings)
        checkMethodSetting(info, s);
    assignments.insert(assignments.end(), settings.begin(), settings.end());
    SchemeSpec spec = makeSchemeSpec("rope", config.heads, false, assignments, config.context, false, method);
    if (method == config.scaling) // the config's own yarn keeps its truncate, as its own settings
        spec.yarnTruncate = config.yarnTruncate;
    if (method == "longrope" && method == config.scaling) { // the config's own lists; another model's have none
        spec.shortFactors = config.longropeShort;
        spec.longFactors = config.longropeLong;
        try {
            validateRotaryScaling(spec);
        } catch (const InputError& e) {
            throw InputError(config.folder + "/config.json: " + e.what());
        }
    }
    return spec;
}

SchemeSpec hfSlidingPositionSpec(const HfConfig& config)
{
    if (config.slidingRopeTheta <= 0)
        return hfPositionSpec(config);
    HfConfig local = config;
    local.ropeTheta = config.slidingRopeTheta;
    local.scaling = config.slidingScaling;
    local.scalingSettings = config.slidingScalingSettings;
    local.ropeKeep = config.slidingRopeKeep;
    local.yarnTruncate = config.slidingYarnTruncate;
    local.longropeShort.clear();
    local.longropeLong.clear();
    return hfPositionSpec(local);
}

std::string hfPositionText(const SchemeSpec& spec)
{
    if (spec.kind != SchemeKind::Rope)
        return spec.kind == SchemeKind::Alibi ? "alibi" : "learned";
    std::string text = schemeLabel(spec);
    std::string list;
    if (spec.params.count("keep") && spec.params.at("keep") < 1) // p-RoPE (proportional): part of the head turns
        list = "keep " + exactText(spec.params.at("keep"));
    for (const ParamInfo& p : rotaryMethodInfo(spec.scaling).params)
        list += (list.empty() ? "" : ", ") + p.name + " " + exactText(spec.scalingParams.at(p.name));
    if (spec.scaling == RotaryMethod::Yarn && !spec.yarnTruncate)
        list += ", truncate false";
    return list.empty() ? text : text + " (" + list + ")";
}

} // namespace plab

namespace plab {

int hfMaxLength(const HfConfig& config)
{
    return config.scheme == "learned" ? config.context : kMaxLength;
}

void checkHfLength(const HfConfig& config, int length)
{
    const int longest = hfMaxLength(config);
    if (length <= longest)
        return;
    throw InputError(std::to_string(length) + " tokens is more than the " + std::to_string(longest) +
                     (config.scheme == "learned" ? " learned positions of " + config.modelType + " (n_positions in " +
                                                       config.folder + "/config.json)"
                                                 : " tokens the lab's kernel takes") +
                     "; allowed: lengths up to " + std::to_string(longest));
}

} // namespace plab
