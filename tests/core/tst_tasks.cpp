// The tasks (copy, reverse, addition, passkey) against independent checks: well-formed examples, right answers, the
// loss mask on the answer only, seeds, depths, the weighted loss's gradient by finite differences and hand-counted
// accuracy.
#include "base/errors.h"
#include "base/random.h"
#include "model/model.h"
#include "model/presets.h"
#include "runs/task_runs.h"
#include "runs/training.h"
#include "tasks/task_accuracy.h"
#include "tasks/tasks.h"
#include "test_main.h"

#include <omp.h>

#include <QtTest>

#include <algorithm>
#include <cmath>
#include <string>

using namespace plab;

Q_DECLARE_METATYPE(plab::TaskKind)

namespace {

std::string text(const std::vector<uint8_t>& bytes, size_t from = 0, size_t to = std::string::npos)
{
    to = std::min(to, bytes.size());
    return std::string(bytes.begin() + static_cast<std::ptrdiff_t>(from),
                       bytes.begin() + static_cast<std::ptrdiff_t>(to));
}

bool allLetters(const std::string& s)
{
    return std::all_of(s.begin(), s.end(), [](char c) { return c >= 'a' && c <= 'z'; });
}

bool allDigits(const std::string& s)
{
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A decimal string of at most 38 digits as an integer (the independent reference for addition).
unsigned __int128 toInteger(const std::string& digits)
{
    unsigned __int128 v = 0;
    for (char c : digits)
        v = v * 10 + static_cast<unsigned>(c - '0');
    return v;
}

std::string toDecimal(unsigned __int128 v)
{
    std::string s;
    do {
        s.push_back(static_cast<char>('0' + static_cast<int>(v % 10)));
        v /= 10;
    } while (v);
    std::reverse(s.begin(), s.end());
    return s;
}

struct SingleThreaded {
    int saved = omp_get_max_threads();
    SingleThreaded() { omp_set_num_threads(1); }
    ~SingleThreaded() { omp_set_num_threads(saved); }
};

} // namespace

class TestTasks : public QObject {
    Q_OBJECT
private slots:
    void examplesWellFormed_data();
    void examplesWellFormed();
    void lossMaskExactlyOnAnswer_data();
    void lossMaskExactlyOnAnswer();
    void seedsDecideTheData_data();
    void seedsDecideTheData();
    void randomDepthsReachBothEnds();
    void trainingBatches_data();
    void trainingBatches();
    void lengthMustFitContext_data();
    void lengthMustFitContext();
    void badNamesAndDepths_data();
    void badNamesAndDepths();
    void weightedLossGradient();
    void greedyCheckHandCounted();
    void greedyCheckMatchesDecoding();
    void accuracyHandCounted_data();
    void accuracyHandCounted();
    void taskPresets_data();
    void taskPresets();
    void defaultLengths();
    void evalTrainLength_data();
    void evalTrainLength();
};

void TestTasks::examplesWellFormed_data()
{
    QTest::addColumn<TaskKind>("kind");
    QTest::addColumn<int>("length");
    QTest::addColumn<double>("depth");
    for (TaskKind kind : {TaskKind::Copy, TaskKind::Reverse, TaskKind::Addition})
        for (int length : {1, 2, 7, 19, 37})
            QTest::addRow("%s n=%d", taskInfo(kind).name.c_str(), length) << kind << length << -1.0;
    for (int length : {1, 4, 12, 48, 200})
        for (double depth : {0.0, 0.1, 0.25, 0.5, 0.75, 1.0})
            QTest::addRow("passkey n=%d depth=%g", length, depth) << TaskKind::Passkey << length << depth;
}

void TestTasks::examplesWellFormed()
{
    QFETCH(TaskKind, kind);
    QFETCH(int, length);
    QFETCH(double, depth);
    const std::vector<TaskExample> examples = taskTestExamples(kind, length, depth, 50, 3);
    QCOMPARE(examples.size(), size_t(50));
    for (const TaskExample& e : examples) {
        QCOMPARE(e.length, length);
        QVERIFY(e.bytes.size() <= static_cast<size_t>(taskExampleBytes(kind, length)));
        QVERIFY(e.answerStart >= 1 && e.answerStart < static_cast<int>(e.bytes.size()));
        QCOMPARE(e.bytes[e.answerStart - 1], kTaskSeparator);
        QCOMPARE(e.bytes.back(), kTaskTerminator);
        const std::string question = text(e.bytes, 0, e.answerStart - 1);
        const std::string answer = text(e.bytes, e.answerStart, e.bytes.size() - 1);
        // The separator and the terminator occur only where the format puts them.
        QVERIFY(question.find('=') == std::string::npos && answer.find('=') == std::string::npos);
        QVERIFY(question.find('.') == std::string::npos && answer.find('.') == std::string::npos);
        switch (kind) {
        case TaskKind::Copy:
            QCOMPARE(int(question.size()), length);
            QVERIFY(allLetters(question));
            QCOMPARE(answer, question);
            QCOMPARE(int(e.bytes.size()), 2 * length + 2);
            break;
        case TaskKind::Reverse: {
            QCOMPARE(int(question.size()), length);
            QVERIFY(allLetters(question));
            std::string reversed = question;
            std::reverse(reversed.begin(), reversed.end());
            QCOMPARE(answer, reversed);
            break;
        }
        case TaskKind::Addition: {
            const size_t plus = question.find('+');
            QVERIFY(plus != std::string::npos);
            const std::string a = question.substr(0, plus), b = question.substr(plus + 1);
            QCOMPARE(int(a.size()), length);
            QCOMPARE(int(b.size()), length);
            QVERIFY(allDigits(a) && allDigits(b) && allDigits(answer));
            if (length > 1)
                QVERIFY(a[0] != '0' && b[0] != '0');
            QCOMPARE(answer, toDecimal(toInteger(a) + toInteger(b))); // integer arithmetic (n <= 37 digits)
            break;
        }
        case TaskKind::Passkey: {
            const size_t needle = question.find("key:");
            QVERIFY(needle != std::string::npos);
            const std::string key = question.substr(needle + 4, 5);
            QVERIFY(allDigits(key) && key[0] != '0');
            QCOMPARE(question.substr(needle + 9, 1), std::string(";"));
            QCOMPARE(answer, key);
            QVERIFY(question.ends_with("key?"));
            const std::string before = question.substr(0, needle);
            const std::string after = question.substr(needle + 10, question.size() - 4 - (needle + 10));
            QVERIFY(allLetters(before) && allLetters(after));
            QCOMPARE(int(before.size() + after.size()), length);
            QCOMPARE(int(before.size()), int(std::lround(depth * length))); // the depth honoured
            QCOMPARE(e.depth, depth);
            QCOMPARE(int(e.bytes.size()), taskExampleBytes(kind, length));
            break;
        }
        }
    }
}

void TestTasks::lossMaskExactlyOnAnswer_data()
{
    QTest::addColumn<TaskKind>("kind");
    for (const TaskInfo& t : taskTable())
        QTest::newRow(t.name.c_str()) << t.kind;
}

void TestTasks::lossMaskExactlyOnAnswer()
{
    QFETCH(TaskKind, kind);
    Rng rng(9);
    for (int length = 1; length <= 20; ++length) {
        const TaskExample e = makeTaskExample(kind, length, rng);
        const std::vector<float> mask = taskLossMask(e);
        QCOMPARE(mask.size(), e.bytes.size() - 1);
        // Target j is bytes[j + 1]: weighed exactly when that byte is after the separator.
        const size_t separator = text(e.bytes).find('=');
        float sum = 0;
        for (size_t j = 0; j < mask.size(); ++j) {
            QCOMPARE(mask[j], j + 1 > separator ? 1.0f : 0.0f);
            sum += mask[j];
        }
        QCOMPARE(int(sum), e.answerBytes());
    }
}

void TestTasks::seedsDecideTheData_data()
{
    lossMaskExactlyOnAnswer_data();
}

void TestTasks::seedsDecideTheData()
{
    QFETCH(TaskKind, kind);
    const double depth = kind == TaskKind::Passkey ? 0.5 : -1;
    auto bytesOf = [&](uint64_t seed, int length) {
        std::vector<uint8_t> all;
        for (const TaskExample& e : taskTestExamples(kind, length, depth, 20, seed))
            all.insert(all.end(), e.bytes.begin(), e.bytes.end());
        return all;
    };
    QCOMPARE(bytesOf(5, 8), bytesOf(5, 8));
    QVERIFY(bytesOf(5, 8) != bytesOf(6, 8));
    const int B = 8, T = 64;
    auto batch = [&](uint64_t seed, int step) {
        std::vector<uint8_t> in(B * T), tg(B * T);
        std::vector<float> w(B * T);
        fillTaskBatch({kind, 10}, seed, step, B, T, in.data(), tg.data(), w.data());
        return in;
    };
    QCOMPARE(batch(5, 3), batch(5, 3));
    QVERIFY(batch(5, 3) != batch(6, 3));
    QVERIFY(batch(5, 3) != batch(5, 4));
}

void TestTasks::randomDepthsReachBothEnds()
{
    // Training draws the needle after 0..n filler letters, each equally likely: both ends occur.
    Rng rng(4);
    int start = 0, end = 0;
    for (int i = 0; i < 400; ++i) {
        const TaskExample e = makeTaskExample(TaskKind::Passkey, 6, rng);
        QVERIFY(e.depth >= 0 && e.depth <= 1);
        start += e.depth == 0;
        end += e.depth == 1;
    }
    QVERIFY(start > 20 && end > 20); // expected 400/7 each
}

void TestTasks::trainingBatches_data()
{
    lossMaskExactlyOnAnswer_data();
}

void TestTasks::trainingBatches()
{
    QFETCH(TaskKind, kind);
    const int L = 6, T = taskExampleBytes(kind, L) - 1 + 3, B = 64;
    std::vector<uint8_t> in(B * T), tg(B * T);
    std::vector<float> w(B * T);
    fillTaskBatch({kind, L}, 2, 0, B, T, in.data(), tg.data(), w.data());
    std::vector<int> seen(L + 1, 0);
    for (int b = 0; b < B; ++b) {
        const uint8_t* row = in.data() + b * T;
        const int n = static_cast<int>(std::find(row, row + T, kTaskPadding) - row); // bytes read
        QVERIFY(n < T);
        // Targets are the inputs shifted by one and end with the terminator; the weights are taskLossMask's.
        for (int j = 0; j + 1 < n; ++j)
            QCOMPARE(tg[b * T + j], row[j + 1]);
        QCOMPARE(tg[b * T + n - 1], kTaskTerminator);
        const int separator = static_cast<int>(std::find(row, row + n, kTaskSeparator) - row);
        QVERIFY(separator < n);
        for (int j = 0; j < T; ++j)
            QCOMPARE(w[b * T + j], j >= separator && j < n ? 1.0f : 0.0f);
        for (int j = n; j < T; ++j)
            QCOMPARE(in[b * T + j], kTaskPadding);
        // The row's length, read back from its size.
        int length = 0;
        for (int k = 1; k <= L; ++k)
            if (kind == TaskKind::Addition ? (n + 1 == 3 * k + 3 || n + 1 == 3 * k + 4)
                                           : n + 1 == taskExampleBytes(kind, k))
                length = k;
        QVERIFY2(length >= 1, qPrintable(QString("row %1 of %2 bytes").arg(b).arg(n + 1)));
        ++seen[length];
    }
    for (int k = 1; k <= L; ++k)
        QVERIFY2(seen[k] > 0, qPrintable(QString("no row of length %1 in 64").arg(k)));
}

void TestTasks::lengthMustFitContext_data()
{
    QTest::addColumn<TaskKind>("kind");
    QTest::addColumn<int>("context");
    for (const TaskInfo& t : taskTable())
        for (int context : {21, 32, 64, 129})
            QTest::addRow("%s context %d", t.name.c_str(), context) << t.kind << context;
}

void TestTasks::lengthMustFitContext()
{
    QFETCH(TaskKind, kind);
    QFETCH(int, context);
    const int longest = taskLongestLength(kind, context);
    QVERIFY(longest >= 1);
    QVERIFY(taskExampleBytes(kind, longest) - 1 <= context);
    QVERIFY(taskExampleBytes(kind, longest + 1) - 1 > context);
    checkTaskLength(kind, longest, context);
    QVERIFY_THROWS_EXCEPTION(InputError, checkTaskLength(kind, 0, context));
    // A context shorter than length 1's example holds none: said as such, with the context needed.
    const int tooShort = taskExampleBytes(kind, 1) - 2;
    QCOMPARE(taskLongestLength(kind, tooShort), 0);
    try {
        checkTaskLength(kind, 1, tooShort);
        QFAIL("a context that holds no example was accepted");
    } catch (const InputError& e) {
        QVERIFY2(QString(e.what()).contains(QString("holds no example")) &&
                     QString(e.what()).contains(QString("a context of at least %1").arg(tooShort + 1)),
                 e.what());
    }
    try {
        checkTaskLength(kind, longest + 1, context);
        QFAIL("a length past the context was accepted");
    } catch (const InputError& e) {
        const QString m = e.what();
        QVERIFY2(m.contains(QString("length = %1").arg(longest + 1)) &&
                     m.contains(QString("context %1").arg(context)) && m.contains(QString("[1, %1]").arg(longest)),
                 qPrintable(m));
    }
    // Every example a run at `longest` draws fits: the generator never exceeds taskExampleBytes.
    Rng rng(1);
    for (int i = 0; i < 50; ++i)
        QVERIFY(int(makeTaskExample(kind, longest, rng).bytes.size()) - 1 <= context);
}

void TestTasks::badNamesAndDepths_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<double>("depth");
    QTest::addColumn<QString>("expected");
    QTest::newRow("unknown task") << "sort" << 0.5
                                  << "task 'sort' is unknown; allowed: copy, reverse, addition, passkey";
    QTest::newRow("depth above 1") << "passkey" << 1.5
                                   << "passkey depth = 1.5 is out of range; allowed: numbers in [0, 1]";
    QTest::newRow("depth below 0") << "passkey" << -0.25 << "passkey depth = -0.25 is out of range";
    QTest::newRow("depth nan") << "passkey" << std::nan("") << "passkey depth = nan is out of range";
}

