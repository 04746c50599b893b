// The Your model tab's attention page widgets: the layer x head grid of thumbnails and the token-zoomed map.
#include "tabs/hf_attention_widgets.h"

#include <QMouseEvent>
#include <QPainter>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace plab::ui {

// ---- HeadGrid -----------------------------------------------------------------------------------------------

HeadGrid::HeadGrid(QWidget* parent) : QWidget(parent)
{
    setMouseTracking(false);
}

void HeadGrid::setImages(int layers, int heads, std::vector<QImage> images)
{
    m_layers = layers;
    m_heads = heads;
    m_images = std::move(images);
    update();
}

void HeadGrid::setCurrent(int layer, int head)
{
    m_currentLayer = layer;
    m_currentHead = head;
    update();
}

void HeadGrid::setLayerTypes(const QString& strip)
{
    // A folder of full layers alone keeps plain numbers.
    m_layerTypes = strip.contains(QLatin1Char('S')) || strip.contains(QLatin1Char('C')) ? strip : QString();
    setToolTip(m_layerTypes.isEmpty() ? tr("Layers down, heads across; click a map to open it.")
                                      : tr("Layers down, heads across; click a map to open it. Each layer's type: S "
                                           "sliding window, F full, C chunked."));
    update();
}

QString HeadGrid::layerLabel(int layer) const
{
    const int first = figureIndexBase() == IndexBase::One ? 1 : 0;
    if (layer >= m_layerTypes.size())
        return QString::number(layer + first);
    return QStringLiteral("%1 %2").arg(layer + first).arg(m_layerTypes.at(layer));
}

double HeadGrid::labelWidth() const
{
    return QFontMetricsF(font()).horizontalAdvance(m_layerTypes.isEmpty() ? QStringLiteral("00")
                                                                            : QStringLiteral("00 S")) + 6;
}

double HeadGrid::cellSide() const
{
    if (m_layers == 0 || m_heads == 0)
        return 0;
    const QFontMetricsF fm(font());
    const double labelW = labelWidth(), labelH = fm.height() + 2;
    return std::max(4.0, std::min((width() - labelW) / m_heads, (height() - labelH) / m_layers));
}

QRect HeadGrid::cellRect(int layer, int head) const
{
    const QFontMetricsF fm(font());
    const double side = cellSide();
    const double left = labelWidth(), top = fm.height() + 2;
    return QRectF(left + head * side, top + layer * side, side, side).toRect();
}

void HeadGrid::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.fillRect(rect(), palette().base());
    if (m_images.empty()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect().adjusted(8, 8, -8, -8), Qt::AlignCenter | Qt::TextWordWrap,
                   tr("One small map per layer and head appears here."));
        return;
    }
    const int first = figureIndexBase() == IndexBase::One ? 1 : 0;
    p.setPen(palette().color(QPalette::Text));
    for (int h = 0; h < m_heads; ++h) {
        const QRect r = cellRect(0, h);
        p.drawText(QRect(r.left(), 0, r.width(), r.top()), Qt::AlignCenter, QString::number(h + first));
    }
    for (int l = 0; l < m_layers; ++l) {
        const QRect r = cellRect(l, 0);
        p.drawText(QRect(0, r.top(), r.left() - 3, r.height()), Qt::AlignRight | Qt::AlignVCenter, layerLabel(l));
        for (int h = 0; h < m_heads; ++h) {
            const QRect c = cellRect(l, h).adjusted(1, 1, -1, -1);
            p.drawImage(c, m_images[static_cast<size_t>(l) * m_heads + h]);
        }
    }
    p.setPen(QPen(palette().color(QPalette::Highlight), 2));
    p.setBrush(Qt::NoBrush);
    p.drawRect(cellRect(m_currentLayer, m_currentHead).adjusted(0, 0, -1, -1));
}

void HeadGrid::mousePressEvent(QMouseEvent* event)
{
    for (int l = 0; l < m_layers; ++l)
        for (int h = 0; h < m_heads; ++h)
            if (cellRect(l, h).contains(event->position().toPoint())) {
                setCurrent(l, h);
                Q_EMIT cellClicked(l, h);
                return;
            }
}

// ---- TokenMapWidget -----------------------------------------------------------------------------------------

TokenMapWidget::TokenMapWidget(QWidget* parent) : HeatmapWidget(parent) {}

void TokenMapWidget::setTokenCount(int tokens)
{
    m_tokens = tokens;
    m_tokenWindow = QRectF(0, 0, tokens, tokens);
    Q_EMIT tokenWindowChanged();
}

