// Scheme library against independent references: official ALiBi slopes, HF T5 buckets, closed forms, masks, entropy.
#include "attention/attention.h"
#include "attention/attention_internal.h"
#include "views/bias_views.h"
#include "views/entropy.h"
#include "base/errors.h"
#include "base/npy.h"
#include "schemes/position_bias.h"
#include "schemes/schemes.h"
#include "test_main.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>

using namespace plab;

namespace {

QJsonObject reference()
{
    static QJsonObject ref = [] {
        QFile f(QStringLiteral(POSITIONLAB_TEST_DATA "/scheme_reference.json"));
        if (!f.open(QIODevice::ReadOnly))
            qFatal("cannot open scheme_reference.json");
        return QJsonDocument::fromJson(f.readAll()).object();
    }();
    return ref;
}

bool near(double a, double b, double tol = 1e-5)
{
    return std::abs(a - b) <= tol * std::max(1.0, std::abs(b));
}

// Independent statement of each mask, written from design.md rather than from PositionBias::keyRange: with sinks S,
// keys n < S stay visible to every query m >= n (to every query when bidirectional).
bool expectedVisible(const QString& scheme, bool bidirectional, int window, int m, int n, int sinks = 0)
{
    if (n < sinks && (bidirectional || n <= m))
        return true;
    const int r = m - n;
    if (scheme == "local")
        return bidirectional ? std::abs(r) < window : (r >= 0 && r < window);
    if (scheme == "bca") {
        const int block = window / 2;
        return n <= m && n / block >= m / block - 1;
    }
    return bidirectional || n <= m;
}

QStringList allSchemeNames()
{
    QStringList names;
    for (const SchemeInfo& s : schemeCatalog())
        names << QString::fromStdString(s.name);
    return names;
}

} // namespace

class TestSchemes : public QObject {
    Q_OBJECT

private slots:
    void catalogue();

    void alibiSlopes_data();
    void alibiSlopes();

    void t5Buckets_data();
    void t5Buckets();

    void sinusoidalDot_data();
    void sinusoidalDot();

    void rotaryProbe_data();
    void rotaryProbe();

    void kerple_data();
    void kerple();

    void sandwich();

    void masks_data();
    void masks();

    void sinksInEveryView_data();
    void sinksInEveryView();

    void shiftInvariance_data();
    void shiftInvariance();

    void lognModifier();
    void logitCModifier_data();
    void logitCModifier();

    void entropyClosedForms_data();
    void entropyClosedForms();
    void entropyRandomIsSeeded();
    void entropyProgressStopsBetweenLengths_data();
    void entropyProgressStopsBetweenLengths();
    void defaultEntropyLengths_data();
    void defaultEntropyLengths();

    void badParameters_data();
    void badParameters();

    void npyRoundTrip();
};

void TestSchemes::catalogue()
{
    const QStringList want = {"none",         "sinusoidal", "learned",  "rope",  "xpos", "t5",  "alibi",
                              "kerple-power", "kerple-log", "sandwich", "local", "bca",  "fire", "fox", "cope"};
    QCOMPARE(allSchemeNames(), want);
    for (const SchemeInfo& s : schemeCatalog()) {
        QVERIFY2(!s.formula.empty() && !s.explanation.empty() && !s.title.empty(), s.name.c_str());
        for (const ParamInfo& p : s.params)
            QVERIFY2(p.accepts(p.defaultValue), (s.name + " default of " + p.name).c_str());
    }
    QVERIFY_THROWS_EXCEPTION(InputError, schemeByName("nosuch"));
}

void TestSchemes::alibiSlopes_data()
{
    QTest::addColumn<int>("heads");
    QTest::addColumn<QVariantList>("slopes");
    const QJsonObject slopes = reference()["alibi_slopes"].toObject();
    for (auto it = slopes.begin(); it != slopes.end(); ++it)
        QTest::newRow(qPrintable(it.key() + " heads")) << it.key().toInt() << it.value().toArray().toVariantList();
}

void TestSchemes::alibiSlopes()
{
    QFETCH(int, heads);
    QFETCH(QVariantList, slopes);
    const std::vector<double> got = plab::alibiSlopes(heads);
    QCOMPARE(int(got.size()), heads);
    for (int h = 0; h < heads; ++h)
        QVERIFY2(near(got[h], slopes[h].toDouble(), 1e-12), qPrintable(QString("head %1").arg(h)));

    // The bias itself: -slope_h (m - n) causal, -slope_h |m - n| bidirectional.
    for (bool bidir : {false, true}) {
        const PositionBias bias(makeSchemeSpec("alibi", heads, bidir), 9);
        for (int h = 0; h < heads; ++h)
            for (int m = 0; m < 9; ++m)
                for (int n = 0; n < 9; ++n)
                    if (bidir || n <= m)
                        QVERIFY(near(bias.view(h, m, n), -slopes[h].toDouble() * std::abs(m - n)));
    }
}

