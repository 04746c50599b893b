// The "Your model" tab: open a folder, the summary card, the controls and pages, the attention page's jobs and map.
#include "tabs/hf_model_view.h"
#include "tabs/retrieval_page.h"

#include "tabs/hf_entropy_page.h"
#include "tabs/scaling_layers_combo.h"

#include "tabs/adaptive_splitter.h"
#include "tabs/continue_text_page.h"
#include "tabs/fitting_combo.h"

#include "charts/curve_chart.h"
#include "painting/colormap.h"
#include "tabs/heatmap_widget.h"
#include "workers/model_compute.h"

#include "base/errors.h"
#include "hf/hf_config.h"
#include "schemes/schemes.h"
#include "schemes/rotary_scaling.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFontMetrics>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace plab::ui {

namespace {

// The pages' proportions: below the sum of a side part and its picture's least width, the two stack.
constexpr int kGridWidth = 240;        // the layer x head grid beside the opened map
constexpr int kMapMinSide = 420;       // an opened map with its token axes, colour bar and title

// A thumbnail's cells coloured on its own scale; the first column left out of the scale unless `sinkInScale`.
QImage thumbnailImage(const Matrix& m, bool sinkInScale, bool dark)
{
    ValueRange r;
    const int skip = sinkInScale || m.cols < 2 ? 0 : 1;
    for (int row = 0; row < m.rows; ++row)
        r.include(finiteRange(&m.values[static_cast<size_t>(row) * m.cols + skip], static_cast<size_t>(m.cols - skip)));
    ColorScale scale = makeColorScale(r, QStringLiteral("viridis"));
    scale.dark = dark;
    return colorize(m.values.data(), m.rows, m.cols, scale);
}

// A scroll area at least as tall as its first layout (`head`): those rows are always whole, the rest scrolls.
class HeadFirstScrollArea : public QScrollArea {
public:
    HeadFirstScrollArea(const QLayout* head, QWidget* parent) : QScrollArea(parent), m_head(head) {}
    QSize minimumSizeHint() const override
    {
        QSize size = QScrollArea::minimumSizeHint();
        size.setHeight(std::max(size.height(), m_head->sizeHint().height() + 2 * frameWidth()));
        return size;
    }

private:
    const QLayout* m_head;
};

} // namespace

// ---- HfModelView --------------------------------------------------------------------------------------------

HfModelView::HfModelView(QWidget* parent)
    : ViewBase(parent), m_openJob(this, [this](HfOpenResult r) { openFinished(std::move(r)); }),
      m_attentionJob(this, [this](HfAttentionResult r) { attentionFinished(std::move(r)); }),
      m_mapJob(this, [this](HfMapResult r) { mapFinished(std::move(r)); }),
      m_detailJob(this, [this](HfMapResult r) { detailFinished(std::move(r)); }),
      m_methodsJob(this, [this](HfMethodsResult r) { methodsFinished(std::move(r)); })
{
    auto* layout = new QHBoxLayout(this);
    layout->addWidget(buildControls());
    layout->addWidget(buildPages(), 1);
    connect(m_text, &QPlainTextEdit::textChanged, this, [this] {
        setNote({}); // a note on the previous text's request
        markDirty();
    });
    connect(m_precision, &QComboBox::currentIndexChanged, this, &HfModelView::precisionChosen);
    connect(m_repeat, &QSpinBox::valueChanged, this, [this] { markDirty(); });
    for (QSpinBox* s : {m_layer, m_head})
        connect(s, &QSpinBox::valueChanged, this, [this] { startMap(); });
    connectMap();
    connect(m_entropy, &CurvePlot::hovered, this, &ViewBase::hoverText);
    connect(m_pages, &QTabWidget::currentChanged, this, [this] { Q_EMIT pictureUpdated(); });
    showSummary();
}

