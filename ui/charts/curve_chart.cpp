// Qt Charts backend of the curve plots: builds a QChart from a CurveFigure, updates series in place, renders.
#include "charts/curve_chart.h"

#include <QAreaSeries>
#include <QChart>
#include <QChartView>
#include <QEvent>
#include <QFontMetrics>
#include <QGraphicsEllipseItem>
#include <QGraphicsScene>
#include <QLabel>
#include <QMouseEvent>
#include <QResizeEvent>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPainter>
#include <QPen>
#include <QValueAxis>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace plab::ui {

namespace {

// Okabe-Ito's colour-blind-safe eight, then four of Paul Tol's (a model under every method draws nine curves).
const QColor kSeriesColors[] = {QColor(0, 114, 178),   QColor(213, 94, 0),    QColor(0, 158, 115),
                                QColor(204, 121, 167), QColor(230, 159, 0),   QColor(86, 180, 233),
                                QColor(120, 94, 240),  QColor(140, 86, 75),   QColor(170, 51, 119),
                                QColor(34, 136, 51),   QColor(102, 102, 102), QColor(68, 119, 170)};

// Many or long legend labels (a model under every method: "rope+leaky-rerope (window 32)") would be cut short in
// one row under the plot: they go in a column beside it instead.
bool legendBeside(const CurveFigure& figure)
{
    int labels = 0;
    qsizetype characters = 0;
    for (const Curve& c : figure.curves)
        if (!c.reference && !c.name.isEmpty()) {
            ++labels;
            characters += c.name.size() + 4;
        }
    return labels > 6 || characters > 90;
}

// A point a figure can draw: finite, and positive on a logarithmic axis.
bool drawable(const CurveFigure& figure, double x, double y)
{
    return std::isfinite(x) && std::isfinite(y) && (!figure.logX || x > 0) && (!figure.logY || y > 0);
}

QList<QPointF> points(const CurveFigure& figure, const Curve& c)
{
    QList<QPointF> out;
    out.reserve(static_cast<qsizetype>(c.x.size()));
    for (size_t i = 0; i < c.x.size() && i < c.y.size(); ++i)
        if (drawable(figure, c.x[i], c.y[i]))
            out.append(QPointF(c.x[i], c.y[i]));
    return out;
}

// The band's edge (lower or upper) as chart points, where the figure can draw them.
QList<QPointF> bandPoints(const CurveFigure& figure, const Curve& c, const std::vector<double>& edge)
{
    QList<QPointF> out;
    for (size_t i = 0; i < c.x.size() && i < edge.size(); ++i)
        if (drawable(figure, c.x[i], edge[i]))
            out.append(QPointF(c.x[i], edge[i]));
    return out;
}

struct Extent {
    double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
};

Extent extentOf(const CurveFigure& figure)
{
    Extent e;
    for (const Curve& c : figure.curves)
        for (size_t i = 0; i < c.x.size() && i < c.y.size(); ++i) {
            if (!drawable(figure, c.x[i], c.y[i]))
                continue;
            e.x0 = std::min(e.x0, c.x[i]);
            e.x1 = std::max(e.x1, c.x[i]);
            e.y0 = std::min(e.y0, c.y[i]);
            e.y1 = std::max(e.y1, c.y[i]);
            if (c.hasBand()) {
                for (double v : {c.lower[i], c.upper[i]})
                    if (std::isfinite(v)) {
                        e.y0 = std::min(e.y0, v);
                        e.y1 = std::max(e.y1, v);
                    }
            }
        }
    if (!(e.x1 >= e.x0)) {
        e.x0 = figure.logX ? 1 : 0;
        e.x1 = figure.logX ? 10 : 1;
    }
    if (!(e.y1 >= e.y0)) {
        e.y0 = figure.logY ? 1 : 0;
        e.y1 = figure.logY ? 10 : 1;
    }
    if (e.x1 == e.x0)
        e.x1 = e.x0 + (figure.logX ? e.x0 : 1);
    if (e.y1 == e.y0 && figure.logY) {
        e.y0 /= 2;
        e.y1 *= 2;
    } else if (e.y1 == e.y0) {
        e.y0 -= 0.5;
        e.y1 += 0.5;
    }
    if (figure.yFloor && figure.yCeil && *figure.yCeil > *figure.yFloor) {
        e.y0 = *figure.yFloor;
        e.y1 = *figure.yCeil;
    }
    return e;
}

// Distance from p to the segment ab (pixels).
double segmentDistance(const QPointF& p, const QPointF& a, const QPointF& b)
{
    const QPointF ab = b - a;
    const double len2 = QPointF::dotProduct(ab, ab);
    const double t = len2 > 0 ? std::clamp(QPointF::dotProduct(p - a, ab) / len2, 0.0, 1.0) : 0.0;
    const QPointF d = p - (a + t * ab);
    return std::hypot(d.x(), d.y());
}

double pointDistance(const QPointF& p, const QPointF& q)
{
    return std::hypot(p.x() - q.x(), p.y() - q.y());
}

} // namespace

