// `export`: lab checkpoints as Hugging Face folders; their logits through core/hf equal the lab model's, the byte
// tokenizer maps text to the lab's byte ids both ways, and schemes without a family are refused by name.
#include "cli_runner.h"
#include "compare.h"
#include "test_main.h"

#include "base/errors.h"
#include "base/npy.h"
#include "base/random.h"
#include "hf/hf_config.h"
#include "hf/hf_export.h"
#include "hf/hf_model.h"
#include "hf/tokenizer.h"
#include "hf/unicode_text.h"
#include "model/checkpoint.h"
#include "model/model.h"
#include "tasks/task_accuracy.h"
#include "tasks/tasks.h"

#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>

using namespace plab;

namespace {

// A small model of `scheme` whose every tensor holds random values of a size that matters (biases and LayerNorm
// shifts too), so that a tensor written to the wrong place or in the wrong order changes the logits.
std::unique_ptr<Model> randomModel(const std::string& scheme, const std::vector<std::string>& settings, int context,
                                   uint64_t seed, const std::string& scaling = "none")
{
    ModelConfig c;
    c.scheme = scheme;
    c.schemeSettings = settings;
    c.layers = 2;
    c.dModel = 32;
    c.heads = 4;
    c.dFf = 48;
    c.context = context;
    c.seed = seed;
    c.scaling = scaling;
    auto model = std::make_unique<Model>(c);
    Rng rng(seed + 100);
    for (const ParameterTensor& t : model->tensors()) {
        float* p = model->parameters().data() + t.offset;
        const bool normWeight = t.shape.size() == 1 && t.name.ends_with(".weight");
        for (size_t i = 0; i < t.size; ++i)
            p[i] = static_cast<float>(normWeight ? 1.0 + 0.3 * rng.normal() : 0.3 * rng.normal());
    }
    model->parametersChanged();
    return model;
}

std::string saveModel(const Model& model, const QString& dir, const std::string& name)
{
    const std::string path = dir.toStdString() + "/" + name + ".safetensors";
    saveCheckpoint(model, CheckpointInfo{}, path);
    return path;
}

// The lab model's logits (T, 256) of `ids`.
std::vector<float> labLogits(Model& model, const std::vector<int>& ids)
{
    std::vector<uint8_t> bytes(ids.begin(), ids.end());
    model.forward(bytes.data(), nullptr, 1, static_cast<int>(bytes.size()));
    return {model.logits().begin(), model.logits().begin() + bytes.size() * 256};
}

std::vector<int> randomBytes(int n, uint64_t seed)
{
    Rng rng(seed);
    std::vector<int> ids(n);
    for (int& id : ids)
        id = static_cast<int>(rng.uniform() * 256) % 256;
    return ids;
}

std::string readText(const std::string& path)
{
    std::ifstream f(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

} // namespace

class TestExport : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    void roundTrip_data();
    void roundTrip();
    void numpyReference_data();
    void numpyReference();
    void tokenizerIsBytes_data();
    void tokenizerIsBytes();
    void refusedSchemes_data();
    void refusedSchemes();
    void badInput_data();
    void badInput();
    void folderRules();
    void noRotaryFolder();
    void labPasskeyThroughFolder_data();
    void labPasskeyThroughFolder();
    void folderPasskeyThroughLab_data();
    void folderPasskeyThroughLab();
    void labExamplesThroughFolder_data();
    void labExamplesThroughFolder();
};

void TestExport::roundTrip_data()
{
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<QStringList>("settings");
    QTest::addColumn<int>("length");
    QTest::addColumn<QString>("family");
    QTest::addColumn<QString>("positions"); // the folder's scheme as core/hf reads it
    QTest::addColumn<int>("rotaryDim");
    // Lengths past the context (16) where the scheme extrapolates: the folder must follow the lab there too.
    QTest::newRow("rope") << "rope" << QStringList{} << 40 << "gpt_neox"
                          << "rope" << 8;
    QTest::newRow("rope base 500") << "rope" << QStringList{"base=500"} << 40 << "gpt_neox"
                                   << "rope" << 8;
    QTest::newRow("rope partial") << "rope" << QStringList{"rotary-fraction=0.5"} << 40 << "gpt_neox"
                                  << "rope" << 4;
    // p-RoPE: 2 of 4 pairs turn; the folder rotates 4 dims with base^(4/8).
    QTest::newRow("rope keep") << "rope" << QStringList{"keep=0.5"} << 40 << "gpt_neox"
                               << "rope" << 4;
    // The checkpoint's own method as rope_scaling, read back by core/hf as that method with its settings (yarn on a
    // partial rotary only with attention factor 1: see refusedSchemes).
    QTest::newRow("rope+pi") << "rope+pi" << QStringList{"factor=2"} << 40 << "gpt_neox"
                             << "rope" << 8;
    QTest::newRow("rope+dynamic-ntk") << "rope+dynamic-ntk" << QStringList{"factor=3"} << 40 << "gpt_neox"
                                      << "rope" << 8;
    QTest::newRow("rope+yarn partial") << "rope+yarn"
                                       << QStringList{"rotary-fraction=0.5", "beta-fast=16", "attention-factor=1"} << 40
                                       << "gpt_neox"
                                       << "rope" << 4;
    QTest::newRow("rope+llama3") << "rope+llama3" << QStringList{"original-context=8"} << 40 << "gpt_neox"
                                 << "rope" << 8;
    QTest::newRow("none") << "none" << QStringList{} << 40 << "gpt_neox"
                          << "none" << 0;
    QTest::newRow("learned") << "learned" << QStringList{} << 16 << "gpt2"
                             << "learned" << 0;
    QTest::newRow("sinusoidal") << "sinusoidal" << QStringList{} << 40 << "gpt2"
                                << "learned" << 0;
}

// Checkpoint -> `positionlab-cli export` -> HfModel: the logits equal the lab model's to 1e-4 of max |logit|.
void TestExport::roundTrip()
{
    QFETCH(QString, scheme);
    QFETCH(QStringList, settings);
    QFETCH(int, length);
    QFETCH(QString, family);
    QFETCH(QString, positions);
    QFETCH(int, rotaryDim);
    std::vector<std::string> set;
    for (const QString& s : settings)
        set.push_back(s.toStdString());
    const QStringList schemeAndMethod = scheme.split('+');
    auto model = randomModel(schemeAndMethod[0].toStdString(), set, 16, 7,
                             schemeAndMethod.size() > 1 ? schemeAndMethod[1].toStdString() : "none");
    const QString tag = QString::fromLatin1(QTest::currentDataTag()).replace(' ', '_');
    const std::string checkpoint = saveModel(*model, m_dir.path(), tag.toStdString());
    const QString folder = m_dir.path() + "/" + tag;
    const test::CliResult result = test::runCli({"export", QString::fromStdString(checkpoint), "-o", folder, "--json"});
    QVERIFY2(result.exitCode == 0, result.err.constData());
    QCOMPARE(QString::fromStdString(nlohmann::json::parse(result.out.toStdString())["family"]), family);

    const HfModel hf(folder.toStdString());
    QCOMPARE(QString::fromStdString(hf.config().modelType), family);
    QCOMPARE(QString::fromStdString(hf.config().scheme), positions);
    QCOMPARE(hf.config().rotaryDim, rotaryDim);
    QCOMPARE(QString::fromStdString(hf.config().scaling), schemeAndMethod.size() > 1 ? schemeAndMethod[1] : "none");
    QVERIFY(hf.skippedTensors().empty());
    const std::vector<int> ids = randomBytes(length, 3);
    const HfMatrix got = hf.logits(ids, hfPositionSpec(hf.config()));
    const std::vector<float> want = labLogits(*model, ids);
    QCOMPARE(static_cast<size_t>(got.size()), want.size());
    double scale = 0;
    for (float v : want)
        scale = std::max(scale, std::abs(static_cast<double>(v)));
    QVERIFY(scale > 1); // random weights of this size give logits well away from 0
    test::ErrorMax error;
    for (size_t i = 0; i < want.size(); ++i)
        error.add(got.data()[i] / scale, want[i] / scale);
    qInfo("%s", qPrintable(error.message("logits / max |logit|")));
    QVERIFY2(error.within(1e-4), qPrintable(error.message("logits / max |logit|")));
}

void TestExport::numpyReference_data()
{
    QTest::addColumn<QString>("name");
    QTest::newRow("rope partial, base 500 (gpt_neox)") << "rope_partial";
    QTest::newRow("none (gpt_neox, rotary_pct 0)") << "none";
    QTest::newRow("learned (gpt2)") << "learned";
}

// The lab model's logits on its checkpoint equal an independent NumPy forward of its exported folder, written from
// transformers' modeling_gpt_neox.py and modeling_gpt2.py (tests/reference/make_export_reference.py): the export is
// checked against the Hugging Face formulas, not only against core/hf's loader.
void TestExport::numpyReference()
{
    QFETCH(QString, name);
    const std::string dir = POSITIONLAB_TEST_DATA "/export/";
    const LoadedCheckpoint loaded = loadCheckpoint(dir + name.toStdString() + ".safetensors");
    const nlohmann::json ids = nlohmann::json::parse(readText(dir + "ids.json"));
    std::vector<int> bytes = ids["ids"].get<std::vector<int>>();
    if (name == "learned")
        bytes.resize(ids["learned_length"].get<size_t>());
    const NpyArray ref = readNpy(dir + name.toStdString() + "_ref.npy");
    QCOMPARE(ref.shape, (std::vector<int64_t>{static_cast<int64_t>(bytes.size()), 256}));
    const std::vector<float> got = labLogits(*loaded.model, bytes);
    double scale = 0;
    for (float v : ref.data)
        scale = std::max(scale, std::abs(static_cast<double>(v)));
    QVERIFY(scale > 1);
    test::ErrorMax error;
    for (size_t i = 0; i < got.size(); ++i)
        error.add(got[i] / scale, ref.data[i] / scale);
    qInfo("%s", qPrintable(error.message("logits / max |logit|")));
    QVERIFY2(error.within(1e-4), qPrintable(error.message("logits / max |logit|")));
}

void TestExport::tokenizerIsBytes_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::newRow("ascii") << QByteArray("The passkey is 12345. Remember it.");
    QTest::newRow("spaces and controls") << QByteArray("  two  spaces\n\ttab\r\nend ");
    QTest::newRow("utf-8") << QByteArray("naïve café 日本語 🙂 Ġ Ā");
}

