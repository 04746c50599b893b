// The byte-level decoder-only transformer: config, parameters, forward/backward, AdamW training, evaluation, checkpoints.
#pragma once

#include "attention.h"
#include "entropy.h"
#include "layers.h"
#include "position_bias.h"
#include "rotary_scaling.h"
#include "schemes.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace plab {

struct SafetensorsFile;

// Architecture and positional scheme of a model. Byte-level: the vocabulary is always 256.
struct ModelConfig {
    int layers = 2;
    int dModel = 128;
    int heads = 8;
    int dFf = 512;
    int context = 64;      // training context L: the learned table's rows, local/bca window, logn threshold
    std::string scheme = "alibi";
    std::vector<std::string> schemeSettings; // NAME=VALUE overrides of the scheme's parameters
    bool logn = false;
    std::string scaling = "none";             // rope/xpos length extension (core/rotary_scaling.h), saved in checkpoints
    std::vector<std::string> scalingSettings; // NAME=VALUE overrides of the method's parameters
    uint64_t seed = 1;     // parameter initialisation (and, by default, the training data order)

    int headDim() const { return dModel / heads; }
    int vocab() const { return 256; }
    nlohmann::json toJson() const;                                     // resolved scheme parameters included
    static ModelConfig fromJson(const nlohmann::json& j, const std::string& source); // InputError naming source
};

// Throws InputError naming the field, its value and the allowed range (also checks the scheme spec and that the
// weights, gradients and AdamW moments fit the memory budget).
void validateModelConfig(const ModelConfig& config);
// Number of trainable values of a config (every tensor of Model::tensors()).
size_t modelParameterCount(const ModelConfig& config);

// The model's scheme: causal, `heads` heads, the model's context; rotary `dim` = head dim and sinusoidal
// `dim` = d_model unless set (a different explicit value is refused: the model has no partial rotary).
// local/bca without an explicit window get modelDefaultWindow(config).
SchemeSpec modelSchemeSpec(const ModelConfig& config);
// Default window of local/bca inside a model: the largest W with layers * (W - 1) + 1 <= context (even for bca), so
// the model's receptive field, not just one layer's, equals the training context. One layer: W = context, the
// design's "window = training context"; the quick preset (2 layers, context 64): W = 32.
int modelDefaultWindow(const ModelConfig& config);

// Optimisation settings of `train`.
struct TrainConfig {
    int steps = 1500;
    int batch = 16;             // sequences per step, each `context` tokens
    double learningRate = 2e-3; // peak, after warm-up
    double minLearningRate = 2e-4; // end of the cosine decay
    int warmup = 100;
    double weightDecay = 0.1;   // AdamW, decoupled; matrices only (not biases, LayerNorm, scheme parameters)
    double beta1 = 0.9;
    double beta2 = 0.95;
    double epsilon = 1e-8;
    double gradClip = 1.0;      // global L2 norm; 0 disables
    uint64_t dataSeed = 1;      // order of the training windows
    nlohmann::json toJson() const;
};
void validateTrainConfig(const TrainConfig& config);

// A named starting point for a training run: the model's size and the optimisation schedule, plus how many held-out
// bytes a quick evaluation scores per length. "demo" is the Train tab's default (Figure 1 in about 90 s for four
// schemes on 2 cores), "tiny" a seconds-long run, "quick" the CLI's default, "large" the throughput benchmark.
struct Preset {
    std::string name;
    std::string summary;
    int layers, dModel, heads, dFf, context;
    int batch, steps;
    double learningRate, minLearningRate;
    int warmup;
    size_t evalBytes; // held-out bytes scored per evaluation length by the Train tab and lessons
};
const std::vector<Preset>& presets();
std::vector<std::string> presetNames();
const Preset& presetByName(std::string_view name); // InputError naming the allowed presets
// Sets the preset's sizes in `model` and its schedule in `train`; other fields are left as they are.
void applyPreset(std::string_view name, ModelConfig& model, TrainConfig& train);