void TestTasks::badNamesAndDepths()
{
    QFETCH(QString, name);
    QFETCH(double, depth);
    QFETCH(QString, expected);
    try {
        const TaskKind kind = taskByName(name.toStdString()).kind;
        TaskEvalOptions options;
        options.lengths = {4};
        options.depths = {depth};
        checkTaskEvalOptions(kind, options);
        QFAIL("accepted");
    } catch (const InputError& e) {
        QVERIFY2(QString(e.what()).contains(expected), e.what());
    }
}

void TestTasks::weightedLossGradient()
{
    // The loss restricted to the answer span, sum(w l) / sum(w), and its gradient, by central differences.
    const SingleThreaded oneThread;
    ModelConfig config;
    config.layers = 1;
    config.dModel = 16;
    config.heads = 2;
    config.dFf = 32;
    config.context = 16;
    config.scheme = "alibi";
    Model model(config);
    layers::FloatBuffer& p = model.parameters();
    Rng rng(3);
    for (const ParameterTensor& t : model.tensors())
        if (t.shape.size() == 2)
            for (size_t i = 0; i < t.size; ++i)
                p[t.offset + i] = static_cast<float>(0.3 * rng.normal());
    model.parametersChanged();
    const int B = 3, T = 16;
    std::vector<uint8_t> in(B * T), tg(B * T);
    std::vector<float> w(B * T);
    fillTaskBatch({TaskKind::Reverse, 7}, 1, 0, B, T, in.data(), tg.data(), w.data());
    w[2] = 0.5f; // a weight other than 0 and 1
    // The weighted mean itself, against the per-token losses.
    const double loss = model.forward(in.data(), tg.data(), B, T, w.data());
    double num = 0, den = 0;
    for (int i = 0; i < B * T; ++i) {
        num += w[i] * model.tokenLosses()[i];
        den += w[i];
    }
    QVERIFY(std::abs(loss - num / den) < 1e-5);
    model.zeroGradients();
    model.backward();
    const layers::FloatBuffer analytic = model.gradients();
    // Central differences of a float32 loss: about 1e-4 of noise (rounding of the loss over the step), so each entry
    // is held to 2 % of its own size plus that floor - not to a share of the largest gradient in the model, which
    // left small entries unchecked.
    const double step = 5e-3, relative = 2e-2, floor = 2e-4;
    auto numericAt = [&](size_t i, const float* weights) {
        auto f = [&] {
            model.parametersChanged();
            return static_cast<double>(model.forward(in.data(), tg.data(), B, T, weights));
        };
        const float saved = p[i];
        p[i] = saved + static_cast<float>(step);
        const double up = f();
        p[i] = saved - static_cast<float>(step);
        const double down = f();
        p[i] = saved;
        model.parametersChanged();
        return (up - down) / (2 * step);
    };
    // Per tensor: an entry a third in, the last, and the tensor's largest (so every tensor has one well above the
    // floor); then embedding rows of answer bytes, which only the weighted targets reach directly.
    std::vector<size_t> indices;
    for (const ParameterTensor& t : model.tensors()) {
        indices.push_back(t.offset + t.size / 3);
        indices.push_back(t.offset + t.size - 1);
        size_t largest = t.offset;
        for (size_t i = t.offset; i < t.offset + t.size; ++i)
            if (std::abs(analytic[i]) > std::abs(analytic[largest]))
                largest = i;
        indices.push_back(largest);
    }
    for (int c = 0; c < 4; ++c)
        indices.push_back(model.tensor("wte.weight").offset + tg[7] * config.dModel + c);
    int aboveFloor = 0;
    for (size_t i : indices) {
        const double numeric = numericAt(i, w.data());
        aboveFloor += std::abs(numeric) > 10 * floor;
        QVERIFY2(std::abs(numeric - analytic[i]) <= relative * std::abs(numeric) + floor,
                 qPrintable(QString("index %1: analytic %2, numeric %3").arg(i).arg(analytic[i]).arg(numeric)));
    }
    QVERIFY2(aboveFloor >= int(model.tensors().size()), qPrintable(QString("only %1 entries").arg(aboveFloor)));

    // Weight 0 everywhere but one target j: the gradient is that target's loss's alone - its central differences,
    // entry by entry - and the weighted gradient is sum_j w_j g_j / sum(w) of those, in every entry.
    auto gradientOf = [&](const std::vector<float>& weights) {
        model.parametersChanged();
        model.forward(in.data(), tg.data(), B, T, weights.data());
        model.zeroGradients();
        model.backward();
        return model.gradients();
    };
    std::vector<double> combined(analytic.size(), 0.0);
    double weightSum = 0;
    for (int j = 0; j < B * T; ++j) {
        if (w[j] == 0)
            continue;
        std::vector<float> one(B * T, 0.0f);
        one[j] = 1;
        const layers::FloatBuffer alone = gradientOf(one);
        for (size_t i = 0; i < alone.size(); ++i)
            combined[i] += w[j] * double(alone[i]);
        weightSum += w[j];
        if (j != 7)
            continue;
        for (size_t i : indices) { // target 7 (an answer byte's) against the differences of its loss alone
            const double numeric = numericAt(i, one.data());
            QVERIFY2(
                std::abs(numeric - alone[i]) <= relative * std::abs(numeric) + floor,
                qPrintable(QString("target 7, index %1: analytic %2, numeric %3").arg(i).arg(alone[i]).arg(numeric)));
        }
        QVERIFY(alone != analytic);
    }
    QVERIFY(weightSum > 1); // several targets
    double largest = 0;
    for (double g : combined)
        largest = std::max(largest, std::abs(g / weightSum));
    for (size_t i = 0; i < analytic.size(); ++i) { // each entry to its own size (a NaN fails: no max over them)
        const double want = combined[i] / weightSum;
        QVERIFY2(
            std::abs(analytic[i] - want) <= 1e-4 * std::abs(want) + 1e-6 * largest,
            qPrintable(QString("entry %1: weighted %2, sum of the targets' %3").arg(i).arg(analytic[i]).arg(want)));
    }
    std::vector<float> zeros(B * T, 0.0f);
    QVERIFY_THROWS_EXCEPTION(InputError, model.forward(in.data(), tg.data(), B, T, zeros.data()));
}

