// The "Your model" tab: a Hugging Face folder's summary card, its attention on a text (tokens on the axes, a layer x
// head grid), entropy against length per layer and the first-token sinks per layer and head.
#pragma once

#include "tabs/view_base.h"
#include "workers/hf_compute.h"

#include <QElapsedTimer>
#include <QImage>

#include <optional>
#include <utility>
#include <vector>

class QCheckBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QListWidget;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;
class QTabWidget;

namespace plab::ui {

class CurvePlot;
class HeatmapWidget;

// Every layer x head as a small map; a click picks one.
class HeadGrid : public QWidget {
    Q_OBJECT
public:
    explicit HeadGrid(QWidget* parent = nullptr);
    // layers x heads images, layer-major.
    void setImages(int layers, int heads, std::vector<QImage> images);
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
    int m_layers = 0, m_heads = 0;
    int m_currentLayer = 0, m_currentHead = 0;
    std::vector<QImage> m_images;
};

class HfModelView : public ViewBase {
    Q_OBJECT
public:
    enum Page { AttentionPage, EntropyPage, SinksPage, MethodsPage };

    explicit HfModelView(QWidget* parent = nullptr);
    QString viewId() const override { return QStringLiteral("model"); }
    QString viewTitle() const override { return tr("Your model"); }
    bool hasPicture() const override;
    QString pictureTitle() const override;
    void paintPicture(QPainter& painter, const QRectF& target, const PictureStyle& style) const override;
    void writeData(std::ostream& out, DataFormat format) const override;
    nlohmann::json saveState() const override;
    void restoreState(const nlohmann::json& state) override;
    void setDark(bool dark) override;
    void resetZoom() override;

    // Loads the folder in the background; the card, and then the pages, follow. openFolderDialog asks for it.
    void openFolder(const QString& folder);
    void openFolderDialog();
    const HfModelPtr& model() const { return m_model; }
    // The card's (label, value) rows as shown.
    const std::vector<std::pair<QString, QString>>& summaryRows() const { return m_summaryRows; }
    void setText(const QString& text);
    void setLayerHead(int layer, int head); // 0-based
    void setPage(Page page);
    void setSinkInScale(bool include);
    const HfAttentionResult& attention() const { return m_attention; }
    const HfMapResult& map() const { return m_map; }
    HeadGrid* grid() const { return m_grid; }
    HeatmapWidget* heatmap() const { return m_heatmap; }
    QWidget* summaryCard() const { return m_card; }
    // Evaluate under methods: the text file (empty: the default corpus), then evaluate with the ticked methods.
    void setMethodsTextFile(const QString& path);
    void setMethodsLengths(const QString& lengths); // "16,32,64"; empty: the model's defaults
    void setMethodsTokensPerLength(int tokens);     // 0: all
    void evaluateMethods();
    const HfMethodsResult& methodsResult() const { return m_methods; }
    CurvePlot* methodsPlot() const { return m_methodsPlot; }

protected:
    void refresh() override;

private:
    QWidget* buildControls();
    QWidget* buildPages();
    QWidget* buildMethodsPage();
    void showSummary();
    void startMap();
    void showMap();
    void showGrid();
    QString noModelHint() const;

    HfModelPtr m_model;
    std::vector<std::pair<QString, QString>> m_summaryRows;
    HfAttentionResult m_attention;
    HfMapResult m_map;
    HfMethodsResult m_methods;
    QString m_methodsText;
    QElapsedTimer m_methodsClock;
    QString m_openingFolder;
    std::optional<std::pair<int, int>> m_wantedLayerHead; // restored before the model's size is known

    QPushButton* m_open = nullptr;
    QWidget* m_card = nullptr;
    QFormLayout* m_cardRows = nullptr;
    QLabel* m_cardTitle = nullptr;
    QPlainTextEdit* m_text = nullptr;
    QSpinBox* m_repeat = nullptr;
    QSpinBox* m_layer = nullptr;
    QSpinBox* m_head = nullptr;
    QSpinBox* m_from = nullptr;
    QSpinBox* m_to = nullptr;
    QCheckBox* m_sinkInScale = nullptr;
    QTabWidget* m_pages = nullptr;
    HeadGrid* m_grid = nullptr;
    HeatmapWidget* m_heatmap = nullptr;
    CurvePlot* m_entropy = nullptr;
    HeatmapWidget* m_sinks = nullptr;
    QListWidget* m_methodList = nullptr;
    QLineEdit* m_lengths = nullptr;
    QSpinBox* m_tokensPerLength = nullptr;
    QLabel* m_methodsSource = nullptr;
    QLabel* m_methodsStatus = nullptr;
    QPushButton* m_evaluate = nullptr;
    CurvePlot* m_methodsPlot = nullptr;

    ViewJob<HfOpenResult> m_openJob;
    ViewJob<HfAttentionResult> m_attentionJob;
    ViewJob<HfMapResult> m_mapJob;
    ViewJob<HfMethodsResult> m_methodsJob;
};

} // namespace plab::ui