// The folder's tokenizer.json gives the text's UTF-8 bytes as ids and decodes them back, through core/hf's reader.
void TestExport::tokenizerIsBytes()
{
    QFETCH(QByteArray, text);
    const std::string folder = m_dir.path().toStdString() + "/tokenizer";
    if (!QFile::exists(QString::fromStdString(folder + "/tokenizer.json")))
        exportHfFolder(*randomModel("rope", {}, 16, 1), folder);
    const hf::Tokenizer tokenizer = hf::Tokenizer::fromFolder(folder);
    QCOMPARE(tokenizer.vocabSize(), 256);
    const hf::Encoding encoding = tokenizer.encode(text.toStdString());
    std::vector<int> bytes;
    for (char c : text)
        bytes.push_back(static_cast<unsigned char>(c));
    QCOMPARE(encoding.ids, bytes);
    QCOMPARE(QByteArray::fromStdString(tokenizer.decode(encoding.ids)), text);
    // Every id is its byte's ByteLevel character and back. Decoding is Hugging Face's: the bytes of the ids, read as
    // UTF-8 with each invalid sequence replaced by U+FFFD (from_utf8_lossy), so a lone byte >= 0x80 is not itself.
    for (int b = 0; b < 256; ++b) {
        QCOMPARE(tokenizer.idToToken(b), hf::byteLevelChars()[b]);
        QCOMPARE(tokenizer.tokenToId(hf::byteLevelChars()[b]), std::optional<int>(b));
        const std::string one = tokenizer.decode({b});
        QCOMPARE(one, b < 0x80 ? std::string(1, static_cast<char>(b)) : std::string("\xEF\xBF\xBD"));
    }
}

