// positionlab-cli train / eval / entropy --checkpoint as a user runs them: outputs, exit codes, Ctrl-C, bad files.
#include "model/checkpoint.h"
#include "cli_runner.h"
#include "compare.h"
#include "model/corpus.h"
#include "model/model.h"
#include "base/npy.h"
#include "schemes/rotary_scaling.h"
#include "base/safetensors.h"
#include "schemes/position_bias.h"
#include "views/bias_views.h"
#include "test_main.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <csignal>

namespace {

using plab::test::CliResult;
using plab::test::runCli;

// A small UTF-8 corpus with structure, written once per test run.
QString corpusPath(const QTemporaryDir& dir)
{
    return plab::test::writeStructuredCorpus(dir.path(), 30000);
}

// Tiny model options: fast under AddressSanitizer too.
QStringList tinyModel()
{
    return {"--layers", "1", "--d-model", "16", "--heads", "2", "--d-ff", "32", "--context", "16", "--batch", "4"};
}

} // namespace

class TestTrainCli : public QObject {
    Q_OBJECT

private slots:
    void trainEvalRoundTrip();
    void trainJsonProgress();
    void learnedUnsupportedInEval();
    void entropyFromCheckpoint();
    void checkpointEntropyPicture_data();
    void checkpointEntropyPicture();
    void checkpointLayer_data();
    void checkpointLayer();
    void interruptKeepsCheckpoint();
    void badUsage_data();
    void badUsage();
    void fewerThreadsThanSlices_data();
    void fewerThreadsThanSlices();
    void evalBytesZeroSkips_data();
    void evalBytesZeroSkips();
    void progressAndQuiet_data();
    void progressAndQuiet();
    void attentionPictureCountsFromZero();
    void initAtLongerContextKeepsOriginalContext();
    void compareOutputs_data();
    void compareOutputs();
    void compareEqualsEval_data();
    void compareEqualsEval();
    void sameBitsWhereverMallocPutsBuffers_data();
    void sameBitsWhereverMallocPutsBuffers();
    void checkpointUnderMethod_data();
    void checkpointUnderMethod();
    void attentionPictureNamesMethod_data();
    void attentionPictureNamesMethod();
    void saysWhichMethod_data();
    void saysWhichMethod();
    void initWithoutScalingKeepsOriginalContext();
    void taskTrainAndEval_data();
    void taskTrainAndEval();
    void dropPositions();

private:
    QTemporaryDir m_dir;
    QString twoLayerModel(); // trained once per run by the CLI: 2 layers, 3 steps
    QString ropeModel();     // trained once per run by the CLI: rope, context 16, 20 steps
    QString yarnModel();     // trained once per run by the CLI: rope under yarn (factor 2), context 16, 5 steps
};

void TestTrainCli::trainEvalRoundTrip()
{
    QTemporaryDir dir;
    const QString model = dir.path() + "/m.safetensors";
    CliResult r =
        runCli(QStringList{"train", "--scheme", "alibi", "--corpus", corpusPath(dir), "--steps", "12", "-o", model} +
               tinyModel());
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY(r.err.contains("step 12/12"));
    QVERIFY(r.err.contains("tok/s"));
    QVERIFY(r.err.contains("ETA"));
    QVERIFY(r.err.contains("validation loss"));
    QVERIFY(QFile::exists(model));
    const plab::LoadedCheckpoint loaded = plab::loadCheckpoint(model.toStdString());
    QCOMPARE(loaded.info.step, 12);
    QCOMPARE(loaded.model->config().dModel, 16);
    QCOMPARE(loaded.model->config().context, 16);

    r = runCli({"eval", model, "--corpus", corpusPath(dir), "--lengths", "16,32,64"});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QList<QByteArray> lines = r.out.trimmed().split('\n');
    QCOMPARE(lines.size(), 4);
    QCOMPARE(lines[0], QByteArray("length,loss,perplexity,bits_per_byte"));
    for (int i = 1; i < 4; ++i) {
        const QList<QByteArray> cells = lines[i].split(',');
        QCOMPARE(cells.size(), 4);
        const double loss = cells[1].toDouble(), ppl = cells[2].toDouble(), bpb = cells[3].toDouble();
        QVERIFY(loss > 0 && loss < 6);
        QVERIFY(std::abs(ppl - std::exp(loss)) < 1e-4 * ppl);
        QVERIFY(std::abs(bpb - loss / std::log(2.0)) < 1e-6);
    }
    // JSON output with metadata; sliding mode with a stride.
    const QString json = dir.path() + "/e.json";
    r = runCli({"eval", model, "--corpus", corpusPath(dir), "--lengths", "16", "--mode", "sliding", "--stride", "4",
                "-o", json});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QFile f(json);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonObject doc = QJsonDocument::fromJson(f.readAll()).object();
    QVERIFY2(doc.contains("rows"), qPrintable(QJsonDocument(doc).toJson()));
}

void TestTrainCli::trainJsonProgress()
{
    QTemporaryDir dir;
    const QString model = dir.path() + "/m.safetensors";
    const CliResult r = runCli(QStringList{"train", "--scheme", "kerple-log", "--corpus", corpusPath(dir), "--steps",
                                           "5", "--json", "--log-every", "1", "--eval-bytes", "0", "-o", model} +
                               tinyModel());
    QVERIFY2(r.exitCode == 0, r.err.constData());
    int steps = 0;
    bool done = false;
    for (const QByteArray& line : r.err.trimmed().split('\n')) {
        QJsonParseError error;
        const QJsonObject o = QJsonDocument::fromJson(line, &error).object();
        QVERIFY2(error.error == QJsonParseError::NoError, line.constData()); // every line is JSON
        if (o["event"] == "step") {
            ++steps;
            QVERIFY(o["loss"].toDouble() > 0);
            QVERIFY(o.contains("tokens_per_second") && o.contains("eta_s") && o.contains("lr"));
        }
        done = done || o["event"] == "done";
    }
    QCOMPARE(steps, 5);
    QVERIFY(done);
}

void TestTrainCli::learnedUnsupportedInEval()
{
    QTemporaryDir dir;
    const QString model = dir.path() + "/m.safetensors";
    CliResult r =
        runCli(QStringList{"train", "--scheme", "learned", "--corpus", corpusPath(dir), "--steps", "2", "-o", model} +
               tinyModel());
    QVERIFY2(r.exitCode == 0, r.err.constData());
    r = runCli({"eval", model, "--corpus", corpusPath(dir), "--lengths", "16,32"});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY(r.out.contains("\n32,nan,nan,nan"));
    QVERIFY(r.err.contains("unsupported"));
}

