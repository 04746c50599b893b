// The Your model tab's attention page widgets: the layer x head grid of thumbnails and the token-zoomed map.
#pragma once

#include "tabs/heatmap_widget.h"
#include "workers/hf_compute.h"

#include <QImage>
#include <QRectF>

#include <vector>

namespace plab::ui {

// Every layer x head as a small map; a click picks one.
class HeadGrid : public QWidget {
    Q_OBJECT
public:
    explicit HeadGrid(QWidget* parent = nullptr);
    // layers x heads images, layer-major.
    void setImages(int layers, int heads, std::vector<QImage> images);
    // One letter per layer (core's hfLayerStrip: S sliding, F full, C chunked) beside its number, when the folder has
    // layers other than full ones; empty: numbers alone.
    void setLayerTypes(const QString& strip);
    void setCurrent(int layer, int head);
    int layers() const { return m_layers; }
    int heads() const { return m_heads; }
    int cellCount() const { return static_cast<int>(m_images.size()); }
    QRect cellRect(int layer, int head) const;
    QSize sizeHint() const override { return {240, 240}; }
    QSize minimumSizeHint() const override { return {160, 160}; }

Q_SIGNALS:
    void cellClicked(int layer, int head);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;

private:
    double cellSide() const;
    double labelWidth() const;
    QString layerLabel(int layer) const;
    QString m_layerTypes;
    int m_layers = 0, m_heads = 0;
    int m_currentLayer = 0, m_currentHead = 0;
    std::vector<QImage> m_images;
};

// A real model's attention map over its T tokens, zoomed and panned in token coordinates: the wheel zooms about the
// cursor, a drag pans, a double-click shows every token. Each change of the window is announced (tokenWindowChanged)
// and the view answers with showComposed: a matrix of about one cell per pixel for that window, made from the maps
// it holds, never the T x T map itself.
class TokenMapWidget : public HeatmapWidget {
    Q_OBJECT
public:
    explicit TokenMapWidget(QWidget* parent = nullptr);
    void setTokenCount(int tokens); // shows every token
    int tokenCount() const { return m_tokens; }
    // x = key n, y = query m, in tokens; square, at least kMinSpan tokens, inside [0, T].
    QRectF tokenWindow() const { return m_tokenWindow; }
    void setTokenWindow(const QRectF& window);
    void zoomTokens(double factor); // about the window's centre; > 1 zooms in
    void showAllTokens();
    // How many cells per side a composed picture needs: about one per pixel of the plot (64 to 1024).
    int cellsPerSide() const;
    // `figure`'s matrix covers the tokens of `geometry`; shown with the token window mapped onto its cells.
    void showComposed(HeatmapFigure figure, const HfAttentionMap& geometry);
    const HfAttentionMap& composedGeometry() const { return m_geometry; }
    static constexpr double kMinSpan = 8;

Q_SIGNALS:
    void tokenWindowChanged();

protected:
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    QRectF plotRect() const;
    void applyWindow(); // the token window onto the composed matrix's cells
    int m_tokens = 0;
    QRectF m_tokenWindow;
    HfAttentionMap m_geometry; // the composed matrix's tokens (no values)
    bool m_panning = false;
    QPointF m_panStart;
    QRectF m_panWindow;
};

} // namespace plab::ui
