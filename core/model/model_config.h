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
// The spec of layer `layer`: modelSchemeSpec on the scheme's layers; on NoPE layers scheme none with the model's heads,
// context, logn and temperature.
SchemeSpec modelLayerSchemeSpec(const ModelConfig& config, int layer);

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
