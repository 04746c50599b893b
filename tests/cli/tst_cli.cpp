// positionlab-cli as a user runs it: output formats, every scheme at many sizes, exit codes and atomic output.
#include "cli_runner.h"
#include "base/npy.h"
#include "views/entropy.h"
#include "test_main.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSet>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>

namespace {

using plab::test::CliResult;
using plab::test::runCli;

// CSV matrices separated by '# head h' lines.
QList<QList<QList<double>>> parseMatrices(const QByteArray& text)
{
    QList<QList<QList<double>>> blocks;
    QList<QList<double>> current;
    for (const QByteArray& raw : text.split('\n')) {
        const QByteArray line = raw.trimmed();
        if (line.isEmpty())
            continue;
        if (line.startsWith('#')) {
            if (!current.isEmpty())
                blocks << current;
            current.clear();
            continue;
        }
        QList<double> row;
        for (const QByteArray& cell : line.split(','))
            row << (cell == "-inf" ? -INFINITY : cell.toDouble());
        current << row;
    }
    if (!current.isEmpty())
        blocks << current;
    return blocks;
}

// The texts of the SVG picture that `args -o x.svg` draws; the test fails (and the text is empty) when the CLI does.
QString renderedSvgText(const QStringList& args)
{
    QTemporaryDir dir;
    const QString path = dir.filePath("x.svg");
    const CliResult r = runCli(args + QStringList{"-o", path});
    QFile f(path);
    if (r.exitCode != 0 || !f.open(QIODevice::ReadOnly)) {
        QTest::qFail(qPrintable(QString("exit %1: %2").arg(r.exitCode).arg(QString::fromUtf8(r.err))), __FILE__,
                     __LINE__);
        return {};
    }
    return QString::fromUtf8(f.readAll());
}

} // namespace

class TestCli : public QObject {
    Q_OBJECT

private slots:
    void schemesJson();
    void alibiTwelveHeads();
    void everySchemePrints_data();
    void everySchemePrints();
    void npyAndJsonOutputs();
    void t5Buckets();
    void dotCsv();
    void entropyCsv_data();
    void entropyCsv();
    void badInput_data();
    void badInput();
    void failedOutputKeepsOldFile();
    void helpSaysNumbering_data();
    void helpSaysNumbering();
    void pictureTitlesCountFromZero_data();
    void pictureTitlesCountFromZero();
    void entropyPictureNamesMethods_data();
    void entropyPictureNamesMethods();
    void picturesReadTheScaling_data();
    void picturesReadTheScaling();
    void usageAgreesWithHelp_data();
    void usageAgreesWithHelp();
    void usageSaysWhatIsOptional_data();
    void usageSaysWhatIsOptional();
    void sharedOptionsOneText_data();
    void sharedOptionsOneText();
    void contextReadBySome_data();
    void contextReadBySome();
    void jsonIntegers_data();
    void jsonIntegers();
    void schemeWordOrOption_data();
    void schemeWordOrOption();
    void benchNamesWhatItTimes_data();
    void benchNamesWhatItTimes();
    void helpListsTheOutputsAccepted_data();
    void helpListsTheOutputsAccepted();
    void pictureSizeAsHelpSays_data();
    void pictureSizeAsHelpSays();
};

void TestCli::schemesJson()
{
    const CliResult r = runCli({"schemes", "--json"});
    QCOMPARE(r.exitCode, 0);
    const QJsonArray list = QJsonDocument::fromJson(r.out).object()["schemes"].toArray();
    QCOMPARE(list.size(), 15); // the twelve of 2023, fire, fox and cope
    for (const QJsonValue& v : list) {
        const QJsonObject s = v.toObject();
        QVERIFY(!s["formula"].toString().isEmpty());
        for (const QJsonValue& p : s["parameters"].toArray())
            QVERIFY(p.toObject().contains("default") && p.toObject().contains("range"));
    }
}

void TestCli::alibiTwelveHeads()
{
    // The official slopes for 12 heads: 8 from the power-of-two series plus every other of the 16-head series.
    const CliResult r = runCli({"bias", "alibi", "--heads", "12", "--length", "8"});
    QCOMPARE(r.exitCode, 0);
    const auto blocks = parseMatrices(r.out);
    QCOMPARE(blocks.size(), 12);
    QList<double> slopes;
    for (int h = 0; h < 8; ++h)
        slopes << std::pow(2.0, -(h + 1.0));
    for (int i = 0; i < 4; ++i)
        slopes << std::pow(2.0, -0.5 * (2 * i + 1));
    for (int h = 0; h < 12; ++h)
        for (int m = 0; m < 8; ++m)
            for (int n = 0; n < 8; ++n) {
                const double v = blocks[h][m][n];
                if (n > m)
                    QVERIFY(std::isinf(v) && v < 0);
                else
                    QVERIFY2(std::abs(v + slopes[h] * (m - n)) < 1e-6, qPrintable(QString("head %1").arg(h)));
            }
}

void TestCli::everySchemePrints_data()
{
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("length");
    const QJsonObject doc = QJsonDocument::fromJson(runCli({"schemes", "--json"}).out).object();
    for (const QJsonValue& v : doc["schemes"].toArray()) {
        const QString s = v.toObject()["name"].toString();
        if (v.toObject()["data_dependent"].toBool()) // cope: `bias` refuses it with exit 2 (tst_cope)
            continue;
        for (int h : {1, 3, 64})
            for (int n : {1, 2, 17, 300})
                QTest::newRow(qPrintable(QString("%1 H=%2 N=%3").arg(s).arg(h).arg(n))) << s << h << n;
    }
}

