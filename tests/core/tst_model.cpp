// The transformer against independent references: finite differences per layer and for the whole model, a PyTorch
// reference of forward and gradients, falling training loss, reproducibility, evaluation windows, optimizer maths.
#include "model/corpus.h"
#include "base/errors.h"
#include "runs/evaluation.h"
#include "model/layers.h"
#include "model/model.h"
#include "model/optimizer.h"
#include "model/presets.h"
#include "base/random.h"
#include "base/safetensors.h"
#include "compare.h"
#include "test_main.h"
#include "runs/training.h"

#include <omp.h>

#include <QtTest>

#include <nlohmann/json.hpp>

#include <cmath>
#include <functional>

using namespace plab;

namespace {

std::vector<float> randomVector(size_t n, uint64_t seed, double scale = 1.0, double offset = 0.0)
{
    Rng rng(seed);
    std::vector<float> v(n);
    for (float& x : v)
        x = static_cast<float>(offset + scale * rng.normal());
    return v;
}

// Central differences of a scalar function of `x` at the given indices, compared with `analytic`.
// The functions under test are float32, so steps are large and the tolerance scales with the gradient size.
// Buffer: std::vector<float> or the model's aligned layers::FloatBuffer.
template <typename Buffer>
QString checkGradient(Buffer& x, const Buffer& analytic, const std::function<double()>& f,
                      const std::vector<size_t>& indices, double step, double tolerance)
{
    double scale = 1e-3;
    for (float g : analytic)
        scale = std::max(scale, static_cast<double>(std::abs(g)));
    for (size_t i : indices) {
        const float saved = x[i];
        x[i] = saved + static_cast<float>(step);
        const double up = f();
        x[i] = saved - static_cast<float>(step);
        const double down = f();
        x[i] = saved;
        const double numeric = (up - down) / (2 * step);
        if (!(std::abs(numeric - analytic[i]) <= tolerance * scale)) // a NaN fails too
            return QString("index %1: analytic %2, numeric %3 (scale %4)")
                .arg(i)
                .arg(analytic[i])
                .arg(numeric)
                .arg(scale);
    }
    return {};
}

// Runs a scope on one OpenMP thread: tiny problems gain nothing from two, and on a loaded machine every parallel
// region waits for the second thread to be scheduled. (threadSlicesMatchOneThread covers the threaded paths.)
class SingleThreaded {
public:
    SingleThreaded() : m_saved(omp_get_max_threads()) { omp_set_num_threads(1); }
    ~SingleThreaded() { omp_set_num_threads(m_saved); }

private:
    int m_saved;
};

std::vector<size_t> allIndices(size_t n)
{
    std::vector<size_t> v(n);
    for (size_t i = 0; i < n; ++i)
        v[i] = i;
    return v;
}

double dot(const std::vector<float>& a, const std::vector<float>& b)
{
    double s = 0;
    for (size_t i = 0; i < a.size(); ++i)
        s += static_cast<double>(a[i]) * b[i];
    return s;
}

ModelConfig tinyConfig(const std::string& scheme)
{
    ModelConfig c;
    c.layers = 2;
    c.dModel = 16;
    c.heads = 4;
    c.dFf = 32;
    c.context = 12;
    c.scheme = scheme;
    c.seed = 7;
    return c;
}

// Text from a small grammar: learnable structure, different from the corpus the app uses.
std::vector<uint8_t> generatedText(size_t bytes, uint64_t seed)
{
    const char* words[] = {"the ", "cat ", "sat ", "on ", "a ", "mat ", "and ", "dog ", "ran ", "far. "};
    Rng rng(seed);
    std::string s;
    while (s.size() < bytes)
        s += words[rng.below(10)];
    s.resize(bytes);
    return {s.begin(), s.end()};
}

SafetensorsFile& reference()
{
    static SafetensorsFile file = readSafetensors(POSITIONLAB_TEST_DATA "/model_reference.safetensors");
    return file;
}

} // namespace

class TestModel : public QObject {
    Q_OBJECT

private slots:
    void layerGradients_data();
    void layerGradients();

    void modelGradients_data();
    void modelGradients();

    void pytorchReference_data();
    void pytorchReference();

    void trainingLossFalls_data();
    void trainingLossFalls();
    void trainingIsReproducible();
    void threadSlicesMatchOneThread_data();
    void threadSlicesMatchOneThread();

    void adamwStep();
    void learningRateSchedule();
    void kerpleClamped();

    void evaluationWindows_data();
    void evaluationWindows();
    void windowPlanScoresEveryTokenOnce_data();
    void windowPlanScoresEveryTokenOnce();
    void evalModeNamesRoundTrip();
    void evaluationRefusesLengthsPastText_data();
    void evaluationRefusesLengthsPastText();
    void learnedPastContextUnsupported();

    void presets_data();
    void presets();
    void defaultWindowKeepsReceptiveFieldInContext_data();
    void defaultWindowKeepsReceptiveFieldInContext();
    void parameterCountMatches();
    void badConfigs_data();
    void badConfigs();

    void initMergeRule_data();
    void initMergeRule();
};

void TestModel::layerGradients_data()
{
    QTest::addColumn<QString>("layer");
    for (const char* name : {"layernorm", "matmul", "gelu", "crossentropy", "encoder", "heads", "residual"})
        QTest::newRow(name) << QString(name);
}