void TestSchemes::t5Buckets_data()
{
    QTest::addColumn<bool>("bidirectional");
    QTest::addColumn<int>("numBuckets");
    QTest::addColumn<int>("maxDistance");
    QTest::addColumn<int>("relMin");
    QTest::addColumn<QVariantList>("buckets");
    for (const QJsonValue& v : reference()["t5"].toArray()) {
        const QJsonObject o = v.toObject();
        QTest::newRow(qPrintable(QString("%1 nb=%2 maxd=%3")
                                     .arg(o["bidirectional"].toBool() ? "bidir" : "causal")
                                     .arg(o["num_buckets"].toInt())
                                     .arg(o["max_distance"].toInt())))
            << o["bidirectional"].toBool() << o["num_buckets"].toInt() << o["max_distance"].toInt()
            << o["rel_min"].toInt() << o["buckets"].toArray().toVariantList();
    }
}

void TestSchemes::t5Buckets()
{
    QFETCH(bool, bidirectional);
    QFETCH(int, numBuckets);
    QFETCH(int, maxDistance);
    QFETCH(int, relMin);
    QFETCH(QVariantList, buckets);
    for (int i = 0; i < buckets.size(); ++i) {
        const int rel = relMin + i;
        QCOMPARE(t5Bucket(rel, bidirectional, numBuckets, maxDistance), buckets[i].toInt());
    }
    // The bucket matrix puts bucket(n - m) at [m][n] and -1 on masked cells.
    const SchemeSpec spec =
        makeSchemeSpec("t5", 2, bidirectional,
                       {"num-buckets=" + std::to_string(numBuckets), "max-distance=" + std::to_string(maxDistance)});
    const int n = 40;
    const std::vector<int32_t> matrix = t5BucketMatrix(spec, n);
    for (int m = 0; m < n; ++m)
        for (int k = 0; k < n; ++k) {
            const int want = (bidirectional || k <= m) ? buckets[k - m - relMin].toInt() : -1;
            QCOMPARE(matrix[m * n + k], want);
        }
}

void TestSchemes::sinusoidalDot_data()
{
    QTest::addColumn<int>("dim");
    QTest::addColumn<double>("base");
    QTest::addColumn<QVariantList>("distance");
    QTest::addColumn<QVariantList>("dot");
    for (const QJsonValue& v : reference()["sinusoidal_dot"].toArray()) {
        const QJsonObject o = v.toObject();
        QTest::newRow(qPrintable(QString("d=%1 base=%2").arg(o["dim"].toInt()).arg(o["base"].toDouble())))
            << o["dim"].toInt() << o["base"].toDouble() << o["distance"].toArray().toVariantList()
            << o["dot"].toArray().toVariantList();
    }
}

void TestSchemes::sinusoidalDot()
{
    QFETCH(int, dim);
    QFETCH(double, base);
    QFETCH(QVariantList, distance);
    QFETCH(QVariantList, dot);
    const DotCurve curve = sinusoidalDotCurve(dim, base, 4095);
    const SchemeSpec spec =
        makeSchemeSpec("sinusoidal", 1, true, {"dim=" + std::to_string(dim), "base=" + std::to_string(base)});
    const PositionBias bias(spec, 4096);
    std::vector<double> frequencies;
    for (int i = 0; i < dim / 2; ++i)
        frequencies.push_back(rotaryFrequency(i, dim, base));
    for (int i = 0; i < distance.size(); ++i) {
        const int r = distance[i].toInt();
        QVERIFY(near(curve.dot[r], dot[i].toDouble(), 1e-9));
        QVERIFY(near(plab::sinusoidalDot(r, frequencies), dot[i].toDouble(), 1e-9));
        // Bias view = dot - d/2, symmetric in r; float storage.
        QVERIFY(std::abs(bias.view(0, r, 0) - (dot[i].toDouble() - dim / 2.0)) < 2e-4 * dim);
        QVERIFY(std::abs(bias.view(0, 0, r) - (dot[i].toDouble() - dim / 2.0)) < 2e-4 * dim);
    }
    QCOMPARE(curve.dot[0], dim / 2.0); // cos(0) summed over d/2 frequencies
}

void TestSchemes::rotaryProbe_data()
{
    QTest::addColumn<QJsonObject>("row");
    for (const QJsonValue& v : reference()["rotary_probe"].toArray())
        QTest::newRow(qPrintable(QString("d=%1").arg(v.toObject()["dim"].toInt()))) << v.toObject();
}