void TestCli::everySchemePrints()
{
    QFETCH(QString, scheme);
    QFETCH(int, heads);
    QFETCH(int, length);
    QTemporaryDir dir;
    const QString path = dir.filePath("b.npy");
    const CliResult r =
        runCli({"bias", scheme, "--heads", QString::number(heads), "--length", QString::number(length), "-o", path});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const plab::NpyArray a = plab::readNpy(path.toStdString(), false);
    QCOMPARE(a.shape, (std::vector<int64_t>{heads, length, length}));
    // Diagonal always visible and finite; nothing is NaN.
    for (int h = 0; h < heads; ++h)
        for (int m = 0; m < length; ++m)
            QVERIFY(std::isfinite(a.data[(size_t(h) * length + m) * length + m]));
    for (float v : a.data)
        QVERIFY(!std::isnan(v));
}

void TestCli::npyAndJsonOutputs()
{
    QTemporaryDir dir;
    const CliResult csv =
        runCli({"bias", "kerple-log", "--heads", "2", "--head", "1", "--length", "5", "--set", "r1=2"});
    QCOMPARE(csv.exitCode, 0);
    const auto blocks = parseMatrices(csv.out);
    QCOMPARE(blocks.size(), 1);
    QVERIFY(!csv.out.contains("# head")); // a single head is a plain matrix

    QVERIFY(runCli({"bias", "kerple-log", "--heads", "2", "--head", "1", "--length", "5", "--set", "r1=2", "-o",
                    dir.filePath("k.npy")})
                .exitCode == 0);
    const plab::NpyArray npy = plab::readNpy(dir.filePath("k.npy").toStdString(), false);
    QCOMPARE(npy.shape, (std::vector<int64_t>{5, 5}));

    QVERIFY(runCli({"bias", "kerple-log", "--heads", "2", "--head", "1", "--length", "5", "--set", "r1=2", "-o",
                    dir.filePath("k.json")})
                .exitCode == 0);
    QFile f(dir.filePath("k.json"));
    QVERIFY(f.open(QIODevice::ReadOnly));
    QJsonParseError error;
    const QJsonObject json = QJsonDocument::fromJson(f.readAll(), &error).object();
    QCOMPARE(error.error, QJsonParseError::NoError);
    QCOMPARE(json["scheme"].toString(), QString("kerple-log"));
    QCOMPARE(json["parameters"].toObject()["r1"].toDouble(), 2.0);
    const QJsonArray data = json["data"].toArray();
    QCOMPARE(data.size(), 5);
    for (int m = 0; m < 5; ++m)
        for (int n = 0; n < 5; ++n) {
            const double want = -2.0 * std::log1p(std::abs(m - n));
            const QJsonValue cell = data[m].toArray()[n];
            if (n > m) {
                QVERIFY(cell.isNull());
            } else {
                QVERIFY(std::abs(cell.toDouble() - want) < 1e-6);
                QVERIFY(std::abs(npy.data[m * 5 + n] - want) < 1e-6);
                QVERIFY(std::abs(blocks[0][m][n] - want) < 1e-6);
            }
        }
}

void TestCli::t5Buckets()
{
    const CliResult r = runCli({"bias", "t5", "--heads", "1", "--length", "40", "--buckets"});
    QCOMPARE(r.exitCode, 0);
    const auto m = parseMatrices(r.out)[0];
    // HF buckets for causal, 32 buckets, max distance 128: exact up to 15, then log-spaced.
    QCOMPARE(m[0][0], 0.0);
    QCOMPARE(m[15][0], 15.0);
    QCOMPARE(m[16][0], 16.0);
    QCOMPARE(m[20][0], 17.0);       // 16 + int(log(20/16) / log(128/16) * 16)
    QCOMPARE(m[39][0], 22.0);       // 16 + int(log(39/16) / log(8) * 16) = 16 + 6
    QCOMPARE(m[39][39 - 20], 17.0); // buckets depend on the distance only
}

void TestCli::dotCsv()
{
    const CliResult r = runCli({"dot", "--dim", "128", "--max-distance", "100"});
    QCOMPARE(r.exitCode, 0);
    const QList<QByteArray> lines = r.out.trimmed().split('\n');
    QCOMPARE(lines[0], QByteArray("distance,dot,dot_minus_half_dim"));
    QCOMPARE(lines.size(), 102);
    for (int dist : {0, 10, 100}) {
        const QList<QByteArray> cells = lines[dist + 1].split(',');
        double want = 0;
        for (int i = 0; i < 64; ++i)
            want += std::cos(dist * std::pow(10000.0, -2.0 * i / 128));
        QCOMPARE(cells[0].toInt(), dist);
        QVERIFY(std::abs(cells[1].toDouble() - want) < 1e-6);
        QVERIFY(std::abs(cells[2].toDouble() - (want - 64)) < 1e-6);
    }
}

void TestCli::entropyCsv_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("window"); // 0: log n; -1: rope on random q, k (core's curve, away from log n)
    QTest::newRow("none") << QStringList{"none", "--qk", "zero"} << 0;
    // q = k = 0 would make rope equal none: the rope row reads random q and k, which rope rotates.
    QTest::newRow("rope random") << QStringList{"rope", "--qk", "random", "--head-dim", "8", "--seed", "3"} << -1;
    QTest::newRow("local 16") << QStringList{"local", "--set", "window=16", "--qk", "zero"} << 16;
    QTest::newRow("local from context") << QStringList{"local", "--context", "32", "--qk", "zero"} << 32;
}

