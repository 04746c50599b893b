// Retrieval in a folder's own tokens (core/tasks/retrieval, core/runs/retrieval_runs, eval DIR --task): the generators
// (exact lengths, depth to within one token, seeds, the needle span, the answer's round trip), the scorers on
// hand-counted logits, the one-forward greedy rule against step-by-step greedy decoding, bad input, the CLI end to end.
#include "base/errors.h"
#include "hf/hf_model.h"
#include "hf/tokenizer.h"
#include "runs/retrieval_runs.h"
#include "tasks/retrieval.h"
#include "cli_runner.h"
#include "test_main.h"

#include <QDir>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

using namespace plab;

namespace {

QString dataPath(const char* rel)
{
    return QStringLiteral(POSITIONLAB_TEST_DATA "/") + QString::fromUtf8(rel);
}

// A haystack of plain sentences, long enough for every row.
std::string haystack(size_t bytes)
{
    const char* words[] = {"the ", "grass ", "is ",   "green ", "and ", "the ",   "sky ",
                           "is ",  "blue. ", "here ", "we ",    "go ",  "again. "};
    std::string text;
    for (size_t i = 0; text.size() < bytes; ++i)
        text += words[(i * 5 + i / 7) % 13];
    return text;
}

std::string str(const QString& s)
{
    return s.toStdString();
}

std::vector<std::string> readLines(const QString& path)
{
    std::ifstream in(str(path));
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);)
        lines.push_back(line);
    return lines;
}

// A logits source whose every row puts `top[i]` highest (row i), and records what it was asked.
struct FakeRows {
    std::vector<std::vector<float>> rows;
    std::vector<int> lastIds;
    int lastRows = 0;
    TailLogits source()
    {
        return [this](const std::vector<int>& ids, int n) {
            lastIds = ids;
            lastRows = n;
            HfMatrix m(n, static_cast<long>(rows.front().size()));
            for (int i = 0; i < n; ++i)
                for (size_t v = 0; v < rows.front().size(); ++v)
                    m(i, static_cast<long>(v)) = rows[static_cast<size_t>(std::min<int>(i, int(rows.size()) - 1))][v];
            return m;
        };
    }
};

} // namespace

class TestRetrieval : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void generator_data();
    void generator();
    void seeds();
    void scorerExact_data();
    void scorerExact();
    void scorerLoglik_data();
    void scorerLoglik();
    void greedyMatchesStepByStep_data();
    void greedyMatchesStepByStep();
    void badInput_data();
    void badInput();
    void outputCompletedPastFirstWrong_data();
    void outputCompletedPastFirstWrong();
    void endToEnd();
    void sweepResumes();
};

void TestRetrieval::generator_data()
{
    QTest::addColumn<QString>("tokenizer");
    QTest::addColumn<QString>("task");
    QTest::addColumn<int>("length");
    QTest::addColumn<double>("depth");
    const QString bpe = dataPath("hf/qwen2_text/tokenizer.json");
    const QString llama = dataPath("tokenizers/llama2/tokenizer.json"); // adds <s> first
    for (const char* task : {"passkey", "niah-single", "niah-multikey", "niah-multivalue", "variable-tracking"})
        for (double depth : {0.0, 0.25, 0.5, 1.0}) {
            QTest::addRow("%s d=%g byte-level", task, depth) << bpe << task << 400 << depth;
            QTest::addRow("%s d=%g llama bos", task, depth) << llama << task << 500 << depth;
        }
    QTest::addRow("passkey long") << bpe << "passkey" << 3001 << 0.37;
}