void TestTrainCli::entropyFromCheckpoint()
{
    QTemporaryDir dir;
    const QString model = dir.path() + "/m.safetensors";
    CliResult r =
        runCli(QStringList{"train", "--scheme", "rope", "--corpus", corpusPath(dir), "--steps", "2", "-o", model} +
               tinyModel());
    QVERIFY2(r.exitCode == 0, r.err.constData());
    r = runCli({"entropy", "rope", "--checkpoint", model, "--corpus", corpusPath(dir), "--lengths", "8,32"});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QList<QByteArray> lines = r.out.trimmed().split('\n');
    QCOMPARE(lines[0], QByteArray("length,head,entropy_last,entropy_mean"));
    QCOMPARE(lines.size(), 1 + 2 * 2); // 2 lengths x 2 heads
    for (int i = 1; i < lines.size(); ++i) {
        const QList<QByteArray> c = lines[i].split(',');
        const double n = c[0].toDouble(), last = c[2].toDouble();
        QVERIFY(last >= 0 && last <= std::log(n) + 1e-6); // entropy of a distribution over n keys
    }
    // --scaling is read, not ignored: the same model under position interpolation gives other entropies.
    const CliResult scaled = runCli({"entropy", "rope", "--checkpoint", model, "--corpus", corpusPath(dir), "--lengths",
                                     "8,32", "--scaling", "pi"});
    QVERIFY2(scaled.exitCode == 0, scaled.err.constData());
    QCOMPARE(scaled.out.trimmed().split('\n').size(), lines.size());
    QVERIFY2(scaled.out != r.out, "entropy --checkpoint ignored --scaling");
    r = runCli({"entropy", "alibi", "--checkpoint", model, "--corpus", corpusPath(dir)});
    QCOMPARE(r.exitCode, 2);
    QVERIFY(r.err.contains("trained with rope"));
    r = runCli({"entropy", "rope", "--checkpoint", model, "--heads", "4"});
    QCOMPARE(r.exitCode, 2);

    // attention --checkpoint: the model's own q, k, v of a layer; rows of P sum to 1, causal.
    const QString out = dir.path() + "/o.npy", probs = dir.path() + "/p.npy";
    r = runCli({"attention", "rope", "--checkpoint", model, "--corpus", corpusPath(dir), "--length", "20", "--probs",
                probs, "-o", out});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const plab::NpyArray p = plab::readNpy(probs.toStdString());
    QCOMPARE(p.shape, (std::vector<int64_t>{2, 20, 20}));
    for (int h = 0; h < 2; ++h)
        for (int m = 0; m < 20; ++m) {
            double sum = 0;
            for (int n = 0; n < 20; ++n) {
                const float v = p.data[(h * 20 + m) * 20 + n];
                QVERIFY(n <= m || v == 0.0f);
                sum += v;
            }
            QVERIFY(std::abs(sum - 1.0) < 1e-5);
        }
    QCOMPARE(plab::readNpy(out.toStdString()).shape, (std::vector<int64_t>{2, 20, 8}));
    r = runCli({"attention", "rope", "--checkpoint", model, "--q", out, "-o", out});
    QCOMPARE(r.exitCode, 2);
}

QString TestTrainCli::twoLayerModel()
{
    const QString model = m_dir.path() + "/two.safetensors";
    if (!QFile::exists(model)) {
        const CliResult r = runCli({"train",     "--scheme", "alibi",    "--corpus", corpusPath(m_dir),
                                    "--steps",   "3",        "--layers", "2",        "--d-model",
                                    "16",        "--heads",  "2",        "--d-ff",   "32",
                                    "--context", "16",       "--batch",  "4",        "--eval-bytes",
                                    "0",         "-o",       model});
        if (r.exitCode != 0)
            qWarning("training the two-layer model failed: %s", r.err.constData());
    }
    return model;
}

QString TestTrainCli::ropeModel()
{
    const QString model = m_dir.path() + "/rope.safetensors";
    if (!QFile::exists(model)) {
        const CliResult r = runCli(QStringList{"train", "--scheme", "rope", "--corpus", corpusPath(m_dir), "--steps",
                                               "20", "--eval-bytes", "0", "-o", model} +
                                   tinyModel());
        if (r.exitCode != 0)
            qWarning("training the rope model failed: %s", r.err.constData());
    }
    return model;
}

QString TestTrainCli::yarnModel()
{
    const QString model = m_dir.path() + "/yarn.safetensors";
    if (!QFile::exists(model)) {
        const CliResult r =
            runCli(QStringList{"train", "--scheme", "rope", "--scaling", "yarn", "--set", "factor=2", "--corpus",
                               corpusPath(m_dir), "--steps", "5", "--eval-bytes", "0", "-o", model} +
                   tinyModel());
        if (r.exitCode != 0)
            qWarning("training the yarn model failed: %s", r.err.constData());
    }
    return model;
}

// Every output of eval --compare: the data files hold one series per method, the pictures are real pictures.
void TestTrainCli::compareOutputs_data()
{
    QTest::addColumn<QString>("extension");
    QTest::newRow("csv") << "csv";
    QTest::newRow("json") << "json";
    QTest::newRow("png") << "png";
    QTest::newRow("svg") << "svg";
    QTest::newRow("pdf") << "pdf";
}

void TestTrainCli::compareOutputs()
{
    QFETCH(QString, extension);
    const QString out = m_dir.path() + "/compare." + extension;
    const CliResult r =
        runCli({"eval", ropeModel(), "--corpus", corpusPath(m_dir), "--compare", "none,pi,yarn:beta-fast=16,rerope",
                "--lengths", "16,32,64", "--max-bytes", "1500", "--quiet", "-o", out});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QFile f(out);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray bytes = f.readAll();
    if (extension == "csv") {
        const QList<QByteArray> lines = bytes.trimmed().split('\n');
        QCOMPARE(lines.size(), 1 + 4 * 3);
        QCOMPARE(lines[0], QByteArray("method,length,loss,perplexity,bits_per_byte"));
        QVERIFY(lines[1].startsWith("none,16,"));
        QVERIFY(lines[4].startsWith("pi,16,"));
        QVERIFY(lines[12].startsWith("rerope,64,"));
    } else if (extension == "json") {
        const QJsonObject doc = QJsonDocument::fromJson(bytes).object();
        const QJsonArray methods = doc["methods"].toArray();
        QCOMPARE(methods.size(), 4);
        // Defaults: factor = longest length / L = 64 / 16; window = L / 2; a given setting wins.
        const QJsonObject yarn = methods[2].toObject();
        QCOMPARE(yarn["method"].toString(), QString("yarn"));
        QCOMPARE(yarn["params"].toObject()["factor"].toDouble(), 4.0);
        QCOMPARE(yarn["params"].toObject()["beta-fast"].toDouble(), 16.0);
        QCOMPARE(yarn["label"].toString(), QString("rope+yarn (factor 4, beta-fast 16)"));
        QCOMPARE(methods[3].toObject()["params"].toObject()["window"].toDouble(), 8.0);
        QCOMPARE(methods[0].toObject()["label"].toString(), QString("rope"));
        QCOMPARE(yarn["points"].toArray().size(), 3);
        QCOMPARE(yarn["points"].toArray()[2].toObject()["length"].toInt(), 64);
        QCOMPARE(doc["config"].toObject()["scheme"].toString(), QString("rope"));
    } else if (extension == "png") {
        // The PNG signature, then IHDR's width and height (big-endian): the picture's default size.
        QVERIFY(bytes.startsWith("\x89PNG\r\n\x1a\n"));
        auto be32 = [&](int at) {
            return (uchar(bytes[at]) << 24) | (uchar(bytes[at + 1]) << 16) | (uchar(bytes[at + 2]) << 8) |
                   uchar(bytes[at + 3]);
        };
        QCOMPARE(be32(16), 1100);
        QCOMPARE(be32(20), 700);
    } else if (extension == "svg") {
        QVERIFY(bytes.contains("<svg"));
        QVERIFY(bytes.contains("rope+yarn (factor 4, beta-fast 16)"));
    } else {
        QVERIFY(bytes.startsWith("%PDF"));
    }
}

// A method's rows of eval --compare are those of plain eval under that method (--scaling M --set ...), to the last
// digit; `none` is plain eval of a model trained without a method.
void TestTrainCli::compareEqualsEval_data()
{
    QTest::addColumn<QString>("method");    // as --compare reads it
    QTest::addColumn<QStringList>("equal"); // the plain eval options that mean the same
    QTest::newRow("none") << "none" << QStringList{};
    QTest::newRow("pi default factor") << "pi" << QStringList{"--scaling", "pi", "--set", "factor=4"};
    QTest::newRow("ntk non-integer factor")
        << "ntk:factor=2.5" << QStringList{"--scaling", "ntk", "--set", "factor=2.5"};
    QTest::newRow("dynamic-ntk keeps factor 1") << "dynamic-ntk" << QStringList{"--scaling", "dynamic-ntk"};
    QTest::newRow("yarn two settings") << "yarn:factor=3:beta-slow=2"
                                       << QStringList{"--scaling", "yarn", "--set", "factor=3", "--set", "beta-slow=2"};
    QTest::newRow("llama3 default") << "llama3" << QStringList{"--scaling", "llama3", "--set", "factor=4"};
    QTest::newRow("rerope window") << "rerope:window=5" << QStringList{"--scaling", "rerope", "--set", "window=5"};
    QTest::newRow("leaky-rerope default window")
        << "leaky-rerope" << QStringList{"--scaling", "leaky-rerope", "--set", "window=8"};
    QTest::newRow("self-extend window and group")
        << "self-extend:window=5:group=3"
        << QStringList{"--scaling", "self-extend", "--set", "window=5", "--set", "group=3"};
}