void TestSchemes::rotaryProbe()
{
    QFETCH(QJsonObject, row);
    const std::string dim = std::to_string(row["dim"].toInt());
    const std::string base = std::to_string(row["base"].toDouble());
    const SchemeSpec rope = makeSchemeSpec("rope", 1, false, {"dim=" + dim, "base=" + base});
    const SchemeSpec xpos =
        makeSchemeSpec("xpos", 1, false,
                       {"dim=" + dim, "base=" + base, "gamma=" + std::to_string(row["gamma"].toDouble()),
                        "scale-base=" + std::to_string(row["scale_base"].toDouble())});
    const PositionBias ropeBias(rope, 4096), xposBias(xpos, 4096);
    const QJsonArray dist = row["distance"].toArray();
    for (int i = 0; i < dist.size(); ++i) {
        const int r = dist[i].toInt();
        QVERIFY(std::abs(ropeBias.view(0, r, 0) - row["rope"].toArray()[i].toDouble()) < 1e-3);
        QVERIFY(std::abs(xposBias.view(0, r, 0) - row["xpos"].toArray()[i].toDouble()) < 1e-3);
    }
    // The probe is the dot product of rotated all-ones vectors: check the kernels' rotation against it directly.
    const int d = row["dim"].toInt();
    const int m = 37, n = 11;
    const detail::RotaryFrequencies rotation = detail::rotaryFrequencies(xpos, d, m + 1);
    double dotQK = 0;
    for (int i = 0; i < d / 2; ++i) {
        double cq = 0, sq = 0, ck = 0, sk = 0;
        rotation.rotation(m, i, false, cq, sq);
        rotation.rotation(n, i, true, ck, sk);
        // R_m (1, 1) . R_n (1, 1) = (cq - sq)(ck - sk) + (sq + cq)(sk + ck)
        dotQK += (cq - sq) * (ck - sk) + (sq + cq) * (sk + ck);
    }
    QVERIFY2(std::abs(dotQK - xposBias.view(0, m, n)) < 1e-3, qPrintable(QString::number(dotQK)));
}

void TestSchemes::kerple_data()
{
    QTest::addColumn<QJsonObject>("row");
    for (const QJsonValue& v : reference()["kerple"].toArray())
        QTest::newRow(
            qPrintable(QString("r1=%1 r2=%2").arg(v.toObject()["r1"].toDouble()).arg(v.toObject()["r2"].toDouble())))
            << v.toObject();
}

void TestSchemes::kerple()
{
    QFETCH(QJsonObject, row);
    const std::vector<std::string> sets = {"r1=" + std::to_string(row["r1"].toDouble()),
                                           "r2=" + std::to_string(row["r2"].toDouble())};
    const PositionBias power(makeSchemeSpec("kerple-power", 2, false, sets), 4096);
    const PositionBias logk(makeSchemeSpec("kerple-log", 2, true, sets), 4096);
    const QJsonArray dist = row["distance"].toArray();
    for (int i = 0; i < dist.size(); ++i) {
        const int r = dist[i].toInt();
        QVERIFY(near(power.view(1, r, 0), row["power"].toArray()[i].toDouble()));
        QVERIFY(near(logk.view(1, 0, r), row["log"].toArray()[i].toDouble()));
    }
    // Per-head trained values replace the defaults.
    SchemeSpec spec = makeSchemeSpec("kerple-log", 2, false, sets);
    spec.kerpleR1 = {0.5, 3.0};
    spec.kerpleR2 = {1.0, 0.1};
    const PositionBias trained(spec, 16);
    QVERIFY(near(trained.view(1, 10, 0), -3.0 * std::log1p(0.1 * 10)));
    spec.kerpleR2 = {1.0, -1.0};
    QVERIFY_THROWS_EXCEPTION(InputError, PositionBias(spec, 16));
}

void TestSchemes::sandwich()
{
    const QJsonObject dots = reference()["sinusoidal_dot"].toArray()[0].toObject(); // d = 128, base 1e4
    const int heads = 8;
    const PositionBias bias(makeSchemeSpec("sandwich", heads, false), 4096);
    const QJsonArray dist = dots["distance"].toArray();
    for (int h = 0; h < heads; ++h)
        for (int i = 0; i < dist.size(); ++i) {
            const int r = dist[i].toInt();
            const double want = (dots["dot"].toArray()[i].toDouble() - 64.0) * heads / (8.0 * (h + 1));
            QVERIFY(std::abs(bias.view(h, r, 0) - want) < 1e-3 * std::max(1.0, std::abs(want)));
        }
}

