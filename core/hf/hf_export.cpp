// Lab models as Hugging Face folders: gpt_neox (rope, NoPE) or gpt2 (learned, sinusoidal) config, weights, tokenizer.
#include "hf/hf_export.h"

#include "base/atomic_file.h"
#include "base/errors.h"
#include "base/safetensors.h"
#include "hf/unicode_text.h"
#include "model/layers.h"
#include "model/model.h"
#include "schemes/position_bias.h"
#include "schemes/rotary_scaling.h"

#include <unistd.h>

#include <cmath>
#include <deque>
#include <filesystem>
#include <random>

namespace plab {

namespace {

// The lab's LayerNorm epsilon (model/layers.h: layernormForward), written as the family's.
constexpr double kLabLayerNormEps = 1e-5;

// Why a scheme has no family: the text after "scheme S has no Hugging Face family that computes it exactly".
std::string noFamilyReason(const std::string& scheme)
{
    if (scheme == "alibi")
        return "bloom, the ALiBi family the loader reads, puts a LayerNorm after the embeddings "
               "(word_embeddings_layernorm) and ties its head to those embeddings: no weights make that LayerNorm the "
               "identity";
    if (scheme == "xpos")
        return "its decay scales q and k by ζ^(±m/s), which no family's rotary does";
    if (scheme == "local" || scheme == "bca")
        return "gpt_neox and gpt2 have no window, and the families with one use RMSNorm and a gated MLP";
    return "no family adds its bias, gate or learned positions to the scores";
}

// transformers' rope_scaling type of a lab method that core/hf reads back as that method (hf_config.cpp's
// readRopeDict), or null for a method no rope_type computes.
const char* hfRopeScalingType(const std::string& method)
{
    return method == "pi"            ? "linear"
           : method == "dynamic-ntk" ? "dynamic"
           : method == "yarn"        ? "yarn"
           : method == "llama3"      ? "llama3"
                                     : nullptr;
}

// config.json's rope_scaling of the model's method: readRopeDict's mapping read backwards, each parameter under its
// transformers name (original-context 0, attention-factor 0: left out, transformers' defaults are the lab's).
nlohmann::json ropeScalingJson(const SchemeSpec& spec, const std::string& method)
{
    static const std::vector<std::pair<const char*, const char*>> names = {
        {"factor", "factor"},
        {"original-context", "original_max_position_embeddings"},
        {"beta-fast", "beta_fast"},
        {"beta-slow", "beta_slow"},
        {"attention-factor", "attention_factor"},
        {"low-freq-factor", "low_freq_factor"},
        {"high-freq-factor", "high_freq_factor"}};
    const char* type = hfRopeScalingType(method);
    nlohmann::json j = {{"rope_type", type}, {"type", type}};
    for (const auto& [lab, hf] : names) {
        const auto it = spec.scalingParams.find(lab);
        if (it == spec.scalingParams.end())
            continue;
        const bool zeroMeansDefault = std::string(lab) == "original-context" || std::string(lab) == "attention-factor";
        if (zeroMeansDefault && it->second == 0)
            continue;
        if (std::string(lab) == "original-context")
            j[hf] = static_cast<int>(it->second);
        else
            j[hf] = it->second;
    }
    return j;
}

// yarn's factor on cos and sin as the method resolves it: attention-factor, or 0.1 ln s + 1 when it is 0.
double yarnAttentionFactor(const SchemeSpec& spec)
{
    const double given = spec.scalingParams.at("attention-factor");
    return given > 0 ? given : 0.1 * std::log(spec.scalingParams.at("factor")) + 1.0;
}

// Throws unless every option of the model is one gpt_neox or gpt2 computes.
void checkExportableOptions(const ModelConfig& config, const SchemeSpec& spec)
{
    std::string what;
    if (config.scaling != "none" && !hfRopeScalingType(config.scaling))
        what = "the checkpoint's length-extension method " + config.scaling +
               " (gpt_neox's rope_scaling types are linear, dynamic, yarn and llama3: the lab's pi, dynamic-ntk, yarn "
               "and llama3)";
    else if (config.scaling != "none" && rotaryShape(spec).keep < 1)
        what = "keep < 1 with the method " + config.scaling +
               " (the method's dims would be the kept pairs', not the lab's rotated dims)";
    else if (config.scaling == "yarn" && rotaryShape(spec).rotaryFraction < 1 && yarnAttentionFactor(spec) != 1)
        what = "yarn's attention factor " + std::to_string(yarnAttentionFactor(spec)) +
               " on a partial rotary (rotary-fraction < 1): the lab scales every dim of q and k by it, transformers "
               "only the rotated dims (attention-factor=1 exports)";
    else if (!config.layerTypes.empty())
        what = "layer types " + layerTypesText(config.layerTypes) +
               " (gpt_neox and gpt2 give every layer the same full attention; a sliding or chunked layer, or a full "
               "layer's own scheme, would need gemma2/3 or cohere2, whose blocks differ from the lab's)";
    else if (config.nopeEvery > 0)
        what = "nope-every = " + std::to_string(config.nopeEvery) + " (gpt_neox rotates every layer alike)";
    else if (config.logn)
        what = "logn (no family scales scores by log n)";
    else if (spec.temperature.tuning)
        what = "the attention temperature (attn_temperature_tuning is Llama 4's, an RMSNorm family)";
    else if (config.ssmax)
        what = "ssmax (no family has scalable softmax)";
    else if (config.sinkLogit)
        what = "the sink logit (gpt-oss has one, with RMSNorm and experts)";
    else if (spec.logitC > 0)
        what = "logit-c (no family scales scores by the length)";
    else if (spec.window > 0 || spec.chunk > 0 || spec.sinks > 0)
        what = "a window, chunk or sinks setting (gpt_neox and gpt2 attend to every earlier token)";
    else if (spec.softcap > 0)
        what = "softcap (gemma2's cap sits in an RMSNorm family)";
    if (!what.empty())
        throw InputError("export: " + what +
                         " has no Hugging Face family that computes it exactly; allowed: " + hfExportableSchemesText());
}

// Rotated pairs a rope model keeps (p-RoPE's keep: the highest frequencies turn, the rest pass through).
int keptRotaryPairs(const SchemeSpec& spec, int headDim)
{
    const RotaryShape shape = rotaryShape(spec);
    const int r = rotatedDims(headDim, shape.rotaryFraction);
    return std::min(keptPairs(r, shape.keep), headDim / 2);
}

// The tensors being written: their storage and the views serializeSafetensors reads.
struct TensorSet {
    std::deque<std::vector<float>> store;
    std::vector<TensorView> views;
    void add(const std::string& name, std::vector<int64_t> shape, std::vector<float> data)
    {
        store.push_back(std::move(data));
        views.push_back({name, std::move(shape), store.back().data()});
    }
};

// The model's tensor `name` as a copy, optionally times `scale`.
std::vector<float> copyOf(const Model& model, const std::string& name, float scale = 1.0f)
{
    const ParameterTensor& t = model.tensor(name);
    const float* p = model.parameters().data() + t.offset;
    std::vector<float> out(p, p + t.size);
    if (scale != 1.0f)
        for (float& v : out)
            v *= scale;
    return out;
}

// A (rows, cols) matrix transposed: gpt2's Conv1D stores nn.Linear's (out, in) weight as (in, out).
std::vector<float> transposed(const std::vector<float>& m, int rows, int cols)
{
    std::vector<float> out(m.size());
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c)
            out[static_cast<size_t>(c) * rows + r] = m[static_cast<size_t>(r) * cols + c];
    return out;
}

// The lab dim each Hugging Face dim of a head reads: the lab pairs (2i, 2i + 1), rotate_half pairs (i, i + k) over
// the first 2k dims; the dims past 2k pass through in both, in place. Applied alike to q and k, it leaves every q.k
// unchanged and turns the lab's rotation into rotate_half's.
std::vector<int> rotateHalfOrder(int headDim, int keptPairs)
{
    std::vector<int> order(headDim);
    for (int j = 0; j < headDim; ++j)
        order[j] = j < keptPairs ? 2 * j : j < 2 * keptPairs ? 2 * (j - keptPairs) + 1 : j;
    return order;
}

void addNorm(TensorSet& set, const Model& model, const std::string& lab, const std::string& hf, float scale = 1.0f)
{
    const int64_t C = model.config().dModel;
    set.add(hf + ".weight", {C}, copyOf(model, lab + ".weight", scale));
    set.add(hf + ".bias", {C}, copyOf(model, lab + ".bias", scale));
}

// gpt_neox's tensors: the fused per-head q/k/v (rows h 3D + j D + d), q and k rows in rotate_half order.
TensorSet neoxTensors(const Model& model, const std::vector<int>& order)
{
    const ModelConfig& c = model.config();
    const int C = c.dModel, F = c.dFf, H = c.heads, D = c.headDim();
    TensorSet set;
    set.add("gpt_neox.embed_in.weight", {c.vocab(), C}, copyOf(model, "wte.weight"));
    for (int l = 0; l < c.layers; ++l) {
        const std::string lab = "layers." + std::to_string(l) + ".", hf = "gpt_neox.layers." + std::to_string(l) + ".";
        addNorm(set, model, lab + "ln1", hf + "input_layernorm");
        const std::vector<float> w = copyOf(model, lab + "attn.qkv.weight"), b = copyOf(model, lab + "attn.qkv.bias");
        std::vector<float> fw(w.size()), fb(b.size());
        for (int h = 0; h < H; ++h)
            for (int j = 0; j < 3; ++j)
                for (int d = 0; d < D; ++d) {
                    const size_t to = static_cast<size_t>(h) * 3 * D + j * D + d;
                    const size_t from = static_cast<size_t>(j) * C + h * D + (j < 2 ? order[d] : d);
                    std::copy_n(w.begin() + from * C, C, fw.begin() + to * C);
                    fb[to] = b[from];
                }
        set.add(hf + "attention.query_key_value.weight", {3 * C, C}, std::move(fw));
        set.add(hf + "attention.query_key_value.bias", {3 * C}, std::move(fb));
        set.add(hf + "attention.dense.weight", {C, C}, copyOf(model, lab + "attn.out.weight"));
        set.add(hf + "attention.dense.bias", {C}, copyOf(model, lab + "attn.out.bias"));
        addNorm(set, model, lab + "ln2", hf + "post_attention_layernorm");
        set.add(hf + "mlp.dense_h_to_4h.weight", {F, C}, copyOf(model, lab + "mlp.fc.weight"));
        set.add(hf + "mlp.dense_h_to_4h.bias", {F}, copyOf(model, lab + "mlp.fc.bias"));
        set.add(hf + "mlp.dense_4h_to_h.weight", {C, F}, copyOf(model, lab + "mlp.proj.weight"));
        set.add(hf + "mlp.dense_4h_to_h.bias", {C}, copyOf(model, lab + "mlp.proj.bias"));
    }
    addNorm(set, model, "ln_f", "gpt_neox.final_layer_norm");
    return set; // the head is tied (tie_word_embeddings): embed_out is embed_in
}

// gpt2's tensors: Conv1D (in, out) weights; wpe the learned table, or the sinusoidal one of `positions` rows with the
// embedding's scale s folded into wte and 1/s into ln_f (the tied head then reads s wte against ln_f / s).
TensorSet gpt2Tensors(const Model& model, int positions)
{
    const ModelConfig& c = model.config();
    const int C = c.dModel, F = c.dFf;
    const float s = model.embeddingScale();
    TensorSet set;
    set.add("transformer.wte.weight", {c.vocab(), C}, copyOf(model, "wte.weight", s));
    if (c.scheme == "learned") {
        set.add("transformer.wpe.weight", {c.context, C}, copyOf(model, "wpe.weight"));
    } else {
        std::vector<float> table(static_cast<size_t>(positions) * C);
        layers::sinusoidalTable(table.data(), positions, C, model.schemeSpec().param("base"));
        set.add("transformer.wpe.weight", {positions, C}, std::move(table));
    }
    for (int l = 0; l < c.layers; ++l) {
        const std::string lab = "layers." + std::to_string(l) + ".", hf = "transformer.h." + std::to_string(l) + ".";
        addNorm(set, model, lab + "ln1", hf + "ln_1");
        set.add(hf + "attn.c_attn.weight", {C, 3 * C}, transposed(copyOf(model, lab + "attn.qkv.weight"), 3 * C, C));
        set.add(hf + "attn.c_attn.bias", {3 * C}, copyOf(model, lab + "attn.qkv.bias"));
        set.add(hf + "attn.c_proj.weight", {C, C}, transposed(copyOf(model, lab + "attn.out.weight"), C, C));
        set.add(hf + "attn.c_proj.bias", {C}, copyOf(model, lab + "attn.out.bias"));
        addNorm(set, model, lab + "ln2", hf + "ln_2");
        set.add(hf + "mlp.c_fc.weight", {C, F}, transposed(copyOf(model, lab + "mlp.fc.weight"), F, C));
        set.add(hf + "mlp.c_fc.bias", {F}, copyOf(model, lab + "mlp.fc.bias"));
        set.add(hf + "mlp.c_proj.weight", {F, C}, transposed(copyOf(model, lab + "mlp.proj.weight"), C, F));
        set.add(hf + "mlp.c_proj.bias", {C}, copyOf(model, lab + "mlp.proj.bias"));
    }
    addNorm(set, model, "ln_f", "transformer.ln_f", 1.0f / s);
    return set;
}

// rotary_pct = 2k / D, nudged up when int(D x pct) would round down (transformers and core/hf read int(D x pct)).
double rotaryPct(int rotated, int headDim)
{
    double pct = static_cast<double>(rotated) / headDim;
    while (static_cast<int>(headDim * pct) < rotated)
        pct = std::nextafter(pct, 2.0);
    return pct;
}

nlohmann::json commonConfig(const ModelConfig& c)
{
    // No bos/eos: every id is a byte, and a model that stopped at byte 2 (gpt_neox's default eos) would cut text.
    return {{"vocab_size", c.vocab()},     {"bos_token_id", nullptr}, {"eos_token_id", nullptr},
            {"tie_word_embeddings", true}, {"use_cache", true},       {"torch_dtype", "float32"},
            {"initializer_range", 0.02}};
}

nlohmann::json neoxConfig(const ModelConfig& c, int keptPairs, double base)
{
    nlohmann::json j = commonConfig(c);
    j.update({{"architectures", {"GPTNeoXForCausalLM"}},
              {"model_type", "gpt_neox"},
              {"hidden_size", c.dModel},
              {"num_hidden_layers", c.layers},
              {"num_attention_heads", c.heads},
              {"intermediate_size", c.dFf},
              {"hidden_act", "gelu_new"}, // the lab's GELU, tanh approximation (model/layers.h)
              {"rotary_pct", rotaryPct(2 * keptPairs, c.headDim())},
              {"rotary_emb_base", base},
              {"max_position_embeddings", c.context},
              {"layer_norm_eps", kLabLayerNormEps},
              {"use_parallel_residual", false},
              {"attention_bias", true},
              {"attention_dropout", 0.0},
              {"hidden_dropout", 0.0}});
    return j;
}

nlohmann::json gpt2Config(const ModelConfig& c, int positions)
{
    nlohmann::json j = commonConfig(c);
    j.update({{"architectures", {"GPT2LMHeadModel"}},
              {"model_type", "gpt2"},
              {"n_embd", c.dModel},
              {"n_layer", c.layers},
              {"n_head", c.heads},
              {"n_inner", c.dFf},
              {"n_positions", positions},
              {"n_ctx", positions},
              {"activation_function", "gelu_new"},
              {"layer_norm_epsilon", kLabLayerNormEps},
              {"scale_attn_weights", true},
              {"scale_attn_by_inverse_layer_idx", false},
              {"reorder_and_upcast_attn", false},
              {"resid_pdrop", 0.0},
              {"embd_pdrop", 0.0},
              {"attn_pdrop", 0.0}});
    return j;
}

std::string dumped(const nlohmann::json& j)
{
    return j.dump(2) + "\n";
}

} // namespace

