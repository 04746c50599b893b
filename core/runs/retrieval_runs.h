// Retrieval on a Hugging Face folder: accuracy per (method, length, depth) of a retrieval task (core/tasks/retrieval),
// its defaults with a time estimate, and the examples as JSON lines (eval DIR --task, sweep --model --task, the
// Retrieval page of the Your model tab).
#pragma once

#include "hf/hf_scaling_layers.h"
#include "runs/method_comparison.h"
#include "runs/retrieval_prompts.h"
#include "runs/sweep.h"
#include "schemes/schemes.h"
#include "tasks/retrieval.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace plab {

class HfModel;
class HfLanguageModel;
struct HfConfig;
struct Corpus;

// The haystack a corpus gives: all its text (training and validation parts), whole UTF-8 characters.
std::string retrievalHaystack(const Corpus& corpus);

enum class RetrievalScoring { Exact, Loglik };
// "exact" or "loglik"; InputError "--score x is not allowed; allowed: exact, loglik".
RetrievalScoring retrievalScoringFromName(std::string_view name);
const char* retrievalScoringName(RetrievalScoring scoring);

struct RetrievalOptions {
    RetrievalKind kind = RetrievalKind::Passkey;
    std::vector<int> lengths;   // prompt tokens, each exact
    std::vector<double> depths; // each in [0, 1]
    int examples = 1;           // per (method, length, depth) cell
    uint64_t seed = 1;          // of the prompts: every method reads the same ones
    RetrievalScoring scoring = RetrievalScoring::Exact;
    std::vector<MethodChoice> methods; // empty: the folder's own positions alone
    // The layer types a method other than the config's own reaches (--scaling-layers; checkHfScalingReach refuses a
    // choice that reaches no rotary layer when such a method is listed).
    HfScalingLayers scalingLayers = HfScalingLayers::Full;
    // How lengths count: prompt tokens, exact (generated prompts), or what a prompts file says (--examples-in: a lab
    // task's filler letters, say); pictures label their axis by it.
    bool lengthsInTokens = true;
};
// InputError naming the option: no lengths or depths, examples < 1, a length past the model's positions
// (checkHfLength), and the generator's checks (too short, corpus too short, depth outside [0, 1]).
void checkRetrievalOptions(const RetrievalOptions& options, const HfConfig& config,
                           const RetrievalGenerator& generator);

// A method as a retrieval run applies it: its resolved positions and legend label.
struct RetrievalMethod {
    MethodChoice choice;
    std::string label;
    std::map<std::string, double> params;
    SchemeSpec positions;
};
// The methods of `options` on `model` (its own scaling when options.methods is empty), each resolved as eval --compare
// resolves it (resolvedMethodSettings, positionsUnder): InputError naming the method's parameter; a method other than
// the own one on a model that is not rotary is refused (checkRotaryModel).
std::vector<RetrievalMethod> retrievalMethods(const HfLanguageModel& model, const RetrievalOptions& options);

// One (method, length, depth) cell.
struct RetrievalCell {
    size_t method = 0; // index into the run's methods
    int length = 0;
    double depth = 0;
    int examples = 0;
    int correct = 0;
    double accuracy = 0;
    double meanRank = 0; // loglik: the answer's mean rank among the candidates; exact: 0
};
// One scored example, for --examples-out.
struct RetrievalRecord {
    const RetrievalMethod& method;
    const RetrievalCell& cell;
    const RetrievalExample& example;
    const RetrievalScore& score;
};
nlohmann::json retrievalRecordJson(const RetrievalRecord& record); // method, length, depth, prompt_ids, ...

struct RetrievalHooks {
    std::function<bool(double fraction)> progress;           // false cancels (between examples)
    std::function<void(const RetrievalCell&)> cellDone;      // each cell as soon as it is scored
    std::function<void(const RetrievalRecord&)> exampleDone; // each example
};
struct RetrievalRun {
    std::vector<RetrievalMethod> methods;
    std::vector<RetrievalCell> cells; // method-major, then length, then depth (those done when stopped)
    bool stopped = false;
};
// Scores every cell: for each method, each length and depth, options.examples prompts (retrievalExamples, the same
// for every method) scored from HfModel::tailLogits under the method's positions. checkRetrievalOptions first. With
// hooks.exampleDone and exact scoring, a wrong example's output is completed past its first wrong token (decoded with
// a cache, or one forward per token under a method that remaps positions), as many tokens as the answer has.
RetrievalRun runRetrieval(const HfModel& model, const RetrievalGenerator& generator, const RetrievalOptions& options,
                          const RetrievalHooks& hooks = {});

