// Paints heatmap figures (title, panels, axes with ticks, colour bars, masked swatch) with one QPainter code path
// used by the on-screen widget and every export format.
#pragma once

#include "colormap.h"
#include "figures.h"

#include <QColor>
#include <QFont>
#include <QImage>
#include <QRectF>

#include <vector>

class QPainter;

namespace plab::ui {

// Fonts and colours of a picture; the font grows with the picture so exports stay legible at any size.
struct PictureStyle
{
    QFont font;
    QColor text = Qt::black;
    QColor background = Qt::white;
    QColor axis = QColor(60, 60, 60);
    bool vectorOutput = false; // SVG/PDF: small matrices as rectangles, large ones as a bounded image

    static PictureStyle forSize(const QSizeF &size, bool dark = false);
};

// Nice tick values covering [lo, hi] (about `count` of them, steps of 1, 2 or 5 x 10^k).
std::vector<double> niceTicks(double lo, double hi, int count);

class HeatmapPainter
{
public:
    struct Layout
    {
        QRectF title;
        std::vector<QRectF> headers; // panel title + subtitle
        std::vector<QRectF> plots;   // the cells
        std::vector<QRectF> bars;    // colour bars (one when the scale is shared)
    };

    // Computes each panel's colour scale and colours its cells once; paint() then only draws.
    void setFigure(HeatmapFigure figure);
    const HeatmapFigure &figure() const { return m_figure; }
    bool isEmpty() const { return m_figure.panels.empty(); }
    int panelCount() const { return static_cast<int>(m_figure.panels.size()); }
    const ColorScale &scale(int panel) const { return m_scales[panel]; }
    const QImage &image(int panel) const { return m_images[panel]; }
    // Rows/columns of the panels (all panels share their size).
    int matrixSize() const;

    Layout layout(const QRectF &target, const PictureStyle &style) const;
    // `window` is the visible part of the matrix in cell units (x = key n, y = query m); empty means all of it.
    void paint(QPainter &painter, const QRectF &target, const PictureStyle &style, const QRectF &window = {}) const;
    // The panel and cell under `pos`, or -1.
    int hitTest(const Layout &layout, const QRectF &window, const QPointF &pos, int *m, int *n) const;

    QRectF fullWindow() const;

private:
    void paintBar(QPainter &painter, const QRectF &bar, const ColorScale &scale, const QString &label, bool masked,
                  const PictureStyle &style) const;
    void paintCells(QPainter &painter, const QRectF &plot, int panel, const QRectF &window, const PictureStyle &style) const;

    HeatmapFigure m_figure;
    std::vector<ColorScale> m_scales;
    std::vector<QImage> m_images;
    std::vector<bool> m_masked;
};

} // namespace plab::ui