void TestTrainCli::compareEqualsEval()
{
    QFETCH(QString, method);
    QFETCH(QStringList, equal);
    const QStringList common{"eval",     ropeModel(),   "--corpus", corpusPath(m_dir), "--lengths",
                             "16,32,64", "--max-bytes", "1500",     "--quiet"};
    // Another method first: the model's scaling is replaced per method, not stacked.
    const QString first = method.startsWith("leaky") ? "pi:factor=7" : "leaky-rerope:window=3:leak=2";
    const CliResult compared = runCli(common + QStringList{"--compare", first + "," + method});
    QVERIFY2(compared.exitCode == 0, compared.err.constData());
    const CliResult plain = runCli(common + equal);
    QVERIFY2(plain.exitCode == 0, plain.err.constData());
    const QList<QByteArray> plainLines = plain.out.trimmed().split('\n');
    QByteArray name = method.split(':').first().toUtf8();
    QList<QByteArray> rows;
    for (const QByteArray& line : compared.out.trimmed().split('\n'))
        if (line.startsWith(name + ","))
            rows.push_back(line.mid(name.size() + 1));
    QCOMPARE(plainLines.size(), 4);
    QCOMPARE(rows, plainLines.mid(1));
}

// Entropies of layer L straight from core (modelQkProvider + entropyCurve), to check the CLI's --layer against.
static std::vector<double> coreLayerEntropies(const QString& model, const QString& corpus, int layer,
                                              const std::vector<int>& lengths)
{
    plab::LoadedCheckpoint loaded = plab::loadCheckpoint(model.toStdString());
    const plab::Corpus c = plab::loadCorpusFile(corpus.toStdString());
    std::vector<double> values;
    for (const plab::EntropyPoint& p : plab::entropyCurve(loaded.model->schemeSpec(), lengths,
                                                          plab::modelQkProvider(*loaded.model, c.validation, layer)))
        values.insert(values.end(), {p.entropyLast, p.entropyMean});
    return values;
}

// `entropy --checkpoint M -o x.svg` draws the model's q and k (the picture path used to drop --checkpoint and draw
// q·k = 0), of the layer asked for.
void TestTrainCli::checkpointEntropyPicture_data()
{
    QTest::addColumn<QStringList>("layer"); // the --layer option as given (empty: the default, the last layer)
    QTest::addColumn<bool>("sameAsLast");   // the picture equals that of --layer 1
    QTest::newRow("default layer") << QStringList{} << true;
    QTest::newRow("layer 0") << QStringList{"--layer", "0"} << false;
}

void TestTrainCli::checkpointEntropyPicture()
{
    QFETCH(QStringList, layer);
    QFETCH(bool, sameAsLast);
    const QString model = twoLayerModel();
    const QStringList args{"entropy",  "alibi",           "--checkpoint", model,
                           "--corpus", corpusPath(m_dir), "--lengths",    "8,32"};
    const QString last = m_dir.path() + "/entropy-last.svg", picture = m_dir.path() + "/entropy.svg";
    CliResult r = runCli(args + QStringList{"--layer", "1", "-o", last});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    r = runCli(args + layer + QStringList{"-o", picture});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QFile file(picture), lastFile(last);
    QVERIFY(file.open(QIODevice::ReadOnly) && lastFile.open(QIODevice::ReadOnly));
    const QByteArray svg = file.readAll();
    QVERIFY2(svg.contains("q·k from the model"), "the picture does not draw the model's q and k");
    QCOMPARE(svg == lastFile.readAll(), sameAsLast);
}

void TestTrainCli::checkpointLayer_data()
{
    QTest::addColumn<QString>("verb");      // entropy or attention
    QTest::addColumn<QStringList>("layer"); // the --layer option as given (empty: the default)
    QTest::addColumn<int>("expectLayer");   // -1: refused
    QTest::addColumn<QString>("message");
    QTest::newRow("entropy default is the last layer") << "entropy" << QStringList{} << 1 << "";
    QTest::newRow("entropy layer 0") << "entropy" << QStringList{"--layer", "0"} << 0 << "";
    QTest::newRow("entropy layer 1") << "entropy" << QStringList{"--layer", "1"} << 1 << "";
    QTest::newRow("entropy layer 2")
        << "entropy" << QStringList{"--layer", "2"} << -1
        << "layer = 2 is out of range; allowed: integers in [0, 1] (the model has 2 layers)";
    QTest::newRow("entropy layer -1") << "entropy" << QStringList{"--layer", "-1"} << -1
                                      << "layer = -1 is out of range";
    QTest::newRow("attention default is the last layer") << "attention" << QStringList{} << 1 << "";
    QTest::newRow("attention layer 0") << "attention" << QStringList{"--layer", "0"} << 0 << "";
    QTest::newRow("attention layer 2")
        << "attention" << QStringList{"--layer", "2"} << -1
        << "layer = 2 is out of range; allowed: integers in [0, 1] (the model has 2 layers)";
}

// --layer of entropy/attention --checkpoint: one core rule (modelLayer), the last layer by default, and the numbers
// really come from the layer asked for (different layers give different entropies).
void TestTrainCli::checkpointLayer()
{
    QFETCH(QString, verb);
    QFETCH(QStringList, layer);
    QFETCH(int, expectLayer);
    QFETCH(QString, message);
    const QString model = twoLayerModel();
    QVERIFY(QFile::exists(model));
    const QString corpus = corpusPath(m_dir);
    const QString out = m_dir.path() + "/layer_out.npy", probs = m_dir.path() + "/layer_probs.npy";
    QFile::remove(out);
    const QStringList args =
        verb == "entropy"
            ? QStringList{"entropy", "alibi", "--checkpoint", model, "--corpus", corpus, "--lengths", "8,32"}
            : QStringList{"attention", "alibi", "--checkpoint", model, "--corpus", corpus,
                          "--length",  "24",    "--probs",      probs, "-o",       out};
    const CliResult r = runCli(args + layer);
    if (expectLayer < 0) {
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.trimmed().count('\n') == 0 && r.err.contains(message.toUtf8()), r.err.constData());
        QVERIFY(!QFile::exists(out));
        return;
    }
    QVERIFY2(r.exitCode == 0, r.err.constData());
    if (verb == "entropy") {
        std::vector<double> got;
        const QList<QByteArray> lines = r.out.trimmed().split('\n');
        QCOMPARE(lines.size(), 1 + 2 * 2); // 2 lengths x 2 heads
        for (int i = 1; i < lines.size(); ++i) {
            const QList<QByteArray> cells = lines[i].split(',');
            got.insert(got.end(), {cells[2].toDouble(), cells[3].toDouble()});
        }
        const std::vector<double> want = coreLayerEntropies(model, corpus, expectLayer, {8, 32});
        const std::vector<double> other = coreLayerEntropies(model, corpus, 1 - expectLayer, {8, 32});
        QCOMPARE(got.size(), want.size());
        plab::test::ErrorMax differs;
        for (size_t i = 0; i < got.size(); ++i) {
            QVERIFY2(std::abs(got[i] - want[i]) < 1e-6,
                     qPrintable(QString("value %1: %2 vs %3").arg(i).arg(got[i]).arg(want[i])));
            differs.add(want[i], other[i]);
        }
        QVERIFY2(differs.value() > 1e-4, qPrintable(differs.message("layers 0 and 1 (the layer read must matter)")));
    } else {
        // The probabilities of the layer asked for: the CLI's file equals core's attention on that layer's q, k, v.
        plab::LoadedCheckpoint loaded = plab::loadCheckpoint(model.toStdString());
        plab::Model& m = *loaded.model;
        const plab::Corpus c = plab::loadCorpusFile(corpus.toStdString());
        const int N = 24, H = m.config().heads, D = m.config().headDim();
        std::vector<uint8_t> tokens(c.validation.begin(), c.validation.begin() + N);
        m.forward(tokens.data(), nullptr, 1, N);
        const plab::PositionBias bias(m.schemeSpec(), N);
        plab::AttentionOptions options;
        options.wantProbabilities = true;
        auto probsOf = [&](int l) {
            return plab::attentionForward(bias, {1, H, N, D}, m.layerQueries(l).data(), m.layerKeys(l).data(),
                                          m.layerValues(l).data(), options)
                .probabilities;
        };
        const std::vector<float> want = probsOf(expectLayer), other = probsOf(1 - expectLayer);
        const plab::NpyArray got = plab::readNpy(probs.toStdString());
        QCOMPARE(got.data.size(), want.size());
        plab::test::ErrorMax differs;
        for (size_t i = 0; i < want.size(); ++i) {
            QVERIFY(std::abs(got.data[i] - want[i]) < 1e-6);
            differs.add(want[i], other[i]);
        }
        QVERIFY2(differs.value() > 1e-4, qPrintable(differs.message("layers 0 and 1 (the probabilities must differ)")));
    }
}

