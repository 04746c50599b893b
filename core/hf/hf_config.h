// A Hugging Face model folder's config.json, read for every supported family and mapped onto the lab's words.
#pragma once

#include "schemes/schemes.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace plab {

// The checkpoint layouts the loader knows (hf_family.h's table gives each model_type's): gpt2's Conv1D blocks, bloom's
// and gpt_neox's fused per-head q/k/v, and the decoder blocks of llama and its descendants (mistral, qwen, phi3,
// olmo2, granite, cohere, gemma: one layout, options in HfConfig's block fields).
enum class HfFamily { Gpt2, Bloom, GptNeox, Llama };

// How a family normalises: LayerNorm with bias, LayerNorm without bias (cohere), RMSNorm x w, or Gemma's x (1 + w).
enum class HfNormKind { LayerNorm, LayerNormNoBias, RmsNorm, RmsNormPlusOne };
// Where a decoder block's norms sit: before attention and MLP (llama), before and after both (gemma2/3: four norms),
// or after both only (olmo2's post_attention_layernorm and post_feedforward_layernorm on the branch outputs).
enum class HfNormPlace { Before, BeforeAndAfter, After };
// q/k norms: none, RMS over each head before rotary (qwen3, gemma3), or over the whole projection (olmo2).
enum class HfQkNorm { None, PerHead, WholeProjection };
// A layer's attention: full causal, a sliding window of `slidingWindow` keys (the query included), or chunked.
enum class HfLayerType { Full, Sliding, Chunked };

// "full_attention", "sliding_attention", "chunked_attention": transformers' layer_types words.
const char* hfLayerTypeName(HfLayerType type);

// The model_type values accepted, in the order messages list them (the family table's rows).
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
    // Gemma's proportional rope (p-RoPE): the lab's `keep`, the fraction of the head's pairs that turn, set so that
    // exactly transformers' rope_angles = floor(partial_rotary_factor x head_dim / 2) pairs keep their θ; 1: all.
    double ropeKeep = 1;
    bool yarnTruncate = true; // yarn's truncate (false: the exact correction range, SchemeSpec::yarnTruncate)

    double normEps = 1e-6;
    std::string activation;        // silu, gelu, gelu_new
    bool swiGlu = true;            // gate * up (llama family) or fc -> act -> proj
    bool parallelResidual = false; // gpt_neox: x + attn(ln1 x) + mlp(ln2 x)
    bool tiedHead = false;
    bool qkvBias = false;
    bool outputBias = false; // o_proj / dense / c_proj bias
    bool mlpBias = false;
    std::string layoutName; // the family table's layout: "gpt2", "bloom", "gpt_neox", "llama"

    // Decoder blocks (HfFamily::Llama), from the family's row and its config.
    HfNormKind norm = HfNormKind::RmsNorm;
    HfNormPlace normPlace = HfNormPlace::Before;
    HfQkNorm qkNorm = HfQkNorm::None;
    bool sharedNorm = false;      // cohere's parallel block: attention and MLP both read input_layernorm
    bool fusedQkv = false;        // phi3's qkv_proj: rows q (H D), k (K D), v (K D)
    bool fusedGateUp = false;     // phi3's gate_up_proj: rows gate (F), up (F)
    bool interleavedRope = false; // cohere: pairs (2i, 2i + 1) instead of rotate_half's (i, i + r/2)
    double embedScale = 1;        // gemma: sqrt(hidden); granite: embedding_multiplier
    double attentionScale = 0;    // score scale replacing 1/sqrt(D): gemma's query_pre_attn_scalar^-1/2, granite's
                                  // attention_multiplier; 0: 1/sqrt(D)
    double residualScale = 1;     // granite's residual_multiplier on each branch
    double logitScale = 1;        // cohere's logit_scale; granite's 1 / logits_scaling
    double attnSoftcap = 0;       // gemma2's attn_logit_softcapping: cap tanh(s / cap); 0: none
    double finalSoftcap = 0;      // gemma2's final_logit_softcapping on the logits; 0: none

    // Layer types (layer_types in any of its spellings) and their windows.
    std::vector<HfLayerType> layerTypes; // one per layer
    int slidingWindow = 0;               // keys a sliding layer sees, the query included; 0: no sliding layer
    int chunkSize = 0;                   // attention_chunk_size of chunked layers; 0: none
    // Sliding layers' own rotary table when it differs from the full layers' (gemma3's rope_local_base_freq, v5's
    // rope_parameters keyed by layer type): theta and the config's scaling; slidingRopeTheta 0: the same table.
    double slidingRopeTheta = 0;
    std::string slidingScaling = "none";
    std::vector<std::string> slidingScalingSettings;
    double slidingRopeKeep = 1;
    bool slidingYarnTruncate = true;
    bool hasSliding() const;
    // What of the folder is not read, said on the card: a gemma3 folder's vision tower; empty for text models.
    std::string notRead;

    // Parameters counted from the dims (the embedding once when tied).
    double parameterCount() const;
    // Flops of one prefill of `length` tokens, as issue 19 counts them: 2 per weight of a matrix product per token
    // (projections, MLP, output head; not the embedding lookup) plus causal attention's 4 D per visible pair and head
    // (D at least 64: a smaller head dim does not make a pair cheaper than that in the kernel).
    double prefillFlops(int length) const;
};

// The layer pattern as one letter per layer: S sliding, F full, C chunked (inspect's strip).
std::string hfLayerStrip(const HfConfig& config);

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

// The sliding layers' rotary spec when the config gives them their own table (gemma3's rope_local_base_freq, v5's
// rope_parameters.sliding_attention), under its own scaling: a method applied zero-shot goes to the full layers,
// where the config's own scaling lives. Without a table of their own, sliding layers read the full layers' spec.
SchemeSpec hfSlidingPositionSpec(const HfConfig& config);

// "rope+yarn (factor 4, original-context 16)", "alibi", "learned": what the summary and the CLI say is applied.
std::string hfPositionText(const SchemeSpec& spec);

// The most tokens one window of the model takes: a learned-position table stops at its context (gpt2's n_positions);
// otherwise the lab's kMaxLength (a sliding window is a mask, not a limit).
int hfMaxLength(const HfConfig& config);
// InputError unless `length` tokens fit hfMaxLength: "N tokens is more than the 1024 learned positions of gpt2
// (n_positions in DIR/config.json); allowed: lengths up to 1024". The one check of every window a folder's model reads.
void checkHfLength(const HfConfig& config, int length);

} // namespace plab