void TestTasks::greedyCheckHandCounted()
{
    // "ab=ab." read as "ab=ab": predictions at positions 0..4 of the next bytes b, =, a, b, '.'.
    TaskExample e;
    e.bytes = {'a', 'b', '=', 'a', 'b', '.'};
    e.answerStart = 3;
    const uint8_t allRight[] = {'b', '=', 'a', 'b', '.'};
    const uint8_t questionWrong[] = {'x', 'y', 'a', 'b', '.'}; // the question's predictions do not count
    const uint8_t firstWrong[] = {'b', '=', 'b', 'b', '.'};
    const uint8_t terminatorWrong[] = {'b', '=', 'a', 'b', 'b'}; // does not stop: wrong
    QVERIFY(greedyAnswerCorrect(e, allRight));
    QVERIFY(greedyAnswerCorrect(e, questionWrong));
    QVERIFY(!greedyAnswerCorrect(e, firstWrong));
    QVERIFY(!greedyAnswerCorrect(e, terminatorWrong));
}

namespace {

// A causal stub: the right next byte of a copy example (the payload letter the answer is at), except that it errs where
// a hash of the bytes read so far says so: a function of the prefix only, as a model's prediction is.
uint8_t stubNextByte(const uint8_t* prefix, int n)
{
    uint64_t h = 1469598103934665603ULL;
    for (int i = 0; i < n; ++i)
        h = (h ^ prefix[i]) * 1099511628211ULL;
    const int separator = static_cast<int>(std::find(prefix, prefix + n, kTaskSeparator) - prefix);
    uint8_t right = kTaskSeparator; // in the question: predicting '=' is as good as anything
    if (separator < n) {
        const int at = n - separator - 1; // answer bytes written so far
        right = at < separator ? prefix[at] : kTaskTerminator;
    }
    return (h >> 20) % 5 == 0 ? static_cast<uint8_t>('z' - right % 3) : right;
}

} // namespace

