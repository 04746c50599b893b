// A Hugging Face model folder where a checkpoint is (attention, entropy, render attention --checkpoint DIR) and
// sweep --model DIR, on tests/data/hf's tiny folders: the CLI's numbers against core's functions run here on the same
// tokens, entropy against the probabilities it comes from, a resumed sweep against eval --compare, collect's rows.
#include "base/npy.h"
#include "hf/hf_attention.h"
#include "hf/hf_export.h"
#include "hf/tokenizer.h"
#include "model/corpus.h"
#include "runs/language_model.h"
#include "cli_runner.h"
#include "test_main.h"

#include <QtTest>

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <sstream>

using namespace plab;

namespace {

QString hfData(const QString& name)
{
    return QStringLiteral(POSITIONLAB_TEST_DATA) + "/hf/" + name;
}

QString corpusPath()
{
    return QStringLiteral(POSITIONLAB_TEST_DATA) + "/../../README.md";
}

// The tokens the folder verbs read: the corpus's validation split in the folder's tokens, the first `length` of them.
std::vector<int> corpusTokens(const QString& folder, int length)
{
    const Corpus corpus = loadCorpusFile(corpusPath().toStdString());
    const std::vector<int32_t> all =
        folderTextTokens(hf::Tokenizer::fromFolder(folder.toStdString()), corpus.validation, "the corpus");
    std::vector<int> ids;
    for (int i = 0; i < length; ++i)
        ids.push_back(all[static_cast<size_t>(i) % all.size()]);
    return ids;
}

std::vector<std::string> settingsOf(const QString& set)
{
    return set.isEmpty() ? std::vector<std::string>{} : std::vector<std::string>{set.toStdString()};
}

QStringList methodArgs(const QString& scaling, const QString& set)
{
    QStringList a;
    if (!scaling.isEmpty())
        a << "--scaling" << scaling;
    if (!set.isEmpty())
        a << "--set" << set;
    return a;
}

// A copy of tests/data/hf_families/gemma3_text (five sliding layers of window 8 to each full one, linear 8 on the full
// ones) with a byte-level tokenizer, so text and retrieval prompts can be read in its tokens.
QString gemma3WithTokenizer(const QString& dir)
{
    const QString source = QStringLiteral(POSITIONLAB_TEST_DATA) + "/hf_families/gemma3_text";
    QDir().mkpath(dir);
    for (const char* file : {"config.json", "model.safetensors"})
        QFile::copy(source + "/" + file, dir + "/" + file);
    std::ofstream(dir.toStdString() + "/tokenizer.json") << byteTokenizerJson();
    return dir;
}

nlohmann::json readJsonFile(const QString& path)
{
    std::ifstream in(path.toStdString());
    return nlohmann::json::parse(in);
}

std::vector<std::string> csvLines(const QByteArray& text)
{
    std::vector<std::string> lines;
    std::istringstream in(text.toStdString());
    for (std::string line; std::getline(in, line);)
        if (!line.empty())
            lines.push_back(line);
    return lines;
}

} // namespace

class TestHfCli : public QObject {
    Q_OBJECT

private slots:
    void attentionMatchesCore_data();
    void attentionMatchesCore();
    void entropyMatchesProbabilities_data();
    void entropyMatchesProbabilities();
    void renderAttentionIsTheModelPage();
    void modelSweepResumesAndMatchesEval();
    void modelSweepEmitsTheModelAbsolutely();
    void modelSweepScalingLayers_data();
    void modelSweepScalingLayers();
    void badInputExitsTwo_data();
    void badInputExitsTwo();

private:
    QTemporaryDir m_dir;
};

void TestHfCli::attentionMatchesCore_data()
{
    QTest::addColumn<QString>("folder");
    QTest::addColumn<int>("layer");
    QTest::addColumn<int>("length");
    QTest::addColumn<QString>("scaling");
    QTest::addColumn<QString>("set");
    QTest::addRow("qwen2 GQA last layer") << "qwen2_text" << 1 << 12 << ""
                                          << "";
    QTest::addRow("qwen2 under yarn past the context") << "qwen2_text" << 0 << 40 << "yarn"
                                                       << "factor=4";
    QTest::addRow("gpt2 learned at its context") << "gpt2" << 0 << 32 << ""
                                                 << "";
    QTest::addRow("bloom alibi") << "bloom" << 1 << 20 << ""
                                 << "";
}

