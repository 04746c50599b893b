// Qt Charts backend of the curve plots: builds a QChart from a CurveFigure, updates series in place, renders.
#include "curve_chart.h"

#include <QChart>
#include <QChartView>
#include <QGraphicsScene>
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

// Colour-blind-safe series colours (Okabe & Ito).
const QColor kSeriesColors[] = {QColor(0, 114, 178), QColor(213, 94, 0),  QColor(0, 158, 115), QColor(204, 121, 167),
                                QColor(230, 159, 0), QColor(86, 180, 233), QColor(120, 94, 240), QColor(140, 86, 75)};

QList<QPointF> points(const Curve &c)
{
    QList<QPointF> out;
    out.reserve(static_cast<qsizetype>(c.x.size()));
    for (size_t i = 0; i < c.x.size() && i < c.y.size(); ++i)
        if (std::isfinite(c.x[i]) && std::isfinite(c.y[i]))
            out.append(QPointF(c.x[i], c.y[i]));
    return out;
}

struct Extent
{
    double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
};

Extent extentOf(const CurveFigure &figure)
{
    Extent e;
    for (const Curve &c : figure.curves)
        for (size_t i = 0; i < c.x.size() && i < c.y.size(); ++i) {
            if (!std::isfinite(c.x[i]) || !std::isfinite(c.y[i]) || (figure.logX && c.x[i] <= 0))
                continue;
            e.x0 = std::min(e.x0, c.x[i]);
            e.x1 = std::max(e.x1, c.x[i]);
            e.y0 = std::min(e.y0, c.y[i]);
            e.y1 = std::max(e.y1, c.y[i]);
        }
    if (!(e.x1 >= e.x0)) {
        e.x0 = figure.logX ? 1 : 0;
        e.x1 = figure.logX ? 10 : 1;
    }
    if (!(e.y1 >= e.y0)) {
        e.y0 = 0;
        e.y1 = 1;
    }
    if (e.x1 == e.x0)
        e.x1 = e.x0 + (figure.logX ? e.x0 : 1);
    if (e.y1 == e.y0) {
        e.y0 -= 0.5;
        e.y1 += 0.5;
    }
    return e;
}

} // namespace

// Owns the chart objects; `view` is null when rendering off screen.
class ChartBackend
{
public:
    QChart *chart = nullptr;
    QChartView *view = nullptr;
    QAbstractAxis *xAxis = nullptr;
    QValueAxis *yAxis = nullptr;
    std::vector<QLineSeries *> series;
    bool logX = false;

    void build(const CurveFigure &figure, const PictureStyle &style, bool dark)
    {
        chart->removeAllSeries();
        for (QAbstractAxis *a : chart->axes())
            chart->removeAxis(a), delete a;
        series.clear();
        chart->setAnimationOptions(QChart::NoAnimation);
        chart->setTheme(dark ? QChart::ChartThemeDark : QChart::ChartThemeLight);
        chart->setBackgroundBrush(style.background);
        chart->setTitleBrush(style.text);
        chart->legend()->setLabelColor(style.text);
        chart->legend()->setAlignment(Qt::AlignBottom);

        logX = figure.logX;
        if (figure.logX) {
            auto *axis = new QLogValueAxis;
            axis->setBase(figure.logBase);
            axis->setLabelFormat(QStringLiteral("%g"));
            axis->setMinorTickCount(figure.logBase == 10 ? 8 : 0);
            xAxis = axis;
        } else {
            auto *axis = new QValueAxis;
            axis->setLabelFormat(QStringLiteral("%g"));
            xAxis = axis;
        }
        yAxis = new QValueAxis;
        yAxis->setLabelFormat(QStringLiteral("%g"));
        chart->addAxis(xAxis, Qt::AlignBottom);
        chart->addAxis(yAxis, Qt::AlignLeft);
        int colour = 0;
        for (const Curve &c : figure.curves) {
            auto *s = new QLineSeries;
            QPen pen;
            pen.setWidthF(std::max(1.5, style.font.pixelSize() / 7.0));
            if (c.reference) {
                pen.setColor(dark ? QColor(170, 170, 170) : QColor(90, 90, 90));
                pen.setStyle(Qt::DashLine);
            } else {
                pen.setColor(kSeriesColors[colour++ % std::size(kSeriesColors)]);
            }
            s->setPen(pen);
            chart->addSeries(s);
            s->attachAxis(xAxis);
            s->attachAxis(yAxis);
            series.push_back(s);
        }
        applyStyle(style);
    }