void TestSchemes::masks_data()
{
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<bool>("bidirectional");
    QTest::addColumn<int>("window");
    QTest::addColumn<int>("length");
    for (const QString& s : allSchemeNames()) {
        const SchemeInfo& info = schemeByName(s.toStdString());
        if (info.dataDependent) // cope: no static bias view to read the mask from (tst_cope checks its causal rows)
            continue;
        const int window = s == "bca" ? 6 : 5;
        for (bool bidir : {false, true}) {
            if (bidir && !info.bidirectionalAllowed)
                continue;
            for (int n : {1, 2, 7, 33})
                QTest::newRow(qPrintable(QString("%1 %2 N=%3").arg(s, bidir ? "bidir" : "causal").arg(n)))
                    << s << bidir << window << n;
        }
    }
}

void TestSchemes::masks()
{
    QFETCH(QString, scheme);
    QFETCH(bool, bidirectional);
    QFETCH(int, window);
    QFETCH(int, length);
    std::vector<std::string> sets;
    if (schemeByName(scheme.toStdString()).hasWindow)
        sets.push_back("window=" + std::to_string(window));
    const PositionBias bias(makeSchemeSpec(scheme.toStdString(), 3, bidirectional, sets), length);
    for (int h = 0; h < 3; ++h) {
        const std::vector<float> matrix = biasViewMatrix(bias, h, length);
        for (int m = 0; m < length; ++m)
            for (int n = 0; n < length; ++n) {
                const float v = matrix[m * length + n];
                const bool visible = expectedVisible(scheme, bidirectional, window, m, n);
                QVERIFY2(visible ? std::isfinite(v) : (std::isinf(v) && v < 0),
                         qPrintable(QString("[%1][%2] = %3").arg(m).arg(n).arg(v)));
            }
    }
}

// Sinks are one rule read by every view: the main heatmap, its sampled thumbnails (cell for cell) and the pair count.
void TestSchemes::sinksInEveryView_data()
{
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<bool>("bidirectional");
    QTest::addColumn<int>("window");
    QTest::addColumn<int>("sinks");
    QTest::addColumn<int>("length");
    QTest::addColumn<int>("samples");
    QTest::newRow("local w8 s4 N64, 48 samples") << "local" << false << 8 << 4 << 64 << 48;
    QTest::newRow("local w8 s4 N64, 64 samples") << "local" << false << 8 << 4 << 64 << 64;
    QTest::newRow("local w8 s4 N64, 100 samples (capped at N)") << "local" << false << 8 << 4 << 64 << 100;
    QTest::newRow("local bidir w5 s3 N40, 16 samples") << "local" << true << 5 << 3 << 40 << 16;
    QTest::newRow("bca w8 s3 N64, 48 samples") << "bca" << false << 8 << 3 << 64 << 48;
    QTest::newRow("bca w6 s20 N33 (sinks past the blocks)") << "bca" << false << 6 << 20 << 33 << 33;
    QTest::newRow("alibi (no sinks) N64, 48 samples") << "alibi" << false << 0 << 0 << 64 << 48;
    QTest::newRow("local w8 s0 N64, 48 samples") << "local" << false << 8 << 0 << 64 << 48;
}

void TestSchemes::sinksInEveryView()
{
    QFETCH(QString, scheme);
    QFETCH(bool, bidirectional);
    QFETCH(int, window);
    QFETCH(int, sinks);
    QFETCH(int, length);
    QFETCH(int, samples);
    std::vector<std::string> sets;
    if (window > 0)
        sets = {"window=" + std::to_string(window), "sinks=" + std::to_string(sinks)};
    const SchemeSpec spec = makeSchemeSpec(scheme.toStdString(), 2, bidirectional, sets);
    const PositionBias bias(spec, length);
    const int t = std::min(samples, length);
    double visibleCells = 0;
    for (int h = 0; h < 2; ++h) {
        const std::vector<float> matrix = biasViewMatrix(bias, h, length);
        for (int m = 0; m < length; ++m)
            for (int n = 0; n < length; ++n) {
                const float v = matrix[m * length + n];
                const bool visible = expectedVisible(scheme, bidirectional, window, m, n, sinks);
                visibleCells += visible && h == 0 ? 1 : 0;
                QVERIFY2(visible ? std::isfinite(v) : (std::isinf(v) && v < 0),
                         qPrintable(QString("main view [%1][%2] = %3").arg(m).arg(n).arg(v)));
            }
        const SampledView sampled = biasViewSamples(bias, h, length, samples);
        QCOMPARE(sampled.size, t);
        QCOMPARE(sampled.values.size(), size_t(t) * t);
        for (int i = 0; i < t; ++i) {
            const int m = int((i + 0.5) * length / t); // the cell centre
            QCOMPARE(viewSamplePosition(i, t, length), m);
            for (int j = 0; j < t; ++j) {
                const int n = int((j + 0.5) * length / t);
                const float want = matrix[m * length + n];
                const float got = sampled.values[size_t(i) * t + j];
                QVERIFY2(got == want, qPrintable(QString("head %1 sample (m = %2, n = %3): %4, main view %5")
                                                     .arg(h)
                                                     .arg(m)
                                                     .arg(n)
                                                     .arg(got)
                                                     .arg(want)));
            }
        }
    }
    QCOMPARE(visiblePairs(spec, length), visibleCells);
}

