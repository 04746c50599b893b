// config.json of each family read field by field (both rope spellings), and rope scaling mapped onto the lab's methods.
#include "hf/hf_config.h"

#include "base/errors.h"
#include "base/json_input.h"
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

namespace {

using nlohmann::json;

// Messages about one config.json name the file and the field.
struct ConfigReader {
    const json& root;
    std::string file;

    InputError fail(const std::string& what) const { return InputError(file + ": " + what); }

    bool has(const char* key) const { return root.contains(key) && !root[key].is_null(); }
    // "field 'KEY' = VALUE is not allowed (it is an array); allowed: WHAT": an excerpt of the value, never all of it,
    // and what it is when that is what is wrong (`rightType` false).
    InputError wrong(const std::string& key, const json& v, const std::string& allowed, bool rightType = false) const
    {
        return fail("field '" + key + "' = " + jsonExcerpt(v) + " is not allowed" +
                    (rightType ? "" : " (it is " + jsonKindName(v) + ")") + "; allowed: " + allowed);
    }

    int positiveInt(const char* key) const
    {
        if (!has(key))
            throw fail("field '" + std::string(key) + "' is missing; it must be a positive integer");
        return positiveIntFrom(root[key], key);
    }
    int positiveInt(const char* key, int fallback) const
    {
        return has(key) ? positiveIntFrom(root[key], key) : fallback;
    }
    int positiveIntFrom(const json& v, const std::string& key) const
    {
        if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > (1ll << 30))
            throw wrong(key, v, "a positive integer up to 2^30", v.is_number_integer());
        return static_cast<int>(v.get<long long>());
    }
    double positiveNumber(const json& v, const std::string& key) const
    {
        if (!v.is_number() || !(v.get<double>() > 0) || !std::isfinite(v.get<double>()))
            throw wrong(key, v, "a positive finite number", v.is_number());
        return v.get<double>();
    }
    double positiveNumber(const char* key, double fallback) const
    {
        return has(key) ? positiveNumber(root[key], key) : fallback;
    }
    bool flag(const char* key, bool fallback) const
    {
        if (!has(key))
            return fallback;
        if (!root[key].is_boolean())
            throw wrong(key, root[key], "true, false");
        return root[key].get<bool>();
    }
    std::string text(const char* key, const std::string& fallback) const
    {
        if (!has(key))
            return fallback;
        if (!root[key].is_string())
            throw wrong(key, root[key], "a string");
        return root[key].get<std::string>();
    }
};

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

// The rope dict of either spelling: transformers v5's rope_parameters, or rope_scaling (type / rope_type) beside a
// top-level rope_theta (`thetaKey` names the family's own: rotary_emb_base for gpt_neox).
void readRope(const ConfigReader& r, HfConfig& c, const char* thetaKey, double thetaDefault)
{
    // A reference, never a copy: copying a value recurses once per level of its nesting.
    static const json noRope = json::object();
    const json* ropeDict = &noRope;
    std::string where;
    for (const char* key : {"rope_parameters", "rope_scaling"})
        if (r.has(key)) {
            if (!r.root[key].is_object())
                throw r.wrong(key, r.root[key], "an object");
            ropeDict = &r.root[key];
            where = key;
            break;
        }
    const json& rope = *ropeDict;
    c.ropeTheta = r.has("rope_theta") ? r.positiveNumber(r.root["rope_theta"], "rope_theta")
                                      : r.positiveNumber(thetaKey, thetaDefault);
    if (rope.contains("rope_theta"))
        c.ropeTheta = r.positiveNumber(rope["rope_theta"], where + ".rope_theta");
    if (rope.contains("partial_rotary_factor"))
        c.rotaryFraction = r.positiveNumber(rope["partial_rotary_factor"], where + ".partial_rotary_factor");
    std::string type = "default";
    for (const char* key : {"rope_type", "type"})
        if (rope.contains(key) && !rope[key].is_null()) {
            if (!rope[key].is_string())
                throw r.wrong(where + "." + key, rope[key], "a string");
            type = rope[key].get<std::string>();
            break;
        }
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
        for (const char* unsupported : {"mscale", "mscale_all_dim"})
            if (number(unsupported))
                throw r.fail("field '" + where + "." + unsupported +
                             "' (DeepSeek's yarn variant) is not supported; allowed: factor, beta_fast, beta_slow, "
                             "attention_factor, original_max_position_embeddings");
        if (rope.contains("truncate") && rope["truncate"] == false)
            throw r.fail("field '" + where + ".truncate' = false is not supported; the lab's yarn truncates the ramp");
    } else if (type == "llama3") {
        c.scaling = "llama3";
        needFactor();
        set("low_freq_factor", "low-freq-factor");
        set("high_freq_factor", "high-freq-factor");
        set("original_max_position_embeddings", "original-context");
    } else if (type == "longrope") {
        readLongrope(r, c, rope, where);
    } else {
        throw r.fail("field '" + where + ".rope_type' = \"" + type +
                     "\" is not supported; allowed: default, linear (pi), dynamic (dynamic-ntk), yarn, llama3, "
                     "longrope");
    }
    if (c.scaling != "none") {
        c.scalingText = type;
        std::string list;
        for (const std::string& s : c.scalingSettings)
            list += (list.empty() ? "" : ", ") + s;
        if (!list.empty())
            c.scalingText += " (" + list + ")";
    }
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

