// Text generation with a key/value cache: greedy or sampled continuations of a prompt by a Hugging Face folder's
// model or a lab byte model, token by token, under the config's positions or a length-extension method.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace plab {

class HfModel;
class Model;

// The most new tokens one generation takes (the lab's longest sequence, kMaxLength).
constexpr int kMaxGenerateTokens = 1 << 20;

// What a generation does. The positions are named like the CLI's --scaling/--set: an empty `scaling` keeps the
// model's own (a folder's config scaling, a checkpoint's method); "none" removes it; any other method is applied
// zero-shot with `settings` (NAME=VALUE), as evaluation applies it.
struct GenerateOptions {
    int maxNew = 0;          // new tokens to generate, >= 1
    double temperature = 0;  // 0: greedy (argmax, the lowest id on a tie); > 0: sample softmax(logits / temperature)
    int topK = 0;            // sampling only: keep the k most likely tokens (0: all); top-k 1 is greedy
    uint64_t seed = 0;       // the sampler's seed: the same seed, prompt and options give the same tokens
    std::string scaling;     // "" (the model's own), "none", or a method (hfPositionSpec / Model::setScaling)
    std::vector<std::string> settings; // NAME=VALUE of the method's parameters
    // A folder's layer types the method reaches (hfScalingLayersByName: full, sliding or all; --scaling-layers). A
    // method that would reach no rotary layer is refused (checkHfScalingReach). Lab models have one layer type.
    std::string scalingLayers = "full";
    std::vector<int> stopIds;          // generation ends after emitting one of these (e.g. an end-of-text id)
};

struct GenerateResult {
    std::vector<int> ids;              // the new tokens only (the prompt is not repeated)
    double prefillMs = 0;              // wall time of the prompt's forward (the cache filled)
    double decodeTokensPerSecond = 0;  // new tokens after the first per second of wall time (0 with one token)
    double decodeCpuSeconds = 0;       // the process's CPU time (all threads) over those tokens
    double cacheBytes = 0;             // bytes the key/value cache holds at the end
    bool canceled = false;             // the callback returned false
    std::string positions;             // what was applied, e.g. "rope+yarn (factor 4, ...)"
};

// Called with each new token id as soon as it is chosen; false cancels (the result keeps the tokens so far).
using GeneratedToken = std::function<bool(int id)>;

// InputError naming the option, its value and what is allowed: maxNew <= 0, temperature < 0 or not finite, topK < 0.
void checkGenerateOptions(const GenerateOptions& options);

// A folder's model continuing `prompt` (token ids): the prompt's forward fills each layer's cache of keys (rotated,
// after q/k norms) and values, then each new token runs one row of attention against it. InputError for an empty
// prompt, an id outside the vocabulary, bad options, a prompt (or prompt + maxNew) past a learned-position table, and
// a method that remaps positions (rerope, leaky-rerope, self-extend: no cached key has one placement).
GenerateResult generate(const HfModel& model, const std::vector<int>& prompt, const GenerateOptions& options,
                        const GeneratedToken& onToken = {});

// A lab byte model continuing `prompt` (byte ids 0..255), same options and errors. The model's method is set to the
// options' for the call and restored after.
GenerateResult generate(Model& model, const std::vector<int>& prompt, const GenerateOptions& options,
                        const GeneratedToken& onToken = {});

// The id chosen from one row of `vocab` logits: greedy (temperature 0 or topK 1) or a sample drawn with `state`
// (a splitmix64 state the caller keeps between tokens). The one sampler of every generation.
int chooseToken(const float* logits, int vocab, const GenerateOptions& options, uint64_t& state);

} // namespace plab
