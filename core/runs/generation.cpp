// Generation loops over a key/value cache (folders) or growing windows (lab byte models), and the one sampler.
#include "runs/generation.h"

#include "base/errors.h"
#include "hf/hf_config.h"
#include "hf/hf_model.h"
#include "hf/hf_scaling_layers.h"
#include "model/model.h"
#include "schemes/rotary_scaling.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <numeric>

namespace plab {

void checkGenerateOptions(const GenerateOptions& options)
{
    // Each message names its parameter (the CLI's option of the same name, cliMessage).
    if (options.maxNew < 1 || options.maxNew > kMaxGenerateTokens)
        throw InputError("max-new = " + std::to_string(options.maxNew) + " is out of range; allowed: integers in [1, " +
                             std::to_string(kMaxGenerateTokens) + "]",
                         "max-new");
    if (!(std::isfinite(options.temperature) && options.temperature >= 0 && options.temperature <= 1e6))
        throw InputError("temperature = " + exactText(options.temperature) +
                             " is out of range; allowed: 0 (greedy) or a positive number up to 1e6",
                         "temperature");
    if (options.topK < 0)
        throw InputError("top-k = " + std::to_string(options.topK) +
                             " is out of range; allowed: 0 (every token) or a positive count",
                         "top-k");
}

namespace {

// splitmix64: a uniform double in [0, 1) from the caller's state (the same seed, the same draws on every machine).
double uniform(uint64_t& state)
{
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * 0x1.0p-53;
}

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start)
{
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// The loop both model kinds share: `first` gives the logits after the prompt (timed as the prefill), `next` the
// logits after one more token; each chosen token goes to `onToken` (false cancels) and ends the loop on a stop id.
template <typename First, typename Next>
GenerateResult runLoop(const GenerateOptions& options, int vocab, const GeneratedToken& onToken, First first, Next next)
{
    GenerateResult result;
    uint64_t state = options.seed;
    const auto start = Clock::now();
    std::vector<float> logits = first();
    result.prefillMs = 1e3 * secondsSince(start);
    const auto decodeStart = Clock::now();
    const std::clock_t cpuStart = std::clock();
    int steps = 0;
    while (true) {
        const int id = chooseToken(logits.data(), vocab, options, state);
        result.ids.push_back(id);
        if (onToken && !onToken(id)) {
            result.canceled = true;
            break;
        }
        if (static_cast<int>(result.ids.size()) >= options.maxNew ||
            std::find(options.stopIds.begin(), options.stopIds.end(), id) != options.stopIds.end())
            break;
        logits = next(id);
        ++steps;
    }
    const double seconds = secondsSince(decodeStart);
    result.decodeCpuSeconds = static_cast<double>(std::clock() - cpuStart) / CLOCKS_PER_SEC;
    result.decodeTokensPerSecond = steps > 0 && seconds > 0 ? steps / seconds : 0;
    return result;
}

void checkPrompt(const std::vector<int>& prompt, int vocab)
{
    if (prompt.empty())
        throw InputError("the prompt is empty; allowed: at least one token");
    for (size_t t = 0; t < prompt.size(); ++t)
        if (prompt[t] < 0 || prompt[t] >= vocab)
            throw InputError("token id " + std::to_string(prompt[t]) + " at position " + std::to_string(t) +
                             " is out of range; allowed: integers in [0, " + std::to_string(vocab - 1) +
                             "] (vocabulary of " + std::to_string(vocab) + ")");
}

// InputError when the prompt and its continuation pass `maxLength` (a learned-position table), naming both counts.
void checkTotalLength(int prompt, int maxNew, int maxLength, const std::string& table)
{
    if (prompt > maxLength)
        throw InputError("the prompt has " + std::to_string(prompt) + " tokens, more than the " +
                         std::to_string(maxLength) + " positions of " + table + "; allowed: prompts up to " +
                         std::to_string(maxLength) + " tokens");
    if (static_cast<long long>(prompt) + maxNew > maxLength)
        throw InputError("max-new = " + std::to_string(maxNew) + " after a prompt of " + std::to_string(prompt) +
                             " tokens passes the " + std::to_string(maxLength) + " positions of " + table +
                             "; allowed: max-new up to " + std::to_string(maxLength - prompt),
                         "max-new");
}

} // namespace

int chooseToken(const float* logits, int vocab, const GenerateOptions& options, uint64_t& state)
{
    if (options.temperature == 0 || options.topK == 1) // greedy: the first of the largest (NaN never wins)
        return static_cast<int>(std::max_element(logits, logits + vocab, [](float a, float b) { return a < b; }) -
                                logits);
    std::vector<int> order(static_cast<size_t>(vocab));
    std::iota(order.begin(), order.end(), 0);
    const int keep = options.topK > 0 ? std::min(options.topK, vocab) : vocab;
    // The k largest logits, ties to the lower id, so the candidates never depend on the sort's whims.
    std::partial_sort(order.begin(), order.begin() + keep, order.end(),
                      [&](int a, int b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); });
    const double top = logits[order[0]];
    std::vector<double> weights(static_cast<size_t>(keep));
    double sum = 0;
    for (int i = 0; i < keep; ++i)
        sum += weights[i] = std::exp((logits[order[i]] - top) / options.temperature);
    double draw = uniform(state) * sum;
    for (int i = 0; i < keep; ++i) {
        draw -= weights[i];
        if (draw < 0)
            return order[i];
    }
    return order[keep - 1]; // rounding left a sliver past the last weight
}