void TestExport::refusedSchemes_data()
{
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<QStringList>("trainOptions"); // how the model is made (ModelConfig fields by name)
    QTest::addColumn<QString>("named");            // what the message must name
    for (const char* s :
         {"alibi", "t5", "kerple-power", "kerple-log", "sandwich", "fire", "cope", "fox", "xpos", "local", "bca"})
        QTest::newRow(s) << s << QStringList{} << QString("scheme %1 has no Hugging Face family").arg(s);
    QTest::newRow("alibi's reason") << "alibi" << QStringList{} << "word_embeddings_layernorm";
    QTest::newRow("rope+ntk") << "rope" << QStringList{"scaling=ntk"} << "length-extension method ntk";
    QTest::newRow("rope+self-extend") << "rope" << QStringList{"scaling=self-extend"}
                                      << "length-extension method self-extend";
    QTest::newRow("yarn factor on a partial rotary")
        << "rope" << QStringList{"scaling=yarn", "rotary-fraction=0.5"} << "yarn's attention factor 1.138629";
    QTest::newRow("keep with yarn") << "rope" << QStringList{"scaling=yarn", "keep=0.5"}
                                    << "keep < 1 with the method yarn";
    QTest::newRow("nope-every") << "rope" << QStringList{"nope-every=2"} << "nope-every = 2";
    QTest::newRow("logn") << "rope" << QStringList{"logn"} << "logn";
    QTest::newRow("ssmax") << "none" << QStringList{"ssmax"} << "ssmax";
    QTest::newRow("sink logit") << "rope" << QStringList{"sink-logit"} << "sink logit";
    QTest::newRow("window") << "rope" << QStringList{"window=4"} << "a window, chunk or sinks setting";
    QTest::newRow("softcap") << "learned" << QStringList{"softcap=30"} << "softcap";
    QTest::newRow("layer types") << "rope" << QStringList{"layer-types=sliding,full", "window-layers=4"}
                                 << "layer types sliding,full";
    QTest::newRow("full layers' own scheme") << "rope" << QStringList{"layer-types=sliding,full", "full-scheme=none"}
                                             << "layer types sliding,full";
}