void TestTasks::greedyCheckMatchesDecoding()
{
    // Literal greedy decoding (one byte at a time, stopping at '.') against the one-forward check, on a stub that errs
    // at pseudo-random prefixes: the two agree on every example.
    int agreeRight = 0, agreeWrong = 0;
    for (const TaskExample& e : taskTestExamples(TaskKind::Copy, 3, -1, 300, 8)) {
        const int n = static_cast<int>(e.bytes.size()) - 1;
        std::vector<uint8_t> argmax(n);
        for (int j = 0; j < n; ++j)
            argmax[j] = stubNextByte(e.bytes.data(), j + 1);
        std::vector<uint8_t> decoded(e.bytes.begin(), e.bytes.begin() + e.answerStart);
        while (decoded.size() < e.bytes.size() + 4) {
            decoded.push_back(stubNextByte(decoded.data(), static_cast<int>(decoded.size())));
            if (decoded.back() == kTaskTerminator)
                break;
        }
        const bool greedy = decoded == e.bytes;
        QCOMPARE(greedyAnswerCorrect(e, argmax.data()), greedy);
        (greedy ? agreeRight : agreeWrong)++;
    }
    QVERIFY(agreeRight > 30 && agreeWrong > 30); // both outcomes occur
}

void TestTasks::accuracyHandCounted_data()
{
    QTest::addColumn<TaskKind>("kind");
    QTest::addColumn<QList<double>>("depths");
    QTest::newRow("copy") << TaskKind::Copy << QList<double>{};
    QTest::newRow("reverse") << TaskKind::Reverse << QList<double>{};
    QTest::newRow("passkey") << TaskKind::Passkey << QList<double>{0.0, 1.0};
}

