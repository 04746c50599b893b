// Algorithmic tasks for length generalisation (copy, reverse, addition, passkey): seeded byte-level examples, their
// loss mask and training batches.
#pragma once

#include "base/random.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace plab {

// Every example is bytes the byte-level models read as tokens (vocabulary 256):
//
//     QUESTION '=' ANSWER '.'
//
// The separator '=' and the terminator '.' never occur in an answer; the answer span, the only bytes the loss and the
// accuracy look at, is ANSWER followed by '.' (the terminator is part of it, so a model must also know where the
// answer ends). "Length" n is the size of the payload, per task:
//
// clang-format off
// | task     | length n                         | QUESTION                                   | ANSWER            | bytes     |
// |----------|----------------------------------|--------------------------------------------|-------------------|-----------|
// | copy     | payload letters                  | p1..pn, each in 'a'..'z'                   | p1..pn            | 2n + 2    |
// | reverse  | payload letters                  | p1..pn, each in 'a'..'z'                   | pn..p1            | 2n + 2    |
// | addition | decimal digits of each operand   | A '+' B, each exactly n digits (no leading | A + B in decimal, | 3n + 3 or |
// |          |                                  | zero unless n = 1, so 0..9 for n = 1)      | no leading zero   | 3n + 4    |
// | passkey  | filler letters around the needle | f1..fp "key:" K ";" fp+1..fn "key?"        | K                 | n + 21    |
// clang-format on
//
// Passkey: K is a number of 5 digits (10000..99999), the filler letters are uniform in 'a'..'z' (no digit, so the
// needle is the only place K appears), and the needle "key:K;" sits after p = round(depth * n) filler letters: depth 0
// puts it at the very start, depth 1 right before the question "key?".
enum class TaskKind { Copy, Reverse, Addition, Passkey };

struct TaskInfo {
    TaskKind kind;
    std::string name;    // as --task reads it
    std::string length;  // what its length counts
    std::string summary; // one line
};
const std::vector<TaskInfo>& taskTable();
std::vector<std::string> taskNames();
// InputError "task 'x' is unknown; allowed: copy, reverse, addition, passkey".
const TaskInfo& taskByName(std::string_view name);
const TaskInfo& taskInfo(TaskKind kind);

constexpr uint8_t kTaskSeparator = '=';
constexpr uint8_t kTaskTerminator = '.';
constexpr uint8_t kTaskPadding = 0; // fills a batch row past its example (weight 0, never attended by the example)
constexpr int kPasskeyDigits = 5;

struct TaskExample {
    std::vector<uint8_t> bytes; // QUESTION '=' ANSWER '.'
    int answerStart = 0;        // index of the first ANSWER byte (just after the separator)
    int length = 0;             // the task's length n
    double depth = -1;          // passkey: where the needle is (0 start .. 1 end); -1 for the other tasks
    // The answer span [answerStart, bytes.size()): ANSWER and the terminator.
    int answerBytes() const { return static_cast<int>(bytes.size()) - answerStart; }
};

// The most bytes an example of `length` has (the table above). A model reads all but the last byte as its input, so
// it needs a context of at least taskExampleBytes - 1.
int taskExampleBytes(TaskKind kind, int length);
// The largest length whose every example a model of `context` reads whole; 0 when not even length 1 fits.
int taskLongestLength(TaskKind kind, int context);
// InputError unless 1 <= length and an example of `length` fits `context`, naming the task, the length, the example's
// bytes and the context ("task copy: length = 20 needs examples of 42 bytes, read as 41 positions, more than the
// context 32 holds; allowed: lengths in [1, 15] at context 32, or a longer context").
void checkTaskLength(TaskKind kind, int length, int context);
// InputError unless 0 <= depth <= 1 (naming the value and the range): "passkey depth = 1.5 is out of range; ...".
void checkPasskeyDepth(double depth);

// One example of `length` drawn from `rng`. Passkey only: `depth` in [0, 1] places the needle, a negative depth draws
// it uniformly (the needle after 0..n filler letters, each equally likely); the other tasks ignore it.
TaskExample makeTaskExample(TaskKind kind, int length, Rng& rng, double depth = -1);

// The loss weight of every target of an example read as a sequence: targets are bytes[1..], so position j (0-based,
// j < bytes.size() - 1) predicts bytes[j + 1] and weighs 1 exactly when bytes[j + 1] is in the answer span, else 0.
std::vector<float> taskLossMask(const TaskExample& example);

// A training run on a task: examples of lengths 1..trainLength (uniform), one example per batch row.
struct TaskSpec {
    TaskKind kind = TaskKind::Copy;
    int trainLength = 0;
    nlohmann::json toJson() const; // {"task": name, "task_length": L}: what a checkpoint records
    // The task a checkpoint's training record names; false when it holds none (trained on text).
    static bool fromJson(const nlohmann::json& training, TaskSpec& spec);
};

// Fills one training batch of B rows of T positions (T >= taskExampleBytes(trainLength) - 1): row b holds one example
// from position 0 (inputs = bytes[0..N-2], targets = bytes[1..N-1], weights = taskLossMask), then padding with weight
// 0. The examples come from a generator seeded by (seed, step), so a run is reproducible step by step.
void fillTaskBatch(const TaskSpec& spec, uint64_t seed, int step, int B, int T, uint8_t* inputs, uint8_t* targets,
                   float* weights);

// The test examples of one (length, depth) cell: `count` examples from a generator seeded by (seed, length, depth) that
// is never a training batch's (another mix of the seed), so the same seed gives the same test set.
std::vector<TaskExample> taskTestExamples(TaskKind kind, int length, double depth, int count, uint64_t seed);

} // namespace plab