void HfModelView::connectMap()
{
    // A new window is recomposed at once from the maps held; a finer map of it follows when the zooming pauses.
    m_detailTimer = new QTimer(this);
    m_detailTimer->setSingleShot(true);
    m_detailTimer->setInterval(60);
    connect(m_detailTimer, &QTimer::timeout, this, &HfModelView::startDetail);
    connect(m_heatmap, &TokenMapWidget::tokenWindowChanged, this, [this] {
        showMap();
        m_detailTimer->start();
    });
    connect(m_showAll, &QPushButton::clicked, m_heatmap, &TokenMapWidget::showAllTokens);
    connect(m_sinkInScale, &QCheckBox::toggled, this, [this] {
        showGrid();
        showMap();
    });
    connect(m_grid, &HeadGrid::cellClicked, this, [this](int layer, int head) { setLayerHead(layer, head); });
    connect(m_heatmap, &HeatmapWidget::hovered, this, &HfModelView::mapHovered);
    connect(m_heatmap, &HeatmapWidget::hoverLeft, this, [this] { Q_EMIT hoverText(QString()); });
}

void HfModelView::mapHovered(int, int i, int j, float v)
{
    const HfAttentionMap& g = m_heatmap->composedGeometry();
    if (i < 0 || j < 0 || i >= g.rows || j >= g.cols || m_attention.tokens.empty())
        return;
    const int m = g.rowStart(i), n = g.colStart(j);
    if (g.perToken()) {
        Q_EMIT hoverText(tr("query %1 “%2” → key %3 “%4”: %5")
                             .arg(m)
                             .arg(m_attention.tokens[m])
                             .arg(n)
                             .arg(m_attention.tokens[n])
                             .arg(hoverValueText(v)));
        return;
    }
    const int mLast = (i + 1 < g.rows ? g.rowStart(i + 1) : g.rowEnd) - 1;
    const int nLast = (j + 1 < g.cols ? g.colStart(j + 1) : g.colEnd) - 1;
    Q_EMIT hoverText(
        tr("queries %1–%2 → keys %3–%4: at most %5").arg(m).arg(mLast).arg(n).arg(nLast).arg(hoverValueText(v)));
}

void HfModelView::openFinished(HfOpenResult r)
{
    if (!r.error.isEmpty()) {
        if (m_model && m_model->folder == m_openingFolder) {
            // Another precision refused (memory): the model in use stays, the chooser says which it is, and its page
            // comes back as it was.
            const QSignalBlocker block(m_precision);
            m_precision->setCurrentIndex(
                m_precision->findData(QString::fromLatin1(hfPrecisionName(m_model->model->precision()))));
            m_reevaluateMethods = false;
            showSummary();
            setNote(r.error);
            markDirty();
            return;
        }
        Q_EMIT statusMessage(r.error);
        m_cardTitle->setText(r.error);
        return;
    }
    const bool newFolder = !m_model || m_model->folder != r.model->folder;
    m_model = r.model;
    m_continueText->setFolder(m_model);
    if (newFolder)
        applyMethodsDefaults();
    m_retrieval->refreshEstimate();
    m_attention = {};
    m_map = {};
    showSummary();
    showPositionsAvailability();
    markDirty();
    if (std::exchange(m_reevaluateMethods, false))
        evaluateMethods();
}