void TestModel::layerGradients()
{
    QFETCH(QString, layer);
    const int B = 2, T = 3, C = 8, OC = 5, V = 7, H = 2, D = 4;
    const int rows = B * T;
    // Each case: inputs x (and parameters), a random projection R of the output, loss = sum(out * R).
    if (layer == "layernorm") {
        std::vector<float> x = randomVector(rows * C, 1, 1.0, 0.3), w = randomVector(C, 2, 0.3, 1.0),
                           b = randomVector(C, 3, 0.3);
        const std::vector<float> R = randomVector(rows * C, 4);
        std::vector<float> out(rows * C), mean(rows), rstd(rows);
        auto f = [&] {
            layers::layernormForward(out.data(), mean.data(), rstd.data(), x.data(), w.data(), b.data(), rows, C);
            return dot(out, R);
        };
        f();
        std::vector<float> dx(rows * C, 0.0f), dw(C, 0.0f), db(C, 0.0f);
        layers::layernormBackward(dx.data(), dw.data(), db.data(), R.data(), x.data(), w.data(), mean.data(),
                                  rstd.data(), rows, C);
        QString e = checkGradient(x, dx, f, allIndices(x.size()), 1e-2, 2e-3);
        QVERIFY2(e.isEmpty(), qPrintable("dinp " + e));
        e = checkGradient(w, dw, f, allIndices(C), 1e-2, 2e-3);
        QVERIFY2(e.isEmpty(), qPrintable("dweight " + e));
        e = checkGradient(b, db, f, allIndices(C), 1e-2, 2e-3);
        QVERIFY2(e.isEmpty(), qPrintable("dbias " + e));
    } else if (layer == "matmul") {
        std::vector<float> x = randomVector(rows * C, 5), w = randomVector(OC * C, 6), b = randomVector(OC, 7);
        const std::vector<float> R = randomVector(rows * OC, 8);
        std::vector<float> out(rows * OC);
        auto f = [&] {
            layers::matmulForward(out.data(), x.data(), w.data(), b.data(), rows, C, OC);
            return dot(out, R);
        };
        f();
        // Independent forward: explicit sums.
        for (int r = 0; r < rows; ++r)
            for (int o = 0; o < OC; ++o) {
                double s = b[o];
                for (int i = 0; i < C; ++i)
                    s += static_cast<double>(x[r * C + i]) * w[o * C + i];
                QVERIFY(std::abs(s - out[r * OC + o]) < 1e-5);
            }
        std::vector<float> dx(rows * C, 0.0f), dw(OC * C, 0.0f), db(OC, 0.0f);
        layers::matmulBackward(dx.data(), dw.data(), db.data(), R.data(), x.data(), w.data(), rows, C, OC);
        QString e = checkGradient(x, dx, f, allIndices(x.size()), 1e-2, 1e-3);
        QVERIFY2(e.isEmpty(), qPrintable("dinp " + e));
        e = checkGradient(w, dw, f, allIndices(w.size()), 1e-2, 1e-3);
        QVERIFY2(e.isEmpty(), qPrintable("dweight " + e));
        e = checkGradient(b, db, f, allIndices(b.size()), 1e-2, 1e-3);
        QVERIFY2(e.isEmpty(), qPrintable("dbias " + e));
    } else if (layer == "gelu") {
        std::vector<float> x = randomVector(9000, 9, 2.0); // > one chunk: the chunked OpenMP path
        const std::vector<float> R = randomVector(x.size(), 10);
        std::vector<float> out(x.size());
        auto f = [&] {
            layers::geluForward(out.data(), x.data(), x.size());
            return dot(out, R);
        };
        f();
        for (size_t i = 0; i < 50; ++i) { // closed form of the tanh approximation
            const double v = x[i];
            const double want = 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
            QVERIFY(std::abs(want - out[i]) < 1e-5);
        }
        std::vector<float> dx(x.size(), 0.0f);
        layers::geluBackward(dx.data(), x.data(), R.data(), x.size());
        const std::vector<size_t> some = {0, 1, 2, 100, 4095, 4096, 4097, 8999};
        const QString e = checkGradient(x, dx, f, some, 1e-2, 2e-3);
        QVERIFY2(e.isEmpty(), qPrintable(e));
    } else if (layer == "crossentropy") {
        std::vector<float> logits = randomVector(rows * V, 11, 2.0);
        std::vector<uint8_t> targets(rows);
        for (int r = 0; r < rows; ++r)
            targets[r] = static_cast<uint8_t>((r * 3) % V);
        const std::vector<float> weights = randomVector(rows, 12, 1.0, 1.0); // d loss / d token loss
        std::vector<float> losses(rows), probs(rows * V);
        auto f = [&] {
            layers::crossEntropyForward(losses.data(), probs.data(), logits.data(), targets.data(), rows, V);
            return dot(losses, weights);
        };
        f();
        for (int r = 0; r < rows; ++r) { // closed form
            double z = 0;
            for (int j = 0; j < V; ++j)
                z += std::exp(static_cast<double>(logits[r * V + j]));
            QVERIFY(std::abs(std::log(z) - logits[r * V + targets[r]] - losses[r]) < 1e-5);
        }
        std::vector<float> dlogits(rows * V, 0.0f);
        layers::crossEntropyBackward(dlogits.data(), probs.data(), targets.data(), weights.data(), rows, V);
        const QString e = checkGradient(logits, dlogits, f, allIndices(logits.size()), 1e-2, 2e-3);
        QVERIFY2(e.isEmpty(), qPrintable(e));
    } else if (layer == "encoder") {
        std::vector<float> wte = randomVector(V * C, 13), pos = randomVector(T * C, 14);
        const std::vector<uint8_t> tokens = {1, 3, 1, 6, 0, 3};
        const std::vector<float> R = randomVector(rows * C, 15);
        std::vector<float> out(rows * C);
        auto f = [&] {
            layers::encoderForward(out.data(), tokens.data(), wte.data(), pos.data(), B, T, C);
            return dot(out, R);
        };
        f();
        std::vector<float> dwte(V * C, 0.0f), dpos(T * C, 0.0f);
        layers::encoderBackward(dwte.data(), dpos.data(), R.data(), tokens.data(), B, T, C);
        QString e = checkGradient(wte, dwte, f, allIndices(wte.size()), 1e-2, 1e-3);
        QVERIFY2(e.isEmpty(), qPrintable("dwte " + e));
        e = checkGradient(pos, dpos, f, allIndices(pos.size()), 1e-2, 1e-3);
        QVERIFY2(e.isEmpty(), qPrintable("dpos " + e));
    } else if (layer == "heads") {
        std::vector<float> qkv = randomVector(rows * 3 * H * D, 16);
        std::vector<float> q(rows * H * D), k(q.size()), v(q.size()), merged(q.size());
        const std::vector<float> Rq = randomVector(q.size(), 17), Rk = randomVector(q.size(), 18),
                                 Rv = randomVector(q.size(), 19);
        auto f = [&] {
            layers::splitHeads(q.data(), k.data(), v.data(), qkv.data(), B, T, H, D);
            return dot(q, Rq) + dot(k, Rk) + dot(v, Rv);
        };
        f();
        QCOMPARE(q[((1 * H + 1) * T + 2) * D + 3], qkv[(1 * T + 2) * 3 * H * D + 1 * D + 3]); // q[b=1,h=1,t=2,d=3]
        QCOMPARE(v[((0 * H + 1) * T + 1) * D + 0],
                 qkv[(0 * T + 1) * 3 * H * D + 2 * H * D + 1 * D]); // v[b=0,h=1,t=1,d=0]
        std::vector<float> dqkv(qkv.size(), 0.0f);
        layers::splitHeadsBackward(dqkv.data(), Rq.data(), Rk.data(), Rv.data(), B, T, H, D);
        const QString e = checkGradient(qkv, dqkv, f, allIndices(qkv.size()), 1e-2, 1e-3);
        QVERIFY2(e.isEmpty(), qPrintable(e));
        // merge is the inverse permutation of a split of one third
        layers::mergeHeads(merged.data(), q.data(), B, T, H, D);
        for (int r = 0; r < rows; ++r)
            for (int i = 0; i < H * D; ++i)
                QCOMPARE(merged[r * H * D + i], qkv[r * 3 * H * D + i]);
        std::vector<float> dy(q.size(), 0.0f);
        layers::mergeHeadsBackward(dy.data(), merged.data(), B, T, H, D);
        QCOMPARE(dy, q);
    } else if (layer == "residual") {
        std::vector<float> a = randomVector(20, 20), b = randomVector(20, 21), out(20);
        const std::vector<float> R = randomVector(20, 22);
        auto f = [&] {
            layers::residualForward(out.data(), a.data(), b.data(), 20);
            return dot(out, R);
        };
        f();
        std::vector<float> da(20, 0.0f), db(20, 0.0f);
        layers::residualBackward(da.data(), db.data(), R.data(), 20);
        QVERIFY(checkGradient(a, da, f, allIndices(20), 1e-2, 1e-3).isEmpty());
        QVERIFY(checkGradient(b, db, f, allIndices(20), 1e-2, 1e-3).isEmpty());
    }
}

