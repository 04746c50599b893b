// A Hugging Face model folder's config.json, read for every supported family and mapped onto the lab's words.
#pragma once

#include "schemes/schemes.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace plab {

// The layouts the forward knows; llama covers mistral, qwen2, qwen3 and smollm3 (the same blocks with options).
enum class HfFamily { Gpt2, Bloom, GptNeox, Llama };

// The model_type values accepted, in the order messages list them.
const std::vector<std::string>& supportedModelTypes();

// Why a model_type is out of the lab's scope (mixture-of-experts, multi-head latent attention, Mamba and other
// recurrent hybrids, multimodal folders), or nullopt for any other name. The one list of refused families.
std::optional<std::string> hfOutOfScopeReason(std::string_view modelType);
// Why a tensor belongs to a part the lab does not run (a vision tower or its projector in a multimodal folder), or
// nullopt: such a folder is refused by the tensor's name, not opened with its vision part silently dropped.
std::optional<std::string> hfOutOfScopeTensorReason(std::string_view tensorName);

struct HfConfig {
    std::string folder;    // the model folder
    std::string modelType; // config.json's model_type, e.g. "qwen2"
    HfFamily family = HfFamily::Llama;

    int layers = 0;
    int hidden = 0;       // d_model
    int heads = 0;        // query heads H
    int kvHeads = 0;      // key/value heads (GQA: H is a multiple of it)
    int headDim = 0;      // D, explicit head_dim or hidden / heads
    int intermediate = 0; // d_ff
    int vocab = 0;
    int context = 0; // max_position_embeddings (n_positions for gpt2; seq_length or 2048 for bloom)

    // Positions, in the lab's words: scheme "rope" (rotate_half pairing: pair i with i + rotaryDim/2), "alibi"
    // (BLOOM's slopes are the lab's alibi rule) or "learned" (gpt2's wpe table).
    std::string scheme;
    double ropeTheta = 0;
    double rotaryFraction = 1;    // partial_rotary_factor / rotary_pct
    int rotaryDim = 0;            // rotated dims per head, even, <= headDim
    std::vector<bool> ropeLayers; // per layer: false = NoPE (smollm3's no_rope_layers)
    // The config's own rope scaling as the lab's method and NAME=VALUE settings; "none" when it has none.
    std::string scaling = "none";
    std::vector<std::string> scalingSettings;
    std::string scalingText; // as config.json writes it, for the summary, e.g. "yarn (factor 4, ...)"
    // longrope's per-pair short_factor and long_factor (empty for every other type).
    std::vector<double> longropeShort, longropeLong;

    bool rmsNorm = true;
    double normEps = 1e-6;
    std::string activation;        // silu, gelu, gelu_new
    bool swiGlu = true;            // gate * up (llama family) or fc -> act -> proj
    bool parallelResidual = false; // gpt_neox: x + attn(ln1 x) + mlp(ln2 x)
    bool tiedHead = false;
    bool qkvBias = false;
    bool outputBias = false; // o_proj / dense / c_proj bias
    bool mlpBias = false;
    bool qkNorm = false;   // qwen3: RMSNorm over each head of q and k before rotary
    int slidingWindow = 0; // mistral's sliding_window; 0: none

    // Parameters counted from the dims (the embedding once when tied).
    double parameterCount() const;
    // Flops of one prefill of `length` tokens, as issue 19 counts them: 2 per weight of a matrix product per token
    // (projections, MLP, output head; not the embedding lookup) plus causal attention's 4 D per visible pair and head.
    double prefillFlops(int length) const;
};

// Reads DIR/config.json. InputError naming the file and the field for a missing folder or file, invalid JSON, an
// unknown model_type (listing the supported ones), a missing or invalid field, an unknown rope scaling type or a
// setting the lab cannot reproduce.
HfConfig readHfConfig(const std::string& folder);

// The positional scheme of the model as a lab spec: rope (dim = rotaryDim, base = ropeTheta, context = the model's
// context) under the config's own scaling, or under `scaling` applied zero-shot with `settings` (NAME=VALUE of the
// method's parameters). Naming the config's own method keeps its settings, as naming none does; another method starts
// from its defaults; `settings` then change either's. alibi and learned take no method (InputError from the scheme).
SchemeSpec hfPositionSpec(const HfConfig& config, std::string_view scaling = "",
                          const std::vector<std::string>& settings = {});

// "rope+yarn (factor 4, original-context 16)", "alibi", "learned": what the summary and the CLI say is applied.
std::string hfPositionText(const SchemeSpec& spec);

// The most tokens one window of the model takes: a learned-position table stops at its context (gpt2's n_positions), a
// sliding window (not implemented) at its width; otherwise the lab's kMaxLength.
int hfMaxLength(const HfConfig& config);
// InputError unless `length` tokens fit hfMaxLength: "N tokens is more than the 1024 learned positions of gpt2
// (n_positions in DIR/config.json); allowed: lengths up to 1024". The one check of every window a folder's model reads.
void checkHfLength(const HfConfig& config, int length);

} // namespace plab