// ---- prompts read back (eval DIR --examples-in; runs/retrieval_prompts) ----

// InputError naming the option: --score loglik (a file holds no candidates), a prompt + answer past the model's
// positions (checkHfLength), a method that reaches no rotary layer.
void checkRetrievalPrompts(const std::vector<RetrievalPromptCell>& cells, const HfConfig& config,
                           const RetrievalOptions& options);
// The methods of `options` resolved for `cells` (factor = the longest prompt over the context, as for generated
// prompts).
std::vector<RetrievalMethod> retrievalPromptMethods(const HfLanguageModel& model,
                                                    const std::vector<RetrievalPromptCell>& cells,
                                                    RetrievalOptions options);
// Scores the cells' prompts, as they are, under every method of `options` (its lengths, depths, examples, seed and
// kind are not read): the same scoring, hooks and result as runRetrieval. checkRetrievalPrompts first.
RetrievalRun runRetrievalOnPrompts(const HfModel& model, const std::vector<RetrievalPromptCell>& cells,
                                   const RetrievalOptions& options, const RetrievalHooks& hooks = {});

// The forwards one example costs: 1 (exact), kRetrievalCandidates (loglik).
int retrievalForwardsPerExample(RetrievalScoring scoring);
// The cost model before anything runs: every cell's forwards of `length` tokens (methodComparisonSeconds's rule, one
// window of the length each), at `flopsPerSecond`. Seconds.
double retrievalSeconds(const std::function<double(int length)>& windowFlops, const RetrievalOptions& options,
                        size_t methods, double flopsPerSecond);

// The one home of the defaults (eval DIR --task, the Retrieval page): depths 0, 0.5, 1; one example per cell; the
// methods the folder's own scaling, none and yarn (each once; a model that is not rotary: its own positions alone);
// lengths in eighths of the context L (at most `maxLength`, above `minimumLength`), the first set whose estimate fits
// kMethodComparisonBudgetSeconds of {L/4, L/2, L, 5L/4}, {L/4, L, 5L/4}, {L/4, 5L/4}, {L/4, 9L/8}, {L/8, 9L/8} (the
// last when none fits; without a cost model the first).
RetrievalOptions retrievalDefaults(RetrievalKind kind, int context, const std::string& ownScaling, bool rotary,
                                   int maxLength, int minimumLength,
                                   const std::function<double(int length)>& windowFlops = {},
                                   double flopsPerSecond = 0);

// The run as data: CSV method,label,length,depth,examples,correct,accuracy; JSON {meta..., "methods": [{"method",
// "label", "settings", "params", "cells": [{length, depth, examples, correct, accuracy}]}]}. InputError for NPY.
void writeRetrievalRun(std::ostream& out, DataFormat format, const RetrievalRun& run,
                       const nlohmann::json& meta = nlohmann::json::object());

// ---- sweep --model DIR --task NAME: a model grid's cells scored on a retrieval task ----

// InputError naming the option: an unknown task, a depth outside [0, 1], no depths, examples < 1, a --score other than
// exact or loglik.
void checkSweepRetrieval(const SweepRetrieval& retrieval);
// The grid's "retrieval" object; InputError naming `source` and the field.
SweepRetrieval sweepRetrievalFromJson(const nlohmann::json& j, const std::string& source);
// A model grid's cell on its retrieval task: the folder loaded, the corpus as haystack, the cell's method; the result
// line holds the accuracy per length (mean over depths) and per (length, depth), as a passkey task cell's does.
// nullopt when hooks.interrupt stopped it.
std::optional<SweepResult> evaluateRetrievalSweepCell(const SweepGrid& grid, size_t index, const Corpus& corpus,
                                                      const TrainingHooks& hooks = {});

} // namespace plab
