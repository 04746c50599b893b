// The families of issue 29 (phi3, olmo2, granite, cohere, cohere2, gemma2, gemma3, windowed mistral and qwen2): logits
// against tests/data/hf_families (make_hf_families.py), layer types in every spelling, window boundaries, bad configs.
#include "base/errors.h"
#include "base/npy.h"
#include "cli_runner.h"
#include "hf/hf_config.h"
#include "hf/hf_family.h"
#include "hf/hf_model.h"
#include "hf/hf_scaling_layers.h"
#include "schemes/rotary_scaling.h"
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
    void proportionalFloorsItsPairs();
    void gemma3TextConfigDefaults();
    void phi3MscalesIgnored();
    void scalingLayersReach_data();
    void scalingLayersReach();
    void scalingLayersRefusals_data();
    void scalingLayersRefusals();
    void layerTypeTables();
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
    QTest::addColumn<QString>("reference"); // config, yarn (--scaling-layers full) or yarn_all (all)
    QTest::addColumn<int>("length");        // the first `length` ids (the reference's first rows: causal); 0: all 40
    for (const char* f : {"phi3", "olmo2", "granite", "cohere", "cohere2", "gemma2", "gemma3_text", "gemma3",
                          "mistral_window", "qwen2_window", "yarn_untruncated", "gemma3_proportional",
                          "gemma3_defaults"}) {
        QTest::addRow("%s config", f) << f << "config" << 0;
        QTest::addRow("%s yarn zero-shot", f) << f << "yarn" << 0;
        QTest::addRow("%s yarn zero-shot on all layers", f) << f << "yarn_all" << 0;
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
    const HfPositions positions =
        reference == "config" ? HfPositions(hfPositionSpec(model.config()))
                              : HfPositions(hfPositionSpec(model.config(), "yarn", {"factor=4", "original-context=0"}),
                                            reference == "yarn_all" ? HfScalingLayers::All : HfScalingLayers::Full);
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
                                            .arg(QString::fromStdString(hfPositionText(positions.spec)))));
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
    QTest::addRow("gemma3 text_config defaults: pattern 6, window 4096, local theta 10000")
        << "gemma3_defaults"
        << "SSSSSF" << 4096 << "000000" << 10000.0;
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
    QTest::addRow("yarn truncate not a boolean") << "yarn_untruncated"
                                                 << "truncate text"
                                                 << "field 'rope_scaling.truncate' = \"no\" is not allowed (it is a "
                                                    "string); allowed: true, false";
    QTest::addRow("proportional turning no pair") << "gemma3_proportional"
                                                  << "proportional 0.1"
                                                  << "turns int(0.1 x head_dim 8 // 2) = 0 pairs under rope type "
                                                     "'proportional'; allowed: 1 to 4 pairs";
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
            else if (edit == "truncate text")
                c["rope_scaling"]["truncate"] = "no";
            else if (edit == "proportional 0.1")
                c["rope_parameters"]["full_attention"]["partial_rotary_factor"] = 0.1;
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

// proportional (p-RoPE): partial_rotary_factor 0.625 of head_dim 8 is 2.5 pairs; transformers' int(p x D // 2) floors
// it to 2, which the lab's keep (round half up) would make 3: the config's keep is 2/4 and the whole head rotates.
void TestHfFamilies::proportionalFloorsItsPairs()
{
    const HfConfig c = readHfConfig(familyData("gemma3_proportional"));
    QCOMPARE(c.rotaryDim, 8);
    QCOMPARE(c.ropeKeep, 0.5);
    QCOMPARE(keptPairs(8, 0.625), 3); // what the lab's own rounding would give
    const SchemeSpec full = hfPositionSpec(c);
    const RotaryScaling table = rotaryScaling(full, 40);
    QCOMPARE(table.keptPairs, 2);
    QCOMPARE(table.theta[2], 0.0);
    QVERIFY(table.theta[1] > 0);
    QCOMPARE(QString::fromStdString(c.scaling), QStringLiteral("pi")); // factor 2
    QCOMPARE(hfSlidingPositionSpec(c).params.at("keep"), 1.0); // the sliding layers' default rope turns every pair
}