void TestTrainCli::interruptKeepsCheckpoint()
{
    QTemporaryDir dir;
    const QString model = dir.path() + "/m.safetensors";
    QProcess p;
    p.start(QStringLiteral(POSITIONLAB_CLI), QStringList{"train", "--scheme", "alibi", "--corpus", corpusPath(dir),
                                                         "--steps", "100000000", "--log-every", "1", "-o", model} +
                                                 tinyModel());
    QVERIFY(p.waitForStarted());
    // Wait for the first progress line, then Ctrl-C.
    QByteArray err;
    for (int i = 0; i < 600 && !err.contains("step "); ++i) {
        p.waitForReadyRead(100);
        err += p.readAllStandardError();
    }
    QVERIFY2(err.contains("step "), err.constData());
    ::kill(static_cast<pid_t>(p.processId()), SIGINT);
    QVERIFY(p.waitForFinished(60000));
    err += p.readAllStandardError();
    QCOMPARE(p.exitStatus(), QProcess::NormalExit);
    QCOMPARE(p.exitCode(), 130);
    QVERIFY2(err.contains("interrupted at step"), err.constData());
    const plab::LoadedCheckpoint loaded = plab::loadCheckpoint(model.toStdString());
    QVERIFY(loaded.info.step >= 1);
    // Nothing but the checkpoint (and the corpus) in the directory: no temporary left behind.
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size(), 2);
}

void TestTrainCli::badUsage_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QString>("message");
    QTest::newRow("no scheme") << QStringList{"train", "-o", "@DIR@/x.safetensors"} << 2 << "a scheme is required";
    QTest::newRow("no output") << QStringList{"train", "--scheme", "alibi"} << 2 << "-o MODEL.safetensors is required";
    QTest::newRow("unknown scheme") << QStringList{"train", "--scheme", "nope", "-o", "@DIR@/m.safetensors"} << 2
                                    << "nope";
    QTest::newRow("unknown preset") << QStringList{"train", "--scheme",           "alibi", "--preset", "huge",
                                                   "-o",    "@DIR@/m.safetensors"}
                                    << 2 << "preset 'huge'";
    QTest::newRow("heads not dividing") << QStringList{"train",   "--scheme", "alibi", "--d-model",          "30",
                                                       "--heads", "4",        "-o",    "@DIR@/m.safetensors"}
                                        << 2 << "divisible";
    QTest::newRow("missing corpus") << QStringList{"train", "--scheme",           "alibi", "--corpus", "@DIR@/none.txt",
                                                   "-o",    "@DIR@/m.safetensors"}
                                    << 2 << "does not exist";
    QTest::newRow("binary corpus") << QStringList{"train", "--scheme",           "alibi", "--corpus", POSITIONLAB_CLI,
                                                  "-o",    "@DIR@/m.safetensors"}
                                   << 2 << "binary";
    QTest::newRow("output not .safetensors")
        << QStringList{"train", "--scheme", "alibi", "-o", "@DIR@/m.txt"} << 2
        << "m.txt: a checkpoint is written as MODEL.safetensors; the file name must end in .safetensors";
    QTest::newRow("corpus is a device") << QStringList{"train", "--scheme",           "alibi", "--corpus", "/dev/zero",
                                                       "-o",    "@DIR@/m.safetensors"}
                                        << 2 << "not a regular file";
    QTest::newRow("eval a device") << QStringList{"eval", "/dev/zero"} << 2 << "checkpoint /dev/zero";
    QTest::newRow("output dir missing") << QStringList{"train", "--scheme", "alibi", "-o",
                                                       "@DIR@/no/such/m.safetensors"}
                                        << 2 << "cannot write";
    QTest::newRow("eval missing file") << QStringList{"eval", "@DIR@/none.safetensors"} << 2 << "does not exist";
    QTest::newRow("eval corrupt file") << QStringList{"eval", "@DIR@/corpus.txt"} << 2 << "header length";
    QTest::newRow("eval bad mode") << QStringList{"eval", "@DIR@/m.safetensors", "--mode", "diagonal"} << 2
                                   << "diagonal";
    QTest::newRow("eval stride without sliding")
        << QStringList{"eval", "@DIR@/m.safetensors", "--stride", "4"} << 2 << "--stride only";
}

void TestTrainCli::badUsage()
{
    QFETCH(QStringList, args);
    QFETCH(int, exitCode);
    QFETCH(QString, message);
    QTemporaryDir dir;
    corpusPath(dir);
    {
        // A valid checkpoint for the eval rows.
        plab::ModelConfig c;
        c.layers = 1;
        c.dModel = 8;
        c.heads = 2;
        c.dFf = 8;
        c.context = 8;
        plab::saveCheckpoint(plab::Model(c), {}, (dir.path() + "/m.safetensors").toStdString());
    }
    for (QString& a : args)
        a.replace("@DIR@", dir.path());
    const CliResult r = runCli(args);
    QCOMPARE(r.exitCode, exitCode);
    QVERIFY2(r.err.contains(message.toUtf8()), r.err.constData());
    QVERIFY2(r.err.trimmed().count('\n') == 0 || r.err.contains("error:"), r.err.constData());
    QVERIFY(!QFile::exists(dir.path() + "/x.safetensors"));
}

void TestTrainCli::fewerThreadsThanSlices_data()
{
    QTest::addColumn<QStringList>("environment");
    QTest::newRow("no limit") << QStringList{};
    QTest::newRow("thread limit 1") << QStringList{"OMP_THREAD_LIMIT=1"};
    QTest::newRow("thread limit 1, dynamic") << QStringList{"OMP_THREAD_LIMIT=1", "OMP_DYNAMIC=true"};
}

