// Held-out perplexity of a model at several lengths, non-overlapping or sliding windows.
#pragma once

#include "model/model.h"
#include "runs/language_model.h"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace plab {

enum class EvalMode { NonOverlapping, Sliding };
EvalMode evalModeFromName(std::string_view name); // InputError naming the allowed modes
const char* evalModeName(EvalMode mode);          // "nonoverlapping" or "sliding", as evalModeFromName reads them

struct EvalOptions {
    std::vector<int> lengths{64, 128, 256, 512, 1024};
    EvalMode mode = EvalMode::NonOverlapping;
    int stride = 0;                                // sliding: tokens scored per window; 0 means length / 2
    size_t tokensPerBatch = 16384;                 // windows are batched up to this many tokens per forward
    size_t maxTokens = 0;                          // score at most this many tokens (0: the whole text)
    std::string textName = "the evaluation text";  // names the text in the message of a length it cannot fill
    std::function<bool(double fraction)> progress; // return false to cancel (RunError "cancelled")
};

struct EvalPoint {
    int length = 0;
    bool supported = true;  // false: learned positions past the context
    std::string note;       // why unsupported
    double loss = 0;        // mean nats per token (a byte for the lab's models)
    double perplexity = 0;  // exp(loss)
    double bitsPerByte = 0; // loss / ln 2: bits per byte for the lab's models, per token for a Hugging Face folder
    size_t tokens = 0;      // tokens scored
};

// One window of an evaluation: `length` tokens of the text from `start`, of which positions scoreFrom.. are scored.
struct EvalWindow {
    size_t start = 0;
    int length = 0;
    int scoreFrom = 0;
};
// The windows of one length over a text whose first `scoredTotal` + 1 bytes are read (the rule evaluateModel states
// below). `stride` 0 means length / 2; InputError when it exceeds the length.
std::vector<EvalWindow> planEvalWindows(size_t scoredTotal, int length, EvalMode mode, int stride);
// Relative cost of running one window of `length` tokens, for progress fractions.
double evalWindowCost(int length);

// Scores every byte of `text` after the first at each length. Non-overlapping: consecutive windows of `length`
// (the tail is a shorter window), every token scored once with the context inside its window. Sliding: windows of
// `length` advancing by `stride`, each scoring its last `stride` tokens (the first window scores all), so every
// scored token sees at least length - stride predecessors. Learned positions past the context are unsupported.
// A supported length longer than the scored bytes is refused (InputError, checkEvalLengthsFit naming
// options.textName): its row would be a shorter window under a longer name.
// The one evaluation path: any LanguageModel (the lab's byte models, a Hugging Face folder) on `tokens`, lengths in
// its tokens; the rules above with "token" for "byte" (messages say LanguageModel::tokenUnit()).
std::vector<EvalPoint> evaluateModel(LanguageModel& model, const std::vector<int32_t>& tokens,
                                     const EvalOptions& options);
// The lab's byte model on bytes: evaluateModel of ByteLanguageModel(model) on bytesAsTokens(text).
std::vector<EvalPoint> evaluateModel(Model& model, const std::vector<uint8_t>& text, const EvalOptions& options);

} // namespace plab
