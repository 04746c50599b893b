// One painter for heatmaps on screen, in PNG, SVG and PDF: layout, cells, axes, colour bars.
#include "painting/heatmap_painter.h"

#include <QFontMetricsF>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <cmath>

namespace plab::ui {

namespace {

QString tickText(double v)
{
    if (std::abs(v) < 1e-12)
        v = 0;
    return QString::number(v, 'g', 4).replace(QLatin1Char('-'), QChar(0x2212));
}

// The height of `text` word-wrapped in `width` pixels (after fitWords).
double wrappedHeight(const QString& text, const QFont& font, double width)
{
    return QFontMetricsF(font)
        .boundingRect(QRectF(0, 0, width, 1e6), Qt::TextWordWrap | Qt::AlignHCenter, elideLongWords(text, font, width))
        .height();
}

// Below each plot: the tick labels and the x axis's title.
double xAxisLabelsHeight(const PictureStyle& style)
{
    const QFontMetricsF fm(style.font);
    return fm.height() * 1.3 + fm.height() * 1.4;
}

QFont scaled(const QFont& base, double factor, bool bold = false)
{
    QFont f = base;
    f.setPixelSize(std::max(6, static_cast<int>(std::lround(base.pixelSize() * factor))));
    f.setBold(bold);
    return f;
}

// Integer ticks (cell indices) within [a, b).
std::vector<int> indexTicks(double a, double b, int count)
{
    const double span = std::max(1.0, b - a);
    std::vector<double> nice = niceTicks(a, b - 1, count);
    double step = nice.size() >= 2 ? nice[1] - nice[0] : span;
    step = std::max(1.0, std::round(step));
    std::vector<int> out;
    for (double v = std::ceil(a / step) * step; v <= b - 1 + 1e-9; v += step)
        out.push_back(static_cast<int>(std::lround(v)));
    return out;
}

} // namespace

// `text` as it is drawn word-wrapped in `width` pixels: a word wider than the width (a long checkpoint name) is elided
// in its middle, so the height Qt measures for the wrapped text is the height it draws (a word too wide would run
// past both edges and, wrapped, onto the text below).
QString elideLongWords(const QString& text, const QFont& font, double width)
{
    const QFontMetricsF metrics(font);
    QStringList words = text.split(QLatin1Char(' '));
    // Only a word Qt cannot break itself: Chinese text, one "word" without spaces, wraps between its characters.
    for (QString& word : words)
        if (metrics.boundingRect(QRectF(0, 0, width, 1e6), Qt::TextWordWrap, word).width() > width + 0.5)
            word = metrics.elidedText(word, Qt::ElideMiddle, width);
    return words.join(QLatin1Char(' '));
}

PictureStyle PictureStyle::forSize(const QSizeF& size, bool dark)
{
    PictureStyle s;
    s.font = QFont(QStringLiteral("DejaVu Sans"));
    // Chinese texts (zh_CN): simplified-Chinese glyphs, not whichever CJK face the fallback finds first.
    s.font.setFamilies({QStringLiteral("DejaVu Sans"), QStringLiteral("Noto Sans CJK SC")});
    const double side = std::min(size.width(), size.height() * 1.3);
    s.font.setPixelSize(std::clamp(static_cast<int>(std::lround(side / 48.0)), 10, 64));
    s.dark = dark;
    if (dark) {
        s.text = QColor(230, 230, 230);
        s.background = QColor(30, 30, 32);
        s.axis = QColor(200, 200, 200);
    }
    return s;
}

int tickLabelStep(double cellSize, double labelSize)
{
    if (!(cellSize > 0) || cellSize >= labelSize)
        return 1;
    for (int decade = 1;; decade *= 10)
        for (int m : {1, 2, 5})
            if (m * decade * cellSize >= labelSize || decade > 100000000)
                return m * decade;
}

std::vector<double> niceTicks(double lo, double hi, int count)
{
    std::vector<double> out;
    if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) {
        out.push_back(lo);
        return out;
    }
    const double raw = (hi - lo) / std::max(1, count);
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    const double r = raw / mag;
    const double step = (r < 1.5 ? 1 : r < 3 ? 2 : r < 7 ? 5 : 10) * mag;
    for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step)
        out.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
    return out;
}