// Owns the chart objects; `view` is null when rendering off screen.
class ChartBackend {
public:
    QChart* chart = nullptr;
    QChartView* view = nullptr;
    QAbstractAxis* xAxis = nullptr;
    QAbstractAxis* yAxis = nullptr; // QValueAxis, or QLogValueAxis with logY
    bool logY = false;
    std::vector<QLineSeries*> series;
    std::vector<QAreaSeries*> bands;        // per curve: its band, or null
    QGraphicsEllipseItem* marker = nullptr; // the hovered data point (on screen only)
    bool logX = false;
    int xTicks = 6; // the most x ticks (linear axis) whose labels fit the chart's width side by side

    std::vector<char> sortedX; // per curve: x finite and ascending, so a pixel window is an index range

    // Where the drawable points of curve i land in chart coordinates, with their indices into the curve's x and y.
    // With a `halfWidth`, only the points of the segments that reach within halfWidth pixels of chart x `near` (the
    // whole curve when its x is not sorted): hovering a million-point curve maps a few points, not all of them.
    std::vector<std::pair<int, QPointF>> drawn(const CurveFigure& figure, size_t i, double near = 0,
                                               double halfWidth = -1) const
    {
        std::vector<std::pair<int, QPointF>> out;
        if (i >= series.size() || i >= figure.curves.size())
            return out;
        const Curve& c = figure.curves[i];
        const size_t count = std::min(c.x.size(), c.y.size());
        size_t first = 0, last = count;
        if (halfWidth >= 0 && i < sortedX.size() && sortedX[i] && count > 0) {
            const QPointF anchor = chart->plotArea().center();
            const double x0 = chart->mapToValue(QPointF(near - halfWidth, anchor.y()), series[i]).x();
            const double x1 = chart->mapToValue(QPointF(near + halfWidth, anchor.y()), series[i]).x();
            // One point more on each side: the ends of the segments that cross the window's edges.
            const auto lo = std::lower_bound(c.x.begin(), c.x.begin() + count, std::min(x0, x1));
            const auto hi = std::upper_bound(c.x.begin(), c.x.begin() + count, std::max(x0, x1));
            first = static_cast<size_t>(std::max<std::ptrdiff_t>(0, lo - c.x.begin() - 1));
            last = std::min(count, static_cast<size_t>(hi - c.x.begin()) + 1);
        }
        for (size_t j = first; j < last; ++j) {
            if (!drawable(figure, c.x[j], c.y[j]))
                continue;
            const QPointF p = chart->mapToPosition(QPointF(c.x[j], c.y[j]), series[i]);
            if (std::isfinite(p.x()) && std::isfinite(p.y()))
                out.emplace_back(static_cast<int>(j), p);
        }
        return out;
    }

