// Interactive heatmaps: the shared HeatmapPainter on screen, wheel zoom about the cursor, drag to pan, hover cells.
#include "tabs/heatmap_widget.h"

#include <QFontInfo>
#include <QMouseEvent>
#include <QPainter>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace plab::ui {

HeatmapWidget::HeatmapWidget(QWidget* parent) : QWidget(parent)
{
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setFocusPolicy(Qt::StrongFocus);
}

void HeatmapWidget::setFigure(HeatmapFigure figure)
{
    const int oldSize = m_painter.matrixSize();
    figure.dark = m_dark;
    m_painter.setFigure(std::move(figure));
    if (m_painter.matrixSize() != oldSize || m_window.isEmpty())
        m_window = m_painter.fullWindow();
    m_message.clear();
    update();
}

void HeatmapWidget::setHeatmap(HeatmapPainter heatmap)
{
    const int oldSize = m_painter.matrixSize();
    m_painter = std::move(heatmap);
    m_painter.setDark(m_dark); // the palette may have changed while the worker coloured it
    if (m_painter.matrixSize() != oldSize || m_window.isEmpty())
        m_window = m_painter.fullWindow();
    m_message.clear();
    update();
}

void HeatmapWidget::setWindow(const QRectF& window)
{
    const QRectF full = m_painter.fullWindow();
    QRectF w = window;
    // At least 4 cells visible, at most the whole matrix, square like the plot.
    const double side = std::clamp(std::max(w.width(), w.height()), std::min(4.0, full.width()), full.width());
    w.setSize(QSizeF(side, side));
    w.moveLeft(std::clamp(w.left(), full.left(), full.right() - side));
    w.moveTop(std::clamp(w.top(), full.top(), full.bottom() - side));
    m_window = w;
    update();
}

void HeatmapWidget::resetZoom()
{
    m_window = m_painter.fullWindow();
    update();
}

void HeatmapWidget::zoom(double factor)
{
    const QPointF c = m_window.center();
    const QSizeF s = m_window.size() / factor;
    setWindow(QRectF(c.x() - s.width() / 2, c.y() - s.height() / 2, s.width(), s.height()));
}

void HeatmapWidget::setDark(bool dark)
{
    m_dark = dark;
    m_painter.setDark(dark);
    update();
}

void HeatmapWidget::setMessage(const QString& message)
{
    m_message = message;
    update();
}

void HeatmapWidget::setEmptyHint(const QString& hint)
{
    m_emptyHint = hint;
    update();
}

PictureStyle HeatmapWidget::screenStyle() const
{
    PictureStyle style = PictureStyle::forSize(size(), m_dark);
    style.font = font();
    style.font.setPixelSize(std::max(10, QFontInfo(font()).pixelSize()));
    style.background = palette().color(QPalette::Base);
    style.text = palette().color(QPalette::Text);
    style.axis = palette().color(QPalette::WindowText);
    return style;
}

void HeatmapWidget::paintEvent(QPaintEvent*)
{
    QPainter painter(this);
    const PictureStyle style = screenStyle();
    painter.fillRect(rect(), style.background);
    if (!m_painter.isEmpty())
        m_painter.paint(painter, rect(), style, m_window);
    if (isShowingHint()) {
        painter.setFont(style.font);
        painter.setPen(palette().color(QPalette::PlaceholderText));
        const double margin = std::max(24.0, width() * 0.12);
        painter.drawText(QRectF(rect()).adjusted(margin, 0, -margin, 0), Qt::AlignCenter | Qt::TextWordWrap,
                         m_emptyHint);
    }
    if (!m_message.isEmpty()) {
        QFont f = style.font;
        f.setBold(true);
        painter.setFont(f);
        const QRectF box = QRectF(rect()).adjusted(width() * 0.1, height() * 0.4, -width() * 0.1, -height() * 0.4);
        painter.setPen(Qt::NoPen);
        painter.setBrush(QColor(255, 240, 200, 235));
        painter.drawRoundedRect(box, 6, 6);
        painter.setPen(QColor(80, 40, 0));
        painter.drawText(box.adjusted(8, 4, -8, -4), Qt::AlignCenter | Qt::TextWordWrap, m_message);
    }
}

QRectF HeatmapWidget::plotUnder(const QPointF& pos) const
{
    const HeatmapPainter::Layout layout = m_painter.layout(rect(), screenStyle());
    for (const QRectF& plot : layout.plots)
        if (plot.contains(pos))
            return plot;
    return {};
}

