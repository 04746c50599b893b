// Hugging Face model folders: logits of every family against tests/data/hf's references, and every bad input refused.
#include "attention/attention.h"
#include "attention/rotary_cache.h"
#include "base/errors.h"
#include "base/npy.h"
#include "cli_runner.h"
#include "compare.h"
#include "hf/hf_config.h"
#include "hf/hf_model.h"
#include "runs/method_comparison.h"
#include "test_main.h"

#include <QtTest>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <numeric>

using namespace plab;
namespace fs = std::filesystem;

namespace {

std::string hfData(const char* name)
{
    return std::string(POSITIONLAB_TEST_DATA) + "/hf/" + name;
}

std::vector<int> idsOf(const std::string& folder)
{
    std::ifstream in(folder + "/ids.json");
    return nlohmann::json::parse(in).get<std::vector<int>>();
}

// A copy of a tiny folder to break: config.json edited by `edit`, the files as they are.
std::string brokenCopy(const QTemporaryDir& dir, const char* name, const std::function<void(nlohmann::json&)>& edit)
{
    const std::string to = (dir.path() + "/" + name).toStdString();
    fs::copy(hfData(name), to, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    std::ifstream in(to + "/config.json");
    nlohmann::json config = nlohmann::json::parse(in);
    in.close();
    edit(config);
    std::ofstream(to + "/config.json") << config.dump(2);
    return to;
}

} // namespace

class TestHf : public QObject {
    Q_OBJECT

private slots:
    void logitsMatchReference_data();
    void logitsMatchReference();
    void methodComparisonDefaultsRule_data();
    void methodComparisonDefaultsRule();
    void methodComparisonCostModel();
    void methodComparisonBudget_data();
    void methodComparisonBudget();
    void configMapsOntoTheLab_data();
    void configMapsOntoTheLab();
    void badInputRefused_data();
    void badInputRefused();
    void cliInspectAndLogits();
    void cliBadInputExitsTwo_data();
    void cliBadInputExitsTwo();
    void groupedQueryAttentionReadsSharedHeads_data();
    void groupedQueryAttentionReadsSharedHeads();
    void evaluationMatchesReferenceLogits_data();
    void evaluationMatchesReferenceLogits();
    void cliEvalMatchesLogits_data();
    void cliEvalMatchesLogits();
    void cliFrequenciesOfFolder_data();
    void cliFrequenciesOfFolder();
    void lossesInRowBlocksMatchLogits_data();
    void lossesInRowBlocksMatchLogits();
    void bf16WithinStatedTolerance_data();
    void bf16WithinStatedTolerance();
    void bf16MatchesNumpyEmulation_data() { bf16WithinStatedTolerance_data(); }
    void bf16MatchesNumpyEmulation();
    void rotaryTablesSharedAcrossCalls_data();
    void rotaryTablesSharedAcrossCalls();
};

void TestHf::logitsMatchReference_data()
{
    QTest::addColumn<QString>("folder");
    QTest::addColumn<QString>("reference"); // config, pi, yarn
    QTest::addColumn<QString>("scaling");   // "" = the config's own
    const char* rope[] = {"llama_llama3_bf16", "llama_yarn_v5_shards", "mistral_linear", "qwen2", "qwen3", "smollm3",
                          "gpt_neox",          "llama_longrope"};
    for (const char* f : rope) {
        QTest::addRow("%s config", f) << f << "config"
                                      << "";
        QTest::addRow("%s pi zero-shot", f) << f << "pi"
                                            << "pi";
        QTest::addRow("%s yarn zero-shot", f) << f << "yarn"
                                              << "yarn";
    }
    // The position-remapping methods through the kernel's rotation (issue 20): rotate_half over every dim with GQA,
    // and partial rotary.
    for (const char* f : {"qwen2", "gpt_neox"}) {
        QTest::addRow("%s rerope zero-shot", f) << f << "rerope"
                                                << "rerope";
        QTest::addRow("%s self-extend zero-shot", f) << f << "self_extend"
                                                     << "self-extend";
    }
    QTest::addRow("gpt2 learned") << "gpt2"
                                  << "config"
                                  << "";
    QTest::addRow("bloom alibi 6 heads") << "bloom"
                                         << "config"
                                         << "";
    // 12 ids stay within longrope's original context 16: its short factors (the 24 of the row above read the long).
    QTest::addRow("llama_longrope short factors") << "llama_longrope"
                                                  << "config_short"
                                                  << "";
}

// The bound of issue 19: max |ours - ref| <= 1e-3 max(1, max |ref|), in float32.
void TestHf::logitsMatchReference()
{
    QFETCH(QString, folder);
    QFETCH(QString, reference);
    QFETCH(QString, scaling);
    const std::string dir = hfData(folder.toUtf8().constData());
    const HfModel model(dir);
    // Zero-shot pi and yarn use factor 4; yarn's L is the model's context, as the reference's
    // original_max_position_embeddings = max_position_embeddings.
    // ReRoPE and Self-Extend: make_hf_tiny.py's REMAPS.
    std::vector<std::string> settings;
    if (scaling == "rerope")
        settings = {"window=6"};
    else if (scaling == "self-extend")
        settings = {"window=5", "group=3"};
    else if (!scaling.isEmpty())
        settings = {"factor=4"};
    if (scaling == "yarn")
        settings.push_back("original-context=0");
    const SchemeSpec positions = hfPositionSpec(model.config(), scaling.toStdString(), settings);
    std::vector<int> ids = idsOf(dir);
    if (reference == "config_short")
        ids.resize(12); // make_hf_tiny.py's SHORT
    const HfMatrix ours = model.logits(ids, positions);
    const NpyArray ref = readNpy(dir + "/ref_" + reference.toStdString() + ".npy");
    QCOMPARE(ref.shape, (std::vector<int64_t>{ours.rows(), ours.cols()}));
    test::ErrorMax worst;
    double largest = 0;
    for (Eigen::Index i = 0; i < ours.size(); ++i) {
        worst.addAt(i, ours.data()[i], ref.data[i]);
        largest = std::max(largest, std::abs(static_cast<double>(ref.data[i])));
    }
    const double bound = 1e-3 * std::max(1.0, largest);
    QVERIFY2(worst.within(bound), qPrintable(QStringLiteral("%1 > %2 (max |ref| %3) under %4")
                                                 .arg(worst.message())
                                                 .arg(bound)
                                                 .arg(largest)
                                                 .arg(QString::fromStdString(hfPositionText(positions)))));
}

void TestHf::configMapsOntoTheLab_data()
{
    QTest::addColumn<QString>("folder");
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<int>("kvHeads");
    QTest::addColumn<int>("headDim");
    QTest::addColumn<int>("rotaryDim");
    QTest::addColumn<QString>("positions"); // hfPositionText of the config's own scaling
    QTest::addRow("llama3, rope_scaling spelling, explicit head_dim")
        << "llama_llama3_bf16"
        << "rope" << 2 << 12 << 12
        << "rope+llama3 (factor 8, low-freq-factor 1, high-freq-factor 4, original-context 16)";
    QTest::addRow("yarn, rope_parameters spelling")
        << "llama_yarn_v5_shards"
        << "rope" << 4 << 8 << 8
        << "rope+yarn (factor 4, beta-fast 32, beta-slow 1, attention-factor 0, original-context 16)";
    QTest::addRow("linear as type") << "mistral_linear"
                                    << "rope" << 2 << 8 << 8 << "rope+pi (factor 2)";
    QTest::addRow("gpt_neox rotary_pct 0.5") << "gpt_neox"
                                             << "rope" << 4 << 8 << 4 << "rope";
    QTest::addRow("longrope, Phi-3's top-level original_max_position_embeddings")
        << "llama_longrope"
        << "rope" << 2 << 8 << 8 << "rope+longrope (factor 4, attention-factor 0, original-context 16)";
    QTest::addRow("bloom") << "bloom"
                           << "alibi" << 6 << 8 << 0 << "alibi";
    QTest::addRow("gpt2") << "gpt2"
                          << "learned" << 4 << 8 << 0 << "learned";
}

void TestHf::configMapsOntoTheLab()
{
    QFETCH(QString, folder);
    QFETCH(QString, scheme);
    QFETCH(int, kvHeads);
    QFETCH(int, headDim);
    QFETCH(int, rotaryDim);
    QFETCH(QString, positions);
    const HfConfig c = readHfConfig(hfData(folder.toUtf8().constData()));
    QCOMPARE(QString::fromStdString(c.scheme), scheme);
    QCOMPARE(c.kvHeads, kvHeads);
    QCOMPARE(c.headDim, headDim);
    QCOMPARE(c.rotaryDim, rotaryDim);
    QCOMPARE(QString::fromStdString(hfPositionText(hfPositionSpec(c))), positions);
}

void TestHf::badInputRefused_data()
{
    QTest::addColumn<QString>("folder");
    QTest::addColumn<QString>("edit");     // what to break
    QTest::addColumn<QString>("expected"); // in the message
    QTest::addRow("unknown model_type") << "qwen2"
                                        << "model_type"
                                        << "model_type \"t5\" is not supported; supported: gpt2";
    QTest::addRow("unknown rope type") << "mistral_linear"
                                       << "rope type"
                                       << "rope_scaling.rope_type' = \"su\"";
    QTest::addRow("longrope without lists") << "mistral_linear"
                                            << "longrope"
                                            << "field 'rope_scaling.short_factor' is missing or not a list";
    QTest::addRow("longrope list of the wrong length") << "llama_longrope"
                                                       << "longrope 3"
                                                       << "'rope_scaling.long_factor' holds 3 values; allowed: one "
                                                          "per rotated pair, 4";
    QTest::addRow("longrope factor not positive") << "llama_longrope"
                                                  << "longrope 0"
                                                  << "rope_scaling.short_factor[1]' = 0 is not allowed";
    QTest::addRow("longrope original past the context") << "llama_longrope"
                                                        << "longrope original"
                                                        << "at least 1";
    QTest::addRow("missing field") << "gpt2"
                                   << "no n_embd"
                                   << "field 'n_embd' is missing";
    QTest::addRow("wrong shape") << "qwen2"
                                 << "hidden 40"
                                 << "tensor 'model.embed_tokens.weight' in ";
    QTest::addRow("missing tensor") << "llama_llama3_bf16"
                                    << "attention_bias"
                                    << "tensor 'model.layers.0.self_attn.q_proj.bias' is missing";
    QTest::addRow("missing head of untied") << "qwen2"
                                            << "untie"
                                            << "tensor 'lm_head.weight' is missing";
    QTest::addRow("too large for memory") << "qwen2"
                                          << "huge"
                                          << "this machine has";
    QTest::addRow("no config.json") << "gpt2"
                                    << "no config"
                                    << "has no config.json";
    QTest::addRow("no weights") << "gpt2"
                                << "no weights"
                                << "has no weights";
    QTest::addRow("shard missing") << "llama_yarn_v5_shards"
                                   << "no shard"
                                   << "names shard model-00002-of-00002.safetensors";
    QTest::addRow("truncated") << "gpt2"
                               << "truncate"
                               << "truncated";
    QTest::addRow("I8 dtype") << "gpt2"
                              << "I8"
                              << "has dtype I8";
}

void TestHf::badInputRefused()
{
    QFETCH(QString, folder);
    QFETCH(QString, edit);
    QFETCH(QString, expected);
    QTemporaryDir dir;
    const std::string f = folder.toStdString();
    const std::string copy = brokenCopy(dir, f.c_str(), [&](nlohmann::json& c) {
        if (edit == "model_type")
            c["model_type"] = "t5";
        else if (edit == "rope type")
            c["rope_scaling"] = {{"rope_type", "su"}, {"factor", 2}};
        else if (edit == "longrope")
            c["rope_scaling"] = {{"rope_type", "longrope"}, {"factor", 2}};
        else if (edit == "longrope 3")
            c["rope_scaling"]["long_factor"] = {1.0, 2.0, 3.0};
        else if (edit == "longrope 0")
            c["rope_scaling"]["short_factor"][1] = 0;
        else if (edit == "longrope original")
            c["original_max_position_embeddings"] = 128;
        else if (edit == "no n_embd")
            c.erase("n_embd");
        else if (edit == "hidden 40")
            c["hidden_size"] = 40;
        else if (edit == "attention_bias")
            c["attention_bias"] = true;
        else if (edit == "untie")
            c["tie_word_embeddings"] = false;
        else if (edit == "huge")
            c["hidden_size"] = 65536, c["intermediate_size"] = 262144, c["num_hidden_layers"] = 400;
    });
    if (edit == "no config")
        fs::remove(copy + "/config.json");
    if (edit == "no weights")
        fs::remove(copy + "/model.safetensors");
    if (edit == "no shard")
        fs::remove(copy + "/model-00002-of-00002.safetensors");
    if (edit == "truncate")
        fs::resize_file(copy + "/model.safetensors", fs::file_size(copy + "/model.safetensors") - 100);
    if (edit == "I8") {
        // The first tensor's dtype "F32" becomes "I8 " in place: the header keeps its length.
        std::fstream file(copy + "/model.safetensors", std::ios::in | std::ios::out | std::ios::binary);
        std::string head(4096, '\0');
        file.read(head.data(), head.size());
        const size_t at = head.find("\"dtype\":\"F32\"");
        QVERIFY(at != std::string::npos);
        file.seekp(static_cast<std::streamoff>(at + 9));
        file.write("I8\" ", 4);
    }
    try {
        const HfModel model(copy);
        QFAIL("the model was loaded");
    } catch (const InputError& e) {
        QVERIFY2(QString::fromUtf8(e.what()).contains(expected), e.what());
    }
    // The same through the command line: exit 2 and the message.
    const test::CliResult r =
        test::runCli({"logits", QString::fromStdString(copy), "--ids", "1,2", "-o", dir.path() + "/logits.npy"});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(QString::fromUtf8(r.err).contains(expected), r.err.constData());
}

// inspect --json carries the summary card's keys; logits writes what the core computes, as the reference.
void TestHf::cliInspectAndLogits()
{
    const std::string dir = hfData("llama_llama3_bf16");
    const test::CliResult inspect = test::runCli({"inspect", QString::fromStdString(dir), "--json"});
    QVERIFY2(inspect.exitCode == 0, inspect.err.constData());
    const nlohmann::json card = nlohmann::json::parse(inspect.out.toStdString());
    for (const char* key : {"family", "layers", "heads", "kv_heads", "head_dim", "vocab", "context", "scheme",
                            "rope_theta", "scaling", "parameters"})
        QVERIFY2(card.contains(key), key);
    QCOMPARE(card["kv_heads"].get<int>(), 2);
    QCOMPARE(card["head_dim"].get<int>(), 12);
    QCOMPARE(card["scaling"].get<std::string>(), std::string("llama3"));
    QTemporaryDir out;
    const QString npy = out.path() + "/logits.npy";
    std::string ids;
    for (int id : idsOf(dir))
        ids += (ids.empty() ? "" : ",") + std::to_string(id);
    const test::CliResult logits =
        test::runCli({"logits", QString::fromStdString(dir), "--ids", QString::fromStdString(ids), "-o", npy,
                      "--scaling", "yarn", "--set", "factor=4"});
    QVERIFY2(logits.exitCode == 0, logits.err.constData());
    const NpyArray ours = readNpy(npy.toStdString());
    const NpyArray ref = readNpy(dir + "/ref_yarn.npy");
    QCOMPARE(ours.shape, ref.shape);
    const test::ErrorMax worst = test::maxError(ours.data, ref.data);
    QVERIFY2(worst.within(1e-3 * 4), qPrintable(worst.message()));
}

void TestHf::cliBadInputExitsTwo_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("expected");
    const QString gpt2 = QString::fromStdString(hfData("gpt2"));
    const QString qwen2 = QString::fromStdString(hfData("qwen2"));
    const QString bloom = QString::fromStdString(hfData("bloom"));
    QTest::addRow("not a folder") << QStringList{"inspect", "/nonexistent/model"} << "does not exist";
    QTest::addRow("text longer than learned positions")
        << QStringList{"logits", gpt2, "--ids", QString("1,").repeated(40) + "1", "-o", "/tmp/x.npy"}
        << "more than the 32 learned positions";
    QTest::addRow("id out of vocabulary") << QStringList{"logits", qwen2, "--ids", "1,300", "-o", "/tmp/x.npy"}
                                          << "token id 300 at position 1 is out of range";
    QTest::addRow("unknown method") << QStringList{"logits", qwen2, "--ids", "1", "-o", "/tmp/x.npy", "--scaling", "su"}
                                    << "not a known method";
    QTest::addRow("method on alibi") << QStringList{"logits", bloom,        "--ids",     "1",
                                                    "-o",     "/tmp/x.npy", "--scaling", "pi"}
                                     << "rotary methods apply to rope models only";
    QTest::addRow("setting the method lacks")
        << QStringList{"logits", qwen2, "--ids", "1", "-o", "/tmp/x.npy", "--scaling", "pi", "--set", "beta-fast=2"}
        << "--set beta-fast=2";
    QTest::addRow("self-extend group 0") << QStringList{"logits",     qwen2,       "--ids",       "1",     "-o",
                                                        "/tmp/x.npy", "--scaling", "self-extend", "--set", "group=0"}
                                         << "group = 0 is out of range";
    QTest::addRow("self-extend window at the context")
        << QStringList{"logits",     qwen2,       "--ids",       "1",     "-o",
                       "/tmp/x.npy", "--scaling", "self-extend", "--set", "window=16"}
        << "window = 16 must be below";
    QTest::addRow("output not npy") << QStringList{"logits", qwen2, "--ids", "1", "-o", "/tmp/x.csv"} << ".npy";
    const QString mistral = QString::fromStdString(hfData("mistral_linear"));
    const QString longrope = QString::fromStdString(hfData("llama_longrope"));
    const QString corpus = QStringLiteral(POSITIONLAB_TEST_DATA) + "/../../README.md";
    QTest::addRow("eval past learned positions")
        << QStringList{"eval", gpt2, "--corpus", corpus, "--lengths", "8,64"}
        << "--lengths: 64 tokens is more than the 32 learned positions of gpt2 (n_positions in";
    QTest::addRow("eval without tokenizer.json")
        << QStringList{"eval", mistral, "--corpus", corpus} << "tokenizer.json";
    QTest::addRow("eval --compare on learned positions")
        << QStringList{"eval", gpt2, "--corpus", corpus, "--compare", "none,pi", "--lengths", "8"}
        << "needs a rotary model";
    QTest::addRow("eval length past the text")
        << QStringList{"eval", qwen2, "--corpus", corpus, "--max-bytes", "40", "--lengths", "64"} // > 1 token a byte
        << "exceed the text scored";
    QTest::addRow("eval --task a lab task on a folder")
        << QStringList{"eval", qwen2, "--task", "copy"}
        << "--task: task 'copy' is unknown; allowed: passkey, niah-single, niah-multikey, niah-multivalue";
    QTest::addRow("eval --set the method lacks")
        << QStringList{"eval", longrope, "--corpus", corpus, "--set", "beta-fast=2"} << "--set beta-fast=2";
    QTest::addRow("attention --checkpoint folder of another scheme")
        << QStringList{"attention", "alibi", "--checkpoint", qwen2, "-o", "/tmp/x.npy"}
        << "uses rope positions, not alibi";
    QTest::addRow("attention --checkpoint folder past learned positions")
        << QStringList{"attention", "--checkpoint", gpt2, "--corpus", corpus, "--length", "40", "-o", "/tmp/x.npy"}
        << "--length: 40 tokens is more than the 32 learned positions of gpt2";
    QTest::addRow("attention --checkpoint alibi folder under pi")
        << QStringList{"attention", "--checkpoint", bloom, "--corpus", corpus, "--scaling", "pi", "-o", "/tmp/x.npy"}
        << "rotary methods apply to rope models only";
    QTest::addRow("attention --checkpoint folder --layer past the model")
        << QStringList{"attention", "--checkpoint", qwen2, "--corpus", corpus, "--layer", "2", "-o", "/tmp/x.npy"}
        << "layer = 2 is out of range; allowed: integers in [0, 1]";
    QTest::addRow("entropy --checkpoint folder past learned positions")
        << QStringList{"entropy", "--checkpoint", gpt2, "--corpus", corpus, "--lengths", "8,33"}
        << "--lengths: 33 tokens is more than the 32 learned positions of gpt2";
    QTest::addRow("entropy --checkpoint folder with --qk")
        << QStringList{"entropy", "--checkpoint", qwen2, "--qk", "random"} << "--qk";
    QTest::addRow("entropy --checkpoint folder as a picture")
        << QStringList{"entropy", "--checkpoint", qwen2, "-o", "/tmp/x.png"} << "render model --model DIR --page entropy";
    QTest::addRow("frequencies of an alibi folder")
        << QStringList{"frequencies", "--model", bloom} << "rotary frequencies exist for rope models only";
    QTest::addRow("frequencies --model with --dim")
        << QStringList{"frequencies", "--model", qwen2, "--dim", "8"} << "--dim";
    QTest::addRow("render attention --checkpoint folder past learned positions")
        << QStringList{"render", "attention", "--checkpoint", gpt2, "--text", "Hello", "--repeat-to", "33", "-o",
                       "/tmp/x.png"}
        << "--repeat-to: 33 tokens is more than the 32 learned positions of gpt2";
    QTest::addRow("render attention --checkpoint folder --head past the model")
        << QStringList{"render", "attention", "--checkpoint", qwen2, "--head", "4", "-o", "/tmp/x.png"}
        << "head = 4 is out of range; allowed: integers in [0, 3]";
}