void TestModel::modelGradients_data()
{
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<bool>("logn");
    // Rotary and mask paths are also covered against PyTorch (pytorchReference); these rows cover the trainable
    // scheme parameters and every input path with numbers independent of any reference file.
    for (const char* s : {"alibi", "xpos", "t5", "kerple-power", "kerple-log", "learned", "sinusoidal"})
        QTest::newRow(s) << QString(s) << false;
    QTest::newRow("alibi+logn") << QString("alibi") << true;
}

void TestModel::modelGradients()
{
    QFETCH(QString, scheme);
    QFETCH(bool, logn);
    const SingleThreaded oneThread;
    ModelConfig config = tinyConfig(scheme.toStdString());
    config.logn = logn;
    config.context = logn ? 6 : 12;
    if (scheme == "local")
        config.schemeSettings = {"window=4"};
    Model model(config);
    // Bigger weights than the GPT-2 init, so every path (and the scheme parameters) carries gradient.
    plab::layers::FloatBuffer& p = model.parameters();
    Rng rng(3);
    for (const ParameterTensor& t : model.tensors())
        if (!t.name.starts_with("scheme.") && t.shape.size() == 2)
            for (size_t i = 0; i < t.size; ++i)
                p[t.offset + i] = static_cast<float>(0.3 * rng.normal());
    if (scheme == "t5") {
        const ParameterTensor& t = model.tensor("scheme.t5_bias");
        for (size_t i = 0; i < t.size; ++i)
            p[t.offset + i] = static_cast<float>(0.5 * rng.normal());
    }
    model.parametersChanged();

    const int B = 2, T = 10;
    const std::vector<uint8_t> text = generatedText(B * (T + 1), 5);
    std::vector<uint8_t> inputs, targets;
    for (int b = 0; b < B; ++b) {
        inputs.insert(inputs.end(), text.begin() + b * (T + 1), text.begin() + b * (T + 1) + T);
        targets.insert(targets.end(), text.begin() + b * (T + 1) + 1, text.begin() + (b + 1) * (T + 1));
    }
    model.forward(inputs.data(), targets.data(), B, T);
    model.zeroGradients();
    model.backward();
    const plab::layers::FloatBuffer analytic = model.gradients();
    auto f = [&] {
        model.parametersChanged();
        return static_cast<double>(model.forward(inputs.data(), targets.data(), B, T));
    };
    // Every scheme parameter, plus a sample of every tensor (first, middle, last element; rows of wte that are used).
    std::vector<size_t> indices;
    for (const ParameterTensor& t : model.tensors()) {
        if (t.name.starts_with("scheme.")) {
            for (size_t i = 0; i < t.size; ++i)
                indices.push_back(t.offset + i);
        } else if (t.name == "wte.weight") {
            for (int c = 0; c < 3; ++c)
                indices.push_back(t.offset + inputs[0] * config.dModel + c);
        } else {
            indices.push_back(t.offset + t.size / 3);
            indices.push_back(t.offset + t.size - 1);
        }
    }
    const QString e = checkGradient(p, analytic, f, indices, 5e-3, 2e-2);
    QVERIFY2(e.isEmpty(), qPrintable(e));
}