void TestTasks::accuracyHandCounted()
{
    // A stub that knows every answer but gets it wrong (writes 'a' for the terminator) when the answer's last byte is a
    // vowel or an odd digit: its accuracy per cell is the share of the other examples, counted here from the test set.
    QFETCH(TaskKind, kind);
    QFETCH(QList<double>, depths);
    TaskEvalOptions options;
    options.lengths = {1, 3, 8};
    options.depths.assign(depths.begin(), depths.end());
    options.examples = 37;
    options.seed = 11;
    options.tokensPerBatch = 100; // several batches a cell
    auto marked = [](uint8_t c) { return std::string("aeiou13579").find(char(c)) != std::string::npos; };
    const NextBytePredictor stub = [&](const uint8_t* inputs, int B, int T, uint8_t* argmax) {
        for (int b = 0; b < B; ++b) {
            const uint8_t* row = inputs + b * T;
            for (int j = 0; j < T; ++j)
                argmax[b * T + j] = row[j + 1 < T ? j + 1 : j]; // the next byte read, if any
            // The terminator's position: the last non-padding byte read is the answer's last; '.' follows it.
            int n = T;
            while (n > 0 && row[n - 1] == kTaskPadding)
                --n;
            argmax[b * T + n - 1] = marked(row[n - 1]) ? 'a' : kTaskTerminator;
        }
    };
    const std::vector<TaskAccuracyPoint> points = evaluateTask(kind, stub, options);
    const std::vector<double> cells = depths.isEmpty() ? std::vector<double>{-1} : options.depths;
    QCOMPARE(points.size(), options.lengths.size() * cells.size());
    size_t i = 0;
    int right = 0, wrong = 0;
    for (int length : options.lengths)
        for (double depth : cells) {
            int expected = 0;
            for (const TaskExample& e : taskTestExamples(kind, length, depth, options.examples, options.seed))
                expected += marked(e.bytes[e.bytes.size() - 2]) ? 0 : 1;
            const TaskAccuracyPoint& p = points[i++];
            QCOMPARE(p.length, length);
            QCOMPARE(p.depth, depth);
            QCOMPARE(p.examples, 37);
            QCOMPARE(p.correct, expected);
            QCOMPARE(p.accuracy, expected / 37.0);
            right += expected;
            wrong += 37 - expected;
        }
    QVERIFY(right > 0 && wrong > 0); // the subset is a real subset
}

