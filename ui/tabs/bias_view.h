// The Bias tab: one head's bias matrix with zoom and pan, and a thumbnail per head.
#pragma once

#include "painting/heatmap_painter.h"
#include "tabs/view_base.h"
#include "workers/model_compute.h"

#include "views/fire_curves.h"

#include <vector>

class QCheckBox;
class QComboBox;
class QLabel;
class QStackedWidget;

namespace plab::ui {

class CurvePlot;
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

    // FIRE's learned curve: for scheme fire the view can show, instead of the matrix, the learned bias against the
    // distance of a trained fire model (one the app keeps or the user opens) beside the untrained initialisation, for
    // the panel's head at row length - 1; exported as a curve chart and its table (core's fireCurvesTable).
    void addModel(const SharedModel& model, bool select = true); // models of other schemes are not offered
    void setCurveShown(bool shown);
    bool isCurveShown() const; // the curve page is up (scheme fire and the box ticked)
    QCheckBox* curveBox() const { return m_curve; }
    QComboBox* modelBox() const { return m_models; }
    CurvePlot* curvePlot() const { return m_curvePlot; }
    const FireCurves& curves() const { return m_curves; }

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
    void updateCurve();                  // the curve of the chosen model (or the untrained one) for the panel
    void openModel();                    // a checkpoint from a file dialog
    SharedModel chosenModel() const;     // invalid: the untrained curve alone
    ColorScale m_thumbnailScale;
    HeatmapWidget* m_heatmap = nullptr;
    ThumbnailStrip* m_strip = nullptr;
    QCheckBox* m_buckets = nullptr;
    QCheckBox* m_curve = nullptr;
    QStackedWidget* m_pages = nullptr; // the matrix | the curve
    QComboBox* m_models = nullptr;
    QLabel* m_curveNote = nullptr;
    CurvePlot* m_curvePlot = nullptr;
    std::vector<SharedModel> m_fireModels; // index i is the combo's item i + 1 (item 0: untrained only)
    FireCurves m_curves;
    ViewJob<Prepared> m_job;
    BiasResult m_result;
};

} // namespace plab::ui
