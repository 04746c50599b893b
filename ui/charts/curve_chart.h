// The only corner of ui/ that uses Qt Charts (deprecated from Qt 6.10 in favour of Qt Graphs): a curve plot widget
// and a renderer, both driven by the plain CurveFigure, so swapping the backend touches these two files only.
#pragma once

#include "painting/figures.h"
#include "painting/heatmap_painter.h"

#include <QWidget>

class QLabel;
class QPainter;

namespace plab::ui {

class ChartBackend; // the Qt Charts objects behind a CurvePlot

class CurvePlot : public QWidget {
    Q_OBJECT
public:
    explicit CurvePlot(QWidget* parent = nullptr);
    ~CurvePlot() override;

    // Updates the plot; when the curves keep their number and axes, the series are updated in place
    // (QXYSeries::replace) instead of being rebuilt.
    void setFigure(const CurveFigure& figure);
    const CurveFigure& figure() const { return m_figure; }
    void setDark(bool dark);
    // What the plot says instead of empty axes while its figure has no data (hasCurveData): what to do to get a
    // curve. Each view sets its own; without one an empty figure shows its bare axes.
    void setEmptyHint(const QString& hint);
    QString emptyHint() const;
    bool isShowingHint() const; // the hint stands in for the chart
    // Series objects rebuilt so far (tests check live updates do not rebuild).
    int rebuildCount() const { return m_rebuilds; }

    // Hover: the nearest data point of the nearest series (the one whose drawn line passes closest to the cursor),
    // marked on the chart and reported as "series: x = .., y = ..". `pos` is in CurvePlot coordinates.
    struct Hit {
        int curve = -1; // index into figure().curves; -1: the cursor is off the plot area or there is no data
        int index = -1; // index into that curve's x and y
    };
    Hit hitTest(const QPointF& pos) const;
    QString hoverText(const Hit& hit) const;
    // Where a data point is drawn, in CurvePlot coordinates (tests); null when it is not drawn.
    QPointF pointPosition(int curve, int index) const;

Q_SIGNALS:
    void hovered(const QString& text); // empty when the cursor leaves the plot

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void rebuild();
    void hover(const QPointF& pos);
    void updateHint();          // the hint or the chart, as the figure has data or not
    void fitToWidth(int width); // x ticks, title and legend for a chart `width` pixels wide
    CurveFigure m_figure;
    ChartBackend* m_backend = nullptr;
    QLabel* m_hint = nullptr;
    QLabel* m_title = nullptr;  // the title as wrapping text (Qt Charts elides one of several lines)
    QLabel* m_legend = nullptr; // the legend as wrapping text, when Qt Charts' one row would elide it
    bool m_dark = false;
    int m_rebuilds = 0;
};

// The lines a chart title of `font` is drawn in across `width` pixels: one when it fits, else broken at its " · "
// separators, else at spaces (a word wider than the width stays whole and Qt Charts elides it).
QStringList chartTitleLines(const QString& title, const QFont& font, qreal width);
// An axis title that fits `width` (pixels) as it is, else rich text on two lines broken before its parenthesis.
QString axisTitleText(const QString& title, const QFont& font, qreal width);
// Some curve that is not a reference line has a point to draw.
bool hasCurveData(const CurveFigure& figure);

// Draws `figure` into `target` with the same chart code as the widget (for PNG, SVG, PDF and the CLI); a figure
// without data and a non-empty `emptyHint` draws the hint, centred, instead of axes.
void renderCurveFigure(QPainter& painter, const QRectF& target, const CurveFigure& figure, const PictureStyle& style,
                       const QString& emptyHint = QString());

} // namespace plab::ui
