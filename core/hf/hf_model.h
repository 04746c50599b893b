// A Hugging Face checkpoint loaded in a products precision (float32 or BF16 weights) and its forward (logits, per-token
// losses) through the lab's fused attention kernel.
#pragma once

#include "attention/attention.h"
#include "hf/hf_config.h"
#include "hf/hf_scaling_layers.h"
#include "hf/hf_products.h"

#include <Eigen/Core>
#include <nlohmann/json_fwd.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace plab {

// What a forward keeps of the logits: none (attention observers), all (T, vocab), or kHfLossRows rows at a time.
enum class HfForwardOutput { None, Logits, Losses };
// Rows of logits the per-token losses compute at once: memory O(kHfLossRows x vocab) whatever the window.
constexpr int kHfLossRows = 256;

// Bytes one forward of `length` tokens allocates (one layer's activations and the logits `output` keeps): the one
// formula behind the forward's memory check and an evaluation's window estimate.
double hfForwardBytes(const HfConfig& config, int length, HfPrecision precision, HfForwardOutput output);
// The bytes a folder's model takes once loaded under `precision` (weights converted, whatever their stored dtype),
// plus one forward with its logits at the model's context (at most 2048 tokens). The number checked before loading.
double hfModelMemoryBytes(const HfConfig& config, HfPrecision precision);

// One layer's attention as the kernel computed it during a forward (HfModel::observeAttention).
struct HfLayerAttention {
    int layer = 0;
    const PositionBias& bias;        // what the kernel added: none or ALiBi (rotary is already in q and k)
    const AttentionDims& dims;       // heads, kvHeads, length T, head dim D
    const float* q;                  // (heads, T, D), after rotary and q/k norm, as the kernel read it
    const float* k;                  // (kvHeads, T, D), likewise
    const AttentionForward& forward; // out, logSumExp and rowEntropy (nats) of every (head, query)
};
// Called after each layer's attention; false stops the forward there.
using HfAttentionObserver = std::function<bool(const HfLayerAttention&)>;

// The summary card of a folder's config.json (and the weights' headers, for skipped_tensors) under `precision`, as `positionlab-cli inspect --json`
// writes it and Python's Model.config returns it: family, layers, heads, kv_heads, head_dim, vocab, context, scheme,
// rope_theta, scaling, positions, parameters, memory_bytes, nope_layers, layer_types, sliding_window, softcap,
// rope_by_layer_type, skipped_tensors, ...
nlohmann::json hfSummaryJson(const HfConfig& config, HfPrecision precision);

class HfWeights;
struct HfForwardState; // one forward's biases and buffers (hf_forward_state.h)
class HfModel;

// A generation's key/value cache (hf_decode.cpp): every layer's keys, rotated and after the q/k norms (as transformers
// caches them), and values, of up to `capacity` tokens under one positions spec (on the layer types it names), filled by HfModel::prefill and grown
// by HfModel::decode. Memory: 2 x layers x kvHeads x headDim x capacity numbers, allocated at the prefill: float32
// under the Float32 precision, BF16 (2 bytes) under BFloat16.
class HfKvCache {
public:
    HfKvCache(const HfPositions& positions, int capacity);
    ~HfKvCache();
    HfKvCache(const HfKvCache&) = delete;
    HfKvCache& operator=(const HfKvCache&) = delete;
    int length() const;   // tokens cached
    int capacity() const; // tokens it can hold
    double bytes() const; // bytes its keys and values take
    struct Data;
    Data& data() { return *m_data; }

private:
    std::unique_ptr<Data> m_data;
};

class HfModel {
public:
    // Reads config.json, checks that the CPU runs `precision` natively (checkHfPrecisionSupported) and the memory
    // estimate against what the machine has available (InputError naming both sizes), then maps the weights and
    // converts every tensor the family needs (product weights to `precision`, the rest to float32), checking names
    // and shapes. Under BF16 the product weights stored as BF16 are read in place from the mapping, which stays open.
    explicit HfModel(const std::string& folder, HfPrecision precision = HfPrecision::Float32);
    ~HfModel();
    HfModel(const HfModel&) = delete;
    HfModel& operator=(const HfModel&) = delete;

    // The tensors of a folder that a load would skip, without loading it (inspect): InputError as loading gives for a
    // missing tensor, a tensor read with a dtype that is not numbers, or a vision tower.
    static std::vector<std::string> unreadTensors(const std::string& folder);

    const HfConfig& config() const { return m_config; }
    double parameterCount() const { return m_parameters; }
    HfPrecision precision() const { return m_precision; }
    // The tensors of the folder the forward never reads (HfWeights::unreadNames), e.g. Pythia's old attention masks.
    const std::vector<std::string>& skippedTensors() const { return m_skipped; }
    // Bytes the loaded weights take (hfWeightBytes per parameter).
    double weightBytes() const { return hfWeightBytes(m_precision) * m_parameters; }

