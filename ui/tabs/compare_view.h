// The Compare tab: 2 to 4 schemes' bias matrices side by side, with an optional difference A − B.
#pragma once

#include "painting/heatmap_painter.h"
#include "tabs/view_base.h"

#include <utility>
#include <vector>

class QCheckBox;
class QComboBox;
class QHBoxLayout;
class QPushButton;
class QSpinBox;

namespace plab::ui {

class HeatmapWidget;

class CompareView : public ViewBase {
    Q_OBJECT
public:
    explicit CompareView(QWidget* parent = nullptr);
    QString viewId() const override { return QStringLiteral("compare"); }
    QString viewTitle() const override { return tr("Compare"); }
    bool hasPicture() const override;
    QSize defaultImageSize() const override;
    void paintPicture(QPainter& painter, const QRectF& target, const PictureStyle& style) const override;
    void writeData(std::ostream& out, DataFormat format) const override;
    nlohmann::json saveState() const override;
    void restoreState(const nlohmann::json& state) override;
    void setDark(bool dark) override;
    void resetZoom() override;

    void setSchemes(const QStringList& names); // 2..4 catalogue names
    QStringList schemes() const;
    // The A − B panel: on or off, and which of the shown schemes (0-based) are A and B.
    void setDifference(bool shown, int a = 0, int b = 1);
    bool differenceShown() const;
    std::pair<int, int> differencePair() const;
    HeatmapWidget* heatmap() const { return m_heatmap; }
    const CompareResult& result() const { return m_result; }

protected:
    void refresh() override;

private:
    QHBoxLayout* buildSchemeBar();     // how many schemes, which, shared scale, reset zoom
    QHBoxLayout* buildDifferenceBar(); // the difference A - B and its two sides
    void updateDifferenceChoices();    // the A and B lists follow the shown schemes
    QSpinBox* m_count = nullptr;
    std::vector<QComboBox*> m_choices;
    QCheckBox* m_shared = nullptr;
    QPushButton* m_reset = nullptr;
    QCheckBox* m_difference = nullptr;
    QComboBox* m_diffA = nullptr;
    QComboBox* m_diffB = nullptr;
    HeatmapWidget* m_heatmap = nullptr;
    struct Prepared {
        CompareResult result;
        HeatmapPainter heatmap; // coloured on the worker
    };
    ViewJob<Prepared> m_job;
    CompareResult m_result;
};

} // namespace plab::ui