void TestRetrieval::generator()
{
    QFETCH(QString, tokenizer);
    QFETCH(QString, task);
    QFETCH(int, length);
    QFETCH(double, depth);
    const hf::Tokenizer tok = hf::Tokenizer::fromFile(str(tokenizer));
    const RetrievalGenerator gen(tok, haystack(60000), "test haystack");
    const RetrievalKind kind = retrievalTaskByName(str(task)).kind;
    QVERIFY(gen.minimumLength(kind) < length);
    for (const RetrievalExample& e : retrievalExamples(gen, kind, length, depth, 3, 7)) {
        QCOMPARE(static_cast<int>(e.promptIds.size()), length); // exact in tokens
        // The special tokens the tokenizer adds in front (llama's <s>), as it adds them.
        const std::vector<int> withSpecial = tok.encode("x", true).ids, plain = tok.encode("x", false).ids;
        const size_t prefix = withSpecial.size() - plain.size();
        for (size_t i = 0; i < prefix; ++i)
            QCOMPARE(e.promptIds[i], withSpecial[i]);
        // Depth: the needle starts after round(depth x the rest of the haystack) of its tokens, to within one.
        const int needle = e.needleEnd - e.needleStart;
        const double expected = depth * (e.hayEnd - e.hayStart - needle);
        QVERIFY2(std::abs((e.needleStart - e.hayStart) - expected) <= 1.0,
                 qPrintable(QStringLiteral("needle at %1, expected %2").arg(e.needleStart - e.hayStart).arg(expected)));
        // The span holds the needle: its text names the answer's number (the first, for multivalue).
        const std::vector<int> span(e.promptIds.begin() + e.needleStart, e.promptIds.begin() + e.needleEnd);
        const std::string spanText = tok.decode(span);
        const std::string number = e.answerText.substr(1, 5);
        QVERIFY2(spanText.find(number) != std::string::npos, spanText.c_str());
        // The question comes last, after the haystack, and never contains the number.
        const std::vector<int> question(e.promptIds.begin() + e.hayEnd, e.promptIds.end());
        QVERIFY(tok.decode(question).find(number) == std::string::npos);
        // The answer's round trip: its tokens decode to its text and its text encodes to them.
        QCOMPARE(tok.decode(e.answerIds), e.answerText);
        QVERIFY(tok.encode(e.answerText, false).ids == e.answerIds);
        // Loglik candidates: 10 distinct, the answer among them where correctCandidate says.
        QCOMPARE(static_cast<int>(e.candidates.size()), kRetrievalCandidates);
        QVERIFY(e.candidates[static_cast<size_t>(e.correctCandidate)] == e.answerIds);
        QCOMPARE(std::set<std::vector<int>>(e.candidates.begin(), e.candidates.end()).size(), e.candidates.size());
    }
}

void TestRetrieval::seeds()
{
    const hf::Tokenizer tok = hf::Tokenizer::fromFile(str(dataPath("hf/qwen2_text/tokenizer.json")));
    const RetrievalGenerator gen(tok, haystack(60000), "test haystack");
    for (const RetrievalTaskInfo& t : retrievalTaskTable()) {
        const auto a = retrievalExamples(gen, t.kind, 500, 0.5, 4, 11);
        const auto b = retrievalExamples(gen, t.kind, 500, 0.5, 4, 11);
        const auto c = retrievalExamples(gen, t.kind, 500, 0.5, 4, 12);
        for (size_t i = 0; i < a.size(); ++i) {
            QVERIFY(a[i].promptIds == b[i].promptIds);
            QVERIFY(a[i].answerIds == b[i].answerIds);
        }
        QVERIFY(a[0].promptIds != c[0].promptIds);
        QVERIFY(a[0].promptIds != a[1].promptIds); // examples of one cell differ
    }
}

void TestRetrieval::scorerExact_data()
{
    QTest::addColumn<QList<int>>("argmax"); // argmax of each answer row
    QTest::addColumn<bool>("correct");
    QTest::addColumn<QList<int>>("output");
    // The answer is {5, 6, 7}; vocab 10.
    QTest::newRow("all right") << QList<int>{5, 6, 7} << true << QList<int>{5, 6, 7};
    QTest::newRow("first wrong") << QList<int>{4, 6, 7} << false << QList<int>{4};
    QTest::newRow("last wrong") << QList<int>{5, 6, 8} << false << QList<int>{5, 6, 8};
    QTest::newRow("tie goes to the lower id") << QList<int>{5, -6, 7} << false << QList<int>{5, 0};
}