// Exit 2 naming the scheme or option, listing the schemes that export; no folder is left behind.
void TestExport::refusedSchemes()
{
    QFETCH(QString, scheme);
    QFETCH(QStringList, trainOptions);
    QFETCH(QString, named);
    ModelConfig c;
    c.scheme = scheme.toStdString();
    c.layers = 2;
    c.dModel = 16;
    c.heads = 2;
    c.dFf = 32;
    c.context = 16;
    for (const QString& o : trainOptions) {
        if (o == "logn")
            c.logn = true;
        else if (o == "ssmax")
            c.ssmax = true;
        else if (o == "sink-logit")
            c.sinkLogit = true;
        else if (o.startsWith("scaling="))
            c.scaling = o.mid(8).toStdString();
        else if (o.startsWith("nope-every="))
            c.nopeEvery = o.mid(11).toInt();
        else if (o.startsWith("layer-types="))
            for (const QString& t : o.mid(12).split(','))
                c.layerTypes.push_back(t.toStdString());
        else if (o.startsWith("window-layers="))
            c.window = o.mid(14).toInt();
        else if (o.startsWith("full-scheme="))
            c.fullScheme = o.mid(12).toStdString();
        else
            c.schemeSettings.push_back(o.toStdString());
    }
    const Model model(c);
    const QString tag = QString::fromLatin1(QTest::currentDataTag()).replace(' ', '_');
    const std::string checkpoint = saveModel(model, m_dir.path(), "refused_" + tag.toStdString());
    const QString folder = m_dir.path() + "/refused_" + tag;
    const test::CliResult result = test::runCli({"export", QString::fromStdString(checkpoint), "-o", folder});
    QCOMPARE(result.exitCode, 2);
    QVERIFY2(result.err.contains(named.toUtf8()), result.err.constData());
    QVERIFY2(result.err.contains("rope (with pi, dynamic-ntk, yarn, llama3 or no method), none (as gpt_neox); learned, "
                                 "sinusoidal (as gpt2)"),
             result.err.constData());
    QVERIFY(!QFileInfo::exists(folder));
}