// One trainable tensor inside the flat parameter buffer.
struct ParameterTensor {
    std::string name;           // checkpoint name, e.g. "layers.0.attn.qkv.weight"
    std::vector<int64_t> shape;
    size_t offset = 0;          // into parameters()/gradients()
    size_t size = 0;
    bool decay = false;         // AdamW weight decay applies
};

// The tensors of a config in storage order, with offsets into the flat parameter buffer (no allocation).
std::vector<ParameterTensor> modelTensorLayout(const ModelConfig& config);

class Model {
public:
    // Validates the config and initialises every parameter from config.seed (GPT-2 scheme: N(0, 0.02), residual
    // output projections scaled by 1/sqrt(2 layers), LayerNorm 1/0, t5 table from the scheme's prior).
    explicit Model(const ModelConfig& config);

    const ModelConfig& config() const { return m_config; }
    // Evaluates the same weights under another length-extension method (zero-shot): "none" removes the checkpoint's.
    // InputError for a method or parameter the scheme does not take.
    void setScaling(const std::string& method, const std::vector<std::string>& settings);
    // The scheme with the model's current learned values (t5 table, kerple r1/r2) filled in.
    SchemeSpec schemeSpec() const;
    // Longest sequence the model accepts: the context for learned positions, otherwise kMaxLength.
    int maxLength() const;
    // Factor on the token embedding at the input: sqrt(d_model) for sinusoidal, else 1 (the tied head is unscaled).
    float embeddingScale() const;

    const std::vector<ParameterTensor>& tensors() const { return m_tensors; }
    const ParameterTensor& tensor(const std::string& name) const; // std::out_of_range when absent
    std::vector<float>& parameters() { return m_params; }
    const std::vector<float>& parameters() const { return m_params; }
    std::vector<float>& gradients() { return m_grads; }
    size_t parameterCount() const { return m_params.size(); }
    // Call after changing parameters() directly (optimizer, loading): cached bias tables are rebuilt.
    void parametersChanged() { ++m_version; }

    // Forward over B sequences of T tokens at positions 0..T-1 (inputs (B, T)). With targets (B, T) returns the
    // mean cross-entropy (nats) and keeps per-token losses; without, returns 0. InputError when T > maxLength().
    float forward(const uint8_t* inputs, const uint8_t* targets, int B, int T);
    const std::vector<float>& tokenLosses() const { return m_losses; } // (B, T)

    void zeroGradients();
    // Accumulates into gradients() the gradient of the last forward's mean loss (needs targets).
    void backward();

    // q and k (B, H, T, D) of layer l from the last forward, before rotation.
    const layers::FloatBuffer& layerQueries(int layer) const { return m_acts[layer].q; }
    const layers::FloatBuffer& layerKeys(int layer) const { return m_acts[layer].k; }
    const layers::FloatBuffer& layerValues(int layer) const { return m_acts[layer].v; }
    // Estimated bytes of activations for a forward over B x T (for memory checks before a long evaluation).
    double activationBytes(int B, int T) const;
    // While *flag is true, forward and backward stop at the next layer with RunError("cancelled"); parameters are
    // untouched (the optimiser has not run), so the model stays consistent. Null disables.
    void setCancelFlag(const std::atomic<bool>* flag) { m_cancel = flag; }

private:
    struct LayerActs {
        layers::FloatBuffer ln1, ln1Mean, ln1Rstd;   // (B, T, C), (B, T), (B, T)
        layers::FloatBuffer qkv;                     // (B, T, 3C)
        layers::FloatBuffer q, k, v;                 // (B, H, T, D) each, unrotated
        std::vector<AttentionForward> attn;         // per slice: out (B_s, H, T, D), logSumExp (B_s, H, T)
        layers::FloatBuffer atty;                    // (B, T, C) attention output, heads merged
        layers::FloatBuffer res2;                    // (B, T, C) residual after attention
        layers::FloatBuffer ln2, ln2Mean, ln2Rstd;   // (B, T, C), (B, T), (B, T)
        layers::FloatBuffer fch, fchGelu;            // (B, T, F) each
        layers::FloatBuffer res3;                    // (B, T, C) residual after the MLP = next layer's input
    };