PLAB_QTEST_APPLESS_MAIN(TestTasks)
void TestTasks::taskPresets_data()
{
    QTest::addColumn<QString>("preset");
    QTest::addColumn<QString>("task");
    QTest::addColumn<int>("length"); // the training length the preset's context holds exactly
    QTest::addColumn<int>("steps");
    QTest::newRow("demo copy") << "demo"
                               << "copy" << 8 << 1200;
    QTest::newRow("demo passkey") << "demo"
                                  << "passkey" << 12 << 1200;
    QTest::newRow("quick copy") << "quick"
                                << "copy" << 12 << 2400;
    QTest::newRow("quick passkey") << "quick"
                                   << "passkey" << 24 << 2400;
    QTest::newRow("demo addition") << "demo"
                                   << "addition" << 3 << 1200;
}

// A preset with a task: a context that holds the task length exactly (its default --task-length), the schedule of
// the task's row; the model's widths stay the preset's.
void TestTasks::taskPresets()
{
    QFETCH(QString, preset);
    QFETCH(QString, task);
    QFETCH(int, length);
    QFETCH(int, steps);
    ModelConfig model, plain;
    TrainConfig train, plainTrain;
    applyPreset(preset.toStdString(), model, train);
    applyPreset(preset.toStdString(), plain, plainTrain);
    const TaskKind kind = taskByName(task.toStdString()).kind;
    applyTaskPreset(preset.toStdString(), kind, model, train);
    QCOMPARE(taskLongestLength(kind, model.context), length);
    QVERIFY(taskLongestLength(kind, model.context - 1) < length);
    QCOMPARE(train.steps, steps);
    QCOMPARE(model.dModel, plain.dModel);
    QCOMPARE(model.layers, plain.layers);
    // A preset without a task row is left alone.
    ModelConfig tiny;
    TrainConfig tinyTrain;
    applyPreset("tiny", tiny, tinyTrain);
    const int context = tiny.context;
    applyTaskPreset("tiny", kind, tiny, tinyTrain);
    QCOMPARE(tiny.context, context);
}