const char* hfExportableSchemesText()
{
    return "rope (with pi, dynamic-ntk, yarn, llama3 or no method), none (as gpt_neox); learned, sinusoidal (as gpt2)";
}

std::string hfExportFamily(const ModelConfig& config)
{
    const std::string& scheme = config.scheme;
    const bool neox = scheme == "rope" || scheme == "none";
    if (!neox && scheme != "learned" && scheme != "sinusoidal")
        throw InputError("export: scheme " + scheme + " has no Hugging Face family that computes it exactly (" +
                         noFamilyReason(scheme) + "); schemes that export: " + hfExportableSchemesText());
    checkExportableOptions(config, modelSchemeSpec(config));
    return neox ? "gpt_neox" : "gpt2";
}

int hfExportPositions(const ModelConfig& config, const HfExportOptions& options)
{
    if (config.scheme != "sinusoidal") {
        if (options.positions != 0)
            throw InputError(
                "export: positions = " + std::to_string(options.positions) +
                " is allowed for sinusoidal models only (their table is written); scheme " + config.scheme +
                (config.scheme == "learned" ? " writes its own table of context rows" : " has no position table"));
        return config.context;
    }
    if (options.positions == 0)
        return std::min(16LL * config.context, static_cast<long long>(kMaxLength));
    if (options.positions < 1 || options.positions > kMaxLength)
        throw InputError("export: positions = " + std::to_string(options.positions) +
                         " is out of range; allowed: integers in [1, " + std::to_string(kMaxLength) + "]");
    return options.positions;
}