void TestSchemes::shiftInvariance_data()
{
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<bool>("bidirectional");
    for (const QString& s : allSchemeNames()) {
        if (schemeByName(s.toStdString()).dataDependent) // cope: no static bias to shift (the view refuses it)
            continue;
        QTest::newRow(qPrintable(s + " causal")) << s << false;
        if (schemeByName(s.toStdString()).bidirectionalAllowed)
            QTest::newRow(qPrintable(s + " bidir")) << s << true;
    }
}

void TestSchemes::shiftInvariance()
{
    // Every scheme's bias is relative: entry (m, n) equals (m + 1, n + 1) wherever both are visible.
    QFETCH(QString, scheme);
    QFETCH(bool, bidirectional);
    const int length = 48;
    const PositionBias bias(makeSchemeSpec(scheme.toStdString(), 4, bidirectional), length);
    for (int h = 0; h < 4; ++h) {
        const std::vector<float> matrix = biasViewMatrix(bias, h, length);
        int compared = 0;
        for (int m = 0; m + 1 < length; ++m)
            for (int n = 0; n + 1 < length; ++n) {
                const float a = matrix[m * length + n];
                const float b = matrix[(m + 1) * length + n + 1];
                if (std::isfinite(a) && std::isfinite(b)) {
                    QCOMPARE(a, b);
                    ++compared;
                }
            }
        QVERIFY(compared > length);
    }
}

void TestSchemes::lognModifier()
{
    const int context = 16;
    const PositionBias bias(makeSchemeSpec("alibi", 8, false, {}, context, true), 64);
    const std::vector<double> slopes = plab::alibiSlopes(8);
    QCOMPARE(bias.rowScale(0, 64), 1.0f);
    QCOMPARE(bias.rowScale(context - 1, 64), 1.0f);
    const std::vector<float> matrix = biasViewMatrix(bias, 2, 64);
    for (int m : {15, 16, 40, 63}) {
        const double scale = m + 1 > context ? std::log(m + 1.0) / std::log(16.0) : 1.0;
        QVERIFY(near(bias.rowScale(m, 64), scale));
        QVERIFY(near(matrix[m * 64 + 0], -slopes[2] * m * scale));
    }
    QVERIFY_THROWS_EXCEPTION(InputError, makeSchemeSpec("alibi", 8, false, {}, 0, true));
}

void TestSchemes::logitCModifier_data()
{
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<double>("c");
    QTest::addColumn<int>("context");
    QTest::addColumn<int>("length");
    QTest::newRow("none at L") << "none" << 0.5 << 8 << 8;
    QTest::newRow("none at 3L") << "none" << 0.5 << 8 << 24;
    QTest::newRow("none c=0") << "none" << 0.0 << 8 << 24;
    QTest::newRow("alibi at 2L") << "alibi" << 0.25 << 6 << 12;
    QTest::newRow("rope+yarn at 4L") << "rope" << 0.1 << 4 << 16;
}