void TestRetrieval::scorerExact()
{
    QFETCH(QList<int>, argmax);
    QFETCH(bool, correct);
    QFETCH(QList<int>, output);
    RetrievalExample e;
    e.promptIds = {1, 2, 3, 9};
    e.answerIds = {5, 6, 7};
    FakeRows fake;
    for (int a : argmax) {
        std::vector<float> row(10, 0.f);
        if (a >= 0)
            row[static_cast<size_t>(a)] = 2.f;
        else { // a tie between -a and id 0: the first of equal logits (id 0) wins
            row[static_cast<size_t>(-a)] = 2.f;
            row[0] = 2.f;
        }
        fake.rows.push_back(row);
    }
    const RetrievalScore s = scoreRetrievalExact(e, fake.source());
    QCOMPARE(s.correct, correct);
    QCOMPARE(QList<int>(s.outputIds.begin(), s.outputIds.end()), output);
    QCOMPARE(fake.lastRows, 3);                                    // one forward, the answer's rows
    QVERIFY((fake.lastIds == std::vector<int>{1, 2, 3, 9, 5, 6})); // prompt + answer[0..n-2]
}

void TestRetrieval::scorerLoglik_data()
{
    QTest::addColumn<int>("answer"); // the answer candidate (its one token) among tokens 0..9
    QTest::addColumn<int>("rank");
    // Logits w[t] = t / 2 except where noted: candidate t's log-likelihood grows with t.
    QTest::newRow("best") << 9 << 1;
    QTest::newRow("worst") << 0 << 10;
    QTest::newRow("middle") << 4 << 6;
    QTest::newRow("tie loses") << 3 << 3; // w[3] is set equal to w[8] below: 8 (a tie) and 9 count
}

void TestRetrieval::scorerLoglik()
{
    QFETCH(int, answer);
    QFETCH(int, rank);
    RetrievalExample e;
    e.promptIds = {1, 2};
    std::vector<float> w(10);
    for (int t = 0; t < 10; ++t)
        w[static_cast<size_t>(t)] = 0.5f * t;
    if (QTest::currentDataTag() == QByteArray("tie loses"))
        w[3] = w[8]; // 3 ties with 8, below 9: candidates 8 and 9 score at least as high -> rank 3
    for (int t = 0; t < 10; ++t)
        e.candidates.push_back({t});
    e.correctCandidate = answer;
    e.answerIds = {answer};
    FakeRows fake;
    fake.rows.push_back(w);
    const RetrievalScore s = scoreRetrievalLoglik(e, fake.source());
    QCOMPARE(s.rank, rank);
    QCOMPARE(s.correct, rank == 1);
    // The log-likelihood is log softmax(w)[answer], computed here independently.
    double z = 0;
    for (float v : w)
        z += std::exp(static_cast<double>(v));
    QVERIFY(std::abs(s.answerLogLik - (w[static_cast<size_t>(answer)] - std::log(z))) < 1e-6);
}

void TestRetrieval::greedyMatchesStepByStep_data()
{
    QTest::addColumn<QString>("folder");
    QTest::addColumn<QString>("task");
    QTest::newRow("qwen2_text passkey") << "hf/qwen2_text"
                                        << "passkey";
    QTest::newRow("qwen2_text niah-multivalue") << "hf/qwen2_text"
                                                << "niah-multivalue";
    QTest::newRow("qwen2_text variable-tracking") << "hf/qwen2_text"
                                                  << "variable-tracking";
}