void TestExport::badInput_data()
{
    QTest::addColumn<QStringList>("args"); // %D: the test folder, %C: a good checkpoint
    QTest::addColumn<QString>("named");
    QTest::newRow("missing checkpoint") << QStringList{"export", "%D/nothing.safetensors", "-o", "%D/bad1"}
                                        << "nothing.safetensors";
    QTest::newRow("corrupt checkpoint") << QStringList{"export", "%D/corrupt.safetensors", "-o", "%D/bad2"}
                                        << "corrupt.safetensors";
    QTest::newRow("no -o") << QStringList{"export", "%C"} << "-o";
    QTest::newRow("no checkpoint") << QStringList{"export", "-o", "%D/bad3"} << "CHECKPOINT";
    QTest::newRow("positions on rope") << QStringList{"export", "%C", "-o", "%D/bad4", "--positions", "64"}
                                       << "positions = 64 is allowed for sinusoidal models only";
    QTest::newRow("positions 0") << QStringList{"export", "%C", "-o", "%D/bad5", "--positions", "0"}
                                 << "positions = 0 is out of range";
    QTest::newRow("-o is a file") << QStringList{"export", "%C", "-o", "%C"} << "is a file";
    QTest::newRow("-o empty") << QStringList{"export", "%C", "-o", ""} << "the folder name is empty";
    QTest::newRow("-o in a missing folder") << QStringList{"export", "%C", "-o", "%D/no/such/dir"} << "does not exist";
}

void TestExport::badInput()
{
    QFETCH(QStringList, args);
    QFETCH(QString, named);
    const std::string checkpoint = m_dir.path().toStdString() + "/good.safetensors";
    if (!QFile::exists(QString::fromStdString(checkpoint)))
        saveCheckpoint(*randomModel("rope", {}, 16, 2), CheckpointInfo{}, checkpoint);
    {
        std::ofstream corrupt(m_dir.path().toStdString() + "/corrupt.safetensors", std::ios::binary);
        corrupt << "\x10\x00\x00\x00\x00\x00\x00\x00{not json at all";
    }
    for (QString& a : args)
        a.replace("%D", m_dir.path()).replace("%C", QString::fromStdString(checkpoint));
    const test::CliResult result = test::runCli(args);
    QCOMPARE(result.exitCode, 2);
    QVERIFY2(result.err.contains(named.toUtf8()), result.err.constData());
    const QString checkpointBytes = QString::fromStdString(readText(checkpoint));
    QVERIFY(!checkpointBytes.isEmpty()); // -o naming the checkpoint left it alone
}

// A non-empty folder is refused without --force and left as it was; --force writes the export's files into it and
// leaves the others; a missing folder is made whole (no temporary folder left beside it).
void TestExport::folderRules()
{
    QTemporaryDir dir;
    const auto model = randomModel("learned", {}, 16, 5);
    const std::string checkpoint = saveModel(*model, dir.path(), "learned");
    const QString folder = dir.path() + "/out";
    QDir().mkpath(folder);
    {
        std::ofstream(folder.toStdString() + "/notes.txt") << "mine";
        std::ofstream(folder.toStdString() + "/config.json") << "{}";
    }
    const QStringList args = {"export", QString::fromStdString(checkpoint), "-o", folder};
    const test::CliResult refused = test::runCli(args);
    QCOMPARE(refused.exitCode, 2);
    QVERIFY2(refused.err.contains("the folder is not empty") && refused.err.contains("--force"),
             refused.err.constData());
    QCOMPARE(QString::fromStdString(readText(folder.toStdString() + "/config.json")), QString("{}"));

    const test::CliResult forced = test::runCli(args + QStringList{"--force"});
    QVERIFY2(forced.exitCode == 0, forced.err.constData());
    QCOMPARE(QString::fromStdString(readText(folder.toStdString() + "/notes.txt")), QString("mine"));
    QCOMPARE(
        QString::fromStdString(nlohmann::json::parse(readText(folder.toStdString() + "/config.json"))["model_type"]),
        QString("gpt2"));

    const QString fresh = dir.path() + "/fresh/";
    const test::CliResult made = test::runCli({"export", QString::fromStdString(checkpoint), "-o", fresh});
    QVERIFY2(made.exitCode == 0, made.err.constData());
    QCOMPARE(QDir(fresh).entryList(QDir::Files).size(), 5);
    QCOMPARE(QDir(dir.path()).entryList(QDir::Dirs | QDir::NoDotAndDotDot), (QStringList{"fresh", "out"}));
    // The folder's files are exactly what the core writes for this model.
    const HfExportFiles files = hfExportFiles(*model);
    for (const auto& [name, bytes] : files.files)
        QVERIFY2(readText(fresh.toStdString() + name) == bytes, name.c_str());
}