// DroPE's logit-c against its closed form: every score of a sequence of n > L positions times 1 + c ln(n/L), so the
// fused kernel's output is softmax(beta (q.k/sqrt(D) + b)) v written out by hand here (no PositionBias::rowScale).
void TestSchemes::logitCModifier()
{
    QFETCH(QString, scheme);
    QFETCH(double, c);
    QFETCH(int, context);
    QFETCH(int, length);
    const int heads = 2, dim = 4;
    std::vector<std::string> settings = {"logit-c=" + std::to_string(c)};
    if (scheme == "rope")
        settings.push_back("dim=4");
    const SchemeSpec spec = makeSchemeSpec(scheme.toStdString(), heads, false, settings, context, false,
                                           scheme == "rope" ? "yarn" : "none");
    QCOMPARE(spec.logitC, c);
    const double beta = length > context ? 1 + c * std::log(double(length) / context) : 1.0;
    const PositionBias bias(spec, length);
    for (int m = 0; m < length; ++m)
        QVERIFY(near(bias.rowScale(m, length), beta, 1e-6));

    // The same spec without the modifier gives the unscaled scores S (its rotary step included); the kernel with it
    // must give softmax(beta S) v.
    SchemeSpec plain = spec;
    plain.logitC = 0;
    const PositionBias plainBias(plain, length);
    AttentionDims dims;
    dims.heads = heads;
    dims.length = length;
    dims.headDim = dim;
    std::vector<float> q(dims.elements()), k(dims.elements()), v(dims.elements());
    for (size_t i = 0; i < q.size(); ++i) {
        q[i] = float(std::sin(0.37 * i + 0.1));
        k[i] = float(std::cos(0.23 * i + 0.4));
        v[i] = float(std::sin(0.11 * i + 1.3));
    }
    AttentionOptions withProbabilities;
    withProbabilities.wantProbabilities = true;
    const AttentionForward unscaled =
        attentionForward(plainBias, dims, q.data(), k.data(), v.data(), withProbabilities);
    const AttentionForward scaled = attentionForward(bias, dims, q.data(), k.data(), v.data());
    for (int h = 0; h < heads; ++h)
        for (int m = 0; m < length; ++m) {
            // Unscaled softmax rows give S up to a per-row constant: log p = S - lse; beta S then re-normalises.
            const float* p = unscaled.probabilities.data() + (size_t(h) * length + m) * length;
            std::vector<double> weight(m + 1);
            double total = 0;
            for (int n = 0; n <= m; ++n)
                total += weight[n] = std::exp(beta * std::log(double(p[n])));
            for (int d = 0; d < dim; ++d) {
                double expected = 0;
                for (int n = 0; n <= m; ++n)
                    expected += weight[n] / total * v[(size_t(h) * length + n) * dim + d];
                const double got = scaled.out[(size_t(h) * length + m) * dim + d];
                QVERIFY2(
                    near(got, expected, 1e-4),
                    qPrintable(QString("head %1 row %2 dim %3: %4 vs %5").arg(h).arg(m).arg(d).arg(got).arg(expected)));
            }
        }
}

void TestSchemes::entropyClosedForms_data()
{
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<bool>("bidirectional");
    QTest::addColumn<QStringList>("sets");
    QTest::addColumn<int>("length");
    for (int n : {1, 2, 10, 100, 1000}) {
        QTest::newRow(qPrintable(QString("none causal N=%1").arg(n))) << "none" << false << QStringList{} << n;
        QTest::newRow(qPrintable(QString("none bidir N=%1").arg(n))) << "none" << true << QStringList{} << n;
        // q = k = 0 would make rope equal none: its row reads q = k = a e0, whose scores are a^2 cos(m - n) / sqrt(D).
        QTest::newRow(qPrintable(QString("rope q=k=e0 N=%1").arg(n))) << "rope" << false << QStringList{} << n;
        QTest::newRow(qPrintable(QString("local W=16 N=%1").arg(n)))
            << "local" << false << QStringList{"window=16"} << n;
        QTest::newRow(qPrintable(QString("local bidir W=7 N=%1").arg(n)))
            << "local" << true << QStringList{"window=7"} << n;
        QTest::newRow(qPrintable(QString("alibi N=%1").arg(n))) << "alibi" << false << QStringList{} << n;
        QTest::newRow(qPrintable(QString("kerple-log N=%1").arg(n)))
            << "kerple-log" << false << QStringList{"r1=2", "r2=0.5"} << n;
    }
}