// The one-forward rule against greedy decoding token by token (a full forward over the growing prefix each step).
void TestRetrieval::greedyMatchesStepByStep()
{
    QFETCH(QString, folder);
    QFETCH(QString, task);
    const std::string dir = str(dataPath(qPrintable(folder)));
    const hf::Tokenizer tok = hf::Tokenizer::fromFolder(dir);
    const HfModel model(dir);
    const SchemeSpec positions = hfPositionSpec(model.config());
    const RetrievalGenerator gen(tok, haystack(20000), "test haystack");
    const RetrievalKind kind = retrievalTaskByName(str(task)).kind;
    int checked = 0;
    for (const RetrievalExample& e : retrievalExamples(gen, kind, gen.minimumLength(kind) + 20, 0.5, 3, 3)) {
        // A model with random weights rarely says the answer; the answer made its own greedy output shows the rule
        // on a right answer too.
        for (const bool forceRight : {false, true}) {
            RetrievalExample x = e;
            std::vector<int> ids = x.promptIds, greedy;
            for (size_t i = 0; i < x.answerIds.size(); ++i) {
                const HfMatrix logits = model.logits(ids, positions);
                const auto row = logits.row(logits.rows() - 1);
                int best = 0;
                for (int v = 1; v < row.size(); ++v)
                    if (row(v) > row(best))
                        best = v;
                greedy.push_back(best);
                ids.push_back(best); // greedy decoding reads its own tokens
            }
            if (forceRight)
                x.answerIds = greedy; // the greedy continuation is then the answer
            const RetrievalScore s = scoreRetrievalExact(
                x, [&](const std::vector<int>& in, int rows) { return model.tailLogits(in, positions, rows); });
            QCOMPARE(s.correct, greedy == x.answerIds);
            // output_ids: the greedy tokens up to and including the first that differs from the answer.
            size_t firstWrong = 0;
            while (firstWrong < greedy.size() && greedy[firstWrong] == x.answerIds[firstWrong])
                ++firstWrong;
            const std::vector<int> expected(
                greedy.begin(), greedy.begin() + static_cast<long>(std::min(greedy.size(), firstWrong + 1)));
            QVERIFY(s.outputIds == expected);
            ++checked;
        }
    }
    QCOMPARE(checked, 6);
}

void TestRetrieval::outputCompletedPastFirstWrong_data()
{
    QTest::addColumn<QString>("method");
    QTest::newRow("none (cache)") << "none";
    QTest::newRow("yarn (cache)") << "yarn";
    QTest::newRow("self-extend (one forward per token)") << "self-extend";
}

// With examples written, a wrong answer's output goes on past its first wrong token as greedy decoding would: the
// step-by-step greedy tokens under the method's positions, as many as the answer has.
void TestRetrieval::outputCompletedPastFirstWrong()
{
    QFETCH(QString, method);
    const std::string dir = str(dataPath("hf/qwen2_text"));
    const hf::Tokenizer tok = hf::Tokenizer::fromFolder(dir);
    const HfModel model(dir);
    const RetrievalGenerator gen(tok, haystack(20000), "test haystack");
    RetrievalOptions options;
    options.kind = RetrievalKind::NiahMultivalue; // a long answer: room past the first wrong token
    options.lengths = {gen.minimumLength(options.kind) + 30};
    options.depths = {0.5};
    options.examples = 2;
    options.methods = {{str(method), {}}};
    RetrievalHooks hooks;
    int checked = 0, wrong = 0;
    hooks.exampleDone = [&](const RetrievalRecord& r) {
        std::vector<int> ids = r.example.promptIds, greedy;
        for (size_t i = 0; i < r.example.answerIds.size(); ++i) {
            const HfMatrix logits = model.logits(ids, r.method.positions);
            const auto row = logits.row(logits.rows() - 1);
            int best = 0;
            for (int v = 1; v < row.size(); ++v)
                if (row(v) > row(best))
                    best = v;
            greedy.push_back(best);
            ids.push_back(best);
        }
        QVERIFY(r.score.outputIds == greedy);
        wrong += !r.score.correct;
        ++checked;
    };
    runRetrieval(model, gen, options, hooks);
    QCOMPARE(checked, 2);
    QVERIFY(wrong > 0); // random weights: the completion was exercised
}