void TestHf::cliBadInputExitsTwo()
{
    QFETCH(QStringList, args);
    QFETCH(QString, expected);
    const test::CliResult r = test::runCli(args);
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(QString::fromUtf8(r.err).contains(expected), r.err.constData());
}

void TestHf::groupedQueryAttentionReadsSharedHeads_data()
{
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<int>("batch");
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("kvHeads");
    QTest::addColumn<int>("length");
    QTest::addColumn<int>("headDim");
    // heads * batch < 4 shares query blocks among threads, more heads run one per thread: both strategies.
    QTest::addRow("none 2/1 query blocks") << "none" << 1 << 2 << 1 << 150 << 12;
    QTest::addRow("alibi 6/2 heads parallel") << "alibi" << 1 << 6 << 2 << 70 << 16;
    QTest::addRow("alibi 6/3 batch 2") << "alibi" << 2 << 6 << 3 << 33 << 8;
    QTest::addRow("local 8/8 is MHA") << "local" << 1 << 8 << 8 << 40 << 16;
}

// The kernel with kvHeads reads each group's key/value head in place; it must equal the same kernel given K and V
// copied per query head (the multi-head path every other test checks), probabilities included.
void TestHf::groupedQueryAttentionReadsSharedHeads()
{
    QFETCH(QString, scheme);
    QFETCH(int, batch);
    QFETCH(int, heads);
    QFETCH(int, kvHeads);
    QFETCH(int, length);
    QFETCH(int, headDim);
    const PositionBias bias(makeSchemeSpec(scheme.toStdString(), heads, false), length);
    AttentionDims gqa{batch, heads, length, headDim};
    gqa.kvHeads = kvHeads;
    const AttentionDims mha{batch, heads, length, headDim};
    const size_t slice = static_cast<size_t>(length) * headDim;
    std::vector<float> q(mha.elements()), k(static_cast<size_t>(batch) * kvHeads * slice), v(k.size());
    uint32_t state = 12345;
    auto next = [&] {
        state = state * 1664525u + 1013904223u;
        return static_cast<float>(state >> 8) / static_cast<float>(1 << 24) * 4.0f - 2.0f;
    };
    for (float* x : {q.data(), k.data(), v.data()})
        for (size_t i = 0; i < (x == q.data() ? q.size() : k.size()); ++i)
            x[i] = next();
    std::vector<float> kFull(mha.elements()), vFull(mha.elements());
    for (int bh = 0; bh < batch * heads; ++bh) {
        const size_t from = static_cast<size_t>(gqa.keyValueSlice(bh)) * slice;
        std::copy_n(k.data() + from, slice, kFull.data() + bh * slice);
        std::copy_n(v.data() + from, slice, vFull.data() + bh * slice);
    }
    AttentionOptions options;
    options.wantProbabilities = true;
    const AttentionForward shared = attentionForward(bias, gqa, q.data(), k.data(), v.data(), options);
    const AttentionForward copied = attentionForward(bias, mha, q.data(), kFull.data(), vFull.data(), options);
    QCOMPARE(shared.out, copied.out);
    QCOMPARE(shared.probabilities, copied.probabilities);
    QCOMPARE(shared.logSumExp, copied.logSumExp);
}