void HfModelView::attentionFinished(HfAttentionResult r)
{
    if (!r.error.isEmpty()) {
        m_heatmap->setMessage(r.error);
        Q_EMIT statusMessage(r.error);
        return;
    }
    if (!r.capture || r.request.model != m_model)
        return; // canceled, or the model since reloaded in another precision
    m_attention = std::move(r);
    const int T = m_attention.capture->length;
    m_layer->setRange(1, m_attention.capture->layers);
    m_head->setRange(1, m_attention.capture->heads);
    m_map = {};
    m_detail = {};
    m_heatmap->setTokenCount(T);
    if (m_wantedLayerHead) { // a session's or a lesson's, once the model's size is known
        const QSignalBlocker block(m_head);
        m_layer->setValue(std::min(m_wantedLayerHead->first + 1, m_layer->maximum()));
        m_head->setValue(std::min(m_wantedLayerHead->second + 1, m_head->maximum()));
        m_wantedLayerHead.reset();
    }
    applyWantedWindow();
    showGrid();
    m_sinks->setFigure(hfSinkFigure(m_attention));
    if (m_model) {
        const std::string strip = hfLayerStrip(m_model->model->config());
        m_entropyPage->setGroupingAvailable(strip.find_first_not_of(strip.front()) != std::string::npos);
    }
    m_entropy->setFigure(hfEntropyFigure(m_attention, m_entropyPage->byLayerType()));
    startMap();
}

void HfModelView::mapFinished(HfMapResult r)
{
    if (!r.error.isEmpty()) {
        m_heatmap->setMessage(r.error);
        Q_EMIT statusMessage(r.error);
        return;
    }
    if (r.request.capture != m_attention.capture)
        return; // a text's since replaced
    m_map = std::move(r);
    m_detail = {};
    showMap();
    startDetail();
    Q_EMIT pictureUpdated();
}

void HfModelView::detailFinished(HfMapResult r)
{
    // Only the current head's: a detail of another head (switched meanwhile) is dropped.
    if (!r.error.isEmpty() || !m_map.map || r.request.capture != m_map.request.capture ||
        r.request.layer != m_map.request.layer || r.request.head != m_map.request.head)
        return;
    m_detail = std::move(r);
    showMap();
    Q_EMIT pictureUpdated();
}

QString HfModelView::noModelHint() const
{
    return tr("No model folder is open. Use File → Open model folder… (or the button on the left) to open a Hugging "
              "Face folder with config.json, the weights and tokenizer.json.");
}

QWidget* HfModelView::buildControls()
{
    auto* box = new QWidget(this);
    box->setMaximumWidth(360);
    auto* v = new QVBoxLayout(box);
    v->setContentsMargins(0, 0, 0, 0);
    m_open = new QPushButton(tr("Open model folder…"), box);
    connect(m_open, &QPushButton::clicked, this, &HfModelView::openFolderDialog);
    v->addWidget(m_open);
    v->addLayout(buildPrecisionRow(box));
    // The card gives way first on a short screen (it scrolls); the fields below keep their rows in view.
    m_cardScroll = new QScrollArea(box);
    m_cardScroll->setWidget(buildSummaryCard(m_cardScroll));
    m_cardScroll->setWidgetResizable(true);
    m_cardScroll->setFrameShape(QFrame::NoFrame);
    m_cardScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_cardScroll->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Maximum); // as tall as its rows, no taller
    v->addWidget(m_cardScroll);
    m_text = new QPlainTextEdit(QString::fromLatin1(kDefaultText), box);
    m_text->setMinimumHeight(70);
    // Six lines at most: the fields below come before a taller box on a short screen (the text box scrolls).
    m_text->setMaximumHeight(6 * m_text->fontMetrics().lineSpacing() + 2 * m_text->frameWidth() + 8);
    m_text->setPlaceholderText(tr("Type or paste a text"));
    v->addWidget(new QLabel(tr("Text:"), box));
    v->addWidget(m_text);
    v->addWidget(buildFields(box), 1); // the room left goes to the fields, which scroll on a short screen
    // The map's own actions stay in view under the scrolling fields.
    m_showAll = new QPushButton(tr("Show all tokens"), box);
    m_showAll->setObjectName(QStringLiteral("showAllTokens"));
    m_showAll->setToolTip(tr("On the map: the wheel zooms about the cursor, a drag pans, a double-click shows every "
                             "token. Zoomed out, each cell is the largest probability of its block of tokens; zoomed "
                             "in, one cell per token with the tokens on the axes."));
    v->addWidget(m_showAll);
    m_sinkInScale = new QCheckBox(tr("First token in the colour scale"), box);
    m_sinkInScale->setToolTip(tr("Off: the first-token (sink) column is left out of the colour scale, so the rest of "
                                 "the map keeps its contrast."));
    v->addWidget(m_sinkInScale);
    m_note = new QLabel(box);
    m_note->setObjectName(QStringLiteral("hfNote"));
    m_note->setWordWrap(true);
    m_note->setVisible(false);
    v->addWidget(m_note);
    return box;
}