void TestRetrieval::badInput_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    const QString dir = dataPath("hf/qwen2_text");
    const QStringList base = {"eval", dir, "--lengths", "200", "--depths", "0.5"};
    QTest::newRow("unknown task") << (QStringList{"eval", dir, "--task", "needle"})
                                  << "--task: task 'needle' is unknown; allowed: passkey, niah-single";
    QTest::newRow("depth above 1") << (QStringList{"eval", dir, "--task", "passkey", "--lengths", "200", "--depths",
                                                   "0,1.5"})
                                   << "--depths: 1.5";
    QTest::newRow("negative depth") << (QStringList{"eval", dir, "--task", "passkey", "--lengths", "200", "--depths",
                                                    "-0.1"})
                                    << "is outside [0, 1]";
    QTest::newRow("length too short") << (QStringList{"eval", dir, "--task", "passkey", "--lengths", "20"})
                                      << "--lengths: 20 is too short for task passkey";
    // A typo's length (hours by the run's own estimate) is refused before any work, --allow-long named.
    QTest::newRow("estimate past 10 minutes") << (QStringList{"eval", dir, "--task", "passkey", "--lengths", "400000"})
                                              << "retrieval (task passkey) would take about";
    QTest::newRow("estimate past 10 minutes names --allow-long")
        << (QStringList{"eval", dir, "--task", "passkey", "--lengths", "400000"}) << "or --allow-long to run it anyway";
    QTest::newRow("bad score") << (base + QStringList{"--task", "passkey", "--score", "best"})
                               << "--score best is not allowed; allowed: exact";
    QTest::newRow("unknown method") << (base + QStringList{"--task", "passkey", "--compare", "none,warp"})
                                    << "'warp' is not a known method";
    QTest::newRow("examples-out not jsonl")
        << (base + QStringList{"--task", "passkey", "--examples-out", "x.txt"}) << "--examples-out";
    QTest::newRow("scaling with a folder task")
        << (base + QStringList{"--task", "passkey", "--scaling", "yarn"}) << "--scaling is not read here";
    QTest::newRow("score without task") << (QStringList{"eval", dir, "--score", "loglik"}) << "--score";
    // --examples-in: the options that generate prompts, a checkpoint, loglik, and hostile files.
    const QString tmp = QDir::tempPath() + "/plab_tst_retrieval_prompts";
    QDir().mkpath(tmp);
    auto file = [&](const char* name, const std::string& text) {
        const QString path = tmp + "/" + name;
        std::ofstream(str(path)) << text;
        return path;
    };
    const std::string good = R"({"prompt_ids":[1,2,3],"answer_ids":[4],"length":3,"depth":0.5})";
    const QString ok = file("ok.jsonl", good + "\n");
    QTest::newRow("examples-in with task")
        << (QStringList{"eval", dir, "--examples-in", ok, "--task", "passkey"}) << "--examples-in is not used by";
    QTest::newRow("examples-in with lengths")
        << (QStringList{"eval", dir, "--examples-in", ok, "--lengths", "200"})
        << "--lengths is not used by `positionlab-cli eval DIR --examples-in FILE.jsonl`";
    QTest::newRow("examples-in on a checkpoint")
        << (QStringList{"eval", dataPath("export/passkey.safetensors"), "--examples-in", ok})
        << "is a lab checkpoint; --examples-in scores a prompts file through a model folder";
    QTest::newRow("examples-in with loglik") << (QStringList{"eval", dir, "--examples-in", ok, "--score", "loglik"})
                                             << "--score loglik cannot be used with --examples-in";
    QTest::newRow("examples-in missing file")
        << (QStringList{"eval", dir, "--examples-in", tmp + "/none.jsonl"}) << "--examples-in: cannot read";
    QTest::newRow("examples-in empty") << (QStringList{"eval", dir, "--examples-in", file("empty.jsonl", "\n\n")})
                                       << "holds no example";
    QTest::newRow("examples-in not JSON")
        << (QStringList{"eval", dir, "--examples-in", file("broken.jsonl", good + "\n{\"prompt_ids\": [1,\n")})
        << "line 2 is not valid JSON";
    QTest::newRow("examples-in nested") << (QStringList{"eval", dir, "--examples-in",
                                                        file("deep.jsonl", std::string(100, '[') + "\n")})
                                        << "nested deeper than 64 levels";
    QTest::newRow("examples-in id past vocab")
        << (QStringList{"eval", dir, "--examples-in",
                        file("vocab.jsonl", R"({"prompt_ids":[1,2,99999999],"answer_ids":[4],"length":3,"depth":0})")})
        << "\"prompt_ids\" holds 99999999; allowed: token ids in [0, ";
    QTest::newRow("examples-in no answer")
        << (QStringList{"eval", dir, "--examples-in",
                        file("answer.jsonl", R"({"prompt_ids":[1,2,3],"length":3,"depth":0})")})
        << "\"answer_ids\" is missing";
    QTest::newRow("examples-in depth 2")
        << (QStringList{"eval", dir, "--examples-in",
                        file("depth.jsonl", R"({"prompt_ids":[1,2,3],"answer_ids":[4],"length":3,"depth":2})")})
        << "\"depth\" must be a number in [0, 1]";
    QTest::newRow("examples-in span past prompt")
        << (QStringList{"eval", dir, "--examples-in",
                        file("span.jsonl",
                             R"({"prompt_ids":[1,2,3],"answer_ids":[4],"length":3,"depth":0,"needle_span":[1,9]})")})
        << "\"needle_span\" must be [start, end] with 0 <= start <= end <= 3";
    QTest::newRow("examples-in length 0")
        << (QStringList{"eval", dir, "--examples-in",
                        file("length.jsonl", R"({"prompt_ids":[1,2,3],"answer_ids":[4],"length":0,"depth":0})")})
        << "\"length\" must be an integer of at least 1";
    QTest::newRow("examples-in not an object")
        << (QStringList{"eval", dir, "--examples-in", file("array.jsonl", "[1, 2]\n")}) << "must be a JSON object";
}