void TestCli::entropyCsv()
{
    QFETCH(QStringList, args);
    QFETCH(int, window);
    const CliResult r =
        runCli(QStringList{"entropy"} + args + QStringList{"--heads", "2", "--lengths", "1,10,100,1000"});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QList<QByteArray> lines = r.out.trimmed().split('\n');
    QCOMPARE(lines[0], QByteArray("length,head,entropy_last,entropy_mean"));
    QCOMPARE(lines.size(), 1 + 4 * 2);
    // Rope: core's curve on the seeded q and k the CLI draws, and the same q and k unrotated (scheme none), which
    // the rope row must differ from: the rotation is what it tests.
    std::vector<plab::EntropyPoint> core, unrotated;
    if (window < 0) {
        const plab::SchemeSpec spec = plab::makeSchemeSpecForHeadDim("rope", 2, false, {}, 8, "--head-dim");
        const plab::SchemeSpec none = plab::makeSchemeSpec("none", 2, false);
        core = plab::entropyCurve(spec, {1, 10, 100, 1000}, plab::randomQkProvider(spec, 8, 3));
        unrotated = plab::entropyCurve(none, {1, 10, 100, 1000}, plab::randomQkProvider(none, 8, 3));
        QCOMPARE(int(core.size()), 4 * 2);
        QCOMPARE(int(unrotated.size()), 4 * 2);
    }
    for (int i = 1; i < lines.size(); ++i) {
        const QList<QByteArray> c = lines[i].split(',');
        const int n = c[0].toInt();
        const double logN = std::log(n);
        if (window < 0) {
            const plab::EntropyPoint& p = core[size_t(i - 1)];
            QCOMPARE(n, p.length);
            QCOMPARE(c[1].toInt(), p.head);
            QVERIFY2(std::abs(c[2].toDouble() - p.entropyLast) < 1e-7 * (1 + logN), lines[i].constData());
            QVERIFY2(std::abs(c[3].toDouble() - p.entropyMean) < 1e-7 * (1 + logN), lines[i].constData());
            QVERIFY2(n == 1 || std::abs(c[2].toDouble() - logN) > 1e-3, lines[i].constData()); // not q = k = 0
            QVERIFY2(n == 1 || std::abs(c[2].toDouble() - unrotated[size_t(i - 1)].entropyLast) > 1e-3,
                     lines[i].constData()); // not the unrotated q and k (whose mean over rows is much the same)
            continue;
        }
        const double want = std::log(window ? std::min(n, window) : n);
        QVERIFY2(std::abs(c[2].toDouble() - want) < 1e-7, lines[i].constData()); // %.9g output
    }
}

void TestCli::badInput_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    QTest::newRow("no verb") << QStringList{} << "usage";
    QTest::newRow("unknown verb") << QStringList{"frobnicate"} << "unknown verb 'frobnicate'";
    QTest::newRow("unknown scheme") << QStringList{"bias", "nosuch"} << "unknown scheme 'nosuch'";
    QTest::newRow("missing scheme") << QStringList{"bias"} << "a scheme is required";
    QTest::newRow("length 0") << QStringList{"bias", "alibi", "--length", "0"} << "length = 0 is out of range";
    QTest::newRow("length text") << QStringList{"bias", "alibi", "--length", "ten"}
                                 << "length: 'ten' is not an integer";
    QTest::newRow("absurd length") << QStringList{"bias", "alibi", "--length", "1000000"} << "GiB of memory";
    QTest::newRow("r2=3") << QStringList{"bias", "kerple-power", "--set", "r2=3"}
                          << "r2 = 3 is out of range; allowed: (0, 2]";
    QTest::newRow("dim=7") << QStringList{"bias", "rope", "--set", "dim=7"} << "dim = 7 is out of range";
    QTest::newRow("non-number") << QStringList{"bias", "rope", "--set", "base=abc"} << "base = 'abc' is not a number";
    QTest::newRow("unknown option") << QStringList{"bias", "alibi", "--lenght", "4"} << "unknown option '--lenght'";
    QTest::newRow("option without value") << QStringList{"bias", "alibi", "--length"} << "--length needs a value";
    QTest::newRow("head out of range") << QStringList{"bias", "alibi", "--heads", "4", "--head", "4"}
                                       << "head = 4 is out of range";
    QTest::newRow("buckets not t5") << QStringList{"bias", "alibi", "--buckets"}
                                    << "--buckets: bucket maps are only defined for the t5";
    QTest::newRow("bad extension") << QStringList{"bias", "alibi", "-o", "x.txt"} << "unsupported extension '.txt'";
    QTest::newRow("xpos bidir") << QStringList{"bias", "xpos", "--bidirectional"} << "causal only";
    QTest::newRow("dot odd dim") << QStringList{"dot", "--dim", "7"} << "dim = 7 is out of range";
    QTest::newRow("dot base") << QStringList{"dot", "--base", "0.5"}
                              << "base = 0.5 is out of range; allowed: (1, 1e+12]";
    QTest::newRow("entropy qk") << QStringList{"entropy", "alibi", "--qk", "ones"} << "--qk ones is not allowed";
    QTest::newRow("entropy lengths") << QStringList{"entropy", "alibi", "--lengths", "16,0"}
                                     << "lengths = 0 is out of range";
    QTest::newRow("entropy lengths text") << QStringList{"entropy", "alibi", "--lengths", "16,,32"}
                                          << "lengths: '' is not an integer; allowed: integers in [1, 1048576]";
    QTest::newRow("logn without context") << QStringList{"bias", "alibi", "--logn"} << "--logn needs --context L";
}

