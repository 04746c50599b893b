// A real model's attention on a token sequence (maps per layer and head, first-token sinks, entropy by position):
// the one home of every number the app's real-model views and lesson 12 show.
#pragma once

#include "hf/hf_model.h"
#include "views/entropy.h"

#include <functional>
#include <vector>

namespace plab {

// What one forward leaves behind for the views, all from the lab's attention kernel (HfModel::observeAttention).
struct HfAttentionCapture {
    int layers = 0;
    int heads = 0;
    int kvHeads = 0;
    int length = 0; // T
    int headDim = 0;
    // The kernel's bias of each captured layer: none (rotary is inside q and k) or the model's ALiBi, with a sliding
    // layer's window; layers differ in mixed models (gemma3's sliding and full layers, NoPE layers).
    std::vector<SchemeSpec> layerSchemes;
    // Per layer, as the kernel read them: q (heads, T, D) and k (kvHeads, T, D) after rotary; empty unless kept.
    std::vector<std::vector<float>> q, k;
    std::vector<std::vector<float>> logSumExp;  // per layer (heads, T): each query row's softmax normaliser
    std::vector<std::vector<float>> rowEntropy; // per layer (heads, T), nats
    std::vector<double> sinkMass;               // (layers, heads): mean over queries of the probability on token 0

    double sink(int layer, int head) const { return sinkMass[static_cast<size_t>(layer) * heads + head]; }
    bool hasMaps() const { return !q.empty(); }
};

// Called after each layer with the number done; false cancels (captureHfAttention then returns an empty capture).
using HfAttentionProgress = std::function<bool(int layersDone, int layers)>;

// Runs the model on `ids` under `positions` (hfPositionSpec) and keeps every layer's row normalisers, row entropies
// and sink masses and, with `keepMaps`, its rotated q and k so that hfAttentionMap can draw any layer and head
// without another forward. The memory q and k take is checked first (InputError naming both sizes).
HfAttentionCapture captureHfAttention(const HfModel& model, const std::vector<int>& ids, const HfPositions& positions,
                                      bool keepMaps, const HfAttentionProgress& progress = {});

// How a level-of-detail cell sums up the pairs of its block. Max keeps one colour scale meaningful at every zoom (a
// block's max is a probability that occurs, so a zoomed-out map and a zoomed-in one agree on the peak, and a thin line
// such as a previous-token diagonal stays as bright as it is); Mean is the block's average attention.
enum class HfMapReduce { Mean, Max };

// One head's attention probabilities over a window of the T x T map, at a level of detail: the window's query rows
// [rowBegin, rowEnd) and key columns [colBegin, colEnd) are cut into at most maxCells blocks per side and each cell is
// the mean (or max) probability over the visible pairs of its block (-inf where the causal mask hides all of them).
// Blocks of one pair give the exact probabilities p(m, n) = exp(s(m, n) - logSumExp(m)), with s the kernel's score
// (q_m . k_n / sqrt(D) + bias) * rowScale(m).
struct HfAttentionMap {
    int rowBegin = 0, rowEnd = 0, colBegin = 0, colEnd = 0;
    int rows = 0, cols = 0;
    HfMapReduce reduce = HfMapReduce::Mean;
    std::vector<float> values; // (rows, cols) row-major
    // The largest probability over the window's visible pairs, and over those past key 0 (the first-token sink).
    float peak = 0, peakPastFirstKey = 0;
    // The first position of row block i / column block j (the last block ends at rowEnd / colEnd).
    int rowStart(int i) const;
    int colStart(int j) const;
    // The block holding query row m / key column n (inside the window).
    int rowBlock(int m) const;
    int colBlock(int n) const;
    bool perToken() const { return rows == rowEnd - rowBegin && cols == colEnd - colBegin; }
};
// With `sampleRows` each row block is its last query row alone (columns still block means): the overview grid's
// thumbnails of every layer and head, O(maxCells T D) per head instead of O(T^2 D). Otherwise the work is one score
// per visible pair of the window, O(window area D): a zoomed-in window is cheap, the whole map at 8192 tokens is not.
// InputError for a layer, head or window outside the capture, or a capture made without maps. An empty window
// (rowEnd <= rowBegin) means the whole map.
HfAttentionMap hfAttentionMap(const HfAttentionCapture& capture, int layer, int head, int maxCells, int rowBegin = 0,
                              int rowEnd = 0, int colBegin = 0, int colEnd = 0, bool sampleRows = false,
                              HfMapReduce reduce = HfMapReduce::Mean);

// A window [rowBegin, rowEnd) x [colBegin, colEnd) in at most maxCells blocks per side made from max maps already
// computed, without another score: each cell is the max over the cells of the first of `sources` (finest first) that
// covers the cell's block and is no coarser than the cell, else of the last source (the whole map's overview). Equal
// to hfAttentionMap(..., HfMapReduce::Max) of the same window where a per-token source covers it; coarser where only a
// coarser source does (a view's picture while the detail is computed). InputError for a mean map or a window outside
// the last source.
HfAttentionMap hfResampleMap(const std::vector<const HfAttentionMap*>& sources, int maxCells, int rowBegin, int rowEnd,
                             int colBegin, int colEnd);

// Mean row entropy (nats) over the heads of each layer at each query position m (the query sees m + 1 tokens):
// (layers, T) row-major, the "entropy against length" of a real model on one text.
std::vector<double> hfEntropyByPosition(const HfAttentionCapture& capture);

// The same curves grouped by layer type (the Entropy page's "by layer type"): for each type of `config` present
// among the capture's layers (full, sliding, chunked, in that order), the mean over its layers of
// hfEntropyByPosition's rows. InputError when the capture's layers are not the config's.
struct HfEntropyByType {
    HfLayerType type = HfLayerType::Full;
    int layers = 0;
    std::vector<double> entropy; // (T): one value per query position m
};
std::vector<HfEntropyByType> hfEntropyByLayerType(const HfAttentionCapture& capture, const HfConfig& config);

// One layer of the model on `ids` under `positions` (hfPositionSpec), the forward stopped after it: the kernel's output
// (heads, T, D) and, with `probabilities`, every head's exact map (heads, T, T) from hfAttentionMap, 0 where the causal
// mask hides a pair. InputError for a layer outside the model (naming its range) or a map too large for memory.
struct HfLayerAttentionResult {
    int heads = 0, length = 0, headDim = 0;
    std::vector<float> out;
    std::vector<float> probabilities;
};
HfLayerAttentionResult hfLayerAttention(const HfModel& model, const std::vector<int>& ids, const HfPositions& positions,
                                        int layer, bool probabilities);

// Attention entropy of one layer against sequence length, the lab's entropy curve (views/entropy.h) of a real model:
// for each n of `lengths` the first n of `ids` are one window (its own forward, so a method that depends on the
// length, dynamic-ntk, sees n), and each head's row entropies (the kernel's) give the last row's and the rows' mean.
// InputError for a layer outside the model or a length outside [1, ids.size()].
std::vector<EntropyPoint> hfEntropyCurve(const HfModel& model, const std::vector<int>& ids, const HfPositions& positions,
                                         int layer, const std::vector<int>& lengths);

} // namespace plab
