// Exact-match accuracy of a model's greedy answers on a task, per length (and per depth for passkey).
#pragma once

#include "model/model.h"
#include "tasks/tasks.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace plab {

// The most likely next byte at every position of B rows of T bytes: argmax (B, T). A model's (modelPredictor), or a
// stub in tests.
using NextBytePredictor = std::function<void(const uint8_t* inputs, int B, int T, uint8_t* argmax)>;
// Greedy next bytes of `model` (the first of equal logits), rows run in batches as given.
NextBytePredictor modelPredictor(Model& model);

// Greedy decoding of an example's answer is right exactly when, reading the example itself, the predicted byte at
// every position before an answer byte is that answer byte: where greedy decoding first differs from the answer,
// it had read the same bytes as the example up to there, so reading the example finds the same wrong byte. One
// forward per example therefore scores the whole greedy answer (the terminator '.' included, so stopping early or
// late is wrong too). `argmax` holds the predictions for positions 0..bytes.size()-2.
bool greedyAnswerCorrect(const TaskExample& example, const uint8_t* argmax);

// The greedy answer the predictions give, up to and including its first wrong byte (all of it when right).
std::vector<int> greedyAnswerPrefix(const TaskExample& example, const uint8_t* argmax);

// One example as eval --examples-out writes it, in the fields of a model folder's retrieval examples
// (retrievalRecordJson), so a folder can score it again (eval DIR --examples-in): method, label, length, depth,
// prompt_ids (the bytes up to and including the separator '='), needle_span (passkey: "key:K;"; the other tasks: the
// question), answer_ids (the answer and its terminator), answer, output_ids (`output`, the greedy answer) and correct.
nlohmann::json taskExampleRecordJson(const TaskExample& example, const std::vector<int>& output,
                                     const std::string& method, const std::string& label);

// The default test lengths of a task trained at lengths up to L: L/2, L, 3L/2, ..., 4L, without repeats (eval --task,
// sweep --task).
std::vector<int> defaultTaskLengths(int trainLength);
// The needle depths passkey is scored at when none are given: 0, 0.25, 0.5, 0.75, 1 (start to end).
const std::vector<double>& defaultPasskeyDepths();

struct TaskEvalOptions {
    std::vector<int> lengths;
    std::vector<double> depths; // passkey only; each in [0, 1]; empty: defaultPasskeyDepths
    int examples = 100;         // per (length, depth) cell
    uint64_t seed = 1;          // of the test examples (taskTestExamples)
    int maxLength = 0;          // longest sequence the predictor reads (Model::maxLength); longer cells unsupported
    size_t tokensPerBatch = 16384;
    std::function<bool(double fraction)> progress; // return false to cancel (RunError "cancelled")
    // Each scored example with the predictions for its positions 0..bytes.size()-2 (eval --examples-out).
    std::function<void(const TaskExample& example, const uint8_t* argmax)> exampleDone;
};

struct TaskAccuracyPoint {
    int length = 0;
    double depth = -1; // passkey's depth, -1 for the other tasks
    int examples = 0;
    int correct = 0;
    double accuracy = 0;   // correct / examples
    bool supported = true; // false: the examples are longer than the predictor reads (learned positions)
    std::string note;      // why unsupported
};

// InputError for a length below 1 or whose examples no model reads (more than kMaxLength positions), a depth outside
// [0, 1], depths given for a task other than passkey, or examples < 1.
void checkTaskEvalOptions(TaskKind kind, const TaskEvalOptions& options);

// Exact-match accuracy of `predict`'s greedy answers on options.examples test examples of every length (x every depth
// for passkey, in that order: length-major), each example read whole from position 0.
std::vector<TaskAccuracyPoint> evaluateTask(TaskKind kind, const NextBytePredictor& predict,
                                            const TaskEvalOptions& options);

} // namespace plab
