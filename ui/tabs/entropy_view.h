// The Entropy tab: attention entropy against length, one curve per scheme (q/k zero, random or from a model).
#pragma once

#include "tabs/view_base.h"
#include "workers/model_compute.h"

#include <vector>

class QComboBox;
class QSpinBox;
class QStackedWidget;
class QVBoxLayout;

namespace plab::ui {

class ModelPrompt;

class EntropyView : public CurveViewBase {
    Q_OBJECT
public:
    explicit EntropyView(QWidget* parent = nullptr);
    QString viewId() const override { return QStringLiteral("entropy"); }
    QString viewTitle() const override { return tr("Entropy"); }
    bool hasPicture() const override;
    QSize defaultImageSize() const override { return {1100, 720}; }
    void writeData(std::ostream& out, DataFormat format) const override;
    nlohmann::json saveState() const override;
    void restoreState(const nlohmann::json& state) override;

    void setSchemes(const QStringList& names);
    QStringList schemes() const;
    void setMaxLength(int length);
    void setQk(QkSource qk);
    // Layer (1-based) of the model source; defaults to the chosen model's last layer.
    int modelLayer() const;
    void setModelLayer(int layer);
    // Listed last; becomes the model source's current model when `select` (or when it is the first).
    void addModel(const SharedModel& model, bool select = true);
    int modelCount() const { return static_cast<int>(m_models.size()); }
    // "q/k from a trained model" without a model: a message and "Train a demo model now" instead of the plot.
    ModelPrompt* modelPrompt() const { return m_prompt; }
    bool isShowingModelPrompt() const;
    EntropyRequest request() const;
    EntropyMeasure measure() const;
    const EntropyResult& result() const { return m_result; }

protected:
    void refresh() override;

private:
    QVBoxLayout* buildOptions();  // q and k source, model and layer, seed, lengths, measure
    QStackedWidget* buildPages(); // the plot, or the prompt for a model source without a model
    QListWidget* m_schemes = nullptr;
    QComboBox* m_qk = nullptr;
    QSpinBox* m_seed = nullptr;
    QComboBox* m_maxLength = nullptr;
    QComboBox* m_measure = nullptr;
    QComboBox* m_modelChoice = nullptr;
    QSpinBox* m_layer = nullptr;       // 1-based layer of the model source
    QStackedWidget* m_pages = nullptr; // the plot, or the prompt for a model source without a model
    ModelPrompt* m_prompt = nullptr;
    void updatePages();
    std::vector<SharedModel> m_models;
    ViewJob<EntropyResult> m_job;
    EntropyResult m_result;
};

} // namespace plab::ui