    void build(const CurveFigure& figure, const PictureStyle& style, bool dark)
    {
        chart->removeAllSeries();
        for (QAbstractAxis* a : chart->axes())
            chart->removeAxis(a), delete a;
        series.clear();
        bands.clear();
        chart->setAnimationOptions(QChart::NoAnimation);
        chart->setTheme(dark ? QChart::ChartThemeDark : QChart::ChartThemeLight);
        chart->setBackgroundBrush(style.background);
        chart->setTitleBrush(style.text);
        chart->legend()->setLabelColor(style.text);
        chart->legend()->setAlignment(legendBeside(figure) ? Qt::AlignRight : Qt::AlignBottom);

        logX = figure.logX;
        if (figure.logX) {
            auto* axis = new QLogValueAxis;
            axis->setBase(figure.logBase);
            axis->setLabelFormat(QStringLiteral("%g"));
            axis->setMinorTickCount(figure.logBase == 10 ? 8 : 0);
            xAxis = axis;
        } else {
            auto* axis = new QValueAxis;
            axis->setLabelFormat(QStringLiteral("%g"));
            xAxis = axis;
        }
        logY = figure.logY;
        if (figure.logY) {
            auto* axis = new QLogValueAxis;
            axis->setBase(10);
            axis->setLabelFormat(QStringLiteral("%g"));
            axis->setMinorTickCount(8);
            yAxis = axis;
        } else {
            auto* axis = new QValueAxis;
            axis->setLabelFormat(QStringLiteral("%g"));
            yAxis = axis;
        }
        chart->addAxis(xAxis, Qt::AlignBottom);
        chart->addAxis(yAxis, Qt::AlignLeft);
        int colour = 0;
        for (const Curve& c : figure.curves) {
            auto* s = new QLineSeries;
            QPen pen;
            pen.setWidthF(std::max(1.5, style.font.pixelSize() / 7.0));
            if (c.reference) {
                pen.setColor(dark ? QColor(170, 170, 170) : QColor(90, 90, 90));
                pen.setStyle(Qt::DashLine);
            } else {
                pen.setColor(kSeriesColors[colour++ % std::size(kSeriesColors)]);
            }
            s->setPen(pen);
            QAreaSeries* band = nullptr;
            if (c.hasBand()) {
                // Drawn first, under its curve, in the curve's colour made translucent; not in the legend.
                band = new QAreaSeries(new QLineSeries, new QLineSeries);
                band->upperSeries()->setParent(band);
                band->lowerSeries()->setParent(band);
                QColor fill = pen.color();
                fill.setAlpha(56);
                band->setBrush(fill);
                band->setPen(Qt::NoPen);
                chart->addSeries(band);
                band->attachAxis(xAxis);
                band->attachAxis(yAxis);
                for (QLegendMarker* m : chart->legend()->markers(band))
                    m->setVisible(false);
            }
            bands.push_back(band);
            chart->addSeries(s);
            s->attachAxis(xAxis);
            s->attachAxis(yAxis);
            series.push_back(s);
        }
        applyStyle(style);
    }

    void applyStyle(const PictureStyle& style)
    {
        QFont title = style.font;
        title.setPixelSize(static_cast<int>(style.font.pixelSize() * 1.2));
        title.setBold(true);
        chart->setTitleFont(title);
        QFont small = style.font;
        small.setPixelSize(std::max(8, static_cast<int>(style.font.pixelSize() * 0.9)));
        chart->legend()->setFont(small);
        for (QAbstractAxis* a : {xAxis, yAxis}) {
            a->setLabelsFont(small);
            a->setTitleFont(style.font);
            a->setLabelsColor(style.text);
            a->setTitleBrush(style.text);
        }
    }

    // Pushes the figure's data and texts into the existing objects.
    void update(const CurveFigure& figure)
    {
        chart->setTitle(figure.title);
        xAxis->setTitleText(figure.xLabel);
        yAxis->setTitleText(figure.yLabel);
        sortedX.clear();
        for (size_t i = 0; i < series.size() && i < figure.curves.size(); ++i) {
            const Curve& c = figure.curves[i];
            series[i]->setName(c.name);
            series[i]->replace(points(figure, c));
            if (i < bands.size() && bands[i]) {
                bands[i]->upperSeries()->replace(bandPoints(figure, c, c.upper));
                bands[i]->lowerSeries()->replace(bandPoints(figure, c, c.lower));
            }
            const auto end = c.x.begin() + static_cast<std::ptrdiff_t>(std::min(c.x.size(), c.y.size()));
            sortedX.push_back(std::all_of(c.x.begin(), end, [](double v) { return std::isfinite(v); }) &&
                              std::is_sorted(c.x.begin(), end));
        }
        const Extent e = extentOf(figure);
        if (logX) {
            // From a whole power of the base (so the ticks fall on powers) to the data's end.
            const double b = static_cast<QLogValueAxis*>(xAxis)->base();
            const double lo = std::pow(b, std::floor(std::log(e.x0) / std::log(b) + 1e-9));
            xAxis->setRange(lo, std::max(e.x1, lo * b));
        } else {
            // The data's exact range, ticks on round numbers (applyNiceNumbers would stretch 256 to 300).
            auto* axis = static_cast<QValueAxis*>(xAxis);
            axis->setRange(e.x0, e.x1);
            const std::vector<double> ticks = niceTicks(e.x0, e.x1, xTicks);
            if (ticks.size() >= 2) {
                axis->setTickType(QValueAxis::TicksDynamic);
                axis->setTickAnchor(ticks.front());
                axis->setTickInterval(ticks[1] - ticks[0]);
            }
        }
        if (logY) {
            // Whole decades around the data.
            const double lo = std::pow(10.0, std::floor(std::log10(e.y0) + 1e-9));
            const double hi = std::pow(10.0, std::ceil(std::log10(e.y1) - 1e-9));
            yAxis->setRange(lo, std::max(hi, lo * 10));
            return;
        }
        auto* valueAxis = static_cast<QValueAxis*>(yAxis);
        const double pad = figure.yFloor && figure.yCeil ? 0.0 : 0.04 * (e.y1 - e.y0);
        valueAxis->setRange(e.y0 - pad, e.y1 + pad);
        if (figure.yFloor && figure.yCeil) {
            valueAxis->setTickCount(6); // 0, 0.2, ..., 1: nice numbers would stretch 0..1 to -0.5..1.5
        } else {
            valueAxis->applyNiceNumbers();
            // A lone bound cuts the nice range (entropy's 0, which padding had pushed to -1), keeping the nice step:
            // the bound is a round number, so the ticks stay on round numbers.
            const double niceStep = (valueAxis->max() - valueAxis->min()) / std::max(1, valueAxis->tickCount() - 1);
            double lo = valueAxis->min(), hi = valueAxis->max();
            if (figure.yFloor && lo < *figure.yFloor)
                lo = *figure.yFloor;
            if (figure.yCeil && hi > *figure.yCeil)
                hi = *figure.yCeil;
            if (hi > lo && (lo != valueAxis->min() || hi != valueAxis->max())) {
                valueAxis->setRange(lo, hi);
                valueAxis->setTickCount(std::max(2, static_cast<int>(std::lround((hi - lo) / niceStep)) + 1));
            }
        }
        // With one-character ticks (0, 2, 4, 6) Qt Charts leaves too little room beside them for an axis title in a
        // CJK font (its taller line) and elides the title to "⋮": such ticks get one decimal (2.0).
        int widest = 0;
        const double step = (valueAxis->max() - valueAxis->min()) / std::max(1, valueAxis->tickCount() - 1);
        for (int i = 0; i < valueAxis->tickCount(); ++i)
            widest = std::max(widest, static_cast<int>(QString::asprintf("%g", valueAxis->min() + i * step).size()));
        valueAxis->setLabelFormat(widest < 2 ? QStringLiteral("%.1f") : QStringLiteral("%g"));
    }