GenerateResult generate(const HfModel& model, const std::vector<int>& prompt, const GenerateOptions& options,
                        const GeneratedToken& onToken)
{
    const HfConfig& c = model.config();
    checkGenerateOptions(options);
    checkPrompt(prompt, c.vocab);
    const int P = static_cast<int>(prompt.size());
    checkTotalLength(P, options.maxNew, hfMaxLength(c),
                     c.scheme == "learned" ? "the learned table of " + c.modelType + " (" + c.folder + ")"
                                           : "the lab's longest sequence");
    const SchemeSpec positions = hfPositionSpec(c, options.scaling, options.settings);
    const HfScalingLayers layers = hfScalingLayersByName(options.scalingLayers);
    if (!options.scaling.empty() && options.scaling != c.scaling)
        checkHfScalingReach(c, layers);
    // The last new token is never fed back: the cache holds the prompt and maxNew - 1 new tokens.
    HfKvCache cache(HfPositions(positions, layers), P + options.maxNew - 1);
    GenerateResult result = runLoop(
        options, c.vocab, onToken, [&] { return model.prefill(cache, prompt); },
        [&](int id) { return model.decode(cache, id); });
    result.cacheBytes = cache.bytes();
    result.positions = hfPositionText(positions);
    return result;
}

GenerateResult generate(Model& model, const std::vector<int>& prompt, const GenerateOptions& options,
                        const GeneratedToken& onToken)
{
    checkGenerateOptions(options);
    checkPrompt(prompt, model.config().vocab());
    const int P = static_cast<int>(prompt.size());
    checkTotalLength(P, options.maxNew, model.maxLength(),
                     model.config().scheme == "learned" ? "the model's learned table" : "the lab's longest sequence");
    // The byte models are small: each token reruns the forward over the whole text (no cache), which is exact under
    // every scheme and method, the position-remapping ones included. The method is the options' for the call only.
    const std::string ownScaling = model.config().scaling;
    const std::vector<std::string> ownSettings = model.config().scalingSettings;
    if (!options.scaling.empty())
        model.setScaling(options.scaling, options.settings);
    struct Restore {
        Model& model;
        const std::string& scaling;
        const std::vector<std::string>& settings;
        ~Restore() { model.setScaling(scaling, settings); }
    } restore{model, ownScaling, ownSettings};
    std::vector<uint8_t> text(prompt.begin(), prompt.end());
    auto lastRow = [&] {
        const int T = static_cast<int>(text.size());
        model.forward(text.data(), nullptr, 1, T);
        const float* row = model.logits().data() + static_cast<size_t>(T - 1) * 256;
        return std::vector<float>(row, row + 256);
    };
    GenerateResult result = runLoop(options, 256, onToken, lastRow, [&](int id) {
        text.push_back(static_cast<uint8_t>(id));
        return lastRow();
    });
    result.positions = schemeLabel(model.schemeSpec());
    return result;
}

} // namespace plab