// A gemma3 folder's text_config that leaves fields out reads Gemma3TextConfig's defaults.
void TestHfFamilies::gemma3TextConfigDefaults()
{
    const HfConfig c = readHfConfig(familyData("gemma3_defaults"));
    QCOMPARE(c.heads, 8);
    QCOMPARE(c.kvHeads, 4);
    QCOMPARE(c.headDim, 8);
    QCOMPARE(c.context, 131072);
    QCOMPARE(c.ropeTheta, 1000000.0);
    QCOMPARE(c.slidingRopeTheta, 10000.0);
    QCOMPARE(c.slidingWindow, 4096);
    QCOMPARE(c.attentionScale, 1.0 / 16); // query_pre_attn_scalar 256
    QVERIFY(c.tiedHead);
    QCOMPARE(QString::fromStdString(c.activation), QStringLiteral("gelu_new"));
}

// Phi-3's short_mscale and long_mscale: transformers' longrope reads neither (its attention factor comes from the
// factor and the original context), so the lab ignores them too: the same logits with and without them.
void TestHfFamilies::phi3MscalesIgnored()
{
    QTemporaryDir dir;
    const std::string folder = editedCopy(dir, "phi3", [](nlohmann::json& c) {
        c["rope_scaling"]["short_mscale"] = 1.243;
        c["rope_scaling"]["long_mscale"] = 1.243;
    });
    const HfModel with(folder), without(familyData("phi3"));
    const std::vector<int> ids = idsOf(familyData("phi3"));
    const double d = maxDifference(with.logits(ids, hfPositionSpec(with.config())),
                                   without.logits(ids, hfPositionSpec(without.config())));
    QVERIFY2(d == 0, qPrintable(QString::number(d)));
}

void TestHfFamilies::scalingLayersReach_data()
{
    QTest::addColumn<QString>("folder");
    QTest::addColumn<QString>("layers");
    QTest::addColumn<bool>("likeConfig"); // yarn zero-shot leaves every logit as under the config's own rope
    // mistral: every layer slides (window 8 < context 64), so full leaves them all untouched; cohere2's one full
    // layer is NoPE, so the same; gemma3 and qwen2 mix the two types
    QTest::addRow("mistral full: sliding untouched") << "mistral_window" << "full" << true;
    QTest::addRow("mistral sliding") << "mistral_window" << "sliding" << false;
    QTest::addRow("mistral all") << "mistral_window" << "all" << false;
    QTest::addRow("cohere2 full: NoPE full layer") << "cohere2" << "full" << true;
    QTest::addRow("cohere2 all") << "cohere2" << "all" << false;
    QTest::addRow("gemma3 full") << "gemma3" << "full" << false;
    QTest::addRow("gemma3 sliding") << "gemma3" << "sliding" << false;
    QTest::addRow("phi3 full: a window past the context counts as full") << "phi3" << "full" << false;
    QTest::addRow("phi3 sliding: no layer is local") << "phi3" << "sliding" << true;
}