    // Qt Charts elides a title wider than the chart ("... logits × 1..."): a long title is set as centred rich-text
    // lines instead.
    void fitTitle(const QString& title, qreal width)
    {
        const QMarginsF margins = chart->margins();
        QStringList lines = chartTitleLines(title, chart->titleFont(), width - margins.left() - margins.right());
        if (lines.size() <= 1) {
            chart->setTitle(title);
            return;
        }
        for (QString& l : lines)
            l = l.toHtmlEscaped();
        chart->setTitle(QStringLiteral("<center>") + lines.join(QStringLiteral("<br>")) + QStringLiteral("</center>"));
    }

    // The legend entries: every named line (bands are not in the legend).
    std::vector<std::pair<QColor, QString>> legendEntries(const CurveFigure& figure) const
    {
        std::vector<std::pair<QColor, QString>> out;
        for (size_t i = 0; i < series.size() && i < figure.curves.size(); ++i)
            if (!figure.curves[i].name.isEmpty())
                out.emplace_back(series[i]->pen().color(), figure.curves[i].name);
        return out;
    }

    // Whether Qt Charts' legend fits in one row under a chart `width` pixels wide without eliding a label: each
    // entry is its text, its marker and the spacing around them.
    bool legendFitsOneRow(const CurveFigure& figure, qreal width) const
    {
        const QFontMetricsF metrics(chart->legend()->font());
        qreal needed = 0;
        for (const auto& entry : legendEntries(figure))
            needed += metrics.horizontalAdvance(entry.second) + 2.5 * metrics.height();
        const QMarginsF margins = chart->margins();
        return needed * 1.1 <= width - margins.left() - margins.right();
    }

    // The most x ticks whose labels fit side by side under a plot in a chart `width` pixels wide (Qt Charts elides
    // labels that do not fit to "…"); the y axis and its title take about five label heights.
    int xTicksFor(const CurveFigure& figure, qreal width) const
    {
        if (logX)
            return xTicks;
        const Extent e = extentOf(figure);
        const QFontMetricsF metrics(xAxis->labelsFont());
        qreal label = 0;
        for (double v : niceTicks(e.x0, e.x1, 6))
            label = std::max(label, metrics.horizontalAdvance(QString::asprintf("%g", v)));
        const qreal plot = width - 5 * metrics.height() - chart->margins().left() - chart->margins().right();
        return std::clamp(static_cast<int>(plot / (label + 2 * metrics.averageCharWidth())), 2, 6);
    }

