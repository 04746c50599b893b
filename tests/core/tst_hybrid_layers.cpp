// Hybrid models (issue 28 s.2, s.6): layer types against per-layer hand-built references, finite differences,
// checkpoints, the repeating list, and the refusals of the layer-type options.
#include "attention/attention_reference.h"
#include "base/errors.h"
#include "base/random.h"
#include "model/checkpoint.h"
#include "model/layers.h"
#include "model/model.h"

#include "cli_runner.h"
#include "test_main.h"

#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>

using namespace plab;

namespace {

ModelConfig tinyHybrid(const QString& scheme, const QStringList& types, int layers)
{
    ModelConfig c;
    c.scheme = scheme.toStdString();
    c.layers = layers;
    c.dModel = 16;
    c.heads = 2;
    c.dFf = 32;
    c.context = 24;
    for (const QString& t : types)
        c.layerTypes.push_back(t.toStdString());
    return c;
}

std::vector<std::string> stdList(const QStringList& list)
{
    std::vector<std::string> out;
    for (const QString& s : list)
        out.push_back(s.toStdString());
    return out;
}

std::vector<uint8_t> someText(int n)
{
    const char* text = "the cat sat on the mat and the dog ran after it, far away. ";
    std::vector<uint8_t> bytes;
    for (int i = 0; i < n; ++i)
        bytes.push_back(static_cast<uint8_t>(text[i % 58]));
    return bytes;
}

// Worst |a - b| of layer `layer`'s attention output (1, T, C) against the double twin under `spec` on the layer's own
// q, k, v (1, H, T, D); NaN when any value is not finite.
double layerDifference(const Model& model, int layer, const SchemeSpec& spec, int T)
{
    const ModelConfig& c = model.config();
    const PositionBias bias(spec, T);
    const AttentionDims dims{1, c.heads, T, c.headDim()};
    const AttentionReferenceForward ref = attentionForwardReference(
        bias, dims, model.layerQueries(layer).data(), model.layerKeys(layer).data(), model.layerValues(layer).data());
    const layers::FloatBuffer& out = model.layerAttentionOutput(layer); // (1, T, H * D)
    double worst = 0;
    for (int h = 0; h < c.heads; ++h)
        for (int t = 0; t < T; ++t)
            for (int d = 0; d < c.headDim(); ++d) {
                const double a = out[static_cast<size_t>(t) * c.dModel + h * c.headDim() + d];
                const double b = ref.out[(static_cast<size_t>(h) * T + t) * c.headDim() + d];
                if (!std::isfinite(a) || !std::isfinite(b))
                    return std::nan("");
                worst = std::max(worst, std::abs(a - b));
            }
    return worst;
}

} // namespace

class TestHybridLayers : public QObject {
    Q_OBJECT
private slots:
    void forwardMatchesPerLayerReference_data();
    void forwardMatchesPerLayerReference();
    void wideWindowEqualsNoWindow();
    void gradientsMatchFiniteDifferences_data();
    void gradientsMatchFiniteDifferences();
    void checkpointKeepsLayerTypes();
    void layerTypesRepeat_data();
    void layerTypesRepeat();
    void refusals_data();
    void refusals();
    void cliRefusals_data();
    void cliRefusals();
    void bidirectionalViewRefusesAWindow_data();
    void bidirectionalViewRefusesAWindow();
};

void TestHybridLayers::forwardMatchesPerLayerReference_data()
{
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<QStringList>("types");
    QTest::addColumn<int>("window");
    QTest::addColumn<int>("chunk");
    QTest::addColumn<QString>("fullScheme");
    QTest::addColumn<QStringList>("fullSettings");
    // Per layer of 3: the hand-built scheme and settings the layer must attend with (dim = head dim 8).
    QTest::addColumn<QStringList>("expectedSchemes");
    QTest::addColumn<QStringList>("expectedSettings"); // ';'-separated per layer
    QTest::newRow("rope sliding,full") << "rope" << QStringList{"sliding", "full"} << 5 << 0 << "" << QStringList{}
                                       << QStringList{"rope", "rope", "rope"}
                                       << QStringList{"window=5", "", "window=5"};
    QTest::newRow("RNoPE-SWA sliding,sliding,full none")
        << "rope" << QStringList{"sliding", "sliding", "full"} << 7 << 0 << "none" << QStringList{}
        << QStringList{"rope", "rope", "none"} << QStringList{"window=7", "window=7", ""};
    QTest::newRow("Gemma 3 two bases") << "rope" << QStringList{"sliding", "full"} << 6 << 0 << ""
                                       << QStringList{"base=1000000"} << QStringList{"rope", "rope", "rope"}
                                       << QStringList{"window=6", "base=1000000", "window=6"};
    QTest::newRow("alibi chunked,full") << "alibi" << QStringList{"chunked", "full"} << 0 << 8 << "" << QStringList{}
                                        << QStringList{"alibi", "alibi", "alibi"}
                                        << QStringList{"chunk=8", "", "chunk=8"};
    QTest::newRow("NoPE sliding, rope full") << "none" << QStringList{"sliding", "full", "full"} << 4 << 0 << "rope"
                                             << QStringList{"base=500"} << QStringList{"none", "rope", "rope"}
                                             << QStringList{"window=4", "base=500", "base=500"};
    QTest::newRow("default span context/4") << "rope" << QStringList{"chunked", "sliding", "full"} << 0 << 0 << ""
                                            << QStringList{} << QStringList{"rope", "rope", "rope"}
                                            << QStringList{"chunk=6", "window=6", ""};
}