std::string byteTokenizerJson()
{
    nlohmann::json vocab = nlohmann::json::object();
    const auto& chars = hf::byteLevelChars();
    for (int b = 0; b < 256; ++b)
        vocab[chars[b]] = b;
    const nlohmann::json byteLevel = {
        {"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", false}};
    const nlohmann::json model = {{"type", "BPE"},
                                  {"dropout", nullptr},
                                  {"unk_token", nullptr},
                                  {"continuing_subword_prefix", nullptr},
                                  {"end_of_word_suffix", nullptr},
                                  {"fuse_unk", false},
                                  {"byte_fallback", false},
                                  {"ignore_merges", false},
                                  {"vocab", vocab},
                                  {"merges", nlohmann::json::array()}};
    return dumped({{"version", "1.0"},
                   {"truncation", nullptr},
                   {"padding", nullptr},
                   {"added_tokens", nlohmann::json::array()},
                   {"normalizer", nullptr},
                   {"pre_tokenizer", byteLevel},
                   {"post_processor", nullptr},
                   {"decoder", byteLevel},
                   {"model", model}});
}

HfExportFiles hfExportFiles(const Model& model, const HfExportOptions& options)
{
    const ModelConfig& c = model.config();
    HfExportFiles out;
    out.family = hfExportFamily(c);
    const int positions = hfExportPositions(c, options);
    nlohmann::json config;
    TensorSet tensors;
    if (out.family == "gpt_neox") {
        const SchemeSpec spec = model.schemeSpec();
        const int kept = c.scheme == "rope" ? keptRotaryPairs(spec, c.headDim()) : 0;
        // θ_i = base^(-2i/r) over the kept pairs i < k equals base'^(-2i/2k) with base' = base^(2k/r).
        double base = 10000.0;
        if (kept > 0)
            base =
                std::pow(spec.param("base"), 2.0 * kept / rotatedDims(c.headDim(), rotaryShape(spec).rotaryFraction));
        config = neoxConfig(c, kept, base);
        if (c.scaling != "none")
            config["rope_scaling"] = ropeScalingJson(spec, c.scaling);
        tensors = neoxTensors(model, rotateHalfOrder(c.headDim(), kept));
    } else {
        config = gpt2Config(c, positions);
        tensors = gpt2Tensors(model, positions);
    }
    // transformers loads a safetensors file only with format pt (or tf, flax, mlx) in its metadata.
    const std::map<std::string, std::string> metadata = {
        {"format", "pt"}, {"positionlab_scheme", c.scheme}, {"positionlab_config", c.toJson().dump()}};
    out.files.emplace_back("config.json", dumped(config));
    out.files.emplace_back("model.safetensors", serializeSafetensors(tensors.views, metadata));
    out.files.emplace_back("tokenizer.json", byteTokenizerJson());
    out.files.emplace_back("tokenizer_config.json",
                           dumped({{"tokenizer_class", "PreTrainedTokenizerFast"},
                                   {"model_max_length", c.scheme == "sinusoidal" ? positions : modelMaxLength(c)},
                                   {"clean_up_tokenization_spaces", false},
                                   {"add_bos_token", false},
                                   {"add_eos_token", false}}));
    out.files.emplace_back("generation_config.json",
                           dumped({{"bos_token_id", nullptr}, {"eos_token_id", nullptr}, {"do_sample", false}}));
    return out;
}