void HeatmapPainter::setFigure(HeatmapFigure figure)
{
    m_figure = std::move(figure);
    m_scales.clear();
    m_images.clear();
    m_masked.clear();
    std::vector<ValueRange> ranges;
    ValueRange all; // over the panels sharing the scale
    for (int i = 0; i < panelCount(); ++i) {
        const HeatmapPanel& p = m_figure.panels[i];
        ValueRange r;
        if (p.matrix && p.scaleSkipsColumns > 0 && p.scaleSkipsColumns < p.matrix->cols) {
            for (int row = 0; row < p.matrix->rows; ++row)
                r.include(
                    finiteRange(&p.matrix->values[static_cast<size_t>(row) * p.matrix->cols + p.scaleSkipsColumns],
                                static_cast<size_t>(p.matrix->cols - p.scaleSkipsColumns)));
        } else if (p.matrix) {
            r = finiteRange(p.matrix->values.data(), p.matrix->values.size());
        }
        ranges.push_back(r);
        if (!p.ownScale)
            all.include(r);
        m_masked.push_back(r.masked);
    }
    for (int i = 0; i < panelCount(); ++i) {
        const HeatmapPanel& p = m_figure.panels[i];
        ColorScale s =
            makeColorScale(sharesScale(i) ? all : ranges[i], p.colorMap.isEmpty() ? m_figure.colorMap : p.colorMap);
        s.dark = m_figure.dark;
        if (m_figure.fixedHi > m_figure.fixedLo) {
            s.lo = m_figure.fixedLo;
            s.hi = m_figure.fixedHi;
        }
        m_scales.push_back(s);
        const MatrixPtr& mat = m_figure.panels[i].matrix;
        m_images.push_back(mat ? colorize(mat->values.data(), mat->rows, mat->cols, s) : QImage());
    }
}

void HeatmapPainter::setDark(bool dark)
{
    if (dark == m_figure.dark)
        return;
    m_figure.dark = dark;
    for (size_t i = 0; i < m_scales.size(); ++i) {
        const ColorMap& map = m_scales[i].map();
        m_scales[i].dark = dark;
        if (m_masked[i])
            replaceColor(m_images[i], map.maskColor(!dark), map.maskColor(dark));
    }
}

bool HeatmapPainter::sharesScale(int panel) const
{
    return m_figure.sharedScale && !m_figure.panels[panel].ownScale;
}

bool HeatmapPainter::hasBarAfter(int panel) const
{
    if (!sharesScale(panel))
        return true;
    // A shared bar stands right of the group's last panel.
    for (int i = panel + 1; i < panelCount(); ++i)
        if (sharesScale(i))
            return false;
    return true;
}

int HeatmapPainter::matrixSize() const
{
    for (const HeatmapPanel& p : m_figure.panels)
        if (p.matrix)
            return std::max(p.matrix->rows, p.matrix->cols);
    return 0;
}

int HeatmapPainter::largestIndex() const
{
    return m_figure.indexCount > 0 ? m_figure.indexCount - 1 : std::max(1, matrixSize()) - 1;
}

QRectF HeatmapPainter::fullWindow() const
{
    for (const HeatmapPanel& p : m_figure.panels)
        if (p.matrix)
            return QRectF(0, 0, p.matrix->cols, p.matrix->rows);
    return QRectF(0, 0, 1, 1);
}

double HeatmapPainter::panelHeadersHeight(double width, const PictureStyle& style) const
{
    const double f = style.font.pixelSize();
    double tallest = 0;
    for (const HeatmapPanel& p : m_figure.panels) {
        double h = 0;
        if (!p.title.isEmpty())
            h += wrappedHeight(p.title, scaled(style.font, 1.0, true), width);
        if (!p.subtitle.isEmpty())
            h += wrappedHeight(p.subtitle, scaled(style.font, 0.85), width);
        tallest = std::max(tallest, h + 0.4 * f);
    }
    return tallest;
}

