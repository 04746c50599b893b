// The task generators, their sizes and checks, and the training batches drawn from them.
#include "tasks/tasks.h"

#include "base/errors.h"
#include "schemes/schemes.h"

#include <algorithm>
#include <cmath>

namespace plab {

namespace {

constexpr std::string_view kNeedleOpen = "key:";
constexpr std::string_view kNeedleClose = ";";
constexpr std::string_view kPasskeyQuestion = "key?";
// Bytes of a passkey example besides its n filler letters: the needle, the question, '=', the key and '.'.
constexpr int kPasskeyOverhead = static_cast<int>(kNeedleOpen.size() + kPasskeyDigits + kNeedleClose.size() +
                                                  kPasskeyQuestion.size() + 1 + kPasskeyDigits + 1);

uint8_t randomLetter(Rng& rng)
{
    return static_cast<uint8_t>('a' + rng.below(26));
}

// n decimal digits, the first nonzero unless n = 1.
std::string randomNumber(int n, Rng& rng)
{
    std::string digits(static_cast<size_t>(n), '0');
    for (int i = 0; i < n; ++i)
        digits[i] = static_cast<char>('0' + (i == 0 && n > 1 ? 1 + rng.below(9) : rng.below(10)));
    return digits;
}

// Schoolbook addition of two decimal strings, so operands of any length add exactly.
std::string decimalSum(const std::string& a, const std::string& b)
{
    std::string sum;
    int carry = 0;
    for (size_t i = 0; i < std::max(a.size(), b.size()) || carry; ++i) {
        const int da = i < a.size() ? a[a.size() - 1 - i] - '0' : 0;
        const int db = i < b.size() ? b[b.size() - 1 - i] - '0' : 0;
        const int d = da + db + carry;
        sum.push_back(static_cast<char>('0' + d % 10));
        carry = d / 10;
    }
    std::reverse(sum.begin(), sum.end());
    return sum;
}

void append(std::vector<uint8_t>& bytes, std::string_view text)
{
    bytes.insert(bytes.end(), text.begin(), text.end());
}

// The generator of a batch or a test cell: splitMix-style mixing so nearby seeds and steps give unrelated streams.
uint64_t mix(uint64_t a, uint64_t b)
{
    uint64_t z = a * 0x9E3779B97F4A7C15ULL + b + 0x632BE59BD9B4E019ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

} // namespace

const std::vector<TaskInfo>& taskTable()
{
    static const std::vector<TaskInfo> table = {
        {TaskKind::Copy, "copy", "payload letters", "repeat n letters after '='"},
        {TaskKind::Reverse, "reverse", "payload letters", "write n letters backwards after '='"},
        {TaskKind::Addition, "addition", "digits of each operand", "add two n-digit numbers"},
        {TaskKind::Passkey, "passkey", "filler letters",
         "find a 5-digit key hidden at a chosen depth in n filler letters"},
    };
    return table;
}

std::vector<std::string> taskNames()
{
    std::vector<std::string> names;
    for (const TaskInfo& t : taskTable())
        names.push_back(t.name);
    return names;
}

const TaskInfo& taskByName(std::string_view name)
{
    for (const TaskInfo& t : taskTable())
        if (t.name == name)
            return t;
    std::string allowed;
    for (const TaskInfo& t : taskTable())
        allowed += (allowed.empty() ? "" : ", ") + t.name;
    throw InputError("task '" + std::string(name) + "' is unknown; allowed: " + allowed);
}

const TaskInfo& taskInfo(TaskKind kind)
{
    for (const TaskInfo& t : taskTable())
        if (t.kind == kind)
            return t;
    throw std::logic_error("taskInfo: a task kind without a row");
}

int taskExampleBytes(TaskKind kind, int length)
{
    switch (kind) {
    case TaskKind::Copy:
    case TaskKind::Reverse:
        return 2 * length + 2;
    case TaskKind::Addition:
        return 3 * length + 4; // a carry out of the top digit
    case TaskKind::Passkey:
        return length + kPasskeyOverhead;
    }
    return 0;
}

int taskLongestLength(TaskKind kind, int context)
{
    // The inverse of taskExampleBytes(kind, n) - 1 <= context, rounded down.
    int n = 0;
    switch (kind) {
    case TaskKind::Copy:
    case TaskKind::Reverse:
        n = (context - 1) / 2;
        break;
    case TaskKind::Addition:
        n = (context - 3) / 3;
        break;
    case TaskKind::Passkey:
        n = context - (kPasskeyOverhead - 1);
        break;
    }
    return std::max(n, 0);
}

void checkTaskLength(TaskKind kind, int length, int context)
{
    const std::string task = "task " + taskInfo(kind).name + ": ";
    const int longest = taskLongestLength(kind, context);
    const std::string allowed =
        longest >= 1 ? "lengths in [1, " + std::to_string(longest) + "] at context " + std::to_string(context) +
                           ", or a longer context"
                     : "a context of at least " + std::to_string(taskExampleBytes(kind, 1) - 1) + " (length 1)";
    if (longest < 1) // no length fits: say so rather than refuse the length asked for
        throw InputError(task + "the context " + std::to_string(context) + " holds no example: length 1 needs " +
                         std::to_string(taskExampleBytes(kind, 1)) + " bytes, read as " +
                         std::to_string(taskExampleBytes(kind, 1) - 1) + " positions; allowed: " + allowed);
    if (length < 1)
        throw InputError(task + "length = " + std::to_string(length) + " is out of range; allowed: " + allowed);
    const int bytes = taskExampleBytes(kind, length);
    if (bytes - 1 > context)
        throw InputError(task + "length = " + std::to_string(length) + " needs examples of up to " +
                         std::to_string(bytes) + " bytes, read as " + std::to_string(bytes - 1) +
                         " positions, more than the context " + std::to_string(context) +
                         " holds; allowed: " + allowed);
}

void checkPasskeyDepth(double depth)
{
    if (!(depth >= 0 && depth <= 1)) // also refuses NaN
        throw InputError("passkey depth = " + exactText(depth) +
                         " is out of range; allowed: numbers in [0, 1] (0 = the needle at the start of the filler, 1 "
                         "= at its end)");
}

TaskExample makeTaskExample(TaskKind kind, int length, Rng& rng, double depth)
{
    if (length < 1)
        throw InputError("task " + taskInfo(kind).name + ": length = " + std::to_string(length) +
                         " is out of range; allowed: integers >= 1");
    TaskExample e;
    e.length = length;
    std::vector<uint8_t>& b = e.bytes;
    b.reserve(static_cast<size_t>(taskExampleBytes(kind, length)));
    std::string answer;
    switch (kind) {
    case TaskKind::Copy:
    case TaskKind::Reverse: {
        for (int i = 0; i < length; ++i)
            b.push_back(randomLetter(rng));
        answer.assign(b.begin(), b.end());
        if (kind == TaskKind::Reverse)
            std::reverse(answer.begin(), answer.end());
        break;
    }
    case TaskKind::Addition: {
        const std::string x = randomNumber(length, rng), y = randomNumber(length, rng);
        append(b, x);
        b.push_back('+');
        append(b, y);
        answer = decimalSum(x, y);
        break;
    }
    case TaskKind::Passkey: {
        if (depth >= 0)
            checkPasskeyDepth(depth);
        const int at = depth < 0 ? static_cast<int>(rng.below(static_cast<uint64_t>(length) + 1))
                                 : static_cast<int>(std::lround(depth * length));
        e.depth = depth < 0 ? static_cast<double>(at) / length : depth;
        const std::string key = std::to_string(10000 + rng.below(90000));
        for (int i = 0; i < length; ++i) {
            if (i == at) {
                append(b, kNeedleOpen);
                append(b, key);
                append(b, kNeedleClose);
            }
            b.push_back(randomLetter(rng));
        }
        if (at == length) {
            append(b, kNeedleOpen);
            append(b, key);
            append(b, kNeedleClose);
        }
        append(b, kPasskeyQuestion);
        answer = key;
        break;
    }
    }
    b.push_back(kTaskSeparator);
    e.answerStart = static_cast<int>(b.size());
    append(b, answer);
    b.push_back(kTaskTerminator);
    return e;
}

std::vector<float> taskLossMask(const TaskExample& example)
{
    std::vector<float> mask(example.bytes.size() - 1, 0.0f);
    for (size_t j = static_cast<size_t>(example.answerStart) - 1; j < mask.size(); ++j)
        mask[j] = 1.0f;
    return mask;
}

nlohmann::json TaskSpec::toJson() const
{
    return {{"task", taskInfo(kind).name}, {"task_length", trainLength}};
}

bool TaskSpec::fromJson(const nlohmann::json& training, TaskSpec& spec)
{
    if (!training.is_object() || !training.contains("task"))
        return false;
    const nlohmann::json& name = training["task"];
    const nlohmann::json& length = training.value("task_length", nlohmann::json());
    if (!name.is_string() || !length.is_number_integer())
        throw InputError("the training record's task is malformed: " + training.dump());
    spec.kind = taskByName(name.get<std::string>()).kind;
    spec.trainLength = length.get<int>();
    return true;
}

void fillTaskBatch(const TaskSpec& spec, uint64_t seed, int step, int B, int T, uint8_t* inputs, uint8_t* targets,
                   float* weights)
{
    checkTaskLength(spec.kind, spec.trainLength, T);
    Rng rng(mix(seed, static_cast<uint64_t>(step)));
    const size_t rowSize = static_cast<size_t>(T);
    std::fill(inputs, inputs + B * rowSize, kTaskPadding);
    std::fill(targets, targets + B * rowSize, kTaskPadding);
    std::fill(weights, weights + B * rowSize, 0.0f);
    for (int row = 0; row < B; ++row) {
        const int length = 1 + static_cast<int>(rng.below(static_cast<uint64_t>(spec.trainLength)));
        const TaskExample e = makeTaskExample(spec.kind, length, rng);
        const std::vector<float> mask = taskLossMask(e);
        const size_t o = row * rowSize;
        std::copy(e.bytes.begin(), e.bytes.end() - 1, inputs + o);
        std::copy(e.bytes.begin() + 1, e.bytes.end(), targets + o);
        std::copy(mask.begin(), mask.end(), weights + o);
    }
}

std::vector<TaskExample> taskTestExamples(TaskKind kind, int length, double depth, int count, uint64_t seed)
{
    // Never a training stream: training mixes (seed, step), tests mix a salted seed with the cell.
    const uint64_t cell = mix(static_cast<uint64_t>(length), static_cast<uint64_t>(std::llround(depth * 1e6) + 7));
    Rng rng(mix(mix(seed, 0x7E57ULL), cell));
    std::vector<TaskExample> examples;
    examples.reserve(static_cast<size_t>(count));
    for (int i = 0; i < count; ++i)
        examples.push_back(makeTaskExample(kind, length, rng, kind == TaskKind::Passkey ? depth : -1));
    return examples;
}

} // namespace plab