void TestRetrieval::badInput()
{
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    const test::CliResult r = test::runCli(args);
    QVERIFY2(r.exitCode == 2, r.err.constData());
    QVERIFY2(QString::fromUtf8(r.err).contains(message), r.err.constData());
}

void TestRetrieval::endToEnd()
{
    QTemporaryDir tmp;
    const QString dir = dataPath("hf/qwen2_text");
    // A corpus too short for the longest length: refused, saying by how much.
    const QString small = tmp.filePath("small.txt");
    {
        std::ofstream(str(small)) << haystack(3000);
    }
    const test::CliResult shortCorpus =
        test::runCli({"eval", dir, "--task", "passkey", "--lengths", "200,5000", "--corpus", small});
    QCOMPARE(shortCorpus.exitCode, 2);
    QVERIFY2(shortCorpus.err.contains("short; allowed: a longer --corpus"), shortCorpus.err.constData());

    const QString corpus = tmp.filePath("hay.txt");
    {
        std::ofstream(str(corpus)) << haystack(40000);
    }
    const QStringList args = {"eval",       dir,        "--task",   "passkey",   "--lengths",
                              "180,260",    "--depths", "0,1",      "--compare", "none,yarn",
                              "--examples", "2",        "--corpus", corpus,      "--quiet"};
    const test::CliResult a =
        test::runCli(args + QStringList{"-o", tmp.filePath("a.json"), "--examples-out", tmp.filePath("a.jsonl")});
    QVERIFY2(a.exitCode == 0, a.err.constData());
    const test::CliResult b = test::runCli(args + QStringList{"--examples-out", tmp.filePath("b.jsonl")});
    QVERIFY2(b.exitCode == 0, b.err.constData());
    QVERIFY(b.out.startsWith("method,length,depth,examples,correct,accuracy\n"));
    QCOMPARE(b.out.count('\n'), 1 + 2 * 2 * 2);
    std::ifstream in(str(tmp.filePath("a.json")));
    const nlohmann::json doc = nlohmann::json::parse(in);
    QCOMPARE(doc["task"].get<std::string>(), std::string("passkey"));
    QCOMPARE(doc["methods"].size(), size_t(2));
    QCOMPARE(doc["methods"][1]["method"].get<std::string>(), std::string("yarn"));
    QCOMPARE(doc["methods"][0]["cells"].size(), size_t(4));
    // One JSON object per example, the same prompts for the same seed, whatever the output format.
    const std::vector<std::string> lines = readLines(tmp.filePath("a.jsonl"));
    QCOMPARE(lines.size(), size_t(2 * 2 * 2 * 2));
    QVERIFY(lines == readLines(tmp.filePath("b.jsonl")));
    for (const std::string& line : lines) {
        const nlohmann::json e = nlohmann::json::parse(line);
        QCOMPARE(e["prompt_ids"].size(), e["length"].get<size_t>());
        const auto span = e["needle_span"].get<std::vector<int>>();
        QVERIFY(span.size() == 2 && span[0] < span[1] && span[1] <= e["length"].get<int>());
        QCOMPARE(e["correct"].get<bool>(), e["output_ids"] == e["answer_ids"]);
        QCOMPARE(e["output_ids"].size(), e["answer_ids"].size()); // a wrong answer completed past its first wrong token
        for (const char* key : {"method", "depth", "answer_ids", "output_ids"})
            QVERIFY2(e.contains(key), key);
    }

    // The same prompts read back (--examples-in) under the same methods: the same examples, line for line, and the
    // same cells; a prompt written under both methods is scored once per method, not twice.
    const test::CliResult c =
        test::runCli({"eval", dir, "--examples-in", tmp.filePath("a.jsonl"), "--compare", "none,yarn", "--quiet", "-o",
                      tmp.filePath("c.json"), "--examples-out", tmp.filePath("c.jsonl")});
    QVERIFY2(c.exitCode == 0, c.err.constData());
    QVERIFY(readLines(tmp.filePath("c.jsonl")) == lines);
    std::ifstream inC(str(tmp.filePath("c.json")));
    const nlohmann::json again = nlohmann::json::parse(inC);
    for (size_t m = 0; m < 2; ++m) {
        QCOMPARE(again["methods"][m]["cells"], doc["methods"][m]["cells"]);
        QCOMPARE(again["methods"][m]["params"], doc["methods"][m]["params"]); // yarn's factor resolved alike
    }
}