HeatmapPainter::Layout HeatmapPainter::layout(const QRectF& target, const PictureStyle& style) const
{
    Layout l;
    const int k = std::max(1, panelCount());
    const double f = style.font.pixelSize();
    const QFontMetricsF fm(style.font);
    const QFontMetricsF titleFm(scaled(style.font, 1.25, true));
    const double pad = f;
    const QRectF inner = target.adjusted(pad, pad * 0.6, -pad, -pad * 0.6);

    // As many lines as the title wraps to, and half a line below them: the panel headers start under it.
    const double titleH =
        m_figure.title.isEmpty()
            ? 0
            : wrappedHeight(m_figure.title, scaled(style.font, 1.25, true), inner.width()) + titleFm.height() * 0.5;
    l.title = QRectF(inner.left(), inner.top(), inner.width(), titleH);

    // Row labels wider than the row numbers (a model's tokens, a task's depths) widen the axis, up to a cap.
    const double tickW = fm.horizontalAdvance(QString::number(largestIndex())) + 0.6 * f + rowLabelsExtraWidth(style);
    const double yAxisW = fm.height() * 1.3 + tickW; // rotated label + tick labels
    const double xAxisH = xAxisLabelsHeight(style);
    double barLabelW = 0;
    for (const ColorScale& s : m_scales)
        for (double v : niceTicks(s.lo, s.hi, 5))
            barLabelW = std::max(barLabelW, fm.horizontalAdvance(tickText(v)));
    const double barW = 1.1 * f + 0.5 * f + barLabelW + 0.4 * f + fm.height() * 1.3 + 0.6 * f;
    const double gap = 1.2 * f;
    int barCount = 0;
    for (int i = 0; i < panelCount(); ++i)
        barCount += hasBarAfter(i) ? 1 : 0;

    const double availW = inner.width() - barCount * barW - (k - 1) * gap - k * yAxisW;
    const double panelW = std::max(20.0, availW / k);

    // Headers wrap within the width they are drawn in, the side's and the y axis's; all panels get the tallest header.
    // The side depends on the headers' height, and their height on the side.
    auto headersHeight = [&](double side) { return panelHeadersHeight(std::max(40.0, side + yAxisW), style); };
    double headerH = headersHeight(panelW);
    double side = std::max(20.0, std::min(panelW, inner.height() - titleH - headerH - xAxisH));
    // A narrower side wraps the headers into more lines, which narrows the side again: until the two agree (each round
    // only shrinks the side, so a few rounds do).
    for (int round = 0; round < 8 && side < panelW; ++round) {
        headerH = std::max(headerH, headersHeight(side));
        const double next = std::max(20.0, std::min(side, inner.height() - titleH - headerH - xAxisH));
        if (next >= side)
            break;
        side = next;
    }
    const double availH = inner.height() - titleH - headerH - xAxisH;

    const double totalW = k * (yAxisW + side) + (k - 1) * gap + barCount * barW;
    double x = inner.left() + std::max(0.0, (inner.width() - totalW) / 2);
    // Centre the block vertically too when the picture is wider than the panels need.
    const double slack = std::max(0.0, availH - side) / 2;
    l.title.translate(0, slack);
    const double top = inner.top() + slack + titleH + headerH;
    for (int i = 0; i < k; ++i) {
        const QRectF plot(x + yAxisW, top, side, side);
        l.plots.push_back(plot);
        l.headers.push_back(QRectF(x, top - headerH, yAxisW + side, headerH));
        x = plot.right();
        if (i < panelCount() && hasBarAfter(i)) {
            l.bars.push_back(QRectF(x + 0.8 * f, top, 1.1 * f, side));
            l.barPanels.push_back(i);
            x += barW;
        }
        x += gap;
    }
    return l;
}

