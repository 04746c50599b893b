// GUI tests (offscreen): each view driven through its controls, the rendered pictures checked against closed
// forms (ALiBi diagonal = colour of 0, masked cells = mask colour), every export format parsed, CLI pictures.
#include "charts/curve_chart.h"
#include "painting/colormap.h"
#include "painting/export.h"
#include "tabs/heatmap_widget.h"
#include "workers/kept_models.h"
#include "window/main_window.h"
#include "tabs/methods_panel.h"
#include "tabs/model_prompt.h"
#include "tabs/scheme_panel.h"
#include "workers/training_run.h"
#include "tabs/attention_view.h"
#include "tabs/bias_view.h"
#include "tabs/compare_view.h"
#include "tabs/dot_view.h"
#include "tabs/entropy_view.h"
#include "tabs/train_view.h"
#include "tabs/view_base.h"

#include "model/corpus.h"
#include "base/errors.h"
#include "model_configs.h"
#include "schemes/position_bias.h"
#include "compare.h"
#include "test_main.h"
#include "test_settings.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QPushButton>
#include <QTableWidget>
#include <QFile>
#include <QPainter>
#include <QProcess>
#include <QRegularExpression>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QThreadPool>
#include <QSpinBox>
#include <QStandardPaths>
#include <QStatusBar>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QXmlStreamReader>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <sstream>

using namespace plab;
using namespace plab::ui;