    // A log x axis has one label per power of its base, however narrow the chart: when they do not fit side by side
    // (Qt Charts would elide "128" to "1…"), they stand upright instead, each whole.
    void fitLogLabels(qreal width)
    {
        auto* axis = static_cast<QLogValueAxis*>(xAxis);
        const QFontMetricsF metrics(axis->labelsFont());
        const double base = axis->base();
        if (axis->min() <= 0 || axis->max() <= axis->min() || base <= 1)
            return;
        qreal needed = 0;
        for (double k = std::ceil(std::log(axis->min()) / std::log(base) - 1e-9);
             k <= std::floor(std::log(axis->max()) / std::log(base) + 1e-9); ++k)
            needed +=
                metrics.horizontalAdvance(QString::asprintf("%g", std::pow(base, k))) + 2 * metrics.averageCharWidth();
        const qreal plot = width - 8 * metrics.height() - chart->margins().left() - chart->margins().right();
        axis->setLabelsAngle(needed > plot ? -90 : 0);
    }

    // Fits the texts to a chart `width` x `height` pixels: x ticks that fit, the title on as many lines as it needs,
    // axis titles on two lines when one is too long for its side (height 0: the y title as it is). Returns whether
    // the one-row legend under the chart fits too.
    bool fitToWidth(const CurveFigure& figure, qreal width, qreal height = 0)
    {
        if (xAxis) {
            const int ticks = xTicksFor(figure, width);
            if (ticks != xTicks) {
                xTicks = ticks;
                update(figure);
            }
        }
        fitTitle(figure.title, width);
        if (logX)
            fitLogLabels(width);
        if (xAxis) {
            // Qt Charts elides an axis title wider than the plot ("evaluation length (by…"): it goes on two lines.
            const QFontMetricsF metrics(xAxis->labelsFont());
            // The y axis's labels and title take about eight label heights (five were too few for "29.5" beside a
            // two-word title); the laid-out plotArea() is not used, as it may be from an earlier size.
            const qreal plot = width - 8 * metrics.height() - chart->margins().left() - chart->margins().right();
            xAxis->setTitleText(axisTitleText(figure.xLabel, xAxis->titleFont(), plot));
            // The y title likewise along the plot's height ("loss (nats per…" in the Train tab's small charts at
            // 1366 x 768): below the plot are the x labels, the x title (two lines at most) and a legend row.
            if (yAxis && height > 0)
                yAxis->setTitleText(
                    axisTitleText(figure.yLabel, yAxis->titleFont(),
                                  height - 6 * metrics.height() - chart->margins().top() - chart->margins().bottom()));
        }
        return legendFitsOneRow(figure, width);
    }

    bool fits(const CurveFigure& figure) const
    {
        for (size_t i = 0; i < bands.size() && i < figure.curves.size(); ++i)
            if ((bands[i] != nullptr) != figure.curves[i].hasBand())
                return false;
        return chart && series.size() == figure.curves.size() && logX == figure.logX && logY == figure.logY &&
               (!logX || static_cast<QLogValueAxis*>(xAxis)->base() == figure.logBase);
    }
};

// An axis title that fits `width` as it is, else as rich text on two lines, broken before its parenthesis (the unit:
// "evaluation length<br>(bytes)", "评估长度<br>（按字节）") or at the chart title's own breaks.
QString axisTitleText(const QString& title, const QFont& font, qreal width)
{
    const QFontMetricsF metrics(font);
    if (width <= 0 || metrics.horizontalAdvance(title) <= width)
        return title;
    auto fits = [&](const QString& line) { return metrics.horizontalAdvance(line) <= width; };
    QStringList lines;
    const qsizetype paren = std::max(title.lastIndexOf(QStringLiteral(" (")), title.lastIndexOf(QChar(0xFF08)));
    if (paren > 0)
        lines = {title.left(paren).trimmed(), title.mid(paren).trimmed()};
    if (lines.isEmpty() || !std::all_of(lines.begin(), lines.end(), fits))
        lines = chartTitleLines(title, font, width); // at spaces, filling each line
    if (lines.size() <= 1)
        return title;
    for (QString& line : lines)
        line = line.toHtmlEscaped();
    return lines.join(QStringLiteral("<br>"));
}

QStringList chartTitleLines(const QString& title, const QFont& font, qreal width)
{
    const QFontMetricsF metrics(font);
    const qreal room = width - 2 * metrics.averageCharWidth();
    auto fitsRoom = [&](const QString& line) { return metrics.horizontalAdvance(line) <= room; };
    if (room <= 0 || fitsRoom(title))
        return {title};
    // At the title's own " · " separators when each part fits, else at spaces, filling each line.
    QStringList lines = title.split(QStringLiteral(" · "));
    for (int i = 1; i < lines.size(); ++i)
        lines[i].prepend(QStringLiteral("· "));
    if (std::all_of(lines.begin(), lines.end(), fitsRoom))
        return lines;
    lines.clear();
    QString line;
    for (const QString& word : title.split(QLatin1Char(' '))) {
        const QString longer = line.isEmpty() ? word : line + QLatin1Char(' ') + word;
        if (!line.isEmpty() && !fitsRoom(longer)) {
            lines << line;
            line = word;
        } else {
            line = longer;
        }
    }
    lines << line;
    return lines;
}