void TestTasks::defaultLengths()
{
    QCOMPARE(defaultTaskLengths(8), (std::vector<int>{4, 8, 12, 16, 20, 24, 28, 32}));
    QCOMPARE(defaultTaskLengths(1), (std::vector<int>{1, 2, 3, 4}));
}

// The training length eval MODEL --task and LabModel.task take their default lengths from: the checkpoint's own task
// length when it was trained on that task, else the longest the context reads ((context - 1) / 2 for copy and reverse,
// (context - 3) / 3 for addition: the task table's example sizes), at least 1.
void TestTasks::evalTrainLength_data()
{
    QTest::addColumn<QString>("training");
    QTest::addColumn<TaskKind>("kind");
    QTest::addColumn<int>("context");
    QTest::addColumn<int>("expected");
    const QString copy7 = R"({"task": "copy", "task_length": 7, "steps": 10})";
    QTest::newRow("own task") << copy7 << TaskKind::Copy << 32 << 7;
    QTest::newRow("another task") << copy7 << TaskKind::Reverse << 32 << 15;
    QTest::newRow("trained on text") << R"({"steps": 10})" << TaskKind::Copy << 33 << 16;
    QTest::newRow("no record") << "null" << TaskKind::Addition << 32 << 9;
    QTest::newRow("context holds none") << "null" << TaskKind::Copy << 2 << 1;
    QTest::newRow("malformed record") << R"({"task": 5})" << TaskKind::Copy << 32 << -1;
}

void TestTasks::evalTrainLength()
{
    QFETCH(QString, training);
    QFETCH(TaskKind, kind);
    QFETCH(int, context);
    QFETCH(int, expected);
    const nlohmann::json record = nlohmann::json::parse(training.toStdString());
    if (expected < 0) {
        QVERIFY_THROWS_EXCEPTION(InputError, taskEvalTrainLength(kind, record, context));
        return;
    }
    QCOMPARE(taskEvalTrainLength(kind, record, context), expected);
}

#include "tst_tasks.moc"