void readLlama(const ConfigReader& r, HfConfig& c)
{
    c.family = HfFamily::Llama;
    c.hidden = r.positiveInt("hidden_size");
    c.layers = r.positiveInt("num_hidden_layers");
    c.heads = r.positiveInt("num_attention_heads");
    c.kvHeads = r.positiveInt("num_key_value_heads", c.heads);
    c.headDim = r.positiveInt("head_dim", c.hidden / c.heads);
    c.intermediate = r.positiveInt("intermediate_size");
    c.vocab = r.positiveInt("vocab_size");
    c.context = r.positiveInt("max_position_embeddings");
    c.normEps = r.positiveNumber("rms_norm_eps", 1e-6);
    c.activation = activationOf(r, "hidden_act", "silu");
    c.tiedHead = r.flag("tie_word_embeddings", false);
    c.qkvBias = c.modelType == "qwen2" || r.flag("attention_bias", false);
    c.outputBias = c.modelType != "qwen2" && r.flag("attention_bias", false);
    c.mlpBias = r.flag("mlp_bias", false);
    c.qkNorm = c.modelType == "qwen3";
    c.scheme = "rope";
    c.rotaryFraction = r.positiveNumber("partial_rotary_factor", 1.0);
    readRope(r, c, "rope_theta", 10000.0);
    finishRotary(r, c);
    c.ropeLayers.assign(c.layers, true);
    if (c.modelType == "smollm3") {
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
    const bool useSliding = c.modelType == "mistral" || r.flag("use_sliding_window", false);
    if (useSliding && r.has("sliding_window"))
        c.slidingWindow = r.positiveInt("sliding_window");
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

void readGpt2(const ConfigReader& r, HfConfig& c)
{
    c.family = HfFamily::Gpt2;
    c.hidden = r.positiveInt("n_embd");
    c.layers = r.positiveInt("n_layer");
    c.heads = c.kvHeads = r.positiveInt("n_head");
    c.headDim = c.hidden / c.heads;
    c.intermediate = r.has("n_inner") ? r.positiveInt("n_inner") : fourTimes(r, "n_embd", c.hidden);
    c.vocab = r.positiveInt("vocab_size");
    c.context = r.positiveInt("n_positions");
    c.rmsNorm = false;
    c.normEps = r.positiveNumber("layer_norm_epsilon", 1e-5);
    c.activation = activationOf(r, "activation_function", "gelu_new");
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
    c.family = HfFamily::GptNeox;
    c.hidden = r.positiveInt("hidden_size");
    c.layers = r.positiveInt("num_hidden_layers");
    c.heads = c.kvHeads = r.positiveInt("num_attention_heads");
    c.headDim = c.hidden / c.heads;
    c.intermediate = r.positiveInt("intermediate_size");
    c.vocab = r.positiveInt("vocab_size");
    c.context = r.positiveInt("max_position_embeddings");
    c.rmsNorm = false;
    c.normEps = r.positiveNumber("layer_norm_eps", 1e-5);
    c.activation = activationOf(r, "hidden_act", "gelu");
    c.swiGlu = false;
    c.parallelResidual = r.flag("use_parallel_residual", true);
    c.tiedHead = r.flag("tie_word_embeddings", false);
    c.qkvBias = c.outputBias = r.flag("attention_bias", true);
    c.mlpBias = true;
    c.scheme = "rope";
    c.rotaryFraction = r.has("partial_rotary_factor") ? r.positiveNumber("partial_rotary_factor", 1.0)
                                                      : r.positiveNumber("rotary_pct", 0.25);
    readRope(r, c, "rotary_emb_base", 10000.0);
    finishRotary(r, c);
    c.ropeLayers.assign(c.layers, true);
}

void readBloom(const ConfigReader& r, HfConfig& c)
{
    c.family = HfFamily::Bloom;
    c.hidden = r.has("hidden_size") ? r.positiveInt("hidden_size") : r.positiveInt("n_embed");
    c.layers = r.positiveInt("n_layer");
    c.heads = c.kvHeads = r.positiveInt("n_head");
    c.headDim = c.hidden / c.heads;
    c.intermediate = fourTimes(r, r.has("hidden_size") ? "hidden_size" : "n_embed", c.hidden);
    c.vocab = r.positiveInt("vocab_size");
    c.context = r.positiveInt("seq_length", 2048); // ALiBi has no position table: the length it was trained at
    c.rmsNorm = false;
    c.normEps = r.positiveNumber("layer_norm_epsilon", 1e-5);
    c.activation = "gelu_new"; // bloom_gelu is the tanh approximation
    c.swiGlu = false;
    c.tiedHead = true;
    c.qkvBias = c.outputBias = c.mlpBias = true;
    c.scheme = "alibi";
    if (r.flag("apply_residual_connection_post_layernorm", false))
        throw r.fail("field 'apply_residual_connection_post_layernorm' = true is not supported; allowed: false");
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

} // namespace

const std::vector<std::string>& supportedModelTypes()
{
    static const std::vector<std::string> types = {"gpt2",    "bloom", "gpt_neox", "llama",
                                                   "mistral", "qwen2", "qwen3",    "smollm3"};
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

double HfConfig::parameterCount() const
{
    const double C = hidden, D = headDim, H = heads, K = kvHeads, F = intermediate, V = vocab;
    double attention = C * D * (H + 2 * K) + H * D * C;
    if (qkvBias)
        attention += D * (H + 2 * K);
    if (outputBias)
        attention += C;
    double mlp = (swiGlu ? 3 : 2) * C * F + (mlpBias ? F + C : 0);
    const double norms = (rmsNorm ? 2 : 4) * C + (qkNorm ? 2 * D : 0);
    double total = layers * (attention + mlp + norms) + V * C + (tiedHead ? 0 : V * C) + (rmsNorm ? C : 2 * C);
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
    return 2 * weights * T + layers * 4 * D * H * T * (T + 1) / 2;
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
    if (c.modelType == "gpt2")
        readGpt2(r, c);
    else if (c.modelType == "bloom")
        readBloom(r, c);
    else if (c.modelType == "gpt_neox")
        readNeox(r, c);
    else if (c.modelType == "llama" || c.modelType == "mistral" || c.modelType == "qwen2" || c.modelType == "qwen3" ||
             c.modelType == "smollm3")
        readLlama(r, c);
    else
        throw r.fail("model_type \"" + c.modelType + "\" is not supported; supported: " + supported);
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

std::string hfPositionText(const SchemeSpec& spec)
{
    if (spec.kind != SchemeKind::Rope)
        return spec.kind == SchemeKind::Alibi ? "alibi" : "learned";
    std::string text = schemeLabel(spec);
    std::string list;
    for (const ParamInfo& p : rotaryMethodInfo(spec.scaling).params)
        list += (list.empty() ? "" : ", ") + p.name + " " + exactText(spec.scalingParams.at(p.name));
    return list.empty() ? text : text + " (" + list + ")";
}

} // namespace plab

namespace plab {

int hfMaxLength(const HfConfig& config)
{
    if (config.scheme == "learned")
        return config.context;
    return config.slidingWindow > 0 ? std::min(config.slidingWindow, kMaxLength) : kMaxLength;
}

void checkHfLength(const HfConfig& config, int length)
{
    const int longest = hfMaxLength(config);
    if (length <= longest)
        return;
    throw InputError(
        std::to_string(length) + " tokens is more than the " + std::to_string(longest) +
        (config.scheme == "learned"
             ? " learned positions of " + config.modelType + " (n_positions in " + config.folder + "/config.json)"
             : " tokens " + config.modelType + " accepts (sliding_window in " + config.folder + "/config.json)") +
        "; allowed: lengths up to " + std::to_string(longest));
}

} // namespace plab
