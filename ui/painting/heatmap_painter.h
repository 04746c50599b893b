// Paints heatmap figures (title, panels, axes with ticks, colour bars, masked swatch) with one QPainter code path
// used by the on-screen widget and every export format.
#pragma once

#include "painting/colormap.h"
#include "painting/figures.h"

#include <QColor>
#include <QFont>
#include <QImage>
#include <QRectF>

#include <vector>

class QPainter;

namespace plab::ui {

// `text` for drawing word-wrapped in `width` pixels: a word wider than the width that Qt cannot break (a long
// checkpoint name) is elided in its middle, so the wrapped text is as wide as the width and as high as Qt measures it
// (a word too wide would run past both edges and, wrapped, onto the text below).
QString elideLongWords(const QString& text, const QFont& font, double width);

// Fonts and colours of a picture; the font grows with the picture so exports stay legible at any size.
struct PictureStyle {
    QFont font;
    QColor text = Qt::black;
    QColor background = Qt::white;
    QColor axis = QColor(60, 60, 60);
    bool dark = false;         // the dark palette: masked cells take its mask colour
    bool vectorOutput = false; // SVG/PDF: small matrices as rectangles, large ones as a bounded image

    static PictureStyle forSize(const QSizeF& size, bool dark = false);
};

// Nice tick values covering [lo, hi] (about `count` of them, steps of 1, 2 or 5 x 10^k).
std::vector<double> niceTicks(double lo, double hi, int count);
// Every how many cells an axis writes a cell's own label (the characters of a text): 1 when every cell is at least
// `labelSize` pixels long, else the smallest of 2, 5, 10, 20, 50, ... that leaves `labelSize` pixels per label.
int tickLabelStep(double cellSize, double labelSize);

class HeatmapPainter {
public:
    struct Layout {
        QRectF title;
        std::vector<QRectF> headers; // panel title + subtitle
        std::vector<QRectF> plots;   // the cells
        std::vector<QRectF> bars;    // colour bars (one for the panels sharing a scale, one per other panel)
        std::vector<int> barPanels;  // for each bar, the panel it stands right of (the last of a shared group)
    };

    // Computes each panel's colour scale and colours its cells once (for the figure's palette); paint() then only
    // draws.
    void setFigure(HeatmapFigure figure);
    // Moves the coloured cells to the other palette's mask colour (no recolouring of values).
    void setDark(bool dark);
    bool isDark() const { return m_figure.dark; }
    const HeatmapFigure& figure() const { return m_figure; }
    bool isEmpty() const { return m_figure.panels.empty(); }
    int panelCount() const { return static_cast<int>(m_figure.panels.size()); }
    const ColorScale& scale(int panel) const { return m_scales[panel]; }
    const QImage& image(int panel) const { return m_images[panel]; }
    // Rows/columns of the panels (all panels share their size).
    int matrixSize() const;
    // The largest position a numbered axis may print (the figure's indexCount, else the matrix's size, less one).
    int largestIndex() const;

    Layout layout(const QRectF& target, const PictureStyle& style) const;
    // `window` is the visible part of the matrix in cell units (x = key n, y = query m); empty means all of it.
    // A style of the other palette than the figure's paints from a copy with that palette's mask colour.
    void paint(QPainter& painter, const QRectF& target, const PictureStyle& style, const QRectF& window = {}) const;
    // The panel and cell under `pos`, or -1.
    int hitTest(const Layout& layout, const QRectF& window, const QPointF& pos, int* m, int* n) const;

    QRectF fullWindow() const;

private:
    bool sharesScale(int panel) const; // panel is part of the figure's shared-scale group
    bool hasBarAfter(int panel) const;
    void paintFigure(QPainter& painter, const QRectF& target, const PictureStyle& style, const QRectF& window) const;
    void paintPanelHeader(QPainter& painter, QRectF header, const HeatmapPanel& panel, const PictureStyle& style) const;
    // Ticks (cell labels or indices) and the axis titles around one panel's plot.
    // The tallest panel header (title and subtitle) wrapped within `width`, and a little space under it.
    double panelHeadersHeight(double width, const PictureStyle& style) const;
    // `band`: the panel's width (its y axis and plot): how far a wide x label may reach to each side of the plot.
    void paintAxes(QPainter& painter, const QRectF& plot, const QRectF& band, const QRectF& window,
                   const PictureStyle& style) const;
    void paintCellLabels(QPainter& painter, const QRectF& plot, const QRectF& window, const PictureStyle& style) const;
    // The width the y axis gives a cell label: a text's characters take the minimum, a model's tokens up to the cap
    // (in font pixel sizes), longer ones elided.
    double cellLabelWidth(const PictureStyle& style) const;
    double rowLabelsExtraWidth(const PictureStyle& style) const;
    static constexpr double kCellLabelMinWidth = 2.0;
    static constexpr double kCellLabelMaxWidth = 7.0;
    void paintBars(QPainter& painter, const Layout& layout, const PictureStyle& style) const; // one per scale group
    // roomAbove: the empty band above the bar (the headers' height), where a long value label may run on.
    void paintBar(QPainter& painter, const QRectF& bar, const ColorScale& scale, const QString& label, bool masked,
                  double roomAbove, const PictureStyle& style) const;
    void paintCells(QPainter& painter, const QRectF& plot, int panel, const QRectF& window,
                    const PictureStyle& style) const;

    HeatmapFigure m_figure;
    std::vector<ColorScale> m_scales;
    std::vector<QImage> m_images;
    std::vector<bool> m_masked;
};

} // namespace plab::ui