void TestCli::badInput()
{
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    const CliResult r = runCli(args);
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(QString::fromUtf8(r.err).contains(message), r.err.constData());
    QVERIFY2(r.err.trimmed().count('\n') == 0 || args.isEmpty(), "the message is one line");
}

void TestCli::failedOutputKeepsOldFile()
{
    QTemporaryDir dir;
    const QString path = dir.filePath("keep.csv");
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("precious\n");
    f.close();
    QCOMPARE(runCli({"bias", "kerple-power", "--set", "r2=9", "-o", path}).exitCode, 2);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.readAll(), QByteArray("precious\n"));
    f.close();
    // A successful run replaces it, and leaves no temporary files behind.
    QCOMPARE(runCli({"bias", "alibi", "--heads", "1", "--length", "3", "-o", path}).exitCode, 0);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.readAll(), QByteArray("# head 0\n0,-inf,-inf\n-0.00390625,0,-inf\n-0.0078125,-0.00390625,0\n"));
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size(), 1);
}

// (a) The numbering of heads and layers is said where the options are: in --help.
void TestCli::helpSaysNumbering_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::newRow("overview") << QStringList{"--help"};
    QTest::newRow("bias") << QStringList{"bias", "--help"};
    QTest::newRow("entropy") << QStringList{"entropy", "--help"};
    QTest::newRow("attention") << QStringList{"attention", "--help"};
}

void TestCli::helpSaysNumbering()
{
    QFETCH(QStringList, args);
    const CliResult r = runCli(args);
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.out.contains("heads (--head h = 0..H-1) and layers (--layer l = 0..layers-1) count from 0"),
             r.out.constData());
    QVERIFY2(r.out.contains("the GUI shows heads and layers from 1"), r.out.constData());
}

// (a) Pictures the CLI draws name the head as its --head option does (from 0), never one more.
void TestCli::pictureTitlesCountFromZero_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("title");
    QTest::newRow("bias head 2") << QStringList{"bias", "alibi", "--head", "2"} << "head h = 2 of 0..7";
    QTest::newRow("render bias head 0") << QStringList{"render", "bias", "rope", "--heads", "4", "--head", "0"}
                                        << "head h = 0 of 0..3";
    QTest::newRow("render compare") << QStringList{"render", "compare", "alibi", "t5", "--head", "5", "--difference"}
                                    << "head h = 5 of 0..7";
    QTest::newRow("entropy title") << QStringList{"render", "entropy", "alibi", "--lengths", "4,8", "--head", "3"}
                                   << "head h = 3";
}

void TestCli::pictureTitlesCountFromZero()
{
    QFETCH(QStringList, args);
    QFETCH(QString, title);
    if (runCli({"render", "--help"}).exitCode != 0)
        QSKIP("this positionlab-cli has no render verb (built without the GUI library)");
    const QString svg = renderedSvgText(args);
    if (QTest::currentTestFailed())
        return;
    QVERIFY2(svg.contains(title), qPrintable("no '" + title + "' in the picture's texts"));
    QVERIFY(!svg.contains(QStringLiteral("head %1 of").arg(title.section(' ', 3, 3).toInt() + 1)));
}

// `render entropy` reads "rope+yarn" (rope under a method) in any position, as `render compare` does, and its legend
// names the method: only the first scheme used to take one ("unknown scheme 'rope+yarn'"), and the legend said "rope".
void TestCli::entropyPictureNamesMethods_data()
{
    QTest::addColumn<QStringList>("schemes");
    QTest::addColumn<QString>("legend");
    QTest::newRow("first") << QStringList{"rope+yarn", "alibi"} << "rope+yarn";
    QTest::newRow("second") << QStringList{"alibi", "rope+yarn"} << "rope+yarn";
    QTest::newRow("third, remapping") << QStringList{"alibi", "rope", "rope+rerope"} << "rope+rerope";
}

void TestCli::entropyPictureNamesMethods()
{
    QFETCH(QStringList, schemes);
    QFETCH(QString, legend);
    if (runCli({"render", "--help"}).exitCode != 0)
        QSKIP("this positionlab-cli has no render verb (built without the GUI library)");
    const QString svg = renderedSvgText(QStringList{"render", "entropy"} + schemes + QStringList{"--lengths", "4,8"});
    if (QTest::currentTestFailed())
        return;
    QVERIFY2(svg.contains(legend), qPrintable("no '" + legend + "' in the legend"));
}

// A picture of the first scheme under --scaling (and its --set, --head-dim) is the picture of the scheme word that
// names the method, as the data path reads both, and not the plain scheme's: render compare and entropy rebuilt "rope
// --scaling rerope" from rope's defaults (the word's label rope+rerope matched no name), and render entropy drew dim 64
// for --head-dim 32.
void TestCli::picturesReadTheScaling_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QStringList>("same");      // the same picture
    QTest::addColumn<QStringList>("different"); // another picture
    const QStringList compare{"render", "compare", "--length", "32"};
    QTest::newRow("render compare --scaling rerope --set")
        << compare + QStringList{"rope", "alibi", "--scaling", "rerope", "--set", "window=4"}
        << compare + QStringList{"rope+rerope", "alibi", "--set", "window=4"} << compare + QStringList{"rope", "alibi"};
    QTest::newRow("render compare --set of the method")
        << compare + QStringList{"rope", "alibi", "--scaling", "rerope", "--set", "window=4"}
        << compare + QStringList{"rope+rerope", "alibi", "--set", "window=4"}
        << compare + QStringList{"rope+rerope", "alibi", "--set", "window=8"};
    const QStringList lengths{"--lengths", "16,64"};
    QTest::newRow("entropy -o picture --scaling rerope --set")
        << QStringList{"entropy", "rope", "--scaling", "rerope", "--set", "window=4"} + lengths
        << QStringList{"entropy", "rope+rerope", "--set", "window=4"} + lengths
        << QStringList{"entropy", "rope"} + lengths;
    QTest::newRow("render entropy --scaling, two schemes")
        << QStringList{"render", "entropy", "rope", "alibi", "--scaling", "rerope", "--set", "window=4"} + lengths
        << QStringList{"render", "entropy", "rope+rerope", "alibi", "--set", "window=4"} + lengths
        << QStringList{"render", "entropy", "rope", "alibi"} + lengths;
    const QStringList random{"--qk", "random"};
    QTest::newRow("render entropy --scaling yarn --head-dim 32")
        << QStringList{"render", "entropy", "rope", "--scaling", "yarn", "--head-dim", "32"} + random + lengths
        << QStringList{"render", "entropy", "rope+yarn", "--head-dim", "32"} + random + lengths
        << QStringList{"render", "entropy", "rope", "--scaling", "yarn", "--head-dim", "64"} + random + lengths;
}