void TestModel::pytorchReference_data()
{
    QTest::addColumn<int>("index");
    const nlohmann::json cases = nlohmann::json::parse(reference().metadata.at("cases"));
    for (size_t i = 0; i < cases.size(); ++i)
        QTest::newRow(cases[i]["name"].get<std::string>().c_str()) << static_cast<int>(i);
}

void TestModel::pytorchReference()
{
    QFETCH(int, index);
    const SafetensorsFile& ref = reference();
    const nlohmann::json config = nlohmann::json::parse(ref.metadata.at("config"));
    const nlohmann::json c = nlohmann::json::parse(ref.metadata.at("cases"))[index];
    const std::string name = c["name"];
    ModelConfig mc;
    mc.layers = config["layers"];
    mc.dModel = config["d_model"];
    mc.heads = config["heads"];
    mc.dFf = config["d_ff"];
    mc.context = c["context"];
    mc.scheme = c["scheme"];
    mc.logn = c["logn"];
    mc.schemeSettings = c["settings"].get<std::vector<std::string>>();
    Model model(mc);
    for (const ParameterTensor& t : model.tensors()) {
        const Tensor& src = ref.tensors.at(t.name);
        QCOMPARE(src.shape, t.shape);
        std::copy(src.data.begin(), src.data.end(), model.parameters().begin() + t.offset);
    }
    model.parametersChanged();
    const int B = config["batch"], T = config["length"];
    const Tensor& tokens = ref.tensors.at("tokens"); // (B, T + 1)
    std::vector<uint8_t> inputs, targets;
    for (int b = 0; b < B; ++b)
        for (int t = 0; t < T; ++t) {
            inputs.push_back(static_cast<uint8_t>(tokens.data[b * (T + 1) + t]));
            targets.push_back(static_cast<uint8_t>(tokens.data[b * (T + 1) + t + 1]));
        }
    // A weighted case: the loss is sum(w l) / sum(w) with the reference's per-token weights (an answer mask's).
    std::vector<float> weights;
    if (c.value("weighted", false)) {
        const Tensor& w = ref.tensors.at(name + "/weights");
        QCOMPARE(w.shape, (std::vector<int64_t>{B, T}));
        weights.assign(w.data.begin(), w.data.end());
        QVERIFY(std::count(weights.begin(), weights.end(), 0.0f) > 0 && // zeros, ones and other weights
                std::count(weights.begin(), weights.end(), 1.0f) > 0 &&
                std::any_of(weights.begin(), weights.end(), [](float x) { return x != 0 && x != 1; }));
    }
    const float loss = model.forward(inputs.data(), targets.data(), B, T, weights.empty() ? nullptr : weights.data());
    QVERIFY2(std::abs(loss - c["loss"].get<double>()) < 2e-5,
             qPrintable(QString("loss %1 vs %2").arg(loss).arg(c["loss"].get<double>())));
    const Tensor& losses = ref.tensors.at(name + "/losses");
    for (int i = 0; i < B * T; ++i)
        QVERIFY2(std::abs(model.tokenLosses()[i] - losses.data[i]) < 3e-5,
                 qPrintable(QString("token %1: %2 vs %3").arg(i).arg(model.tokenLosses()[i]).arg(losses.data[i])));
    model.zeroGradients();
    model.backward();
    for (const ParameterTensor& t : model.tensors()) {
        const Tensor& want = ref.tensors.at(name + "/grad/" + t.name);
        double maxAbs = 0;
        test::ErrorMax maxErr;
        for (size_t i = 0; i < t.size; ++i) {
            maxAbs = std::max(maxAbs, static_cast<double>(std::abs(want.data[i])));
            maxErr.addAt(std::ptrdiff_t(i), model.gradients()[t.offset + i], want.data[i]);
        }
        QVERIFY2(maxErr.within(2e-4 * maxAbs + 1e-7),
                 qPrintable(maxErr.message(QString::fromStdString(t.name)) + QString(", max |grad| %1").arg(maxAbs)));
    }
}

void TestModel::trainingLossFalls_data()
{
    QTest::addColumn<QString>("scheme");
    for (const char* s : {"alibi", "rope", "t5", "kerple-log"})
        QTest::newRow(s) << QString(s);
}

void TestModel::trainingLossFalls()
{
    QFETCH(QString, scheme);
    const SingleThreaded oneThread;
    ModelConfig config = tinyConfig(scheme.toStdString());
    config.layers = 1;
    config.dModel = 16;
    config.dFf = 32;
    config.context = 16;
    TrainConfig train;
    train.steps = 40;
    train.batch = 4;
    train.learningRate = 2e-2;
    train.minLearningRate = 1e-3;
    train.warmup = 5;
    Model model(config);
    const std::vector<uint8_t> text = generatedText(20000, 11);
    Trainer trainer(model, train, text);
    double first = 0, last = 0;
    for (int s = 0; s < train.steps; ++s) {
        const TrainStepResult r = trainer.step();
        QVERIFY(std::isfinite(r.loss));
        if (s < 3)
            first += r.loss / 3;
        if (s >= train.steps - 5)
            last += r.loss / 5;
    }
    QVERIFY2(first > 5.0, qPrintable(QString("initial loss %1, expected about ln 256 = 5.55").arg(first)));
    QVERIFY2(last < first - 2.0, qPrintable(QString("loss went from %1 to %2").arg(first).arg(last)));
    // The scheme parameters stay valid.
    validateSchemeSpec(model.schemeSpec());
}

void TestModel::trainingIsReproducible()
{
    const std::vector<uint8_t> text = generatedText(5000, 2);
    auto run = [&] {
        ModelConfig config = tinyConfig("kerple-power");
        TrainConfig train;
        train.steps = 4;
        train.batch = 3;
        Model model(config);
        Trainer trainer(model, train, text);
        std::vector<double> losses;
        for (int s = 0; s < train.steps; ++s)
            losses.push_back(trainer.step().loss);
        losses.insert(losses.end(), model.parameters().begin(), model.parameters().begin() + 10);
        return losses;
    };
    QCOMPARE(run(), run());
}