// A step of 16 x 64 tokens at d_model 32 is split into one slice per thread asked for (--threads 2). When the
// OpenMP runtime grants fewer threads, every slice must still run: this crashed (a slice's forward never ran) before.
void TestTrainCli::fewerThreadsThanSlices()
{
    QFETCH(QStringList, environment);
    QTemporaryDir dir;
    const QStringList model{"--layers",  "1",  "--d-model", "32", "--heads", "2", "--d-ff",   "64",
                            "--context", "64", "--batch",   "16", "--steps", "3", "--corpus", corpusPath(dir)};
    const QString reference = dir.path() + "/one-thread.safetensors", limited = dir.path() + "/limited.safetensors";
    CliResult r = runCli(QStringList{"train", "--scheme", "alibi", "--threads", "1", "-o", reference} + model);
    QVERIFY2(r.exitCode == 0, r.err.constData());
    r = runCli(QStringList{"train", "--scheme", "alibi", "--threads", "2", "-o", limited} + model, 300000, environment);
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const plab::LoadedCheckpoint a = plab::loadCheckpoint(reference.toStdString());
    const plab::LoadedCheckpoint b = plab::loadCheckpoint(limited.toStdString());
    QCOMPARE(b.info.step, 3);
    // Two slices summed in order against one whole batch: equal up to float rounding, and far from what a step
    // that skipped half the batch would give.
    QVERIFY2(std::abs(a.info.trainLoss - b.info.trainLoss) < 1e-3 * std::abs(a.info.trainLoss),
             qPrintable(QString("train loss %1 (1 thread) against %2").arg(a.info.trainLoss).arg(b.info.trainLoss)));
}

// (d) `train --eval-bytes 0` skips the held-out check and says so: no "nan" where a loss would be; so does an
// --eval-bytes below the context (evaluateModel's rule: no shorter window under the context's name); (i) the scheme as
// the SCHEME word works as --scheme does.
void TestTrainCli::evalBytesZeroSkips_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("evalBytes");
    QTest::addColumn<QString>("said");
    QTest::newRow("text") << QStringList{"train", "alibi"} << "0"
                          << "no validation check (--eval-bytes 0)";
    QTest::newRow("json") << QStringList{"train", "--scheme", "alibi", "--json"} << "0"
                          << "\"validation_skipped\":\"--eval-bytes 0\"";
    QTest::newRow("fewer than the context") << QStringList{"train", "alibi"} << "10"
                                            << "only 10 held-out bytes are scored, fewer than the context 16";
}

void TestTrainCli::evalBytesZeroSkips()
{
    QFETCH(QStringList, args);
    QFETCH(QString, evalBytes);
    QFETCH(QString, said);
    QTemporaryDir dir;
    const QString model = dir.path() + "/m.safetensors";
    const CliResult r =
        runCli(args + QStringList{"--corpus", corpusPath(dir), "--steps", "2", "--eval-bytes", evalBytes, "-o", model} +
               tinyModel());
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY2(r.err.contains(said.toUtf8()), r.err.constData());
    QVERIFY2(!r.err.toLower().contains("nan"), r.err.constData());
    QCOMPARE(plab::loadCheckpoint(model.toStdString()).model->config().scheme, std::string("alibi"));
}

// (j) Sliding-window evaluation reports its progress on stderr; --quiet silences progress wherever it is printed.
void TestTrainCli::progressAndQuiet_data()
{
    QTest::addColumn<QStringList>("args"); // @MODEL@, @CORPUS@, @DIR@ replaced
    QTest::addColumn<QString>("progress"); // a progress text printed without --quiet
    QTest::newRow("eval sliding") << QStringList{"eval",  "@MODEL@", "--corpus", "@CORPUS@", "--lengths",
                                                 "16,32", "--mode",  "sliding",  "--stride", "4"}
                                  << "length 32 (sliding): 100%";
    QTest::newRow("train") << QStringList{"train",        "alibi",
                                          "--corpus",     "@CORPUS@",
                                          "--steps",      "3",
                                          "--eval-bytes", "64",
                                          "-o",           "@DIR@/q.safetensors",
                                          "--layers",     "1",
                                          "--d-model",    "16",
                                          "--heads",      "2",
                                          "--d-ff",       "32",
                                          "--context",    "16",
                                          "--batch",      "4"}
                           << "step 3/3";
}

void TestTrainCli::progressAndQuiet()
{
    QFETCH(QStringList, args);
    QFETCH(QString, progress);
    const QString model = twoLayerModel();
    QVERIFY(QFile::exists(model));
    QTemporaryDir dir;
    for (QString& a : args)
        a.replace("@MODEL@", model).replace("@CORPUS@", corpusPath(m_dir)).replace("@DIR@", dir.path());
    const CliResult loud = runCli(args);
    QVERIFY2(loud.exitCode == 0, loud.err.constData());
    QVERIFY2(loud.err.contains(progress.toUtf8()), loud.err.constData());
    const CliResult quiet = runCli(args + QStringList{"--quiet"});
    QVERIFY2(quiet.exitCode == 0, quiet.err.constData());
    QVERIFY2(!quiet.err.contains(progress.toUtf8()) && !quiet.err.contains("%"), quiet.err.constData());
    QCOMPARE(quiet.out, loud.out); // the results themselves are the same
}

// (a) `render attention` names the layer and head as --layer and --head count them: from 0.
void TestTrainCli::attentionPictureCountsFromZero()
{
    if (runCli({"render", "--help"}).exitCode != 0)
        QSKIP("this positionlab-cli has no render verb (built without the GUI library)");
    const QString model = twoLayerModel();
    QTemporaryDir dir;
    const QString path = dir.path() + "/a.svg";
    const CliResult r =
        runCli({"render", "attention", "--checkpoint", model, "--layer", "0", "--head", "1", "-o", path});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray svg = f.readAll();
    QVERIFY2(svg.contains("layer l = 0 · head h = 1 of 0..1"), "the subtitle does not count from 0");
}

// train --init at a longer context with llama3: the method keeps the context the checkpoint was trained at (16), says
// so, saves it, and eval of the result equals eval under an explicit original-context=16 (and not under L = 32, which
// original-context=0 asks for: naming the checkpoint's own method keeps its original-context). The user's
// original-context=0 is theirs: L = this run's context, not replaced by the checkpoint's 16.
void TestTrainCli::initAtLongerContextKeepsOriginalContext()
{
    QTemporaryDir dir;
    const QString base = dir.path() + "/base.safetensors", tuned = dir.path() + "/tuned.safetensors";
    CliResult r =
        runCli(QStringList{"train", "rope", "--corpus", corpusPath(dir), "--steps", "3", "-o", base} + tinyModel());
    QVERIFY2(r.exitCode == 0, r.err.constData());
    r = runCli({"train", "--init", base, "--corpus", corpusPath(dir), "--steps", "2", "--batch", "2", "--context", "32",
                "--scaling", "llama3", "--set", "factor=4", "-o", tuned});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY2(r.err.contains("scaling llama3 with original-context 16"), r.err.constData());
    const plab::LoadedCheckpoint loaded = plab::loadCheckpoint(tuned.toStdString());
    QCOMPARE(loaded.model->config().context, 32);
    QCOMPARE(plab::scalingContext(loaded.model->schemeSpec()), 16);
    const QStringList evalArgs{"eval", tuned, "--corpus", corpusPath(dir), "--lengths", "32,128"};
    const CliResult saved = runCli(evalArgs);
    const CliResult explicit16 =
        runCli(evalArgs + QStringList{"--scaling", "llama3", "--set", "factor=4", "--set", "original-context=16"});
    const CliResult context32 =
        runCli(evalArgs + QStringList{"--scaling", "llama3", "--set", "factor=4", "--set", "original-context=0"});
    QVERIFY2(saved.exitCode == 0 && explicit16.exitCode == 0 && context32.exitCode == 0, saved.err.constData());
    QCOMPARE(saved.out, explicit16.out);
    QVERIFY(saved.out != context32.out);

    const QString own = dir.path() + "/own.safetensors";
    r = runCli({"train", "--init", base, "--corpus", corpusPath(dir), "--steps", "2", "--batch", "2", "--context", "32",
                "--scaling", "llama3", "--set", "factor=4", "--set", "original-context=0", "-o", own});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY2(!r.err.contains("with original-context"), r.err.constData());
    QCOMPARE(plab::scalingContext(plab::loadCheckpoint(own.toStdString()).model->schemeSpec()), 32);
}

