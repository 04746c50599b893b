// What the views show, as plain values: matrices, heatmap figures and curve figures (no widgets, no painting).
#pragma once

#include <QCoreApplication>
#include <QString>

#include <memory>
#include <optional>
#include <vector>

namespace plab::ui {

// The translation context of the texts of figures (titles, axes, legends, subtitles) built in free functions.
struct FigureText {
    Q_DECLARE_TR_FUNCTIONS(FigureText)
};

// How figures number heads and layers: the GUI from 1, as its spin boxes do; positionlab-cli from 0, as its --head and
// --layer options and every data file do (design.md). One process-wide choice, like the language (compute.cpp).
enum class IndexBase { One, Zero };
void setFigureIndexBase(IndexBase base);
IndexBase figureIndexBase();
// "head 3 of 8" from 1, "head h = 2 of 0..7" from 0; "head 3" / "head h = 2"; "layer 2" / "layer l = 1".
QString headOfText(int head, int heads);
QString headText(int head);
QString layerText(int layer);

// A (rows, cols) row-major matrix as core produced it; masked cells are -inf.
struct Matrix {
    int rows = 0;
    int cols = 0;
    std::vector<float> values;
    float at(int m, int n) const { return values[static_cast<size_t>(m) * cols + n]; }
};
using MatrixPtr = std::shared_ptr<const Matrix>;

struct HeatmapPanel {
    QString title;      // e.g. "ALiBi (linear biases)"
    QString subtitle;   // e.g. "head 1 of 8 · N = 64 · causal"
    QString valueLabel; // colour-bar label, e.g. "bias b(m, n)"
    MatrixPtr matrix;
    // A panel unlike the others (the compare view's A − B): its own colour scale and bar even when the figure's
    // scale is shared, in `colorMap` when set (e.g. "diverging" for signed data) instead of the figure's.
    bool ownScale = false;
    QString colorMap;
    // Columns [0, scaleSkipsColumns) are left out of the colour scale's range and saturate at its ends (a real
    // model's first-token sink column, which would otherwise wash every other cell out).
    int scaleSkipsColumns = 0;
};

// One to four heatmaps side by side with a title, axis labels and colour bar(s).
struct HeatmapFigure {
    QString title;
    QString xLabel = FigureText::tr("key position n");
    QString yLabel = FigureText::tr("query position m");
    QString colorMap = QStringLiteral("auto"); // a ColorMap name or "auto"
    bool sharedScale = true;                   // one colour scale (and bar) for every panel
    bool dark = false;                         // the palette the cells are coloured for (masked cells differ)
    std::vector<QString> tickLabels;           // optional label of every index (e.g. the characters of a text)
    // Optional labels of the rows when they differ from the columns' (tickLabels then labels the columns only): a
    // passkey heatmap's depths down, lengths across.
    std::vector<QString> rowTickLabels;
    // fixedHi > fixedLo: every panel's colour scale is [fixedLo, fixedHi] whatever its values (accuracy: 0 to 1).
    double fixedLo = 0, fixedHi = 0;
    // Numbered axes (no tickLabels) of a window at a level of detail: cell i prints the position origin + i * step
    // (columns and rows have their own origins), and positions run up to indexCount - 1 (0: the matrix's size), which
    // sets the labels' width. The defaults number the cells themselves.
    double columnIndexOrigin = 0, rowIndexOrigin = 0, indexStep = 1;
    int indexCount = 0;
    std::vector<HeatmapPanel> panels;
};

struct Curve {
    QString name;
    std::vector<double> x;
    std::vector<double> y;
    bool reference = false; // drawn dashed (e.g. the log n line)
    // Optional band around the curve (e.g. mean ± sd over seeds), same length as x; empty: no band.
    std::vector<double> lower;
    std::vector<double> upper;
    bool hasBand() const { return !lower.empty() && lower.size() == x.size() && upper.size() == x.size(); }
};

struct CurveFigure {
    QString title;
    QString xLabel;
    QString yLabel;
    bool logX = false;
    int logBase = 10;
    bool logY = false; // base 10 (the rotary frequencies view)
    // A quantity with natural bounds (accuracy: 0 and 1): the y axis spans exactly these, whatever the data. One bound
    // alone (entropy: 0) is a limit the axis never passes, where padding and round tick numbers would cross it.
    std::optional<double> yFloor, yCeil;
    std::vector<Curve> curves;
};

} // namespace plab::ui