void TestCli::picturesReadTheScaling()
{
    QFETCH(QStringList, args);
    QFETCH(QStringList, same);
    QFETCH(QStringList, different);
    if (runCli({"render", "--help"}).exitCode != 0)
        QSKIP("this positionlab-cli has no render verb (built without the GUI library)");
    const QString picture = renderedSvgText(args);
    const QString samePicture = renderedSvgText(same);
    const QString otherPicture = renderedSvgText(different);
    if (QTest::currentTestFailed())
        return;
    QVERIFY2(picture == samePicture, qPrintable(args.join(' ') + " drew another picture than " + same.join(' ')));
    QVERIFY2(picture != otherPicture, qPrintable(args.join(' ') + " drew the picture of " + different.join(' ')));
}

QStringList verbNames()
{
    const QByteArray overview = runCli({"--help"}).out;
    QStringList names;
    bool inVerbs = false;
    for (const QByteArray& line : overview.split('\n')) {
        if (line.startsWith("verbs:")) {
            inVerbs = true;
            continue;
        }
        if (inVerbs && line.startsWith("  "))
            names << QString::fromUtf8(line.trimmed().split(' ').first());
        else if (inVerbs)
            break;
    }
    return names;
}

// (h) One source for the usage lines and --help: every option a usage line shows is in the options list with the same
// placeholder, every option of the list is in some usage line, and a usage error quotes the same first line.
void TestCli::usageAgreesWithHelp_data()
{
    QTest::addColumn<QString>("verb");
    for (const QString& v : verbNames())
        QTest::newRow(qPrintable(v)) << v;
}

void TestCli::usageAgreesWithHelp()
{
    QFETCH(QString, verb);
    const CliResult help = runCli({verb, "--help"});
    QCOMPARE(help.exitCode, 0);
    const QString text = QString::fromUtf8(help.out);
    const QString usage = text.section(QStringLiteral("\n\n"), 0, 0);
    QVERIFY(usage.startsWith("usage: positionlab-cli " + verb));
    const QString options = text.section(QStringLiteral("\noptions:\n"), 1).section(QStringLiteral("\n\n"), 0, 0);
    QMap<QString, QString> listed; // option -> its text in the list, e.g. "--length N"
    for (const QString& line : options.split('\n', Qt::SkipEmptyParts)) {
        const QString left = line.trimmed().section(QStringLiteral("  "), 0, 0);
        listed[left.section(' ', 0, 0)] = left;
    }
    QVERIFY(!listed.isEmpty());
    QSet<QString> inUsage;
    static const QRegularExpression optionInUsage(
        QStringLiteral("\\[?((?:--[a-z-]+|-o)(?: [^\\]\\s]+(?: \\.\\.\\.)?)?)\\]?"));
    for (auto it = optionInUsage.globalMatch(usage); it.hasNext();) {
        const QString shown = it.next().captured(1);
        const QString name = shown.section(' ', 0, 0);
        QVERIFY2(listed.contains(name), qPrintable(name + " is in the usage but not in the options list"));
        if (shown.contains(' ')) // with its placeholder: the same as in the list
            QVERIFY2(listed[name] == shown, qPrintable("usage shows '" + shown + "', the list '" + listed[name] + "'"));
        inUsage.insert(name);
    }
    for (const QString& name : listed.keys())
        QVERIFY2(inUsage.contains(name), qPrintable(name + " is in the options list but in no usage line"));
    // A wrong number of words quotes the usage's first line.
    QStringList tooMany{verb}; // more words than any verb takes (collect takes up to 64 folders)
    for (int i = 0; i < 70; ++i)
        tooMany << QStringLiteral("w%1").arg(i);
    const CliResult wrong = runCli(tooMany);
    QCOMPARE(wrong.exitCode, 2);
    const QString firstLine = usage.section('\n', 0, 0).mid(QStringLiteral("usage: ").size());
    QVERIFY2(QString::fromUtf8(wrong.err).contains("usage: " + firstLine), wrong.err.constData());
}

// A usage line says which words a form needs: train's SCHEME is the checkpoint's with --init, and only then optional
// (the usage said `train SCHEME` for both).
void TestCli::usageSaysWhatIsOptional_data()
{
    QTest::addColumn<QString>("verb");
    QTest::addColumn<QString>("line"); // a whole line of the usage, up to its first option
    QTest::newRow("train, a fresh run") << "train"
                                        << "positionlab-cli train SCHEME [--scheme S]";
    QTest::newRow("train, continuing a checkpoint")
        << "train"
        << "positionlab-cli train [SCHEME] --init MODEL.safetensors [--scheme S]";
}