// -o (heads, T, D) is the kernel's output of the layer in a forward of those tokens; --probs (heads, T, T) is
// hfAttentionMap's exact map of a full capture (checked against NumPy in tst_hf_attention), each row summing to 1.
void TestHfCli::attentionMatchesCore()
{
    QFETCH(QString, folder);
    QFETCH(int, layer);
    QFETCH(int, length);
    QFETCH(QString, scaling);
    QFETCH(QString, set);
    const QString dir = hfData(folder), out = m_dir.filePath("out.npy"), probs = m_dir.filePath("p.npy");
    const test::CliResult r = test::runCli(QStringList{"attention", "--checkpoint", dir, "--corpus", corpusPath(),
                                                       "--layer", QString::number(layer), "--length",
                                                       QString::number(length), "-o", out, "--probs", probs} +
                                           methodArgs(scaling, set));
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const HfModel model(dir.toStdString());
    const HfConfig& c = model.config();
    const std::vector<int> ids = corpusTokens(dir, length);
    const SchemeSpec positions =
        scaling.isEmpty() ? hfPositionSpec(c) : hfPositionSpec(c, scaling.toStdString(), settingsOf(set));
    std::vector<float> expectedOut;
    model.observeAttention(ids, positions, [&](const HfLayerAttention& a) {
        if (a.layer == layer)
            expectedOut = a.forward.out;
        return a.layer < layer;
    });
    const NpyArray o = readNpy(out.toStdString()), p = readNpy(probs.toStdString());
    QCOMPARE(o.shape, (std::vector<int64_t>{c.heads, length, c.headDim}));
    QCOMPARE(p.shape, (std::vector<int64_t>{c.heads, length, length}));
    QCOMPARE(o.data.size(), expectedOut.size());
    for (size_t i = 0; i < expectedOut.size(); ++i)
        QVERIFY2(std::abs(o.data[i] - expectedOut[i]) <= 1e-6f * std::max(1.0f, std::abs(expectedOut[i])),
                 qPrintable(QString("out[%1] %2 vs %3").arg(i).arg(o.data[i]).arg(expectedOut[i])));
    const HfAttentionCapture capture = captureHfAttention(model, ids, positions, true);
    for (int h = 0; h < c.heads; ++h) {
        const HfAttentionMap map = hfAttentionMap(capture, layer, h, length);
        for (int m = 0; m < length; ++m) {
            double sum = 0;
            for (int n = 0; n < length; ++n) {
                const float got = p.data[(static_cast<size_t>(h) * length + m) * length + n];
                const float want = n > m ? 0.0f : map.values[static_cast<size_t>(m) * length + n];
                QVERIFY2(std::abs(got - want) <= 1e-6f,
                         qPrintable(QString("p(%1,%2,%3) %4 vs %5").arg(h).arg(m).arg(n).arg(got).arg(want)));
                sum += got;
            }
            QVERIFY2(std::abs(sum - 1.0) < 1e-5,
                     qPrintable(QString("row %1 of head %2 sums to %3").arg(m).arg(h).arg(sum)));
        }
    }
}

void TestHfCli::entropyMatchesProbabilities_data()
{
    QTest::addColumn<QString>("folder");
    QTest::addColumn<int>("layer");
    QTest::addColumn<QString>("scaling");
    QTest::addColumn<QString>("set");
    QTest::addRow("qwen2") << "qwen2_text" << 1 << ""
                           << "";
    QTest::addRow("qwen2 under dynamic-ntk") << "qwen2_text" << 0 << "dynamic-ntk"
                                             << "";
    QTest::addRow("gpt2 learned") << "gpt2" << 1 << ""
                                  << "";
    QTest::addRow("bloom alibi") << "bloom" << 0 << ""
                                 << "";
}