bool hasCurveData(const CurveFigure& figure)
{
    for (const Curve& c : figure.curves)
        if (!c.reference)
            for (size_t i = 0; i < c.x.size() && i < c.y.size(); ++i)
                if (drawable(figure, c.x[i], c.y[i]))
                    return true;
    return false;
}

CurvePlot::CurvePlot(QWidget* parent) : QWidget(parent), m_backend(new ChartBackend)
{
    m_backend->view = new QChartView(this);
    m_backend->chart = m_backend->view->chart(); // the view's default chart, which rebuild() replaces and deletes
    m_backend->view->setRenderHint(QPainter::Antialiasing);
    m_backend->view->viewport()->setMouseTracking(true);
    m_backend->view->viewport()->installEventFilter(this);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    // The title as a wrapping label above the chart: Qt Charts elides a title of several lines in a narrow chart.
    m_title = new QLabel(this);
    m_title->setObjectName(QStringLiteral("title"));
    m_title->setWordWrap(true);
    m_title->setAlignment(Qt::AlignCenter);
    m_title->setTextFormat(Qt::PlainText);
    m_title->setAutoFillBackground(true);
    m_title->setBackgroundRole(QPalette::Base);
    m_title->setContentsMargins(6, 6, 6, 0);
    // Its width comes from the plot (long words are elided to it), never the other way round.
    m_title->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_title->hide();
    layout->addWidget(m_title);
    layout->addWidget(m_backend->view);
    m_hint = new QLabel(this);
    m_hint->setObjectName(QStringLiteral("emptyHint"));
    m_hint->setAlignment(Qt::AlignCenter);
    m_hint->setWordWrap(true);
    m_hint->setMargin(24);
    m_hint->setAutoFillBackground(true);
    m_hint->setBackgroundRole(QPalette::Base);
    m_hint->setForegroundRole(QPalette::PlaceholderText);
    m_hint->hide();
    layout->addWidget(m_hint);
    m_legend = new QLabel(this);
    m_legend->setObjectName(QStringLiteral("legend"));
    m_legend->setWordWrap(true);
    m_legend->setAlignment(Qt::AlignCenter);
    m_legend->setTextFormat(Qt::RichText);
    m_legend->setAutoFillBackground(true);
    m_legend->setBackgroundRole(QPalette::Base);
    m_legend->setContentsMargins(6, 0, 6, 4);
    m_legend->hide();
    layout->addWidget(m_legend);
    rebuild();
}

void CurvePlot::setEmptyHint(const QString& hint)
{
    m_hint->setText(hint);
    updateHint();
}

QString CurvePlot::emptyHint() const
{
    return m_hint->text();
}

bool CurvePlot::isShowingHint() const
{
    return !m_hint->isHidden();
}

void CurvePlot::updateHint()
{
    const bool hint = !m_hint->text().isEmpty() && !hasCurveData(m_figure);
    m_hint->setVisible(hint);
    m_backend->view->setVisible(!hint);
    m_legend->setVisible(!hint && !m_legend->text().isEmpty());
    m_title->setVisible(!hint && !m_figure.title.isEmpty());
    if (hint)
        m_backend->marker->hide();
}

CurvePlot::~CurvePlot()
{
    delete m_backend; // the chart belongs to the view, which is a child widget
}

void CurvePlot::rebuild()
{
    PictureStyle style = PictureStyle::forSize(QSizeF(700, 500), m_dark);
    style.font.setPixelSize(std::max(11, font().pixelSize() > 0 ? font().pixelSize() : QFontInfo(font()).pixelSize()));
    style.background = palette().color(QPalette::Base);
    style.text = palette().color(QPalette::Text);
    // A fresh chart each time: Qt Charts 6.4 leaves the removed axes' label items behind in a reused chart (a stray
    // "… …" at the plot's top-left corner), so the old chart goes with its axes.
    QChart* old = m_backend->chart;
    m_backend->chart = new QChart;
    m_backend->marker = new QGraphicsEllipseItem(m_backend->chart); // owned by the chart
    m_backend->marker->setZValue(1000);
    m_backend->view->setChart(m_backend->chart);
    delete old;
    m_backend->build(m_figure, style, m_dark);
    m_backend->marker->hide();
    m_backend->marker->setBrush(style.background);
    ++m_rebuilds;
}