void TestCli::usageSaysWhatIsOptional()
{
    QFETCH(QString, verb);
    QFETCH(QString, line);
    const CliResult help = runCli({verb, "--help"});
    QCOMPARE(help.exitCode, 0);
    const QString usage = QString::fromUtf8(help.out).section(QStringLiteral("\n\n"), 0, 0);
    bool found = false;
    for (const QString& l : usage.split('\n'))
        found = found || l.trimmed().remove(QRegularExpression("^usage: ")).startsWith(line);
    QVERIFY2(found, qPrintable(usage));
}

// (h) An option several verbs share has one definition: in every verb's --help the same placeholder and text (after a
// "with --checkpoint: "-like prefix, before a "; ..." note).
void TestCli::sharedOptionsOneText_data()
{
    QTest::addColumn<QString>("verb");
    QTest::addColumn<QString>("option"); // as --help lists it, with its placeholder
    QTest::addColumn<QString>("text");
    const QMap<QString, QString> shared = {
        {"--threads T", "OpenMP threads (default: all cores)"},
        {"--corpus FILE", "UTF-8 text file (default: the Debian fortunes files)"},
        {"--width PX", "picture output: width in pixels, 64..16384 (default depends on the picture)"},
        {"--height PX", "picture output: height in pixels, 64..16384 (default depends on the picture)"},
        {"--lang CODE", "picture output: language of titles, axes and legends: en (default), zh_CN"},
        {"--dpi DPI", "picture output: resolution stored in PNG / used for SVG and PDF (default 96)"},
        {"--dark", "picture output: the dark palette"},
    };
    for (const QString& verb : verbNames()) {
        if (verb == "lessons") // its --lang picks the lessons' language, not a picture's
            continue;
        const QString help = QString::fromUtf8(runCli({verb, "--help"}).out);
        for (auto it = shared.begin(); it != shared.end(); ++it) {
            const QString name = it.key().section(' ', 0, 0);
            if (help.contains(QRegularExpression("\n  " + QRegularExpression::escape(name) + "[ \n]")))
                QTest::newRow(qPrintable(verb + " " + name)) << verb << it.key() << it.value();
        }
    }
}

void TestCli::sharedOptionsOneText()
{
    QFETCH(QString, verb);
    QFETCH(QString, option);
    QFETCH(QString, text);
    const QString help = QString::fromUtf8(runCli({verb, "--help"}).out);
    const QRegularExpression line("\n  " + QRegularExpression::escape(option) + " +(?:[^\n:]+: )?" +
                                  QRegularExpression::escape(text) + "(?:; [^\n]*)?\n");
    QVERIFY2(line.match(help).hasMatch(), qPrintable(help));
}

// (e) --context is refused only where nothing reads it: a windowed scheme, a method that reads L or --logn does, also
// as the second scheme of a comparison.
void TestCli::contextReadBySome_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<bool>("picture");
    QTest::newRow("local") << QStringList{"bias", "local", "--context", "8"} << false;
    QTest::newRow("rope+yarn") << QStringList{"bias", "rope+yarn", "--context", "8"} << false;
    QTest::newRow("rope --scaling llama3")
        << QStringList{"bias", "rope", "--scaling", "llama3", "--context", "8"} << false;
    QTest::newRow("alibi --logn") << QStringList{"bias", "alibi", "--logn", "--context", "8"} << false;
    QTest::newRow("entropy bca") << QStringList{"entropy", "bca", "--lengths", "4", "--context", "8"} << false;
    // bench attention reads the method of a SCHEME word as --scaling (schemeWordFromArgs)
    QTest::newRow("bench rope+yarn") << QStringList{"bench",    "attention", "rope+yarn", "--length", "32",
                                                    "--repeat", "1",         "--context", "8"}
                                     << false;
    QTest::newRow("bench --scheme rope --scaling rerope")
        << QStringList{"bench",    "attention", "--scheme", "rope", "--scaling", "rerope",
                       "--length", "32",        "--repeat", "1",    "--context", "8"}
        << false;
    QTest::newRow("compare, second scheme local")
        << QStringList{"render", "compare", "alibi", "local", "--context", "8"} << true;
    QTest::newRow("entropy picture, third scheme rope+rerope")
        << QStringList{"render", "entropy", "alibi", "t5", "rope+rerope", "--lengths", "4,8", "--context", "8"} << true;
}

void TestCli::contextReadBySome()
{
    QFETCH(QStringList, args);
    QFETCH(bool, picture);
    if (picture && runCli({"render", "--help"}).exitCode != 0)
        QSKIP("this positionlab-cli has no render verb (built without the GUI library)");
    if (picture) {
        QVERIFY(!renderedSvgText(args).isEmpty());
        return;
    }
    const CliResult r = runCli(args);
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY(!r.out.isEmpty());
}

