// Colour maps (256-entry tables from resources/colormaps) and the value -> colour scale of heatmaps.
#pragma once

#include <QColor>
#include <QImage>
#include <QString>
#include <QStringList>

#include <array>
#include <vector>

namespace plab::ui {

class ColorMap {
public:
    // "viridis", "magma", "cividis" (sequential) or "diverging" (signed data, centred on 0).
    // Unknown names fall back to viridis; see availableNames().
    static const ColorMap& byName(const QString& name);
    static QStringList availableNames();
    static bool isKnown(const QString& name);

    QString name() const { return m_name; }
    bool isDiverging() const { return m_diverging; }
    QRgb entry(int i) const { return m_table[i]; }
    // Colour at t in [0, 1] (clamped), nearest of the 256 entries.
    QRgb at(double t) const;
    // Masked cells get a colour no entry of this map is close to, one per palette: on a dark background a dark
    // grey reads as "nothing here" where white would glare like the brightest value.
    QRgb maskColor(bool dark = false) const { return dark ? m_maskDark : m_mask; }

private:
    ColorMap(QString name, bool diverging);
    QString m_name;
    bool m_diverging = false;
    std::array<QRgb, 256> m_table{};
    QRgb m_mask = 0;
    QRgb m_maskDark = 0;
};

// Maps finite values linearly onto a colour map: lo -> entry 0, hi -> entry 255.
struct ColorScale {
    double lo = 0;
    double hi = 1;
    QString mapName = QStringLiteral("viridis");
    bool dark = false; // the palette: picks the mask colour

    const ColorMap& map() const { return ColorMap::byName(mapName); }
    QRgb color(double value) const; // -inf / nan -> the mask colour
    QRgb maskColor() const { return map().maskColor(dark); }
    double position(double value) const { return hi > lo ? (value - lo) / (hi - lo) : 0.5; }
};

// Range of the finite values; found == false when every value is masked.
struct ValueRange {
    double lo = 0;
    double hi = 0;
    bool found = false;
    bool masked = false; // some value was -inf / nan
    void include(const ValueRange& other);
};
ValueRange finiteRange(const float* values, size_t count);

// The scale a heatmap uses: `mapChoice` "auto" picks the diverging map (symmetric about 0) for data of both
// signs and viridis otherwise; a constant range is widened so its value sits mid-map.
ColorScale makeColorScale(const ValueRange& range, const QString& mapChoice);

// Colours a (rows, cols) row-major matrix into an RGB32 image of the same size (one pixel per cell).
QImage colorize(const float* values, int rows, int cols, const ColorScale& scale);

// Repaints every pixel of colour `from` in `to` (RGB32 images): moves coloured cells from one palette's mask colour
// to the other's without colouring the matrix again. No map entry is a mask colour, so only masked cells change.
void replaceColor(QImage& image, QRgb from, QRgb to);

} // namespace plab::ui
