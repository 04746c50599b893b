// Colour tables loaded from the :/colormaps resource and the linear value -> colour scale.
#include "painting/colormap.h"

#include <QFile>
#include <QHash>
#include <QTextStream>

#include <algorithm>
#include <cmath>
#include <memory>

namespace plab::ui {

namespace {

const QStringList kNames = {QStringLiteral("viridis"), QStringLiteral("magma"), QStringLiteral("cividis"),
                            QStringLiteral("diverging")};

} // namespace

ColorMap::ColorMap(QString name, bool diverging) : m_name(std::move(name)), m_diverging(diverging)
{
    // The tables are compiled in; a missing one is a build error, so fall back to grey only defensively.
    for (int i = 0; i < 256; ++i)
        m_table[i] = qRgb(i, i, i);
    QFile file(QStringLiteral(":/colormaps/%1.txt").arg(m_name));
    if (file.open(QIODevice::ReadOnly | QIODevice::Text)) {
        QTextStream in(&file);
        int i = 0;
        while (!in.atEnd() && i < 256) {
            const QString line = in.readLine().trimmed();
            if (line.isEmpty() || line.startsWith(QLatin1Char('#')))
                continue;
            const QStringList parts = line.split(QLatin1Char(' '), Qt::SkipEmptyParts);
            if (parts.size() == 3)
                m_table[i++] = qRgb(parts[0].toInt(), parts[1].toInt(), parts[2].toInt());
        }
    }
    // Light palette: sequential maps never come near white; the diverging map's centre is light grey, so it masks in
    // near-black. Dark palette (background (30, 30, 32)): a grey a little lighter than the background, so the masked
    // triangle reads as empty yet stays visible; magma starts near black and cividis runs through neutral greys, so
    // they get a lighter grey and a warm grey. Each is more than 60 (sum of |dr|, |dg|, |db|) from every entry.
    m_mask = m_diverging ? qRgb(40, 40, 40) : qRgb(255, 255, 255);
    if (m_name == QLatin1String("magma"))
        m_maskDark = qRgb(80, 80, 84);
    else if (m_name == QLatin1String("cividis"))
        m_maskDark = qRgb(70, 48, 48);
    else
        m_maskDark = qRgb(60, 60, 60);
}

const ColorMap& ColorMap::byName(const QString& name)
{
    static QHash<QString, std::shared_ptr<ColorMap>> cache = [] {
        QHash<QString, std::shared_ptr<ColorMap>> maps;
        for (const QString& n : kNames)
            maps.insert(n, std::shared_ptr<ColorMap>(new ColorMap(n, n == QLatin1String("diverging"))));
        return maps;
    }();
    auto it = cache.constFind(name);
    return it != cache.constEnd() ? **it : *cache.value(QStringLiteral("viridis"));
}

QStringList ColorMap::availableNames()
{
    return kNames;
}

bool ColorMap::isKnown(const QString& name)
{
    return kNames.contains(name);
}

QRgb ColorMap::at(double t) const
{
    if (!(t >= 0))
        t = 0;
    if (t > 1)
        t = 1;
    return m_table[std::min(255, static_cast<int>(t * 255.0 + 0.5))];
}

QRgb ColorScale::color(double value) const
{
    if (!std::isfinite(value))
        return maskColor();
    return map().at(position(value));
}

void ValueRange::include(const ValueRange& other)
{
    masked = masked || other.masked;
    if (!other.found)
        return;
    if (!found) {
        *this = other;
        return;
    }
    lo = std::min(lo, other.lo);
    hi = std::max(hi, other.hi);
}

ValueRange finiteRange(const float* values, size_t count)
{
    float lo = INFINITY, hi = -INFINITY;
    long long hidden = 0;
#pragma omp parallel for reduction(min : lo) reduction(max : hi) reduction(+ : hidden) if (count > (1u << 16))
    for (long long i = 0; i < static_cast<long long>(count); ++i) {
        const float v = values[i];
        if (std::isfinite(v)) {
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        } else {
            ++hidden;
        }
    }
    ValueRange r;
    r.masked = hidden > 0;
    r.found = lo <= hi;
    if (r.found) {
        r.lo = lo;
        r.hi = hi;
    }
    return r;
}

ColorScale makeColorScale(const ValueRange& range, const QString& mapChoice)
{
    ColorScale s;
    double lo = range.found ? range.lo : 0.0;
    double hi = range.found ? range.hi : 1.0;
    const bool bothSigns = lo < 0 && hi > 0;
    s.mapName = ColorMap::isKnown(mapChoice) ? mapChoice
                                             : (bothSigns ? QStringLiteral("diverging") : QStringLiteral("viridis"));
    if (s.mapName == QLatin1String("diverging")) {
        // Signed data: 0 sits at the neutral centre.
        const double a = std::max(std::abs(lo), std::abs(hi));
        lo = -a;
        hi = a;
    }
    if (!(hi > lo)) {
        const double pad = std::max(1.0, std::abs(lo));
        lo -= pad;
        hi += pad;
    }
    s.lo = lo;
    s.hi = hi;
    return s;
}

QImage colorize(const float* values, int rows, int cols, const ColorScale& scale)
{
    QImage image(cols, rows, QImage::Format_RGB32);
    const ColorMap& map = scale.map();
    const QRgb mask = scale.maskColor();
    const float lo = static_cast<float>(scale.lo);
    const float factor = scale.hi > scale.lo ? static_cast<float>(255.0 / (scale.hi - scale.lo)) : 0.0f;
    const float offset = scale.hi > scale.lo ? 0.5f : 128.0f;
    // Rows are written in parallel, so take the pixel pointer once (scanLine() may detach).
    uchar* bits = image.bits();
    const qsizetype stride = image.bytesPerLine();
#pragma omp parallel for schedule(static) if (static_cast <long long>(rows) * cols > (1 << 16))
    for (int m = 0; m < rows; ++m) {
        auto* line = reinterpret_cast<QRgb*>(bits + m * stride);
        const float* row = values + static_cast<size_t>(m) * cols;
        for (int n = 0; n < cols; ++n) {
            const float v = row[n];
            if (!std::isfinite(v)) {
                line[n] = mask;
                continue;
            }
            const float t = (v - lo) * factor + offset;
            const int i = t <= 0.0f ? 0 : (t >= 255.0f ? 255 : static_cast<int>(t));
            line[n] = map.entry(i);
        }
    }
    return image;
}

void replaceColor(QImage& image, QRgb from, QRgb to)
{
    if (from == to || image.isNull())
        return;
    from |= 0xff000000u;
    to |= 0xff000000u;
    const int rows = image.height();
    const int cols = image.width();
    uchar* bits = image.bits(); // detaches once, before the parallel loop
    const qsizetype stride = image.bytesPerLine();
#pragma omp parallel for schedule(static) if (static_cast <long long>(rows) * cols > (1 << 16))
    for (int m = 0; m < rows; ++m) {
        auto* line = reinterpret_cast<QRgb*>(bits + m * stride);
        for (int n = 0; n < cols; ++n)
            if ((line[n] | 0xff000000u) == from)
                line[n] = to;
    }
}

} // namespace plab::ui