QFormLayout* HfModelView::buildPrecisionRow(QWidget* parent)
{
    auto* precisionRow = new QFormLayout;
    m_precision = new QComboBox(parent);
    m_precision->setObjectName(QStringLiteral("hfPrecision"));
    m_precision->setToolTip(tr("How the model's matrix products compute, in every page of this tab. Changing it "
                               "reloads the model in the background and recomputes the page."));
    auto* items = qobject_cast<QStandardItemModel*>(m_precision->model());
    for (const HfPrecision p : {HfPrecision::Float32, HfPrecision::BFloat16}) {
        m_precision->addItem(hfPrecisionLabel(p), QString::fromLatin1(hfPrecisionName(p)));
        QStandardItem* item = items->item(m_precision->count() - 1);
        // Core's CPU check, once: an item this CPU cannot run is disabled and says why in core's words.
        const QString unavailable = hfPrecisionUnavailable(p);
        item->setEnabled(unavailable.isEmpty());
        item->setToolTip(!unavailable.isEmpty()      ? unavailable
                         : p == HfPrecision::Float32 ? tr("Weights, activations and accumulators in float32: the "
                                                          "reference the tests hold to 0.1 %.")
                                                     : tr("Weights (half the memory) and each product's input in "
                                                          "BF16, accumulated in float32: about twice as fast; logits "
                                                          "within 3 % of the largest float32 logit."));
    }
    precisionRow->addRow(tr("Precision:"), m_precision);
    return precisionRow;
}

QWidget* HfModelView::buildSummaryCard(QWidget* parent)
{
    auto* card = new QGroupBox(tr("Summary"), parent);
    card->setObjectName(QStringLiteral("hfSummaryCard"));
    m_card = card;
    auto* cardLayout = new QVBoxLayout(card);
    m_cardTitle = new QLabel(card);
    m_cardTitle->setWordWrap(true);
    m_cardTitle->setTextInteractionFlags(Qt::TextSelectableByMouse);
    cardLayout->addWidget(m_cardTitle);
    m_cardRows = new QFormLayout;
    m_cardRows->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    cardLayout->addLayout(m_cardRows);
    return card;
}

