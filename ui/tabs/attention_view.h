// The Attention on text tab: a trained model's attention per layer and head on a text, and each query's entropy.
#pragma once

#include "tabs/view_base.h"
#include "workers/model_compute.h"

#include <functional>
#include <vector>

class QComboBox;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;
class QStackedWidget;

namespace plab::ui {

class CurvePlot;
class HeatmapWidget;
class ModelPrompt;

// Attention of a trained model on text: probabilities per layer and head with the characters on the axes, and the
// entropy of every query row, also past the training context.
class AttentionView : public ViewBase {
    Q_OBJECT
public:
    explicit AttentionView(QWidget* parent = nullptr);
    QString viewId() const override { return QStringLiteral("attention"); }
    QString viewTitle() const override { return tr("Attention on text"); }
    bool hasPicture() const override;
    QSize defaultImageSize() const override { return {1000, 1150}; }
    void paintPicture(QPainter& painter, const QRectF& target, const PictureStyle& style) const override;
    void writeData(std::ostream& out, DataFormat format) const override;
    nlohmann::json saveState() const override;
    void restoreState(const nlohmann::json& state) override;
    void setDark(bool dark) override;
    void resetZoom() override;

    // Listed last; becomes the current model when `select` (or when it is the first).
    void addModel(const SharedModel& model, bool select = true);
    int modelCount() const { return static_cast<int>(m_models.size()); }
    const std::vector<SharedModel>& models() const { return m_models; }
    void selectModel(int index); // 0-based, as listed
    int selectedModel() const;   // -1 when there is none
    // Shown instead of the attention while there is no model: a message and "Train a demo model now".
    ModelPrompt* modelPrompt() const { return m_prompt; }
    bool isShowingModelPrompt() const;
    bool loadModel(const QString& path, QString* error = nullptr);
    // Writes model `index` (0-based, as listed) as a .safetensors checkpoint; false with `error` set on failure.
    bool saveModel(int index, const QString& path, QString* error = nullptr);
    // Models that exist only in memory (trained here, never saved): a session cannot bring them back.
    int unsavedModelCount() const;
    // Loads the checkpoints the last restoreState() named (those not loaded yet; relative names from `folder`) and
    // selects its current model. Run once the whole session is accepted; returns one message per problem (a file
    // missing or corrupt, a chosen model that did not come back).
    QStringList loadSessionCheckpoints(const QString& folder = QString());
    void setText(const QString& text);
    void setLayer(int layer); // 0-based
    void setRepeatTo(int length);
    // What the heatmap shows: attention weights, positional bias, or contextual positions (cope models only; for
    // another model it falls back to the weights).
    void setTextView(TextView view);
    TextView textView() const;
    bool canShowPositions() const; // the chosen model has contextual positions
    const AttentionResult& result() const { return m_result; }
    HeatmapWidget* heatmap() const { return m_heatmap; }
    std::function<void(const SharedModel&)> onModelLoaded; // shares checkpoints loaded here with other views

protected:
    void refresh() override;

private:
    QWidget* buildControls(); // the model, its buttons, the text, layer and repeat
    QWidget* buildPages();    // the prompt (no model yet) or the attention and row entropies
    void loadModelFromDialog();
    void saveModelFromDialog(); // the chosen model
    std::vector<uint8_t> tokens() const;
    void drawResult();                                // the heatmap and row entropies of m_result, as the chooser says
    void updateShowChoices();                         // "contextual positions" enabled only for a model that has them
    int modelIndexForFile(const QString& file) const; // -1 when no model came from or went to `file`
    std::vector<SharedModel> m_models;
    QStringList m_sessionCheckpoints; // named by the last restoreState(), loaded by loadSessionCheckpoints()
    QString m_sessionModel;
    QComboBox* m_modelChoice = nullptr;
    QPushButton* m_save = nullptr;
    QPlainTextEdit* m_text = nullptr;
    QSpinBox* m_layer = nullptr;
    QSpinBox* m_repeat = nullptr;
    QComboBox* m_show = nullptr; // weights | bias | positions (core's TextView order)
    QLabel* m_info = nullptr;
    QStackedWidget* m_pages = nullptr; // the prompt (no model yet) or the attention
    ModelPrompt* m_prompt = nullptr;
    HeatmapWidget* m_heatmap = nullptr;
    CurvePlot* m_entropy = nullptr;
    ViewJob<AttentionResult> m_job;
    AttentionResult m_result;
};

} // namespace plab::ui