namespace {

PanelState panelFor(const std::string& scheme, int length, int head = 0, int heads = 8, bool bidirectional = false,
                    std::vector<std::string> set = {})
{
    PanelState p;
    p.spec = makeSchemeSpec(scheme, heads, bidirectional, set);
    p.length = length;
    p.head = head;
    return p;
}

// Drives a view to a panel state and waits for its picture.
bool showAndWait(ViewBase& view, const PanelState& state)
{
    QSignalSpy spy(&view, &ViewBase::pictureUpdated);
    view.setActive(true);
    view.setPanelState(state);
    return spy.count() > 0 || spy.wait(20000);
}

QByteArray readAll(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// The pixel at the centre of cell (m, n) of panel `panel` in a rendered heatmap.
QRgb cellPixel(const HeatmapPainter& heatmap, const QImage& image, int panel, int m, int n)
{
    const PictureStyle style = PictureStyle::forSize(image.size());
    const HeatmapPainter::Layout layout = heatmap.layout(QRectF(QPointF(0, 0), QSizeF(image.size())), style);
    const QRectF plot = layout.plots[panel];
    const QRectF window = heatmap.fullWindow();
    const QPointF p(plot.left() + (n + 0.5) / window.width() * plot.width(),
                    plot.top() + (m + 0.5) / window.height() * plot.height());
    return image.pixel(p.toPoint()) & 0xffffff;
}

// The pixel in the middle of the "masked" swatch under colour bar `bar` (present when the bar's panels mask cells).
QRgb swatchPixel(const HeatmapPainter& heatmap, const QImage& image, int bar)
{
    const PictureStyle style = PictureStyle::forSize(image.size());
    const HeatmapPainter::Layout layout = heatmap.layout(QRectF(QPointF(0, 0), QSizeF(image.size())), style);
    const QRectF r = layout.bars[bar];
    return image.pixel(QPointF(r.center().x(), r.bottom() - 0.55 * style.font.pixelSize()).toPoint()) & 0xffffff;
}

// The pixel at the centre of cell (m, n) of panel `panel` as the widget shows it on screen.
QRgb screenCellPixel(HeatmapWidget& widget, int panel, int m, int n)
{
    const QImage shot = widget.grab().toImage();
    const HeatmapPainter::Layout layout = widget.heatmap().layout(widget.rect(), widget.screenStyle());
    const QRectF plot = layout.plots[panel];
    const QRectF window = widget.window();
    const QPointF p(plot.left() + (n + 0.5 - window.left()) / window.width() * plot.width(),
                    plot.top() + (m + 0.5 - window.top()) / window.height() * plot.height());
    return shot.pixel(p.toPoint()) & 0xffffff;
}

int colorDistance(QRgb a, QRgb b)
{
    return std::abs(qRed(a) - qRed(b)) + std::abs(qGreen(a) - qGreen(b)) + std::abs(qBlue(a) - qBlue(b));
}

void checkPng(const QString& path, QSize size)
{
    const QByteArray bytes = readAll(path);
    QVERIFY2(bytes.startsWith("\x89PNG\r\n\x1a\n"), qPrintable(path));
    QImage image;
    QVERIFY(image.loadFromData(bytes, "PNG"));
    QCOMPARE(image.size(), size);
}

void checkSvg(const QString& path)
{
    const QByteArray bytes = readAll(path);
    QXmlStreamReader xml(bytes);
    bool sawSvg = false;
    while (!xml.atEnd()) {
        xml.readNext();
        if (xml.isStartElement() && xml.name() == QLatin1String("svg"))
            sawSvg = true;
    }
    QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
    QVERIFY(sawSvg);
}

void checkPdf(const QString& path)
{
    const QByteArray bytes = readAll(path);
    QVERIFY(bytes.startsWith("%PDF-1."));
    QVERIFY(bytes.trimmed().endsWith("%%EOF"));
}

// The compare view with ALiBi and local (window 16) at N = 32, head 2, and their difference A − B, or B − A when
// swapped: shown and painted.
bool showAlibiLocalDifference(CompareView& view, bool swap)
{
    view.resize(1300, 560);
    view.show();
    if (!QTest::qWaitForWindowExposed(&view))
        return false;
    view.setSchemes({QStringLiteral("alibi"), QStringLiteral("local")});
    view.setDifference(true, swap ? 1 : 0, swap ? 0 : 1);
    return showAndWait(view, panelFor("alibi", 32, 1));
}

// A small text corpus file for training runs in tests.
QString writeCorpus(const QTemporaryDir& dir)
{
    QString text;
    for (int i = 0; i < 120; ++i)
        text += QStringLiteral("The cat sat on the mat number %1. ").arg(i % 7);
    const QString corpus = dir.filePath(QStringLiteral("corpus.txt"));
    QFile f(corpus);
    if (f.open(QIODevice::WriteOnly))
        f.write(text.toUtf8());
    return corpus;
}

// A run of seconds: a 1-layer model of width 16 at context 16, four steps, evaluated at 16 and 32.
TrainRequest tinyRequest(const std::vector<std::string>& schemes, const QString& corpus)
{
    TrainRequest request;
    request.schemes = schemes;
    request.preset = QStringLiteral("test");
    request.model = smallModelConfig("alibi", 1);
    request.train.steps = 4;
    request.train.batch = 2;
    request.train.warmup = 1;
    request.evalMultipliers = {1, 2};
    request.evalBytes = 256;
    request.reportEvery = 1;
    request.corpusPath = corpus;
    return request;
}

// An untrained model of the small test size whose checkpoint records `preset` as a Train tab run does.
SharedModel modelWithPreset(const std::string& scheme, const QString& preset, uint64_t seed = 1)
{
    ModelConfig config = smallModelConfig(scheme, 1);
    config.seed = seed;
    CheckpointInfo info;
    info.step = 3;
    if (!preset.isNull())
        info.training = {{"preset", preset.toStdString()}};
    return makeSharedModel(QString::fromStdString(scheme), std::make_unique<Model>(config), {}, info);
}

// A view's own numbers as its data export lays them out: the shape, and the values row-major (masked cells -inf).
struct ExportedNumbers {
    std::vector<int64_t> shape;
    std::vector<double> values;
};

ExportedNumbers viewNumbers(const ViewBase* view)
{
    ExportedNumbers e;
    auto addMatrix = [&e](const MatrixPtr& m) { e.values.insert(e.values.end(), m->values.begin(), m->values.end()); };
    if (const auto* bias = qobject_cast<const BiasView*>(view)) {
        const int n = bias->result().request.length;
        e.shape = {n, n};
        addMatrix(bias->result().matrix);
    } else if (const auto* compare = qobject_cast<const CompareView*>(view)) {
        const CompareResult& r = compare->result();
        const int n = r.panels.front().request.length;
        e.shape = {int64_t(r.panels.size() + (r.difference ? 1 : 0)), n, n};
        for (const BiasResult& panel : r.panels)
            addMatrix(panel.matrix);
        if (r.difference)
            addMatrix(r.difference);
    } else if (const auto* dot = qobject_cast<const DotView*>(view)) {
        for (size_t c = 0; c < dot->result().curves.size(); ++c) {
            const DotCurve& curve = dot->result().curves[c];
            for (size_t i = 0; i < curve.distance.size(); ++i)
                e.values.insert(e.values.end(), {double(c), double(curve.dim), curve.base, double(curve.distance[i]),
                                                 curve.dot[i], curve.dot[i] - curve.halfDim()});
        }
        e.shape = {int64_t(e.values.size() / 6), 6};
    } else if (const auto* entropy = qobject_cast<const EntropyView*>(view)) {
        const std::vector<EntropySeries>& series = entropy->result().series;
        for (size_t s = 0; s < series.size(); ++s)
            for (const EntropyPoint& p : series[s].points)
                e.values.insert(e.values.end(),
                                {double(s), double(p.length), double(p.head), p.entropyLast, p.entropyMean});
        e.shape = {int64_t(e.values.size() / 5), 5};
    }
    return e;
}

// The numbers of an exported NPY file (version 1, little-endian float32, as the exports write it), read here: core's
// reader refuses the masked cells' -inf that a bias export holds.
ExportedNumbers npyNumbers(const QByteArray& bytes)
{
    ExportedNumbers e;
    if (bytes.size() < 10 || bytes[6] != 1)
        return e;
    const int headerLength = uchar(bytes[8]) | (uchar(bytes[9]) << 8);
    const QString header = QString::fromLatin1(bytes.mid(10, headerLength));
    if (!header.contains(QLatin1String("'descr': '<f4'")))
        return e;
    const QRegularExpressionMatch shape = QRegularExpression(QStringLiteral("'shape': \\(([0-9, ]*)\\)")).match(header);
    for (const QString& n : shape.captured(1).split(QLatin1Char(','), Qt::SkipEmptyParts))
        e.shape.push_back(n.trimmed().toLongLong());
    const QByteArray data = bytes.mid(10 + headerLength);
    for (qsizetype i = 0; i + 4 <= data.size(); i += 4) {
        float x;
        std::memcpy(&x, data.constData() + i, 4);
        e.values.push_back(x);
    }
    return e;
}

// The numbers of an exported JSON file: a matrix stack's "shape" and nested "data" (null for masked), or a table's
// "rows" of {column: value} in the order of "columns".
ExportedNumbers jsonNumbers(const nlohmann::json& doc)
{
    ExportedNumbers e;
    const std::function<void(const nlohmann::json&)> flatten = [&](const nlohmann::json& j) {
        if (j.is_array())
            for (const nlohmann::json& x : j)
                flatten(x);
        else
            e.values.push_back(j.is_null() ? -std::numeric_limits<double>::infinity() : j.get<double>());
    };
    if (doc.contains("data")) {
        e.shape = doc.at("shape").get<std::vector<int64_t>>();
        flatten(doc.at("data"));
        return e;
    }
    const std::vector<std::string> columns = doc.at("columns").get<std::vector<std::string>>();
    for (const nlohmann::json& row : doc.at("rows"))
        for (const std::string& c : columns)
            e.values.push_back(row.at(c).is_null() ? -std::numeric_limits<double>::infinity()
                                                   : row.at(c).get<double>());
    e.shape = {int64_t(doc.at("rows").size()), int64_t(columns.size())};
    return e;
}

} // namespace

class TestUi : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        plab::test::isolateSettings(QStringLiteral("tst_ui"));
        QVERIFY(m_dir.isValid());
        // Test mode: the kept models live under ~/.qttest, never in the user's own data folder.
        QVERIFY(keptModelsFolder().contains(QStringLiteral(".qttest")));
    }
    // Every test starts without kept models (a window loads them at start).
    void init() { QVERIFY(QDir(keptModelsFolder()).removeRecursively()); }
    void cleanupTestCase() { QDir(keptModelsFolder()).removeRecursively(); }

    // The tables are matplotlib's: spot-check the published end points.
    void colorMaps_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<int>("first");
        QTest::addColumn<int>("last");
        QTest::newRow("viridis") << "viridis" << int(qRgb(68, 1, 84)) << int(qRgb(253, 231, 37));
        QTest::newRow("magma") << "magma" << int(qRgb(0, 0, 4)) << int(qRgb(252, 253, 191));
        QTest::newRow("cividis") << "cividis" << int(qRgb(0, 34, 78)) << int(qRgb(254, 232, 56));
        QTest::newRow("diverging") << "diverging" << int(qRgb(59, 76, 192)) << int(qRgb(180, 4, 38));
    }
    void colorMaps()
    {
        QFETCH(QString, name);
        QFETCH(int, first);
        QFETCH(int, last);
        const ColorMap& map = ColorMap::byName(name);
        QCOMPARE(map.name(), name);
        QCOMPARE(int(map.entry(0) & 0xffffff), first & 0xffffff);
        QCOMPARE(int(map.entry(255) & 0xffffff), last & 0xffffff);
        // The mask colours (light and dark palette) are far from every entry of their map.
        for (bool dark : {false, true}) {
            const QRgb mask = map.maskColor(dark);
            for (int i = 0; i < 256; ++i)
                QVERIFY2(colorDistance(map.entry(i), mask) > 60,
                         qPrintable(QStringLiteral("%1 entry %2 is close to the %3 mask colour")
                                        .arg(name)
                                        .arg(i)
                                        .arg(dark ? "dark" : "light")));
        }
        // On the dark background masked cells are a dark grey: visible, but never the glare of white.
        const QRgb dark = map.maskColor(true);
        const QRgb background = PictureStyle::forSize(QSizeF(800, 600), true).background.rgb();
        QVERIFY(colorDistance(dark, background) >= 60);
        QVERIFY(qGray(dark) < 100);
    }

    void colorScale()
    {
        ValueRange signedRange{-2, 5, true, false};
        const ColorScale s = makeColorScale(signedRange, QStringLiteral("auto"));
        QCOMPARE(s.mapName, QStringLiteral("diverging"));
        QCOMPARE(s.lo, -5.0); // symmetric: 0 sits at the centre
        QCOMPARE(s.hi, 5.0);
        ValueRange negative{-3, 0, true, false};
        QCOMPARE(makeColorScale(negative, QStringLiteral("auto")).mapName, QStringLiteral("viridis"));
        QCOMPARE(makeColorScale(negative, QStringLiteral("magma")).mapName, QStringLiteral("magma"));
    }

    // Bias view: the rendered picture shows core's numbers: ALiBi's diagonal is the colour of 0, masked cells the
    // mask colour, and a cell m - n = r the colour of -slope * r.
    void biasPicture_data()
    {
        QTest::addColumn<QString>("scheme");
        QTest::addColumn<int>("length");
        QTest::addColumn<int>("head");
        QTest::addColumn<bool>("bidirectional");
        QTest::addColumn<bool>("dark");
        QTest::newRow("alibi causal head 1") << "alibi" << 16 << 0 << false << false;
        QTest::newRow("alibi causal head 4") << "alibi" << 24 << 3 << false << false;
        QTest::newRow("alibi bidirectional") << "alibi" << 16 << 1 << true << false;
        QTest::newRow("local window 16") << "local" << 40 << 0 << false << false;
        QTest::newRow("kerple-log") << "kerple-log" << 20 << 2 << false << false;
        QTest::newRow("alibi causal dark") << "alibi" << 16 << 0 << false << true;
        QTest::newRow("local window 16 dark") << "local" << 40 << 0 << false << true;
    }
    void biasPicture()
    {
        QFETCH(QString, scheme);
        QFETCH(int, length);
        QFETCH(int, head);
        QFETCH(bool, bidirectional);
        QFETCH(bool, dark);
        BiasView view;
        view.resize(800, 700);
        const PanelState state = panelFor(scheme.toStdString(), length, head, 8, bidirectional);
        QVERIFY(showAndWait(view, state));
        const Matrix& mat = *view.result().matrix;
        QCOMPARE(mat.rows, length);
        // Closed forms, independent of core.
        const double slope = std::pow(2.0, -8.0 * (head + 1) / 8.0);
        for (int m = 0; m < length; ++m)
            for (int n = 0; n < length; ++n) {
                const int r = m - n;
                double expected;
                if (!bidirectional && r < 0)
                    expected = -INFINITY;
                else if (scheme == QLatin1String("alibi"))
                    expected = -slope * std::abs(r);
                else if (scheme == QLatin1String("local"))
                    expected = r < 16 ? 0.0 : -INFINITY;
                else
                    expected = -std::log1p(std::abs(r));
                if (std::isinf(expected))
                    QVERIFY(std::isinf(mat.at(m, n)));
                else
                    QVERIFY(std::abs(mat.at(m, n) - expected) < 1e-5);
            }
        // The picture, exported in the row's palette (the view itself stays light).
        ImageOptions options;
        options.size = QSize(900, 760);
        options.dark = dark;
        const QImage image = renderImage(options, view.paintFunction());
        const HeatmapPainter& heatmap = view.heatmap()->heatmap();
        const ColorScale& scale = heatmap.scale(0);
        const QRgb mask = scale.map().maskColor(dark) & 0xffffff;
        for (int m = 0; m < length; m += 3) {
            QCOMPARE(cellPixel(heatmap, image, 0, m, m), scale.color(0.0) & 0xffffff);
            if (m >= 2 && scheme != QLatin1String("local"))
                QCOMPARE(cellPixel(heatmap, image, 0, m, m - 2), scale.color(mat.at(m, m - 2)) & 0xffffff);
        }
        if (!bidirectional) {
            QCOMPARE(cellPixel(heatmap, image, 0, 0, length - 1), mask);
            QCOMPARE(swatchPixel(heatmap, image, 0), mask); // the colour bar's legend shows the same colour
        }
        if (scheme == QLatin1String("local"))
            QCOMPARE(cellPixel(heatmap, image, 0, length - 1, 0), mask);
        if (!dark)
            return;
        // The dark mask is not the white of the light palette, and the screen and the vector exports agree.
        QVERIFY(mask != 0xffffff);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setDark(true);
        QVERIFY(view.heatmap()->heatmap().isDark());
        QCOMPARE(screenCellPixel(*view.heatmap(), 0, 0, length - 1), mask);
        QCOMPARE(screenCellPixel(*view.heatmap(), 0, 0, 0), scale.color(0.0) & 0xffffff);
        const QString svg = QString::fromUtf8(renderSvg(options, view.paintFunction(), QStringLiteral("t")));
        QVERIFY(svg.contains(QColor(mask).name(), Qt::CaseInsensitive));
        QVERIFY(!svg.contains(QColor(scale.map().maskColor(false)).name(), Qt::CaseInsensitive));
        // Back to light: the light mask again, on screen and in a light export.
        view.setDark(false);
        QCOMPARE(screenCellPixel(*view.heatmap(), 0, 0, length - 1), scale.map().maskColor(false) & 0xffffff);
    }

    // Changing a parameter in the panel's controls reaches the heatmap (kerple-power: -r1 |m-n|^r2).
    void panelDrivesBiasView()
    {
        SchemePanel panel;
        BiasView view;
        view.resize(700, 600);
        connect(&panel, &SchemePanel::changed, &view, [&] { view.setPanelState(panel.state()); });
        panel.setLength(12);
        panel.setScheme(QStringLiteral("kerple-power"));
        QVERIFY(showAndWait(view, panel.state()));
        auto* r1 = panel.findChild<QDoubleSpinBox*>(QStringLiteral("spin_r1"));
        auto* r2 = panel.findChild<QDoubleSpinBox*>(QStringLiteral("spin_r2"));
        QVERIFY(r1 && r2);
        // Ranges come from the catalogue: r2 in (0, 2].
        QCOMPARE(r2->maximum(), 2.0);
        QVERIFY(r2->minimum() > 0.0);
        QSignalSpy spy(&view, &ViewBase::pictureUpdated);
        r1->setValue(0.5);
        r2->setValue(1.5);
        QTRY_VERIFY_WITH_TIMEOUT(std::abs(view.result().request.spec.param("r2") - 1.5) < 1e-12 &&
                                     std::abs(view.result().request.spec.param("r1") - 0.5) < 1e-12,
                                 20000);
        const Matrix& mat = *view.result().matrix;
        QVERIFY(std::abs(mat.at(9, 2) - (-0.5 * std::pow(7.0, 1.5))) < 1e-4);
        // Entering a value past the range is clamped by the spin box, never sent to core.
        r2->setValue(3.0);
        QCOMPARE(r2->value(), 2.0);
        QVERIFY(panel.isValid());
    }

    void panelRefusesBadCombination()
    {
        SchemePanel panel;
        panel.setScheme(QStringLiteral("alibi"));
        QSignalSpy spy(&panel, &SchemePanel::changed);
        panel.setLogn(true, 0); // logn without a context
        QVERIFY(!panel.isValid());
        QVERIFY(panel.errorText().contains(QStringLiteral("context")));
        QCOMPARE(spy.count(), 0);
        panel.setLogn(true, 32);
        QVERIFY(panel.isValid());
        QVERIFY(panel.state().spec.logn);
    }

    void thumbnailsSelectHead()
    {
        BiasView view;
        view.resize(800, 700);
        QVERIFY(showAndWait(view, panelFor("alibi", 32, 0, 6)));
        ThumbnailStrip* strip = view.thumbnails();
        QCOMPARE(strip->count(), 6);
        QSignalSpy spy(&view, &ViewBase::headRequested);
        strip->resize(strip->sizeHint());
        QTest::mouseClick(strip, Qt::LeftButton, {}, strip->thumbnailRect(3).center());
        QCOMPARE(spy.count(), 1);
        QCOMPARE(spy.first().first().toInt(), 3);
    }

    // The Bias tab's per-head thumbnails are samples of the main heatmap: every thumbnail cell equals the main view's
    // cell at the sampled (m, n), the cell centre (i + 0.5) N / T, masked or not (sink columns included).
    void thumbnailsAgreeWithMainView_data()
    {
        QTest::addColumn<QString>("scheme");
        QTest::addColumn<QStringList>("assignments");
        QTest::addColumn<int>("thumbnailSize");
        QTest::newRow("local window 8 sinks 4, T = N") << "local" << QStringList{"window=8", "sinks=4"} << 64;
        QTest::newRow("local window 8 sinks 4, T = 48") << "local" << QStringList{"window=8", "sinks=4"} << 48;
        QTest::newRow("bca window 8 sinks 3, T = 48") << "bca" << QStringList{"window=8", "sinks=3"} << 48;
        QTest::newRow("alibi (no sinks), T = 48") << "alibi" << QStringList{} << 48;
    }
    void thumbnailsAgreeWithMainView()
    {
        QFETCH(QString, scheme);
        QFETCH(QStringList, assignments);
        QFETCH(int, thumbnailSize);
        constexpr int length = 64;
        std::vector<std::string> sets;
        for (const QString& a : assignments)
            sets.push_back(a.toStdString());
        BiasRequest request;
        request.spec = makeSchemeSpec(scheme.toStdString(), 2, false, sets);
        request.length = length;
        request.thumbnailSize = thumbnailSize;
        const BiasResult withThumbnails = computeBias(request);
        QVERIFY2(withThumbnails.error.isEmpty(), qPrintable(withThumbnails.error));
        QCOMPARE(int(withThumbnails.thumbnails.size()), 2);
        int maskedCells = 0;
        for (int h = 0; h < 2; ++h) {
            request.head = h;
            request.thumbnailSize = 0;
            const BiasResult main = computeBias(request);
            QVERIFY2(main.error.isEmpty(), qPrintable(main.error));
            const Matrix& thumbnail = *withThumbnails.thumbnails[h];
            QCOMPARE(thumbnail.rows, thumbnailSize);
            QCOMPARE(thumbnail.cols, thumbnailSize);
            for (int i = 0; i < thumbnailSize; ++i) {
                const int m = int((i + 0.5) * length / thumbnailSize);
                for (int j = 0; j < thumbnailSize; ++j) {
                    const int n = int((j + 0.5) * length / thumbnailSize);
                    const float expected = main.matrix->values[size_t(m) * length + n];
                    const float got = thumbnail.values[size_t(i) * thumbnailSize + j];
                    maskedCells += std::isinf(expected) ? 1 : 0;
                    if (got != expected)
                        QFAIL(qPrintable(QStringLiteral("head %1, cell (m = %2, n = %3): thumbnail %4, main view %5")
                                             .arg(h)
                                             .arg(m)
                                             .arg(n)
                                             .arg(got)
                                             .arg(expected)));
                }
            }
        }
        QVERIFY(maskedCells > 0); // causal: the upper triangle at least
    }

    void zoomAndHover()
    {
        BiasView view;
        view.resize(800, 700);
        view.show();
        QVERIFY(showAndWait(view, panelFor("alibi", 256, 0)));
        HeatmapWidget* w = view.heatmap();
        QCOMPARE(w->window(), QRectF(0, 0, 256, 256));
        w->zoom(4);
        QCOMPARE(w->window().width(), 64.0);
        w->setWindow(QRectF(-50, 500, 64, 64)); // clamped inside the matrix
        QCOMPARE(w->window(), QRectF(0, 192, 64, 64));
        QSignalSpy hover(w, &HeatmapWidget::hovered);
        const HeatmapPainter::Layout layout = w->heatmap().layout(w->rect(), w->screenStyle());
        const QRectF plot = layout.plots[0];
        // Cell (m = 192 + 10, n = 5) of the zoomed window.
        const QPoint pos(plot.left() + (5.5 / 64) * plot.width(), plot.top() + (10.5 / 64) * plot.height());
        QTest::mouseMove(w, pos);
        QTRY_VERIFY(hover.count() > 0);
        QCOMPARE(hover.last().at(1).toInt(), 202);
        QCOMPARE(hover.last().at(2).toInt(), 5);
        QVERIFY(std::abs(hover.last().at(3).toFloat() - (-0.5f * 197)) < 1e-3);
        w->resetZoom();
        QCOMPARE(w->window(), QRectF(0, 0, 256, 256));
    }

    void largeHeatmap()
    {
        BiasView view;
        view.resize(900, 800);
        QVERIFY(showAndWait(view, panelFor("alibi", 4096, 7)));
        QCOMPARE(view.result().matrix->rows, 4096);
        ImageOptions options;
        options.size = QSize(800, 700);
        const QImage image = renderImage(options, view.paintFunction());
        const HeatmapPainter& heatmap = view.heatmap()->heatmap();
        QCOMPARE(cellPixel(heatmap, image, 0, 2000, 2000), heatmap.scale(0).color(0.0) & 0xffffff);
        QCOMPARE(cellPixel(heatmap, image, 0, 100, 3000), heatmap.scale(0).map().maskColor() & 0xffffff);
    }

    void compareSharesScale()
    {
        CompareView view;
        view.resize(1200, 600);
        view.setSchemes({QStringLiteral("alibi"), QStringLiteral("local"), QStringLiteral("kerple-log")});
        QVERIFY(showAndWait(view, panelFor("alibi", 32, 1)));
        QCOMPARE(view.result().panels.size(), size_t(3));
        const HeatmapPainter& heatmap = view.heatmap()->heatmap();
        QCOMPARE(heatmap.panelCount(), 4);                  // the three schemes and the difference A − B
        QCOMPARE(heatmap.scale(0).lo, heatmap.scale(1).lo); // linked colour scale
        QCOMPARE(heatmap.scale(1).hi, heatmap.scale(2).hi);
        QCOMPARE(heatmap.scale(3).mapName, QStringLiteral("diverging")); // the difference has its own
        QCOMPARE(heatmap.scale(3).lo, -heatmap.scale(3).hi);
        // Linked head and length: every panel shows head 2 at N = 32.
        for (const BiasResult& r : view.result().panels) {
            QCOMPARE(r.request.head, 1);
            QCOMPARE(r.request.length, 32);
        }
        // local: window 16 without a context; the picture shows its band and mask.
        ImageOptions options;
        options.size = QSize(1400, 600);
        const QImage image = renderImage(options, view.paintFunction());
        QCOMPARE(cellPixel(heatmap, image, 1, 31, 16), heatmap.scale(1).color(0.0) & 0xffffff);
        QCOMPARE(cellPixel(heatmap, image, 1, 31, 15), heatmap.scale(1).map().maskColor() & 0xffffff);
    }

    // SVG and PDF exports of small matrices: no hairline seams between rows at any zoom.
    void vectorCellsWithoutSeams_data()
    {
        QTest::addColumn<double>("zoom");
        QTest::addColumn<bool>("dark");
        QTest::newRow("zoom 1") << 1.0 << false;
        QTest::newRow("zoom 1.37") << 1.37 << false;
        QTest::newRow("zoom 1.7") << 1.7 << false;
        QTest::newRow("zoom 2.3 dark") << 2.3 << true;
    }
    void vectorCellsWithoutSeams()
    {
        // SVG and PDF draw small matrices as rectangles, and viewers antialias each one against what lies beneath.
        // Rows that merely touch let the background through as hairlines at most zooms. Rasterise the SVG at a
        // fractional zoom and require a block of masked cells, all one colour, to hold no other colour.
        QFETCH(double, zoom);
        QFETCH(bool, dark);
        CompareView view;
        QVERIFY(showAlibiLocalDifference(view, false));
        ImageOptions options;
        options.size = QSize(1400, 560);
        options.dark = dark;
        QSvgRenderer svg(renderSvg(options, view.paintFunction(), QStringLiteral("seams")));
        QVERIFY(svg.isValid());
        QImage image(QSize(qRound(options.size.width() * zoom), qRound(options.size.height() * zoom)),
                     QImage::Format_RGB32);
        image.fill(Qt::magenta);
        QPainter painter(&image);
        svg.render(&painter, QRectF(QPointF(0, 0), QSizeF(image.size())));
        painter.end();

        // Local masks m - n >= 16: rows 20-30 of columns 1-3 of the difference panel (clear of the plot's frame),
        // 1.5 px in from the block's edge.
        const HeatmapPainter& heatmap = view.heatmap()->heatmap();
        const QRectF plot =
            heatmap.layout(QRectF(QPointF(0, 0), QSizeF(options.size)), PictureStyle::forSize(options.size, dark))
                .plots[2];
        const double cell = plot.width() / 32;
        const QRectF block(zoom * (plot.left() + cell) + 1.5, zoom * (plot.top() + 20 * cell) + 1.5,
                           zoom * 3 * cell - 3, zoom * 11 * cell - 3);
        const QRgb mask = heatmap.scale(2).map().maskColor(dark);
        int worst = 0;
        QPoint worstAt;
        for (int y = qCeil(block.top()); y <= qFloor(block.bottom()); ++y)
            for (int x = qCeil(block.left()); x <= qFloor(block.right()); ++x) {
                const QRgb pixel = image.pixel(x, y);
                const int off = std::max({std::abs(qRed(pixel) - qRed(mask)), std::abs(qGreen(pixel) - qGreen(mask)),
                                          std::abs(qBlue(pixel) - qBlue(mask))});
                if (off > worst) {
                    worst = off;
                    worstAt = QPoint(x, y);
                }
            }
        QVERIFY2(worst <= 2, qPrintable(QStringLiteral("pixel (%1, %2) is %3, the mask colour %4")
                                            .arg(worstAt.x())
                                            .arg(worstAt.y())
                                            .arg(QColor(image.pixel(worstAt)).name(), QColor(mask).name())));
    }

    // The difference panel A − B: core's masked difference of the two panels (never NaN), a diverging scale centred
    // on 0, masked-in-either cells in the mask colour of the palette, also in the colour bar, and exports.
    void compareDifference_data()
    {
        QTest::addColumn<bool>("dark");
        QTest::addColumn<bool>("swap");
        QTest::newRow("alibi - local") << false << false;
        QTest::newRow("local - alibi") << false << true;
        QTest::newRow("alibi - local dark") << true << false;
    }
    void compareDifference()
    {
        QFETCH(bool, dark);
        QFETCH(bool, swap);
        CompareView view;
        QVERIFY(showAlibiLocalDifference(view, swap));
        const CompareResult& r = view.result();
        QVERIFY(r.difference);
        QCOMPARE(r.differenceA, swap ? 1 : 0);
        // Closed form: ALiBi head 2 of 8 has slope 1/4; local is 0 for 0 <= m - n < 16, masked elsewhere.
        const float sign = swap ? -1.0f : 1.0f;
        for (int m = 0; m < 32; ++m)
            for (int n = 0; n < 32; ++n) {
                const float d = r.difference->at(m, n);
                const int dist = m - n;
                if (dist < 0 || dist >= 16) {
                    QVERIFY2(std::isinf(d) && d < 0, qPrintable(QStringLiteral("(%1, %2) = %3").arg(m).arg(n).arg(d)));
                } else {
                    QVERIFY(d == sign * -0.25f * dist); // exact: powers of two
                }
            }
        const HeatmapPainter& heatmap = view.heatmap()->heatmap();
        QCOMPARE(heatmap.panelCount(), 3);
        const ColorScale& diff = heatmap.scale(2);
        QCOMPARE(diff.mapName, QStringLiteral("diverging"));
        QCOMPARE(diff.lo, -3.75); // symmetric about 0: |A − B| <= 15 / 4
        QCOMPARE(diff.hi, 3.75);
        QCOMPARE(heatmap.figure().panels[2].title,
                 swap ? QStringLiteral("Difference local − alibi") : QStringLiteral("Difference alibi − local"));

        ImageOptions options;
        options.size = QSize(1400, 560);
        options.dark = dark;
        const QImage image = renderImage(options, view.paintFunction());
        const QRgb mask = diff.map().maskColor(dark) & 0xffffff;
        QCOMPARE(cellPixel(heatmap, image, 2, 20, 20), diff.color(0.0) & 0xffffff); // the neutral centre
        QCOMPARE(cellPixel(heatmap, image, 2, 31, 16), diff.color(sign * -3.75) & 0xffffff);
        QCOMPARE(cellPixel(heatmap, image, 2, 31, 15), mask); // masked in local only
        QCOMPARE(cellPixel(heatmap, image, 2, 3, 20), mask);  // masked in both (would be NaN)
        QCOMPARE(swatchPixel(heatmap, image, 1), mask);       // the difference's own colour bar
        QVERIFY(diff.color(sign * -3.75) != diff.color(0.0));

        // Hover names the difference; turning it off leaves the schemes alone.
        QSignalSpy hover(&view, &ViewBase::hoverText);
        const HeatmapPainter::Layout layout = heatmap.layout(view.heatmap()->rect(), view.heatmap()->screenStyle());
        const QRectF plot = layout.plots[2];
        QTest::mouseMove(view.heatmap(), QPoint(1, 1)); // the previous row may have left the cursor on the cell
        QTest::mouseMove(view.heatmap(),
                         QPoint(plot.left() + 5.5 / 32 * plot.width(), plot.top() + 0.5 / 32 * plot.height()));
        QTRY_VERIFY(hover.count() > 0);
        QVERIFY2(hover.last().first().toString().contains(QStringLiteral("masked in A or B")),
                 qPrintable(hover.last().first().toString()));

        // Data: the schemes, then the difference, masked cells as null in JSON.
        std::ostringstream json;
        view.writeData(json, DataFormat::Json);
        const auto doc = nlohmann::json::parse(json.str());
        QCOMPARE(doc["difference"]["index"].get<int>(), 2);
        QCOMPARE(doc["difference"]["a"].get<int>(), swap ? 1 : 0);
        QCOMPARE(doc["shape"], nlohmann::json::array({3, 32, 32}));
        QVERIFY(doc["data"][2][31][15].is_null());
        QCOMPARE(doc["data"][2][31][16].get<double>(), double(sign * -3.75f));

        QSignalSpy spy(&view, &ViewBase::pictureUpdated);
        view.setDifference(false);
        QVERIFY(spy.wait(20000));
        QCOMPARE(view.heatmap()->heatmap().panelCount(), 2);
        QVERIFY(!view.result().difference);
    }

    // Curve hover: the nearest data point of the nearest series, not the cursor's coordinates.
    void chartHover()
    {
        EntropyView view;
        view.resize(1000, 650);
        view.setSchemes({QStringLiteral("none"), QStringLiteral("alibi")});
        view.setMaxLength(256);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QVERIFY(showAndWait(view, panelFor("alibi", 16)));
        CurvePlot* plot = view.plot();
        const CurveFigure& figure = plot->figure();
        QCOMPARE(figure.curves[1].name, QStringLiteral("alibi"));
        // 30% of the way from alibi's 2nd point to its 3rd: the 2nd; at 70%: the 3rd. Exact values, not interpolated.
        const QPointF p1 = plot->pointPosition(1, 1), p2 = plot->pointPosition(1, 2);
        QVERIFY(!p1.isNull() && !p2.isNull());
        for (const auto& [fraction, index] : {std::pair{0.3, 1}, std::pair{0.7, 2}}) {
            const QPointF cursor = p1 + fraction * (p2 - p1) + QPointF(0, 2);
            const CurvePlot::Hit hit = plot->hitTest(cursor);
            QCOMPARE(hit.curve, 1);
            QCOMPARE(hit.index, index);
            QCOMPARE(plot->hoverText(hit), QStringLiteral("alibi: x = %1, y = %2")
                                               .arg(figure.curves[1].x[index], 0, 'g', 6)
                                               .arg(figure.curves[1].y[index], 0, 'g', 6));
        }
        // The same through the mouse: the view forwards it to the status bar.
        QSignalSpy hover(&view, &ViewBase::hoverText);
        QWidget* viewport = plot->childAt(p2.toPoint());
        QVERIFY(viewport);
        QTest::mouseMove(viewport, viewport->mapFrom(plot, p2.toPoint()));
        QTRY_VERIFY(hover.count() > 0);
        QCOMPARE(hover.last().first().toString(), plot->hoverText(plot->hitTest(p2)));
        QVERIFY(hover.last().first().toString().startsWith(QStringLiteral("alibi: x = 64,")));
        // Off the plot area: nothing.
        QCOMPARE(plot->hitTest(QPointF(2, 2)).curve, -1);
    }

    // The dot plot: dot - d/2 is 0 at distance 0 and a parameter change updates the series in place.
    void dotView()
    {
        DotView view;
        view.resize(900, 600);
        QVERIFY(showAndWait(view, panelFor("alibi", 16)));
        QCOMPARE(view.result().curves.size(), size_t(3));
        const CurveFigure& figure = view.plot()->figure();
        QCOMPARE(figure.curves.size(), size_t(3));
        QCOMPARE(figure.curves[0].x.front(), 0.0);
        QVERIFY(std::abs(figure.curves[0].y.front()) < 1e-9);
        // Closed form at r = 1 for d = 128, base 10000.
        double sum = 0;
        for (int i = 0; i < 64; ++i)
            sum += std::cos(std::pow(10000.0, -2.0 * i / 128));
        QVERIFY(std::abs(figure.curves[0].y[1] - (sum - 64)) < 1e-9);
        const int rebuilds = view.plot()->rebuildCount();
        DotRequest request = view.request();
        request.maxDistance = 512;
        QSignalSpy spy(&view, &ViewBase::pictureUpdated);
        view.setRequest(request, false);
        QVERIFY(spy.wait(10000));
        QCOMPARE(view.plot()->figure().curves[0].x.size(), size_t(513));
        QCOMPARE(view.plot()->rebuildCount(), rebuilds); // QXYSeries::replace, no rebuild
    }

    // Entropy: NoPE with q = k = 0 attends uniformly, so the last query's entropy is log n exactly.
    void entropyView()
    {
        EntropyView view;
        view.resize(900, 600);
        view.setSchemes({QStringLiteral("none"), QStringLiteral("alibi")});
        view.setMaxLength(256);
        QVERIFY(showAndWait(view, panelFor("alibi", 16)));
        const CurveFigure& figure = view.plot()->figure();
        QCOMPARE(figure.curves.size(), size_t(3)); // none, alibi, log n reference
        QVERIFY(figure.logX);
        const Curve& none = figure.curves[0];
        QCOMPARE(none.x.size(), size_t(5)); // 16..256
        // core accumulates in float: agree to float precision.
        for (size_t i = 0; i < none.x.size(); ++i)
            QVERIFY(std::abs(none.y[i] - std::log(none.x[i])) < 1e-6);
        // ALiBi's entropy stays bounded: far below log n at 256.
        QVERIFY(figure.curves[1].y.back() < std::log(256.0) - 2);
        QVERIFY(figure.curves[2].reference);
    }

    // Entropy from a model's own q and k: the layer box follows the model (default the last layer), and each
    // layer's curve is exactly what core gives for that layer.
    void entropyFromModelLayer_data()
    {
        QTest::addColumn<int>("layers");
        QTest::addColumn<int>("layer");
        QTest::newRow("1 of 1") << 1 << 1;
        QTest::newRow("last of 3 (default)") << 3 << 3;
        QTest::newRow("first of 3") << 3 << 1;
        QTest::newRow("middle of 3") << 3 << 2;
    }
    void entropyFromModelLayer()
    {
        QFETCH(int, layers);
        QFETCH(int, layer);
        const ModelConfig config = smallModelConfig("alibi", layers, 32, 4, 64, 32);
        std::vector<uint8_t> text(200);
        for (size_t i = 0; i < text.size(); ++i)
            text[i] = static_cast<uint8_t>("the quick brown fox "[i % 20]);
        auto random = std::make_unique<Model>(config);
        for (float& w : random->parameters()) // weights far from the tiny init, so q . k matters in every layer
            w *= 4;
        random->parametersChanged();
        const SharedModel model = makeSharedModel(QStringLiteral("random"), std::move(random), text);
        EntropyView view;
        view.addModel(model);
        QCOMPARE(view.modelLayer(), layers); // the last layer by default
        view.setModelLayer(layer);
        view.setMaxLength(64);
        view.setQk(QkSource::Model);
        QVERIFY(showAndWait(view, panelFor("alibi", 16)));
        QTRY_VERIFY_WITH_TIMEOUT(!view.isBusy(), 60000);
        QCOMPARE(view.result().series.size(), size_t(1));
        const EntropyResult direct = computeModelEntropy(model, {16, 32, 64}, layer - 1, JobControl{});
        QVERIFY(direct.error.isEmpty());
        const auto& shown = view.result().series[0].points;
        const auto& want = direct.series[0].points;
        QCOMPARE(shown.size(), size_t(3 * 4)); // lengths 16, 32, 64 (the chosen maximum, nothing more) x 4 heads
        QCOMPARE(view.result().request.lengths, (std::vector<int>{16, 32, 64}));
        QCOMPARE(shown.size(), want.size());
        for (size_t i = 0; i < shown.size(); ++i)
            QCOMPARE(shown[i].entropyLast, want[i].entropyLast);
        if (layers > 1) { // another layer gives other numbers, so the box really chooses
            const EntropyResult other = computeModelEntropy(model, {16, 32, 64}, layer % layers, JobControl{});
            QVERIFY2(other.series[0].points.back().entropyLast != want.back().entropyLast,
                     qPrintable(QString::number(want.back().entropyLast)));
        }
    }

    void entropyCancel()
    {
        EntropyView view;
        view.setSchemes({QStringLiteral("alibi"), QStringLiteral("kerple-log"), QStringLiteral("t5")});
        view.setMaxLength(8192);
        view.setActive(true);
        QSignalSpy busy(&view, &ViewBase::busyChanged);
        view.setPanelState(panelFor("alibi", 16));
        QVERIFY(view.isBusy());
        view.cancelJob();
        QTRY_VERIFY_WITH_TIMEOUT(!view.isBusy(), 60000);
        QVERIFY(!view.hasPicture()); // a canceled job shows nothing half-done
    }

    // Every view exports every format; the files parse.
    void exports_data()
    {
        QTest::addColumn<QString>("viewId");
        QTest::addColumn<QString>("extension");
        for (const char* v : {"bias", "compare", "dot", "entropy"})
            for (const char* e : {"png", "svg", "pdf", "csv", "json", "npy"})
                QTest::newRow(qPrintable(QStringLiteral("%1 %2").arg(QLatin1String(v), QLatin1String(e))))
                    << QString::fromLatin1(v) << QString::fromLatin1(e);
    }
    void exports()
    {
        QFETCH(QString, viewId);
        QFETCH(QString, extension);
        MainWindow window;
        window.resize(1300, 850);
        window.panel()->setLength(24);
        window.panel()->setHeads(4);
        window.showView(viewId);
        ViewBase* view = window.currentView();
        QVERIFY(view);
        if (viewId == QLatin1String("entropy"))
            static_cast<EntropyView*>(view)->setMaxLength(128);
        QTRY_VERIFY_WITH_TIMEOUT(view->hasPicture() && !view->isBusy(), 30000);
        const QString path = m_dir.filePath(QStringLiteral("%1.%2").arg(viewId, extension));
        ImageOptions options;
        options.size = QSize(640, 480);
        options.dpi = 144;
        QString error;
        QVERIFY2(window.exportCurrent(path, options, &error), qPrintable(error));
        const QByteArray bytes = readAll(path);
        if (extension == QLatin1String("png")) {
            checkPng(path, QSize(640, 480));
            QImage image(path);
            QCOMPARE(image.dotsPerMeterX(), int(144 / 0.0254 + 0.5));
        } else if (extension == QLatin1String("svg")) {
            checkSvg(path);
        } else if (extension == QLatin1String("pdf")) {
            checkPdf(path);
        } else if (extension == QLatin1String("json") || extension == QLatin1String("npy")) {
            // The file's shape and numbers are the view's own result (float32 in NPY, %.9g in JSON).
            const ExportedNumbers want = viewNumbers(view);
            QVERIFY(!want.values.empty());
            ExportedNumbers got;
            if (extension == QLatin1String("json")) {
                const auto doc = nlohmann::json::parse(bytes.toStdString());
                QVERIFY(doc.is_object());
                got = jsonNumbers(doc);
            } else {
                QVERIFY(bytes.startsWith("\x93NUMPY"));
                got = npyNumbers(bytes);
            }
            QCOMPARE(got.shape, want.shape);
            const test::ErrorMax error = test::maxRelativeError(got.values, want.values);
            QVERIFY2(error.within(1e-6), qPrintable(error.message(extension)));
        } else {
            QVERIFY(bytes.count('\n') >= 3);
            if (viewId == QLatin1String("bias")) // N lines of N values, as the CLI writes them
                QCOMPARE(bytes.count('\n'), 24);
        }
    }

    void exportRefusals()
    {
        MainWindow window;
        window.showView(QStringLiteral("attention"));
        QString error;
        QVERIFY(!window.exportCurrent(m_dir.filePath(QStringLiteral("a.png")), {}, &error));
        QVERIFY(error.contains(QStringLiteral("trained model")));
        window.showView(QStringLiteral("bias"));
        QTRY_VERIFY_WITH_TIMEOUT(window.currentView()->hasPicture(), 20000);
        QVERIFY(!window.exportCurrent(m_dir.filePath(QStringLiteral("a.bmp")), {}, &error));
        QVERIFY(error.contains(QStringLiteral(".png")));
        ImageOptions tiny;
        tiny.size = QSize(10, 10);
        QVERIFY(!window.exportCurrent(m_dir.filePath(QStringLiteral("b.png")), tiny, &error));
        QVERIFY(error.contains(QStringLiteral("64")));
        QVERIFY(!QFile::exists(m_dir.filePath(QStringLiteral("b.png"))));
    }

    void modelViewsWaitForAModel()
    {
        MainWindow window;
        QCOMPARE(window.tabs()->count(), 8); // with Rotary frequencies and Your model
        for (const char* id : {"attention", "train"}) {
            ViewBase* v = window.view(QString::fromLatin1(id));
            QVERIFY(v);
            QVERIFY(!v->hasPicture());
        }
        window.showView(QStringLiteral("attention"));
        QCoreApplication::processEvents();
        QVERIFY(!window.currentView()->isBusy()); // nothing to run without a model, and no crash
        // Not an empty panel: why, and a button that trains a model.
        auto* attention = static_cast<AttentionView*>(window.view(QStringLiteral("attention")));
        QVERIFY(attention->isShowingModelPrompt());
        QVERIFY(attention->modelPrompt()->message().contains(QStringLiteral("needs a trained model")));
        QCOMPARE(attention->modelPrompt()->trainButton()->text(), QStringLiteral("Train a demo model now"));
        auto* entropy = static_cast<EntropyView*>(window.view(QStringLiteral("entropy")));
        QVERIFY(!entropy->isShowingModelPrompt());
        entropy->setQk(QkSource::Model);
        QVERIFY(entropy->isShowingModelPrompt());
        QVERIFY(!entropy->hasPicture()); // nothing from another source to export behind the prompt
        entropy->setQk(QkSource::Zero);
        QVERIFY(!entropy->isShowingModelPrompt());
    }

    // "Train a demo model now": the button starts one demo-preset alibi run (core's table, the window's corpus);
    // a finished demo run's model is kept and replaces the prompts in both views.
    void demoModelButton()
    {
        const QString corpus = writeCorpus(m_dir);
        MainWindow window;
        QString error;
        QVERIFY2(window.setCorpus(corpus, &error), qPrintable(error));
        auto* attention = static_cast<AttentionView*>(window.view(QStringLiteral("attention")));
        auto* entropy = static_cast<EntropyView*>(window.view(QStringLiteral("entropy")));
        entropy->setQk(QkSource::Model);
        QTest::mouseClick(attention->modelPrompt()->trainButton(), Qt::LeftButton);
        QVERIFY(window.demoRun()->isRunning());
        const TrainRequest& started = window.demoRun()->request();
        const TrainRequest demo = demoTrainRequest({kDemoModelScheme});
        QCOMPARE(started.preset, QStringLiteral("demo"));
        QCOMPARE(started.schemes, std::vector<std::string>{"alibi"});
        QCOMPARE(started.train.steps, demo.train.steps);
        QCOMPARE(started.model.dModel, demo.model.dModel);
        QCOMPARE(started.corpusPath, QFileInfo(corpus).absoluteFilePath());
        QVERIFY(!attention->modelPrompt()->trainButton()->isEnabled()); // one demo run at a time
        QVERIFY(!entropy->modelPrompt()->trainButton()->isEnabled());
        QVERIFY(!window.trainDemoModel());
        QSignalSpy ended(window.demoRun(), &TrainingRun::finished);
        window.demoRun()->cancel();
        QVERIFY(ended.wait(60000));
        QCOMPARE(ended.first().at(1).toBool(), true);
        QCOMPARE(attention->modelCount(), 0);
        QVERIFY(attention->modelPrompt()->trainButton()->isEnabled());

        // The same path with a run of seconds.
        QVERIFY(window.trainDemoModel(tinyRequest({"alibi"}, corpus)));
        QVERIFY(ended.wait(120000));
        QCOMPARE(ended.last().at(0).toString(), QString());
        QCOMPARE(attention->modelCount(), 1);
        QCOMPARE(entropy->modelCount(), 1);
        QVERIFY(!attention->isShowingModelPrompt());
        QVERIFY(!entropy->isShowingModelPrompt());
        QVERIFY(QFileInfo::exists(QDir(keptModelsFolder()).filePath(QStringLiteral("test-alibi.safetensors"))));
    }

    // The Train tab offers every preset of core's table, the demo first and chosen; a preset sets every field, a hand
    // edit makes the run "custom", and choosing the preset again restores its values.
    void trainPresets_data()
    {
        QTest::addColumn<QString>("name");
        for (const Preset& p : presets())
            QTest::newRow(p.name.c_str()) << QString::fromStdString(p.name);
    }
    void trainPresets()
    {
        QFETCH(QString, name);
        TrainView view;
        auto* box = view.findChild<QComboBox*>(QStringLiteral("preset"));
        QVERIFY(box);
        QCOMPARE(box->count(), int(presets().size()) + 1);
        QCOMPARE(box->itemData(0).toString(), QStringLiteral("demo"));
        QCOMPARE(view.preset(), QStringLiteral("demo"));
        std::vector<std::string> ticked;
        for (const std::string& s : view.request().schemes)
            ticked.push_back(s);
        QCOMPARE(ticked, (std::vector<std::string>{"sinusoidal", "rope", "alibi", "local"}));
        const int index = box->findData(name);
        QVERIFY(index >= 0);
        QCOMPARE(box->itemData(index, Qt::ToolTipRole).toString(),
                 QString::fromStdString(presetByName(name.toStdString()).summary));
        // Away and back, so the choice is a change even for the demo.
        box->setCurrentIndex(
            box->findData(name == QLatin1String("tiny") ? QStringLiteral("quick") : QStringLiteral("tiny")));
        box->setCurrentIndex(index);
        auto sameAsPreset = [&](const TrainRequest& r) {
            const TrainRequest p = presetTrainRequest(name.toStdString(), r.schemes);
            return r.train.steps == p.train.steps && r.train.learningRate == p.train.learningRate &&
                   r.train.batch == p.train.batch && r.model.context == p.model.context &&
                   r.model.layers == p.model.layers && r.model.dModel == p.model.dModel &&
                   r.model.heads == p.model.heads && r.model.dFf == p.model.dFf && r.evalBytes == p.evalBytes;
        };
        QVERIFY(sameAsPreset(view.request()));
        QCOMPARE(view.request().preset, name);
        // A hand edit: "custom" in the box and in the run.
        auto* steps = view.findChild<QSpinBox*>(QStringLiteral("steps"));
        QVERIFY(steps);
        steps->setValue(steps->value() + 7);
        QCOMPARE(box->currentText(), QStringLiteral("custom"));
        QCOMPARE(view.request().preset, QStringLiteral("custom"));
        QCOMPARE(view.request().train.steps, presetByName(name.toStdString()).steps + 7);
        QVERIFY(!sameAsPreset(view.request()));
        box->setCurrentIndex(index);
        QVERIFY(sameAsPreset(view.request()));
        QCOMPARE(view.preset(), name);
        // The learning rate is a field too.
        view.findChild<QDoubleSpinBox*>(QStringLiteral("learning_rate"))->setValue(0.0123);
        QCOMPARE(view.preset(), QStringLiteral("custom"));
        QCOMPARE(view.request().train.learningRate, 0.0123);
    }

    // One list of settings (`render train --set`) is shared among the schemes of a run: each takes those naming a
    // parameter of it or of its method, so rope beside rope+yarn trains without yarn's factor (all went to every
    // scheme, and `render train rope rope+yarn --set factor=2` was refused as rope having no parameter 'factor').
    void schemeModelConfigTakesItsSettings_data()
    {
        QTest::addColumn<QStringList>("schemes");
        QTest::addColumn<QStringList>("settings");
        QTest::addColumn<QList<QStringList>>("taken"); // per scheme
        QTest::newRow("yarn's factor to rope+yarn only")
            << QStringList{"rope", "rope+yarn"} << QStringList{"factor=2"} << QList<QStringList>{{}, {"factor=2"}};
        QTest::newRow("rope's base to both, the window to rerope")
            << QStringList{"rope+rerope", "rope", "alibi"} << QStringList{"base=500", "window=4"}
            << QList<QStringList>{{"base=500", "window=4"}, {"base=500"}, {}};
        QTest::newRow("a scheme's own parameter")
            << QStringList{"local", "t5"} << QStringList{"window=8"} << QList<QStringList>{{"window=8"}, {}};
        QTest::newRow("no settings") << QStringList{"rope", "rope+pi"} << QStringList{} << QList<QStringList>{{}, {}};
    }
    void schemeModelConfigTakesItsSettings()
    {
        QFETCH(QStringList, schemes);
        QFETCH(QStringList, settings);
        QFETCH(QList<QStringList>, taken);
        std::vector<std::string> names;
        for (const QString& s : schemes)
            names.push_back(s.toStdString());
        TrainRequest request = presetTrainRequest(kDemoPreset, names);
        for (const QString& s : settings)
            request.model.schemeSettings.push_back(s.toStdString());
        for (size_t i = 0; i < names.size(); ++i) {
            const ModelConfig config = schemeModelConfig(request, i);
            QStringList got;
            for (const std::string& s : config.schemeSettings)
                got << QString::fromStdString(s);
            QCOMPARE(got, taken.at(static_cast<qsizetype>(i)));
            validateModelConfig(config); // what each scheme takes, it takes whole
        }
    }

    // Empty charts say what to do instead of drawing axes with made-up ranges.
    void emptyCurveHint_data()
    {
        QTest::addColumn<QString>("hint");
        QTest::addColumn<bool>("logX");
        QTest::addColumn<QList<double>>("x"); // one curve
        QTest::addColumn<bool>("reference");
        QTest::addColumn<bool>("shown");
        QTest::newRow("no curve") << "Press Train" << false << QList<double>{} << false << true;
        QTest::newRow("curve without points") << "Press Train" << false << QList<double>{} << false << true;
        QTest::newRow("a reference line only") << "Press Train" << false << QList<double>{1, 2} << true << true;
        QTest::newRow("only x <= 0 on a log axis") << "Press Train" << true << QList<double>{0, -1} << false << true;
        QTest::newRow("data") << "Press Train" << false << QList<double>{1, 2} << false << false;
        QTest::newRow("no hint set: bare axes") << "" << false << QList<double>{} << false << false;
    }
    void longChartTitleBreaks_data()
    {
        QTest::addColumn<QString>("title");
        QTest::addColumn<int>("width");
        QTest::addColumn<QStringList>("lines");
        const QString rotary =
            QStringLiteral("Rotary frequencies: RoPE + YaRN (d = 64, base = 10000, L = 64) · logits × 1.631");
        QTest::newRow("fits") << QStringLiteral("Perplexity") << 600 << QStringList{"Perplexity"};
        QTest::newRow("wide enough for all") << rotary << 4000 << QStringList{rotary};
        QTest::newRow("at the separator")
            << rotary << 0 // 0: just wide enough for the first part, whatever the machine's font
            << QStringList{"Rotary frequencies: RoPE + YaRN (d = 64, base = 10000, L = 64)", "· logits × 1.631"};
        QTest::newRow("no separator: at spaces")
            << QStringLiteral("one two three four five six seven eight") << 120 << QStringList{};
    }
    void longChartTitleBreaks()
    {
        QFETCH(QString, title);
        QFETCH(int, width);
        QFETCH(QStringList, lines);
        QFont font;
        font.setPixelSize(16);
        const QFontMetricsF metrics(font);
        if (width == 0)
            width = int(std::ceil(metrics.horizontalAdvance(lines[0]) + 2 * metrics.averageCharWidth())) + 1;
        const QStringList got = chartTitleLines(title, font, width);
        if (!lines.isEmpty())
            QCOMPARE(got, lines);
        // Every line fits (or is one word), and no word is lost or split.
        for (const QString& line : got)
            QVERIFY2(metrics.horizontalAdvance(line) <= width || !line.contains(QLatin1Char(' ')), qPrintable(line));
        QCOMPARE(got.join(QLatin1Char(' ')).replace(QStringLiteral("· "), QString()).simplified(),
                 QString(title).replace(QStringLiteral("· "), QString()).simplified());
        QCOMPARE(got.size() > 1, metrics.horizontalAdvance(title) > width - 2 * metrics.averageCharWidth());
    }

    void emptyCurveHint()
    {
        QFETCH(QString, hint);
        QFETCH(bool, logX);
        QFETCH(QList<double>, x);
        QFETCH(bool, reference);
        QFETCH(bool, shown);
        CurvePlot plot;
        plot.setEmptyHint(hint);
        CurveFigure figure;
        figure.logX = logX;
        if (QTest::currentDataTag() != QLatin1String("no curve")) {
            Curve c;
            c.x.assign(x.begin(), x.end());
            c.y.assign(x.size(), 1.0);
            c.reference = reference;
            figure.curves.push_back(c);
        }
        plot.setFigure(figure);
        QCOMPARE(plot.isShowingHint(), shown);
        QCOMPARE(hasCurveData(figure), QTest::currentDataTag() == QLatin1String("data"));
        // Pictures (exports) too: the hint in a band around the middle and nothing else, or a chart.
        QImage image(600, 400, QImage::Format_RGB32);
        const PictureStyle style = PictureStyle::forSize(image.size());
        QPainter painter(&image);
        renderCurveFigure(painter, QRectF(0, 0, 600, 400), figure, style, hint);
        painter.end();
        int inBand = 0, outside = 0;
        for (int y = 0; y < image.height(); ++y)
            for (int x = 0; x < image.width(); ++x)
                if ((image.pixel(x, y) & 0xffffff) != (style.background.rgb() & 0xffffff))
                    ++(std::abs(y - 200) < 60 ? inBand : outside);
        QVERIFY(inBand > 0);
        QCOMPARE(outside == 0, shown);
    }

    // Each view supplies its own hint; the Train tab before a run shows two, and the heatmap views one until there
    // is a result.
    void viewHints()
    {
        TrainView train;
        QVERIFY(train.lossPlot()->isShowingHint());
        QVERIFY(train.perplexityPlot()->isShowingHint());
        QVERIFY(train.perplexityPlot()->emptyHint().contains(QStringLiteral("Press Train")));
        QVERIFY(train.lossPlot()->emptyHint() != train.perplexityPlot()->emptyHint());
        // Not an empty table either: the ticked schemes and the lengths a run would score, following the fields.
        // (A header may put the length on a second line when the table is narrow.)
        const std::vector<int> lengths = evaluationLengths(train.request());
        QCOMPARE(train.table()->rowCount(), int(demoSchemes().size()));
        QCOMPARE(train.table()->columnCount(), int(lengths.size()) + 1);
        QCOMPARE(train.table()->horizontalHeaderItem(1)->text().replace(QLatin1Char('\n'), QLatin1Char(' ')),
                 QStringLiteral("ppl @ %1").arg(lengths[0]));
        train.findChild<QSpinBox*>(QStringLiteral("context"))->setValue(lengths[0] / 2);
        QCOMPARE(train.table()->horizontalHeaderItem(1)->text().replace(QLatin1Char('\n'), QLatin1Char(' ')),
                 QStringLiteral("ppl @ %1").arg(lengths[0] / 2));
        BiasView bias;
        QVERIFY(bias.heatmap()->isShowingHint());
        QVERIFY(showAndWait(bias, panelFor("alibi", 16)));
        QVERIFY(!bias.heatmap()->isShowingHint());
        DotView dot;
        QVERIFY(dot.plot()->isShowingHint());
        QVERIFY(showAndWait(dot, panelFor("alibi", 16)));
        QVERIFY(!dot.plot()->isShowingHint());
    }

    // Each scheme's perplexity curve and table row appear as soon as its model is evaluated, while the schemes after
    // it are still training; the table's columns are the evaluation lengths.
    void perplexityPerScheme_data()
    {
        QTest::addColumn<QStringList>("schemes");
        QTest::newRow("alibi, then sinusoidal") << QStringList{"alibi", "sinusoidal"};
        QTest::newRow("local, rope, alibi") << QStringList{"local", "rope", "alibi"};
    }
    void perplexityPerScheme()
    {
        QFETCH(QStringList, schemes);
        std::vector<std::string> names;
        for (const QString& s : schemes)
            names.push_back(s.toStdString());
        TrainView view;
        bool seen = false;
        size_t firstPoints = 0, laterPoints = 0, laterLosses = 0;
        bool hintWhileFirst = true, laterRowEmpty = false;
        QString header1;
        connect(&view, &ViewBase::pictureUpdated, this, [&] {
            if (seen)
                return;
            seen = true;
            const CurveFigure& f = view.perplexityPlot()->figure();
            firstPoints = f.curves.at(0).x.size();
            for (size_t i = 1; i < f.curves.size(); ++i)
                laterPoints += f.curves[i].x.size();
            for (size_t i = 1; i < view.losses().size(); ++i)
                laterLosses += view.losses()[i].x.size();
            hintWhileFirst = view.perplexityPlot()->isShowingHint();
            laterRowEmpty = view.table()->item(1, 1) == nullptr;
            header1 = view.table()->horizontalHeaderItem(1)->text().replace(QLatin1Char('\n'), QLatin1Char(' '));
        });
        QSignalSpy finished(&view, &TrainView::trainingFinished);
        view.start(tinyRequest(names, writeCorpus(m_dir)));
        QVERIFY(finished.wait(300000));
        QCOMPARE(finished.first().first().toString(), QString());
        QVERIFY(seen);
        QCOMPARE(firstPoints, size_t(2)); // the first scheme's curve, lengths 16 and 32
        QCOMPARE(laterPoints, size_t(0)); // the others not yet
        QCOMPARE(laterLosses, size_t(0)); // not even started: the curve came before the next scheme trained
        QVERIFY(!hintWhileFirst);
        QVERIFY(laterRowEmpty);
        // Columns: the lengths the run evaluated at.
        QCOMPARE(header1, QStringLiteral("ppl @ 16"));
        QCOMPARE(view.table()->columnCount(), 3);
        for (int i = 0; i < 2; ++i)
            QCOMPARE(view.table()->horizontalHeaderItem(i + 1)->text().replace(QLatin1Char('\n'), QLatin1Char(' ')),
                     QStringLiteral("ppl @ %1").arg(view.evaluations()[0][i].length));
        for (size_t s = 0; s < names.size(); ++s)
            QCOMPARE(view.perplexityPlot()->figure().curves[s].x.size(), size_t(2));
    }

    // "Evaluate under methods" is there for rope and xpos models only, with a reason otherwise; a rotary model stays
    // chosen when a non-rotary one arrives later; the parameters show core's defaults for the model's context.
    void methodsPanelAvailability_data()
    {
        QTest::addColumn<QStringList>("schemes"); // models offered, in order
        QTest::addColumn<bool>("enabled");
        QTest::addColumn<QString>("reason"); // part of the disabled reason; empty when enabled
        QTest::newRow("no model") << QStringList{} << false << "No model yet";
        QTest::newRow("alibi") << QStringList{"alibi"} << false << "is not a rotary model (its scheme is alibi)";
        QTest::newRow("rope") << QStringList{"rope"} << true << "";
        QTest::newRow("xpos") << QStringList{"xpos"} << true << "";
        QTest::newRow("rope, then alibi") << QStringList{"rope", "alibi"} << true << "";
        QTest::newRow("alibi, then rope") << QStringList{"alibi", "rope"} << true << "";
    }
    void methodsPanelAvailability()
    {
        QFETCH(QStringList, schemes);
        QFETCH(bool, enabled);
        QFETCH(QString, reason);
        TrainView view;
        for (const QString& scheme : schemes)
            view.addModel(modelWithPreset(scheme.toStdString(), QStringLiteral("demo")));
        MethodsPanel* panel = view.methodsPanel();
        QCOMPARE(panel->modelCount(), static_cast<int>(schemes.size()));
        QCOMPARE(panel->evaluateButton()->isEnabled(), enabled);
        QVERIFY2(panel->disabledReason().contains(reason), qPrintable(panel->disabledReason()));
        QCOMPARE(panel->disabledReason().isEmpty(), enabled);
        if (!enabled) {
            QCOMPARE(panel->statusLabel()->text(), panel->disabledReason());
            return;
        }
        // Context 16, lengths up to 16L = 256: factor 16 (dynamic-ntk keeps 1), window 8, the rest the catalogue's.
        std::map<std::string, std::vector<std::string>> settings;
        for (const MethodChoice& c : panel->checkedMethods())
            settings[c.method] = c.settings;
        QCOMPARE(settings.size(), rotaryMethodCatalog().size());
        QCOMPARE(settings["pi"], (std::vector<std::string>{"factor=16"}));
        // original-context 0: the model's own context.
        QCOMPARE(settings["dynamic-ntk"], (std::vector<std::string>{"factor=1", "original-context=0"}));
        QCOMPARE(settings["yarn"], (std::vector<std::string>{"factor=16", "beta-fast=32", "beta-slow=1",
                                                             "attention-factor=0", "original-context=0"}));
        QCOMPARE(settings["rerope"], (std::vector<std::string>{"window=8", "original-context=0"}));
        QCOMPARE(settings["leaky-rerope"], (std::vector<std::string>{"window=8", "leak=16", "original-context=0"}));
        QVERIFY(settings["none"].empty());
    }

    // A run on a tiny rope model: one series per ticked method, labelled by core; `none` is plain evaluateModel of the
    // model; the model's own scaling is back afterwards; the page's export writes the comparison.
    void methodsPanelRun_data()
    {
        QTest::addColumn<QStringList>("methods");
        QTest::addColumn<QStringList>("labels");
        QTest::newRow("four methods") << QStringList{"none", "pi", "yarn", "rerope"}
                                      << QStringList{"rope", "rope+pi (factor 16)", "rope+yarn (factor 16)",
                                                     "rope+rerope (window 8)"};
        QTest::newRow("every method") << QStringList{"none", "pi",     "ntk",    "dynamic-ntk",
                                                     "yarn", "llama3", "rerope", "leaky-rerope"}
                                      << QStringList{"rope",
                                                     "rope+pi (factor 16)",
                                                     "rope+ntk (factor 16)",
                                                     "rope+dynamic-ntk (factor 1)",
                                                     "rope+yarn (factor 16)",
                                                     "rope+llama3 (factor 16)",
                                                     "rope+rerope (window 8)",
                                                     "rope+leaky-rerope (window 8)"};
        QTest::newRow("edited parameter") << QStringList{"pi@factor=2.5"} << QStringList{"rope+pi (factor 2.5)"};
    }
    void methodsPanelRun()
    {
        QFETCH(QStringList, methods);
        QFETCH(QStringList, labels);
        TrainView view;
        const SharedModel model = modelWithPreset("rope", QStringLiteral("demo"));
        view.addModel(model);
        view.showMethodsPage(true);
        MethodsPanel* panel = view.methodsPanel();
        const QString corpus = writeCorpus(m_dir);
        panel->setEvaluation(0, EvalMode::NonOverlapping, corpus);
        QStringList names;
        for (const QString& m : methods) {
            const QStringList parts = m.split(QLatin1Char('@'));
            names << parts[0];
            if (parts.size() > 1) {
                const QStringList setting = parts[1].split(QLatin1Char('='));
                QVERIFY(panel->setParameterText(parts[0], setting[0], setting[1]));
            }
        }
        panel->setCheckedMethods(names);
        QSignalSpy busy(&view, &ViewBase::busyChanged);
        panel->evaluate();
        QVERIFY(view.isBusy());
        QVERIFY(!panel->evaluateButton()->isEnabled());
        QTRY_VERIFY_WITH_TIMEOUT(!view.isBusy(), 300000);
        QVERIFY2(panel->hasPicture(), qPrintable(panel->statusLabel()->text()));
        QVERIFY(panel->evaluateButton()->isEnabled());
        const CurveFigure& f = panel->plot()->figure();
        QCOMPARE(f.curves.size(), static_cast<size_t>(labels.size()));
        for (size_t i = 0; i < f.curves.size(); ++i) {
            QCOMPARE(f.curves[i].name, labels[static_cast<int>(i)]);
            QCOMPARE(f.curves[i].x, (std::vector<double>{16, 32, 64, 128, 256}));
        }
        QVERIFY(f.logX);
        // The model's own scaling is back; `none` equals core's plain evaluation of the model.
        QCOMPARE(model.model->config().scaling, std::string("none"));
        if (names.first() == QLatin1String("none")) {
            EvalOptions options;
            options.lengths = {16, 32, 64, 128, 256};
            const std::vector<EvalPoint> plain =
                evaluateModel(*model.model, loadCorpusFile(corpus.toStdString()).validation, options);
            for (size_t i = 0; i < plain.size(); ++i)
                QCOMPARE(panel->result().curves[0].points[i].perplexity, plain[i].perplexity);
        }
        // Export of the page shown: the comparison's CSV; the picture is the chart.
        QVERIFY(view.hasPicture());
        std::ostringstream csv;
        view.writeData(csv, DataFormat::Csv);
        const QStringList lines = QString::fromStdString(csv.str()).trimmed().split(QLatin1Char('\n'));
        QCOMPARE(lines.size(), 1 + 5 * labels.size());
        QCOMPARE(lines[0], QStringLiteral("method,length,loss,perplexity,bits_per_byte"));
        QVERIFY(lines[1].startsWith(names[0] + QStringLiteral(",16,")));
        QCOMPARE(view.pictureTitle(), QStringLiteral("Evaluate under methods"));
    }

    // A bad parameter typed into the list is core's InputError in the status line (naming the parameter, its value and
    // what is allowed); nothing is drawn and the model keeps its scaling.
    void methodsPanelBadParameter_data()
    {
        QTest::addColumn<QString>("method");
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("message");
        QTest::newRow("factor below 1") << "pi"
                                        << "factor"
                                        << "0.5"
                                        << "factor = 0.5 is out of range; allowed: [1, ";
        QTest::newRow("window at the context") << "rerope"
                                               << "window"
                                               << "16"
                                               << "window = 16 must be below the "
                                                  "training context L = 16";
        QTest::newRow("leak 0") << "leaky-rerope"
                                << "leak"
                                << "0"
                                << "leak = 0 is out of range; allowed: (0, ";
        QTest::newRow("not a number") << "yarn"
                                      << "beta-fast"
                                      << "fast"
                                      << "beta-fast = 'fast' is not a number";
    }
    void methodsPanelBadParameter()
    {
        QFETCH(QString, method);
        QFETCH(QString, name);
        QFETCH(QString, value);
        QFETCH(QString, message);
        TrainView view;
        const SharedModel model = modelWithPreset("rope", QStringLiteral("demo"));
        view.addModel(model);
        MethodsPanel* panel = view.methodsPanel();
        panel->setEvaluation(0, EvalMode::NonOverlapping, writeCorpus(m_dir));
        panel->setCheckedMethods({QStringLiteral("none"), method});
        QVERIFY(panel->setParameterText(method, name, value));
        panel->evaluate();
        QTRY_VERIFY_WITH_TIMEOUT(!view.isBusy(), 300000);
        QVERIFY(!panel->hasPicture());
        QVERIFY2(panel->statusLabel()->text().contains(message), qPrintable(panel->statusLabel()->text()));
        QCOMPARE(model.model->config().scaling, std::string("none"));
        QVERIFY(!panel->setParameterText(method, QStringLiteral("no-such-parameter"), value));
    }

    // Cancel stops the evaluation: no picture, the button comes back, the model keeps its scaling.
    void methodsPanelCancel()
    {
        TrainView view;
        const SharedModel model = modelWithPreset("rope", QStringLiteral("demo"));
        view.addModel(model);
        MethodsPanel* panel = view.methodsPanel();
        panel->setEvaluation(0, EvalMode::Sliding, writeCorpus(m_dir));
        panel->evaluate();
        panel->cancel();
        QTRY_VERIFY_WITH_TIMEOUT(!view.isBusy(), 300000);
        QVERIFY(!panel->hasPicture());
        QVERIFY(panel->evaluateButton()->isEnabled());
        QVERIFY2(panel->statusLabel()->text().startsWith(QStringLiteral("Canceled after ")),
                 qPrintable(panel->statusLabel()->text()));
        QCOMPARE(model.model->config().scaling, std::string("none"));
    }

    // An evaluation length the held-out text cannot fill is refused before training, naming the lengths and the bytes
    // scored (evaluateModel's rule; the Train tab used to score a shorter window under the longer length's name).
    void heldOutTextTooShort_data()
    {
        QTest::addColumn<QString>("scheme");
        QTest::addColumn<int>("evalBytes");
        QTest::addColumn<QString>("error"); // empty: the run trains and evaluates
        QTest::newRow("2L past the scored bytes")
            << "alibi" << 20 << "Evaluation at length 32 needs more held-out text: 20 of the";
        QTest::newRow("L and 2L past them") << "rope" << 10 << "Evaluation at length 16, 32 needs more held-out text";
        QTest::newRow("learned: 2L is unsupported, L fits") << "learned" << 20 << "";
        QTest::newRow("every length fits") << "alibi" << 256 << "";
    }
    void heldOutTextTooShort()
    {
        QFETCH(QString, scheme);
        QFETCH(int, evalBytes);
        QFETCH(QString, error);
        TrainView view;
        TrainRequest request = tinyRequest({scheme.toStdString()}, writeCorpus(m_dir));
        request.evalBytes = static_cast<size_t>(evalBytes);
        QSignalSpy finished(&view, &TrainView::trainingFinished);
        view.start(request);
        QVERIFY(finished.wait(300000));
        const QString got = finished.first().first().toString();
        if (error.isEmpty()) {
            QCOMPARE(got, QString());
            QCOMPARE(view.evaluations().at(0).size(), size_t(2));
        } else {
            QVERIFY2(got.startsWith(error), qPrintable(got));
            QVERIFY(view.losses().at(0).x.empty()); // refused before the first step
        }
    }

    // Seeds > 1: each scheme's mean curve with a ± sd band, the table mean ± sd (core's summarizeSweep over the runs).
    void seedsGiveBands()
    {
        TrainView view;
        TrainRequest request = tinyRequest({"alibi", "rope"}, writeCorpus(m_dir));
        request.seeds = 3;
        QSignalSpy finished(&view, &TrainView::trainingFinished);
        view.start(request);
        QVERIFY(finished.wait(300000));
        QCOMPARE(finished.first().first().toString(), QString());
        QCOMPARE(view.summary().size(), size_t(4)); // 2 schemes x lengths 16, 32
        for (const SweepSummaryRow& r : view.summary()) {
            QCOMPARE(r.perplexity.n, 3);
            QVERIFY(r.perplexity.min < r.perplexity.max); // the seeds gave different models
            QVERIFY(r.perplexity.min <= r.perplexity.mean && r.perplexity.mean <= r.perplexity.max);
        }
        // Seed 1's evaluation (the one-seed view's) is among the three.
        const EvalPoint& first = view.evaluations().at(0).at(0);
        QVERIFY(first.perplexity >= view.summary()[0].perplexity.min &&
                first.perplexity <= view.summary()[0].perplexity.max);
        const CurveFigure& f = view.perplexityPlot()->figure();
        QCOMPARE(f.curves.size(), size_t(2));
        for (const Curve& c : f.curves) {
            QVERIFY(c.hasBand());
            QVERIFY(c.name.endsWith(QStringLiteral("(n = 3)")));
            for (size_t i = 0; i < c.x.size(); ++i)
                QVERIFY(c.lower[i] < c.y[i] && c.y[i] < c.upper[i]);
        }
        QVERIFY2(view.table()->item(0, 1)->text().contains(QStringLiteral(" ± ")),
                 qPrintable(view.table()->item(0, 1)->text()));
        QCOMPARE(view.table()->rowCount(), 2);
    }

    // File → Open sweep results…: a folder `positionlab-cli sweep` wrote, plotted and exported as the seeds are.
    void openSweepResults()
    {
        const QString dir = m_dir.filePath(QStringLiteral("sweep"));
        QProcess cli;
        cli.start(QStringLiteral(POSITIONLAB_CLI), {"sweep",
                                                    "--schemes",
                                                    "alibi,local",
                                                    "--seeds",
                                                    "1,2",
                                                    "--preset",
                                                    "tiny",
                                                    "--steps",
                                                    "4",
                                                    "--layers",
                                                    "1",
                                                    "--d-model",
                                                    "16",
                                                    "--heads",
                                                    "2",
                                                    "--d-ff",
                                                    "32",
                                                    "--context",
                                                    "8",
                                                    "--batch",
                                                    "2",
                                                    "--eval-bytes",
                                                    "256",
                                                    "--lengths",
                                                    "8,16,32",
                                                    "--corpus",
                                                    writeCorpus(m_dir),
                                                    "--quiet",
                                                    "-o",
                                                    dir});
        QVERIFY(cli.waitForFinished(120000));
        QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
        MainWindow window;
        QString error;
        QVERIFY(!window.openSweepResults(m_dir.filePath(QStringLiteral("nothing-here")), &error));
        QVERIFY2(error.contains(QStringLiteral("not a sweep folder")), qPrintable(error));
        QVERIFY2(window.openSweepResults(dir, &error), qPrintable(error));
        auto* train = window.findChild<TrainView*>();
        QVERIFY(train);
        QCOMPARE(train->summary().size(), size_t(6)); // 2 schemes x 3 lengths
        QCOMPARE(train->summary()[0].perplexity.n, 2);
        QCOMPARE(train->perplexityPlot()->figure().curves.size(), size_t(2));
        QVERIFY(train->perplexityPlot()->figure().curves[0].hasBand());
        QCOMPARE(train->table()->columnCount(), 4);
        // The export every view has: the picture, and the data as collect's summary.
        const QString png = m_dir.filePath(QStringLiteral("sweep.png")),
                      csv = m_dir.filePath(QStringLiteral("sweep.csv"));
        QVERIFY2(window.exportCurrent(png, {}, &error), qPrintable(error));
        QVERIFY(QImage(png).width() > 100);
        QVERIFY2(window.exportCurrent(csv, {}, &error), qPrintable(error));
        QFile f(csv);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray text = f.readAll();
        QVERIFY2(text.startsWith("scheme,variant,context,length,n,ppl_mean"), text.constData());
        QCOMPARE(text.count('\n'), 7);
    }

    // Kept models: one file per preset and scheme in the app's data folder, replaced by the next of the same pair.
    void keptModels_data()
    {
        QTest::addColumn<QString>("scheme");
        QTest::addColumn<QString>("preset"); // null: the checkpoint records none
        QTest::addColumn<QString>("file");
        QTest::newRow("demo alibi") << "alibi"
                                    << "demo"
                                    << "demo-alibi.safetensors";
        QTest::newRow("custom rope") << "rope"
                                     << "custom"
                                     << "custom-rope.safetensors";
        QTest::newRow("no preset recorded") << "local" << QString() << "custom-local.safetensors";
        QTest::newRow("a name that would leave the folder") << "alibi"
                                                            << "../up"
                                                            << "___up-alibi.safetensors";
    }
    void keptModels()
    {
        QFETCH(QString, scheme);
        QFETCH(QString, preset);
        QFETCH(QString, file);
        const SharedModel first = modelWithPreset(scheme.toStdString(), preset, 1);
        const QString path = keepModel(first);
        QCOMPARE(path, QDir(keptModelsFolder()).absoluteFilePath(file));
        QVERIFY(loadCheckpoint(path.toStdString()).model->parameters() == first.model->parameters());
        // The next model of the same preset and scheme replaces it.
        const SharedModel second = modelWithPreset(scheme.toStdString(), preset, 2);
        QCOMPARE(keepModel(second), path);
        QCOMPARE(QDir(keptModelsFolder()).entryList({QStringLiteral("*.safetensors")}), QStringList{file});
        QVERIFY(loadCheckpoint(path.toStdString()).model->parameters() == second.model->parameters());
        QVERIFY(first.model->parameters() != second.model->parameters());
    }

    // At start the window offers the kept models, most recent first and current; a broken file is reported.
    void keptModelsAtStart()
    {
        const QString older = keepModel(modelWithPreset("alibi", QStringLiteral("demo")));
        const QString newer = keepModel(modelWithPreset("rope", QStringLiteral("demo")));
        QFile broken(QDir(keptModelsFolder()).filePath(QStringLiteral("broken-alibi.safetensors")));
        QVERIFY(broken.open(QIODevice::WriteOnly));
        broken.write("not a checkpoint");
        broken.close();
        const QDateTime now = QDateTime::currentDateTime();
        for (const auto& [path, age] : {std::pair{older, 120}, std::pair{newer, 60}}) {
            QFile f(path);
            QVERIFY(f.open(QIODevice::ReadWrite));
            QVERIFY(f.setFileTime(now.addSecs(-age), QFileDevice::FileModificationTime));
        }
        QStringList problems;
        const std::vector<SharedModel> kept = loadKeptModels(&problems);
        QCOMPARE(kept.size(), size_t(2));
        QCOMPARE(kept[0].file, newer);
        QCOMPARE(kept[1].file, older);
        QCOMPARE(problems.size(), 1);
        QVERIFY(problems[0].contains(QStringLiteral("broken-alibi.safetensors")));

        MainWindow window;
        auto* attention = static_cast<AttentionView*>(window.view(QStringLiteral("attention")));
        auto* entropy = static_cast<EntropyView*>(window.view(QStringLiteral("entropy")));
        QCOMPARE(attention->modelCount(), 2);
        QCOMPARE(entropy->modelCount(), 2);
        QVERIFY(!attention->isShowingModelPrompt());
        QCOMPARE(attention->saveState()["model"].get<std::string>(), newer.toStdString());
        QVERIFY(window.statusBar()->currentMessage().contains(QStringLiteral("broken-alibi.safetensors")));
    }

    // The attention view's axes: the characters, with visible glyphs for space, newline and tab, hex otherwise.
    void attentionLabels_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QStringList>("labels");
        QTest::newRow("a word and a space") << QByteArray("no one") << QStringList{"n", "o", "␣", "o", "n", "e"};
        QTest::newRow("newline and tab") << QByteArray("a\nb\tc") << QStringList{"a", "↵", "b", "⇥", "c"};
        QTest::newRow("UTF-8 bytes") << QByteArray("é!") << QStringList{"c3", "a9", "!"};
    }
    void attentionLabels()
    {
        QFETCH(QByteArray, text);
        QFETCH(QStringList, labels);
        AttentionResult result;
        result.request.tokens.assign(text.begin(), text.end());
        const HeatmapFigure figure = attentionFigure(result, 0, QStringLiteral("auto"));
        QCOMPARE(QStringList(figure.tickLabels.begin(), figure.tickLabels.end()), labels);
    }

    // Every how many cells the characters are written: all when they fit, else a 1-2-5 step that leaves room.
    void tickLabelSteps_data()
    {
        QTest::addColumn<double>("cell");
        QTest::addColumn<double>("label");
        QTest::addColumn<int>("step");
        QTest::newRow("room for all") << 14.0 << 10.0 << 1;
        QTest::newRow("exactly room") << 10.0 << 10.0 << 1;
        QTest::newRow("half the room") << 5.0 << 10.0 << 2;
        QTest::newRow("a third") << 3.4 << 10.0 << 5;
        QTest::newRow("N = 130 on 600 px") << 600.0 / 130 << 11.0 << 5;
        QTest::newRow("N = 2048 on 600 px") << 600.0 / 2048 << 11.0 << 50;
    }
    void tickLabelSteps()
    {
        QFETCH(double, cell);
        QFETCH(double, label);
        QFETCH(int, step);
        QCOMPARE(tickLabelStep(cell, label), step);
    }

    // Hovering a cell of the attention names both positions and both characters, and the probability.
    void attentionHover_data()
    {
        QTest::addColumn<int>("m");
        QTest::addColumn<int>("n");
        QTest::addColumn<QString>("prefix");
        QTest::newRow("query o, key n") << 4 << 0 << "query 4 'n' → key 0 'n': ";
        QTest::newRow("query space, key o") << 2 << 1 << "query 2 '␣' → key 1 'o': ";
        QTest::newRow("a masked key") << 1 << 3 << "query 1 'o' → key 3 'o': masked";
    }
    void attentionHover()
    {
        QFETCH(int, m);
        QFETCH(int, n);
        QFETCH(QString, prefix);
        AttentionView view;
        view.resize(900, 900);
        view.addModel(
            makeSharedModel(QStringLiteral("untrained"), std::make_unique<Model>(smallModelConfig("alibi", 1)), {}));
        view.setText(QStringLiteral("no one"));
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QVERIFY(showAndWait(view, panelFor("alibi", 16, 0, 2)));
        HeatmapWidget* heatmap = view.heatmap();
        QTRY_VERIFY(heatmap->isVisible());
        const HeatmapPainter::Layout layout = heatmap->heatmap().layout(heatmap->rect(), heatmap->screenStyle());
        const QRectF plot = layout.plots[0];
        const QRectF window = heatmap->window();
        const QPointF p(plot.left() + (n + 0.5 - window.left()) / window.width() * plot.width(),
                        plot.top() + (m + 0.5 - window.top()) / window.height() * plot.height());
        QSignalSpy hover(&view, &ViewBase::hoverText);
        QMouseEvent move(QEvent::MouseMove, p, heatmap->mapToGlobal(p), Qt::NoButton, Qt::NoButton, Qt::NoModifier);
        QCoreApplication::sendEvent(heatmap, &move);
        QCOMPARE(hover.count(), 1);
        const QString text = hover.first().first().toString();
        QVERIFY2(text.startsWith(prefix), qPrintable(text));
        if (!prefix.endsWith(QLatin1String("masked")))
            QCOMPARE(text, prefix + QString::number(view.result().probabilities[0]->at(m, n), 'g', 3));
    }

    // The Show chooser of Attention on text: "contextual positions" only for a model that has them; the heatmap draws
    // the chosen matrix of the same forward (weights, core's bias, cope's positions); the session keeps the choice.
    void attentionShowChooser()
    {
        AttentionView view;
        view.resize(1100, 900);
        view.addModel(makeSharedModel(QStringLiteral("cope (untrained)"),
                                      std::make_unique<Model>(smallModelConfig("cope", 1)), {}));
        view.setText(QStringLiteral("count the words"));
        view.setTextView(TextView::Positions);
        QVERIFY(view.canShowPositions());
        const int heads = view.models()[0].model->config().heads;
        QVERIFY(showAndWait(view, panelFor("cope", 16, 1, heads)));
        QCOMPARE(int(view.result().positions.size()), heads);
        QVERIFY(view.heatmap()->heatmap().figure().panels[0].matrix == view.result().positions[1]);
        QCOMPARE(view.saveState()["show"].get<std::string>(), std::string("positions"));
        view.setTextView(TextView::Bias);
        QVERIFY(view.heatmap()->heatmap().figure().panels[0].matrix == view.result().biases[1]);
        const QString grabs = qEnvironmentVariable("TST_UI_GRAB_DIR"); // a picture to look at, when asked
        if (!grabs.isEmpty())
            view.grab().save(grabs + QStringLiteral("/attention-show-bias.png"));
        // A model without contextual positions: the choice is disabled and the weights are drawn.
        view.addModel(
            makeSharedModel(QStringLiteral("alibi"), std::make_unique<Model>(smallModelConfig("alibi", 1)), {}));
        QVERIFY(!view.canShowPositions());
        view.setTextView(TextView::Positions);
        QVERIFY(showAndWait(view, panelFor("alibi", 16, 0, heads)));
        QVERIFY(view.result().positions.empty());
        QVERIFY(view.heatmap()->heatmap().figure().panels[0].matrix == view.result().probabilities[0]);
    }

    // Save model…: a checkpoint that loads back bit for bit, or a refusal naming the problem and no file.
    void saveModel_data()
    {
        QTest::addColumn<int>("models"); // in the view
        QTest::addColumn<int>("index");
        QTest::addColumn<bool>("busy"); // a computation holds the model's lock
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("refusal"); // empty: saved
        QTest::newRow("saved") << 1 << 0 << false << "model.safetensors"
                               << "";
        QTest::newRow("over an existing file") << 1 << 0 << false << "existing.safetensors"
                                               << "";
        QTest::newRow("no such directory") << 1 << 0 << false << "missing/model.safetensors"
                                           << "No such file or directory";
        QTest::newRow("not a checkpoint name") << 1 << 0 << false << "model.npy"
                                               << "must end in .safetensors";
        QTest::newRow("upper-case suffix, as the CLI") << 1 << 0 << false << "MODEL.SAFETENSORS"
                                                       << "must end in .safetensors";
        QTest::newRow("no such model") << 1 << 1 << false << "other.safetensors"
                                       << "allowed: 1..1";
        QTest::newRow("no model at all") << 0 << 0 << false << "none.safetensors"
                                         << "no model to save";
        QTest::newRow("busy, refused at once") << 1 << 0 << true << "busy.safetensors"
                                               << "busy with a computation";
    }
    void saveModel()
    {
        QFETCH(int, models);
        QFETCH(int, index);
        QFETCH(bool, busy);
        QFETCH(QString, file);
        QFETCH(QString, refusal);
        const ModelConfig config = smallModelConfig("kerple-log", 2); // trainable bias parameters must survive too
        CheckpointInfo info;
        info.step = 7;
        info.trainLoss = 2.5;
        info.corpus = "corpus.txt";
        const SharedModel model =
            makeSharedModel(QStringLiteral("kerple-log (made here)"), std::make_unique<Model>(config), {}, info);
        AttentionView view;
        if (models > 0)
            view.addModel(model);
        std::unique_lock<std::mutex> computing(*model.mutex, std::defer_lock);
        if (busy)
            computing.lock();
        const QString path = m_dir.filePath(file);
        if (file.startsWith(QLatin1String("existing"))) {
            QFile old(path);
            QVERIFY(old.open(QIODevice::WriteOnly));
            old.write("an older file");
        }
        QString error;
        const bool saved = view.saveModel(index, path, &error);
        if (!refusal.isEmpty()) {
            QVERIFY(!saved);
            QVERIFY2(error.contains(refusal), qPrintable(error));
            QVERIFY(!QFileInfo::exists(path));
            return;
        }
        QVERIFY2(saved, qPrintable(error));
        const LoadedCheckpoint loaded = loadCheckpoint(path.toStdString());
        QCOMPARE(loaded.model->config().scheme, config.scheme);
        QCOMPARE(loaded.model->config().layers, config.layers);
        QVERIFY(loaded.model->parameters() == model.model->parameters()); // bit for bit
        QCOMPARE(loaded.info.step, 7);
        QCOMPARE(loaded.info.trainLoss, 2.5);
        QCOMPARE(loaded.info.corpus, std::string("corpus.txt"));
        // And it loads back into the view as another model.
        QVERIFY2(view.loadModel(path, &error), qPrintable(error));
        QCOMPARE(view.modelCount(), 2);
    }

    // Train short / test long on a tiny model, then attention on text with the trained model: probabilities of
    // every query sum to 1 over the keys it may see, and each row's entropy is -sum p log p of what is shown.
    void trainThenAttention()
    {
        const QString corpus = writeCorpus(m_dir);
        MainWindow window;
        QString error;
        QVERIFY2(window.setCorpus(corpus, &error), qPrintable(error));
        auto* train = static_cast<TrainView*>(window.view(QStringLiteral("train")));
        TrainRequest request = train->request();
        QCOMPARE(request.corpusPath, QFileInfo(corpus).absoluteFilePath());
        request.schemes = {"alibi", "sinusoidal"};
        request.model.layers = 1;
        request.model.dModel = 16;
        request.model.heads = 2;
        request.model.dFf = 32;
        request.model.context = 16;
        request.train.steps = 4;
        request.train.batch = 2;
        request.train.warmup = 1;
        request.evalMultipliers = {1, 2};
        request.evalBytes = 256;
        request.reportEvery = 1;
        request.preset = QStringLiteral("custom");
        QSignalSpy finished(train, &TrainView::trainingFinished);
        train->start(request);
        QVERIFY(train->isBusy());
        // The worker returns while its "finished" still waits in the event queue: the run is still in flight, so a
        // second start is refused instead of dropping this run's last snapshots and its trainingFinished.
        QThreadPool::globalInstance()->waitForDone();
        QVERIFY(train->isBusy());
        TrainRequest other = request;
        other.schemes = {"none"};
        train->start(other);
        QVERIFY(finished.wait(300000));
        QTest::qWait(50);
        QCOMPARE(finished.count(), 1);
        QVERIFY(!train->isBusy());
        QCOMPARE(finished.first().first().toString(), QString());
        QCOMPARE(train->losses().size(), size_t(2));
        QCOMPARE(train->losses()[0].x.size(), size_t(4)); // a loss point per step
        for (const auto& points : train->evaluations()) {
            QCOMPARE(points.size(), size_t(2));
            for (const EvalPoint& p : points) {
                QVERIFY(p.supported);
                QVERIFY(std::isfinite(p.perplexity) && p.perplexity > 1 && p.perplexity < 256 * 4);
                QVERIFY(std::abs(p.perplexity - std::exp(p.loss)) < 1e-6 * p.perplexity);
            }
        }
        QCOMPARE(train->table()->rowCount(), 2);
        QVERIFY(train->table()->item(0, 1) && !train->table()->item(0, 1)->text().isEmpty());
        window.showView(QStringLiteral("train"));
        for (const char* ext : {"png", "svg", "csv"})
            QVERIFY2(
                window.exportCurrent(m_dir.filePath(QStringLiteral("train.%1").arg(QLatin1String(ext))), {}, &error),
                qPrintable(error));

        // The trained models reach the attention view, and save with what training did; both are kept.
        auto* attention = static_cast<AttentionView*>(window.view(QStringLiteral("attention")));
        QCOMPARE(attention->modelCount(), 2);
        for (const char* kept : {"custom-alibi.safetensors", "custom-sinusoidal.safetensors"})
            QVERIFY2(QFileInfo::exists(QDir(keptModelsFolder()).filePath(QLatin1String(kept))), kept);
        QCOMPARE(
            loadCheckpoint(QDir(keptModelsFolder()).filePath(QStringLiteral("custom-alibi.safetensors")).toStdString())
                .info.training.value("preset", std::string()),
            std::string("custom"));
        const QString saved = m_dir.filePath(QStringLiteral("trained-alibi.safetensors"));
        QVERIFY2(attention->saveModel(0, saved, &error), qPrintable(error));
        const LoadedCheckpoint trained = loadCheckpoint(saved.toStdString());
        QCOMPARE(trained.model->config().scheme, std::string("alibi"));
        QCOMPARE(trained.info.step, 4);
        QVERIFY(std::isfinite(trained.info.trainLoss) && trained.info.trainLoss > 0);
        QCOMPARE(trained.info.corpus, QFileInfo(corpus).absoluteFilePath().toStdString());
        QCOMPARE(trained.info.training.value("steps", 0), 4);
        attention->setText(QStringLiteral("the cat sat"));
        attention->setRepeatTo(40); // past the training context of 16
        QSignalSpy shown(attention, &ViewBase::pictureUpdated);
        window.showView(QStringLiteral("attention"));
        QVERIFY(shown.count() > 0 || shown.wait(60000));
        QTRY_VERIFY_WITH_TIMEOUT(!attention->isBusy(), 60000);
        const AttentionResult& r = attention->result();
        QCOMPARE(r.length, 40);
        QCOMPARE(r.heads, 2);
        for (int h = 0; h < r.heads; ++h)
            for (int m = 0; m < r.length; ++m) {
                double sum = 0, entropy = 0;
                for (int n = 0; n < r.length; ++n) {
                    const float p = r.probabilities[h]->at(m, n);
                    if (n > m) {
                        QVERIFY(std::isinf(p)); // causal: later keys masked
                        continue;
                    }
                    QVERIFY(p >= 0);
                    sum += p;
                    if (p > 0)
                        entropy -= p * std::log(p);
                }
                QVERIFY(std::abs(sum - 1) < 1e-4);
                QVERIFY(std::abs(entropy - r.rowEntropy[h][m]) < 1e-3);
            }
        // Characters on the axes.
        QCOMPARE(attention->heatmap()->heatmap().figure().tickLabels.size(), size_t(40));
        QCOMPARE(attention->heatmap()->heatmap().figure().tickLabels[3], QStringLiteral("␣"));
        QVERIFY2(window.exportCurrent(m_dir.filePath(QStringLiteral("attention.pdf")), {}, &error), qPrintable(error));
        checkPdf(m_dir.filePath(QStringLiteral("attention.pdf")));

        // And the entropy view can take q and k from a trained model.
        auto* entropy = static_cast<EntropyView*>(window.view(QStringLiteral("entropy")));
        QCOMPARE(entropy->modelCount(), 2);
        entropy->setMaxLength(64);
        entropy->setQk(QkSource::Model);
        QSignalSpy entropyShown(entropy, &ViewBase::pictureUpdated);
        window.showView(QStringLiteral("entropy"));
        QVERIFY(entropyShown.count() > 0 || entropyShown.wait(60000));
        QTRY_VERIFY_WITH_TIMEOUT(!entropy->isBusy(), 60000);
        QCOMPARE(entropy->result().series.size(), size_t(1));
        for (const EntropyPoint& p : entropy->result().series[0].points)
            QVERIFY(p.entropyLast > 0 && p.entropyLast <= std::log(double(p.length)) + 1e-9);
    }

    // positionlab-cli draws the same pictures headless.
    void cliPictures_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QSize>("size"); // a PNG's pixels: --width/--height, else the view's default (headless.cpp)
        QTest::newRow("bias png") << QStringList{"bias", "alibi", "--length", "32", "--width", "500", "--height", "400"}
                                  << "b.png" << 0 << QSize(500, 400);
        QTest::newRow("dot svg") << QStringList{"dot", "--dim", "64"} << "d.svg" << 0 << QSize();
        QTest::newRow("entropy pdf") << QStringList{"entropy", "alibi", "--lengths", "16,32,64"} << "e.pdf" << 0
                                     << QSize();
        QTest::newRow("render compare") << QStringList{"render", "compare", "alibi", "local", "--length", "32"}
                                        << "c.png" << 0 << QSize(420 * 2 + 260, 640);
        QTest::newRow("render compare difference dark")
            << QStringList{"render", "compare", "alibi", "local", "--length", "32", "--difference", "--dark"}
            << "cd.svg" << 0 << QSize();
        QTest::newRow("render dot log") << QStringList{"render", "dot", "--curves", "64:10000,128:500", "--log-x"}
                                        << "r.svg" << 0 << QSize();
        QTest::newRow("render entropy") << QStringList{"render", "entropy", "alibi", "none", "--lengths", "16,64"}
                                        << "re.pdf" << 0 << QSize();
        QTest::newRow("render entropy refused as too long")
            << QStringList{"render", "entropy", "alibi", "rope", "--lengths", "1048576", "--heads", "1024"}
            << "long.png" << 2 << QSize();
        QTest::newRow("render entropy rope head dim 32 second")
            << QStringList{"render", "entropy",    "alibi", "rope",      "--qk",
                           "random", "--head-dim", "32",    "--lengths", "16,64"}
            << "rd.png" << 0 << QSize(1100, 720);
        QTest::newRow("render entropy rope explicit dim refused")
            << QStringList{"render", "entropy", "rope", "--set", "dim=32", "--lengths", "16"} << "rx.png" << 2
            << QSize();
        QTest::newRow("render attention bad layer")
            << QStringList{"render", "attention", "--checkpoint", "missing.safetensors", "--layer", "9"} << "ra.png"
            << 2 << QSize();
        QTest::newRow("render bad view") << QStringList{"render", "histogram"} << "x.png" << 2 << QSize();
        QTest::newRow("render bad extension") << QStringList{"render", "dot"} << "x.bmp" << 2 << QSize();
        QTest::newRow("render bad colormap")
            << QStringList{"render", "bias", "alibi", "--colormap", "jet"} << "x.png" << 2 << QSize();
        QTest::newRow("render compare one") << QStringList{"render", "compare", "alibi"} << "x.png" << 2 << QSize();
        QTest::newRow("render bad param")
            << QStringList{"render", "bias", "kerple-power", "--set", "r2=3"} << "x.png" << 2 << QSize();
    }
    void cliPictures()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, file);
        QFETCH(int, exitCode);
        const QString path = m_dir.filePath(QStringLiteral("cli_") + file);
        QProcess cli;
        cli.start(QStringLiteral(POSITIONLAB_CLI), args << QStringLiteral("-o") << path);
        QVERIFY(cli.waitForFinished(120000));
        const QByteArray err = cli.readAllStandardError();
        QCOMPARE(cli.exitCode(), exitCode);
        if (exitCode != 0) {
            QVERIFY(err.startsWith("positionlab-cli: error: "));
            QCOMPARE(err.count('\n'), 1); // one line
            QVERIFY(!QFile::exists(path));
            return;
        }
        QVERIFY2(err.isEmpty(), err.constData());
        QFETCH(QSize, size);
        if (file.endsWith(QLatin1String(".png")))
            checkPng(path, size);
        else if (file.endsWith(QLatin1String(".svg")))
            checkSvg(path);
        else
            checkPdf(path);
    }

    // The CLI's picture and the GUI's are the same painter on the same numbers: identical pixels, once the GUI numbers
    // heads as the CLI does (from 0; the GUI's own pictures count from 1, as its spin boxes).
    void cliMatchesGui()
    {
        setFigureIndexBase(IndexBase::Zero);
        const auto restore = qScopeGuard([] { setFigureIndexBase(IndexBase::One); });
        const QString path = m_dir.filePath(QStringLiteral("same.png"));
        QProcess cli;
        cli.start(QStringLiteral(POSITIONLAB_CLI),
                  {"bias", "alibi", "--length", "20", "--head", "2", "--width", "700", "--height", "600", "-o", path});
        QVERIFY(cli.waitForFinished(60000));
        QCOMPARE(cli.exitCode(), 0);
        BiasView view;
        QVERIFY(showAndWait(view, panelFor("alibi", 20, 2)));
        ImageOptions options;
        options.size = QSize(700, 600);
        const QImage gui = renderImage(options, view.paintFunction()).convertToFormat(QImage::Format_RGB32);
        const QImage fromCli = QImage(path).convertToFormat(QImage::Format_RGB32);
        QCOMPARE(fromCli.size(), gui.size());
        QCOMPARE(fromCli, gui);
    }

private:
    QTemporaryDir m_dir;
};

PLAB_QTEST_MAIN(TestUi)
#include "tst_ui.moc"
