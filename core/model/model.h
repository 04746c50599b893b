// The byte-level decoder-only transformer: parameters, forward/backward, and the model's own attention for views.
#pragma once

#include "attention/attention.h"
#include "views/entropy.h"
#include "model/layers.h"
#include "model/model_config.h"
#include "schemes/position_bias.h"
#include "schemes/schemes.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace plab {

class Model {
public:
    // Validates the config (unless `check` says it was) and initialises every parameter from config.seed (GPT-2
    // scheme: N(0, 0.02), residual output projections scaled by 1/sqrt(2 layers), LayerNorm 1/0, t5 table from the
    // scheme's prior).
    explicit Model(const ModelConfig& config, ConfigCheck check = ConfigCheck::Validate);

    const ModelConfig& config() const { return m_config; }
    // Evaluates the same weights under another length-extension method (zero-shot): "none" removes the checkpoint's.
    // InputError for a method or parameter the scheme does not take.
    void setScaling(const std::string& method, const std::vector<std::string>& settings);
    // The scheme with the model's current learned values (t5 table, kerple r1/r2) filled in.
    SchemeSpec schemeSpec() const;
    // The spec layer `layer` attends with: schemeSpec(), or on a NoPE layer of the schedule (ModelConfig::nopeEvery)
    // scheme none with the model's temperature. What a view of one layer's attention must use.
    SchemeSpec layerSchemeSpec(int layer) const;
    // Longest sequence the model accepts: the context for learned positions, otherwise kMaxLength.
    int maxLength() const;
    // Factor on the token embedding at the input: sqrt(d_model) for sinusoidal, else 1 (the tied head is unscaled).
    float embeddingScale() const;

    const std::vector<ParameterTensor>& tensors() const { return m_tensors; }
    const ParameterTensor& tensor(const std::string& name) const; // std::out_of_range when absent
    layers::FloatBuffer& parameters() { return m_params; }
    const layers::FloatBuffer& parameters() const { return m_params; }
    layers::FloatBuffer& gradients() { return m_grads; }
    size_t parameterCount() const { return m_params.size(); }
    // Call after changing parameters() directly (optimizer, loading): cached bias tables are rebuilt.
    void parametersChanged() { ++m_version; }

    // Forward over B sequences of T tokens at positions 0..T-1 (inputs (B, T)). With targets (B, T) returns the
    // mean cross-entropy (nats) and keeps per-token losses; without, returns 0. InputError when T > maxLength().
    // With `weights` (B, T; each >= 0, not all 0) the loss is the weighted mean sum(w l) / sum(w) and backward() its
    // gradient: a task's loss on its answer span only (weight 1 there, 0 elsewhere).
    float forward(const uint8_t* inputs, const uint8_t* targets, int B, int T, const float* weights = nullptr);
    const layers::FloatBuffer& tokenLosses() const { return m_losses; } // (B, T)
    const layers::FloatBuffer& logits() const { return m_logits; }      // (B, T, V) of the last forward

    void zeroGradients();
    // Accumulates into gradients() the gradient of the last forward's mean loss (needs targets).
    void backward();

    // q and k (B, H, T, D) of layer l from the last forward, before rotation.
    const layers::FloatBuffer& layerQueries(int layer) const { return m_acts[layer].q; }
    const layers::FloatBuffer& layerKeys(int layer) const { return m_acts[layer].k; }
    const layers::FloatBuffer& layerValues(int layer) const { return m_acts[layer].v; }
    // Layer l's attention output (B, T, C), heads merged, before the output projection: what a test compares with
    // the kernel's twin on the layer's own q, k, v.
    const layers::FloatBuffer& layerAttentionOutput(int layer) const { return m_acts[layer].atty; }
    // FoX: layer l's cumulative log forget gates F (B, H, T) from the last forward (AttentionDims::logForget); empty
    // for other schemes and for a schedule's NoPE layers.
    const std::vector<double>& layerLogForget(int layer) const { return m_acts[layer].logForget; }
    // Estimated bytes of activations for a forward over B x T (for memory checks before a long evaluation).
    double activationBytes(int B, int T) const;
    // While *flag is true, forward and backward stop at the next layer with RunError("cancelled"); parameters are
    // untouched (the optimiser has not run), so the model stays consistent. Null disables.
    void setCancelFlag(const std::atomic<bool>* flag) { m_cancel = flag; }

private:
    struct LayerActs {
        layers::FloatBuffer ln1, ln1Mean, ln1Rstd; // (B, T, C), (B, T), (B, T)
        layers::FloatBuffer qkv;                   // (B, T, 3C)
        layers::FloatBuffer forgetLogits;          // (B, T, H) FoX's gate logits w_h . ln1 + b_h
        std::vector<double> logForget;             // (B, H, T) FoX's F, their cumulative ln σ
        layers::FloatBuffer q, k, v;               // (B, H, T, D) each, unrotated
        std::vector<AttentionForward> attn;        // per slice: out (B_s, H, T, D), logSumExp (B_s, H, T)
        layers::FloatBuffer atty;                  // (B, T, C) attention output, heads merged
        layers::FloatBuffer res2;                  // (B, T, C) residual after attention
        layers::FloatBuffer ln2, ln2Mean, ln2Rstd; // (B, T, C), (B, T), (B, T)
        layers::FloatBuffer fch, fchGelu;          // (B, T, F) each
        layers::FloatBuffer res3;                  // (B, T, C) residual after the MLP = next layer's input
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
    // Accumulates the slice's parameter gradients into `grads` (gradients() layout).
    void backwardSlice(int slice, const PositionBias& bias, float* grads);
    const PositionBias& positionBias(int T); // also builds m_nopeBias when the schedule has NoPE layers
    const PositionBias& layerBias(int layer, const PositionBias& schemeBias) const;
    const float* absolutePositions(int T); // (T, C) or null