// A NoPE folder (gpt_neox, rotary_pct 0): positions none, so a rotary method is refused by name; rope_scaling beside
// rotary_pct 0 is refused as a config that rotates nothing.
void TestExport::noRotaryFolder()
{
    QTemporaryDir dir;
    const std::string folder = dir.path().toStdString() + "/nope";
    exportHfFolder(*randomModel("none", {}, 16, 9), folder);
    QCOMPARE(QString::fromStdString(readHfConfig(folder).scheme), QString("none"));
    const test::CliResult yarn = test::runCli({"eval", QString::fromStdString(folder), "--lengths", "8", "--scaling",
                                               "yarn", "--corpus", test::writeStructuredCorpus(dir.path(), 4000)});
    QCOMPARE(yarn.exitCode, 2);
    QVERIFY2(yarn.err.contains("rotary methods apply to rope models only"), yarn.err.constData());

    nlohmann::json config = nlohmann::json::parse(readText(folder + "/config.json"));
    config["rope_scaling"] = {{"type", "linear"}, {"factor", 2.0}};
    std::ofstream(folder + "/config.json") << config.dump();
    try {
        (void)readHfConfig(folder);
        QFAIL("rope_scaling with rotary_pct 0 was read");
    } catch (const InputError& e) {
        QVERIFY2(QByteArray(e.what()).contains("rotary_pct = 0, which rotates no dim"), e.what());
    }
}

void TestExport::labPasskeyThroughFolder_data()
{
    QTest::addColumn<int>("length");
    QTest::addColumn<double>("depth");
    // Trained at lengths up to 16 (tests/data/export/passkey.safetensors): inside, at and past the training length.
    for (int length : {8, 16, 24})
        for (double depth : {0.0, 0.5, 1.0})
            QTest::addRow("length %d depth %g", length, depth) << length << depth;
}

// The lab's own passkey prompts ("...key:K;...key?=K.") read by the exported folder through core/hf give, example by
// example, the greedy answer bytes and the correctness the lab model gives (the scoring of eval CHECKPOINT --task).
void TestExport::labPasskeyThroughFolder()
{
    QFETCH(int, length);
    QFETCH(double, depth);
    const LoadedCheckpoint loaded = loadCheckpoint(POSITIONLAB_TEST_DATA "/export/passkey.safetensors");
    const std::string folder = m_dir.path().toStdString() + "/passkey";
    if (!QFile::exists(QString::fromStdString(folder)))
        exportHfFolder(*loaded.model, folder);
    const HfModel hf(folder);
    const SchemeSpec positions = hfPositionSpec(hf.config());
    const NextBytePredictor lab = modelPredictor(*loaded.model);
    int labCorrect = 0, folderCorrect = 0;
    for (const TaskExample& example : taskTestExamples(TaskKind::Passkey, length, depth, 20, 1)) {
        const int T = static_cast<int>(example.bytes.size()) - 1;
        std::vector<uint8_t> labArgmax(T), folderArgmax(T);
        lab(example.bytes.data(), 1, T, labArgmax.data());
        const HfMatrix logits = hf.logits(std::vector<int>(example.bytes.begin(), example.bytes.end() - 1), positions);
        for (int t = 0; t < T; ++t) {
            Eigen::Index best = 0;
            logits.row(t).maxCoeff(&best);
            folderArgmax[t] = static_cast<uint8_t>(best);
        }
        // Every position's greedy byte, the answer's included.
        QCOMPARE(folderArgmax, labArgmax);
        const bool labRight = greedyAnswerCorrect(example, labArgmax.data());
        QCOMPARE(greedyAnswerCorrect(example, folderArgmax.data()), labRight);
        labCorrect += labRight;
        folderCorrect += greedyAnswerCorrect(example, folderArgmax.data());
    }
    QCOMPARE(folderCorrect, labCorrect);
    // The lab side is eval CHECKPOINT --task passkey's count of the same cell (its default seed 1).
    const test::CliResult eval = test::runCli({"eval", POSITIONLAB_TEST_DATA "/export/passkey.safetensors", "--task",
                                               "passkey", "--lengths", QString::number(length), "--depths",
                                               QString::number(depth), "--examples", "20", "--json", "--quiet"});
    QVERIFY2(eval.exitCode == 0, eval.err.constData());
    QCOMPARE(nlohmann::json::parse(eval.out.toStdString())["rows"][0]["correct"].get<int>(), labCorrect);
    qInfo("length %d depth %g: %d of 20 correct, lab and folder alike", length, depth, labCorrect);
}