// Each (length n, head) row: the last row's and the rows' mean entropy -sum p ln p of the probabilities of a window
// of the first n tokens (the probabilities from the scores, the entropies from the kernel: two computations).
void TestHfCli::entropyMatchesProbabilities()
{
    QFETCH(QString, folder);
    QFETCH(int, layer);
    QFETCH(QString, scaling);
    QFETCH(QString, set);
    const QString dir = hfData(folder);
    const std::vector<int> lengths = {4, 9, 32};
    const test::CliResult r =
        test::runCli(QStringList{"entropy", "--checkpoint", dir, "--corpus", corpusPath(), "--layer",
                                 QString::number(layer), "--lengths", "4,9,32", "--json"} +
                     methodArgs(scaling, set));
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const nlohmann::json j = nlohmann::json::parse(r.out.toStdString());
    const HfModel model(dir.toStdString());
    const HfConfig& c = model.config();
    QCOMPARE(j["layer"].get<int>(), layer);
    QCOMPARE(j["lengths_in"].get<std::string>(), std::string("tokens"));
    QCOMPARE(j["rows"].size(), lengths.size() * c.heads);
    const SchemeSpec positions =
        scaling.isEmpty() ? hfPositionSpec(c) : hfPositionSpec(c, scaling.toStdString(), settingsOf(set));
    const std::vector<int> ids = corpusTokens(dir, 32);
    size_t row = 0;
    for (int n : lengths) {
        const std::vector<int> window(ids.begin(), ids.begin() + n);
        const HfLayerAttentionResult a = hfLayerAttention(model, window, positions, layer, true);
        for (int h = 0; h < c.heads; ++h, ++row) {
            double mean = 0, last = 0;
            for (int m = 0; m < n; ++m) {
                double entropy = 0;
                for (int k = 0; k <= m; ++k) {
                    const double p = a.probabilities[(static_cast<size_t>(h) * n + m) * n + k];
                    if (p > 0)
                        entropy -= p * std::log(p);
                }
                mean += entropy / n;
                last = entropy;
            }
            const nlohmann::json& got = j["rows"][row];
            QCOMPARE(got["length"].get<int>(), n);
            QCOMPARE(got["head"].get<int>(), h);
            QVERIFY2(std::abs(got["entropy_last"].get<double>() - last) < 1e-4,
                     qPrintable(QString("n %1 head %2: last %3 vs %4")
                                    .arg(n)
                                    .arg(h)
                                    .arg(got["entropy_last"].get<double>())
                                    .arg(last)));
            QVERIFY2(std::abs(got["entropy_mean"].get<double>() - mean) < 1e-4,
                     qPrintable(QString("n %1 head %2: mean %3 vs %4")
                                    .arg(n)
                                    .arg(h)
                                    .arg(got["entropy_mean"].get<double>())
                                    .arg(mean)));
        }
    }
}

// render attention --checkpoint DIR draws the Your model tab's page through the same headless writer as render model:
// the same PNG, byte for byte, for the same text, layer and head.
void TestHfCli::renderAttentionIsTheModelPage()
{
    const QString dir = hfData("qwen2_text"), a = m_dir.filePath("a.png"), b = m_dir.filePath("b.png");
    const QString text = "Hello world, the quick brown fox";
    const test::CliResult r1 = test::runCli(
        {"render", "attention", "--checkpoint", dir, "--text", text, "--layer", "0", "--head", "1", "-o", a});
    QVERIFY2(r1.exitCode == 0, r1.err.constData());
    const test::CliResult r2 = test::runCli({"render", "model", "--model", dir, "--page", "attention", "--text", text,
                                             "--layer", "0", "--head", "1", "-o", b});
    QVERIFY2(r2.exitCode == 0, r2.err.constData());
    QFile fa(a), fb(b);
    QVERIFY(fa.open(QIODevice::ReadOnly) && fb.open(QIODevice::ReadOnly));
    const QByteArray pa = fa.readAll();
    QVERIFY(pa.size() > 1000);
    QCOMPARE(pa, fb.readAll());
    // Under a method the picture differs (another map, the method named in the subtitle).
    const QString c = m_dir.filePath("c.png");
    const test::CliResult r3 = test::runCli({"render", "attention", "--checkpoint", dir, "--text", text, "--layer", "0",
                                             "--head", "1", "--scaling", "yarn", "--set", "factor=4", "-o", c});
    QVERIFY2(r3.exitCode == 0, r3.err.constData());
    QFile fc(c);
    QVERIFY(fc.open(QIODevice::ReadOnly));
    QVERIFY(fc.readAll() != pa);
}

