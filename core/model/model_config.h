// What a model is and how it trains: ModelConfig, TrainConfig, their validation and the model's tensor layout.
#pragma once

#include "schemes/schemes.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace plab {

// Optimisation settings of `train`.
struct TrainConfig {
    int steps = 1500;
    int batch = 16;                // sequences per step, each `context` tokens
    double learningRate = 2e-3;    // peak, after warm-up
    double minLearningRate = 2e-4; // end of the cosine decay
    int warmup = 100;
    double weightDecay = 0.1; // AdamW, decoupled; matrices only (not biases, LayerNorm, scheme parameters)
    double beta1 = 0.9;
    double beta2 = 0.95;
    double epsilon = 1e-8;
    double gradClip = 1.0; // global L2 norm; 0 disables
    uint64_t dataSeed = 1; // order of the training windows
    // The one JSON form of a schedule (checkpoints, sweep grids, GUI exports); a sweep grid drops data_seed, which
    // each cell sets.
    nlohmann::json toJson() const;
    // Reads it back (data_seed optional) and validates it: InputError naming source and the field.
    static TrainConfig fromJson(const nlohmann::json& j, const std::string& source);
};
void validateTrainConfig(const TrainConfig& config);

// Architecture and positional scheme of a model. Byte-level: the vocabulary is always 256.
struct ModelConfig {
    int layers = 2;
    int dModel = 128;
    int heads = 8;
    int dFf = 512;
    int context = 64; // training context L: the learned table's rows, local/bca window, logn threshold
    std::string scheme = "alibi";
    std::vector<std::string> schemeSettings; // NAME=VALUE overrides of the scheme's parameters
    bool logn = false;
    std::string scaling = "none"; // rope/xpos length extension (core/schemes/rotary_scaling.h), saved in checkpoints
    std::vector<std::string> scalingSettings; // NAME=VALUE overrides of the method's parameters
    // Per-layer schedule: 0 = every layer uses the scheme; K >= 2 = layers l with (l + 1) % K == 0 (0-based 3, 7, 11,
    // ... for K = 4) use no positional encoding, as SmolLM3's no_rope_layers and Llama 4's iRoPE
    // (no_rope_layer_interval).
    int nopeEvery = 0;
    AttentionTemperature temperature; // Llama 4's temperature, on the NoPE layers only
    bool ssmax = false;               // scalable softmax, s learned per head (layer): SchemeSpec::ssmax
    bool sinkLogit = false;           // a learned sink logit per head (layer): SchemeSpec::sinkLogit
    uint64_t seed = 1;                // parameter initialisation (and, by default, the training data order)
    // Hybrid layers (Gemma 2/3, Cohere's RNoPE-SWA, Llama 4, gpt-oss): Hugging Face's layer_types without
    // "_attention" (sliding, full, chunked), repeating over the layers: layer l has layerTypes[l % size]. Empty: no
    // layer types (every layer attends as the scheme says). Checked by validateModelConfig (validateLayerTypes).
    std::vector<std::string> layerTypes;
    int window = 0; // the sliding layers' window W; 0: modelDefaultLayerSpan
    int chunk = 0;  // the chunked layers' chunk C; 0: modelDefaultLayerSpan
    // The full layers' own scheme and NAME=VALUE settings (--full-scheme none: RNoPE-SWA; --full-set base=1000000:
    // Gemma 3's global base). Empty scheme: the model's, with its settings and then fullSettings.
    std::string fullScheme;
    std::vector<std::string> fullSettings;

    int headDim() const { return dModel / heads; }
    int vocab() const { return 256; }
    nlohmann::json toJson() const; // resolved scheme parameters included
    static ModelConfig fromJson(const nlohmann::json& j, const std::string& source); // InputError naming source
};

// The fields of every model JSON that are not the scheme's (a checkpoint's config, a sweep grid's model): layers,
// d_model, heads, d_ff, context, logn, and the layer schedule when set (nope_every; attn_temperature_tuning,
// floor_scale, attn_scale). Written and read here only; their ranges are validateModelConfig's, checked
// once the scheme is known. readModelShape throws InputError "SOURCE: model config has no integer 'layers'".
nlohmann::json modelShapeJson(const ModelConfig& config);
void readModelShape(const nlohmann::json& j, ModelConfig& config, const std::string& source);

// The options of a model beyond its scheme and sizes, as a run's label shows them: "nope_every=4
// temperature(F=8192, β=0.1) ssmax sink_logit" (each part only when set; empty for none; F and β are floor_scale and
// attn_scale), short enough for a legend, so two runs that differ only there are told apart.
std::string modelOptionsLabel(const ModelConfig& config);