    float* param(const std::string& name) { return m_params.data() + tensor(name).offset; }
    const float* param(const std::string& name) const { return m_params.data() + tensor(name).offset; }
    float* grad(const std::string& name) { return m_grads.data() + tensor(name).offset; }
    void resizeActivations(int B, int T);
    // Sequences [b0, b1) of the batch that one thread runs through the whole model.
    struct Slice {
        int b0 = 0, b1 = 0;
    };
    void planSlices(int B, int T);
    template <typename Work>
    void forEachSlice(const Work& work); // work(slice) on one thread per slice; rethrows the first exception
    void forwardSlice(int slice, int T, const PositionBias& bias, const float* pos);
    void backwardSlice(int slice, const PositionBias& bias, float* G);
    const PositionBias& positionBias(int T);
    const float* absolutePositions(int T); // (T, C) or null

    ModelConfig m_config;
    SchemeSpec m_baseSpec;
    std::vector<ParameterTensor> m_tensors;
    std::map<std::string, size_t> m_tensorIndex;
    std::vector<float> m_params; // every trainable value, in m_tensors order
    std::vector<float> m_grads;  // same layout

    // Per-layer offsets of the stacked tensors (looked up once).
    struct LayerParams {
        size_t ln1w, ln1b, qkvw, qkvb, attprojw, attprojb, ln2w, ln2b, fcw, fcb, fcprojw, fcprojb;
    };
    std::vector<LayerParams> m_layerParams;

    int m_B = 0, m_T = 0;
    std::vector<uint8_t> m_inputs, m_targets;     // (B, T)
    layers::FloatBuffer m_encoded;                 // (B, T, C)
    std::vector<LayerActs> m_acts;                // (layers)
    layers::FloatBuffer m_lnf, m_lnfMean, m_lnfRstd; // (B, T, C), (B, T), (B, T)
    layers::FloatBuffer m_logits, m_probs;         // (B, T, V) each
    std::vector<float> m_losses;                  // (B, T)
    // Backward scratch, kept between steps so a step does not page in fresh memory.
    layers::FloatBuffer m_dlogits;                 // (B, T, V)
    layers::FloatBuffer m_dres;                    // (B, T, C) gradient of the residual stream
    layers::FloatBuffer m_dln;                     // (B, T, C) gradient of a LayerNorm output
    layers::FloatBuffer m_datty;                   // (B, T, C)
    layers::FloatBuffer m_dy;                      // (B, H, T, D)
    layers::FloatBuffer m_dqkv;                    // (B, T, 3C)
    layers::FloatBuffer m_dfchGelu, m_dfch;        // (B, T, F) each
    std::vector<float> m_dlosses;                 // (B, T) d(mean loss)/d(token loss)
    std::vector<Slice> m_slices;                  // how the last forward split the batch over threads
    std::vector<std::vector<float>> m_sliceGrads; // parameter gradients of slices 1.. (slice 0 uses m_grads)
    std::vector<AttentionGradients> m_attnGrads;  // per slice: the attention backward's outputs, reused every layer
    bool m_haveTargets = false;

    std::vector<float> m_sinusoid;                // (T, C) cached sinusoidal table
    std::unique_ptr<PositionBias> m_bias;
    const std::atomic<bool>* m_cancel = nullptr;
    void checkCancelled() const;
    uint64_t m_version = 1, m_biasVersion = 0;
};

// AdamW with decoupled weight decay on the tensors flagged `decay`; moments in float.
class AdamW {
public:
    explicit AdamW(size_t parameterCount);
    // One update of params from grads at learning rate lr; bias correction counts this optimiser's updates from 1,
    // so a run continued from a checkpoint's state carries on where it stopped.
    void update(Model& model, const TrainConfig& config, double lr);

    const std::vector<float>& firstMoment() const { return m_m; }
    const std::vector<float>& secondMoment() const { return m_v; }
    int updates() const { return m_updates; }
    // Restores a saved state; InputError when the sizes differ from the model's or a value is not finite.
    void restore(std::vector<float> m, std::vector<float> v, int updates);

private:
    std::vector<float> m_m, m_v; // first and second moments, parameter layout
    int m_updates = 0;
};