void TestHf::evaluationMatchesReferenceLogits_data()
{
    QTest::addColumn<QString>("folder");
    QTest::addColumn<QString>("methods");        // "" = plain evaluateModel under the config's own scaling
    QTest::addColumn<QStringList>("references"); // one ref_*.npy per curve
    QTest::addRow("qwen2 config") << "qwen2"
                                  << "" << QStringList{"config"};
    QTest::addRow("gpt2 learned") << "gpt2"
                                  << "" << QStringList{"config"};
    QTest::addRow("bloom alibi") << "bloom"
                                 << "" << QStringList{"config"};
    QTest::addRow("qwen2 under yarn and pi")
        << "qwen2"
        << "yarn:factor=4:original-context=0,pi:factor=4" << QStringList{"yarn", "pi"};
    // The config's own method keeps the config's settings (llama3 factor 8 ...), as the reference does.
    QTest::addRow("llama3 own and pi") << "llama_llama3_bf16"
                                       << "llama3,pi:factor=4" << QStringList{"config", "pi"};
}

// One window of all but the last reference id is the reference's first T - 1 rows (causal): the evaluation's loss
// must be the mean negative log-likelihood of the next ids under the reference logits, its perplexity the exp of it.
void TestHf::evaluationMatchesReferenceLogits()
{
    QFETCH(QString, folder);
    QFETCH(QString, methods);
    QFETCH(QStringList, references);
    const std::string dir = hfData(folder.toUtf8().constData());
    const std::vector<int> ids = idsOf(dir);
    HfModel hf(dir);
    HfLanguageModel model(hf);
    EvalOptions options;
    const int T = static_cast<int>(ids.size()) - 1;
    options.lengths = {T};
    const std::vector<int32_t> tokens(ids.begin(), ids.end());
    std::vector<EvalPoint> points;
    if (methods.isEmpty()) {
        points = evaluateModel(model, tokens, options);
    } else {
        const std::vector<MethodCurve> curves =
            evaluateUnderMethods(model, tokens, options, parseMethodList(methods.toStdString()));
        QCOMPARE(curves.size(), static_cast<size_t>(references.size()));
        for (const MethodCurve& c : curves)
            points.push_back(c.points.at(0));
        QCOMPARE(model.scaling(), hf.config().scheme == "rope" ? hf.config().scaling : std::string("none"));
    }
    for (int r = 0; r < references.size(); ++r) {
        const NpyArray ref = readNpy(dir + "/ref_" + references[r].toStdString() + ".npy");
        const int64_t V = ref.shape.at(1);
        double nll = 0;
        for (int t = 0; t < T; ++t) {
            const float* row = ref.data.data() + t * V;
            double sum = 0;
            for (int64_t v = 0; v < V; ++v)
                sum += std::exp(static_cast<double>(row[v]));
            nll += std::log(sum) - row[ids[t + 1]];
        }
        nll /= T;
        const EvalPoint& p = points.at(r);
        QCOMPARE(p.tokens, static_cast<size_t>(T));
        QVERIFY2(std::abs(p.loss - nll) <= 2e-3 * std::max(1.0, nll),
                 qPrintable(QStringLiteral("%1: loss %2, reference %3").arg(references[r]).arg(p.loss).arg(nll)));
        QVERIFY(std::abs(p.perplexity - std::exp(p.loss)) <= 1e-9 * p.perplexity);
    }
}