// (h) JSON writes counts (lengths, heads, distances, flops) and whole parameters as integers, not as 16.0; other
// numbers stay as they are.
void TestCli::jsonIntegers_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<bool>("toFile");          // -o x.json appended; else the JSON is what stdout prints
    QTest::addColumn<QStringList>("integers"); // "key": value texts that must appear as written
    QTest::addColumn<QStringList>("kept");     // texts of other numbers that must appear as written
    QTest::newRow("entropy") << QStringList{"entropy", "none", "--heads", "2", "--lengths", "4,16"} << true
                             << QStringList{"\"length\": 16", "\"head\": 1"} << QStringList{};
    QTest::newRow("dot") << QStringList{"dot", "--max-distance", "3"} << true
                         << QStringList{"\"distance\": 3", "\"dim\": 128"} << QStringList{};
    QTest::newRow("bias t5 parameters") << QStringList{"bias", "t5", "--heads", "1", "--length", "3"} << true
                                        << QStringList{"\"num-buckets\":32", "\"max-distance\":128", "\"length\":3"}
                                        << QStringList{};
    QTest::newRow("frequencies") << QStringList{"frequencies", "--dim", "4", "--scaling", "yarn", "--set", "factor=2.5"}
                                 << true << QStringList{"\"dim\": 4", "\"original-context\": 0", "\"context\": 16"}
                                 << QStringList{"\"factor\": 2.5"};
    QTest::newRow("schemes --json") << QStringList{"schemes", "--json"} << false
                                    << QStringList{"\"default\": 128", "\"max\": 4096", "\"min\": 2"}
                                    << QStringList{"\"default\": 0.4"};
    QTest::newRow("bench attention --json")
        << QStringList{"bench", "attention", "--length", "64", "--heads", "1", "--dim", "16", "--repeat", "1", "--json"}
        << false << QStringList{"\"flops\":133120", "\"nominal_flops\":131072", "\"length\":64"} << QStringList{};
}

void TestCli::jsonIntegers()
{
    QFETCH(QStringList, args);
    QFETCH(bool, toFile);
    QFETCH(QStringList, integers);
    QFETCH(QStringList, kept);
    QTemporaryDir dir;
    const QString path = dir.filePath("x.json");
    const CliResult r = runCli(toFile ? args + QStringList{"-o", path} : args);
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QByteArray json = r.out;
    if (toFile) {
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        json = f.readAll();
    }
    for (const QString& i : integers) {
        QVERIFY2(json.contains(i.toUtf8()), qPrintable(i + " not in " + json));
        QVERIFY2(!json.contains(i.toUtf8() + "."), qPrintable(i + ". in " + json));
    }
    for (const QString& k : kept)
        QVERIFY2(json.contains(k.toUtf8()), qPrintable(k + " not in " + json));
}

// (i) Every verb that takes a scheme takes it as the word or as --scheme, with the same result.
void TestCli::schemeWordOrOption_data()
{
    QTest::addColumn<QStringList>("word");
    QTest::addColumn<QStringList>("option");
    QTest::newRow("bias") << QStringList{"bias", "kerple-log", "--length", "5"}
                          << QStringList{"bias", "--scheme", "kerple-log", "--length", "5"};
    QTest::newRow("bias both agree") << QStringList{"bias", "rope", "--length", "4"}
                                     << QStringList{"bias", "rope", "--scheme", "rope", "--length", "4"};
    QTest::newRow("entropy") << QStringList{"entropy", "local", "--lengths", "4,32", "--context", "8"}
                             << QStringList{"entropy", "--scheme", "local", "--lengths", "4,32", "--context", "8"};
}

void TestCli::schemeWordOrOption()
{
    QFETCH(QStringList, word);
    QFETCH(QStringList, option);
    const CliResult a = runCli(word), b = runCli(option);
    QVERIFY2(a.exitCode == 0, a.err.constData());
    QVERIFY2(b.exitCode == 0, b.err.constData());
    QVERIFY(!a.out.isEmpty());
    QCOMPARE(b.out, a.out);
}

// bench attention names everything it timed: the method with its parameters, logn and sinks, in its text line and
// JSON (which carries the scheme's metadata as every scheme output does).
void TestCli::benchNamesWhatItTimes_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("text");     // in the first line of the text output
    QTest::addColumn<QStringList>("json"); // PATH=VALUE of the --json object (PATH: keys joined by '/')
    QTest::newRow("rerope")
        << QStringList{"--scheme", "rope", "--scaling", "rerope", "--context", "64", "--set", "window=16"}
        << "attention rope+rerope (original-context=0, window=16) causal"
        << QStringList{
               "scheme=rope", "scaling=rerope", "scaling_parameters/window=16", "scaling_parameters/original-context=0",
               "logn=false",  "context=64",     "parameters/base=10000"};
    // --window sets the method's window where the method has one, as --set window= does (it was refused: "rope has
    // no window").
    QTest::newRow("rerope --window") << QStringList{"rope+rerope", "--context", "64", "--window", "16"}
                                     << "attention rope+rerope (original-context=0, window=16) causal"
                                     << QStringList{"scaling=rerope", "scaling_parameters/window=16"};
    QTest::newRow("leaky-rerope --window")
        << QStringList{"xpos", "--scaling", "leaky-rerope", "--context", "64", "--window", "8"}
        << "attention xpos+leaky-rerope (leak=16, original-context=0, window=8) causal"
        << QStringList{"scaling=leaky-rerope", "scaling_parameters/window=8"};
    QTest::newRow("rope+yarn word") << QStringList{"rope+yarn", "--set", "factor=2"}
                                    << "attention rope+yarn (attention-factor=0, beta-fast=32, beta-slow=1, factor=2"
                                    << QStringList{"scaling=yarn", "scaling_parameters/factor=2"};
    QTest::newRow("logn") << QStringList{"alibi", "--context", "16", "--logn"} << "attention alibi causal"
                          << QStringList{"logn=true", "context=16"};
    QTest::newRow("logn in the text") << QStringList{"alibi", "--context", "16", "--logn"} << " logn L=16 "
                                      << QStringList{"scheme=alibi"};
    QTest::newRow("sinks") << QStringList{"local", "--window", "8", "--set", "sinks=2"} << " W=8 sinks=2 "
                           << QStringList{"parameters/sinks=2", "window=8"};
    QTest::newRow("plain rope") << QStringList{"rope"} << "attention rope causal"
                                << QStringList{"scheme=rope", "logn=false"};
}