void TestModel::threadSlicesMatchOneThread_data()
{
    QTest::addColumn<QString>("scheme");
    for (const char* s : {"alibi", "t5", "kerple-log", "learned"})
        QTest::newRow(s) << QString(s);
}

void TestModel::threadSlicesMatchOneThread()
{
    // Big enough for the data-parallel path (each thread runs its own sequences, gradients summed after).
    QFETCH(QString, scheme);
    ModelConfig config = tinyConfig(scheme.toStdString());
    config.dModel = 64;
    config.context = 40;
    const int B = 5, T = 40; // odd batch: unequal slices
    const std::vector<uint8_t> text = generatedText(B * T + 1, 8);
    auto run = [&](int threads, plab::layers::FloatBuffer& losses) {
        const int saved = omp_get_max_threads();
        omp_set_num_threads(threads);
        Model model(config);
        model.forward(text.data(), text.data() + 1, B, T);
        losses = model.tokenLosses();
        model.zeroGradients();
        model.backward();
        omp_set_num_threads(saved);
        return model.gradients();
    };
    plab::layers::FloatBuffer l1, l3;
    const plab::layers::FloatBuffer g1 = run(1, l1), g3 = run(3, l3);
    for (size_t i = 0; i < l1.size(); ++i)
        QVERIFY2(std::abs(l1[i] - l3[i]) < 1e-5, qPrintable(QString("token %1").arg(i)));
    double maxAbs = 0;
    test::ErrorMax maxErr;
    for (size_t i = 0; i < g1.size(); ++i) {
        maxAbs = std::max(maxAbs, static_cast<double>(std::abs(g1[i])));
        maxErr.addAt(std::ptrdiff_t(i), g3[i], g1[i]);
    }
    QVERIFY2(maxErr.within(1e-5 * maxAbs + 1e-8), qPrintable(maxErr.message() + QString(" of %1").arg(maxAbs)));
}

void TestModel::adamwStep()
{
    // First AdamW step with bias correction: m_hat = g, v_hat = g^2, so p -= lr * (g / (|g| + eps) + wd * p).
    ModelConfig config = tinyConfig("alibi");
    Model model(config);
    TrainConfig tc;
    tc.weightDecay = 0.1;
    const plab::layers::FloatBuffer before = model.parameters();
    plab::layers::FloatBuffer& g = model.gradients();
    for (size_t i = 0; i < g.size(); ++i)
        g[i] = (i % 3 == 0) ? 0.5f : -0.25f;
    AdamW opt(model.parameterCount());
    const double lr = 0.01;
    opt.update(model, tc, lr);
    for (const ParameterTensor& t : model.tensors()) {
        for (size_t i = t.offset; i < t.offset + t.size; i += 97) {
            const double sign = g[i] > 0 ? 1 : -1;
            const double decay = t.decay ? tc.weightDecay : 0.0;
            const double want =
                before[i] - lr * (sign * std::abs(g[i]) / (std::abs(g[i]) + tc.epsilon) + decay * before[i]);
            QVERIFY2(std::abs(model.parameters()[i] - want) < 1e-6, qPrintable(QString::fromStdString(t.name)));
        }
    }
    QVERIFY(model.tensor("wte.weight").decay);
    QVERIFY(!model.tensor("layers.0.ln1.weight").decay);
    QVERIFY(!model.tensor("layers.0.attn.qkv.bias").decay);
}

void TestModel::learningRateSchedule()
{
    TrainConfig c;
    c.steps = 1000;
    c.warmup = 100;
    c.learningRate = 1e-3;
    c.minLearningRate = 1e-4;
    QCOMPARE(learningRateAt(c, 0), 1e-5);
    QCOMPARE(learningRateAt(c, 99), 1e-3);
    QVERIFY(std::abs(learningRateAt(c, 100) - 1e-3) < 1e-15);
    QVERIFY(std::abs(learningRateAt(c, 550) - 5.5e-4) < 1e-12); // half-way down the cosine
    QVERIFY(std::abs(learningRateAt(c, 1000) - 1e-4) < 1e-15);
    QVERIFY(std::abs(learningRateAt(c, 5000) - 1e-4) < 1e-15);
}

void TestModel::kerpleClamped()
{
    Model model(tinyConfig("kerple-power"));
    const ParameterTensor& r1 = model.tensor("scheme.kerple_r1");
    const ParameterTensor& r2 = model.tensor("scheme.kerple_r2");
    model.parameters()[r1.offset] = -3.0f;
    model.parameters()[r2.offset] = 2.5f;
    model.parameters()[r2.offset + 1] = -1.0f;
    clampSchemeParameters(model);
    QVERIFY(model.parameters()[r1.offset] > 0);
    QCOMPARE(model.parameters()[r2.offset], 2.0f);
    QVERIFY(model.parameters()[r2.offset + 1] > 0);
    validateSchemeSpec(model.schemeSpec());
}

void TestModel::evaluationWindows_data()
{
    QTest::addColumn<QString>("scheme");
    QTest::newRow("rope") << "rope";
    QTest::newRow("local") << "local";
}