// The layer types of ModelConfig::layerTypes, in Hugging Face's order of names (without "_attention").
enum class LayerType { Full, Sliding, Chunked };
const std::vector<std::string>& layerTypeNames(); // full, sliding, chunked
// InputError "layer-types: 'x' is not a layer type; allowed: sliding, full, chunked".
LayerType layerTypeByName(const std::string& name);
// Layer `layer`'s type: layerTypes[layer % size], Full when the model has no layer types.
LayerType modelLayerType(const ModelConfig& config, int layer);
// Whether some layer of the model (of its `layers`, the list repeating) has type `type`.
bool modelHasLayerType(const ModelConfig& config, LayerType type);
// The sliding layers' window and the chunked layers' chunk in effect: the config's, else modelDefaultLayerSpan.
int modelLayerWindow(const ModelConfig& config);
int modelLayerChunk(const ModelConfig& config);
// Default W and C of the hybrid layers: a quarter of the training context (at least 1), so a short model still has a
// band well inside its context that the full layers must bridge.
int modelDefaultLayerSpan(const ModelConfig& config);
// "sliding×5,full" for a layer-type list (runs of one type as NAME×K): labels and captions.
std::string layerTypesText(const std::vector<std::string>& types);

// Whether a constructor checks the config it is given. An entry point validates each config once: code that validated
// it already (trainModel, loadCheckpoint's ModelConfig::fromJson) builds with Validated, everything else with Validate.
enum class ConfigCheck { Validate, Validated };

// Throws InputError naming the field, its value and the allowed range (also checks the scheme spec and that the
// weights, gradients and AdamW moments fit the memory budget).
void validateModelConfig(const ModelConfig& config);
// Number of trainable values of a config (every tensor of Model::tensors()).
size_t modelParameterCount(const ModelConfig& config);

// The model's scheme: causal, `heads` heads, the model's context; rotary `dim` = head dim and sinusoidal
// `dim` = d_model unless set (a different explicit value is refused: partial rotary is rope's rotary-fraction).
// local/bca without an explicit window get modelDefaultWindow(config). Every scalingSettings entry must name a
// parameter of the method `scaling` (checkMethodSetting); schemeSettings may hold the method's parameters too.
SchemeSpec modelSchemeSpec(const ModelConfig& config);
// Default window of local/bca inside a model: the largest W with layers * (W - 1) + 1 <= context (even for bca), so
// the model's receptive field, not just one layer's, equals the training context. One layer: W = context, the
// design's "window = training context"; the quick preset (2 layers, context 64): W = 32.
int modelDefaultWindow(const ModelConfig& config);
// Whether layer `layer` (0-based) uses the model's scheme; false on the NoPE layers of nopeEvery (and every layer of
// scheme none).
bool modelLayerUsesScheme(const ModelConfig& config, int layer);
// The spec of layer `layer`: modelSchemeSpec on the scheme's layers (with the layer type's mask, applyModelLayerMask);
// on NoPE layers scheme none with the model's heads, context, logn and temperature; on full layers with a scheme or
// settings of their own, modelFullLayerSpec.
SchemeSpec modelLayerSchemeSpec(const ModelConfig& config, int layer);
// The mask of layer `layer`'s type on `spec`: window W on a sliding layer, chunk C on a chunked one, nothing on a full
// one (the one home of that rule: the model's forward and every view of a layer read it). InputError when the scheme
// cannot hold the mask (cope).
void applyModelLayerMask(const ModelConfig& config, int layer, SchemeSpec& spec);
// The full layers' own spec (--full-scheme, --full-set): the full scheme (or the model's, its settings then the full
// ones) with the model's heads, context, logn and method (rotary full schemes only); logit-c and softcap as the model's.
SchemeSpec modelFullLayerSpec(const ModelConfig& config);
// Whether a scheme may be the full layers' own (--full-scheme): none without learned values, absolute positions, gates
// or a window of its own (those live in the model's tensors, shared by the scheme's layers).
bool fullLayerSchemeAllowed(const SchemeInfo& info);
// Whether layer `layer` is a full layer attending with modelFullLayerSpec (not the model's scheme).
bool modelLayerHasFullSpec(const ModelConfig& config, int layer);

// One trainable tensor inside the flat parameter buffer.
struct ParameterTensor {
    std::string name; // checkpoint name, e.g. "layers.0.attn.qkv.weight"
    std::vector<int64_t> shape;
    size_t offset = 0; // into parameters()/gradients()
    size_t size = 0;
    bool decay = false; // AdamW weight decay applies
};

// The tensors of a config in storage order, with offsets into the flat parameter buffer (no allocation).
std::vector<ParameterTensor> modelTensorLayout(const ModelConfig& config);

// The longest sequence a model of `config` reads (Model::maxLength before the model exists): its context for learned
// positions, else kMaxLength. For checking evaluation lengths before training.
int modelMaxLength(const ModelConfig& config);

} // namespace plab