void TokenMapWidget::setTokenWindow(const QRectF& window)
{
    if (m_tokens <= 0)
        return;
    const double full = m_tokens;
    const double side = std::clamp(std::max(window.width(), window.height()), std::min(kMinSpan, full), full);
    QRectF w(window.topLeft(), QSizeF(side, side));
    w.moveLeft(std::clamp(w.left(), 0.0, full - side));
    w.moveTop(std::clamp(w.top(), 0.0, full - side));
    if (w == m_tokenWindow)
        return;
    m_tokenWindow = w;
    applyWindow(); // the picture moves at once; the view recomposes it for the new window
    Q_EMIT tokenWindowChanged();
}

void TokenMapWidget::zoomTokens(double factor)
{
    const QPointF c = m_tokenWindow.center();
    const QSizeF s = m_tokenWindow.size() / factor;
    setTokenWindow(QRectF(c.x() - s.width() / 2, c.y() - s.height() / 2, s.width(), s.height()));
}

void TokenMapWidget::showAllTokens()
{
    setTokenWindow(QRectF(0, 0, m_tokens, m_tokens));
}

QRectF TokenMapWidget::plotRect() const
{
    if (heatmap().isEmpty())
        return {};
    const HeatmapPainter::Layout layout = heatmap().layout(rect(), screenStyle());
    return layout.plots.empty() ? QRectF() : layout.plots.front();
}

int TokenMapWidget::cellsPerSide() const
{
    const QRectF plot = plotRect();
    const double side = plot.isEmpty() ? std::min(width(), height()) * 0.8 : std::min(plot.width(), plot.height());
    return std::clamp(static_cast<int>(std::ceil(side)), 64, 1024);
}

void TokenMapWidget::showComposed(HeatmapFigure figure, const HfAttentionMap& geometry)
{
    m_geometry = geometry;
    m_geometry.values.clear();
    setFigure(std::move(figure));
    applyWindow();
}

void TokenMapWidget::applyWindow()
{
    const HfAttentionMap& g = m_geometry;
    if (g.rows == 0 || g.cols == 0)
        return;
    const double sx = static_cast<double>(g.colEnd - g.colBegin) / g.cols;
    const double sy = static_cast<double>(g.rowEnd - g.rowBegin) / g.rows;
    const QRectF& w = m_tokenWindow;
    setWindow(QRectF((w.left() - g.colBegin) / sx, (w.top() - g.rowBegin) / sy, w.width() / sx, w.height() / sy));
}

void TokenMapWidget::wheelEvent(QWheelEvent* event)
{
    const QRectF plot = plotRect();
    if (plot.isEmpty() || !plot.contains(event->position()) || m_tokens <= 0) {
        event->ignore();
        return;
    }
    // Zoom about the token under the cursor: it stays under the cursor.
    const double factor = std::pow(1.25, event->angleDelta().y() / 120.0);
    const double fx = (event->position().x() - plot.left()) / plot.width();
    const double fy = (event->position().y() - plot.top()) / plot.height();
    const QRectF& w = m_tokenWindow;
    const QPointF at(w.left() + fx * w.width(), w.top() + fy * w.height());
    const double side = w.width() / factor;
    setTokenWindow(QRectF(at.x() - fx * side, at.y() - fy * side, side, side));
    event->accept();
}

void TokenMapWidget::mousePressEvent(QMouseEvent* event)
{
    const QRectF plot = plotRect();
    if (event->button() == Qt::LeftButton && !plot.isEmpty() && plot.contains(event->position())) {
        m_panning = true;
        m_panStart = event->position();
        m_panWindow = m_tokenWindow;
        setCursor(Qt::ClosedHandCursor);
    }
}

void TokenMapWidget::mouseMoveEvent(QMouseEvent* event)
{
    if (m_panning) {
        const QRectF plot = plotRect();
        if (!plot.isEmpty()) {
            const QPointF d = event->position() - m_panStart;
            setTokenWindow(m_panWindow.translated(-d.x() / plot.width() * m_panWindow.width(),
                                                  -d.y() / plot.height() * m_panWindow.height()));
        }
    }
    HeatmapWidget::mouseMoveEvent(event); // the hover read-out (the base widget never drags: it saw no press)
}

void TokenMapWidget::mouseReleaseEvent(QMouseEvent*)
{
    m_panning = false;
    unsetCursor();
}

void TokenMapWidget::mouseDoubleClickEvent(QMouseEvent*)
{
    showAllTokens();
}

void TokenMapWidget::resizeEvent(QResizeEvent* event)
{
    HeatmapWidget::resizeEvent(event);
    if (m_tokens > 0)
        Q_EMIT tokenWindowChanged(); // another plot size: another number of cells per side
}

} // namespace plab::ui
