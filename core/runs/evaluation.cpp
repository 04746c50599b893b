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
WindowScores scoreEvalWindows(LanguageModel& model, const int32_t* text, const std::vector<EvalWindow>& windows,
                              int length, size_t tokensPerBatch, const std::function<void(double cost)>& batchDone)
{
    checkMemoryEstimate(model.windowBytes(length),
                        "evaluating windows of " + std::to_string(length) + " " + model.tokenUnit() + "s");
    // Batch windows of equal length; keep activations within ~512 MB.
    const double perWindow = model.windowBytes(length) + 1.0;
    const int maxBatch = static_cast<int>(std::clamp<double>(
        std::min(512.0 * 1024 * 1024 / perWindow, static_cast<double>(tokensPerBatch) / length), 1, 4096));
    WindowScores scores;
    std::vector<int32_t> inputs, targets;
    std::vector<double> losses;
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
        model.windowLosses(inputs.data(), targets.data(), B, T, losses);
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

std::vector<EvalPoint> evaluateModel(LanguageModel& model, const std::vector<int32_t>& fullText,
                                     const EvalOptions& options)
{
    if (options.lengths.empty())
        throw InputError("lengths: at least one length is needed");
    for (int L : options.lengths)
        checkIntegerRange("length", L, 1, kMaxLength);
    if (options.stride < 0)
        throw InputError("stride = " + std::to_string(options.stride) + " must be >= 1 (or 0 for length/2)");
    const std::string unit = model.tokenUnit();
    const size_t scoredTotal = evalScoredBytes(fullText.size(), options.maxTokens); // every token after the first
    if (scoredTotal < 1)
        throw InputError(options.textName + " has " + std::to_string(fullText.size()) + " " + unit +
                         (fullText.size() == 1 ? "" : "s") + "; at least 2 are needed");
    checkEvalLengthsFit(options.lengths, model.maxLength(), fullText.size(), options.maxTokens, options.textName, unit);

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
            point.note = model.maxLength() == model.context()
                             ? "learned positions stop at the training context " + std::to_string(model.context())
                             : "the model accepts at most " + std::to_string(model.maxLength()) + " " + unit + "s";
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

std::vector<EvalPoint> evaluateModel(Model& model, const std::vector<uint8_t>& text, const EvalOptions& options)
{
    ByteLanguageModel bytes(model);
    return evaluateModel(bytes, bytesAsTokens(text), options);
}

} // namespace plab
