// The families of issue 29 (phi3, olmo2, granite, cohere, cohere2, gemma2, gemma3, windowed mistral and qwen2): logits
// against tests/data/hf_families (make_hf_families.py), layer types in every spelling, window boundaries, bad configs.
#include "base/errors.h"
#include "base/npy.h"
#include "cli_runner.h"
#include "hf/hf_config.h"
#include "hf/hf_family.h"
#include "hf/hf_model.h"
#include "test_main.h"

#include <QtTest>

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

using namespace plab;
namespace fs = std::filesystem;

namespace {

std::string familyData(const QString& name)
{
    return std::string(POSITIONLAB_TEST_DATA) + "/hf_families/" + name.toStdString();
}

std::vector<int> idsOf(const std::string& folder)
{
    std::ifstream in(folder + "/ids.json");
    return nlohmann::json::parse(in).get<std::vector<int>>();
}

// A copy of a tiny folder with config.json edited by `edit` (the text_config of a gemma3 folder when it has one).
std::string editedCopy(const QTemporaryDir& dir, const QString& name, const std::function<void(nlohmann::json&)>& edit)
{
    const std::string to = (dir.path() + "/" + name).toStdString();
    fs::copy(familyData(name), to, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    std::ifstream in(to + "/config.json");
    nlohmann::json config = nlohmann::json::parse(in);
    in.close();
    edit(config.contains("text_config") ? config["text_config"] : config);
    std::ofstream(to + "/config.json") << config.dump(2);
    return to;
}

// max |a - b| over two logit matrices of one shape; NaN when either holds a NaN (so a NaN fails every bound).
double maxDifference(const HfMatrix& a, const HfMatrix& b)
{
    double worst = 0;
    for (Eigen::Index i = 0; i < a.size(); ++i) {
        const double d = std::abs(static_cast<double>(a.data()[i]) - b.data()[i]);
        if (!(d <= worst))
            worst = d; // a NaN d is kept: every later comparison with it is false
    }
    return worst;
}

} // namespace

class TestHfFamilies : public QObject {
    Q_OBJECT

private slots:
    void familyTableIsTheOneList();
    void logitsMatchReference_data();
    void logitsMatchReference();
    void configReadsLayerTypes_data();
    void configReadsLayerTypes();
    void windowBoundary_data();
    void windowBoundary();
    void badConfigRefused_data();
    void badConfigRefused();
    void yarnMscaleGivesAttentionFactor();
    void cliInspectNamesLayout_data();
    void cliInspectNamesLayout();
};

// supportedModelTypes is the table's rows, each named once.
void TestHfFamilies::familyTableIsTheOneList()
{
    const std::vector<std::string>& types = supportedModelTypes();
    QCOMPARE(types.size(), hfFamilyTable().size());
    for (const std::string& t : types) {
        QVERIFY2(hfFamilyRow(t) != nullptr, t.c_str());
        QCOMPARE(std::count(types.begin(), types.end(), t), 1);
    }
    for (const char* t : {"phi3", "olmo2", "granite", "cohere", "cohere2", "gemma2", "gemma3_text", "gemma3",
                          "mistral", "ministral", "qwen2", "qwen3"})
        QVERIFY2(hfFamilyRow(t) != nullptr, t);
    QVERIFY(hfFamilyRow("t5") == nullptr);
}

void TestHfFamilies::logitsMatchReference_data()
{
    QTest::addColumn<QString>("folder");
    QTest::addColumn<QString>("reference"); // config or yarn
    QTest::addColumn<int>("length");        // the first `length` ids (the reference's first rows: causal); 0: all 40
    for (const char* f : {"phi3", "olmo2", "granite", "cohere", "cohere2", "gemma2", "gemma3_text", "gemma3",
                          "mistral_window", "qwen2_window"}) {
        QTest::addRow("%s config", f) << f << "config" << 0;
        QTest::addRow("%s yarn zero-shot", f) << f << "yarn" << 0;
    }
    // Within the window (8): the rows a text no longer than it reads, every layer's mask the causal one.
    for (const char* f : {"cohere2", "gemma2", "gemma3_text", "gemma3", "mistral_window", "qwen2_window"})
        QTest::addRow("%s first 8 ids", f) << f << "config" << 8;
}

// The bound of issue 29: max |ours - ref| <= 1e-3 max(1, max |ref|), in float32, 40 ids (past every window).
void TestHfFamilies::logitsMatchReference()
{
    QFETCH(QString, folder);
    QFETCH(QString, reference);
    QFETCH(int, length);
    const std::string dir = familyData(folder);
    const HfModel model(dir);
    // yarn zero-shot: factor 4, L = the model's context (the reference's original_max_position_embeddings default).
    const SchemeSpec positions = reference == "yarn"
                                     ? hfPositionSpec(model.config(), "yarn", {"factor=4", "original-context=0"})
                                     : hfPositionSpec(model.config());
    std::vector<int> ids = idsOf(dir);
    if (length > 0)
        ids.resize(length);
    const HfMatrix ours = model.logits(ids, positions);
    const NpyArray ref = readNpy(dir + "/ref_" + reference.toStdString() + ".npy");
    QCOMPARE(ref.shape.size(), size_t(2));
    QCOMPARE(ref.shape[1], int64_t(ours.cols()));
    QVERIFY(ref.shape[0] >= ours.rows());
    double worst = 0, largest = 0;
    for (Eigen::Index i = 0; i < ours.size(); ++i) { // row-major both: the first rows of the reference
        const double d = std::abs(static_cast<double>(ours.data()[i]) - ref.data[i]);
        if (!(d <= worst))
            worst = d;
        largest = std::max(largest, std::abs(static_cast<double>(ref.data[i])));
    }
    const double bound = 1e-3 * std::max(1.0, largest);
    qInfo("%s %s: max |ours - ref| = %.3g (bound %.3g)", qPrintable(folder), qPrintable(reference), worst, bound);
    QVERIFY2(worst <= bound, qPrintable(QStringLiteral("max |ours - ref| = %1 > %2 under %3")
                                            .arg(worst)
                                            .arg(bound)
                                            .arg(QString::fromStdString(hfPositionText(positions)))));
}

void TestHfFamilies::configReadsLayerTypes_data()
{
    QTest::addColumn<QString>("folder");
    QTest::addColumn<QString>("strip");     // S sliding, F full, C chunked, per layer
    QTest::addColumn<int>("window");        // sliding_window; 0: none
    QTest::addColumn<QString>("nope");      // per layer: 1 = no rotary
    QTest::addColumn<double>("localTheta"); // the sliding layers' own rope theta; 0: the full layers' table
    QTest::addRow("gemma3_text v4: sliding_window_pattern, rope_local_base_freq")
        << "gemma3_text"
        << "SSSSSF" << 8 << "000000" << 10000.0;
    QTest::addRow("gemma3 v5: text_config, layer_types, rope_parameters by type")
        << "gemma3"
        << "SSSSSF" << 8 << "000000" << 10000.0;
    QTest::addRow("gemma2: alternation from layer 0") << "gemma2"
                                                      << "SF" << 8 << "00" << 0.0;
    QTest::addRow("cohere2: pattern 4, NoPE global layers") << "cohere2"
                                                            << "SSSF" << 8 << "0001" << 0.0;
    QTest::addRow("qwen2: use_sliding_window + max_window_layers 1") << "qwen2_window"
                                                                     << "FSS" << 8 << "000" << 0.0;
    QTest::addRow("mistral: top-level sliding_window on every layer") << "mistral_window"
                                                                      << "SS" << 8 << "00" << 0.0;
    QTest::addRow("phi3: Phi-3.5's window") << "phi3"
                                            << "SS" << 262144 << "00" << 0.0;
    QTest::addRow("olmo2: no window") << "olmo2"
                                      << "FF" << 0 << "00" << 0.0;
}

void TestHfFamilies::configReadsLayerTypes()
{
    QFETCH(QString, folder);
    QFETCH(QString, strip);
    QFETCH(int, window);
    QFETCH(QString, nope);
    QFETCH(double, localTheta);
    const HfConfig c = readHfConfig(familyData(folder));
    QCOMPARE(QString::fromStdString(hfLayerStrip(c)), strip);
    QCOMPARE(c.slidingWindow, window);
    QString nopeStrip;
    for (const bool rope : c.ropeLayers)
        nopeStrip += rope ? '0' : '1';
    QCOMPARE(nopeStrip, nope);
    QCOMPARE(c.slidingRopeTheta, localTheta);
}

void TestHfFamilies::windowBoundary_data()
{
    QTest::addColumn<QString>("folder");
    QTest::addColumn<int>("length");
    QTest::addColumn<bool>("equal");   // the sliding folder equals its full twin
    QTest::addColumn<bool>("chunked"); // every layer chunked_attention with attention_chunk_size 8 instead
    for (const char* f : {"mistral_window", "qwen2_window", "gemma2"}) {
        QTest::addRow("%s W-1", f) << f << 7 << true << false;
        QTest::addRow("%s W", f) << f << 8 << true << false;
        QTest::addRow("%s W+1", f) << f << 9 << false << false;
    }
    QTest::addRow("chunked C") << "mistral_window" << 8 << true << true;
    QTest::addRow("chunked C+1") << "mistral_window" << 9 << false << true;
}

// A sliding folder (window 8) against its full twin (the same weights, every layer full_attention): equal while the
// text fits the window (the mask hides nothing), different once it does not.
void TestHfFamilies::windowBoundary()
{
    QFETCH(QString, folder);
    QFETCH(int, length);
    QFETCH(bool, equal);
    QFETCH(bool, chunked);
    QTemporaryDir dir, chunkDir;
    auto allOf = [](const char* type) {
        return [type](nlohmann::json& c) {
            c["layer_types"] = nlohmann::json(std::vector<std::string>(c["num_hidden_layers"].get<int>(), type));
            c["attention_chunk_size"] = 8;
        };
    };
    const std::string twin = editedCopy(dir, folder, allOf("full_attention"));
    const HfModel sliding(chunked ? editedCopy(chunkDir, folder, allOf("chunked_attention")) : familyData(folder));
    const HfModel full(twin);
    QVERIFY(sliding.config().hasSliding() || sliding.config().chunkSize == 8);
    QVERIFY(!full.config().hasSliding());
    std::vector<int> ids = idsOf(familyData(folder));
    ids.resize(length);
    const double d = maxDifference(sliding.logits(ids, hfPositionSpec(sliding.config())),
                                   full.logits(ids, hfPositionSpec(full.config())));
    if (equal)
        QVERIFY2(d <= 1e-5, qPrintable(QString::number(d)));
    else
        QVERIFY2(d > 1e-3, qPrintable(QString::number(d))); // false for a NaN too
}

void TestHfFamilies::badConfigRefused_data()
{
    QTest::addColumn<QString>("folder");
    QTest::addColumn<QString>("edit");
    QTest::addColumn<QString>("expected");
    QTest::addRow("layer_types too short") << "gemma3_text"
                                           << "layer_types short"
                                           << "field 'layer_types' must be a list of 6 entries";
    QTest::addRow("layer_types unknown value") << "mistral_window"
                                               << "layer_types value"
                                               << "entry 1 = \"local_attention\" is not allowed; allowed: "
                                                  "full_attention, sliding_attention, chunked_attention";
    QTest::addRow("window 0") << "mistral_window"
                              << "window 0"
                              << "field 'sliding_window' = 0 is not allowed; allowed: a positive integer";
    QTest::addRow("window negative") << "gemma2"
                                     << "window -4"
                                     << "field 'sliding_window' = -4 is not allowed; allowed: a positive integer";
    QTest::addRow("chunked without a chunk size") << "mistral_window"
                                                  << "chunked"
                                                  << "field 'attention_chunk_size' is missing";
    QTest::addRow("rope dict naming an unknown layer type")
        << "gemma3"
        << "rope key"
        << "field 'rope_parameters.local_attention' names an unknown layer type; allowed: full_attention, "
           "sliding_attention, chunked_attention";
    QTest::addRow("attention soft cap 0") << "gemma2"
                                          << "attn cap 0"
                                          << "field 'attn_logit_softcapping' = 0.0 is not allowed; allowed: a "
                                             "positive finite number";
    QTest::addRow("final soft cap negative") << "gemma2"
                                             << "final cap -1"
                                             << "field 'final_logit_softcapping' = -1.0 is not allowed";
    QTest::addRow("cohere's qk norm") << "cohere"
                                      << "qk norm"
                                      << "field 'use_qk_norm' = true";
    QTest::addRow("gemma3 without text_config") << "gemma3"
                                                << "no text_config"
                                                << "field 'text_config' is missing";
}

// Each bad config.json: InputError naming the field and what is allowed, from readHfConfig and as the CLI's exit 2.
void TestHfFamilies::badConfigRefused()
{
    QFETCH(QString, folder);
    QFETCH(QString, edit);
    QFETCH(QString, expected);
    QTemporaryDir dir;
    std::string broken;
    if (edit == "no text_config") {
        broken = editedCopy(dir, folder, [](nlohmann::json&) {});
        std::ifstream in(broken + "/config.json");
        nlohmann::json c = nlohmann::json::parse(in);
        in.close();
        c.erase("text_config");
        std::ofstream(broken + "/config.json") << c.dump(2);
    } else {
        broken = editedCopy(dir, folder, [&](nlohmann::json& c) {
            if (edit == "layer_types short")
                c["layer_types"] = {"sliding_attention", "full_attention"};
            else if (edit == "layer_types value")
                c["layer_types"] = {"sliding_attention", "local_attention"};
            else if (edit == "window 0")
                c["sliding_window"] = 0;
            else if (edit == "window -4")
                c["sliding_window"] = -4;
            else if (edit == "chunked")
                c["layer_types"] = {"chunked_attention", "full_attention"};
            else if (edit == "rope key")
                c["rope_parameters"]["local_attention"] = {{"rope_type", "default"}, {"rope_theta", 10000.0}};
            else if (edit == "attn cap 0")
                c["attn_logit_softcapping"] = 0.0;
            else if (edit == "final cap -1")
                c["final_logit_softcapping"] = -1.0;
            else if (edit == "qk norm")
                c["use_qk_norm"] = true;
        });
    }
    try {
        readHfConfig(broken);
        QFAIL("no InputError");
    } catch (const InputError& e) {
        QVERIFY2(QString::fromStdString(e.what()).contains(expected), e.what());
    }
    const test::CliResult r = test::runCli({"inspect", QString::fromStdString(broken)});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(QString::fromUtf8(r.err).contains(expected), r.err.constData());
}

// yarn's mscale and mscale_all_dim (DeepSeek's spelling) give the attention factor as modeling_rope_utils.py does:
// get_mscale(4, 1) / get_mscale(4, 0.5), get_mscale(s, m) = 0.1 m ln s + 1.
void TestHfFamilies::yarnMscaleGivesAttentionFactor()
{
    QTemporaryDir dir;
    const std::string folder = editedCopy(dir, "mistral_window", [](nlohmann::json& c) {
        c["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}, {"mscale", 1.0}, {"mscale_all_dim", 0.5}};
    });
    const SchemeSpec spec = hfPositionSpec(readHfConfig(folder));
    const double expected = (0.1 * std::log(4.0) + 1) / (0.05 * std::log(4.0) + 1);
    QVERIFY2(std::abs(spec.scalingParams.at("attention-factor") - expected) <= 1e-5,
             qPrintable(QString::number(spec.scalingParams.at("attention-factor"))));
}

void TestHfFamilies::cliInspectNamesLayout_data()
{
    QTest::addColumn<QString>("folder");
    QTest::addColumn<QString>("modelType");
    QTest::addColumn<QString>("strip");
    QTest::addColumn<QString>("slidingRope"); // rope_by_layer_type.sliding_attention; "" when no layer slides
    QTest::addRow("phi3") << "phi3"
                          << "phi3"
                          << "SS"
                          << "rope+longrope (factor 4, attention-factor 0, original-context 16)";
    QTest::addRow("gemma3 folder") << "gemma3"
                                   << "gemma3"
                                   << "SSSSSF"
                                   << "rope";
    QTest::addRow("olmo2") << "olmo2"
                           << "olmo2"
                           << "FF"
                           << "";
}

// inspect --json names the model_type and the layout the table gives it (familyName moved into core).
void TestHfFamilies::cliInspectNamesLayout()
{
    QFETCH(QString, folder);
    QFETCH(QString, modelType);
    QFETCH(QString, strip);
    QFETCH(QString, slidingRope);
    const test::CliResult r = test::runCli({"inspect", QString::fromStdString(familyData(folder)), "--json"});
    QCOMPARE(r.exitCode, 0);
    const nlohmann::json doc = nlohmann::json::parse(r.out.toStdString());
    QCOMPARE(QString::fromStdString(doc["model_type"].get<std::string>()), modelType);
    QCOMPARE(QString::fromStdString(doc["family"].get<std::string>()), QStringLiteral("llama"));
    // The vision tower of a multimodal folder is named as not read; a text model has nothing to say there.
    QCOMPARE(doc.contains("not_read"), modelType == "gemma3");
    if (modelType == "gemma3")
        QVERIFY(doc["not_read"].get<std::string>().find("vision_tower") != std::string::npos);
    // Issue 29's fields: one layer type per layer, the window, the soft caps and each type's rope.
    QString types;
    for (const auto& t : doc["layer_types"])
        types += t == "sliding_attention" ? 'S' : t == "chunked_attention" ? 'C' : 'F';
    QCOMPARE(types, strip);
    QCOMPARE(doc["sliding_window"].is_null(), !strip.contains('S'));
    QVERIFY(doc["softcap"]["attention"].is_null());
    QCOMPARE(doc["rope_by_layer_type"].contains("sliding_attention"), !slidingRope.isEmpty());
    if (!slidingRope.isEmpty())
        QCOMPARE(QString::fromStdString(doc["rope_by_layer_type"]["sliding_attention"].get<std::string>()),
                 slidingRope);
}

PLAB_QTEST_GUILESS_MAIN(TestHfFamilies)
#include "tst_hf_families.moc"
