// tests/compare.h's error maximum: a NaN, an infinity or a size mismatch fails it; the same masked -inf does not.
#include "attention/attention.h"
#include "attention/attention_reference.h"
#include "base/random.h"
#include "compare.h"
#include "schemes/position_bias.h"
#include "test_main.h"

#include <QtTest>

#include <cmath>
#include <limits>
#include <vector>

using namespace plab;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

} // namespace

class TestCompare : public QObject {
    Q_OBJECT
private slots:
    void placeByPlace_data();
    void placeByPlace();
    void sizesMustAgree();
    void nanInAttentionOutputFails_data();
    void nanInAttentionOutputFails();
};

void TestCompare::placeByPlace_data()
{
    QTest::addColumn<std::vector<double>>("got");
    QTest::addColumn<std::vector<double>>("want");
    QTest::addColumn<bool>("relative");
    QTest::addColumn<bool>("finite");
    QTest::addColumn<double>("worst"); // when finite
    QTest::addColumn<int>("index");    // the worst or the first non-finite place
    QTest::newRow("equal") << std::vector<double>{1, 2, 3} << std::vector<double>{1, 2, 3} << false << true << 0.0 << 0;
    QTest::newRow("absolute") << std::vector<double>{1, 2.5, 3.25} << std::vector<double>{1, 2, 3} << false << true
                              << 0.5 << 1;
    QTest::newRow("relative") << std::vector<double>{1, 2.5, 4} << std::vector<double>{1, 2, 3} << true << true << 0.25
                              << 2;
    QTest::newRow("NaN in the output") << std::vector<double>{1, kNaN, 3} << std::vector<double>{1, 2, 3} << false
                                       << false << 0.0 << 1;
    QTest::newRow("NaN after a large error")
        << std::vector<double>{9, 2, kNaN} << std::vector<double>{1, 2, 3} << false << false << 0.0 << 2;
    QTest::newRow("NaN in both") << std::vector<double>{kNaN} << std::vector<double>{kNaN} << false << false << 0.0
                                 << 0;
    QTest::newRow("NaN in the reference")
        << std::vector<double>{1} << std::vector<double>{kNaN} << false << false << 0.0 << 0;
    QTest::newRow("inf in the output") << std::vector<double>{1, kInf} << std::vector<double>{1, 2} << false << false
                                       << 0.0 << 1;
    QTest::newRow("masked -inf in both") << std::vector<double>{-kInf, 1.5} << std::vector<double>{-kInf, 1} << false
                                         << true << 0.5 << 1;
    QTest::newRow("-inf against +inf") << std::vector<double>{-kInf} << std::vector<double>{kInf} << false << false
                                       << 0.0 << 0;
    QTest::newRow("-inf where the reference is finite")
        << std::vector<double>{-kInf} << std::vector<double>{0} << true << false << 0.0 << 0;
    QTest::newRow("difference overflows")
        << std::vector<double>{1e308} << std::vector<double>{-1e308} << false << false << 0.0 << 0;
}

void TestCompare::placeByPlace()
{
    QFETCH(std::vector<double>, got);
    QFETCH(std::vector<double>, want);
    QFETCH(bool, relative);
    QFETCH(bool, finite);
    QFETCH(double, worst);
    QFETCH(int, index);
    const test::ErrorMax e = relative ? test::maxRelativeError(got, want) : test::maxError(got, want);
    QCOMPARE(e.finite(), finite);
    QCOMPARE(e.index(), std::ptrdiff_t(index));
    if (finite) {
        QCOMPARE(e.value(), worst);
        QVERIFY(e.within(worst));
        QVERIFY(worst == 0 || !e.within(worst / 2));
    } else {
        // Every comparison a test makes with it fails: within, < tol, and the "must differ" > tol.
        QVERIFY(!e.within(kInf));
        QVERIFY(!(e.value() < kInf));
        QVERIFY(!(e.value() > 0));
        QVERIFY2(e.message("x").startsWith("x: non-finite at [" + QString::number(index) + "]"),
                 qPrintable(e.message("x")));
    }
}

void TestCompare::sizesMustAgree()
{
    const test::ErrorMax e = test::maxError(std::vector<float>{1, 2}, std::vector<double>{1, 2, 3});
    QVERIFY(!e.finite());
    QVERIFY(!e.within(1));
    QVERIFY2(e.message().contains("sizes differ"), qPrintable(e.message()));
    test::ErrorMax none;
    QCOMPARE(none.index(), std::ptrdiff_t(-1));
    QVERIFY(none.within(0));
}

void TestCompare::nanInAttentionOutputFails_data()
{
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<int>("at"); // where the NaN goes
    QTest::newRow("alibi, first") << "alibi" << 0;
    QTest::newRow("rope, middle") << "rope" << 77;
    QTest::newRow("local (masked cells), last") << "local" << -1;
}

// A real kernel output against its twin, as tst_attention compares them: within tolerance as computed, failing once
// one element is NaN - where std::max(worst, |NaN|), the pattern this replaced, kept the old maximum and passed.
void TestCompare::nanInAttentionOutputFails()
{
    QFETCH(QString, scheme);
    QFETCH(int, at);
    const AttentionDims dims{1, 2, 12, 8};
    const PositionBias bias(makeSchemeSpec(scheme.toStdString(), dims.heads, false), dims.length);
    std::vector<float> q(dims.elements()), k(dims.elements()), v(dims.elements());
    Rng rng(5);
    for (std::vector<float>* x : {&q, &k, &v})
        for (float& value : *x)
            value = static_cast<float>(rng.normal());
    AttentionOptions options;
    options.wantProbabilities = true;
    AttentionForward fast = attentionForward(bias, dims, q.data(), k.data(), v.data(), options);
    const AttentionReferenceForward ref = attentionForwardReference(bias, dims, q.data(), k.data(), v.data());
    const test::ErrorMax clean = test::maxError(fast.out, ref.out);
    QVERIFY2(clean.value() < 1e-5, qPrintable(clean.message("out")));
    QVERIFY2(test::maxError(fast.probabilities, ref.probabilities).value() < 1e-5, "probabilities");

    const size_t place = at < 0 ? fast.out.size() - 1 : size_t(at);
    fast.out[place] = std::numeric_limits<float>::quiet_NaN();
    double oldWorst = 0; // the replaced pattern, to show what it let through
    for (size_t i = 0; i < ref.out.size(); ++i)
        oldWorst = std::max(oldWorst, std::abs(fast.out[i] - ref.out[i]));
    QVERIFY(oldWorst < 1e-5);
    const test::ErrorMax poisoned = test::maxError(fast.out, ref.out);
    QVERIFY(!(poisoned.value() < 1e-5));
    QCOMPARE(poisoned.index(), std::ptrdiff_t(place));
    fast.probabilities[place] = std::numeric_limits<float>::quiet_NaN();
    QVERIFY(!test::maxRelativeError(fast.probabilities, ref.probabilities).within(1));
}

PLAB_QTEST_APPLESS_MAIN(TestCompare)
#include "tst_compare.moc"