CurvePlot::Hit CurvePlot::hitTest(const QPointF& pos) const
{
    Hit hit;
    const QChartView* view = m_backend->view;
    // CurvePlot -> viewport -> scene -> chart coordinates.
    const QPointF inViewport = view->viewport()->mapFrom(this, pos);
    const QPointF inChart = m_backend->chart->mapFromScene(view->viewportTransform().inverted().map(inViewport));
    // A little slack around the plot area, so points on its edge stay reachable.
    if (!m_backend->chart->plotArea().adjusted(-8, -8, 8, 8).contains(inChart))
        return hit;
    // The nearest series is the one whose drawn line passes closest; then its nearest data point.
    auto lineDistance = [&](const std::vector<std::pair<int, QPointF>>& points) {
        double d = INFINITY;
        for (size_t j = 0; j < points.size(); ++j)
            d = std::min(d, j == 0 ? pointDistance(inChart, points[j].second)
                                   : segmentDistance(inChart, points[j - 1].second, points[j].second));
        return d;
    };
    // Everything outside a window of half-width w lies more than w away, so a line distance up to w found inside the
    // window is exact, and a line found farther inside it cannot beat it. A narrow window first (dense curves have
    // thousands of points per pixel column); only when no line passes within it, one as wide as the nearest line
    // found (at most 400 pixels: lines farther than that are ranked by what the window shows).
    double best = INFINITY;
    std::vector<std::pair<int, QPointF>> bestPoints;
    auto rank = [&](double halfWidth) {
        for (size_t i = 0; i < m_backend->series.size(); ++i) {
            std::vector<std::pair<int, QPointF>> points = m_backend->drawn(m_figure, i, inChart.x(), halfWidth);
            if (const double d = lineDistance(points); d < best) {
                best = d;
                hit.curve = static_cast<int>(i);
                bestPoints = std::move(points);
            }
        }
    };
    const double narrow = 8;
    rank(narrow);
    if (best > narrow && std::isfinite(best)) {
        const double wide = std::min(best, 400.0);
        best = INFINITY;
        rank(wide);
    }
    // Its nearest data point, by the same window argument: one as wide as the nearest point the line's window holds.
    auto nearestPoint = [&](const std::vector<std::pair<int, QPointF>>& points) {
        double nearest = INFINITY;
        for (const auto& [index, p] : points)
            if (const double d = pointDistance(inChart, p); d < nearest) {
                nearest = d;
                hit.index = index;
            }
        return nearest;
    };
    if (hit.curve >= 0) {
        const double nearest = nearestPoint(bestPoints);
        if (nearest > best)
            nearestPoint(m_backend->drawn(m_figure, hit.curve, inChart.x(), std::min(nearest, 400.0)));
    }
    if (hit.index < 0)
        hit.curve = -1;
    return hit;
}

QString CurvePlot::hoverText(const Hit& hit) const
{
    if (hit.curve < 0 || hit.index < 0)
        return {};
    const Curve& c = m_figure.curves[hit.curve];
    return FigureText::tr("%1: x = %2, y = %3")
        .arg(c.name)
        .arg(c.x[hit.index], 0, 'g', 6)
        .arg(c.y[hit.index], 0, 'g', 6);
}

QPointF CurvePlot::pointPosition(int curve, int index) const
{
    if (curve < 0)
        return {};
    for (const auto& [j, p] : m_backend->drawn(m_figure, static_cast<size_t>(curve)))
        if (j == index) {
            const QChartView* view = m_backend->view;
            const QPointF inViewport = view->viewportTransform().map(m_backend->chart->mapToScene(p));
            return view->viewport()->mapTo(this, inViewport);
        }
    return {};
}

void CurvePlot::hover(const QPointF& pos)
{
    const Hit hit = hitTest(pos);
    QGraphicsEllipseItem* marker = m_backend->marker;
    if (hit.curve < 0) {
        marker->hide();
        Q_EMIT hovered(QString());
        return;
    }
    const Curve& c = m_figure.curves[hit.curve];
    const QPointF p =
        m_backend->chart->mapToPosition(QPointF(c.x[hit.index], c.y[hit.index]), m_backend->series[hit.curve]);
    const double r = 4.5;
    marker->setRect(QRectF(p.x() - r, p.y() - r, 2 * r, 2 * r));
    QPen pen = m_backend->series[hit.curve]->pen();
    pen.setStyle(Qt::SolidLine);
    pen.setWidthF(2);
    marker->setPen(pen);
    marker->show();
    Q_EMIT hovered(hoverText(hit));
}