void TestHybridLayers::forwardMatchesPerLayerReference()
{
    QFETCH(QString, scheme);
    QFETCH(QStringList, types);
    QFETCH(int, window);
    QFETCH(int, chunk);
    QFETCH(QString, fullScheme);
    QFETCH(QStringList, fullSettings);
    QFETCH(QStringList, expectedSchemes);
    QFETCH(QStringList, expectedSettings);
    ModelConfig c = tinyHybrid(scheme, types, 3);
    c.window = window;
    c.chunk = chunk;
    c.fullScheme = fullScheme.toStdString();
    c.fullSettings = stdList(fullSettings);
    Model model(c);
    Rng rng(3); // weights larger than the initialisation's, so scores (and so the positions) matter
    for (float& w : model.parameters())
        w += static_cast<float>(0.2 * rng.normal());
    model.parametersChanged();
    const int T = 20; // past every window and chunk, inside the context
    const std::vector<uint8_t> text = someText(T);
    model.forward(text.data(), nullptr, 1, T);
    for (int l = 0; l < c.layers; ++l) {
        std::vector<std::string> settings = {"dim=8"};
        if (!expectedSettings[l].isEmpty())
            settings.push_back(expectedSettings[l].toStdString());
        if (expectedSchemes[l] == "none" || expectedSchemes[l] == "alibi")
            settings.erase(settings.begin());
        const SchemeSpec hand =
            makeSchemeSpec(expectedSchemes[l].toStdString(), c.heads, false, settings, c.context);
        const double diff = layerDifference(model, l, hand, T);
        QVERIFY2(diff <= 2e-5, qPrintable(QString("layer %1: %2").arg(l).arg(diff)));
        // The check can fail: the layer against the scheme without its mask or with the other layers' spec.
        const SchemeSpec plain = makeSchemeSpec(scheme.toStdString(), c.heads, false,
                                                scheme == "rope" ? std::vector<std::string>{"dim=8"}
                                                                 : std::vector<std::string>{},
                                                c.context);
        if (!(expectedSchemes[l] == scheme && expectedSettings[l].isEmpty()))
            QVERIFY2(!(layerDifference(model, l, plain, T) <= 2e-5), qPrintable(QString("layer %1").arg(l)));
    }
}

void TestHybridLayers::wideWindowEqualsNoWindow()
{
    // A window and a chunk wider than the text change nothing: the logits equal the plain model's, bit for bit.
    ModelConfig plain = tinyHybrid("rope", {}, 2);
    ModelConfig wide = tinyHybrid("rope", {"sliding", "chunked"}, 2);
    wide.window = 40;
    wide.chunk = 40;
    Model a(plain), b(wide);
    const std::vector<uint8_t> text = someText(24);
    a.forward(text.data(), nullptr, 1, 24);
    b.forward(text.data(), nullptr, 1, 24);
    QCOMPARE(a.logits().size(), b.logits().size());
    for (size_t i = 0; i < a.logits().size(); ++i)
        QCOMPARE(a.logits()[i], b.logits()[i]);
}

void TestHybridLayers::gradientsMatchFiniteDifferences_data()
{
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<QStringList>("types");
    QTest::addColumn<QString>("fullScheme");
    QTest::addColumn<QStringList>("sets");
    QTest::newRow("RNoPE-SWA") << "rope" << QStringList{"sliding", "full"} << "none" << QStringList{};
    QTest::newRow("alibi chunked,sliding,full") << "alibi" << QStringList{"chunked", "sliding", "full"} << ""
                                                << QStringList{};
    QTest::newRow("rope sliding softcap, full base") << "rope" << QStringList{"sliding", "full"} << ""
                                                     << QStringList{"softcap=3"};
    QTest::newRow("t5 sliding,full (shared table)") << "t5" << QStringList{"sliding", "full"} << "" << QStringList{};
}