void TestCli::benchNamesWhatItTimes()
{
    QFETCH(QStringList, args);
    QFETCH(QString, text);
    QFETCH(QStringList, json);
    const QStringList run =
        QStringList{"bench", "attention"} + args + QStringList{"--length", "32", "--heads", "1", "--repeat", "1"};
    const CliResult plain = runCli(run);
    QVERIFY2(plain.exitCode == 0, plain.err.constData());
    QVERIFY2(plain.out.split('\n').first().contains(text.toUtf8()), plain.out.constData());
    const CliResult asJson = runCli(run + QStringList{"--json"});
    QVERIFY2(asJson.exitCode == 0, asJson.err.constData());
    const QJsonObject object = QJsonDocument::fromJson(asJson.out).object();
    for (const QString& item : json) {
        const QStringList path = item.section('=', 0, 0).split('/');
        QJsonValue v = object;
        for (const QString& key : path)
            v = v.toObject().value(key);
        const QString want = item.section('=', 1);
        const QString got = v.isString() ? v.toString()
                            : v.isBool() ? (v.toBool() ? "true" : "false")
                                         : QString::number(v.toDouble(), 'g', 17);
        QVERIFY2(!v.isUndefined() && got == want, qPrintable(item + ", got " + got + " in " + asJson.out));
    }
}

// Every verb's --help lists the -o extensions its check accepts, no more and no fewer.
void TestCli::helpListsTheOutputsAccepted_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::newRow("bias") << QStringList{"bias", "alibi", "--length", "4"};
    QTest::newRow("entropy") << QStringList{"entropy", "alibi", "--lengths", "4", "--heads", "1"};
    QTest::newRow("dot") << QStringList{"dot", "--max-distance", "4"};
    QTest::newRow("frequencies") << QStringList{"frequencies", "--dim", "8"};
}

void TestCli::helpListsTheOutputsAccepted()
{
    QFETCH(QStringList, args);
    const CliResult help = runCli({args.first(), "--help"});
    QCOMPARE(help.exitCode, 0);
    QByteArray line;
    for (const QByteArray& l : help.out.split('\n'))
        if (l.trimmed().startsWith("-o "))
            line = l;
    QVERIFY2(!line.isEmpty(), help.out.constData());
    const bool pictures = runCli({"render", "--help"}).exitCode == 0;
    QTemporaryDir dir;
    for (const char* ext : {".csv", ".json", ".npy", ".png", ".svg", ".pdf"}) {
        const bool picture = QByteArray(".png.svg.pdf").contains(ext);
        if (picture && !pictures)
            continue; // a CLI without the GUI library draws no pictures
        const bool listed = line.contains(QByteArray(" ") + ext);
        const CliResult r = runCli(args + QStringList{"-o", dir.filePath(QStringLiteral("x") + ext)});
        QVERIFY2((r.exitCode == 0) == listed,
                 qPrintable(QString("%1: listed %2, exit %3: %4").arg(ext).arg(listed).arg(r.exitCode).arg(r.err)));
    }
}

// --width and --height take exactly the range their help states (one constant, core's picture_limits.h, for both):
// each end is accepted, one past it refused naming the same range.
void TestCli::pictureSizeAsHelpSays_data()
{
    QTest::addColumn<QString>("option");
    QTest::addColumn<bool>("atMax"); // the upper end, else the lower
    QTest::addColumn<int>("offset"); // from that end
    for (const char* option : {"width", "height"}) {
        const QString o = QString::fromLatin1(option);
        QTest::newRow(qPrintable(o + " below the least")) << o << false << -1;
        QTest::newRow(qPrintable(o + " the least")) << o << false << 0;
        QTest::newRow(qPrintable(o + " the most")) << o << true << 0;
        QTest::newRow(qPrintable(o + " past the most")) << o << true << 1;
    }
}

void TestCli::pictureSizeAsHelpSays()
{
    QFETCH(QString, option);
    QFETCH(bool, atMax);
    QFETCH(int, offset);
    if (runCli({"render", "--help"}).exitCode != 0)
        QSKIP("this positionlab-cli has no render verb (built without the GUI library)");
    const QString help = QString::fromUtf8(runCli({"render", "--help"}).out);
    const QRegularExpression range("\n  --" + option + " PX +picture output: \\w+ in pixels, (\\d+)\\.\\.(\\d+) ");
    const QRegularExpressionMatch m = range.match(help);
    QVERIFY2(m.hasMatch(), qPrintable(help));
    const int least = m.captured(1).toInt(), most = m.captured(2).toInt();
    const int value = (atMax ? most : least) + offset;
    QTemporaryDir dir;
    const CliResult r = runCli({"render", "bias", "alibi", "--length", "4", "--" + option, QString::number(value), "-o",
                                dir.filePath("x.svg")});
    if (offset == 0) {
        QVERIFY2(r.exitCode == 0, r.err.constData());
        return;
    }
    QCOMPARE(r.exitCode, 2);
    const QString message = QStringLiteral("%1 = %2 is out of range; allowed: integers in [%3, %4]")
                                .arg(option)
                                .arg(value)
                                .arg(least)
                                .arg(most);
    QVERIFY2(QString::fromUtf8(r.err).contains(message), r.err.constData());
}

PLAB_QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