QWidget* HfModelView::buildFields(QWidget* parent)
{
    // The fields scroll when the window is shorter than they are (a method's parameters on a 768-pixel screen): the
    // window fits, and the text gives way first.
    auto* fields = new QWidget(parent);
    auto* fieldsLayout = new QVBoxLayout(fields);
    fieldsLayout->setContentsMargins(0, 0, 0, 0);
    auto* form = new QFormLayout;
    m_repeat = new QSpinBox(fields);
    m_repeat->setObjectName(QStringLiteral("hfRepeat"));
    m_repeat->setRange(0, kHfMaxTokens);
    m_repeat->setSingleStep(256);
    m_repeat->setSpecialValueText(tr("off"));
    m_repeat->setToolTip(tr("Repeat the text's tokens until this many, to look past the model's context."));
    form->addRow(tr("Repeat to (tokens):"), m_repeat);
    m_positions = new FittingComboBox(fields);
    m_positions->setObjectName(QStringLiteral("hfPositions"));
    m_positions->addItem(tr("the config's own"), QString());
    // Methods that remap positions (rerope, leaky-rerope, self-extend) score pairs by distance, which the maps' kept
    // rotated rows cannot give (core refuses them there); Evaluate under methods takes them.
    for (const RotaryMethodInfo& m : rotaryMethodCatalog())
        if (!m.remapsPositions)
            m_positions->addItem(QString::fromStdString(m.name), QString::fromStdString(m.name));
    form->addRow(tr("Positions:"), m_positions);
    // Layer and head next to them, above the method's parameters: the four fields the tab is read by come first and
    // stay in view (the scroll area's least height, HeadFirstScrollArea); the parameters scroll below them.
    m_layer = new QSpinBox(fields);
    m_layer->setObjectName(QStringLiteral("hfLayer"));
    m_layer->setRange(1, 1);
    form->addRow(tr("Layer:"), m_layer);
    m_head = new QSpinBox(fields);
    m_head->setObjectName(QStringLiteral("hfHead"));
    m_head->setRange(1, 1);
    form->addRow(tr("Head:"), m_head);
    fieldsLayout->addLayout(form);
    // The method's parameters, each name above its control (no height-for-width rows: a scroll area sizes those
    // wrongly).
    m_positionParamForm = new QFormLayout;
    m_positionParamForm->setRowWrapPolicy(QFormLayout::WrapAllRows);
    fieldsLayout->addLayout(m_positionParamForm);
    connect(m_positions, &QComboBox::currentIndexChanged, this, [this] {
        rebuildPositionParameters();
        markDirty();
    });
    showPositionsAvailability();
    fieldsLayout->addStretch(1); // room to spare goes below the fields, not between them
    auto* scroll = new HeadFirstScrollArea(form, parent);
    scroll->setWidget(fields);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    return scroll;
}

QWidget* HfModelView::buildPages()
{
    m_pages = new QTabWidget(this);
    // The grid an overview, the opened map the picture: beside it when the tab is wide, above it when not.
    auto* split = new AdaptiveSplitter(kGridWidth + kMapMinSide, 0.35, m_pages);
    m_grid = new HeadGrid(split);
    m_grid->setToolTip(tr("Layers down, heads across; click a map to open it."));
    m_heatmap = new TokenMapWidget(split);
    m_heatmap->setEmptyHint(noModelHint());
    split->addWidget(m_grid);
    split->addWidget(m_heatmap);
    split->setStretchFactor(0, 0);
    split->setStretchFactor(1, 1);
    m_pages->addTab(split, tr("Attention on text"));
    m_entropyPage = new HfEntropyPage(m_pages);
    m_entropy = m_entropyPage->plot();
    m_entropy->setEmptyHint(noModelHint());
    m_pages->addTab(m_entropyPage, tr("Entropy"));
    connect(m_entropyPage, &HfEntropyPage::groupingChanged, this,
            [this](bool byType) { m_entropy->setFigure(hfEntropyFigure(m_attention, byType)); });
    m_sinks = new HeatmapWidget(m_pages);
    m_sinks->setEmptyHint(noModelHint());
    m_pages->addTab(m_sinks, tr("Sinks"));
    m_pages->addTab(buildMethodsPage(), tr("Evaluate under methods"));
    m_continueText = new ContinueTextPage(ContinueTextPage::Source::Folder, m_pages);
    connect(m_continueText, &ContinueTextPage::busyChanged, this, &ViewBase::busyChanged);
    connect(m_continueText, &ContinueTextPage::statusMessage, this, &ViewBase::statusMessage);
    m_pages->addTab(m_continueText, tr("Continue the text"));
    m_retrieval = new RetrievalPage([this] { return m_model; }, m_pages); // ui/tabs/retrieval_page
    m_pages->addTab(m_retrieval, tr("Retrieval"));
    return m_pages;
}

void HfModelView::cancelJob()
{
    cancelMethods();
    m_continueText->cancel();
    ViewBase::cancelJob();
}

bool HfModelView::isBusy() const
{
    return ViewBase::isBusy() || m_continueText->isBusy();
}