void TestTrainCli::sameBitsWhereverMallocPutsBuffers_data()
{
    QTest::addColumn<QString>("scheme");
    for (const char* scheme : {"alibi", "rope", "xpos", "bca", "kerple-power", "sandwich", "t5"})
        QTest::newRow(scheme) << scheme;
}

// Same seed and thread count, same bits: the heap layout must not matter. glibc's mmap threshold moves the model's
// buffers between the heap (any 16-byte offset) and fresh pages; before the parameter, gradient and moment buffers
// were 64-byte aligned and the rotation's roundings spelled out, every row here differed in the last bits (and a
// sweep cell's numbers changed with the length of its folder's path). Under AddressSanitizer, whose allocator ignores
// GLIBC_TUNABLES, both runs see the same layout and the row checks less.
void TestTrainCli::sameBitsWhereverMallocPutsBuffers()
{
    QFETCH(QString, scheme);
    QTemporaryDir dir;
    QByteArray checkpoints[2];
    const char* thresholds[2] = {"33554432", "4096"};
    for (int i = 0; i < 2; ++i) {
        const QString out = dir.path() + QString("/m%1.safetensors").arg(i);
        const CliResult r = runCli({"train", scheme, "--preset", "demo", "--corpus", corpusPath(dir), "--steps", "2",
                                    "--threads", "2", "--eval-bytes", "0", "--quiet", "-o", out},
                                   300000, {QString("GLIBC_TUNABLES=glibc.malloc.mmap_threshold=") + thresholds[i]});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QFile f(out);
        QVERIFY(f.open(QIODevice::ReadOnly));
        checkpoints[i] = f.readAll();
    }
    QVERIFY(!checkpoints[0].isEmpty());
    QVERIFY2(checkpoints[0] == checkpoints[1], "the two checkpoints differ");
}

// --scaling, --set and the rope+METHOD word wherever a checkpoint's rotary scheme appears (issue 13 section 2): two
// command lines that must give the same result (one spelled as the other), or different ones (the option is read).
void TestTrainCli::checkpointUnderMethod_data()
{
    QTest::addColumn<QStringList>("a"); // @MODEL@ (the rope model), @YARN@ (yarn, factor 2), @CORPUS@, @OUT@ replaced
    QTest::addColumn<QStringList>("b");
    QTest::addColumn<QString>("compare"); // what is compared: "stdout", "file" (-o) or "ppl" (render train's stderr)
    QTest::addColumn<bool>("same");
    QTest::addColumn<bool>("render"); // needs the render verb
    const QStringList entropy{"entropy", "--checkpoint", "@MODEL@", "--corpus", "@CORPUS@", "--lengths", "8,40"};
    const QStringList attention{"attention", "--checkpoint", "@MODEL@", "--corpus", "@CORPUS@",
                                "--length",  "40",           "-o",      "@OUT@.npy"};
    auto with = [](const QString& word, QStringList args, const QStringList& extra = {}) {
        args.insert(1, word);
        return args + extra;
    };
    QTest::newRow("entropy rope+pi is --scaling pi")
        << with("rope+pi", entropy) << with("rope", entropy, {"--scaling", "pi"}) << "stdout" << true << false;
    QTest::newRow("entropy --scaling is read")
        << with("rope", entropy, {"--scaling", "pi"}) << with("rope", entropy) << "stdout" << false << false;
    QTest::newRow("entropy --set is read")
        << with("rope", entropy, {"--scaling", "yarn", "--set", "factor=2"})
        << with("rope", entropy, {"--scaling", "yarn"}) << "stdout" << false << false;
    QTest::newRow("attention --scaling is read")
        << with("rope", attention, {"--scaling", "yarn"}) << with("rope", attention) << "file" << false << false;
    QTest::newRow("attention rope+rerope is --scaling rerope")
        << with("rope+rerope", attention, {"--set", "window=5"})
        << with("rope", attention, {"--scaling", "rerope", "--set", "window=5"}) << "file" << true << false;
    QTest::newRow("attention --set is read") << with("rope+rerope", attention, {"--set", "window=5"})
                                             << with("rope+rerope", attention) << "file" << false << false;
    const QStringList renderAttention{"render",      "attention", "--checkpoint", "@MODEL@",
                                      "--repeat-to", "40",        "-o",           "@OUT@.png"};
    QTest::newRow("render attention --scaling is read")
        << renderAttention + QStringList{"--scaling", "rerope", "--set", "window=4"} << renderAttention << "file"
        << false << true;
    const QStringList renderTrain{"render", "train",   "--corpus", "@CORPUS@", "--steps",
                                  "2",      "--quiet", "-o",       "@OUT@.png"};
    QTest::newRow("render train rope+yarn is --scaling yarn")
        << renderTrain + QStringList{"rope+yarn", "--set", "factor=2"}
        << renderTrain + QStringList{"rope", "--scaling", "yarn", "--set", "factor=2"} << "file" << true << true;
    // --set goes to each scheme that takes it: the README's example, yarn's factor for rope+yarn beside plain rope
    QTest::newRow("render train --set to the scheme that takes it")
        << renderTrain + QStringList{"rope", "rope+yarn", "--set", "factor=2"}
        << renderTrain + QStringList{"rope", "rope+yarn"} << "file" << false << true;
    QTest::newRow("render train --set, the other order")
        << renderTrain + QStringList{"rope+yarn", "rope", "--set", "factor=2"}
        << renderTrain + QStringList{"rope+yarn", "rope"} << "file" << false << true;
    // Naming a checkpoint's own method keeps the parameters it was trained with (factor 2); it reset them to the
    // method's defaults (factor 4) without saying so.
    const QStringList evalYarn{"eval", "@YARN@", "--corpus", "@CORPUS@", "--lengths", "16,32"};
    QTest::newRow("eval --scaling of the checkpoint's own method")
        << evalYarn + QStringList{"--scaling", "yarn"} << evalYarn << "stdout" << true << false;
    QTest::newRow("eval --scaling of its own method, then --set")
        << evalYarn + QStringList{"--scaling", "yarn", "--set", "beta-fast=16"}
        << evalYarn + QStringList{"--set", "beta-fast=16"} << "stdout" << true << false;
    QTest::newRow("eval --scaling of another method starts from its defaults")
        << evalYarn + QStringList{"--scaling", "llama3"}
        << evalYarn + QStringList{"--scaling", "llama3", "--set", "factor=4"} << "stdout" << true << false;
    const QStringList entropyYarn{"--checkpoint", "@YARN@", "--corpus", "@CORPUS@", "--lengths", "8,40"};
    QTest::newRow("entropy rope+yarn of a yarn checkpoint is entropy rope")
        << QStringList{"entropy", "rope+yarn"} + entropyYarn << QStringList{"entropy", "rope"} + entropyYarn << "stdout"
        << true << false;
    const QStringList attentionYarn{"attention", "--checkpoint", "@YARN@", "--corpus", "@CORPUS@",
                                    "--length",  "40",           "-o",     "@OUT@.npy"};
    QTest::newRow("attention --scaling of the checkpoint's own method")
        << with("rope", attentionYarn, {"--scaling", "yarn"}) << with("rope", attentionYarn) << "file" << true << false;
    QTest::newRow("render train --scaling is read")
        << QStringList{"render",   "train",   "rope", "--scaling", "pi",       "--corpus",
                       "@CORPUS@", "--steps", "2",    "-o",        "@OUT@.png"}
        << QStringList{"render", "train", "rope", "--corpus", "@CORPUS@", "--steps", "2", "-o", "@OUT@.png"} << "ppl"
        << false << true;
}

