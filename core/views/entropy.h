// Attention entropy against sequence length, from the bias alone, from seeded random q/k, or from a provider.
#pragma once

#include "schemes/position_bias.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace plab {

// Queries and keys for one sequence length, (H, N, D) row-major, before any rotary step (the kernel rotates).
struct QkSample {
    int heads = 0;
    int length = 0;
    int headDim = 0;
    std::vector<float> q; // (H, N, D)
    std::vector<float> k; // (H, N, D)
    // FoX: the cumulative log forget gates F (H, N) of the same forward as q and k (Model::layerLogForget), which the
    // kernel turns into the scores' F_m - F_n; empty for every other scheme (the scheme's table is the bias).
    std::vector<double> logForget;
};
using QkProvider = std::function<QkSample(int length)>;

// q, k ~ N(0, 1) per component from `seed`; each head's stream is prefix-stable (length N's rows are the first
// rows of length 2N's), unrotated: the kernel rotates them (attentionRowEntropies). A rotary scheme's dim must equal
// headDim (checkRotaryHeadDim: partial rotary is rope's rotary-fraction).
QkProvider randomQkProvider(const SchemeSpec& spec, int headDim, uint64_t seed);

struct EntropyPoint {
    int length = 0;
    int head = 0;
    double entropyLast = 0; // row of the last query
    double entropyMean = 0; // mean over all rows
};

// Called before each length and once after the last with the number of lengths done; false stops the curve there.
using EntropyProgress = std::function<bool(int lengthsDone)>;

// One point per (length, head), lengths in order, each row entropy from the attention kernel
// (attentionRowEntropies), with the sample's forget gates when it has them (fox). `provider` null means q = k = 0.
std::vector<EntropyPoint> entropyCurve(const SchemeSpec& spec, const std::vector<int>& lengths,
                                       const QkProvider& provider, const EntropyProgress& progress = {});

// The lengths a curve is drawn at unless the user lists them: 16, 32, 64, ... up to maxLength (the Entropy view's
// "lengths 16 … N" and the CLI's --lengths default).
std::vector<int> defaultEntropyLengths(int maxLength);

} // namespace plab