void HfModelView::openFolder(const QString& folder)
{
    m_openingFolder = folder;
    m_reevaluateMethods = false;
    m_cardTitle->setText(tr("Opening %1…").arg(QDir::toNativeSeparators(folder)));
    const HfPrecision p = precision();
    m_openJob.start([folder, p](const JobControl&) { return openHfModel(folder, p); });
}

HfPrecision HfModelView::precision() const
{
    return hfPrecisionFromName(m_precision->currentData().toString().toStdString());
}

void HfModelView::setPrecision(HfPrecision precision)
{
    if (const QString unavailable = hfPrecisionUnavailable(precision); !unavailable.isEmpty())
        throw InputError(unavailable.toStdString());
    m_precision->setCurrentIndex(m_precision->findData(QString::fromLatin1(hfPrecisionName(precision))));
}

void HfModelView::precisionChosen()
{
    setNote({});
    // The folder being opened, else the one open; nothing to reload before either.
    const bool opening = m_openJob.isRunning();
    if (!opening && (!m_model || m_model->model->precision() == precision()))
        return;
    const QString folder = opening ? m_openingFolder : m_model->folder;
    // What is looked at comes back over the recomputed attention: the same head and zoom window (same text, same
    // tokens). The old model's jobs in flight are dropped.
    if (!opening && m_attention.capture) {
        m_wantedLayerHead = {m_layer->value() - 1, m_head->value() - 1};
        m_wantedWindow = m_heatmap->tokenWindow();
        m_wantedWindowFromSession = false;
    }
    m_attentionJob.cancel();
    m_mapJob.cancel();
    m_detailJob.cancel();
    m_reevaluateMethods = m_pages->currentIndex() == MethodsPage && !m_methods.curves.empty();
    m_openingFolder = folder;
    const HfPrecision p = precision();
    m_cardTitle->setText(
        tr("Loading %1 in %2…").arg(QDir::toNativeSeparators(QFileInfo(folder).fileName()), hfPrecisionLabel(p)));
    m_openJob.start([folder, p](const JobControl&) { return openHfModel(folder, p); });
}

QString HfModelView::note() const
{
    return m_note->text();
}

void HfModelView::setNote(const QString& note)
{
    m_note->setText(note);
    m_note->setVisible(!note.isEmpty());
    if (!note.isEmpty())
        Q_EMIT statusMessage(note);
}

void HfModelView::applyWantedWindow()
{
    if (!m_wantedWindow || !m_attention.capture)
        return;
    const QRectF w = *std::exchange(m_wantedWindow, std::nullopt);
    const int T = m_attention.capture->length;
    const QString saved = tr("keys %1–%2, queries %3–%4")
                              .arg(std::floor(w.left()))
                              .arg(std::ceil(w.right()))
                              .arg(std::floor(w.top()))
                              .arg(std::ceil(w.bottom()));
    if (w.left() >= T || w.top() >= T) { // nothing of it on this text: every token, as setTokenCount left it
        if (m_wantedWindowFromSession)
            setNote(tr("The saved zoom window (%1) lies past this text's %2 tokens: every token is shown.")
                        .arg(saved)
                        .arg(T));
        return;
    }
    const QRectF clipped(w.topLeft(), QPointF(std::min(w.right(), double(T)), std::min(w.bottom(), double(T))));
    if (m_wantedWindowFromSession && clipped != w)
        setNote(tr("The saved zoom window (%1) reaches past this text's %2 tokens: it is clipped to them.")
                    .arg(saved)
                    .arg(T));
    m_heatmap->setTokenWindow(clipped);
}

void HfModelView::openFolderDialog()
{
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Open model folder"), m_openingFolder);
    if (!dir.isEmpty())
        openFolder(dir);
}