void TestTrainCli::checkpointUnderMethod()
{
    QFETCH(QStringList, a);
    QFETCH(QStringList, b);
    QFETCH(QString, compare);
    QFETCH(bool, same);
    QFETCH(bool, render);
    if (render && runCli({"render", "--help"}).exitCode != 0)
        QSKIP("this positionlab-cli has no render verb (built without the GUI library)");
    const QString model = ropeModel();
    QVERIFY(QFile::exists(model));
    QTemporaryDir dir;
    auto run = [&](QStringList args, const QString& name) -> QByteArray {
        const QString out = dir.path() + "/" + name;
        for (QString& w : args)
            w.replace("@MODEL@", model)
                .replace("@YARN@", yarnModel())
                .replace("@CORPUS@", corpusPath(m_dir))
                .replace("@OUT@", out);
        const CliResult r = runCli(args);
        if (r.exitCode != 0) {
            qWarning("%s: %s", qPrintable(args.join(' ')), r.err.constData());
            return {};
        }
        if (compare == "stdout")
            return r.out;
        if (compare == "ppl") { // the numbers only: the legend names the schemes differently anyway
            QByteArray numbers;
            for (const QByteArray& word : r.err.split(' '))
                if (!word.isEmpty() && (word[0] == '.' || (word[0] >= '0' && word[0] <= '9')))
                    numbers += word + ' ';
            return numbers;
        }
        QFile f(args.value(args.indexOf("-o") + 1)); // the run's output file
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    };
    const QByteArray first = run(a, "a"), second = run(b, "b");
    QVERIFY2(!first.isEmpty() && !second.isEmpty(), "a run failed or wrote nothing");
    QCOMPARE(first == second, same);
}

// render attention's title names the method the checkpoint is drawn under, as the entropy picture's legend does
// (schemeLabel): with --scaling rerope it said "rope.safetensors (rope, step 20)", and a checkpoint trained under
// yarn was "rope" too.
void TestTrainCli::attentionPictureNamesMethod_data()
{
    QTest::addColumn<bool>("yarn");         // the yarn checkpoint, else the rope one
    QTest::addColumn<QStringList>("extra"); // options after render attention --checkpoint MODEL
    QTest::addColumn<QString>("title");
    QTest::newRow("rope") << false << QStringList{} << "rope.safetensors (rope, step 20)";
    QTest::newRow("rope --scaling rerope") << false << QStringList{"--scaling", "rerope", "--set", "window=4"}
                                           << "rope.safetensors (rope+rerope, step 20)";
    QTest::newRow("trained under yarn") << true << QStringList{} << "yarn.safetensors (rope+yarn, step 5)";
    QTest::newRow("trained under yarn, --scaling none")
        << true << QStringList{"--scaling", "none"} << "yarn.safetensors (rope, step 5)";
}

void TestTrainCli::attentionPictureNamesMethod()
{
    QFETCH(bool, yarn);
    QFETCH(QStringList, extra);
    QFETCH(QString, title);
    if (runCli({"render", "--help"}).exitCode != 0)
        QSKIP("this positionlab-cli has no render verb (built without the GUI library)");
    const QString model = yarn ? yarnModel() : ropeModel();
    QVERIFY(QFile::exists(model));
    QTemporaryDir dir;
    const QString picture = dir.filePath("attention.svg");
    const CliResult r = runCli(QStringList{"render", "attention", "--checkpoint", model, "--text", "abcdefgh"} + extra +
                               QStringList{"-o", picture});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QFile f(picture);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QString svg = QString::fromUtf8(f.readAll());
    QVERIFY2(svg.contains(title), qPrintable("no '" + title + "' in the picture's title"));
}

// eval, entropy and attention of a checkpoint say on stderr which method and parameters they apply (unless --quiet,
// which eval has): the checkpoint's own (also when named again: its trained parameters, not the method's defaults),
// or another's defaults in its place, so no one takes the numbers for plain rope's or for the checkpoint's.
void TestTrainCli::saysWhichMethod_data()
{
    QTest::addColumn<QStringList>("args"); // @YARN@ (rope under yarn, factor 2), @ROPE@ (plain rope), @CORPUS@, @OUT@
    QTest::addColumn<QString>("note");     // empty: no note
    const QStringList eval{"eval", "@YARN@", "--corpus", "@CORPUS@", "--lengths", "16"};
    const QString own = "using the checkpoint's scaling rope+yarn (factor 2); --scaling METHOD replaces it, --scaling "
                        "none gives plain rope";
    QTest::newRow("eval, the checkpoint's own") << eval << own;
    QTest::newRow("eval, named again") << eval + QStringList{"--scaling", "yarn"} << own;
    QTest::newRow("eval, changed by --set")
        << eval + QStringList{"--set", "factor=3"}
        << "using the checkpoint's scaling rope+yarn (factor 3) (its parameters changed by --set)";
    QTest::newRow("eval, named again and changed by --set")
        << eval + QStringList{"--scaling", "yarn", "--set", "beta-fast=16"}
        << "using the checkpoint's scaling rope+yarn (factor 2, beta-fast 16) (its parameters changed by --set)";
    QTest::newRow("eval, another method")
        << eval + QStringList{"--scaling", "pi"}
        << "using scaling rope+pi (factor 4) (the method's defaults) in place of the checkpoint's scaling rope+yarn "
           "(factor 2)";
    QTest::newRow("eval, another method with --set")
        << eval + QStringList{"--scaling", "pi", "--set", "factor=3"}
        << "using scaling rope+pi (factor 3) (the method's defaults, changed by --set) in place of the checkpoint's "
           "scaling rope+yarn (factor 2)";
    QTest::newRow("eval, --scaling none")
        << eval + QStringList{"--scaling", "none"}
        << "using plain rope in place of the checkpoint's scaling rope+yarn (factor 2)";
    QTest::newRow("eval, --quiet") << eval + QStringList{"--quiet"} << "";
    QTest::newRow("eval of plain rope") << QStringList{"eval", "@ROPE@", "--corpus", "@CORPUS@", "--lengths", "16"}
                                        << "";
    QTest::newRow("eval of plain rope under yarn")
        << QStringList{"eval", "@ROPE@", "--corpus", "@CORPUS@", "--lengths", "16", "--scaling", "yarn"}
        << "using scaling rope+yarn (factor 4) (the method's defaults) in place of the checkpoint's plain rope";
    const QStringList entropy{"entropy", "--checkpoint", "@YARN@", "--corpus", "@CORPUS@", "--lengths", "8"};
    QTest::newRow("entropy rope") << QStringList{"entropy", "rope"} + entropy.mid(1) << own;
    QTest::newRow("entropy rope+yarn") << QStringList{"entropy", "rope+yarn"} + entropy.mid(1) << own;
    QTest::newRow("entropy rope+llama3")
        << QStringList{"entropy", "rope+llama3"} + entropy.mid(1)
        << "using scaling rope+llama3 (factor 4) (the method's defaults) in place of the checkpoint's scaling "
           "rope+yarn (factor 2)";
    QTest::newRow("attention rope --set")
        << QStringList{"attention", "rope",  "--checkpoint", "@YARN@", "--corpus",
                       "@CORPUS@",  "--set", "factor=3",     "-o",     "@OUT@.npy"}
        << "using the checkpoint's scaling rope+yarn (factor 3) (its parameters changed by --set)";
    QTest::newRow("attention of plain rope")
        << QStringList{"attention", "rope", "--checkpoint", "@ROPE@", "--corpus", "@CORPUS@", "-o", "@OUT@.npy"} << "";
}

void TestTrainCli::saysWhichMethod()
{
    QFETCH(QStringList, args);
    QFETCH(QString, note);
    QTemporaryDir dir;
    for (QString& a : args)
        a.replace("@YARN@", yarnModel())
            .replace("@ROPE@", ropeModel())
            .replace("@CORPUS@", corpusPath(m_dir))
            .replace("@OUT@", dir.path() + "/out");
    const CliResult r = runCli(args);
    QVERIFY2(r.exitCode == 0, r.err.constData());
    if (note.isEmpty())
        QVERIFY2(!r.err.contains("using "), r.err.constData());
    else
        QVERIFY2(r.err.contains(note.toUtf8()), r.err.constData());
}