// Learning rate of step s (0-based): linear warm-up to the peak, then cosine decay to the minimum.
double learningRateAt(const TrainConfig& config, int step);

// Clamps trainable scheme values into their allowed ranges (kerple r1 > 0, 0 < r2 <= 2 for power, r2 > 0 for log),
// as the KERPLE reference code clamps after each step.
void clampSchemeParameters(Model& model);

// ---- evaluation ----

enum class EvalMode { NonOverlapping, Sliding };
EvalMode evalModeFromName(std::string_view name); // InputError naming the allowed modes

struct EvalOptions {
    std::vector<int> lengths{64, 128, 256, 512, 1024};
    EvalMode mode = EvalMode::NonOverlapping;
    int stride = 0;                       // sliding: tokens scored per window; 0 means length / 2
    size_t tokensPerBatch = 16384;        // windows are batched up to this many tokens per forward
    size_t maxTokens = 0;                 // score at most this many tokens (0: the whole text)
    std::function<bool(double fraction)> progress; // return false to cancel (RunError "cancelled")
};

struct EvalPoint {
    int length = 0;
    bool supported = true;       // false: learned positions past the context
    std::string note;            // why unsupported
    double loss = 0;             // mean nats per byte
    double perplexity = 0;       // exp(loss)
    double bitsPerByte = 0;      // loss / ln 2 (tokens are bytes)
    size_t tokens = 0;           // bytes scored
};

// Scores every byte of `text` after the first at each length. Non-overlapping: consecutive windows of `length`
// (the tail is a shorter window), every token scored once with the context inside its window. Sliding: windows of
// `length` advancing by `stride`, each scoring its last `stride` tokens (the first window scores all), so every
// scored token sees at least length - stride predecessors. Learned positions past the context are unsupported.
std::vector<EvalPoint> evaluateModel(Model& model, const std::vector<uint8_t>& text, const EvalOptions& options);

// ---- checkpoints ----

struct CheckpointInfo {
    int step = 0;
    double trainLoss = 0;
    std::string corpus;
    nlohmann::json training; // TrainConfig::toJson(), may be null
    std::shared_ptr<const AdamW> optimizer; // saved with the weights when set (train --init continues from it)
};

// Safetensors with every tensor of model.tensors() (F32) and __metadata__ {format, config (JSON), scheme, step,
// training (JSON), corpus, train_loss}; with info.optimizer also "optimizer.exp_avg" and "optimizer.exp_avg_sq"
// (flat, parameter layout) and __metadata__ optimizer_updates. Written atomically.
void saveCheckpoint(const Model& model, const CheckpointInfo& info, const std::string& path);
std::string checkpointBytes(const Model& model, const CheckpointInfo& info);

struct LoadedCheckpoint {
    std::unique_ptr<Model> model;
    CheckpointInfo info;
    std::unique_ptr<AdamW> optimizer; // when the file holds the optimiser state (info.optimizer stays empty)
};
// Validates the file (see parseSafetensors), the metadata (format, config), every expected tensor's presence and
// shape, no unexpected tensors, finite values, scheme values in range. InputError naming `source` and the problem.
LoadedCheckpoint loadCheckpoint(const std::string& path);
LoadedCheckpoint checkpointFromSafetensors(const SafetensorsFile& file, const std::string& source);

// ---- the model's own attention, for entropy and attention views ----

// q and k (H, N, D) of `layer` when the model reads the first N bytes of `text` (repeated when shorter), rotary
// applied as the kernel scores them. The provider keeps a reference to `model`.
QkProvider modelQkProvider(Model& model, std::vector<uint8_t> text, int layer);

// The layer a model view reads (entropy and attention --checkpoint --layer): `requested` when given, else the last
// layer. InputError "layer = L is out of range; allowed: integers in [0, layers-1] ..." otherwise.
int modelLayer(const ModelConfig& config, std::optional<long long> requested);

// Work (flops) of one forward over a sequence of every length in `lengths`: attention as attentionWork counts it in
// every layer, plus 2 flops per parameter and token for the dense layers. For checkWorkEstimate.
double modelForwardWork(const ModelConfig& config, const std::vector<int>& lengths);

} // namespace plab