void TestHybridLayers::gradientsMatchFiniteDifferences()
{
    QFETCH(QString, scheme);
    QFETCH(QStringList, types);
    QFETCH(QString, fullScheme);
    QFETCH(QStringList, sets);
    ModelConfig c = tinyHybrid(scheme, types, 3);
    c.dModel = 8;
    c.dFf = 16;
    c.context = 12;
    c.window = 3;
    c.chunk = 4;
    c.fullScheme = fullScheme.toStdString();
    c.schemeSettings = stdList(sets);
    if (std::find(c.layerTypes.begin(), c.layerTypes.end(), "chunked") == c.layerTypes.end())
        c.chunk = 0;
    Model model(c);
    // Larger weights than the initialisation's, so the attention (and its mask) matters to the loss.
    Rng rng(7);
    for (float& w : model.parameters())
        w += static_cast<float>(0.3 * rng.normal());
    model.parametersChanged();
    const int B = 2, T = 10;
    std::vector<uint8_t> inputs = someText(B * T), targets(B * T);
    for (int i = 0; i < B * T; ++i)
        targets[i] = inputs[(i + 1) % (B * T)];
    model.zeroGradients();
    model.forward(inputs.data(), targets.data(), B, T);
    model.backward();
    const std::vector<float> grads(model.gradients().begin(), model.gradients().end());
    int checked = 0;
    for (const ParameterTensor& t : model.tensors()) {
        if (t.name.find("attn.qkv.weight") == std::string::npos && t.name != "scheme.t5_bias")
            continue;
        for (size_t i = 0; i < t.size; i += std::max<size_t>(1, t.size / 7)) {
            float& w = model.parameters()[t.offset + i];
            const float saved = w;
            const double eps = 1e-2;
            w = saved + static_cast<float>(eps);
            model.parametersChanged();
            const double up = model.forward(inputs.data(), targets.data(), B, T);
            w = saved - static_cast<float>(eps);
            model.parametersChanged();
            const double down = model.forward(inputs.data(), targets.data(), B, T);
            w = saved;
            model.parametersChanged();
            const double fd = (up - down) / (2 * eps), g = grads[t.offset + i];
            QVERIFY2(std::abs(fd - g) <= 2e-3 + 0.03 * std::abs(fd),
                     qPrintable(QString::fromStdString(t.name) + QString(" [%1]: fd %2, backward %3").arg(i).arg(fd).arg(g)));
            ++checked;
        }
    }
    QVERIFY(checked >= 3 * 7);
}

void TestHybridLayers::checkpointKeepsLayerTypes()
{
    QTemporaryDir dir;
    ModelConfig c = tinyHybrid("rope", {"sliding", "sliding", "full"}, 3);
    c.window = 5;
    c.fullScheme = "none";
    Model model(c);
    const std::string path = (dir.path() + "/m.safetensors").toStdString();
    saveCheckpoint(model, CheckpointInfo{}, path);
    const LoadedCheckpoint back = loadCheckpoint(path);
    const ModelConfig& r = back.model->config();
    QCOMPARE(r.layerTypes, c.layerTypes);
    QCOMPARE(r.window, 5);
    QCOMPARE(r.fullScheme, std::string("none"));
    QCOMPARE(modelLayerSchemeSpec(r, 2).kind, SchemeKind::None);
    QCOMPARE(modelLayerSchemeSpec(r, 1).window, 5);
    const std::vector<uint8_t> text = someText(20);
    model.forward(text.data(), nullptr, 1, 20);
    back.model->forward(text.data(), nullptr, 1, 20);
    for (size_t i = 0; i < model.logits().size(); ++i)
        QCOMPARE(back.model->logits()[i], model.logits()[i]);
    // The default window is written resolved, so the record does not depend on the default rule.
    ModelConfig d = tinyHybrid("alibi", {"chunked", "full"}, 2);
    d.fullSettings = {"logit-c=0.5"};
    const nlohmann::json j = d.toJson();
    QCOMPARE(j.at("attention_chunk_size").get<int>(), modelDefaultLayerSpan(d));
    QCOMPARE(ModelConfig::fromJson(j, "test").fullSettings, d.fullSettings);
    // A config written before layer types reads as none.
    nlohmann::json old = tinyHybrid("rope", {}, 2).toJson();
    QVERIFY(!old.contains("layer_types"));
    QVERIFY(ModelConfig::fromJson(old, "old").layerTypes.empty());
}