    // Logits (T, vocab) of `ids` at positions 0..T-1 under `positions` (hfPositionSpec: the config's own scaling or a
    // method applied zero-shot, on the layer types HfPositions::layers names). Activations and accumulators are float32 (the products' inputs BF16 under that
    // precision). InputError for an id outside the vocabulary or, for learned positions, more tokens than the model's
    // position table (naming both).
    HfMatrix logits(const std::vector<int>& ids, const HfPositions& positions) const;
    // The logits of the last `rows` positions only (rows x vocab; rows clamped to [0, T]): the same forward as logits,
    // its head applied to those rows, so a long prompt keeps O(rows x vocab) of logits (retrieval scoring).
    HfMatrix tailLogits(const std::vector<int>& ids, const HfPositions& positions, int rows) const;
    // losses[t] = -log p(targets[t] | ids[0..t]) in nats for t < targets.size() (at most ids.size()), from the same
    // forward as logits, its head applied `blockRows` rows at a time. InputError for a target outside the vocabulary.
    std::vector<double> nextTokenLosses(const std::vector<int>& ids, const std::vector<int>& targets,
                                        const HfPositions& positions, int blockRows = kHfLossRows) const;
    // The same forward without the output head, handing each layer's attention (row entropies requested) to
    // `observer`; false when the observer stopped it.
    bool observeAttention(const std::vector<int>& ids, const HfPositions& positions,
                          const HfAttentionObserver& observer) const;

    // Generation with a cache (hf_decode.cpp). prefill runs the forward of `ids` into an empty cache (InputError unless
    // the cache's capacity fits hfMaxLength, i.e. a learned-position table, and holds the ids) and returns the logits
    // (vocab) after the last id; decode runs one token at position cache.length() against the cache (one row of
    // attention per layer, attentionDecode) and returns the logits after it. Rotary methods follow transformers'
    // cached keys: each key is turned once, at its position, by the table of the sequence's length when it was made
    // (dynamic-ntk and longrope change the table as the sequence grows; older keys are not turned again). Methods
    // that remap positions (rerope, leaky-rerope, self-extend) are refused with the reason (decodeUnsupportedReason).
    std::vector<float> prefill(HfKvCache& cache, const std::vector<int>& ids) const;
    std::vector<float> decode(HfKvCache& cache, int id) const;

    struct Layer;

private:
    explicit HfModel(HfConfig config); // unloaded, for unreadTensors
    // Every tensor the family's forward reads, taken from `weights` into the layers: the one rule of what is read.
    void load(const HfWeights& weights);
    // The layers into *hidden (T, hidden), before the final norm (headLogits applies it); null stops after the layers
    // (observers). `output` is what the caller will keep of the logits, for the memory check.
    bool forward(const std::vector<int>& ids, const HfPositions& positions, const HfAttentionObserver* observer,
                 HfMatrix* hidden, HfForwardOutput output, HfKvCache::Data* cache = nullptr) const;
    // What every forward's state starts from: the positions of each layer kind, the kernel's dims for `rows` tokens,
    // the buffers; biases are built for sequences of up to `biasLength` tokens.
    void initState(HfForwardState& state, const HfPositions& positions, int rows, int biasLength) const;
    // x (ids.size(), hidden): the embeddings of `ids` at positions first.. (gpt2's table added), scaled and normed as
    // the family does; InputError for an id outside the vocabulary.
    void embed(const std::vector<int>& ids, int first, HfMatrix& x) const;
    // The final norm of `hidden`'s rows, the head and the family's logit scale and cap: logits (rows, vocab).
    void headLogits(HfMatrix& hidden, HfMatrix& logits) const;
    // One layer's attention inside runLayer (hf_decode.cpp): the kernel over the window (and, with a cache in a
    // prefill, its rotated keys and values kept), or a decode row against the cache.
    void attend(size_t index, HfForwardState& state, const PositionBias& bias) const;
    const HfWeightMatrix& head() const; // the output head: m_head, or the tied embedding
    // The tensors of the gpt2, bloom and gpt_neox layouts.
    void loadGpt2(const HfWeights& weights);
    void loadBloom(const HfWeights& weights);
    void loadNeox(const HfWeights& weights);
    // The decoder layout's tensors (llama and every family of that layout), named and shaped by m_config's block.
    void loadDecoder(const HfWeights& weights);
    // The family's logit scale and final soft cap (cohere, granite, gemma2) on rows of logits.
    void finishLogits(HfMatrix& logits) const;
    // One layer of the forward: x += the block of layer `index` (attention and MLP as the family places them).
    bool runLayer(size_t index, HfForwardState& state, HfMatrix& x) const;
    HfConfig m_config;
    HfPrecision m_precision = HfPrecision::Float32;
    std::unique_ptr<HfWeights> m_weights; // the mapped checkpoint, kept under BF16 for the weights read in place
    double m_parameters = 0;
    HfWeightMatrix m_embed; // (vocab, hidden)
    HfMatrix m_positions;   // gpt2's wpe (context, hidden), float32
    HfWeightMatrix m_head;  // (vocab, hidden) when untied
    std::vector<float> m_embedNormW, m_embedNormB, m_finalNormW, m_finalNormB;
    std::vector<std::unique_ptr<Layer>> m_layers;
    std::vector<std::string> m_skipped;
};

} // namespace plab
