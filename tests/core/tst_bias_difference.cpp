// maskedDifference (the Compare tab's A − B panel) against exact values: masks combined, never NaN or +inf, and
// scheme pairs against their closed forms from design.md.
#include "views/bias_difference.h"
#include "views/bias_views.h"
#include "base/errors.h"
#include "schemes/position_bias.h"
#include "schemes/schemes.h"
#include "test_main.h"

#include <QtTest>

#include <cfloat>
#include <cmath>
#include <limits>
#include <vector>

using namespace plab;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
const float kNan = std::numeric_limits<float>::quiet_NaN();

// Exact comparison that treats -inf as "masked" and fails on any other non-finite value.
bool sameCell(float got, float expected)
{
    if (std::isinf(expected) && expected < 0)
        return std::isinf(got) && got < 0;
    return std::isfinite(got) && got == expected;
}

} // namespace

Q_DECLARE_METATYPE(std::vector<float>)

class TestBiasDifference : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void values_data()
    {
        QTest::addColumn<std::vector<float>>("a");
        QTest::addColumn<std::vector<float>>("b");
        QTest::addColumn<std::vector<float>>("expected");
        QTest::newRow("finite") << std::vector<float>{1.0f, 2.5f, -3.0f, 0.0f, -0.0f}
                                << std::vector<float>{0.5f, 2.5f, 1.0f, -0.0f, 0.0f}
                                << std::vector<float>{0.5f, 0.0f, -4.0f, 0.0f, 0.0f};
        // float(0.1) - float(0.2) correctly rounded: exactly -0.100000001490116119384765625.
        QTest::newRow("rounding") << std::vector<float>{0.1f} << std::vector<float>{0.2f}
                                  << std::vector<float>{-0.100000001490116119384765625f};
        QTest::newRow("masked in a") << std::vector<float>{-kInf, 1.0f} << std::vector<float>{2.0f, 1.0f}
                                     << std::vector<float>{-kInf, 0.0f};
        // finite - (-inf) would be +inf: masked instead.
        QTest::newRow("masked in b") << std::vector<float>{2.0f, 1.0f} << std::vector<float>{-kInf, 3.0f}
                                     << std::vector<float>{-kInf, -2.0f};
        // -inf - (-inf) would be NaN: masked instead.
        QTest::newRow("masked in both") << std::vector<float>{-kInf, -kInf} << std::vector<float>{-kInf, 0.0f}
                                        << std::vector<float>{-kInf, -kInf};
        QTest::newRow("nan and +inf count as masked")
            << std::vector<float>{kNan, kInf, 1.0f, 1.0f} << std::vector<float>{1.0f, 1.0f, kNan, kInf}
            << std::vector<float>{-kInf, -kInf, -kInf, -kInf};
        // FLT_MAX - (-FLT_MAX) overflows float: it saturates so that -inf keeps meaning "masked".
        QTest::newRow("overflow saturates")
            << std::vector<float>{FLT_MAX, -FLT_MAX, FLT_MAX} << std::vector<float>{-FLT_MAX, FLT_MAX, FLT_MAX}
            << std::vector<float>{FLT_MAX, -FLT_MAX, 0.0f};
        QTest::newRow("empty") << std::vector<float>{} << std::vector<float>{} << std::vector<float>{};
    }
    void values()
    {
        QFETCH(std::vector<float>, a);
        QFETCH(std::vector<float>, b);
        QFETCH(std::vector<float>, expected);
        const std::vector<float> got = maskedDifference(a, b);
        QCOMPARE(got.size(), expected.size());
        for (size_t i = 0; i < got.size(); ++i)
            QVERIFY2(sameCell(got[i], expected[i]), qPrintable(QStringLiteral("cell %1: got %2, expected %3")
                                                                   .arg(i)
                                                                   .arg(got[i], 0, 'g', 17)
                                                                   .arg(expected[i], 0, 'g', 17)));
    }

    // Large buffers take the parallel path: the same rule for every cell.
    void largeBuffer()
    {
        const size_t n = 300000;
        std::vector<float> a(n), b(n);
        for (size_t i = 0; i < n; ++i) {
            a[i] = i % 7 == 0 ? -kInf : static_cast<float>(i % 1000);
            b[i] = i % 11 == 0 ? -kInf : 0.5f;
        }
        const std::vector<float> d = maskedDifference(a, b);
        for (size_t i = 0; i < n; ++i) {
            const float expected = (i % 7 == 0 || i % 11 == 0) ? -kInf : static_cast<float>(i % 1000) - 0.5f;
            if (!sameCell(d[i], expected))
                QFAIL(qPrintable(QStringLiteral("cell %1").arg(i)));
        }
    }

    void sizesMustMatch()
    {
        try {
            maskedDifference(std::vector<float>(4), std::vector<float>(9));
            QFAIL("no InputError");
        } catch (const InputError& e) {
            const QString message = QString::fromStdString(e.what());
            QVERIFY2(message.contains(QStringLiteral("4")) && message.contains(QStringLiteral("9")), e.what());
            QVERIFY(!message.contains(QLatin1Char('\n')));
        }
    }

    // Two schemes' views through core, against closed forms written from design.md: ALiBi head h has slope
    // 2^(-8(h+1)/H); local is 0 for 0 <= m - n < window (16 without a context) and masked elsewhere; none is 0
    // with a causal mask.
    void schemePairs_data()
    {
        QTest::addColumn<QString>("a");
        QTest::addColumn<bool>("aBidirectional");
        QTest::addColumn<QString>("b");
        QTest::addColumn<bool>("bBidirectional");
        QTest::addColumn<int>("head");
        QTest::newRow("alibi - local") << "alibi" << false << "local" << false << 0;
        QTest::newRow("local - alibi head 3") << "local" << false << "alibi" << false << 2;
        QTest::newRow("bidirectional alibi - none") << "alibi" << true << "none" << false << 1;
        QTest::newRow("alibi - alibi") << "alibi" << false << "alibi" << false << 0;
    }
    void schemePairs()
    {
        QFETCH(QString, a);
        QFETCH(bool, aBidirectional);
        QFETCH(QString, b);
        QFETCH(bool, bBidirectional);
        QFETCH(int, head);
        const int heads = 8;
        const int length = 24;
        const SchemeSpec sa = makeSchemeSpec(a.toStdString(), heads, aBidirectional);
        const SchemeSpec sb = makeSchemeSpec(b.toStdString(), heads, bBidirectional);
        const std::vector<float> d = maskedDifference(biasViewMatrix(PositionBias(sa, length), head, length),
                                                      biasViewMatrix(PositionBias(sb, length), head, length));
        // slope * r is exact in float for these powers of two and small r.
        const double slope = std::pow(2.0, -8.0 * (head + 1) / heads);
        auto view = [&](const QString& scheme, bool bidirectional, int m, int n) -> double {
            const int r = m - n;
            if (scheme == QLatin1String("local"))
                return (r >= 0 && r < 16) ? 0.0 : -INFINITY;
            if (!bidirectional && r < 0)
                return -INFINITY;
            return scheme == QLatin1String("alibi") ? -slope * std::abs(r) : 0.0;
        };
        QCOMPARE(d.size(), size_t(length * length));
        for (int m = 0; m < length; ++m)
            for (int n = 0; n < length; ++n) {
                const double x = view(a, aBidirectional, m, n);
                const double y = view(b, bBidirectional, m, n);
                const float expected = (std::isinf(x) || std::isinf(y)) ? -kInf : static_cast<float>(x - y);
                const float got = d[static_cast<size_t>(m) * length + n];
                QVERIFY2(
                    sameCell(got, expected),
                    qPrintable(
                        QStringLiteral("(m, n) = (%1, %2): got %3, expected %4").arg(m).arg(n).arg(got).arg(expected)));
            }
    }
};

PLAB_QTEST_APPLESS_MAIN(TestBiasDifference)
#include "tst_bias_difference.moc"
