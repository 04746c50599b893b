// One trained rotary model evaluated zero-shot under several length-extension methods: perplexity against length,
// one series per method (the Train tab's "Evaluate under methods" and `positionlab-cli eval --compare`).
#pragma once

#include "runs/evaluation.h"
#include "base/matrix_output.h"
#include "model/model.h"
#include "schemes/rotary_scaling.h"

#include <cstddef>
#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace plab {

// A method and the NAME=VALUE settings given for it (on top of methodDefaultSettings).
struct MethodChoice {
    std::string method;                // a rotaryMethodCatalog() name
    std::vector<std::string> settings; // NAME=VALUE, the last of a name wins
};

// The text form of a method list, as `eval --compare` reads it: methods separated by ',', each optionally followed by
// ':NAME=VALUE' settings, e.g. "none,pi,yarn:factor=8:beta-fast=16,rerope:window=32". InputError for an empty list or
// item, a malformed setting, an unknown method (listing the known ones) or a method given twice.
std::vector<MethodChoice> parseMethodList(std::string_view text);
// The inverse of parseMethodList (one item).
std::string methodChoiceText(const MethodChoice& choice);
// The choices' method names, in order (what checkHfMethodsReach reads).
std::vector<std::string> methodNames(const std::vector<MethodChoice>& choices);

// The checks of a choice that need no model: a known method (rotaryMethodByName) and settings NAME=VALUE that each
// name one of its parameters with a number in that parameter's range (catalog::checkParamValues, the one range check).
// The rules that need the model's context or several parameters (window < L, beta-fast > beta-slow) are checked when
// it is evaluated (resolvedMethodSettings). InputError naming the method, the parameter, its value and what is allowed.
void checkMethodChoice(const MethodChoice& choice);

// The one home of the default parameters a comparison uses, as NAME=VALUE for every parameter of `method`:
// factor = longestLength / context (at least 1) for the methods that take it, except dynamic-ntk, which keeps its
// catalogue factor 1 (it scales with the sequence length itself; a factor s > 1 would scale by s n / L on top);
// window = context / 2 for rerope and leaky-rerope; everything else at the catalogue default.
std::vector<std::string> methodDefaultSettings(const RotaryMethodInfo& method, int context, int longestLength);

// The one home of the defaults of "Evaluate under methods" on a model of training context `context` whose own scaling
// is `ownScaling`: the model's own scaling, none (unless that is the own one), yarn and ntk, at context / 2, the
// context and a longest length past it, every length scoring as many tokens as the longest holds (one window of it);
// each length at least 8 and at most `maxLength`. The longest is 2 x the context when the cost model (`windowFlops`
// at `flopsPerSecond`, methodComparisonSeconds) says the whole comparison fits kMethodComparisonBudgetSeconds, else
// 3/2, else 5/4 of it (also when nothing fits: the estimate shown says how long). Without a cost model: 2 x.
// A SmolLM2-135M-shaped folder (context 8192, float32, 2 cores) gets 4096, 8192 and 10240: 2 x the context would be
// 88 TFLOP, about 10 minutes (docs/app.md, "Evaluate under methods").
struct MethodComparisonDefaults {
    bool own = true;                  // the model's own scaling, with its settings
    std::vector<std::string> methods; // rotaryMethodCatalog names, each with methodDefaultSettings
    std::vector<int> lengths;
    size_t tokensPerLength = 0;
};
constexpr double kMethodComparisonBudgetSeconds = 300;
MethodComparisonDefaults methodComparisonDefaults(int context, const std::string& ownScaling, int maxLength,
                                                  const std::function<double(int length)>& windowFlops = {},
                                                  double flopsPerSecond = 0);

// The cost model of a comparison, before anything runs: `curves` evaluations at each of `lengths` over
// `scoredTokens` tokens in non-overlapping windows (planEvalWindows), each window costing `windowFlops(T)` (e.g.
// HfConfig::prefillFlops), at `flopsPerSecond`. Seconds.
double methodComparisonSeconds(const std::function<double(int length)>& windowFlops, size_t curves,
                               const std::vector<int>& lengths, size_t scoredTokens, double flopsPerSecond);
// The rate a Hugging Face folder's evaluation runs at on 2 free Zen 4 cores (forward plus next-token losses, counted
// as HfConfig::prefillFlops counts them): 168-170 GFLOP/s measured on a SmolLM2-135M-shaped folder at 512-4096 tokens
// (README's perplexity pass), less at longer windows where attention dominates (docs/app.md).
constexpr double kHfEvalFlopsPerSecond = 150e9;

// InputError unless the model's scheme is rotary (rope or xpos): only those have methods to compare.
void checkRotaryModel(const ModelConfig& config);
void checkRotaryModel(const LanguageModel& model);

// One method's series.
struct MethodCurve {
    MethodChoice choice;                  // as asked
    std::map<std::string, double> params; // every parameter of the method, resolved (defaults, then the settings)
    std::string label;                    // e.g. "rope+yarn (factor 16)": methodCurveLabel
    std::vector<EvalPoint> points;        // one per length
};

// The legend label of a method on a scheme: "rope" for none, else "rope+METHOD (P v, ...)" with the method's first
// parameter and every other parameter that differs from its catalogue default.
std::string methodCurveLabel(const std::string& scheme, const RotaryMethodInfo& method,
                             const std::map<std::string, double>& params);

// The full settings of `choice` for `model`: LanguageModel::methodSettings for its context and the longest of
// `lengths` (the lab's models: methodDefaultSettings; a Hugging Face folder's own method: the config's settings), then
// the choice's own. Checked by LanguageModel::positionsUnder (InputError naming the parameter, its value and what is
// allowed).
std::vector<std::string> resolvedMethodSettings(const LanguageModel& model, const MethodChoice& choice,
                                                const std::vector<int>& lengths);

// Evaluates `model` (rope or xpos; InputError otherwise) on `tokens` (lengths in its tokens) under each method in
// turn: the model's own scaling is replaced through LanguageModel::setScaling (as `eval --scaling` does) and restored
// afterwards, also on error or cancel. Every method is validated before any is evaluated. `options.progress` receives
// the fraction over all methods and cancels with false (RunError "evaluation cancelled"). InputError for an empty list
// or a method given twice. The one path for the lab's models and Hugging Face folders.
std::vector<MethodCurve> evaluateUnderMethods(LanguageModel& model, const std::vector<int32_t>& tokens,
                                              const EvalOptions& options, const std::vector<MethodChoice>& methods);
// The lab's byte model on bytes: the above through ByteLanguageModel.
std::vector<MethodCurve> evaluateUnderMethods(Model& model, const std::vector<uint8_t>& text,
                                              const EvalOptions& options, const std::vector<MethodChoice>& methods);

// The comparison as data: CSV `method,length,loss,perplexity,bits_per_byte` (numbers as every table writes them,
// unsupported lengths as nan); JSON {meta..., "methods": [{"method", "label", "settings", "params", "points": [...]}]}.
// InputError for NPY (the method column is text).
// `unit` is what the lengths count ("byte"; "token" for a Hugging Face folder): the bits column is bits_per_UNIT and
// the JSON count UNITs.
void writeMethodComparison(std::ostream& out, DataFormat format, const std::vector<MethodCurve>& curves,
                           const nlohmann::json& meta = nlohmann::json::object(), const std::string& unit = "byte");

} // namespace plab