void HfModelView::showSummary()
{
    while (m_cardRows->rowCount() > 0)
        m_cardRows->removeRow(0);
    m_summaryRows.clear();
    if (!m_model) {
        m_cardTitle->setText(tr("No model folder is open."));
        return;
    }
    m_cardTitle->setText(QStringLiteral("<b>%1</b>").arg(QFileInfo(m_model->folder).fileName().toHtmlEscaped()));
    m_cardTitle->setToolTip(QDir::toNativeSeparators(m_model->folder));
    m_summaryRows = hfSummaryRows(*m_model->model);
    for (const auto& [label, value] : m_summaryRows) {
        auto* field = new QLabel(value, m_card);
        field->setWordWrap(true);
        field->setTextInteractionFlags(Qt::TextSelectableByMouse);
        m_cardRows->addRow(label + QLatin1Char(':'), field);
    }
    // A scroll area does not follow its widget's new size: the card asks for its rows' height, ten lines at most
    // (more scroll), so that the fields below stay in view on a short screen.
    // The new rows are shown (and counted by the card's layout) once the event loop has run.
    QTimer::singleShot(0, this, [this] {
        m_cardScroll->setMinimumHeight(std::min(m_card->sizeHint().height(), 10 * fontMetrics().lineSpacing()));
    });
}

void HfModelView::refresh()
{
    if (!m_model)
        return;
    HfAttentionRequest request{m_model, m_text->toPlainText(), m_repeat->value()};
    request.scalingLayers = m_positionsLayers;
    try {
        request.positions = chosenPositions();
    } catch (const InputError& e) {
        m_heatmap->setMessage(QString::fromStdString(e.what()));
        Q_EMIT statusMessage(QString::fromStdString(e.what()));
        return;
    }
    m_attentionJob.start([request](const JobControl& control) { return computeHfAttention(request, control); });
}

void HfModelView::startMap()
{
    if (!m_attention.capture)
        return;
    // The head's overview: its whole map in blocks of T / 1024 tokens, each block's max (one score per visible pair
    // once per head; the zoomed pictures are composed from it and from finer maps of their windows).
    HfMapRequest request;
    request.capture = m_attention.capture;
    request.layer = m_layer->value() - 1;
    request.head = m_head->value() - 1;
    request.maxCells = 1024;
    request.reduce = HfMapReduce::Max;
    m_grid->setCurrent(request.layer, request.head);
    m_mapJob.start([request](const JobControl& control) { return computeHfMap(request, control); });
}

namespace {
// The tokens [begin, end) a window [from, to) touches, inside [0, T].
std::pair<int, int> tokensOf(double from, double to, int T)
{
    const int begin = std::clamp(static_cast<int>(std::floor(from + 1e-9)), 0, T - 1);
    return {begin, std::clamp(static_cast<int>(std::ceil(to - 1e-9)), begin + 1, T)};
}
// Tokens per side of a map's blocks (rounded up).
int blockTokens(const HfAttentionMap& map)
{
    return (std::max(map.rowEnd - map.rowBegin, map.colEnd - map.colBegin) + std::min(map.rows, map.cols) - 1) /
           std::min(map.rows, map.cols);
}
} // namespace

void HfModelView::showMap()
{
    if (!m_map.map || !m_attention.capture)
        return;
    const int T = m_attention.capture->length;
    const QRectF w = m_heatmap->tokenWindow();
    const auto [colBegin, colEnd] = tokensOf(w.left(), w.right(), T);
    const auto [rowBegin, rowEnd] = tokensOf(w.top(), w.bottom(), T);
    std::vector<const HfAttentionMap*> sources;
    if (m_detail.map)
        sources.push_back(m_detail.map.get());
    sources.push_back(m_map.map.get());
    const int cells = m_heatmap->cellsPerSide();
    try {
        const HfAttentionMap shown = hfResampleMap(sources, cells, rowBegin, rowEnd, colBegin, colEnd);
        // Tokens on the axes while at least every fifth row has room for its label (the painter labels every 1st,
        // 2nd or 5th: the words stay readable); positions beyond, where a token every 10 or 50 says nothing.
        const bool tokenLabels =
            shown.perToken() && 5.0 * cells >= (rowEnd - rowBegin) * 0.9 * QFontMetrics(m_heatmap->font()).height();
        HeatmapFigure figure = hfAttentionFigure(m_attention, shown, m_map.request.layer, m_map.request.head,
                                                 m_sinkInScale->isChecked(), tokenLabels);
        figure.panels.front().matrix = hfMapMatrix(shown);
        figure.colorMap = m_panel.colorMap;
        figure.dark = m_heatmap->isDark();
        m_heatmap->showComposed(std::move(figure), shown);
    } catch (const InputError& e) {
        m_heatmap->setMessage(QString::fromStdString(e.what()));
    }
}