// --scaling-layers' rule on the forward: the layers it does not name keep the config's own rope.
void TestHfFamilies::scalingLayersReach()
{
    QFETCH(QString, folder);
    QFETCH(QString, layers);
    QFETCH(bool, likeConfig);
    const HfModel model(familyData(folder));
    const std::vector<int> ids = idsOf(familyData(folder));
    const HfScalingLayers which = hfScalingLayersByName(layers.toStdString());
    const HfMatrix own = model.logits(ids, hfPositionSpec(model.config()));
    const HfMatrix yarn = model.logits(ids, HfPositions(hfPositionSpec(model.config(), "yarn"), which));
    const double d = maxDifference(own, yarn);
    if (likeConfig)
        QVERIFY2(d == 0, qPrintable(QString::number(d)));
    else
        QVERIFY2(d > 1e-4, qPrintable(QString::number(d))); // false for a NaN too
    // gemma3 sliding: the full layer keeps its linear 8, the sliding ones read yarn with their own theta
    if (folder == "gemma3" && layers == "sliding") {
        const HfConfig& c = model.config();
        const HfPositions p(hfPositionSpec(c, "yarn"), which);
        QCOMPARE(hfLayerTypePositions(c, p, HfLayerType::Full).scaling, RotaryMethod::Pi);
        const SchemeSpec local = hfLayerTypePositions(c, p, HfLayerType::Sliding);
        QCOMPARE(local.scaling, RotaryMethod::Yarn);
        QCOMPARE(local.param("base"), 10000.0);
    }
    // A rule that reaches nothing is refused where a method is applied, naming the pattern and what would reach.
    bool refused = false;
    try {
        checkHfScalingReach(model.config(), which);
    } catch (const InputError& e) {
        refused = QString::fromUtf8(e.what()).contains("reach no layer with rotary positions");
    }
    QCOMPARE(refused, likeConfig);
}

void TestHfFamilies::scalingLayersRefusals_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("expected");
    const QString mistral = QString::fromStdString(familyData("mistral_window"));
    QTest::addRow("unknown value") << QStringList{"logits", mistral, "--ids", "1,2,3", "--scaling", "yarn",
                                                  "--scaling-layers", "local"}
                                   << "scaling layers 'local' is not known; allowed: full";
    QTest::addRow("reaching no layer")
        << QStringList{"logits", mistral, "--ids", "1,2,3", "--scaling", "yarn"}
        << "scaling layers 'full' reach no layer with rotary positions";
    QTest::addRow("without a method") << QStringList{"logits", mistral, "--ids", "1,2,3", "--scaling-layers", "all"}
                                      << "--scaling-layers names the layers a method given with --scaling";
}

// The CLI's refusals of --scaling-layers: exit 2 naming the value and what is allowed.
void TestHfFamilies::scalingLayersRefusals()
{
    QFETCH(QStringList, args);
    QFETCH(QString, expected);
    QTemporaryDir dir;
    const test::CliResult r = test::runCli(args + QStringList{"-o", dir.path() + "/never.npy"});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(QString::fromUtf8(r.err).contains(expected), r.err.constData());
    QVERIFY(!QFile::exists(dir.path() + "/never.npy"));
}

// frequencies --model: one table per layer type, gemma3's sliding one with its own theta; --scaling-layers all puts
// the method on both.
void TestHfFamilies::layerTypeTables()
{
    const HfConfig c = readHfConfig(familyData("gemma3"));
    const std::vector<HfLayerTypeTable> own = hfLayerTypeTables(c, hfPositionSpec(c));
    QCOMPARE(own.size(), size_t(2));
    QCOMPARE(own[0].layers, 1);
    QCOMPARE(own[1].layers, 5);
    QCOMPARE(own[1].spec.param("base"), 10000.0);
    QCOMPARE(own[1].spec.scaling, RotaryMethod::None);
    const std::vector<HfLayerTypeTable> all = hfLayerTypeTables(c, HfPositions(hfPositionSpec(c, "yarn"),
                                                                               HfScalingLayers::All));
    QCOMPARE(all[1].spec.scaling, RotaryMethod::Yarn);
    const test::CliResult r =
        test::runCli({"frequencies", "--model", QString::fromStdString(familyData("gemma3")), "--json"});
    QCOMPARE(r.exitCode, 0);
    const nlohmann::json doc = nlohmann::json::parse(r.out.toStdString());
    QVERIFY2(doc.dump().find("sliding_attention") != std::string::npos, r.out.constData());
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