// sweep --model: 2 methods x 2 lengths; cell 1's line torn as a killed writer leaves it, the same command resumes and
// runs cell 1 alone; every number equals eval --compare's on the same text; collect writes one row per method and
// length with those perplexities.
void TestHfCli::modelSweepResumesAndMatchesEval()
{
    const QString dir = hfData("qwen2_text"), out = m_dir.filePath("sweep");
    const QStringList sweep = {"sweep",     "--model", dir,        "--methods",  "none,yarn:factor=4",
                               "--lengths", "16,32",   "--corpus", corpusPath(), "--eval-tokens",
                               "0",         "-o",      out,        "--quiet"};
    test::CliResult r = test::runCli(sweep);
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QString results = out + "/results.jsonl";
    QFile f(results);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = f.readAll().split('\n');
    f.close();
    QCOMPARE(lines.size(), 3); // two lines and the empty piece after the last newline
    std::map<std::string, nlohmann::json> first;
    for (int i = 0; i < 2; ++i) {
        const nlohmann::json j = nlohmann::json::parse(lines[i].toStdString());
        first[j["key"].get<std::string>()] = j;
        QCOMPARE(j["model"].get<std::string>(), dir.toStdString());
        QCOMPARE(j["lengths"], nlohmann::json::parse("[16,32]"));
    }
    QVERIFY(first.count("method=none") && first.count("method=yarn factor=4"));
    // Kill cell 1 mid-append: keep cell 0's line and half of cell 1's.
    const nlohmann::json cell0 = nlohmann::json::parse(lines[0].toStdString());
    const QByteArray other = cell0["cell"] == 0 ? lines[1] : lines[0];
    const QByteArray keep = cell0["cell"] == 0 ? lines[0] : lines[1];
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(keep + "\n" + other.left(other.size() / 2));
    f.close();
    r = test::runCli(sweep.mid(0, sweep.size() - 1)); // the same command, with its progress on stderr
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY2(r.err.contains("1 done") && r.err.contains("1 to run") && r.err.contains("torn"), r.err.constData());
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QList<QByteArray> resumed = f.readAll().split('\n');
    f.close();
    QCOMPARE(resumed.size(), 3);
    for (int i = 0; i < 2; ++i) {
        const nlohmann::json j = nlohmann::json::parse(resumed[i].toStdString());
        const nlohmann::json& was = first[j["key"].get<std::string>()];
        QCOMPARE(j["loss"], was["loss"]); // a resumed cell gives the numbers of the uninterrupted run
        QCOMPARE(j["tokens"], was["tokens"]);
    }
    // eval --compare on the same folder, text and lengths: the same losses.
    r = test::runCli({"eval", dir, "--compare", "none,yarn:factor=4", "--lengths", "16,32", "--corpus", corpusPath(),
                      "--quiet", "-o", m_dir.filePath("compare.json")});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    std::ifstream in(m_dir.filePath("compare.json").toStdString());
    const nlohmann::json compare = nlohmann::json::parse(in);
    QCOMPARE(compare["methods"].size(), size_t(2));
    for (const nlohmann::json& m : compare["methods"]) {
        const std::string key = m["method"] == "none" ? "method=none" : "method=yarn factor=4";
        for (size_t i = 0; i < 2; ++i) {
            const double want = m["points"][i]["loss"].get<double>();
            const double got = first[key]["loss"][i].get<double>();
            QVERIFY2(std::abs(got - want) <= 1e-12 * std::abs(want),
                     qPrintable(QString("%1 length %2: %3 vs %4").arg(key.c_str()).arg(i).arg(got).arg(want)));
        }
    }
    // collect: one row per method and length, n = 1, the cell's perplexity.
    r = test::runCli({"collect", out});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const std::vector<std::string> rows = csvLines(r.out);
    QCOMPARE(rows.size(), size_t(5));
    QVERIFY(rows[0].rfind("scheme,variant,context,length,n,ppl_mean", 0) == 0);
    QVERIFY2(rows[1].rfind("rope,,32,16,1,", 0) == 0, rows[1].c_str());
    QVERIFY2(rows[3].rfind("rope+yarn,factor=4,32,16,1,", 0) == 0, rows[3].c_str());
    r = test::runCli({"collect", out, "-o", m_dir.filePath("summary.json")});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    std::ifstream sin(m_dir.filePath("summary.json").toStdString());
    const nlohmann::json summary = nlohmann::json::parse(sin);
    QCOMPARE(summary["rows"].size(), size_t(4));
    QCOMPARE(summary["rows"][2]["scheme"].get<std::string>(), std::string("rope+yarn"));
    QCOMPARE(summary["rows"][3]["length"].get<int>(), 32);
    QCOMPARE(summary["rows"][3]["perplexity"]["mean"].get<double>(),
             first["method=yarn factor=4"]["perplexity"][1].get<double>());
    r = test::runCli({"collect", out, "-o", m_dir.filePath("curves.png")});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY(QFileInfo(m_dir.filePath("curves.png")).size() > 1000);
}