void HfModelView::startDetail()
{
    if (!m_map.map || !m_attention.capture)
        return;
    const int T = m_attention.capture->length;
    const QRectF w = m_heatmap->tokenWindow();
    // Tokens per cell on screen; the overview serves when its blocks are no larger.
    const int cell = std::max(1, static_cast<int>(std::floor(w.width() / m_heatmap->cellsPerSide())));
    if (blockTokens(*m_map.map) <= cell)
        return;
    const auto [colBegin, colEnd] = tokensOf(w.left(), w.right(), T);
    const auto [rowBegin, rowEnd] = tokensOf(w.top(), w.bottom(), T);
    if (const HfAttentionMap* d = m_detail.map.get(); d && d->rowBegin <= rowBegin && rowEnd <= d->rowEnd &&
                                                      d->colBegin <= colBegin && colEnd <= d->colEnd &&
                                                      blockTokens(*d) <= cell)
        return; // the detail held covers the window finely enough
    // The window and a quarter of it on each side, so that a short pan needs no new map.
    const double margin = w.width() / 4;
    const auto [c0, c1] = tokensOf(w.left() - margin, w.right() + margin, T);
    const auto [r0, r1] = tokensOf(w.top() - margin, w.bottom() + margin, T);
    HfMapRequest request = m_map.request;
    request.rowBegin = r0;
    request.rowEnd = r1;
    request.colBegin = c0;
    request.colEnd = c1;
    request.maxCells = (std::max(r1 - r0, c1 - c0) + cell - 1) / cell;
    m_detailJob.start([request](const JobControl& control) { return computeHfMap(request, control); });
}

void HfModelView::setEntropyByLayerType(bool grouped)
{
    m_entropyPage->setByLayerType(grouped);
}

void HfModelView::showGrid()
{
    if (!m_attention.capture)
        return;
    std::vector<QImage> images;
    for (const MatrixPtr& m : m_attention.thumbnails)
        images.push_back(thumbnailImage(*m, m_sinkInScale->isChecked(), m_heatmap->isDark()));
    m_grid->setImages(m_attention.capture->layers, m_attention.capture->heads, std::move(images));
    m_grid->setLayerTypes(m_model ? QString::fromStdString(hfLayerStrip(m_model->model->config())) : QString());
}

void HfModelView::setText(const QString& text)
{
    m_text->setPlainText(text);
}

void HfModelView::setRepeatTo(int tokens)
{
    m_repeat->setValue(tokens);
}

void HfModelView::setLayerHead(int layer, int head)
{
    const QSignalBlocker block(m_layer);
    m_layer->setValue(layer + 1);
    m_head->setValue(head + 1);
    startMap();
}

void HfModelView::setPage(Page page)
{
    m_pages->setCurrentIndex(page);
}

void HfModelView::setSinkInScale(bool include)
{
    m_sinkInScale->setChecked(include);
}

void HfModelView::setDark(bool dark)
{
    m_heatmap->setDark(dark);
    m_sinks->setDark(dark);
    m_entropy->setDark(dark);
    m_methodsPlot->setDark(dark);
    showGrid();
}

void HfModelView::resetZoom()
{
    m_heatmap->showAllTokens();
    m_sinks->resetZoom();
}

} // namespace plab::ui