void HeatmapWidget::wheelEvent(QWheelEvent* event)
{
    const QRectF plot = plotUnder(event->position());
    if (plot.isEmpty() || m_painter.isEmpty()) {
        event->ignore();
        return;
    }
    // Zoom about the cell under the cursor: it stays under the cursor.
    const double factor = std::pow(1.25, event->angleDelta().y() / 120.0);
    const double fx = (event->position().x() - plot.left()) / plot.width();
    const double fy = (event->position().y() - plot.top()) / plot.height();
    const QPointF cell(m_window.left() + fx * m_window.width(), m_window.top() + fy * m_window.height());
    const QSizeF s = m_window.size() / factor;
    setWindow(QRectF(cell.x() - fx * s.width(), cell.y() - fy * s.height(), s.width(), s.height()));
    event->accept();
}

void HeatmapWidget::mousePressEvent(QMouseEvent* event)
{
    if (event->button() == Qt::LeftButton && !plotUnder(event->position()).isEmpty()) {
        m_dragging = true;
        m_dragStart = event->position();
        m_dragWindow = m_window;
        setCursor(Qt::ClosedHandCursor);
    }
}

void HeatmapWidget::mouseMoveEvent(QMouseEvent* event)
{
    if (m_dragging) {
        const QRectF plot = plotUnder(m_dragStart);
        if (!plot.isEmpty()) {
            const QPointF d = event->position() - m_dragStart;
            setWindow(m_dragWindow.translated(-d.x() / plot.width() * m_dragWindow.width(),
                                              -d.y() / plot.height() * m_dragWindow.height()));
        }
    }
    int m = 0, n = 0;
    const int panel = m_painter.hitTest(m_painter.layout(rect(), screenStyle()), m_window, event->position(), &m, &n);
    if (panel >= 0)
        Q_EMIT hovered(panel, m, n, m_painter.figure().panels[panel].matrix->at(m, n));
    else
        Q_EMIT hoverLeft();
}

void HeatmapWidget::mouseReleaseEvent(QMouseEvent*)
{
    m_dragging = false;
    unsetCursor();
}

void HeatmapWidget::mouseDoubleClickEvent(QMouseEvent*)
{
    resetZoom();
}

void HeatmapWidget::leaveEvent(QEvent*)
{
    Q_EMIT hoverLeft();
}

// ---- ThumbnailStrip -----------------------------------------------------------------------------------------

namespace {
constexpr int kThumb = 56;
constexpr int kGap = 8;
constexpr int kLabel = 16;
} // namespace

ThumbnailStrip::ThumbnailStrip(QWidget* parent) : QWidget(parent)
{
    setMinimumHeight(kThumb + kLabel + 2 * kGap);
    setToolTip(tr("One thumbnail per head: click to show that head"));
}

void ThumbnailStrip::setThumbnails(std::vector<QImage> images)
{
    m_images = std::move(images);
    m_current = std::clamp(m_current, 0, std::max(0, count() - 1));
    setMinimumWidth(count() * (kThumb + kGap) + kGap);
    updateGeometry();
    update();
}

void ThumbnailStrip::replaceColor(QRgb from, QRgb to)
{
    for (QImage& image : m_images)
        plab::ui::replaceColor(image, from, to);
    update();
}

void ThumbnailStrip::setCurrent(int head)
{
    m_current = head;
    update();
}

QRect ThumbnailStrip::thumbnailRect(int head) const
{
    return QRect(kGap + head * (kThumb + kGap), kGap, kThumb, kThumb);
}

QSize ThumbnailStrip::sizeHint() const
{
    return QSize(count() * (kThumb + kGap) + kGap, kThumb + kLabel + 2 * kGap);
}

void ThumbnailStrip::paintEvent(QPaintEvent*)
{
    QPainter painter(this);
    painter.fillRect(rect(), palette().color(QPalette::Window));
    for (int h = 0; h < count(); ++h) {
        const QRect r = thumbnailRect(h);
        painter.drawImage(r, m_images[h]);
        painter.setPen(QPen(h == m_current ? palette().color(QPalette::Highlight) : palette().color(QPalette::Mid),
                            h == m_current ? 3 : 1));
        painter.setBrush(Qt::NoBrush);
        painter.drawRect(r.adjusted(-1, -1, 0, 0));
        painter.setPen(palette().color(QPalette::WindowText));
        painter.drawText(QRect(r.left(), r.bottom() + 2, r.width(), kLabel), Qt::AlignCenter, tr("head %1").arg(h + 1));
    }
}

void ThumbnailStrip::mousePressEvent(QMouseEvent* event)
{
    for (int h = 0; h < count(); ++h)
        if (thumbnailRect(h).adjusted(-kGap / 2, 0, kGap / 2, kLabel).contains(event->position().toPoint())) {
            setCurrent(h);
            Q_EMIT headClicked(h);
            return;
        }
}

} // namespace plab::ui