    ModelConfig m_config;
    SchemeSpec m_baseSpec;
    std::vector<ParameterTensor> m_tensors;
    std::map<std::string, size_t> m_tensorIndex;
    layers::FloatBuffer m_params; // every trainable value, in m_tensors order
    layers::FloatBuffer m_grads;  // same layout

    // Per-layer offsets of the stacked tensors (looked up once).
    struct LayerParams {
        size_t ln1w, ln1b, qkvw, qkvb, attprojw, attprojb, ln2w, ln2b, fcw, fcb, fcprojw, fcprojb;
        bool forget = false; // FoX's gate (forgetw (H, C), forgetb (H)) on this layer
        size_t forgetw = 0, forgetb = 0;
    };
    std::vector<LayerParams> m_layerParams;

    int m_B = 0, m_T = 0;
    std::vector<uint8_t> m_inputs, m_targets;        // (B, T)
    layers::FloatBuffer m_encoded;                   // (B, T, C)
    std::vector<LayerActs> m_acts;                   // (layers)
    layers::FloatBuffer m_lnf, m_lnfMean, m_lnfRstd; // (B, T, C), (B, T), (B, T)
    layers::FloatBuffer m_logits, m_probs;           // (B, T, V) each
    layers::FloatBuffer m_losses;                    // (B, T)
    // Backward scratch, kept between steps so a step does not page in fresh memory.
    layers::FloatBuffer m_dlogits;                 // (B, T, V)
    layers::FloatBuffer m_dres;                    // (B, T, C) gradient of the residual stream
    layers::FloatBuffer m_dln;                     // (B, T, C) gradient of a LayerNorm output
    layers::FloatBuffer m_datty;                   // (B, T, C)
    layers::FloatBuffer m_dy;                      // (B, H, T, D)
    layers::FloatBuffer m_dqkv;                    // (B, T, 3C)
    layers::FloatBuffer m_dforget;                 // (B, T, H) FoX's gate logits
    layers::FloatBuffer m_dfchGelu, m_dfch;        // (B, T, F) each
    layers::FloatBuffer m_dlosses;                 // (B, T) d(mean loss)/d(token loss)
    std::vector<float> m_lossWeights;              // (B, T) of the last forward; empty: the plain mean
    std::vector<Slice> m_slices;                   // how the last forward split the batch over threads
    std::vector<layers::FloatBuffer> m_sliceGrads; // parameter gradients of slices 1.. (slice 0 uses m_grads)
    std::vector<AttentionGradients> m_attnGrads;   // per slice: the attention backward's outputs, reused every layer
    bool m_haveTargets = false;

    layers::FloatBuffer m_sinusoid; // (T, C) cached sinusoidal table
    std::unique_ptr<PositionBias> m_bias;
    std::unique_ptr<PositionBias> m_nopeBias; // the NoPE layers' (nopeEvery), else null
    // With layer types: one bias per type present (LayerType order), each with its mask or the full layers' own scheme.
    std::vector<std::unique_ptr<PositionBias>> m_typeBiases;
    std::vector<std::unique_ptr<PositionBias>> m_copeBiases; // (layers) cope: each layer's own embeddings, else empty
    const std::atomic<bool>* m_cancel = nullptr;
    void checkCancelled() const;
    uint64_t m_version = 1, m_biasVersion = 0;
};

// q and k (H, N, D) of `layer` when the model reads the first N bytes of `text` (repeated when shorter), before any
// rotation (the kernel rotates, as in the model). The provider keeps a reference to `model`.
QkProvider modelQkProvider(Model& model, std::vector<uint8_t> text, int layer);

// The attention-entropy curve of a model's `layer` reading `text` at each length: the provider's q and k (and a fox
// layer's gates) scored with the layer's own scheme, `layerSchemeSpec` (none on a NoPE layer of the schedule, where
// the model does not rotate). The one home of that pairing for the CLI's `entropy --checkpoint` and the Entropy tab.
struct ModelEntropyCurve {
    SchemeSpec spec; // what the layer attends with
    std::vector<EntropyPoint> points;
};
ModelEntropyCurve modelEntropyCurve(Model& model, std::vector<uint8_t> text, int layer,
                                    const std::vector<int>& lengths, const EntropyProgress& progress = {});

// The layer a model view reads (entropy and attention --checkpoint --layer): `requested` when given, else the last
// layer. InputError "layer = L is out of range; allowed: integers in [0, layers-1] ..." otherwise.
int modelLayer(const ModelConfig& config, std::optional<long long> requested);

// Work (flops) of one forward over a sequence of every length in `lengths`: attention as attentionWork counts it in
// every layer, plus 2 flops per parameter and token for the dense layers. For checkWorkEstimate.
double modelForwardWork(const ModelConfig& config, const std::vector<int>& lengths);

} // namespace plab
