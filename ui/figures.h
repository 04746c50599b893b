// What the views show, as plain values: matrices, heatmap figures and curve figures (no widgets, no painting).
#pragma once

#include <QCoreApplication>
#include <QString>

#include <memory>
#include <vector>

namespace plab::ui {

// The translation context of the texts of figures (titles, axes, legends, subtitles) built in free functions.
struct FigureText
{
    Q_DECLARE_TR_FUNCTIONS(FigureText)
};

// A (rows, cols) row-major matrix as core produced it; masked cells are -inf.
struct Matrix
{
    int rows = 0;
    int cols = 0;
    std::vector<float> values;
    float at(int m, int n) const { return values[static_cast<size_t>(m) * cols + n]; }
};
using MatrixPtr = std::shared_ptr<const Matrix>;

struct HeatmapPanel
{
    QString title;      // e.g. "ALiBi (linear biases)"
    QString subtitle;   // e.g. "head 1 of 8 · N = 64 · causal"
    QString valueLabel; // colour-bar label, e.g. "bias b(m, n)"
    MatrixPtr matrix;
    // A panel unlike the others (the compare view's A − B): its own colour scale and bar even when the figure's
    // scale is shared, in `colorMap` when set (e.g. "diverging" for signed data) instead of the figure's.
    bool ownScale = false;
    QString colorMap;
};

// One to four heatmaps side by side with a title, axis labels and colour bar(s).
struct HeatmapFigure
{
    QString title;
    QString xLabel = FigureText::tr("key position n");
    QString yLabel = FigureText::tr("query position m");
    QString colorMap = QStringLiteral("auto"); // a ColorMap name or "auto"
    bool sharedScale = true;                   // one colour scale (and bar) for every panel
    bool dark = false;                         // the palette the cells are coloured for (masked cells differ)
    std::vector<QString> tickLabels;           // optional label of every index (e.g. the characters of a text)
    std::vector<HeatmapPanel> panels;
};

struct Curve
{
    QString name;
    std::vector<double> x;
    std::vector<double> y;
    bool reference = false; // drawn dashed (e.g. the log n line)
    // Optional band around the curve (e.g. mean ± sd over seeds), same length as x; empty: no band.
    std::vector<double> lower;
    std::vector<double> upper;
    bool hasBand() const { return !lower.empty() && lower.size() == x.size() && upper.size() == x.size(); }
};

struct CurveFigure
{
    QString title;
    QString xLabel;
    QString yLabel;
    bool logX = false;
    int logBase = 10;
    std::vector<Curve> curves;
};

} // namespace plab::ui
