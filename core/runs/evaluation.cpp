// Held-out evaluation: windows of each length through the model, mean loss of the scored tokens.
#include "runs/evaluation.h"

#include "base/limits.h"
#include "base/errors.h"
#include "runs/eval_check.h"

#include <algorithm>
#include <cmath>

namespace plab {

EvalMode evalModeFromName(std::string_view name)
{
    if (name == evalModeName(EvalMode::NonOverlapping))
        return EvalMode::NonOverlapping;
    if (name == evalModeName(EvalMode::Sliding))
        return EvalMode::Sliding;
    throw InputError("mode '" + std::string(name) + "' is unknown; allowed: " + evalModeName(EvalMode::NonOverlapping) +
                     ", " + evalModeName(EvalMode::Sliding));
}

const char* evalModeName(EvalMode mode)
{
    return mode == EvalMode::Sliding ? "sliding" : "nonoverlapping";
}

double evalWindowCost(int length)
{
    // Dense layers grow with the tokens, attention with their square; 512 is where the two are about equal for the
    // presets' sizes. Only the ratio matters (progress fractions).
    return static_cast<double>(length) * (1.0 + length / 512.0);
}

std::vector<EvalWindow> planEvalWindows(size_t scoredTotal, int length, EvalMode mode, int stride)
{
    std::vector<EvalWindow> windows;
    if (mode == EvalMode::NonOverlapping) {
        for (size_t s = 0; s < scoredTotal; s += length)
            windows.push_back({s, static_cast<int>(std::min<size_t>(length, scoredTotal - s)), 0});
        return windows;
    }
    const int step = stride ? stride : std::max(1, length / 2);
    if (step > length)
        throw InputError("stride = " + std::to_string(step) + " exceeds the window length " + std::to_string(length) +
                         "; allowed: [1, length]");
    size_t end = std::min<size_t>(length, scoredTotal); // tokens scored so far
    windows.push_back({0, static_cast<int>(end), 0});
    while (end < scoredTotal) {
        const size_t newEnd = std::min(end + step, scoredTotal);
        const size_t start = newEnd > static_cast<size_t>(length) ? newEnd - length : 0;
        windows.push_back({start, static_cast<int>(newEnd - start), static_cast<int>(end - start)});
        end = newEnd;
    }
    return windows;
}

namespace {

// Loss summed over the scored tokens of `windows` (all of one length L) and how many they are.
struct WindowScores {
    double lossSum = 0;
    size_t scored = 0;
};

// Runs the windows through the model in batches of equal-length windows, calling `batchDone(cost)` after each.
WindowScores scoreEvalWindows(Model& model, const uint8_t* text, const std::vector<EvalWindow>& windows, int length,
                              size_t tokensPerBatch, const std::function<void(double cost)>& batchDone)
{
    checkMemoryEstimate(model.activationBytes(1, length), "evaluating windows of " + std::to_string(length) + " bytes");
    // Batch windows of equal length; keep activations within ~512 MB.
    const double perWindow = model.activationBytes(1, length) + 1.0;
    const int maxBatch = static_cast<int>(std::clamp<double>(
        std::min(512.0 * 1024 * 1024 / perWindow, static_cast<double>(tokensPerBatch) / length), 1, 4096));
    WindowScores scores;
    std::vector<uint8_t> inputs, targets;
    size_t i = 0;
    while (i < windows.size()) {
        size_t j = i;
        while (j < windows.size() && static_cast<int>(j - i) < maxBatch && windows[j].length == windows[i].length)
            ++j;
        const int B = static_cast<int>(j - i), T = windows[i].length;
        inputs.resize(static_cast<size_t>(B) * T);
        targets.resize(inputs.size());
        for (int b = 0; b < B; ++b) {
            const EvalWindow& w = windows[i + b];
            std::copy(text + w.start, text + w.start + T, inputs.begin() + static_cast<size_t>(b) * T);
            std::copy(text + w.start + 1, text + w.start + T + 1, targets.begin() + static_cast<size_t>(b) * T);
        }
        model.forward(inputs.data(), targets.data(), B, T);
        const layers::FloatBuffer& losses = model.tokenLosses();
        for (int b = 0; b < B; ++b) {
            const EvalWindow& w = windows[i + b];
            for (int t = w.scoreFrom; t < T; ++t)
                scores.lossSum += losses[static_cast<size_t>(b) * T + t];
            scores.scored += T - w.scoreFrom;
        }
        batchDone(B * evalWindowCost(T));
        i = j;
    }
    return scores;
}

} // namespace

std::vector<EvalPoint> evaluateModel(Model& model, const std::vector<uint8_t>& fullText, const EvalOptions& options)
{
    if (options.lengths.empty())
        throw InputError("lengths: at least one length is needed");
    for (int L : options.lengths)
        checkIntegerRange("length", L, 1, kMaxLength);
    if (options.stride < 0)
        throw InputError("stride = " + std::to_string(options.stride) + " must be >= 1 (or 0 for length/2)");
    const size_t scoredTotal = evalScoredBytes(fullText.size(), options.maxTokens); // every byte after the first
    if (scoredTotal < 1)
        throw InputError("the evaluation text has " + std::to_string(fullText.size()) +
                         " bytes; at least 2 are needed");
    checkEvalLengthsFit(options.lengths, model.maxLength(), fullText.size(), options.maxTokens, options.textName);

    // Every length is planned (and its stride checked) before any is scored; the total cost drives progress.
    std::vector<std::vector<EvalWindow>> plans;
    double totalCost = 0;
    for (int L : options.lengths) {
        plans.push_back(L <= model.maxLength() ? planEvalWindows(scoredTotal, L, options.mode, options.stride)
                                               : std::vector<EvalWindow>{});
        for (const EvalWindow& w : plans.back())
            totalCost += evalWindowCost(w.length);
    }

    std::vector<EvalPoint> points;
    double doneCost = 0;
    auto batchDone = [&](double cost) {
        doneCost += cost;
        if (options.progress && !options.progress(totalCost > 0 ? doneCost / totalCost : 1.0))
            throw RunError("evaluation cancelled");
    };
    for (size_t li = 0; li < options.lengths.size(); ++li) {
        EvalPoint point;
        point.length = options.lengths[li];
        if (point.length > model.maxLength()) {
            point.supported = false;
            point.note = "learned positions stop at the training context " + std::to_string(model.config().context);
            point.loss = point.perplexity = point.bitsPerByte = std::nan("");
            points.push_back(point);
            continue;
        }
        const WindowScores scores =
            scoreEvalWindows(model, fullText.data(), plans[li], point.length, options.tokensPerBatch, batchDone);
        point.tokens = scores.scored;
        point.loss = scores.lossSum / static_cast<double>(scores.scored);
        point.perplexity = std::exp(point.loss);
        point.bitsPerByte = point.loss / std::log(2.0);
        points.push_back(point);
    }
    return points;
}

} // namespace plab
