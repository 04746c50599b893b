// Held-out evaluation: windows of each length through the model, mean loss of the scored tokens.
#include "evaluation.h"

#include "bias_views.h"
#include "errors.h"

#include <algorithm>
#include <cmath>

namespace plab {

EvalMode evalModeFromName(std::string_view name)
{
    if (name == "nonoverlapping")
        return EvalMode::NonOverlapping;
    if (name == "sliding")
        return EvalMode::Sliding;
    throw InputError("mode '" + std::string(name) + "' is unknown; allowed: nonoverlapping, sliding");
}

std::vector<EvalPoint> evaluateModel(Model& model, const std::vector<uint8_t>& fullText, const EvalOptions& options)
{
    if (options.lengths.empty())
        throw InputError("lengths: at least one length is needed");
    for (int L : options.lengths)
        checkIntegerRange("length", L, 1, kMaxLength);
    if (options.stride < 0)
        throw InputError("stride = " + std::to_string(options.stride) + " must be >= 1 (or 0 for length/2)");
    size_t size = fullText.size();
    if (options.maxTokens)
        size = std::min(size, options.maxTokens + 1);
    if (size < 2)
        throw InputError("the evaluation text has " + std::to_string(fullText.size()) + " bytes; at least 2 are needed");
    const uint8_t* text = fullText.data();
    const size_t scoredTotal = size - 1; // every byte after the first is predicted once

    struct Window {
        size_t start;
        int length;    // tokens in the window
        int scoreFrom; // first scored position inside it
    };
    // Windows of every supported length, for progress accounting.
    std::vector<std::vector<Window>> plans;
    double totalWork = 0;
    for (int L : options.lengths) {
        std::vector<Window> windows;
        if (L <= model.maxLength()) {
            if (options.mode == EvalMode::NonOverlapping) {
                for (size_t s = 0; s < scoredTotal; s += L)
                    windows.push_back({s, static_cast<int>(std::min<size_t>(L, scoredTotal - s)), 0});
            } else {
                const int stride = options.stride ? options.stride : std::max(1, L / 2);
                if (stride > L)
                    throw InputError("stride = " + std::to_string(stride) + " exceeds the window length " +
                                     std::to_string(L) + "; allowed: [1, length]");
                size_t end = std::min<size_t>(L, scoredTotal); // tokens scored so far
                windows.push_back({0, static_cast<int>(end), 0});
                while (end < scoredTotal) {
                    const size_t newEnd = std::min(end + stride, scoredTotal);
                    const size_t start = newEnd > static_cast<size_t>(L) ? newEnd - L : 0;
                    windows.push_back({start, static_cast<int>(newEnd - start), static_cast<int>(end - start)});
                    end = newEnd;
                }
            }
        }
        for (const Window& w : windows)
            totalWork += static_cast<double>(w.length) * (1.0 + w.length / 512.0);
        plans.push_back(std::move(windows));
    }

    std::vector<EvalPoint> points;
    double doneWork = 0;
    std::vector<uint8_t> inputs, targets;
    for (size_t li = 0; li < options.lengths.size(); ++li) {
        const int L = options.lengths[li];
        EvalPoint point;
        point.length = L;
        if (L > model.maxLength()) {
            point.supported = false;
            point.note = "learned positions stop at the training context " + std::to_string(model.config().context);
            point.loss = point.perplexity = point.bitsPerByte = std::nan("");
            points.push_back(point);
            continue;
        }
        const std::vector<Window>& windows = plans[li];
        checkMemoryEstimate(model.activationBytes(1, L), "evaluating windows of " + std::to_string(L) + " bytes");
        // Batch windows of equal length; keep activations within ~512 MB.
        const double perWindow = model.activationBytes(1, L) + 1.0;
        const int maxBatch = static_cast<int>(std::clamp<double>(
            std::min(512.0 * 1024 * 1024 / perWindow, static_cast<double>(options.tokensPerBatch) / L), 1, 4096));
        double lossSum = 0;
        size_t scored = 0;
        size_t i = 0;
        while (i < windows.size()) {
            size_t j = i;
            while (j < windows.size() && static_cast<int>(j - i) < maxBatch && windows[j].length == windows[i].length)
                ++j;
            const int B = static_cast<int>(j - i), T = windows[i].length;
            inputs.resize(static_cast<size_t>(B) * T);
            targets.resize(inputs.size());
            for (int b = 0; b < B; ++b) {
                const Window& w = windows[i + b];
                std::copy(text + w.start, text + w.start + T, inputs.begin() + static_cast<size_t>(b) * T);
                std::copy(text + w.start + 1, text + w.start + T + 1, targets.begin() + static_cast<size_t>(b) * T);
            }
            model.forward(inputs.data(), targets.data(), B, T);
            const std::vector<float>& losses = model.tokenLosses();
            for (int b = 0; b < B; ++b) {
                const Window& w = windows[i + b];
                for (int t = w.scoreFrom; t < T; ++t)
                    lossSum += losses[static_cast<size_t>(b) * T + t];
                scored += T - w.scoreFrom;
                doneWork += static_cast<double>(T) * (1.0 + T / 512.0);
            }
            if (options.progress && !options.progress(totalWork > 0 ? doneWork / totalWork : 1.0))
                throw RunError("evaluation cancelled");
            i = j;
        }
        point.tokens = scored;
        point.loss = lossSum / static_cast<double>(scored);
        point.perplexity = std::exp(point.loss);
        point.bitsPerByte = point.loss / std::log(2.0);
        points.push_back(point);
    }
    return points;
}

} // namespace plab