void HeatmapPainter::paintCells(QPainter& painter, const QRectF& plot, int panel, const QRectF& window,
                                const PictureStyle& style) const
{
    const MatrixPtr& mat = m_figure.panels[panel].matrix;
    if (!mat)
        return;
    const QImage& image = m_images[panel];
    const double cw = plot.width() / window.width();
    const double ch = plot.height() / window.height();
    if (style.vectorOutput && window.width() * window.height() <= 64 * 64) {
        // Small matrices stay vector: one rectangle per run of equal colours in a row (masked areas, bands).
        // Rows that merely abut leave hairline seams in SVG and PDF viewers, which antialias each shape against what
        // lies below it: the background. So each run reaches down to the bottom of the cells and the next rows paint
        // over it: a row's top edge is blended with the row above, at any zoom. Runs of one row do not overlap, so no
        // pixel along that edge is blended twice.
        const int n0 = std::max(0, static_cast<int>(std::floor(window.left())));
        const int n1 = std::min(mat->cols, static_cast<int>(std::ceil(window.right())));
        const int m0 = std::max(0, static_cast<int>(std::floor(window.top())));
        const int m1 = std::min(mat->rows, static_cast<int>(std::ceil(window.bottom())));
        const QRectF area =
            QRectF(QPointF(plot.left() + (n0 - window.left()) * cw, plot.top() + (m0 - window.top()) * ch),
                   QPointF(plot.left() + (n1 - window.left()) * cw, plot.top() + (m1 - window.top()) * ch))
                .intersected(plot);
        painter.save();
        painter.setPen(Qt::NoPen);
        for (int m = m0; m < m1; ++m)
            for (int n = n0; n < n1;) {
                const QRgb colour = image.pixel(n, m);
                int end = n + 1;
                while (end < n1 && image.pixel(end, m) == colour)
                    ++end;
                const QRectF runDown(
                    QPointF(plot.left() + (n - window.left()) * cw, plot.top() + (m - window.top()) * ch),
                    QPointF(plot.left() + (end - window.left()) * cw, area.bottom()));
                painter.fillRect(runDown.intersected(area), QColor(colour));
                n = end;
            }
        painter.restore();
        return;
    }
    painter.save();
    painter.setClipRect(plot);
    painter.setRenderHint(QPainter::SmoothPixmapTransform, false);
    if (style.vectorOutput && (window.width() > 1536 || window.height() > 1536)) {
        // Vector files embed the cells as one image; bound its size (nearest-neighbour, like the screen).
        const QRect src = window.toAlignedRect().intersected(image.rect());
        const QImage small = image.copy(src).scaled(1536, 1536, Qt::KeepAspectRatio, Qt::FastTransformation);
        const QRectF dest(plot.left() + (src.left() - window.left()) * cw, plot.top() + (src.top() - window.top()) * ch,
                          src.width() * cw, src.height() * ch);
        painter.drawImage(dest, small);
    } else {
        painter.drawImage(plot, image, window);
    }
    painter.restore();
}

void HeatmapPainter::paintBar(QPainter& painter, const QRectF& bar, const ColorScale& scale, const QString& label,
                              bool masked, double roomAbove, const PictureStyle& style) const
{
    const double f = style.font.pixelSize();
    const QFontMetricsF fm(style.font);
    QRectF gradient = bar;
    QRectF swatch;
    if (masked) {
        // Leave room below the bar for the "masked" swatch.
        gradient.setBottom(bar.bottom() - 2.2 * f);
        swatch = QRectF(bar.left(), bar.bottom() - 1.1 * f, bar.width(), 1.1 * f);
    }
    QImage strip(1, 256, QImage::Format_RGB32);
    for (int i = 0; i < 256; ++i)
        strip.setPixel(0, 255 - i, scale.map().entry(i));
    painter.save();
    painter.setRenderHint(QPainter::SmoothPixmapTransform, true);
    painter.drawImage(gradient, strip);
    painter.restore();
    painter.setPen(QPen(style.axis, 1));
    painter.setBrush(Qt::NoBrush);
    painter.drawRect(gradient);

    painter.setFont(style.font);
    double labelRight = gradient.right();
    for (double v : niceTicks(scale.lo, scale.hi, 5)) {
        const double y = gradient.bottom() - scale.position(v) * gradient.height();
        if (y < gradient.top() - 0.5 || y > gradient.bottom() + 0.5)
            continue;
        painter.setPen(QPen(style.axis, 1));
        painter.drawLine(QPointF(gradient.right(), y), QPointF(gradient.right() + 0.35 * f, y));
        painter.setPen(style.text);
        const QString t = tickText(v);
        const QRectF r(gradient.right() + 0.5 * f, y - fm.height() / 2, fm.horizontalAdvance(t) + 2, fm.height());
        painter.drawText(r, Qt::AlignLeft | Qt::AlignVCenter, t);
        labelRight = std::max(labelRight, r.right());
    }
    if (masked) {
        painter.fillRect(swatch, QColor(scale.maskColor()));
        painter.setPen(QPen(style.axis, 1));
        painter.drawRect(swatch);
        painter.setPen(style.text);
        painter.drawText(QRectF(swatch.right() + 0.5 * f, swatch.top() - f, 10 * f, swatch.height() + 2 * f),
                         Qt::AlignLeft | Qt::AlignVCenter, FigureText::tr("masked"));
    }
    // The value label, rotated, right of the tick labels.
    painter.save();
    painter.setPen(style.text);
    // Beside the bar's middle; a label longer than the bar (small multiples) ends at the bar's bottom and runs up into
    // the empty band above it.
    const double span = std::min(fm.horizontalAdvance(label) + 2, gradient.height() + std::max(0.0, roomAbove));
    const double centre = span <= gradient.height() ? gradient.center().y() : gradient.bottom() - span / 2;
    painter.translate(labelRight + 0.4 * f + fm.height() * 0.5, centre);
    painter.rotate(90);
    painter.drawText(QRectF(-std::max(span, gradient.height()) / 2, -fm.height() / 2, std::max(span, gradient.height()),
                            fm.height() * 1.2),
                     Qt::AlignCenter, fm.elidedText(label, Qt::ElideRight, span));
    painter.restore();
}