void TestExport::folderPasskeyThroughLab_data()
{
    QTest::addColumn<QString>("method");
    QTest::newRow("none") << "none";
    QTest::newRow("pi") << "pi";
    QTest::newRow("yarn") << "yarn";
}

// `eval DIR --task passkey` on the exported passkey model: every example of --examples-out (RULER's prompt, in the
// folder's byte ids) scored again by the lab model itself under the same method gives the same greedy answer tokens
// and the same correctness. The folder task's prompts are not the lab task's ("key:K;"), so the per-example
// comparison on the same prompt ids is what is comparable (docs/your-model.md, Export a lab model).
void TestExport::folderPasskeyThroughLab()
{
    QFETCH(QString, method);
    const QString checkpoint = POSITIONLAB_TEST_DATA "/export/passkey.safetensors";
    const QString folder = m_dir.path() + "/passkey_retrieval";
    if (!QFileInfo::exists(folder))
        QCOMPARE(test::runCli({"export", checkpoint, "-o", folder}).exitCode, 0);
    const QString examples = m_dir.path() + "/passkey_" + method + ".jsonl";
    const test::CliResult eval =
        test::runCli({"eval", folder, "--task", "passkey", "--lengths", "256,320", "--depths", "0,0.5,1", "--examples",
                      "3", "--compare", method, "--corpus", test::writeStructuredCorpus(m_dir.path(), 20000),
                      "--examples-out", examples, "-o", m_dir.path() + "/passkey_" + method + ".json"});
    QVERIFY2(eval.exitCode == 0, eval.err.constData());

    // The method's parameters as the run resolved them (factor = the longest length / the context, as eval --compare
    // does), from its JSON output, set on the lab model.
    const nlohmann::json run =
        nlohmann::json::parse(readText((m_dir.path() + "/passkey_" + method + ".json").toStdString()));
    std::vector<std::string> settings;
    for (const auto& [name, value] : run["methods"][0]["params"].items())
        settings.push_back(name + "=" + QString::number(value.get<double>(), 'g', 17).toStdString());
    LoadedCheckpoint loaded = loadCheckpoint(checkpoint.toStdString());
    loaded.model->setScaling(method.toStdString(), settings);
    std::ifstream lines(examples.toStdString());
    int count = 0, rightCount = 0;
    for (std::string line; std::getline(lines, line); ++count) {
        const nlohmann::json e = nlohmann::json::parse(line);
        QCOMPARE(QString::fromStdString(e["method"]), method);
        const std::vector<int> prompt = e["prompt_ids"], answer = e["answer_ids"];
        std::vector<int> ids = prompt;
        ids.insert(ids.end(), answer.begin(), answer.end() - 1);
        const std::vector<float> logits = labLogits(*loaded.model, ids);
        std::vector<int> output;
        bool correct = true;
        for (size_t i = 0; i < answer.size() && correct; ++i) {
            const float* row = logits.data() + (prompt.size() - 1 + i) * 256;
            output.push_back(static_cast<int>(std::max_element(row, row + 256) - row));
            correct = output.back() == answer[i];
        }
        // Past the first wrong byte, --examples-out shows what greedy decoding goes on to write.
        while (output.size() < answer.size()) {
            std::vector<int> text = prompt;
            text.insert(text.end(), output.begin(), output.end());
            const std::vector<float> more = labLogits(*loaded.model, text);
            const float* row = more.data() + (text.size() - 1) * 256;
            output.push_back(static_cast<int>(std::max_element(row, row + 256) - row));
        }
        QCOMPARE(e["output_ids"].get<std::vector<int>>(), output);
        QCOMPARE(e["correct"].get<bool>(), correct);
        rightCount += correct;
    }
    QCOMPARE(count, 2 * 3 * 3); // lengths x depths x examples
    qInfo("%d examples, %d correct through both", count, rightCount);
}