void TestModel::evaluationWindows()
{
    QFETCH(QString, scheme);
    Model model(tinyConfig(scheme.toStdString()));
    const std::vector<uint8_t> text = generatedText(97, 4); // 96 scored tokens
    EvalOptions opt;
    opt.lengths = {8, 12, 24, 96};
    const std::vector<EvalPoint> non = evaluateModel(model, text, opt);
    QCOMPARE(int(non.size()), 4);
    for (const EvalPoint& p : non) {
        QCOMPARE(p.tokens, size_t(96));
        QVERIFY(p.supported);
        QVERIFY(std::abs(p.perplexity - std::exp(p.loss)) < 1e-9 * p.perplexity);
        QVERIFY(std::abs(p.bitsPerByte - p.loss / std::log(2.0)) < 1e-12);
    }
    // Length 96: one window = a direct forward over the whole text.
    const float direct = model.forward(text.data(), text.data() + 1, 1, 96);
    QVERIFY(std::abs(non[3].loss - direct) < 1e-5);
    // Length 12: eight windows, each an independent sequence at positions 0..11.
    double sum = 0;
    for (int w = 0; w < 8; ++w)
        sum += model.forward(text.data() + 12 * w, text.data() + 12 * w + 1, 1, 12) * 12.0;
    QVERIFY(std::abs(non[1].loss - sum / 96) < 1e-5);

    // Sliding with stride = length and a length dividing 96 is non-overlapping.
    opt.mode = EvalMode::Sliding;
    opt.stride = 12;
    opt.lengths = {12};
    QVERIFY(std::abs(evaluateModel(model, text, opt)[0].loss - non[1].loss) < 1e-6);
    // Sliding with stride 4 at length 12: window 0 scores 0..11, then each window [e-8, e+4) scores its last 4.
    opt.stride = 4;
    double slide = model.forward(text.data(), text.data() + 1, 1, 12) * 12.0;
    for (int end = 16; end <= 96; end += 4) {
        model.forward(text.data() + end - 12, text.data() + end - 11, 1, 12);
        for (int t = 8; t < 12; ++t)
            slide += model.tokenLosses()[t];
    }
    const EvalPoint sp = evaluateModel(model, text, opt)[0];
    QCOMPARE(sp.tokens, size_t(96));
    QVERIFY(std::abs(sp.loss - slide / 96) < 1e-5);
    // Batching windows does not change the numbers.
    opt.tokensPerBatch = 12;
    QVERIFY(std::abs(evaluateModel(model, text, opt)[0].loss - sp.loss) < 1e-6);
}

void TestModel::windowPlanScoresEveryTokenOnce_data()
{
    QTest::addColumn<int>("scored"); // bytes predicted
    QTest::addColumn<int>("length");
    QTest::addColumn<bool>("sliding");
    QTest::addColumn<int>("stride");  // 0: length / 2
    QTest::addColumn<int>("windows"); // counted by hand
    QTest::newRow("non-overlapping, exact") << 96 << 12 << false << 0 << 8;
    QTest::newRow("non-overlapping, short tail") << 100 << 12 << false << 0 << 9;
    QTest::newRow("non-overlapping, text shorter than a window") << 5 << 12 << false << 0 << 1;
    QTest::newRow("sliding, stride 4") << 96 << 12 << true << 4 << 22;         // 1 + (96 - 12) / 4
    QTest::newRow("sliding, default stride 6") << 96 << 12 << true << 0 << 15; // 1 + 84 / 6
    QTest::newRow("sliding, ragged end") << 97 << 12 << true << 4 << 23;       // the last window scores 1
    QTest::newRow("sliding, stride = length") << 96 << 12 << true << 12 << 8;
    QTest::newRow("sliding, length 1") << 10 << 1 << true << 0 << 10;
}

void TestModel::windowPlanScoresEveryTokenOnce()
{
    QFETCH(int, scored);
    QFETCH(int, length);
    QFETCH(bool, sliding);
    QFETCH(int, stride);
    QFETCH(int, windows);
    const std::vector<EvalWindow> plan =
        planEvalWindows(scored, length, sliding ? EvalMode::Sliding : EvalMode::NonOverlapping, stride);
    QCOMPARE(int(plan.size()), windows);
    // Scored positions, in order, cover 0..scored-1 exactly once; each window fits the text and the length.
    size_t next = 0;
    const int step = stride ? stride : std::max(1, length / 2);
    for (const EvalWindow& w : plan) {
        QVERIFY(w.length >= 1 && w.length <= length);
        QVERIFY(w.scoreFrom >= 0 && w.scoreFrom < w.length);
        QVERIFY(w.start + w.length <= size_t(scored));
        QCOMPARE(w.start + w.scoreFrom, next);
        next = w.start + w.length;
        // Sliding: every scored token after the first window sees at least length - stride predecessors.
        if (sliding && w.start > 0)
            QVERIFY(w.scoreFrom >= length - step);
    }
    QCOMPARE(next, size_t(scored));
    QCOMPARE(evalWindowCost(2 * length) > 2 * evalWindowCost(length), true); // attention grows faster than tokens
}

void TestModel::evalModeNamesRoundTrip()
{
    for (EvalMode mode : {EvalMode::NonOverlapping, EvalMode::Sliding})
        QCOMPARE(evalModeFromName(evalModeName(mode)), mode);
    QCOMPARE(QString::fromLatin1(evalModeName(EvalMode::Sliding)), QStringLiteral("sliding"));
    try {
        evalModeFromName("overlapping");
        QFAIL("an unknown mode was accepted");
    } catch (const InputError& e) {
        QVERIFY(QString::fromStdString(e.what()).contains(QStringLiteral("allowed: nonoverlapping, sliding")));
    }
}

void TestModel::evaluationRefusesLengthsPastText_data()
{
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<QList<int>>("lengths");
    QTest::addColumn<int>("maxTokens");
    QTest::addColumn<QString>("error"); // empty: evaluated
    // The text has 97 bytes, so 96 are scored.
    QTest::newRow("a length past the text")
        << "rope" << QList<int>{8, 128} << 0 << "lengths 128 exceed the text scored";
    QTest::newRow("a length past max-tokens") << "alibi" << QList<int>{16, 64} << 32 << "lengths 64 exceed";
    QTest::newRow("the whole text") << "alibi" << QList<int>{96} << 0 << "";
    QTest::newRow("learned past its context: unsupported, not refused") << "learned" << QList<int>{12, 128} << 0 << "";
}