void TestHybridLayers::layerTypesRepeat_data()
{
    QTest::addColumn<QStringList>("types");
    QTest::addColumn<int>("layers");
    QTest::addColumn<QString>("expected"); // one letter per layer: s, f, c
    QTest::newRow("gemma3 5:1 over 6") << QStringList{"sliding", "sliding", "sliding", "sliding", "sliding", "full"} << 6
                                       << "sssssf";
    QTest::newRow("1:1 over 4") << QStringList{"sliding", "full"} << 4 << "sfsf";
    QTest::newRow("3:1 over 6 (cut)") << QStringList{"sliding", "sliding", "sliding", "full"} << 6 << "sssfss";
    QTest::newRow("one type") << QStringList{"chunked"} << 3 << "ccc";
    QTest::newRow("llama4 3:1 chunked") << QStringList{"chunked", "chunked", "chunked", "full"} << 8 << "cccfcccf";
}

void TestHybridLayers::layerTypesRepeat()
{
    QFETCH(QStringList, types);
    QFETCH(int, layers);
    QFETCH(QString, expected);
    const ModelConfig c = tinyHybrid("rope", types, layers);
    validateModelConfig(c);
    QString got;
    for (int l = 0; l < layers; ++l) {
        const LayerType t = modelLayerType(c, l);
        got += t == LayerType::Sliding ? 's' : t == LayerType::Full ? 'f' : 'c';
        const SchemeSpec spec = modelLayerSchemeSpec(c, l);
        QCOMPARE(spec.window, t == LayerType::Sliding ? modelLayerWindow(c) : 0);
        QCOMPARE(spec.chunk, t == LayerType::Chunked ? modelLayerChunk(c) : 0);
    }
    QCOMPARE(got, expected);
}

void TestHybridLayers::refusals_data()
{
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<QStringList>("types");
    QTest::addColumn<int>("window");
    QTest::addColumn<int>("chunk");
    QTest::addColumn<QString>("fullScheme");
    QTest::addColumn<QStringList>("sets");
    QTest::addColumn<QString>("message");
    QTest::newRow("window 0 from a file") << "rope" << QStringList{"sliding"} << -2 << 0 << "" << QStringList{}
                                          << "window = -2 is out of range; allowed: integers in [1, 1000000]";
    QTest::newRow("unknown type") << "rope" << QStringList{"sliding", "global"} << 0 << 0 << "" << QStringList{}
                                  << "layer-types = 'global' is not a layer type; allowed: sliding, full, chunked";
    QTest::newRow("longer than the layers")
        << "rope" << QStringList{"sliding", "sliding", "sliding", "full"} << 0 << 0 << "" << QStringList{}
        << "has 4 entries and the model 3 layers; allowed: at most one entry per layer";
    QTest::newRow("window without sliding") << "rope" << QStringList{"full", "chunked"} << 8 << 0 << "" << QStringList{}
                                            << "window = 8 applies to sliding layers and the model has none";
    QTest::newRow("window without layer types") << "rope" << QStringList{} << 8 << 0 << "" << QStringList{}
                                                << "window = 8 applies to sliding layers and the model has none";
    QTest::newRow("chunk without chunked") << "rope" << QStringList{"sliding", "full"} << 0 << 8 << ""
                                           << QStringList{}
                                           << "chunk = 8 applies to chunked layers and the model has none";
    QTest::newRow("full-scheme without full") << "rope" << QStringList{"sliding"} << 0 << 0 << "none"
                                              << QStringList{}
                                              << "full-scheme = none applies to full layers and the model has none";
    QTest::newRow("full-scheme learned") << "rope" << QStringList{"sliding", "full"} << 0 << 0 << "t5"
                                         << QStringList{}
                                         << "full-scheme = t5: the full layers' own scheme cannot have learned values";
    QTest::newRow("local with layer types") << "local" << QStringList{"sliding", "full"} << 0 << 0 << ""
                                            << QStringList{} << "scheme local has a window of its own";
    QTest::newRow("set window with layer types") << "rope" << QStringList{"sliding", "full"} << 0 << 0 << ""
                                                 << QStringList{"window=4"}
                                                 << "--set window=4 with --layer-types";
    QTest::newRow("cope sliding") << "cope" << QStringList{"sliding", "full"} << 0 << 0 << "" << QStringList{}
                                  << "scheme cope does not combine with window";
}

