// The Your model tab's Entropy page: the curves of attention entropy against length, one per layer or, when asked,
// one per layer type (core's hfEntropyByLayerType).
#pragma once

#include <QWidget>

class QCheckBox;

namespace plab::ui {

class CurvePlot;

class HfEntropyPage : public QWidget {
    Q_OBJECT
public:
    explicit HfEntropyPage(QWidget* parent = nullptr);
    CurvePlot* plot() const { return m_plot; }
    // Whether the curves are grouped by layer type (sliding, full, chunked) instead of one per layer.
    bool byLayerType() const;
    void setByLayerType(bool grouped);
    // The choice is offered only where a folder mixes layer types.
    void setGroupingAvailable(bool available);

Q_SIGNALS:
    void groupingChanged(bool byLayerType);

private:
    CurvePlot* m_plot = nullptr;
    QCheckBox* m_byType = nullptr;
    bool m_available = false;
};

} // namespace plab::ui
