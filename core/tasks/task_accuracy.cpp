// Scoring a task: batches of test examples through a next-byte predictor, exact match of the greedy answers.
#include "tasks/task_accuracy.h"

#include "base/errors.h"
#include "schemes/position_bias.h"

#include <algorithm>

namespace plab {

NextBytePredictor modelPredictor(Model& model)
{
    return [&model](const uint8_t* inputs, int B, int T, uint8_t* argmax) {
        model.forward(inputs, nullptr, B, T);
        const layers::FloatBuffer& logits = model.logits(); // (B, T, V)
        const int V = model.config().vocab();
        for (size_t i = 0; i < static_cast<size_t>(B) * T; ++i) {
            const float* row = logits.data() + i * V;
            argmax[i] = static_cast<uint8_t>(std::max_element(row, row + V) - row);
        }
    };
}

std::vector<int> defaultTaskLengths(int trainLength)
{
    std::vector<int> lengths;
    for (int half = 1; half <= 8; ++half) {
        const int length = std::max(1, half * trainLength / 2);
        if (lengths.empty() || lengths.back() != length)
            lengths.push_back(length);
    }
    return lengths;
}

bool greedyAnswerCorrect(const TaskExample& example, const uint8_t* argmax)
{
    for (size_t j = static_cast<size_t>(example.answerStart); j < example.bytes.size(); ++j)
        if (argmax[j - 1] != example.bytes[j])
            return false;
    return true;
}

std::vector<int> greedyAnswerPrefix(const TaskExample& example, const uint8_t* argmax)
{
    std::vector<int> output;
    for (size_t j = static_cast<size_t>(example.answerStart); j < example.bytes.size(); ++j) {
        output.push_back(argmax[j - 1]);
        if (argmax[j - 1] != example.bytes[j])
            break;
    }
    return output;
}

nlohmann::json taskExampleRecordJson(const TaskExample& example, const std::vector<int>& output,
                                     const std::string& method, const std::string& label)
{
    const auto answerStart = example.bytes.begin() + example.answerStart;
    const std::vector<int> prompt(example.bytes.begin(), answerStart);
    const std::vector<int> answer(answerStart, example.bytes.end());
    // The needle: passkey's "key:K;" (filler letters never hold ':'), the other tasks' whole question.
    int needleStart = 0, needleEnd = std::max(0, example.answerStart - 1);
    static const std::string key = "key:";
    const auto found = std::search(example.bytes.begin(), answerStart, key.begin(), key.end());
    if (example.depth >= 0 && found != answerStart) {
        needleStart = static_cast<int>(found - example.bytes.begin());
        needleEnd = needleStart + static_cast<int>(key.size()) + kPasskeyDigits + 1;
    }
    return {{"method", method},         {"label", label},
            {"length", example.length}, {"depth", example.depth},
            {"prompt_ids", prompt},     {"needle_span", {needleStart, needleEnd}},
            {"answer_ids", answer},     {"answer", std::string(answerStart, example.bytes.end())},
            {"output_ids", output},     {"correct", output == answer}};
}

void checkTaskEvalOptions(TaskKind kind, const TaskEvalOptions& options)
{
    const std::string task = "task " + taskInfo(kind).name + ": ";
    if (options.lengths.empty())
        throw InputError(task + "no lengths to evaluate; allowed: one or more integers >= 1");
    // The longest length whose examples some model reads: kMaxLength positions.
    int longest = 1;
    while (taskExampleBytes(kind, longest * 2) - 1 <= kMaxLength)
        longest *= 2;
    while (taskExampleBytes(kind, longest + 1) - 1 <= kMaxLength)
        ++longest;
    for (int length : options.lengths)
        if (length < 1 || length > longest)
            throw InputError(task + "length = " + std::to_string(length) +
                             " is out of range; allowed: integers in [1, " + std::to_string(longest) +
                             "] (examples of at most " + std::to_string(kMaxLength) + " positions)");
    if (kind != TaskKind::Passkey && !options.depths.empty())
        throw InputError(task + "depths apply only to task passkey (where the needle sits in the filler)");
    for (double depth : options.depths)
        checkPasskeyDepth(depth);
    if (options.examples < 1)
        throw InputError(task + "examples = " + std::to_string(options.examples) +
                         " is out of range; allowed: integers >= 1");
}

const std::vector<double>& defaultPasskeyDepths()
{
    static const std::vector<double> depths{0.0, 0.25, 0.5, 0.75, 1.0};
    return depths;
}

std::vector<TaskAccuracyPoint> evaluateTask(TaskKind kind, const NextBytePredictor& predict,
                                            const TaskEvalOptions& options)
{
    checkTaskEvalOptions(kind, options);
    const std::vector<double> depths = kind == TaskKind::Passkey
                                           ? (options.depths.empty() ? defaultPasskeyDepths() : options.depths)
                                           : std::vector<double>{-1.0};
    // Progress in positions read, so long cells weigh what they cost.
    double total = 0, done = 0;
    for (int length : options.lengths)
        total += static_cast<double>(depths.size()) * options.examples * taskExampleBytes(kind, length);
    std::vector<TaskAccuracyPoint> points;
    for (int length : options.lengths) {
        for (double depth : depths) {
            TaskAccuracyPoint p;
            p.length = length;
            p.depth = depth;
            p.examples = options.examples;
            const int need = taskExampleBytes(kind, length) - 1;
            if (options.maxLength > 0 && need > options.maxLength) {
                p.supported = false;
                p.note = "examples of length " + std::to_string(length) + " are read as up to " + std::to_string(need) +
                         " positions; the learned position table has " + std::to_string(options.maxLength) + " rows";
                points.push_back(p);
                done += static_cast<double>(options.examples) * (need + 1);
                continue;
            }
            const std::vector<TaskExample> examples =
                taskTestExamples(kind, length, depth, options.examples, options.seed);
            // Rows of one batch are padded to the longest example of the batch (addition's differ by one byte); the
            // padding comes after every byte an example's answer is read from, which causal attention never sees.
            const int rowsPerBatch = std::max<int>(1, static_cast<int>(options.tokensPerBatch / std::max(need, 1)));
            std::vector<uint8_t> inputs, argmax;
            for (size_t first = 0; first < examples.size(); first += rowsPerBatch) {
                const size_t last = std::min(examples.size(), first + rowsPerBatch);
                int T = 1;
                for (size_t i = first; i < last; ++i)
                    T = std::max(T, static_cast<int>(examples[i].bytes.size()) - 1);
                const int B = static_cast<int>(last - first);
                inputs.assign(static_cast<size_t>(B) * T, kTaskPadding);
                argmax.assign(inputs.size(), 0);
                for (size_t i = first; i < last; ++i)
                    std::copy(examples[i].bytes.begin(), examples[i].bytes.end() - 1,
                              inputs.begin() + static_cast<std::ptrdiff_t>((i - first) * T));
                predict(inputs.data(), B, T, argmax.data());
                for (size_t i = first; i < last; ++i) {
                    p.correct += greedyAnswerCorrect(examples[i], argmax.data() + (i - first) * T) ? 1 : 0;
                    if (options.exampleDone)
                        options.exampleDone(examples[i], argmax.data() + (i - first) * T);
                    done += static_cast<double>(examples[i].bytes.size());
                }
                if (options.progress && !options.progress(total > 0 ? done / total : 1.0))
                    throw RunError("cancelled");
            }
            p.accuracy = static_cast<double>(p.correct) / p.examples;
            points.push_back(p);
        }
    }
    return points;
}

} // namespace plab