// A model given by a relative path is stored absolutely in sweep.json (what every cell reads) and named so in the Slurm
// script, whose cell command names the sweep folder absolutely: a task that starts elsewhere finds both.
void TestHfCli::modelSweepEmitsTheModelAbsolutely()
{
    const QString absolute = QFileInfo(hfData("qwen2_text")).canonicalFilePath();
    const QString relative = QDir::current().relativeFilePath(absolute);
    QVERIFY(!relative.startsWith('/'));
    const QString out = m_dir.filePath("emitted");
    const test::CliResult r =
        test::runCli({"sweep", "--model", relative, "--methods", "none,pi,yarn", "--vary", "factor=2,4", "--lengths",
                      "16,32", "--corpus", corpusPath(), "-o", out, "--emit", "slurm"});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    std::ifstream grid((out + "/sweep.json").toStdString());
    const nlohmann::json j = nlohmann::json::parse(grid);
    QCOMPARE(j["hf_model"].get<std::string>(), absolute.toStdString());
    QFile script(out + "/sweep.sbatch");
    QVERIFY(script.open(QIODevice::ReadOnly));
    const QByteArray text = script.readAll();
    QVERIFY2(text.contains("# Model: " + absolute.toUtf8() + "\n"), text.constData());
    QVERIFY2(text.contains("#SBATCH --array=0-4\n"), text.constData()); // none once, pi and yarn at two factors
    QVERIFY2(text.contains(" sweep --cell \"$SLURM_ARRAY_TASK_ID\"") &&
                 text.contains("'" + QFileInfo(out).absoluteFilePath().toUtf8() + "'"),
             text.constData());
    // The parallel commands file: one command per cell and nothing else (parallel would run a comment as a job); the
    // message names the model.
    const test::CliResult p =
        test::runCli({"sweep", "--model", relative, "--methods", "none,pi,yarn", "--vary", "factor=2,4", "--lengths",
                      "16,32", "--corpus", corpusPath(), "-o", out, "--emit", "parallel"});
    QVERIFY2(p.exitCode == 0, p.err.constData());
    QVERIFY2(p.err.contains("on the model folder " + absolute.toUtf8()), p.err.constData());
    QFile commands(out + "/sweep.commands");
    QVERIFY(commands.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = commands.readAll().trimmed().split('\n');
    QCOMPARE(lines.size(), 5);
    for (const QByteArray& line : lines)
        QVERIFY2(line.contains(" sweep --cell ") && !line.startsWith('#'), line.constData());
}

void TestHfCli::modelSweepScalingLayers_data()
{
    QTest::addColumn<QString>("layers");
    QTest::addColumn<bool>("task");
    QTest::addRow("sliding, perplexity") << "sliding" << false;
    QTest::addRow("all, perplexity") << "all" << false;
    QTest::addRow("sliding, passkey") << "sliding" << true;
}

// sweep --model --scaling-layers: sweep.json and every result line name the layers, and each cell's numbers are eval's
// under the same --scaling-layers (perplexity: loss by loss; a task: its accuracy by depth and length); the same cells
// with the method on the full layers only (the default) give other losses, so the option reached the cells.
void TestHfCli::modelSweepScalingLayers()
{
    QFETCH(QString, layers);
    QFETCH(bool, task);
    QTemporaryDir tmp;
    const QString dir = gemma3WithTokenizer(tmp.filePath("gemma3"));
    const QString lengths = task ? "260,300" : "32,128"; // 128: past the context, a yarn factor 2
    QStringList what = {"--lengths", lengths, "--corpus", corpusPath(), "--quiet"};
    if (task)
        what << "--task"
             << "passkey"
             << "--depths"
             << "0,1";
    auto sweep = [&](const QString& out, const QStringList& extra) {
        QStringList args = QStringList{"sweep", "--model", dir, "--methods", "yarn", "-o", out} + what + extra;
        if (!task)
            args << "--eval-tokens"
                 << "0";
        return test::runCli(args);
    };
    test::CliResult r = sweep(tmp.filePath("scaled"), {"--scaling-layers", layers});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QCOMPARE(readJsonFile(tmp.filePath("scaled/sweep.json"))["scaling_layers"].get<std::string>(),
             layers.toStdString());
    std::ifstream lines(tmp.filePath("scaled/results.jsonl").toStdString());
    std::string line;
    QVERIFY(std::getline(lines, line));
    const nlohmann::json cell = nlohmann::json::parse(line);
    QCOMPARE(cell["scaling_layers"].get<std::string>(), layers.toStdString());
    r = test::runCli(
        QStringList{"eval", dir, "--compare", "yarn", "--scaling-layers", layers, "-o", tmp.filePath("eval.json")} +
        what);
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const nlohmann::json eval = readJsonFile(tmp.filePath("eval.json"));
    if (task) {
        const nlohmann::json& cells = eval["methods"][0]["cells"];
        QCOMPARE(cells.size(), size_t(4));
        for (const nlohmann::json& c : cells) {
            const size_t li = c["length"] == 260 ? 0 : 1, di = c["depth"] == 0 ? 0 : 1;
            QCOMPARE(cell["depth_accuracy"][li][di].get<double>(), c["accuracy"].get<double>());
        }
        return;
    }
    for (size_t i = 0; i < 2; ++i)
        QCOMPARE(cell["loss"][i].get<double>(), eval["methods"][0]["points"][i]["loss"].get<double>());
    r = sweep(tmp.filePath("full"), {});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY(!readJsonFile(tmp.filePath("full/sweep.json")).contains("scaling_layers")); // older grids' JSON and hash
    std::ifstream fullLines(tmp.filePath("full/results.jsonl").toStdString());
    QVERIFY(std::getline(fullLines, line));
    const nlohmann::json full = nlohmann::json::parse(line);
    QVERIFY(!full.contains("scaling_layers"));
    QVERIFY2(full["loss"][1] != cell["loss"][1], line.c_str());
    // collect names the layers in the row's variant, so the two grids collected together stay two curves.
    r = test::runCli({"collect", tmp.filePath("full"), tmp.filePath("scaled")});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY2(r.out.contains("scaling-layers=" + layers.toUtf8()), r.out.constData());
}

void TestHfCli::badInputExitsTwo_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("expected");
    const QString gpt2 = hfData("gpt2"), qwen2 = hfData("qwen2_text"), bloom = hfData("bloom");
    const QString out = QDir::tempPath() + "/plab-hf-cli-never";
    QTest::addRow("sweep pi on learned positions")
        << QStringList{"sweep", "--model", gpt2, "--methods", "none,pi", "--lengths", "8", "-o", out}
        << "cell method=pi: scaling pi is not allowed for gpt2 (positions: learned); rotary methods apply to rope "
           "models only";
    QTest::addRow("sweep yarn on alibi") << QStringList{"sweep",     "--model", bloom, "--methods", "yarn",
                                                        "--lengths", "8",       "-o",  out}
                                         << "rotary methods apply to rope models only";
    QTest::addRow("sweep past learned positions")
        << QStringList{"sweep", "--model", gpt2, "--methods", "none", "--lengths", "16,64", "-o", out}
        << "--lengths: 64 tokens is more than the 32 learned positions of gpt2";
    QTest::addRow("sweep --model with --schemes")
        << QStringList{"sweep", "--model", qwen2, "--methods", "none", "--schemes", "rope", "-o", out}
        << "--schemes is not used by";
    QTest::addRow("sweep --model with --steps")
        << QStringList{"sweep", "--model", qwen2, "--methods", "none", "--steps", "10", "-o", out} << "--steps";
    QTest::addRow("sweep --model without --methods")
        << QStringList{"sweep", "--model", qwen2, "-o", out} << "--methods M,M,... is required";
    QTest::addRow("sweep unknown method")
        << QStringList{"sweep", "--model", qwen2, "--methods", "none,su", "-o", out} << "su";
    QTest::addRow("sweep --vary a parameter no method has")
        << QStringList{"sweep", "--model", qwen2, "--methods", "none,pi", "--vary", "window=4,8", "-o", out}
        << "--vary: no method of the list (none,pi) has a parameter window";
    QTest::addRow("sweep --model not a folder")
        << QStringList{"sweep", "--model", "/nonexistent/model", "--methods", "none", "-o", out} << "not a folder";
    QTest::addRow("sweep length past the text")
        << QStringList{"sweep",  "--model",  qwen2,        "--methods", "none", "--lengths",
                       "100000", "--corpus", corpusPath(), "-o",        out}
        << "exceed the text scored";
    QTest::addRow("sweep --scaling-layers without --model")
        << QStringList{"sweep", "--schemes", "rope", "--seeds", "1", "--scaling-layers", "sliding", "-o", out}
        << "--scaling-layers is not used by `positionlab-cli sweep` and would be ignored";
    QTest::addRow("sweep --scaling-layers reaching no layer")
        << QStringList{"sweep",   "--model",   qwen2, "--methods", "yarn",       "--scaling-layers",
                       "sliding", "--lengths", "16",  "--corpus",  corpusPath(), "-o",
                       out}
        << "scaling layers 'sliding' reach no layer with rotary positions";
    QTest::addRow("sweep --scaling-layers with only none")
        << QStringList{"sweep", "--model",  qwen2,        "--methods", "none", "--scaling-layers", "all", "--lengths",
                       "16",    "--corpus", corpusPath(), "-o",        out}
        << "the list holds no method other than the config's own";
    QTest::addRow("sweep --scaling-layers unknown")
        << QStringList{"sweep", "--model",  qwen2,        "--methods", "yarn", "--scaling-layers", "local", "--lengths",
                       "16",    "--corpus", corpusPath(), "-o",        out}
        << "scaling layers 'local' is not known; allowed: full";
}

void TestHfCli::badInputExitsTwo()
{
    QFETCH(QStringList, args);
    QFETCH(QString, expected);
    const test::CliResult r = test::runCli(args);
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(QString::fromUtf8(r.err).contains(expected), r.err.constData());
    QVERIFY(!QFileInfo::exists(QDir::tempPath() + "/plab-hf-cli-never")); // refused before the folder is made
}

PLAB_QTEST_GUILESS_MAIN(TestHfCli)
#include "tst_hf_cli.moc"