void TestSchemes::entropyClosedForms()
{
    QFETCH(QString, scheme);
    QFETCH(bool, bidirectional);
    QFETCH(QStringList, sets);
    QFETCH(int, length);
    std::vector<std::string> assignments;
    for (const QString& s : sets)
        assignments.push_back(s.toStdString());
    const SchemeSpec spec = makeSchemeSpec(scheme.toStdString(), 4, bidirectional, assignments);
    // Rope: q = k = a e0 in every head and row. Pair 0 turns at frequency base^0 = 1 (under either pairing, since
    // only dim 0 is nonzero), so the score of query m and key n is a^2 cos(m - n) / sqrt(D) = kRopeScore cos(m - n).
    constexpr double kRopeScore = 3.0;
    QkProvider provider = nullptr; // q = k = 0
    if (scheme == "rope") {
        const int dim = spec.intParam("dim");
        const float a = static_cast<float>(std::sqrt(kRopeScore * std::sqrt(double(dim))));
        provider = [dim, a](int n) {
            QkSample s{4, n, dim, std::vector<float>(size_t(4) * n * dim), {}, {}};
            for (size_t row = 0; row < size_t(4) * n; ++row)
                s.q[row * dim] = a;
            s.k = s.q;
            return s;
        };
    }
    const std::vector<EntropyPoint> points = entropyCurve(spec, {length}, provider);
    QCOMPARE(int(points.size()), 4);
    const std::vector<double> slopes = plab::alibiSlopes(4);

    // Independent expectation of the row entropy (q = k = 0 but for rope).
    auto expected = [&](int h, int m) -> double {
        if (scheme == "none")
            return std::log(bidirectional ? length : m + 1);
        if (scheme == "local") {
            const int w = sets[0].mid(7).toInt();
            if (!bidirectional)
                return std::log(std::min(m + 1, w));
            return std::log(std::min(length - 1, m + w - 1) - std::max(0, m - w + 1) + 1);
        }
        // alibi / kerple-log / rope: p_d proportional to exp(b(d)) over d = 0..m, entropy by direct summation.
        std::vector<double> b(m + 1);
        for (int d = 0; d <= m; ++d)
            b[d] = scheme == "alibi"  ? -slopes[h] * d
                   : scheme == "rope" ? kRopeScore * std::cos(double(d))
                                      : -2.0 * std::log1p(0.5 * d);
        double z = 0;
        for (double x : b)
            z += std::exp(x);
        double e = 0;
        for (double x : b) {
            const double p = std::exp(x) / z;
            e -= p * std::log(p);
        }
        return e;
    };
    for (const EntropyPoint& p : points) {
        QCOMPARE(p.length, length);
        QVERIFY2(
            std::abs(p.entropyLast - expected(p.head, length - 1)) < 1e-5,
            qPrintable(QString("head %1: %2 vs %3").arg(p.head).arg(p.entropyLast).arg(expected(p.head, length - 1))));
        double mean = 0;
        for (int m = 0; m < length; ++m)
            mean += expected(p.head, m);
        QVERIFY(std::abs(p.entropyMean - mean / length) < 1e-5);
    }
}

void TestSchemes::entropyProgressStopsBetweenLengths_data()
{
    QTest::addColumn<int>("stopAfter"); // lengths done when the progress callback says stop; -1 never
    QTest::newRow("never") << -1;
    QTest::newRow("before the first") << 0;
    QTest::newRow("after two") << 2;
}

void TestSchemes::entropyProgressStopsBetweenLengths()
{
    QFETCH(int, stopAfter);
    const SchemeSpec spec = makeSchemeSpec("alibi", 4, false, {});
    const std::vector<int> lengths = {8, 16, 32, 64};
    std::vector<int> reported;
    const std::vector<EntropyPoint> points = entropyCurve(spec, lengths, {}, [&](int done) {
        reported.push_back(done);
        return done != stopAfter;
    });
    const int done = stopAfter < 0 ? 4 : stopAfter;
    QCOMPARE(int(points.size()), done * spec.heads);
    // Reported before each length and once after the last: 0, 1, ... in order.
    for (size_t i = 0; i < reported.size(); ++i)
        QCOMPARE(reported[i], int(i));
    QCOMPARE(int(reported.size()), done + 1);
    // The points are those of the full curve, in order.
    const std::vector<EntropyPoint> all = entropyCurve(spec, lengths, {});
    for (size_t i = 0; i < points.size(); ++i) {
        QCOMPARE(points[i].length, all[i].length);
        QCOMPARE(points[i].entropyLast, all[i].entropyLast);
    }
}

void TestSchemes::defaultEntropyLengths_data()
{
    QTest::addColumn<int>("maxLength");
    QTest::addColumn<QList<int>>("expected");
    QTest::newRow("the CLI's 4096") << 4096 << QList<int>{16, 32, 64, 128, 256, 512, 1024, 2048, 4096};
    QTest::newRow("not a power of two") << 100 << QList<int>{16, 32, 64};
    QTest::newRow("exactly the first") << 16 << QList<int>{16};
    QTest::newRow("below the first") << 15 << QList<int>{};
}

void TestSchemes::defaultEntropyLengths()
{
    QFETCH(int, maxLength);
    QFETCH(QList<int>, expected);
    const std::vector<int> lengths = plab::defaultEntropyLengths(maxLength);
    QCOMPARE(QList<int>(lengths.begin(), lengths.end()), expected);
}

void TestSchemes::entropyRandomIsSeeded()
{
    const SchemeSpec spec = makeSchemeSpec("alibi", 2, false);
    const auto a = entropyCurve(spec, {64, 128}, randomQkProvider(spec, 32, 7));
    const auto b = entropyCurve(spec, {64, 128}, randomQkProvider(spec, 32, 7));
    const auto c = entropyCurve(spec, {64, 128}, randomQkProvider(spec, 32, 8));
    QCOMPARE(a.size(), size_t(4));
    for (size_t i = 0; i < a.size(); ++i) {
        QCOMPARE(a[i].entropyLast, b[i].entropyLast);
        QVERIFY(a[i].entropyLast != c[i].entropyLast);
        QVERIFY(a[i].entropyLast <= std::log(double(a[i].length)) + 1e-9);
        QVERIFY(a[i].entropyLast > 0);
    }
}