void HeatmapPainter::paint(QPainter& painter, const QRectF& target, const PictureStyle& style,
                           const QRectF& window) const
{
    if (style.dark == m_figure.dark) {
        paintFigure(painter, target, style, window);
        return;
    }
    // An export in the other palette than the screen's: the images are shared until the mask pixels change.
    HeatmapPainter other = *this;
    other.setDark(style.dark);
    other.paintFigure(painter, target, style, window);
}

void HeatmapPainter::paintFigure(QPainter& painter, const QRectF& target, const PictureStyle& style,
                                 const QRectF& windowIn) const
{
    painter.save();
    painter.fillRect(target, style.background);
    painter.setRenderHint(QPainter::Antialiasing, true);
    painter.setRenderHint(QPainter::TextAntialiasing, true);
    const Layout l = layout(target, style);
    const QRectF window = windowIn.isEmpty() ? fullWindow() : windowIn;

    painter.setPen(style.text);
    painter.setFont(scaled(style.font, 1.25, true));
    painter.drawText(l.title, Qt::AlignHCenter | Qt::AlignTop | Qt::TextWordWrap,
                     elideLongWords(m_figure.title, painter.font(), l.title.width()));

    for (int i = 0; i < panelCount(); ++i) {
        const QRectF plot = l.plots[i];
        paintPanelHeader(painter, l.headers[i], m_figure.panels[i], style);
        paintCells(painter, plot, i, window, style);
        painter.setPen(QPen(style.axis, 1));
        painter.setBrush(Qt::NoBrush);
        painter.drawRect(plot);
        paintAxes(painter, plot, l.headers[i], window, style);
    }
    paintBars(painter, l, style);
    painter.restore();
}

void HeatmapPainter::paintPanelHeader(QPainter& painter, QRectF header, const HeatmapPanel& panel,
                                      const PictureStyle& style) const
{
    // The panel title (bold) above the subtitle.
    painter.setPen(style.text);
    if (!panel.title.isEmpty()) {
        painter.setFont(scaled(style.font, 1.0, true));
        const QString title = elideLongWords(panel.title, painter.font(), header.width());
        const QRectF used = painter.boundingRect(header, Qt::AlignHCenter | Qt::AlignTop | Qt::TextWordWrap, title);
        painter.drawText(header, Qt::AlignHCenter | Qt::AlignTop | Qt::TextWordWrap, title);
        header.setTop(used.bottom());
    }
    painter.setFont(scaled(style.font, 0.85));
    painter.drawText(header, Qt::AlignHCenter | Qt::AlignTop | Qt::TextWordWrap,
                     elideLongWords(panel.subtitle, painter.font(), header.width()));
}