// sweep --model DIR --task: cells that resume. The first run does only cell 0 (--cell), the second the rest; the third
// finds nothing to do; each cell's line holds the depth x length accuracy.
void TestRetrieval::sweepResumes()
{
    QTemporaryDir tmp;
    const QString corpus = tmp.filePath("hay.txt");
    {
        std::ofstream(str(corpus)) << haystack(30000);
    }
    const QString out = tmp.filePath("sweep");
    const QStringList grid = {"sweep",
                              "--model",
                              dataPath("hf/qwen2_text"),
                              "--methods",
                              "none,yarn,ntk",
                              "--task",
                              "passkey",
                              "--lengths",
                              "170,220",
                              "--depths",
                              "0,1",
                              "--corpus",
                              corpus,
                              "-o",
                              out,
                              "--emit",
                              "parallel"};
    const test::CliResult emitted = test::runCli(grid); // writes the folder and its commands, runs nothing
    QVERIFY2(emitted.exitCode == 0, emitted.err.constData());
    const test::CliResult one = test::runCli({"sweep", "--cell", "1", out, "--quiet"});
    QVERIFY2(one.exitCode == 0, one.err.constData());
    QCOMPARE(readLines(out + "/results.jsonl").size(), size_t(1));
    QStringList resume = grid.mid(0, grid.size() - 2);
    resume << "--jobs"
           << "2";
    const test::CliResult rest = test::runCli(resume);
    QVERIFY2(rest.exitCode == 0, rest.err.constData());
    QVERIFY2(rest.err.contains("1 done, 2 to run"), rest.err.constData());
    const std::vector<std::string> lines = readLines(out + "/results.jsonl");
    QCOMPARE(lines.size(), size_t(3));
    std::set<int> cells;
    for (const std::string& line : lines) {
        const nlohmann::json r = nlohmann::json::parse(line);
        cells.insert(r["cell"].get<int>());
        QCOMPARE(r["task"].get<std::string>(), std::string("passkey"));
        QCOMPARE(r["depth_accuracy"].size(), size_t(2));    // lengths
        QCOMPARE(r["depth_accuracy"][0].size(), size_t(2)); // depths
    }
    QCOMPARE(cells, (std::set<int>{0, 1, 2}));
    const test::CliResult again = test::runCli(resume);
    QVERIFY2(again.exitCode == 0, again.err.constData());
    QVERIFY2(again.err.contains("all 3 cells done"), again.err.constData());
    QCOMPARE(readLines(out + "/results.jsonl").size(), size_t(3));
}

PLAB_QTEST_GUILESS_MAIN(TestRetrieval)
#include "tst_retrieval.moc"