// train --init of a checkpoint trained under yarn, at a longer context and without --scaling: the method goes on with
// the context the checkpoint was trained at as its L (its own settings say original-context=0, "the context").
void TestTrainCli::initWithoutScalingKeepsOriginalContext()
{
    QTemporaryDir dir;
    const QString tuned = dir.path() + "/tuned.safetensors";
    const CliResult r = runCli({"train", "--init", yarnModel(), "--corpus", corpusPath(m_dir), "--steps", "1",
                                "--batch", "2", "--context", "32", "--eval-bytes", "0", "-o", tuned});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY2(r.err.contains("scaling yarn with original-context 16"), r.err.constData());
    const plab::LoadedCheckpoint loaded = plab::loadCheckpoint(tuned.toStdString());
    QCOMPARE(loaded.model->config().context, 32);
    QCOMPARE(plab::scalingContext(loaded.model->schemeSpec()), 16);
    QCOMPARE(loaded.model->schemeSpec().scalingParams.at("factor"), 2.0);
}

void TestTrainCli::taskTrainAndEval_data()
{
    QTest::addColumn<QString>("task");
    QTest::addColumn<int>("trainLength"); // the longest the context 24 holds
    QTest::newRow("copy") << "copy" << 11;
    QTest::newRow("reverse") << "reverse" << 11;
    QTest::newRow("addition") << "addition" << 7;
    QTest::newRow("passkey") << "passkey" << 4;
}

void TestTrainCli::taskTrainAndEval()
{
    // train --task records the task in the checkpoint; eval --task writes one row per length (x depth), CSV and JSON
    // with the keys the issue names, accuracy = correct / examples, default lengths L/2 .. 4L of the recorded L.
    QFETCH(QString, task);
    QFETCH(int, trainLength);
    QTemporaryDir dir;
    const QString model = dir.path() + "/m.safetensors";
    CliResult r = runCli({"train",   "alibi", "--task", task, "--steps",   "6",  "--layers", "1", "--d-model", "16",
                          "--heads", "2",     "--d-ff", "32", "--context", "24", "--batch",  "4", "-o",        model});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY2(r.err.contains(QByteArray("task ") + task.toUtf8() + ", lengths 1.." + QByteArray::number(trainLength)),
             r.err.constData());
    QVERIFY2(r.err.contains("test examples) at length " + QByteArray::number(trainLength)), r.err.constData());
    const plab::LoadedCheckpoint loaded = plab::loadCheckpoint(model.toStdString());
    QCOMPARE(QString::fromStdString(loaded.info.training.value("task", std::string())), task);
    QCOMPARE(loaded.info.training.value("task_length", 0), trainLength);

    const bool passkey = task == "passkey";
    const QString json = dir.path() + "/a.json";
    QStringList args{"eval", model, "--task", task, "--lengths", "1,3", "--examples", "7", "-o", json};
    if (passkey)
        args << "--depths"
             << "0,0.5,1";
    r = runCli(args);
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QFile f(json);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonObject doc = QJsonDocument::fromJson(f.readAll()).object();
    const QJsonArray rows = doc["rows"].toArray();
    QCOMPARE(rows.size(), passkey ? 6 : 2);
    for (int i = 0; i < rows.size(); ++i) {
        const QJsonObject row = rows[i].toObject();
        QCOMPARE(row["length"].toInt(), i / (passkey ? 3 : 1) == 0 ? 1 : 3);
        QCOMPARE(row["examples"].toInt(), 7);
        QCOMPARE(row.contains("depth"), passkey);
        if (passkey)
            QCOMPARE(row["depth"].toDouble(), 0.5 * (i % 3));
        QCOMPARE(row["accuracy"].toDouble(), row["correct"].toInt() / 7.0);
    }
    QCOMPARE(doc["task"].toString(), task);

    // CSV on stdout; the default lengths from the recorded training length.
    r = runCli({"eval", model, "--task", task, "--examples", "2", "--quiet"});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QList<QByteArray> lines = r.out.trimmed().split('\n');
    QCOMPARE(lines[0], passkey ? QByteArray("length,examples,correct,depth,accuracy")
                               : QByteArray("length,examples,correct,accuracy"));
    QList<int> lengths;
    for (int i = 1; i < lines.size(); ++i)
        if (lengths.isEmpty() || lengths.back() != lines[i].split(',')[0].toInt())
            lengths << lines[i].split(',')[0].toInt();
    QList<int> expected;
    for (int half = 1; half <= 8; ++half)
        if (expected.isEmpty() || expected.back() != std::max(1, half * trainLength / 2))
            expected << std::max(1, half * trainLength / 2);
    QCOMPARE(lengths, expected);
    QCOMPARE(lengths.back(), 4 * trainLength);
}

void TestTrainCli::dropPositions()
{
    // train --init ROPE --drop-positions (DroPE): a NoPE model with the rope model's weights and AdamW state; its probe
    // score (q = k = all ones, the bias view) is constant in distance where the rope model's is not; refused on a
    // checkpoint that is not rope.
    QTemporaryDir dir;
    const QString rope = dir.path() + "/rope.safetensors", dropped = dir.path() + "/dropped.safetensors";
    const QStringList quiet{"--quiet", "--eval-bytes", "0", "--corpus", corpusPath(dir)};
    CliResult r = runCli(QStringList{"train", "rope", "--steps", "5", "-o", rope} + tinyModel() + quiet);
    QVERIFY2(r.exitCode == 0, r.err.constData());
    r = runCli(QStringList{"train", "--init", rope, "--drop-positions", "--steps", "3", "--batch", "4", "-o", dropped} +
               quiet);
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const plab::LoadedCheckpoint was = plab::loadCheckpoint(rope.toStdString());
    const plab::LoadedCheckpoint now = plab::loadCheckpoint(dropped.toStdString());
    QCOMPARE(now.model->config().scheme, std::string("none"));
    QCOMPARE(now.model->config().context, was.model->config().context);
    QVERIFY(now.optimizer && was.optimizer);
    QCOMPARE(now.optimizer->updates(), was.optimizer->updates() + 3); // the moments continued, not restarted
    QCOMPARE(now.model->parameterCount(), was.model->parameterCount());
    const int N = 24;
    auto probeVaries = [&](const plab::Model& model) {
        const plab::PositionBias bias(model.schemeSpec(), N);
        const std::vector<float> view = plab::biasViewMatrix(bias, 0, N);
        float lo = view[(N - 1) * N], hi = lo; // the last query's row: every distance 0..N-1
        for (int n = 0; n < N; ++n) {
            lo = std::min(lo, view[(N - 1) * N + n]);
            hi = std::max(hi, view[(N - 1) * N + n]);
        }
        return hi - lo;
    };
    QCOMPARE(probeVaries(*now.model), 0.0f);
    QVERIFY(probeVaries(*was.model) > 1.0f);
    // Not a rope checkpoint: refused naming the file and its scheme.
    const QString alibi = dir.path() + "/alibi.safetensors";
    r = runCli(QStringList{"train", "alibi", "--steps", "1", "-o", alibi} + tinyModel() + quiet);
    QVERIFY2(r.exitCode == 0, r.err.constData());
    r = runCli({"train", "--init", alibi, "--drop-positions", "--steps", "1", "-o", dir.path() + "/x.safetensors"});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("--drop-positions: --init " + alibi.toUtf8() +
                            " was trained with scheme alibi; allowed: a rope checkpoint"),
             r.err.constData());
    QVERIFY(!QFile::exists(dir.path() + "/x.safetensors"));
}

PLAB_QTEST_GUILESS_MAIN(TestTrainCli)
#include "tst_train_cli.moc"