    void applyStyle(const PictureStyle &style)
    {
        QFont title = style.font;
        title.setPixelSize(static_cast<int>(style.font.pixelSize() * 1.2));
        title.setBold(true);
        chart->setTitleFont(title);
        QFont small = style.font;
        small.setPixelSize(std::max(8, static_cast<int>(style.font.pixelSize() * 0.9)));
        chart->legend()->setFont(small);
        for (QAbstractAxis *a : {xAxis, static_cast<QAbstractAxis *>(yAxis)}) {
            a->setLabelsFont(small);
            a->setTitleFont(style.font);
            a->setLabelsColor(style.text);
            a->setTitleBrush(style.text);
        }
    }

    // Pushes the figure's data and texts into the existing objects.
    void update(const CurveFigure &figure)
    {
        chart->setTitle(figure.title);
        xAxis->setTitleText(figure.xLabel);
        yAxis->setTitleText(figure.yLabel);
        for (size_t i = 0; i < series.size() && i < figure.curves.size(); ++i) {
            series[i]->setName(figure.curves[i].name);
            series[i]->replace(points(figure.curves[i]));
        }
        const Extent e = extentOf(figure);
        if (logX) {
            // From a whole power of the base (so the ticks fall on powers) to the data's end.
            const double b = static_cast<QLogValueAxis *>(xAxis)->base();
            const double lo = std::pow(b, std::floor(std::log(e.x0) / std::log(b) + 1e-9));
            xAxis->setRange(lo, std::max(e.x1, lo * b));
        } else {
            // The data's exact range, ticks on round numbers (applyNiceNumbers would stretch 256 to 300).
            auto *axis = static_cast<QValueAxis *>(xAxis);
            axis->setRange(e.x0, e.x1);
            const std::vector<double> ticks = niceTicks(e.x0, e.x1, 6);
            if (ticks.size() >= 2) {
                axis->setTickType(QValueAxis::TicksDynamic);
                axis->setTickAnchor(ticks.front());
                axis->setTickInterval(ticks[1] - ticks[0]);
            }
        }
        const double pad = 0.04 * (e.y1 - e.y0);
        yAxis->setRange(e.y0 - pad, e.y1 + pad);
        yAxis->applyNiceNumbers();
    }

    bool fits(const CurveFigure &figure) const
    {
        return chart && series.size() == figure.curves.size() && logX == figure.logX &&
               (!logX || static_cast<QLogValueAxis *>(xAxis)->base() == figure.logBase);
    }
};

CurvePlot::CurvePlot(QWidget *parent)
    : QWidget(parent)
    , m_backend(new ChartBackend)
{
    m_backend->chart = new QChart;
    m_backend->view = new QChartView(m_backend->chart, this);
    m_backend->view->setRenderHint(QPainter::Antialiasing);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_backend->view);
    rebuild();
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
    m_backend->build(m_figure, style, m_dark);
    for (QLineSeries *s : m_backend->series) {
        connect(s, &QLineSeries::hovered, this, [this, s](const QPointF &p, bool state) {
            if (state)
                Q_EMIT hovered(QStringLiteral("%1: x = %2, y = %3").arg(s->name()).arg(p.x(), 0, 'g', 5).arg(p.y(), 0, 'g', 5));
        });
    }
    ++m_rebuilds;
}

void CurvePlot::setFigure(const CurveFigure &figure)
{
    m_figure = figure;
    if (!m_backend->fits(figure))
        rebuild();
    m_backend->update(figure);
}

void CurvePlot::setDark(bool dark)
{
    m_dark = dark;
    rebuild();
    m_backend->update(m_figure);
}

void renderCurveFigure(QPainter &painter, const QRectF &target, const CurveFigure &figure, const PictureStyle &style)
{
    QGraphicsScene scene;
    ChartBackend backend;
    backend.chart = new QChart; // owned by the scene
    scene.addItem(backend.chart);
    backend.chart->setMargins(QMargins(4, 4, 4, 4));
    backend.build(figure, style, style.background.lightness() < 128);
    backend.update(figure);
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