bool CurvePlot::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_backend->view->viewport()) {
        if (event->type() == QEvent::MouseMove) {
            const auto* move = static_cast<QMouseEvent*>(event);
            hover(m_backend->view->viewport()->mapTo(this, move->position()));
        } else if (event->type() == QEvent::Leave) {
            m_backend->marker->hide();
            Q_EMIT hovered(QString());
        } else if (event->type() == QEvent::Resize) {
            fitToWidth(static_cast<QResizeEvent*>(event)->size().width());
        }
    }
    return QWidget::eventFilter(watched, event);
}

void CurvePlot::setFigure(const CurveFigure& figure)
{
    m_figure = figure;
    m_backend->marker->hide(); // its point may be gone
    if (!m_backend->fits(figure))
        rebuild();
    m_backend->update(figure);
    fitToWidth(m_backend->view->viewport()->width());
    updateHint();
}

void CurvePlot::fitToWidth(int width)
{
    // Qt Charts' one-row legend elides its labels when they do not fit ("s… r… a…"): then the legend is a wrapping
    // line of text under the chart instead, each entry whole.
    const bool oneRow =
        m_backend->fitToWidth(m_figure, width, m_backend->view->viewport()->height()) && !legendBeside(m_figure);
    m_backend->chart->legend()->setVisible(oneRow);
    QStringList entries;
    const QFontMetrics metrics(m_legend->font());
    if (!oneRow)
        for (const auto& [colour, name] : m_backend->legendEntries(m_figure)) {
            // Each entry whole on its line, unless it is wider than the chart (a run's label with its model options):
            // then it breaks at its spaces, since an unbreakable entry would widen the chart, and the window with it.
            QString text = name.toHtmlEscaped();
            if (metrics.horizontalAdvance(name) + 3 * metrics.height() < width)
                text.replace(QLatin1Char(' '), QStringLiteral("&nbsp;"));
            entries << QStringLiteral("<span style=\"color:%1\">&#9632;</span>&nbsp;%2").arg(colour.name(), text);
        }
    m_legend->setText(entries.join(QStringLiteral("&nbsp;&nbsp; ")));
    m_backend->chart->setTitle(QString());
    m_title->setFont(m_backend->chart->titleFont());
    m_title->setText(elideLongWords(m_figure.title, m_title->font(), width - 12));
    m_title->setVisible(!m_figure.title.isEmpty() && !m_backend->view->isHidden());
    m_legend->setVisible(!entries.isEmpty() && !m_backend->view->isHidden());
}

void CurvePlot::setDark(bool dark)
{
    m_dark = dark;
    rebuild();
    m_backend->update(m_figure);
    fitToWidth(m_backend->view->viewport()->width());
}

void renderCurveFigure(QPainter& painter, const QRectF& target, const CurveFigure& figure, const PictureStyle& style,
                       const QString& emptyHint)
{
    if (!emptyHint.isEmpty() && !hasCurveData(figure)) {
        painter.save();
        painter.fillRect(target, style.background);
        painter.setRenderHint(QPainter::TextAntialiasing, true);
        painter.setFont(style.font);
        painter.setPen(style.dark ? QColor(170, 170, 170) : QColor(110, 110, 110));
        const double m = style.font.pixelSize() * 2.0;
        painter.drawText(target.adjusted(m, m, -m, -m), Qt::AlignCenter | Qt::TextWordWrap, emptyHint);
        painter.restore();
        return;
    }
    QGraphicsScene scene;
    ChartBackend backend;
    backend.chart = new QChart; // owned by the scene
    scene.addItem(backend.chart);
    backend.chart->setMargins(QMargins(4, 4, 4, 4));
    backend.build(figure, style, style.dark);
    backend.update(figure);
    // Before the geometry, which lays the title out; a legend that does not fit in one row under the chart goes
    // beside it, one entry a line.
    if (!backend.fitToWidth(figure, target.width(), target.height()))
        backend.chart->legend()->setAlignment(Qt::AlignRight);
    backend.chart->setGeometry(QRectF(QPointF(0, 0), target.size()));
    scene.setSceneRect(QRectF(QPointF(0, 0), target.size()));
    painter.save();
    painter.fillRect(target, style.background);
    painter.setRenderHint(QPainter::Antialiasing, true);
    painter.setRenderHint(QPainter::TextAntialiasing, true);
    scene.render(&painter, target, scene.sceneRect());
    painter.restore();
}

} // namespace plab::ui