void TestExport::labExamplesThroughFolder_data()
{
    QTest::addColumn<QStringList>("labScaling");
    QTest::addColumn<QString>("method");
    QTest::newRow("none") << QStringList{} << "none";
    QTest::newRow("pi factor 2") << QStringList{"--scaling", "pi", "--set", "factor=2"} << "pi:factor=2";
    QTest::newRow("yarn factor 2") << QStringList{"--scaling", "yarn", "--set", "factor=2"} << "yarn:factor=2";
    QTest::newRow("self-extend") << QStringList{"--scaling", "self-extend", "--set", "group=2", "--set", "window=8"}
                                 << "self-extend:group=2:window=8";
}

// The lab's own passkey prompts (eval CHECKPOINT --task passkey --examples-out) scored through the exported folder
// (eval DIR --examples-in --compare M): example by example the same output (completed past a wrong byte by greedy
// decoding: the folder's cache, the lab's recomputation) and correctness, and the same accuracy per cell, as the lab
// model under the same method (issue 30 s.4's path: a lab passkey model's heatmaps through the folder under methods).
void TestExport::labExamplesThroughFolder()
{
    QFETCH(QStringList, labScaling);
    QFETCH(QString, method);
    const QString checkpoint = POSITIONLAB_TEST_DATA "/export/passkey.safetensors";
    const QString folder = m_dir.path() + "/passkey_prompts";
    if (!QFileInfo::exists(folder))
        QCOMPARE(test::runCli({"export", checkpoint, "-o", folder}).exitCode, 0);
    const QString tag = QString::number(QTest::currentDataTag() ? qHash(QString(QTest::currentDataTag())) : 0);
    const QString labLines = m_dir.path() + "/lab_" + tag + ".jsonl", folderLines = m_dir.path() + "/f_" + tag + ".jsonl";
    const test::CliResult lab =
        test::runCli(QStringList{"eval", checkpoint, "--task", "passkey", "--lengths", "8,24", "--depths", "0,1",
                                 "--examples", "6", "--quiet", "--json", "--examples-out", labLines} +
                     labScaling);
    QVERIFY2(lab.exitCode == 0, lab.err.constData());
    const test::CliResult viaFolder =
        test::runCli({"eval", folder, "--examples-in", labLines, "--compare", method, "--quiet", "--json",
                      "--examples-out", folderLines});
    QVERIFY2(viaFolder.exitCode == 0, viaFolder.err.constData());

    std::ifstream a(labLines.toStdString()), b(folderLines.toStdString());
    int count = 0, wrong = 0;
    for (std::string la, lb; std::getline(a, la);) {
        QVERIFY(std::getline(b, lb));
        const nlohmann::json x = nlohmann::json::parse(la), y = nlohmann::json::parse(lb);
        for (const char* key : {"length", "depth", "prompt_ids", "needle_span", "answer_ids", "output_ids", "correct"})
            QVERIFY2(x[key] == y[key], (std::string(key) + ": lab " + x[key].dump() + ", folder " + y[key].dump() +
                                        " on line " + std::to_string(count + 1))
                                           .c_str());
        QCOMPARE(y["output_ids"].size(), y["answer_ids"].size());
        wrong += !x["correct"].get<bool>();
        ++count;
    }
    QCOMPARE(count, 2 * 2 * 6);
    // The cells: the lab's table (length, examples, correct, depth, accuracy) against the folder's run.
    const nlohmann::json labTable = nlohmann::json::parse(lab.out), folderRun = nlohmann::json::parse(viaFolder.out);
    const nlohmann::json& cells = folderRun["methods"][0]["cells"];
    QCOMPARE(cells.size(), size_t(4));
    for (const nlohmann::json& cell : cells) {
        bool found = false;
        for (const nlohmann::json& row : labTable["rows"])
            if (row["length"] == cell["length"] && row["depth"] == cell["depth"]) {
                QCOMPARE(row["correct"].get<int>(), cell["correct"].get<int>());
                found = true;
            }
        QVERIFY2(found, cell.dump().c_str());
    }
    qInfo("%d examples, %d wrong, the same through both", count, wrong);
}

PLAB_QTEST_APPLESS_MAIN(TestExport)
#include "tst_export.moc"