void TestModel::evaluationRefusesLengthsPastText()
{
    QFETCH(QString, scheme);
    QFETCH(QList<int>, lengths);
    QFETCH(int, maxTokens);
    QFETCH(QString, error);
    Model model(tinyConfig(scheme.toStdString()));
    const std::vector<uint8_t> text = generatedText(97, 4);
    EvalOptions opt;
    opt.lengths.assign(lengths.begin(), lengths.end());
    opt.maxTokens = static_cast<size_t>(maxTokens);
    opt.textName = "the test text";
    try {
        const std::vector<EvalPoint> points = evaluateModel(model, text, opt);
        QVERIFY2(error.isEmpty(), "a length past the scored text was evaluated");
        QCOMPARE(points.size(), size_t(lengths.size()));
        QCOMPARE(points.back().supported, scheme != "learned");
    } catch (const InputError& e) {
        const QString message = QString::fromStdString(e.what());
        QVERIFY2(!error.isEmpty() && message.contains(error) && message.contains("the test text"), e.what());
    }
}

void TestModel::learnedPastContextUnsupported()
{
    Model model(tinyConfig("learned")); // context 12
    const std::vector<uint8_t> text = generatedText(200, 4);
    EvalOptions opt;
    opt.lengths = {12, 24};
    const std::vector<EvalPoint> points = evaluateModel(model, text, opt);
    QVERIFY(points[0].supported);
    QVERIFY(std::isfinite(points[0].loss));
    QVERIFY(!points[1].supported);
    QVERIFY(std::isnan(points[1].perplexity));
    QVERIFY(points[1].note.find("learned") != std::string::npos);
    QVERIFY_THROWS_EXCEPTION(InputError, model.forward(text.data(), text.data() + 1, 1, 13));
}

// The named presets (CLI --preset and the GUI's Train tab read the same table).
void TestModel::presets_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<int>("layers");
    QTest::addColumn<int>("dModel");
    QTest::addColumn<int>("context");
    QTest::addColumn<int>("batch");
    QTest::addColumn<int>("steps");
    QTest::newRow("tiny") << "tiny" << 1 << 64 << 32 << 8 << 1500;
    QTest::newRow("quick") << "quick" << 2 << 128 << 64 << 16 << 1500;
    QTest::newRow("large") << "large" << 4 << 512 << 256 << 8 << 2000;
}

void TestModel::presets()
{
    QFETCH(QString, name);
    QFETCH(int, layers);
    QFETCH(int, dModel);
    QFETCH(int, context);
    QFETCH(int, batch);
    QFETCH(int, steps);
    ModelConfig model;
    TrainConfig train;
    applyPreset(name.toStdString(), model, train);
    QCOMPARE(model.layers, layers);
    QCOMPARE(model.dModel, dModel);
    QCOMPARE(model.context, context);
    QCOMPARE(train.batch, batch);
    QCOMPARE(train.steps, steps);
    validateModelConfig(model);
    validateTrainConfig(train);
    const std::vector<std::string> names = presetNames();
    QVERIFY(std::find(names.begin(), names.end(), name.toStdString()) != names.end());
}

// local/bca inside a model: the default window is the largest W (even for bca) with layers (W - 1) + 1 <= context,
// so the model's whole receptive field fits one training window; an explicit window always wins.
void TestModel::defaultWindowKeepsReceptiveFieldInContext_data()
{
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<int>("layers");
    QTest::addColumn<int>("context");
    QTest::addColumn<QStringList>("sets");
    QTest::addColumn<int>("window");
    QTest::newRow("local, 1 layer: the training context") << "local" << 1 << 64 << QStringList{} << 64;
    QTest::newRow("local, quick preset") << "local" << 2 << 64 << QStringList{} << 32;
    QTest::newRow("local, large preset") << "local" << 4 << 256 << QStringList{} << 64;
    QTest::newRow("local, 3 layers: 3*21+1 = 64") << "local" << 3 << 64 << QStringList{} << 22;
    QTest::newRow("local, 3 layers, context 65") << "local" << 3 << 65 << QStringList{} << 22;
    QTest::newRow("local, more layers than context") << "local" << 64 << 2 << QStringList{} << 1;
    QTest::newRow("local, explicit window wins") << "local" << 2 << 64 << QStringList{"window=64"} << 64;
    QTest::newRow("bca, quick preset") << "bca" << 2 << 64 << QStringList{} << 32;
    QTest::newRow("bca, 3 layers: 22 is even") << "bca" << 3 << 64 << QStringList{} << 22;
    QTest::newRow("bca, 5 layers: 13 rounds down to 12") << "bca" << 5 << 64 << QStringList{} << 12;
    QTest::newRow("bca, 1 layer, odd context") << "bca" << 1 << 63 << QStringList{} << 62;
    QTest::newRow("bca, never below one block pair") << "bca" << 8 << 4 << QStringList{} << 2;
}

void TestModel::defaultWindowKeepsReceptiveFieldInContext()
{
    QFETCH(QString, scheme);
    QFETCH(int, layers);
    QFETCH(int, context);
    QFETCH(QStringList, sets);
    QFETCH(int, window);
    ModelConfig config;
    config.scheme = scheme.toStdString();
    config.layers = layers;
    config.context = context;
    for (const QString& set : sets)
        config.schemeSettings.push_back(set.toStdString());
    const SchemeSpec spec = modelSchemeSpec(config);
    QCOMPARE(spec.intParam("window"), window);
    if (sets.isEmpty() && window > 2) // the receptive field fits, and W + 1 (W + 2 for bca) would not
        QVERIFY(layers * (window - 1) + 1 <= context &&
                layers * (window + (scheme == "bca" ? 2 : 1) - 1) + 1 > context);
    // The checkpoint's config carries the resolved window, so a reloaded model keeps it.
    const ModelConfig reloaded = ModelConfig::fromJson(config.toJson(), "test");
    QCOMPARE(modelSchemeSpec(reloaded).intParam("window"), window);
}