void TestHybridLayers::refusals()
{
    QFETCH(QString, scheme);
    QFETCH(QStringList, types);
    QFETCH(int, window);
    QFETCH(int, chunk);
    QFETCH(QString, fullScheme);
    QFETCH(QStringList, sets);
    QFETCH(QString, message);
    ModelConfig c = tinyHybrid(scheme, types, 3);
    c.window = window;
    c.chunk = chunk;
    c.fullScheme = fullScheme.toStdString();
    c.schemeSettings = stdList(sets);
    try {
        validateModelConfig(c);
        QFAIL("accepted");
    } catch (const InputError& e) {
        QVERIFY2(QString(e.what()).contains(message), e.what());
    }
}

void TestHybridLayers::cliRefusals_data()
{
    QTest::addColumn<QStringList>("extra");
    QTest::addColumn<QString>("message");
    QTest::newRow("window 0") << QStringList{"--layer-types", "sliding,full", "--window", "0"}
                              << "window = 0 is out of range; allowed: integers in [1, 1000000]";
    QTest::newRow("chunk 0") << QStringList{"--layer-types", "chunked,full", "--chunk", "0"}
                              << "chunk = 0 is out of range; allowed: integers in [1, 1000000]";
    QTest::newRow("unknown type") << QStringList{"--layer-types", "sliding,global"}
                                  << "--layer-types = 'global' is not a layer type; allowed: sliding, full, chunked";
    QTest::newRow("empty list") << QStringList{"--layer-types", ""}
                                << "--layer-types is empty; allowed: a comma list of sliding, full, chunked";
    QTest::newRow("empty entry") << QStringList{"--layer-types", "sliding,,full"}
                                 << "--layer-types = '' is not a layer type";
    QTest::newRow("full-scheme without full") << QStringList{"--layer-types", "sliding", "--full-scheme", "none"}
                                              << "--full-scheme = none applies to full layers and the model has none";
    QTest::newRow("full-scheme without layer types")
        << QStringList{"--full-scheme", "none"}
        << "--full-scheme = none applies to full layers and the model has none (no --layer-types)";
    QTest::newRow("full-set without full") << QStringList{"--layer-types", "sliding", "--full-set", "base=1000000"}
                                           << "--full-set = base=1000000 applies to full layers";
    QTest::newRow("window without sliding") << QStringList{"--layer-types", "full,chunked", "--window", "8"}
                                            << "--window = 8 applies to sliding layers and the model has none";
    QTest::newRow("chunk without chunked") << QStringList{"--chunk", "8"}
                                           << "--chunk = 8 applies to chunked layers and the model has none";
    QTest::newRow("unknown full scheme") << QStringList{"--layer-types", "sliding,full", "--full-scheme", "ropee"}
                                         << "ropee";
    QTest::newRow("nope-every and layer types") << QStringList{"--layer-types", "sliding,full", "--nope-every", "2"}
                                                << "--nope-every = 2 and --layer-types both set each layer's positions";
    QTest::newRow("full-set unknown parameter")
        << QStringList{"--layer-types", "sliding,full", "--full-scheme", "none", "--full-set", "base=5"}
        << "base";
}

void TestHybridLayers::cliRefusals()
{
    QFETCH(QStringList, extra);
    QFETCH(QString, message);
    QTemporaryDir dir;
    const QString corpus = plab::test::writeStructuredCorpus(dir.path(), 4096);
    const plab::test::CliResult r =
        plab::test::runCli(QStringList{"train", "--scheme", "rope", "--layers", "2", "--corpus", corpus, "-o",
                                       dir.path() + "/m.safetensors"} +
                           extra);
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(QString::fromUtf8(r.err).contains(message), r.err.constData());
    QVERIFY(!QFile::exists(dir.path() + "/m.safetensors"));
}

void TestHybridLayers::bidirectionalViewRefusesAWindow_data()
{
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<QString>("setting");
    QTest::addColumn<QString>("message");
    QTest::newRow("rope window") << "rope" << "window=4" << "window = 4 needs causal attention";
    QTest::newRow("alibi chunk") << "alibi" << "chunk=8" << "chunk = 8 needs causal attention";
}

void TestHybridLayers::bidirectionalViewRefusesAWindow()
{
    // A bidirectional view has no band of keys n <= m: the window is refused, naming it (and local's own window is
    // the way to a symmetric one).
    QFETCH(QString, scheme);
    QFETCH(QString, setting);
    QFETCH(QString, message);
    try {
        (void)makeSchemeSpec(scheme.toStdString(), 8, true, {setting.toStdString()});
        QFAIL("accepted");
    } catch (const InputError& e) {
        QVERIFY2(QString(e.what()).contains(message), e.what());
    }
    QCOMPARE(makeSchemeSpec(scheme.toStdString(), 8, false, {setting.toStdString()}).bidirectional, false);
}

PLAB_QTEST_GUILESS_MAIN(TestHybridLayers)
#include "tst_hybrid_layers.moc"
