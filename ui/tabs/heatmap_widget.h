// HeatmapWidget (one to four heatmaps with zoom, pan and hover read-out) and ThumbnailStrip (one thumbnail per head).
#pragma once

#include "painting/heatmap_painter.h"

#include <QWidget>

#include <vector>

namespace plab::ui {

class HeatmapWidget : public QWidget {
    Q_OBJECT
public:
    explicit HeatmapWidget(QWidget* parent = nullptr);

    // Keeps the zoom window when the matrix keeps its size (a parameter change), resets it otherwise.
    void setFigure(HeatmapFigure figure);
    // The same with the colouring done already (on a worker thread).
    void setHeatmap(HeatmapPainter heatmap);
    const HeatmapPainter& heatmap() const { return m_painter; }
    QRectF window() const { return m_window; }
    void setWindow(const QRectF& window); // clamped to the matrix
    void resetZoom();
    void zoom(double factor); // about the centre; > 1 zooms in
    void setDark(bool dark);
    bool isDark() const { return m_dark; }
    PictureStyle screenStyle() const;
    void setMessage(const QString& message); // shown over the picture (errors, "computing…")
    // Shown centred instead of a picture while there is none (no figure and no message): what to do to get one.
    void setEmptyHint(const QString& hint);
    QString emptyHint() const { return m_emptyHint; }
    bool isShowingHint() const { return m_painter.isEmpty() && m_message.isEmpty() && !m_emptyHint.isEmpty(); }

    QSize sizeHint() const override { return {640, 560}; }
    QSize minimumSizeHint() const override { return {240, 200}; }

Q_SIGNALS:
    void hovered(int panel, int m, int n, float value);
    void hoverLeft();

protected:
    void paintEvent(QPaintEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;

private:
    QRectF plotUnder(const QPointF& pos) const;
    HeatmapPainter m_painter;
    QRectF m_window;
    bool m_dark = false;
    bool m_dragging = false;
    QPointF m_dragStart;
    QRectF m_dragWindow;
    QString m_message;
    QString m_emptyHint;
};

class ThumbnailStrip : public QWidget {
    Q_OBJECT
public:
    explicit ThumbnailStrip(QWidget* parent = nullptr);
    // One image per head (already coloured on a scale shared by all heads).
    void setThumbnails(std::vector<QImage> images);
    // Switches the thumbnails' masked cells to another mask colour (a palette change).
    void replaceColor(QRgb from, QRgb to);
    void setCurrent(int head);
    int current() const { return m_current; }
    int count() const { return static_cast<int>(m_images.size()); }
    QRect thumbnailRect(int head) const;
    QSize sizeHint() const override;

Q_SIGNALS:
    void headClicked(int head); // 0-based

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;

private:
    std::vector<QImage> m_images;
    int m_current = 0;
};

} // namespace plab::ui