void TestHf::cliEvalMatchesLogits_data()
{
    QTest::addColumn<QString>("folder");
    QTest::addColumn<int>("length");
    QTest::addColumn<QString>("compare");       // "" = plain eval; else eval --compare with this one method
    QTest::addColumn<QStringList>("positions"); // what logits is given for the same positions
    QTest::addRow("qwen2 windows of 8") << "qwen2" << 8 << "" << QStringList{};
    QTest::addRow("gpt2 learned, windows of 16") << "gpt2" << 16 << "" << QStringList{};
    QTest::addRow("bloom alibi, windows of 8") << "bloom" << 8 << "" << QStringList{};
    QTest::addRow("longrope, windows of 20 read the long factors") << "llama_longrope" << 20 << "" << QStringList{};
    QTest::addRow("longrope, windows of 12 read the short factors") << "llama_longrope" << 12 << "" << QStringList{};
    QTest::addRow("qwen2 under yarn zero-shot")
        << "qwen2" << 8 << "" << QStringList{"--scaling", "yarn", "--set", "factor=4"};
    QTest::addRow("qwen2 --compare pi") << "qwen2" << 8 << "pi:factor=4"
                                        << QStringList{"--scaling", "pi", "--set", "factor=4"};
}

// eval DIR on a text: its loss must be the mean NLL of each window's next tokens under the logits `logits DIR --ids`
// writes for that window (the text tokenized by `tokenize DIR --json`), its perplexity exp(loss); lengths in tokens.
void TestHf::cliEvalMatchesLogits()
{
    QFETCH(QString, folder);
    QFETCH(int, length);
    QFETCH(QString, compare);
    QFETCH(QStringList, positions);
    const QString dir = QString::fromStdString(hfData(folder.toUtf8().constData()));
    QTemporaryDir tmp;
    // A corpus file must hold 2048 bytes; --max-bytes 300 scores its first 300 (ASCII: no character is cut).
    const QString corpus = tmp.path() + "/text.txt", scoredText = tmp.path() + "/scored.txt";
    const QByteArray sentence = "The theory then: the other thin thread thinks on, and then the end of it is near. "
                                "In the heat the hen ate the oat; on and on, then the other one. ";
    for (const auto& [path, bytes] :
         {std::pair{corpus, sentence.repeated(16)}, {scoredText, sentence.repeated(16).left(300)}}) {
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(bytes);
    }
    const test::CliResult tok = test::runCli({"tokenize", dir, "--file", scoredText, "--json"});
    QVERIFY2(tok.exitCode == 0, tok.err.constData());
    const std::vector<int> ids = nlohmann::json::parse(tok.out.toStdString())["ids"].get<std::vector<int>>();
    QVERIFY(ids.size() > static_cast<size_t>(length) + 1);

    QStringList evalArgs{"eval",
                         dir,
                         "--corpus",
                         corpus,
                         "--split",
                         "all",
                         "--max-bytes",
                         "300",
                         "--lengths",
                         QString::number(length),
                         "--quiet",
                         "-o",
                         tmp.path() + "/eval.csv"};
    if (compare.isEmpty())
        evalArgs += positions;
    else
        evalArgs += QStringList{"--compare", compare};
    const test::CliResult eval = test::runCli(evalArgs);
    QVERIFY2(eval.exitCode == 0, eval.err.constData());
    QFile csv(tmp.path() + "/eval.csv");
    QVERIFY(csv.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(csv.readAll()).trimmed().split('\n');
    QCOMPARE(lines.size(), 2);
    QCOMPARE(lines[0], compare.isEmpty() ? QString("length,loss,perplexity,bits_per_token")
                                         : QString("method,length,loss,perplexity,bits_per_token"));
    QStringList row = lines[1].split(',');
    if (!compare.isEmpty())
        row.removeFirst();
    QCOMPARE(row[0].toInt(), length);
    const double loss = row[1].toDouble(), perplexity = row[2].toDouble();

    // The reference: non-overlapping windows of `length` over the ids, each through `logits` on its own.
    const size_t scored = ids.size() - 1;
    double nll = 0;
    for (size_t start = 0; start < scored; start += length) {
        const size_t T = std::min<size_t>(length, scored - start);
        QString window;
        for (size_t t = 0; t < T; ++t)
            window += (t ? "," : "") + QString::number(ids[start + t]);
        const QString npy = tmp.path() + "/window.npy";
        const test::CliResult logits = test::runCli(QStringList{"logits", dir, "--ids", window, "-o", npy} + positions);
        QVERIFY2(logits.exitCode == 0, logits.err.constData());
        const NpyArray l = readNpy(npy.toStdString());
        const int64_t V = l.shape.at(1);
        for (size_t t = 0; t < T; ++t) {
            const float* r = l.data.data() + t * V;
            const double top = *std::max_element(r, r + V);
            double sum = 0;
            for (int64_t v = 0; v < V; ++v)
                sum += std::exp(r[v] - top);
            nll += top + std::log(sum) - r[ids[start + t + 1]];
        }
    }
    nll /= static_cast<double>(scored);
    QVERIFY2(std::abs(loss - nll) <= 1e-5 * std::max(1.0, nll),
             qPrintable(QStringLiteral("eval loss %1, from the logits %2").arg(loss, 0, 'g', 10).arg(nll, 0, 'g', 10)));
    QVERIFY(std::abs(perplexity - std::exp(nll)) <= 1e-4 * perplexity);
}

void TestHf::cliFrequenciesOfFolder_data()
{
    QTest::addColumn<int>("length");
    QTest::addColumn<QList<double>>("factors"); // config.json's list the length selects
    QTest::addRow("n = L = 16: short_factor") << 16 << QList<double>{1.0, 1.25, 1.5, 2.0};
    QTest::addRow("n = 24 > L: long_factor") << 24 << QList<double>{1.0, 2.5, 4.0, 8.0};
}

// frequencies --model DIR shows the folder's own rope: for longrope θ'_i = θ_i / f_i from its config's lists.
void TestHf::cliFrequenciesOfFolder()
{
    QFETCH(int, length);
    QFETCH(QList<double>, factors);
    const test::CliResult r = test::runCli({"frequencies", "--model", QString::fromStdString(hfData("llama_longrope")),
                                            "--length", QString::number(length), "--json"});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const nlohmann::json j = nlohmann::json::parse(r.out.toStdString());
    QCOMPARE(j["method"].get<std::string>(), std::string("longrope"));
    const std::vector<double> theta = j["theta"], scaled = j["theta_scaled"];
    QCOMPARE(scaled.size(), static_cast<size_t>(factors.size()));
    for (int i = 0; i < factors.size(); ++i) {
        QVERIFY(std::abs(theta[i] - std::pow(10000.0, -2.0 * i / 8)) <= 1e-12);
        QVERIFY(std::abs(scaled[i] - theta[i] / factors[i]) <= 1e-12 * theta[i]);
    }
}

// Next-token losses in nats of `ids` under logits (T, vocab): log-sum-exp in double minus the target's logit.
static std::vector<double> lossesFromLogits(const HfMatrix& logits, const std::vector<int>& ids)
{
    std::vector<double> losses;
    for (size_t t = 0; t + 1 < ids.size(); ++t) {
        const auto row = logits.row(static_cast<Eigen::Index>(t)).cast<double>();
        const double top = row.maxCoeff();
        losses.push_back(top + std::log((row.array() - top).exp().sum()) - row[ids[t + 1]]);
    }
    return losses;
}

void TestHf::lossesInRowBlocksMatchLogits_data()
{
    QTest::addColumn<QString>("folder");
    QTest::addColumn<int>("blockRows");
    const char* folders[] = {"qwen2", "gpt2", "bloom", "llama_llama3_bf16", "smollm3"};
    for (const char* f : folders)
        for (int rows : {1, 5, kHfLossRows})
            QTest::addRow("%s, %d rows a block", f, rows) << f << rows;
}

// The perplexity pass's losses, its head applied a block of rows at a time (23 targets: blocks of 5 leave 3), are the
// losses of the whole window's logits.
void TestHf::lossesInRowBlocksMatchLogits()
{
    QFETCH(QString, folder);
    QFETCH(int, blockRows);
    const std::string dir = hfData(folder.toUtf8().constData());
    const HfModel model(dir);
    const std::vector<int> ids = idsOf(dir);
    const SchemeSpec positions = hfPositionSpec(model.config());
    const std::vector<double> expected = lossesFromLogits(model.logits(ids, positions), ids);
    const std::vector<int> next(ids.begin() + 1, ids.end());
    const std::vector<double> ours = model.nextTokenLosses(ids, next, positions, blockRows);
    QCOMPARE(ours.size(), expected.size());
    for (size_t t = 0; t < ours.size(); ++t)
        QVERIFY2(std::abs(ours[t] - expected[t]) <= 1e-5 * std::max(1.0, expected[t]),
                 qPrintable(QStringLiteral("row %1: %2 against %3").arg(t).arg(ours[t]).arg(expected[t])));
}

void TestHf::bf16WithinStatedTolerance_data()
{
    QTest::addColumn<QString>("folder");
    const char* folders[] = {
        "gpt2",  "bloom", "gpt_neox", "llama_llama3_bf16", "llama_longrope", "llama_yarn_v5_shards", "mistral_linear",
        "qwen2", "qwen3", "smollm3"};
    for (const char* f : folders)
        QTest::addRow("%s", f) << f;
}

// BF16 products against float32 on the tiny folders: README's stated tolerance, max |bf16 - f32| <= 3 % of max |f32|
// and the mean next-token loss of the ids within 0.05 nats (measured: at most 2.1 % and 0.030 nats, on the tiny
// random models whose logits reach 31). A product in the wrong layout or on the wrong rows would be off by the logits'
// own size; identical logits would mean the BF16 path never ran. Half the weight bytes.
void TestHf::bf16WithinStatedTolerance()
{
    QFETCH(QString, folder);
    try {
        checkHfPrecisionSupported(HfPrecision::BFloat16);
    } catch (const InputError& e) {
        QSKIP(e.what());
    }
    const std::string dir = hfData(folder.toUtf8().constData());
    const HfModel f32(dir), bf16(dir, HfPrecision::BFloat16);
    QCOMPARE(bf16.precision(), HfPrecision::BFloat16);
    QCOMPARE(bf16.weightBytes() * 2, f32.weightBytes());
    const std::vector<int> ids = idsOf(dir);
    const SchemeSpec positions = hfPositionSpec(f32.config());
    const HfMatrix exact = f32.logits(ids, positions), rounded = bf16.logits(ids, positions);
    const double largest = exact.cwiseAbs().maxCoeff();
    const double worst = (rounded - exact).cwiseAbs().maxCoeff();
    QVERIFY2(worst > 0, "bf16 logits equal float32's: the BF16 products did not run");
    QVERIFY2(worst <= 0.03 * largest,
             qPrintable(QStringLiteral("max |bf16 - f32| = %1 > 3 % of max |f32| %2").arg(worst).arg(largest)));
    const std::vector<double> lossExact = lossesFromLogits(exact, ids), lossRounded = lossesFromLogits(rounded, ids);
    const double meanExact = std::accumulate(lossExact.begin(), lossExact.end(), 0.0) / lossExact.size();
    const double meanRounded = std::accumulate(lossRounded.begin(), lossRounded.end(), 0.0) / lossRounded.size();
    QVERIFY2(std::abs(meanRounded - meanExact) <= 0.05,
             qPrintable(QStringLiteral("mean loss %1 nats (bf16) against %2 (f32)").arg(meanRounded).arg(meanExact)));
    // The blocked losses run the same BF16 head.
    const std::vector<int> next(ids.begin() + 1, ids.end());
    const std::vector<double> blocked = bf16.nextTokenLosses(ids, next, positions, 5);
    for (size_t t = 0; t < blocked.size(); ++t)
        QVERIFY(std::abs(blocked[t] - lossRounded[t]) <= 1e-5 * std::max(1.0, lossRounded[t]));
}

// BF16 logits against make_hf_tiny.py's NumPy emulation of the BF16 products (ref_bf16.npy: every matrix and every
// product's input rounded to BF16), a reference that any CPU computes. Closer to it than to the float32 logits by far:
// the rows check the rounding itself, not only that it stays within the float32 tolerance. The product path needs
// avx512_bf16 (core refuses it elsewhere): on such a CPU the row is skipped, and CTest's tst_hf_bf16 says so.
void TestHf::bf16MatchesNumpyEmulation()
{
    QFETCH(QString, folder);
    try {
        checkHfPrecisionSupported(HfPrecision::BFloat16);
    } catch (const InputError& e) {
        QSKIP(e.what());
    }
    const std::string dir = hfData(folder.toUtf8().constData());
    const HfModel bf16(dir, HfPrecision::BFloat16);
    const std::vector<int> ids = idsOf(dir);
    const HfMatrix ours = bf16.logits(ids, hfPositionSpec(bf16.config()));
    const NpyArray emulated = readNpy(dir + "/ref_bf16.npy"), exact = readNpy(dir + "/ref_config.npy");
    QCOMPARE(emulated.shape, (std::vector<int64_t>{ours.rows(), ours.cols()}));
    test::ErrorMax toEmulation, toFloat32;
    double largest = 0, meanToEmulation = 0, meanToFloat32 = 0;
    for (Eigen::Index i = 0; i < ours.size(); ++i) {
        toEmulation.addAt(i, ours.data()[i], emulated.data[size_t(i)]);
        toFloat32.addAt(i, ours.data()[i], exact.data[size_t(i)]);
        largest = std::max(largest, std::abs(double(emulated.data[size_t(i)])));
        meanToEmulation += std::abs(double(ours.data()[i]) - emulated.data[size_t(i)]) / double(ours.size());
        meanToFloat32 += std::abs(double(ours.data()[i]) - exact.data[size_t(i)]) / double(ours.size());
    }
    qInfo("%s: |bf16 - emulation| max %.3g mean %.3g; |bf16 - f32 reference| max %.3g mean %.3g; max |emulation| %.3g",
          qPrintable(folder), toEmulation.value(), meanToEmulation, toFloat32.value(), meanToFloat32, largest);
    // Most folders agree to float rounding (about 1e-6); an activation the float64 reference rounds to the other BF16
    // neighbour (a near tie) moves its row a little (mistral_linear: max 0.3 % of max |logit|, mean 1/7 of float32's).
    QVERIFY2(toEmulation.within(5e-3 * largest), qPrintable(toEmulation.message("against the emulation")));
    QVERIFY2(toFloat32.finite() && meanToEmulation <= meanToFloat32 / 5,
             qPrintable(
                 QString("mean |bf16 - emulation| %1, mean |bf16 - f32| %2").arg(meanToEmulation).arg(meanToFloat32)));
}

void TestHf::rotaryTablesSharedAcrossCalls_data()
{
    QTest::addColumn<QString>("scaling");
    QTest::addColumn<QStringList>("settings");
    QTest::addRow("config's own") << "" << QStringList{};
    QTest::addRow("yarn") << "yarn" << QStringList{"factor=4"};
    QTest::addRow("rerope (two passes)") << "rerope" << QStringList{"window=6"};
    QTest::addRow("self-extend (remapped positions)") << "self-extend" << QStringList{"window=5", "group=3"};
}

// A forward's layers share one rotary table (RotaryTableCache): every call, the first that builds it and the later
// that reuse it, gives the kernel's own results bit for bit, on qwen2's GQA and rotate_half dims.
void TestHf::rotaryTablesSharedAcrossCalls()
{
    QFETCH(QString, scaling);
    QFETCH(QStringList, settings);
    const HfConfig config = readHfConfig(hfData("qwen2"));
    std::vector<std::string> set;
    for (const QString& s : settings)
        set.push_back(s.toStdString());
    const int T = 40, H = config.heads, K = config.kvHeads, D = config.headDim;
    const PositionBias bias(hfPositionSpec(config, scaling.toStdString(), set), T);
    AttentionDims dims{1, H, T, D};
    dims.kvHeads = K;
    dims.pairing = RotaryPairing::RotateHalf;
    dims.rotaryDims = config.rotaryDim;
    std::vector<float> q(static_cast<size_t>(H) * T * D), k(static_cast<size_t>(K) * T * D), v(k.size());
    for (size_t i = 0; i < q.size(); ++i)
        q[i] = static_cast<float>(std::sin(0.37 * i));
    for (size_t i = 0; i < k.size(); ++i) {
        k[i] = static_cast<float>(std::cos(0.23 * i));
        v[i] = static_cast<float>(std::sin(0.11 * i + 1));
    }
    AttentionForward own, shared;
    attentionForward(bias, dims, q.data(), k.data(), v.data(), own, {});
    RotaryTableCache cache;
    for (int call = 0; call < 3; ++call) {
        attentionForward(bias, dims, q.data(), k.data(), v.data(), shared, {}, cache);
        QVERIFY2(shared.out == own.out, qPrintable(QStringLiteral("call %1: outputs differ").arg(call)));
        QVERIFY(shared.logSumExp == own.logSumExp);
    }
}

// "Evaluate under methods" defaults (issue 27): own, none unless it is the own, yarn, ntk; context / 2, context, 2 x
// context within [8, maxLength]; the longest length's tokens at each length.
void TestHf::methodComparisonDefaultsRule_data()
{
    QTest::addColumn<int>("context");
    QTest::addColumn<QString>("own");
    QTest::addColumn<int>("maxLength");
    QTest::addColumn<QStringList>("methods");
    QTest::addColumn<QList<int>>("lengths");
    QTest::addRow("SmolLM2-135M: 8192, none")
        << 8192 << "none" << (1 << 20) << QStringList{"yarn", "ntk"} << QList<int>{4096, 8192, 16384};
    QTest::addRow("own yarn: none shown beside it")
        << 4096 << "yarn" << (1 << 20) << QStringList{"none", "ntk"} << QList<int>{2048, 4096, 8192};
    QTest::addRow("capped by the model's longest")
        << 32 << "none" << 48 << QStringList{"yarn", "ntk"} << QList<int>{16, 32, 48};
    QTest::addRow("short context: at least 8, no repeats")
        << 8 << "none" << 100 << QStringList{"yarn", "ntk"} << QList<int>{8, 16};
}

void TestHf::methodComparisonDefaultsRule()
{
    QFETCH(int, context);
    QFETCH(QString, own);
    QFETCH(int, maxLength);
    QFETCH(QStringList, methods);
    QFETCH(QList<int>, lengths);
    const MethodComparisonDefaults d = methodComparisonDefaults(context, own.toStdString(), maxLength);
    QVERIFY(d.own);
    QStringList got;
    for (const std::string& m : d.methods)
        got << QString::fromStdString(m);
    QCOMPARE(got, methods);
    QCOMPARE(QList<int>(d.lengths.begin(), d.lengths.end()), lengths);
    QCOMPARE(d.tokensPerLength, static_cast<size_t>(lengths.back()));
}

// The budget picks the longest length: with cost T^2 per window, context 100 and 3 curves, 2L costs 210000 (4 x 50^2
// + 2 x 100^2 + 200^2, three times), 3L/2 127500, 5L/4 95625; the budget is kMethodComparisonBudgetSeconds.
void TestHf::methodComparisonBudget_data()
{
    QTest::addColumn<double>("flopsPerBudget"); // the rate times the budget
    QTest::addColumn<int>("longest");
    QTest::newRow("2L fits") << 210000.0 << 200;
    QTest::newRow("2L just over, 3L/2 fits") << 209999.0 << 150;
    QTest::newRow("3L/2 over, 5L/4 fits") << 127499.0 << 125;
    QTest::newRow("nothing fits: 5L/4") << 1000.0 << 125;
}

void TestHf::methodComparisonBudget()
{
    QFETCH(double, flopsPerBudget);
    QFETCH(int, longest);
    const auto square = [](int T) { return static_cast<double>(T) * T; };
    const MethodComparisonDefaults d =
        methodComparisonDefaults(100, "none", 1 << 20, square, flopsPerBudget / kMethodComparisonBudgetSeconds);
    QCOMPARE(d.lengths, (std::vector<int>{50, 100, longest}));
    QCOMPARE(d.tokensPerLength, static_cast<size_t>(longest));
}

// The cost model against a hand count: windows of 4 over 10 tokens are 4, 4, 2; of 8 are 8, 2; cost T^2 each.
void TestHf::methodComparisonCostModel()
{
    const auto square = [](int T) { return static_cast<double>(T) * T; };
    const double seconds = methodComparisonSeconds(square, 3, {4, 8}, 10, 2.0);
    QCOMPARE(seconds, 3 * ((16 + 16 + 4) + (64 + 4)) / 2.0);
}

PLAB_QTEST_GUILESS_MAIN(TestHf)
#include "tst_hf.moc"