namespace {

// A folder name beside `target` that does not exist yet.
std::filesystem::path freshSibling(const std::filesystem::path& target)
{
    std::random_device device;
    for (int attempt = 0; attempt < 100; ++attempt) {
        std::filesystem::path p = target;
        p += ".export-" + std::to_string(::getpid()) + "-" + std::to_string(device() % 1000000);
        std::error_code ec;
        if (!std::filesystem::exists(p, ec))
            return p;
    }
    throw RunError("export: no free temporary folder name beside " + target.string());
}

} // namespace

HfExportFiles exportHfFolder(const Model& model, const std::string& folder, const HfExportOptions& options)
{
    namespace fs = std::filesystem;
    if (folder.empty())
        throw InputError("-o: the folder name is empty; allowed: a path to a missing or empty folder");
    HfExportFiles files = hfExportFiles(model, options); // every refusal before the disk is touched
    fs::path target = fs::path(folder).lexically_normal();
    if (target.filename().empty())
        target = target.parent_path(); // "out/" names out
    std::error_code ec;
    const bool exists = fs::exists(target, ec);
    if (exists && !fs::is_directory(target, ec))
        throw InputError("-o " + folder + ": is a file; allowed: a missing or empty folder (or --force on a folder)");
    const bool empty = !exists || fs::is_empty(target, ec);
    if (!empty && !options.force)
        throw InputError("-o " + folder +
                         ": the folder is not empty; allowed: a missing or empty folder, or --force "
                         "to write the export's files into it (each replaced atomically, other files left)");
    if (!empty) {
        for (const auto& [name, bytes] : files.files)
            writeFileAtomically((target / name).string(), bytes);
        return files;
    }
    const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
    if (!fs::is_directory(parent, ec))
        throw InputError("-o " + folder + ": the folder " + parent.string() + " it would be made in does not exist");
    const fs::path temp = freshSibling(target);
    if (!fs::create_directory(temp, ec))
        throw InputError("-o " + folder + ": cannot make a folder in " + parent.string() + " (" + ec.message() + ")");
    try {
        for (const auto& [name, bytes] : files.files)
            writeFileAtomically((temp / name).string(), bytes);
        if (exists)
            fs::remove(target); // empty: replaced by the complete folder
        fs::rename(temp, target);
    } catch (const fs::filesystem_error& e) {
        fs::remove_all(temp, ec);
        throw RunError("export: cannot move the folder into place at " + folder + " (" + e.what() + ")");
    } catch (...) {
        fs::remove_all(temp, ec);
        throw;
    }
    return files;
}

} // namespace plab