void TestModel::parameterCountMatches()
{
    for (const SchemeInfo& s : schemeCatalog()) {
        ModelConfig c = tinyConfig(s.name);
        const Model model(c);
        QCOMPARE(modelParameterCount(c), model.parameterCount());
    }
    ModelConfig huge = tinyConfig("alibi");
    huge.dModel = 8192;
    huge.layers = 64;
    huge.dFf = 65536;
    QVERIFY_THROWS_EXCEPTION(InputError, validateModelConfig(huge)); // refused before any allocation
}

void TestModel::badConfigs_data()
{
    QTest::addColumn<QString>("field");
    QTest::addColumn<QString>("message");
    QTest::newRow("layers 0") << "layers=0"
                              << "layers = 0";
    QTest::newRow("heads not dividing") << "heads=3"
                                        << "not divisible";
    QTest::newRow("context 1") << "context=1"
                               << "context = 1";
    QTest::newRow("unknown scheme") << "scheme=nosuch"
                                    << "nosuch";
    QTest::newRow("rope dim mismatch") << "rope dim=8"
                                       << "head dim";
    QTest::newRow("kerple r2 out of range") << "kerple-power r2=3"
                                            << "r2";
    QTest::newRow("alibi has no dim") << "alibi dim=8"
                                      << "no parameter";
}

void TestModel::badConfigs()
{
    QFETCH(QString, field);
    QFETCH(QString, message);
    ModelConfig c = tinyConfig("alibi");
    if (field == "layers=0")
        c.layers = 0;
    else if (field == "heads=3")
        c.heads = 3;
    else if (field == "context=1")
        c.context = 1;
    else if (field == "scheme=nosuch")
        c.scheme = "nosuch";
    else {
        const QStringList parts = field.split(' ');
        c.scheme = parts[0].toStdString();
        c.schemeSettings = {parts[1].toStdString()};
    }
    try {
        Model model(c);
        QFAIL("no InputError");
    } catch (const InputError& e) {
        QVERIFY2(QString(e.what()).contains(message), e.what());
    }
}

// train --init's merge rule (core's takeCheckpointModel and mergeCheckpointSettings): which fields come from the
// checkpoint and which the run's own options replace.
void TestModel::initMergeRule_data()
{
    QTest::addColumn<bool>("keepSizes");    // a preset named sizes of its own
    QTest::addColumn<QString>("method");    // "-": none given
    QTest::addColumn<QStringList>("sets");  // the run's --set
    QTest::addColumn<int>("context");       // the run's context after the merge
    QTest::addColumn<QString>("scaling");   // the method after the merge
    QTest::addColumn<QStringList>("schemeSettings");
    QTest::addColumn<QStringList>("scalingSettings");
    QTest::addColumn<int>("kept"); // the original context keepOriginalContext carried over (0: none)
    // The checkpoint: rope under yarn (factor 4), base 500, context 32, 2 layers, seed 7, logn.
    QTest::newRow("all from the checkpoint") << false << "-" << QStringList{} << 32 << "yarn" << QStringList{"base=500"}
                                             << QStringList{"factor=4"} << 0;
    QTest::newRow("a preset's own sizes, longer context: yarn keeps L = 32")
        << true << "-" << QStringList{} << 64 << "yarn" << QStringList{"base=500"}
        << QStringList{"factor=4", "original-context=32"} << 32;
    QTest::newRow("a scheme setting replaces by name")
        << false << "-" << QStringList{"base=800"} << 32 << "yarn" << QStringList{"base=800"}
        << QStringList{"factor=4"} << 0;
    QTest::newRow("a method setting replaces by name")
        << false << "-" << QStringList{"factor=8"} << 32 << "yarn" << QStringList{"base=500"}
        << QStringList{"factor=8"} << 0;
    QTest::newRow("a method replaces the method wholly")
        << false << "pi" << QStringList{} << 32 << "pi" << QStringList{"base=500"} << QStringList{} << 0;
    QTest::newRow("a method and its setting")
        << false << "pi" << QStringList{"factor=2"} << 32 << "pi" << QStringList{"base=500"}
        << QStringList{"factor=2"} << 0;
}

void TestModel::initMergeRule()
{
    QFETCH(bool, keepSizes);
    QFETCH(QString, method);
    QFETCH(QStringList, sets);
    QFETCH(int, context);
    QFETCH(QString, scaling);
    QFETCH(QStringList, schemeSettings);
    QFETCH(QStringList, scalingSettings);
    QFETCH(int, kept);
    auto strings = [](const QStringList& list) {
        std::vector<std::string> out;
        for (const QString& s : list)
            out.push_back(s.toStdString());
        return out;
    };
    ModelConfig checkpoint;
    checkpoint.scheme = "rope";
    checkpoint.layers = 2;
    checkpoint.dModel = 32;
    checkpoint.heads = 2;
    checkpoint.dFf = 64;
    checkpoint.context = 32;
    checkpoint.logn = true;
    checkpoint.seed = 7;
    checkpoint.schemeSettings = {"base=500"};
    checkpoint.scaling = "yarn";
    checkpoint.scalingSettings = {"factor=4"};
    ModelConfig run; // the preset's: alibi, 2 x 128, context 64
    takeCheckpointModel(run, checkpoint, keepSizes);
    QCOMPARE(run.scheme, std::string("rope"));
    QCOMPARE(run.seed, uint64_t(7));
    QVERIFY(run.logn);
    QCOMPARE(run.dModel, keepSizes ? ModelConfig{}.dModel : 32);
    QCOMPARE(run.context, context);
    const std::optional<std::string> given =
        method == "-" ? std::nullopt : std::optional<std::string>(method.toStdString());
    QCOMPARE(mergeCheckpointSettings(run, checkpoint, given, strings(sets)), kept);
    QCOMPARE(run.scaling, scaling.toStdString());
    QCOMPARE(run.schemeSettings, strings(schemeSettings));
    QCOMPARE(run.scalingSettings, strings(scalingSettings));
}

PLAB_QTEST_GUILESS_MAIN(TestModel)
#include "tst_model.moc"