void HeatmapPainter::paintAxes(QPainter& painter, const QRectF& plot, const QRectF& band, const QRectF& window,
                               const PictureStyle& style) const
{
    // Key n along the top-down matrix's x, query m down the y axis.
    painter.setFont(style.font);
    const double f = style.font.pixelSize();
    const QFontMetricsF fm(style.font);
    if (!m_figure.tickLabels.empty()) {
        paintCellLabels(painter, plot, window, style);
    } else {
        const double cw = plot.width() / window.width();
        const double ch = plot.height() / window.height();
        const int tickCount = std::max(2, static_cast<int>(plot.width() / (5.0 * f)));
        // Positions, not cells: cell i is position origin + i * step (a level-of-detail window's blocks).
        const double step = m_figure.indexStep > 0 ? m_figure.indexStep : 1.0;
        const double x0 = m_figure.columnIndexOrigin, y0 = m_figure.rowIndexOrigin;
        for (int n : indexTicks(x0 + window.left() * step, x0 + window.right() * step, tickCount)) {
            const double x = plot.left() + ((n + 0.5 - x0) / step - window.left()) * cw;
            painter.setPen(QPen(style.axis, 1));
            painter.drawLine(QPointF(x, plot.bottom()), QPointF(x, plot.bottom() + 0.35 * f));
            painter.setPen(style.text);
            painter.drawText(QRectF(x - 3 * f, plot.bottom() + 0.4 * f, 6 * f, fm.height()),
                             Qt::AlignHCenter | Qt::AlignTop, QString::number(n));
        }
        for (int m : indexTicks(y0 + window.top() * step, y0 + window.bottom() * step, tickCount)) {
            const double y = plot.top() + ((m + 0.5 - y0) / step - window.top()) * ch;
            painter.setPen(QPen(style.axis, 1));
            painter.drawLine(QPointF(plot.left() - 0.35 * f, y), QPointF(plot.left(), y));
            painter.setPen(style.text);
            painter.drawText(QRectF(plot.left() - 10 * f, y - fm.height() / 2, 10 * f - 0.5 * f, fm.height()),
                             Qt::AlignRight | Qt::AlignVCenter, QString::number(m));
        }
    }
    painter.setPen(style.text);
    // Centred under the plot; a label wider than the plot (a small multiple's) may reach as far to each side as the
    // panel's band reaches left of the plot (its y axis), and is elided past that.
    const double half = std::max(plot.width() / 2, std::min(fm.horizontalAdvance(m_figure.xLabel) / 2 + 1,
                                                             plot.center().x() - band.left()));
    const QRectF labelRect(plot.center().x() - half, plot.bottom() + 0.4 * f + fm.height() * 1.1, 2 * half,
                           fm.height() * 1.3);
    painter.drawText(labelRect, Qt::AlignHCenter | Qt::AlignTop,
                     fm.elidedText(m_figure.xLabel, Qt::ElideRight, static_cast<int>(labelRect.width())));
    painter.save();
    const QString tickSample = QString::number(largestIndex());
    // Beside the plot's middle; a label longer than the side (small multiples) starts at the plot's top and runs down
    // into the empty corner left of the x axis's labels.
    const double span =
        std::min(fm.horizontalAdvance(m_figure.yLabel) + 2, plot.height() + xAxisLabelsHeight(style) - 0.2 * f);
    const double centre = span <= plot.height() ? plot.center().y() : plot.top() + span / 2;
    const double wideLabels = rowLabelsExtraWidth(style); // as in layout()
    painter.translate(plot.left() - 0.6 * f - fm.horizontalAdvance(tickSample) - wideLabels - fm.height() * 0.8,
                      centre);
    painter.rotate(-90);
    painter.drawText(
        QRectF(-std::max(span, plot.height()) / 2, -fm.height() / 2, std::max(span, plot.height()), fm.height() * 1.2),
        Qt::AlignCenter, fm.elidedText(m_figure.yLabel, Qt::ElideRight, span));
    painter.restore();
}

double HeatmapPainter::rowLabelsExtraWidth(const PictureStyle& style) const
{
    // The labels are drawn right-aligned in cellLabelWidth; what the axis needs beyond the row numbers is the larger of
    // that width past two characters (tokens) and that width past the numbers themselves (a task's "100%").
    const double f = style.font.pixelSize();
    const QFontMetricsF fm(style.font);
    const double numbers = fm.horizontalAdvance(QString::number(largestIndex()));
    const double width = cellLabelWidth(style);
    return std::max({0.0, width - kCellLabelMinWidth * f, m_figure.rowTickLabels.empty() ? 0.0 : width - numbers});
}

double HeatmapPainter::cellLabelWidth(const PictureStyle& style) const
{
    const double f = style.font.pixelSize();
    const QFontMetricsF fm(style.font);
    double widest = 0; // the rows' labels: their own (a task's depths) or the cells' (a model's tokens)
    for (const QString& label : m_figure.rowTickLabels.empty() ? m_figure.tickLabels : m_figure.rowTickLabels)
        widest = std::max(widest, fm.horizontalAdvance(label));
    return std::clamp(widest, kCellLabelMinWidth * f, kCellLabelMaxWidth * f);
}

