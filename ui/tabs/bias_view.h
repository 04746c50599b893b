// The Bias tab: one head's bias matrix with zoom and pan, and a thumbnail per head.
#pragma once

#include "painting/heatmap_painter.h"
#include "tabs/view_base.h"

class QCheckBox;

namespace plab::ui {

class HeatmapWidget;
class ThumbnailStrip;

class BiasView : public ViewBase {
    Q_OBJECT
public:
    explicit BiasView(QWidget* parent = nullptr);
    QString viewId() const override { return QStringLiteral("bias"); }
    QString viewTitle() const override { return tr("Bias"); }
    bool hasPicture() const override;
    void paintPicture(QPainter& painter, const QRectF& target, const PictureStyle& style) const override;
    void writeData(std::ostream& out, DataFormat format) const override;
    nlohmann::json saveState() const override;
    void restoreState(const nlohmann::json& state) override;
    void setDark(bool dark) override;
    void resetZoom() override;

    HeatmapWidget* heatmap() const { return m_heatmap; }
    ThumbnailStrip* thumbnails() const { return m_strip; }
    const BiasResult& result() const { return m_result; }
    void setBuckets(bool buckets);

protected:
    void refresh() override;

private:
    // A result with its picture already coloured on the worker (16M cells at N = 4096 would stall the GUI thread).
    struct Prepared {
        BiasResult result;
        HeatmapPainter heatmap;
        std::vector<QImage> thumbnails;
        ColorScale thumbnailScale;
    };
    void showResult(Prepared prepared);
    void setThumbnailPalette(bool dark); // moves the thumbnails' masked cells to the palette's mask colour
    ColorScale m_thumbnailScale;
    HeatmapWidget* m_heatmap = nullptr;
    ThumbnailStrip* m_strip = nullptr;
    QCheckBox* m_buckets = nullptr;
    ViewJob<Prepared> m_job;
    BiasResult m_result;
};

} // namespace plab::ui