void TestSchemes::badParameters_data()
{
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<QStringList>("sets");
    QTest::addColumn<bool>("bidirectional");
    QTest::addColumn<int>("heads");
    QTest::addColumn<QString>("message");
    QTest::newRow("unknown scheme") << "nosuch" << QStringList{} << false << 8 << "unknown scheme 'nosuch'";
    QTest::newRow("kerple-power r2=3") << "kerple-power" << QStringList{"r2=3"} << false << 8
                                       << "r2 = 3 is out of range; allowed: (0, 2]";
    QTest::newRow("kerple-power r2=0") << "kerple-power" << QStringList{"r2=0"} << false << 8
                                       << "r2 = 0 is out of range";
    QTest::newRow("kerple-log r1=-1") << "kerple-log" << QStringList{"r1=-1"} << false << 8
                                      << "r1 = -1 is out of range";
    QTest::newRow("rope dim=7") << "rope" << QStringList{"dim=7"} << false << 8
                                << "dim = 7 is out of range; allowed: even integers in [2, 4096]";
    QTest::newRow("sinusoidal base=1") << "sinusoidal" << QStringList{"base=1"} << false << 8
                                       << "base = 1 is out of range";
    QTest::newRow("local window=0") << "local" << QStringList{"window=0"} << false << 8 << "window = 0 is out of range";
    QTest::newRow("bca odd window") << "bca" << QStringList{"window=5"} << false << 8
                                    << "window = 5 is out of range; allowed: even integers";
    QTest::newRow("non-number") << "alibi" << QStringList{"r1=2"} << false << 8 << "has no parameter 'r1'";
    QTest::newRow("nan") << "kerple-log" << QStringList{"r1=nan"} << false << 8 << "r1 = 'nan' is not a number";
    QTest::newRow("text") << "rope" << QStringList{"base=ten"} << false << 8 << "base = 'ten' is not a number";
    QTest::newRow("no equals") << "rope" << QStringList{"base"} << false << 8 << "a setting is NAME=VALUE, got 'base'";
    QTest::newRow("heads=0") << "alibi" << QStringList{} << false << 0 << "heads = 0 is out of range";
    QTest::newRow("xpos bidir") << "xpos" << QStringList{} << true << 8 << "causal only";
    QTest::newRow("t5 maxd too small") << "t5" << QStringList{"max-distance=10"} << false << 8
                                       << "max-distance = 10 must exceed";
    QTest::newRow("t5 bidir odd buckets") << "t5" << QStringList{"num-buckets=7"} << true << 8 << "even integer >= 4";
}

void TestSchemes::badParameters()
{
    QFETCH(QString, scheme);
    QFETCH(QStringList, sets);
    QFETCH(bool, bidirectional);
    QFETCH(int, heads);
    QFETCH(QString, message);
    std::vector<std::string> assignments;
    for (const QString& s : sets)
        assignments.push_back(s.toStdString());
    try {
        makeSchemeSpec(scheme.toStdString(), heads, bidirectional, assignments);
        QFAIL("no InputError");
    } catch (const InputError& e) {
        QVERIFY2(QString(e.what()).contains(message), e.what());
        // The GUI shows core's messages too: they name no command-line option (the CLI adds it, cliMessage).
        QVERIFY2(!QString(e.what()).contains(QStringLiteral("--")), e.what());
    }
}

void TestSchemes::npyRoundTrip()
{
    QTemporaryDir dir;
    const std::string path = dir.filePath("a.npy").toStdString();
    const std::vector<float> data = {1.5f, -2.0f, 0.0f, 3.25f, 4.0f, 5.0f};
    writeNpy(path, {2, 3}, data.data());
    const NpyArray back = readNpy(path);
    QCOMPARE(back.shape, (std::vector<int64_t>{2, 3}));
    QCOMPARE(back.data, data);
    writeNpy(path, {6}, data.data());
    QCOMPARE(readNpy(path).shapeText(), std::string("(6,)"));
    // Truncated data is refused with the sizes named.
    QFile f(QString::fromStdString(path));
    QVERIFY(f.open(QIODevice::ReadWrite));
    QVERIFY(f.resize(f.size() - 3));
    f.close();
    try {
        readNpy(path);
        QFAIL("no InputError");
    } catch (const InputError& e) {
        QVERIFY2(QString(e.what()).contains("truncated"), e.what());
    }
}

PLAB_QTEST_APPLESS_MAIN(TestSchemes)
#include "tst_schemes.moc"