void HeatmapPainter::paintCellLabels(QPainter& painter, const QRectF& plot, const QRectF& window,
                                     const PictureStyle& style) const
{
    // The cells' own labels (the characters of a text): every cell's when each has room, else every step-th
    // (1, 2, 5, 10, ...) with a tick.
    const double f = style.font.pixelSize();
    const QFontMetricsF fm(style.font);
    const double cw = plot.width() / window.width();
    const double ch = plot.height() / window.height();
    const std::vector<QString>& labels = m_figure.tickLabels;
    const int first = std::max(0, static_cast<int>(std::floor(window.left())));
    const int last = std::min(static_cast<int>(labels.size()), static_cast<int>(std::ceil(window.right())));
    const int firstRow = std::max(0, static_cast<int>(std::floor(window.top())));
    const std::vector<QString>& rowLabels = m_figure.rowTickLabels.empty() ? labels : m_figure.rowTickLabels;
    const int lastRow = std::min(static_cast<int>(rowLabels.size()), static_cast<int>(std::ceil(window.bottom())));
    double widest = fm.height() * 0.75;
    for (int n = first; n < last; ++n)
        widest = std::max(widest, fm.horizontalAdvance(labels[n]) + 0.3 * f);
    const int stepX = tickLabelStep(cw, widest);
    const int stepY = tickLabelStep(ch, fm.height() * 0.9);
    for (int n = (first + stepX - 1) / stepX * stepX; n < last; n += stepX) {
        const double x = plot.left() + (n + 0.5 - window.left()) * cw;
        if (stepX > 1) {
            painter.setPen(QPen(style.axis, 1));
            painter.drawLine(QPointF(x, plot.bottom()), QPointF(x, plot.bottom() + 0.25 * f));
        }
        painter.setPen(style.text);
        const double w = std::max(cw, widest);
        painter.drawText(QRectF(x - w / 2, plot.bottom() + 0.3 * f, w, fm.height()), Qt::AlignCenter, labels[n]);
    }
    for (int m = (firstRow + stepY - 1) / stepY * stepY; m < lastRow; m += stepY) {
        const double y = plot.top() + (m + 0.5 - window.top()) * ch;
        if (stepY > 1) {
            painter.setPen(QPen(style.axis, 1));
            painter.drawLine(QPointF(plot.left() - 0.25 * f, y), QPointF(plot.left(), y));
        }
        painter.setPen(style.text);
        const double w = cellLabelWidth(style);
        painter.drawText(QRectF(plot.left() - w - 0.4 * f, y - fm.height() / 2, w, fm.height()),
                         Qt::AlignRight | Qt::AlignVCenter, fm.elidedText(rowLabels[m], Qt::ElideRight, w));
    }
}

void HeatmapPainter::paintBars(QPainter& painter, const Layout& l, const PictureStyle& style) const
{
    const double headerHeight = l.headers.empty() ? 0 : l.headers.front().height();
    for (size_t j = 0; j < l.bars.size(); ++j) {
        const int i = l.barPanels[j];
        if (!sharesScale(i)) {
            paintBar(painter, l.bars[j], m_scales[i], m_figure.panels[i].valueLabel, m_masked[i], headerHeight, style);
            continue;
        }
        // The shared bar: labelled as the group's first panel, with the masked swatch if any of the group masks.
        int first = -1;
        bool masked = false;
        for (int p = 0; p < panelCount(); ++p)
            if (sharesScale(p)) {
                first = first < 0 ? p : first;
                masked = masked || m_masked[p];
            }
        paintBar(painter, l.bars[j], m_scales[i], m_figure.panels[first].valueLabel, masked, headerHeight, style);
    }
}

int HeatmapPainter::hitTest(const Layout& layout, const QRectF& windowIn, const QPointF& pos, int* m, int* n) const
{
    const QRectF window = windowIn.isEmpty() ? fullWindow() : windowIn;
    for (int i = 0; i < static_cast<int>(layout.plots.size()) && i < panelCount(); ++i) {
        const QRectF& plot = layout.plots[i];
        if (!plot.contains(pos) || !m_figure.panels[i].matrix)
            continue;
        const int col =
            static_cast<int>(std::floor(window.left() + (pos.x() - plot.left()) / plot.width() * window.width()));
        const int row =
            static_cast<int>(std::floor(window.top() + (pos.y() - plot.top()) / plot.height() * window.height()));
        const Matrix& mat = *m_figure.panels[i].matrix;
        if (row < 0 || col < 0 || row >= mat.rows || col >= mat.cols)
            return -1;
        *m = row;
        *n = col;
        return i;
    }
    return -1;
}

} // namespace plab::ui
