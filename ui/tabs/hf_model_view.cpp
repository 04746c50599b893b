// The "Your model" tab: open a folder, the summary card, attention with its layer x head grid, entropy and sinks.
#include "tabs/hf_model_view.h"
#include "tabs/retrieval_page.h"

#include "tabs/hf_entropy_page.h"
#include "tabs/scaling_layers_combo.h"

#include "tabs/adaptive_splitter.h"
#include "tabs/continue_text_page.h"
#include "tabs/fitting_combo.h"
#include "tabs/param_control.h"

#include "charts/curve_chart.h"
#include "painting/colormap.h"
#include "settings/session.h"
#include "tabs/heatmap_widget.h"
#include "workers/model_compute.h"

#include "base/errors.h"
#include "base/matrix_output.h"
#include "hf/hf_config.h"
#include "base/errors.h"
#include "schemes/position_bias.h"
#include "schemes/schemes.h"
#include "runs/method_comparison.h"
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
#include <QLineEdit>
#include <QListWidget>
#include <QMouseEvent>
#include <QPainter>
#include <QPlainTextEdit>
#include <QPointer>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTimer>
#include <QVBoxLayout>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <map>

namespace plab::ui {

namespace {

// The pages' proportions: below the sum of a side part and its picture's least width, the two stack.
constexpr int kGridWidth = 240;        // the layer x head grid beside the opened map
constexpr int kMapMinSide = 420;       // an opened map with its token axes, colour bar and title
constexpr int kMethodsSideWidth = 300; // the methods page's controls beside its chart
constexpr int kChartMinWidth = 420;    // a perplexity chart whose ticks and legend are read whole
constexpr int kStackedListRows = 4;    // the method list's rows when it wraps above the chart

const char* kDefaultText = "The quick brown fox jumps over the lazy dog. The quick brown fox jumps over the lazy dog "
                           "again, and the dog does not move.";

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

// ---- HeadGrid -----------------------------------------------------------------------------------------------

HeadGrid::HeadGrid(QWidget* parent) : QWidget(parent)
{
    setMouseTracking(false);
}

void HeadGrid::setImages(int layers, int heads, std::vector<QImage> images)
{
    m_layers = layers;
    m_heads = heads;
    m_images = std::move(images);
    update();
}

void HeadGrid::setCurrent(int layer, int head)
{
    m_currentLayer = layer;
    m_currentHead = head;
    update();
}

void HeadGrid::setLayerTypes(const QString& strip)
{
    // A folder of full layers alone keeps plain numbers.
    m_layerTypes = strip.contains(QLatin1Char('S')) || strip.contains(QLatin1Char('C')) ? strip : QString();
    setToolTip(m_layerTypes.isEmpty() ? tr("Layers down, heads across; click a map to open it.")
                                      : tr("Layers down, heads across; click a map to open it. Each layer's type: S "
                                           "sliding window, F full, C chunked."));
    update();
}

QString HeadGrid::layerLabel(int layer) const
{
    const int first = figureIndexBase() == IndexBase::One ? 1 : 0;
    if (layer >= m_layerTypes.size())
        return QString::number(layer + first);
    return QStringLiteral("%1 %2").arg(layer + first).arg(m_layerTypes.at(layer));
}

double HeadGrid::labelWidth() const
{
    return QFontMetricsF(font()).horizontalAdvance(m_layerTypes.isEmpty() ? QStringLiteral("00")
                                                                            : QStringLiteral("00 S")) + 6;
}

double HeadGrid::cellSide() const
{
    if (m_layers == 0 || m_heads == 0)
        return 0;
    const QFontMetricsF fm(font());
    const double labelW = labelWidth(), labelH = fm.height() + 2;
    return std::max(4.0, std::min((width() - labelW) / m_heads, (height() - labelH) / m_layers));
}

QRect HeadGrid::cellRect(int layer, int head) const
{
    const QFontMetricsF fm(font());
    const double side = cellSide();
    const double left = labelWidth(), top = fm.height() + 2;
    return QRectF(left + head * side, top + layer * side, side, side).toRect();
}

void HeadGrid::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.fillRect(rect(), palette().base());
    if (m_images.empty()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect().adjusted(8, 8, -8, -8), Qt::AlignCenter | Qt::TextWordWrap,
                   tr("One small map per layer and head appears here."));
        return;
    }
    const int first = figureIndexBase() == IndexBase::One ? 1 : 0;
    p.setPen(palette().color(QPalette::Text));
    for (int h = 0; h < m_heads; ++h) {
        const QRect r = cellRect(0, h);
        p.drawText(QRect(r.left(), 0, r.width(), r.top()), Qt::AlignCenter, QString::number(h + first));
    }
    for (int l = 0; l < m_layers; ++l) {
        const QRect r = cellRect(l, 0);
        p.drawText(QRect(0, r.top(), r.left() - 3, r.height()), Qt::AlignRight | Qt::AlignVCenter, layerLabel(l));
        for (int h = 0; h < m_heads; ++h) {
            const QRect c = cellRect(l, h).adjusted(1, 1, -1, -1);
            p.drawImage(c, m_images[static_cast<size_t>(l) * m_heads + h]);
        }
    }
    p.setPen(QPen(palette().color(QPalette::Highlight), 2));
    p.setBrush(Qt::NoBrush);
    p.drawRect(cellRect(m_currentLayer, m_currentHead).adjusted(0, 0, -1, -1));
}

void HeadGrid::mousePressEvent(QMouseEvent* event)
{
    for (int l = 0; l < m_layers; ++l)
        for (int h = 0; h < m_heads; ++h)
            if (cellRect(l, h).contains(event->position().toPoint())) {
                setCurrent(l, h);
                Q_EMIT cellClicked(l, h);
                return;
            }
}

// ---- TokenMapWidget -----------------------------------------------------------------------------------------

TokenMapWidget::TokenMapWidget(QWidget* parent) : HeatmapWidget(parent) {}

void TokenMapWidget::setTokenCount(int tokens)
{
    m_tokens = tokens;
    m_tokenWindow = QRectF(0, 0, tokens, tokens);
    Q_EMIT tokenWindowChanged();
}

void TokenMapWidget::setTokenWindow(const QRectF& window)
{
    if (m_tokens <= 0)
        return;
    const double full = m_tokens;
    const double side = std::clamp(std::max(window.width(), window.height()), std::min(kMinSpan, full), full);
    QRectF w(window.topLeft(), QSizeF(side, side));
    w.moveLeft(std::clamp(w.left(), 0.0, full - side));
    w.moveTop(std::clamp(w.top(), 0.0, full - side));
    if (w == m_tokenWindow)
        return;
    m_tokenWindow = w;
    applyWindow(); // the picture moves at once; the view recomposes it for the new window
    Q_EMIT tokenWindowChanged();
}

void TokenMapWidget::zoomTokens(double factor)
{
    const QPointF c = m_tokenWindow.center();
    const QSizeF s = m_tokenWindow.size() / factor;
    setTokenWindow(QRectF(c.x() - s.width() / 2, c.y() - s.height() / 2, s.width(), s.height()));
}

void TokenMapWidget::showAllTokens()
{
    setTokenWindow(QRectF(0, 0, m_tokens, m_tokens));
}

QRectF TokenMapWidget::plotRect() const
{
    if (heatmap().isEmpty())
        return {};
    const HeatmapPainter::Layout layout = heatmap().layout(rect(), screenStyle());
    return layout.plots.empty() ? QRectF() : layout.plots.front();
}

int TokenMapWidget::cellsPerSide() const
{
    const QRectF plot = plotRect();
    const double side = plot.isEmpty() ? std::min(width(), height()) * 0.8 : std::min(plot.width(), plot.height());
    return std::clamp(static_cast<int>(std::ceil(side)), 64, 1024);
}

void TokenMapWidget::showComposed(HeatmapFigure figure, const HfAttentionMap& geometry)
{
    m_geometry = geometry;
    m_geometry.values.clear();
    setFigure(std::move(figure));
    applyWindow();
}

void TokenMapWidget::applyWindow()
{
    const HfAttentionMap& g = m_geometry;
    if (g.rows == 0 || g.cols == 0)
        return;
    const double sx = static_cast<double>(g.colEnd - g.colBegin) / g.cols;
    const double sy = static_cast<double>(g.rowEnd - g.rowBegin) / g.rows;
    const QRectF& w = m_tokenWindow;
    setWindow(QRectF((w.left() - g.colBegin) / sx, (w.top() - g.rowBegin) / sy, w.width() / sx, w.height() / sy));
}

void TokenMapWidget::wheelEvent(QWheelEvent* event)
{
    const QRectF plot = plotRect();
    if (plot.isEmpty() || !plot.contains(event->position()) || m_tokens <= 0) {
        event->ignore();
        return;
    }
    // Zoom about the token under the cursor: it stays under the cursor.
    const double factor = std::pow(1.25, event->angleDelta().y() / 120.0);
    const double fx = (event->position().x() - plot.left()) / plot.width();
    const double fy = (event->position().y() - plot.top()) / plot.height();
    const QRectF& w = m_tokenWindow;
    const QPointF at(w.left() + fx * w.width(), w.top() + fy * w.height());
    const double side = w.width() / factor;
    setTokenWindow(QRectF(at.x() - fx * side, at.y() - fy * side, side, side));
    event->accept();
}

void TokenMapWidget::mousePressEvent(QMouseEvent* event)
{
    const QRectF plot = plotRect();
    if (event->button() == Qt::LeftButton && !plot.isEmpty() && plot.contains(event->position())) {
        m_panning = true;
        m_panStart = event->position();
        m_panWindow = m_tokenWindow;
        setCursor(Qt::ClosedHandCursor);
    }
}

void TokenMapWidget::mouseMoveEvent(QMouseEvent* event)
{
    if (m_panning) {
        const QRectF plot = plotRect();
        if (!plot.isEmpty()) {
            const QPointF d = event->position() - m_panStart;
            setTokenWindow(m_panWindow.translated(-d.x() / plot.width() * m_panWindow.width(),
                                                  -d.y() / plot.height() * m_panWindow.height()));
        }
    }
    HeatmapWidget::mouseMoveEvent(event); // the hover read-out (the base widget never drags: it saw no press)
}

void TokenMapWidget::mouseReleaseEvent(QMouseEvent*)
{
    m_panning = false;
    unsetCursor();
}

void TokenMapWidget::mouseDoubleClickEvent(QMouseEvent*)
{
    showAllTokens();
}

void TokenMapWidget::resizeEvent(QResizeEvent* event)
{
    HeatmapWidget::resizeEvent(event);
    if (m_tokens > 0)
        Q_EMIT tokenWindowChanged(); // another plot size: another number of cells per side
}

// ---- HfModelView --------------------------------------------------------------------------------------------

HfModelView::HfModelView(QWidget* parent)
    : ViewBase(parent), m_openJob(this,
                                  [this](HfOpenResult r) {
                                      if (!r.error.isEmpty()) {
                                          if (m_model && m_model->folder == m_openingFolder) {
                                              // Another precision refused (memory): the model in use stays, the
                                              // chooser says which it is, and its page comes back as it was.
                                              const QSignalBlocker block(m_precision);
                                              m_precision->setCurrentIndex(m_precision->findData(
                                                  QString::fromLatin1(hfPrecisionName(m_model->model->precision()))));
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
                                  }),
      m_attentionJob(this,
                     [this](HfAttentionResult r) {
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
                             m_entropyPage->setGroupingAvailable(strip.find_first_not_of(strip.front()) !=
                                                                 std::string::npos);
                         }
                         m_entropy->setFigure(hfEntropyFigure(m_attention, m_entropyPage->byLayerType()));
                         startMap();
                     }),
      m_mapJob(this,
               [this](HfMapResult r) {
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
               }),
      m_detailJob(this,
                  [this](HfMapResult r) {
                      // Only the current head's: a detail of another head (switched meanwhile) is dropped.
                      if (!r.error.isEmpty() || !m_map.map || r.request.capture != m_map.request.capture ||
                          r.request.layer != m_map.request.layer || r.request.head != m_map.request.head)
                          return;
                      m_detail = std::move(r);
                      showMap();
                      Q_EMIT pictureUpdated();
                  }),
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
    connect(m_heatmap, &HeatmapWidget::hovered, this, [this](int, int i, int j, float v) {
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
    });
    connect(m_heatmap, &HeatmapWidget::hoverLeft, this, [this] { Q_EMIT hoverText(QString()); });
    connect(m_entropy, &CurvePlot::hovered, this, &ViewBase::hoverText);
    connect(m_pages, &QTabWidget::currentChanged, this, [this] { Q_EMIT pictureUpdated(); });
    showSummary();
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

QListWidget* HfModelView::buildMethodList(QWidget* parent)
{
    m_methodList = new QListWidget(parent);
    auto addMethod = [this](const QString& text, const QString& name) {
        auto* item = new QListWidgetItem(text, m_methodList);
        item->setData(Qt::UserRole, name);
        item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
        item->setCheckState(Qt::Checked);
    };
    addMethod(tr("the config's own scaling"), QString());
    for (const RotaryMethodInfo& m : rotaryMethodCatalog())
        addMethod(QString::fromStdString(m.name), QString::fromStdString(m.name));
    return m_methodList;
}

QWidget* HfModelView::buildMethodsPage()
{
    // The controls beside the chart when the tab is wide; above it, the method list in rows, when not.
    auto* page = new AdaptiveSplitter(kMethodsSideWidth + kChartMinWidth, 0.45, m_pages);
    auto* side = new QWidget(page);
    side->setMaximumWidth(kMethodsSideWidth);
    auto* v = new QVBoxLayout(side);
    v->setContentsMargins(0, 0, 0, 0);
    auto* choose = new QPushButton(tr("Text file…"), side);
    connect(choose, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Text to evaluate on"), m_methodsText);
        if (!path.isEmpty())
            setMethodsTextFile(path);
    });
    v->addWidget(choose);
    m_methodsSource = new QLabel(tr("Text: the default corpus"), side);
    m_methodsSource->setWordWrap(true);
    v->addWidget(m_methodsSource);
    auto* form = new QFormLayout;
    m_lengths = new QLineEdit(side);
    m_lengths->setPlaceholderText(tr("context ÷2 … ×2"));
    m_lengths->setToolTip(tr("Lengths in tokens, separated by commas; empty: half the model's context, the context "
                             "and twice it."));
    form->addRow(tr("Lengths:"), m_lengths);
    m_tokensPerLength = new QSpinBox(side);
    m_tokensPerLength->setRange(0, 1 << 24);
    m_tokensPerLength->setSingleStep(4096);
    m_tokensPerLength->setValue(16384);
    m_tokensPerLength->setSpecialValueText(tr("all"));
    form->addRow(tr("Tokens per length:"), m_tokensPerLength);
    m_methodsLayers = new ScalingLayersCombo(side);
    form->addRow(tr("Methods reach:"), m_methodsLayers);
    v->addLayout(form);
    v->addWidget(buildMethodList(side), 1);
    m_evaluate = new QPushButton(tr("Evaluate"), side);
    connect(m_evaluate, &QPushButton::clicked, this, &HfModelView::evaluateMethods);
    auto* cancel = new QPushButton(tr("Cancel"), side);
    cancel->setObjectName(QStringLiteral("cancelMethods"));
    connect(cancel, &QPushButton::clicked, this, &HfModelView::cancelMethods);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_evaluate);
    buttons->addWidget(cancel);
    v->addLayout(buttons);
    m_methodsStatus = new QLabel(side);
    m_methodsStatus->setObjectName(QStringLiteral("methodsStatus"));
    m_methodsStatus->setWordWrap(true);
    m_methodsEstimate = new QLabel(side);
    m_methodsEstimate->setObjectName(QStringLiteral("methodsEstimate"));
    m_methodsEstimate->setWordWrap(true);
    v->addWidget(m_methodsEstimate);
    v->addWidget(m_methodsStatus);
    page->addWidget(side);
    m_methodsPlot = new CurvePlot(page);
    m_methodsPlot->setEmptyHint(tr("Perplexity per token against length, one curve per method, appears here: open a "
                                   "model folder, tick methods and press Evaluate."));
    page->addWidget(m_methodsPlot);
    page->setStretchFactor(0, 0);
    page->setStretchFactor(1, 1);
    connect(page, &AdaptiveSplitter::orientationChanged, this, [this, side](Qt::Orientation orientation) {
        // Stacked, the list wraps its methods into rows as wide as the tab and is only as tall as those rows.
        const bool stacked = orientation == Qt::Vertical;
        side->setMaximumWidth(stacked ? QWIDGETSIZE_MAX : kMethodsSideWidth);
        m_methodList->setFlow(stacked ? QListView::LeftToRight : QListView::TopToBottom);
        m_methodList->setWrapping(stacked);
        m_methodList->setResizeMode(stacked ? QListView::Adjust : QListView::Fixed);
        m_methodList->setMaximumHeight(stacked ? kStackedListRows * m_methodList->sizeHintForRow(0) +
                                                     2 * m_methodList->frameWidth() + 4
                                               : QWIDGETSIZE_MAX);
    });
    connect(m_methodsPlot, &CurvePlot::hovered, this, &ViewBase::hoverText);
    connect(m_lengths, &QLineEdit::textChanged, this, &HfModelView::showMethodsEstimate);
    connect(m_tokensPerLength, &QSpinBox::valueChanged, this, &HfModelView::showMethodsEstimate);
    connect(m_methodList, &QListWidget::itemChanged, this, &HfModelView::showMethodsEstimate);
    connect(this, &ViewBase::progress, this, [this](int done, int total) {
        if (!m_methodsJob.isRunning() || m_methodsJob.isCanceled() || done <= 0 || total <= 0)
            return;
        const double elapsed = m_methodsClock.elapsed() / 1000.0;
        const double eta = elapsed * (total - done) / done;
        m_methodsStatus->setText(tr("Evaluating… %1% · about %2 s left").arg(100 * done / total).arg(eta, 0, 'f', 0));
    });
    return page;
}

void HfModelView::setMethodsTextFile(const QString& path)
{
    m_methodsText = path;
    m_methodsSource->setText(path.isEmpty() ? tr("Text: the default corpus")
                                            : tr("Text: %1").arg(QDir::toNativeSeparators(path)));
}

void HfModelView::setMethodsLengths(const QString& lengths)
{
    m_lengths->setText(lengths);
}

void HfModelView::setMethodsTokensPerLength(int tokens)
{
    m_tokensPerLength->setValue(tokens);
}

void HfModelView::setMethodsChecked(const QStringList& names)
{
    for (int i = 0; i < m_methodList->count(); ++i) {
        QListWidgetItem* item = m_methodList->item(i);
        item->setCheckState(names.contains(item->data(Qt::UserRole).toString()) ? Qt::Checked : Qt::Unchecked);
    }
}

QStringList HfModelView::methodsChecked() const
{
    QStringList names;
    for (int i = 0; i < m_methodList->count(); ++i)
        if (m_methodList->item(i)->checkState() == Qt::Checked)
            names << m_methodList->item(i)->data(Qt::UserRole).toString();
    return names;
}

void HfModelView::applyMethodsDefaults()
{
    if (!m_model)
        return;
    const MethodComparisonDefaults d = hfMethodsDefaults(m_model->model->config());
    QStringList names{QString()};
    QStringList lengths;
    for (const std::string& m : d.methods)
        names << QString::fromStdString(m);
    for (const int n : d.lengths)
        lengths << QString::number(n);
    setMethodsChecked(names);
    m_lengths->setPlaceholderText(lengths.join(QLatin1Char(',')));
    m_tokensPerLength->setValue(static_cast<int>(d.tokensPerLength));
    showMethodsEstimate();
}

HfMethodsRequest HfModelView::methodsRequest() const
{
    HfMethodsRequest request;
    request.model = m_model;
    request.textPath = m_methodsText;
    request.maxTokens = static_cast<size_t>(m_tokensPerLength->value());
    request.scalingLayers = m_methodsLayers->layers();
    request.own = false;
    for (const QString& name : methodsChecked()) {
        if (name.isEmpty())
            request.own = true;
        else
            request.methods.push_back(name.toStdString());
    }
    if (m_model && !request.methods.empty()) // a method that would reach no rotary layer is refused (core's rule)
        checkHfScalingReach(m_model->model->config(), request.scalingLayers);
    for (const QString& word : m_lengths->text().split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        bool ok = false;
        const int n = word.trimmed().toInt(&ok);
        if (!ok || n < 2 || n > kMaxLength)
            throw InputError(
                tr("Lengths: '%1' is not allowed; allowed: whole numbers from 2 to %2, separated by commas")
                    .arg(word.trimmed())
                    .arg(kMaxLength)
                    .toStdString());
        request.lengths.push_back(n);
    }
    return request;
}

QString HfModelView::methodsEstimateText() const
{
    if (!m_model)
        return {};
    try {
        const HfMethodsRequest request = methodsRequest();
        const size_t curves = request.methods.size() + (request.own ? 1 : 0);
        if (request.maxTokens == 0)
            return tr("Estimate: all the text's tokens at each length; the time depends on the text.");
        const double seconds = hfMethodsSecondsEstimate(m_model->model->config(), request, curves);
        return tr("Estimate: about %1 for %n curve(s) on 2 cores (a cost model; a busy machine takes longer).", nullptr,
                  static_cast<int>(curves))
            .arg(durationText(seconds));
    } catch (const InputError& e) {
        return QString::fromStdString(e.what());
    }
}

void HfModelView::showMethodsEstimate()
{
    m_methodsEstimate->setText(methodsEstimateText());
}

void HfModelView::evaluateMethods()
{
    HfMethodsRequest request;
    try {
        request = methodsRequest();
    } catch (const InputError& e) {
        m_methodsStatus->setText(QString::fromStdString(e.what()));
        return;
    }
    // Each finished curve reaches the GUI thread through the application object; the view may be gone by then.
    const int run = ++m_methodsRun;
    m_methodsShown.clear();
    request.curveDone = [self = QPointer<HfModelView>(this), run](const MethodCurve& curve) {
        QMetaObject::invokeMethod(
            qApp,
            [self, run, curve] {
                if (!self || run != self->m_methodsRun || self->m_methodsJob.isCanceled())
                    return;
                self->m_methodsShown.push_back(curve);
                if (self->m_model)
                    self->showMethodsCurves(self->m_methodsShown, self->m_model->model->config().context,
                                            self->m_model->model->precision());
            },
            Qt::QueuedConnection);
    };
    m_methodsClock.start();
    m_methodsStatus->setText(tr("Evaluating…"));
    m_methodsJob.start([request](const JobControl& control) { return computeHfMethods(request, control); });
}

void HfModelView::cancelMethods()
{
    const bool running = m_methodsJob.isRunning() && !m_methodsJob.isCanceled();
    m_methodsJob.cancel();
    if (running)
        m_methodsStatus->setText(canceledText(m_methodsClock.elapsed()));
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

void HfModelView::showMethodsCurves(const std::vector<MethodCurve>& curves, int context, HfPrecision precision)
{
    CurveFigure figure = methodsPerplexityFigure(curves, m_model ? m_model->model->config().scheme : "rope", context);
    if (precision != HfPrecision::Float32)
        figure.title += QStringLiteral(" · ") + hfPrecisionLabel(precision);
    figure.xLabel = tr("evaluation length (tokens)"); // a real model's unit is its tokenizer's, not bytes
    figure.yLabel = tr("perplexity (per token)");
    m_methodsPlot->setFigure(figure);
    Q_EMIT pictureUpdated();
}

void HfModelView::methodsFinished(HfMethodsResult r)
{
    if (r.canceled) {
        m_methodsStatus->setText(canceledText(m_methodsClock.elapsed()));
        return;
    }
    if (!r.error.isEmpty()) {
        m_methodsStatus->setText(r.error);
        Q_EMIT statusMessage(r.error);
        return;
    }
    m_methods = std::move(r);
    m_methodsShown = m_methods.curves;
    QString status = tr("%1 tokens of %2; %3 s.")
                         .arg(m_methods.textTokens)
                         .arg(m_methods.textSource)
                         .arg(m_methodsClock.elapsed() / 1000.0, 0, 'f', 1);
    for (const QString& message : m_methods.leftOut)
        status += QLatin1Char('\n') + tr("Left out: %1").arg(message);
    m_methodsStatus->setText(status);
    showMethodsCurves(m_methods.curves, m_methods.context, m_methods.request.model->model->precision());
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

namespace {

// A method and its settings as the tab and its sessions take them: core's check of a method choice (known method,
// parameters it takes, values in range); settings only with a method.
void checkPositions(const QString& method, const QStringList& settings)
{
    if (method.isEmpty()) {
        if (!settings.isEmpty())
            throw InputError("settings need a method; allowed: an empty list for the config's own positions");
        return;
    }
    MethodChoice choice{method.toStdString(), {}};
    for (const QString& s : settings)
        choice.settings.push_back(s.toStdString());
    checkMethodChoice(choice);
}

} // namespace

void HfModelView::showPositionsAvailability()
{
    const bool rotary = m_model && m_model->model->config().scheme == "rope";
    m_positions->setEnabled(rotary);
    if (!m_model) {
        m_positions->setToolTip(tr("Open a model folder first."));
        return;
    }
    if (!rotary) {
        // Core's reason, as the CLI gives it for --scaling on this folder.
        QString reason;
        try {
            hfPositionSpec(m_model->model->config(), "pi");
        } catch (const InputError& e) {
            reason = QString::fromStdString(e.what());
        }
        const QSignalBlocker block(m_positions);
        m_positions->setCurrentIndex(0);
        rebuildPositionParameters();
        m_positions->setToolTip(reason);
        return;
    }
    m_positions->setToolTip(
        tr("Positions of the attention, entropy and sinks pages: the config's own rope scaling, or "
           "a length-extension method applied zero-shot (no training), with its parameters below. Methods that remap "
           "positions (rerope, self-extend) are on the Evaluate under methods page."));
}

void HfModelView::rebuildPositionParameters()
{
    while (m_positionParamForm->rowCount() > 0)
        m_positionParamForm->removeRow(0);
    m_positionParams.clear();
    const QString method = positionsMethod();
    if (method.isEmpty())
        return;
    if (m_model) { // a folder that mixes layer types: where the method goes (core's rule)
        const std::string strip = hfLayerStrip(m_model->model->config());
        if (strip.find_first_not_of(strip.front()) != std::string::npos) {
            auto* layers = new ScalingLayersCombo(m_positionParamForm->parentWidget());
            layers->setObjectName(QStringLiteral("hfScalingLayers"));
            layers->setLayers(m_positionsLayers);
            connect(layers, &QComboBox::currentIndexChanged, this, [this, layers] {
                m_positionsLayers = layers->layers();
                markDirty();
            });
            m_positionParamForm->addRow(tr("Reaches:"), layers);
        }
    }
    const RotaryMethodInfo& info = rotaryMethodByName(method.toStdString());
    // The values core applies when no setting is given: the config's own for its own method, else the catalogue's.
    std::map<std::string, double> start;
    if (m_model && m_model->model->config().scheme == "rope") {
        try {
            start = hfPositionSpec(m_model->model->config(), method.toStdString()).scalingParams;
        } catch (const InputError&) {
            // longrope without the config's lists: the catalogue's values; the request shows core's message
        }
    }
    for (const ParamInfo& p : info.params) {
        auto* control = new ParamControl(schemeByName("rope"), p, m_positionParamForm->parentWidget());
        if (const auto it = start.find(p.name); it != start.end())
            control->setValue(it->second);
        control->onChanged = [this] { markDirty(); };
        auto* label = new QLabel(QString::fromStdString(p.name), m_positionParamForm->parentWidget());
        label->setToolTip(control->toolTip());
        m_positionParamForm->addRow(label, control);
        m_positionParams.push_back(control);
    }
}

QString HfModelView::positionsMethod() const
{
    return m_positions->currentData().toString();
}

QStringList HfModelView::positionsSettings() const
{
    QStringList settings;
    for (const ParamControl* c : m_positionParams)
        settings << QStringLiteral("%1=%2").arg(QString::fromStdString(c->info().name),
                                                QString::fromStdString(exactText(c->value())));
    return settings;
}

void HfModelView::setPositions(const QString& method, const QStringList& settings)
{
    checkPositions(method, settings);
    if (m_positions->findData(method) < 0)
        throw InputError("positions '" + method.toStdString() +
                         "' remap positions, which the attention maps cannot draw; allowed: a method that does not "
                         "(Evaluate under methods takes it)");
    {
        const QSignalBlocker block(m_positions);
        m_positions->setCurrentIndex(std::max(0, m_positions->findData(method)));
        rebuildPositionParameters();
    }
    for (const QString& s : settings) {
        const QString name = s.section(QLatin1Char('='), 0, 0).trimmed();
        for (ParamControl* c : m_positionParams)
            if (QString::fromStdString(c->info().name) == name)
                c->setValue(s.section(QLatin1Char('='), 1).trimmed().toDouble());
    }
    markDirty();
}

std::optional<SchemeSpec> HfModelView::chosenPositions() const
{
    const QString method = positionsMethod();
    if (!m_model || method.isEmpty())
        return std::nullopt;
    std::vector<std::string> settings;
    for (const QString& s : positionsSettings())
        settings.push_back(s.toStdString());
    return hfPositionSpec(m_model->model->config(), method.toStdString(), settings);
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

bool HfModelView::hasPicture() const
{
    switch (m_pages->currentIndex()) {
    case EntropyPage:
        return m_attention.capture != nullptr;
    case SinksPage:
        return m_attention.sinks != nullptr;
    case MethodsPage:
        return !m_methods.curves.empty();
    case ContinuePage:
        return false; // text, no picture
    case RetrievalTab:
        return m_retrieval->hasResults();
    default:
        return m_map.map != nullptr;
    }
}

QString HfModelView::pictureTitle() const
{
    return m_pages->tabText(m_pages->currentIndex());
}

void HfModelView::paintPicture(QPainter& painter, const QRectF& target, const PictureStyle& style) const
{
    switch (m_pages->currentIndex()) {
    case EntropyPage:
        renderCurveFigure(painter, target, m_entropy->figure(), style);
        return;
    case SinksPage:
        m_sinks->heatmap().paint(painter, target, style);
        return;
    case MethodsPage:
        renderCurveFigure(painter, target, m_methodsPlot->figure(), style);
        return;
    case RetrievalTab:
        m_retrieval->heatmap()->heatmap().paint(painter, target, style);
        return;
    default:
        m_heatmap->heatmap().paint(painter, target, style, m_heatmap->window());
    }
}

void HfModelView::writeData(std::ostream& out, DataFormat format) const
{
    requirePicture();
    if (m_pages->currentIndex() == RetrievalTab) {
        m_retrieval->writeData(out, format, {{"model", m_model->folder.toStdString()}});
        return;
    }
    if (m_pages->currentIndex() == MethodsPage) {
        writeMethodComparison(out, format, m_methods.curves,
                              {{"model", m_model->folder.toStdString()},
                               {"precision", hfPrecisionName(m_methods.request.model->model->precision())},
                               {"text", m_methods.textSource.toStdString()},
                               {"text_tokens", m_methods.textTokens},
                               {"context", m_methods.context}});
        return;
    }
    const HfAttentionCapture& c = *m_attention.capture;
    nlohmann::json meta{
        {"model", m_model ? m_model->folder.toStdString() : std::string()},
        {"positions", hfPositionText(m_attention.request.positions.value_or(hfPositionSpec(m_model->model->config())))},
        {"precision", hfPrecisionName(m_attention.request.model->model->precision())},
        {"ids", m_attention.ids}};
    switch (m_pages->currentIndex()) {
    case EntropyPage: {
        Table t;
        t.columns = {"layer", "tokens_seen", "entropy_mean_over_heads"};
        t.integerColumns = 2;
        t.meta = meta;
        const std::vector<double> entropy = hfEntropyByPosition(c);
        for (int l = 0; l < c.layers; ++l)
            for (int m = 0; m < c.length; ++m)
                t.rows.push_back({double(l), double(m + 1), entropy[static_cast<size_t>(l) * c.length + m]});
        writeTable(out, format, t);
        return;
    }
    case SinksPage: {
        meta["values"] = "mean over queries of the attention probability on token 0, rows layers, columns heads";
        MatrixStackWriter writer(out, format, 1, c.layers, c.heads, false, meta);
        writer.write(0, m_attention.sinks->values.data());
        writer.finish();
        return;
    }
    default: {
        // The map as shown: the visible window, per token or in blocks (each block's max).
        const HfAttentionMap& g = m_heatmap->composedGeometry();
        const Matrix& shown = *m_heatmap->heatmap().figure().panels.front().matrix;
        meta["layer"] = m_map.request.layer;
        meta["head"] = m_map.request.head;
        meta["rows"] = {g.rowBegin, g.rowEnd};
        meta["cols"] = {g.colBegin, g.colEnd};
        meta["values"] = g.perToken()
                             ? "attention probability p(m, n), keys a query cannot see -inf"
                             : "largest attention probability over each block's visible pairs (level of detail)";
        nlohmann::json tokens = nlohmann::json::array();
        for (int n = g.colBegin; n < g.colEnd; ++n)
            tokens.push_back(m_attention.tokens[n].toStdString());
        meta["tokens"] = tokens;
        MatrixStackWriter writer(out, format, 1, shown.rows, shown.cols, false, meta);
        writer.write(0, shown.values.data());
        writer.finish();
    }
    }
}

namespace {
const std::vector<std::string>& pageNames()
{
    static const std::vector<std::string> names = {"attention", "entropy", "sinks", "methods", "continue",
                                                   "retrieval"};
    return names;
}

// A saved zoom window's [from, to) in tokens along one axis ("keys" or "queries"): two numbers, 0 <= from < to.
std::pair<double, double> savedWindowRange(const nlohmann::json& window, const char* axis)
{
    const std::string name = std::string("session: views.model.token_window.") + axis;
    const std::string allowed = "; allowed: [from, to], token positions with 0 <= from < to";
    if (!window.contains(axis))
        throw InputError(name + " is missing" + allowed);
    const nlohmann::json& v = window.at(axis);
    if (!v.is_array() || v.size() != 2 || !v[0].is_number() || !v[1].is_number())
        throw InputError(name + " = " + v.dump() + " is not two numbers" + allowed);
    const double from = v[0].get<double>(), to = v[1].get<double>();
    if (!std::isfinite(from) || !std::isfinite(to) || from < 0 || to <= from)
        throw InputError(name + " = " + v.dump() + " is not allowed" + allowed);
    return {from, to};
}
} // namespace

nlohmann::json HfModelView::positionsJson() const
{
    nlohmann::json settings = nlohmann::json::array();
    for (const QString& s : positionsSettings())
        settings.push_back(s.toStdString());
    return {{"method", positionsMethod().toStdString()}, {"settings", settings}};
}

nlohmann::json HfModelView::saveState() const
{
    nlohmann::json state{{"text", m_text->toPlainText().toStdString()},
                         {"repeat_to", m_repeat->value()},
                         {"page", pageNames()[m_pages->currentIndex()]},
                         {"layer", m_layer->value() - 1},
                         {"head", m_head->value() - 1},
                         {"first_token_in_scale", m_sinkInScale->isChecked()},
                         {"precision", hfPrecisionName(precision())},
                         {"positions", positionsJson()}};
    // The zoom window: one still waiting for its text's tokens, else the one shown unless it shows every token.
    std::optional<QRectF> window = m_wantedWindow;
    if (!window && m_attention.capture) {
        const double T = m_attention.capture->length;
        if (m_heatmap->tokenWindow() != QRectF(0, 0, T, T))
            window = m_heatmap->tokenWindow();
    }
    if (window)
        state["token_window"] = {{"keys", {window->left(), window->right()}},
                                 {"queries", {window->top(), window->bottom()}}};
    return state;
}

void HfModelView::restoreState(const nlohmann::json& state)
{
    try {
        const std::string where = "views.model";
        const std::string text = state.value("text", std::string(kDefaultText));
        const int repeat = state.value("repeat_to", 0);
        const std::string page = state.value("page", std::string("attention"));
        const int layer = state.value("layer", 0), head = state.value("head", 0);
        checkIntegerRange("views.model.repeat_to", repeat, 0, kHfMaxTokens);
        checkIntegerRange("views.model.layer", layer, 0, 1023);
        checkIntegerRange("views.model.head", head, 0, 1023);
        const auto it = std::find(pageNames().begin(), pageNames().end(), page);
        if (it == pageNames().end())
            throw InputError("views.model.page is '" + page + "'; allowed: attention, entropy, sinks, methods, continue");
        // Positions: checked by core before anything is applied (an unknown method or setting names its key).
        const nlohmann::json positions = state.value("positions", nlohmann::json::object());
        const QString method = QString::fromStdString(positions.value("method", std::string()));
        QStringList settings;
        for (const std::string& setting : positions.value("settings", std::vector<std::string>()))
            settings << QString::fromStdString(setting);
        try {
            checkPositions(method, settings);
        } catch (const InputError& e) {
            throw InputError(std::string("session: views.model.positions: ") + e.what());
        }
        // Missing (sessions before the chooser, lessons): the current choice stays; it is how to compute, not what.
        const std::string precisionName = sessionString(state, "precision", hfPrecisionName(precision()), where);
        HfPrecision chosen = HfPrecision::Float32;
        try {
            chosen = hfPrecisionFromName(precisionName);
        } catch (const InputError& e) {
            throw InputError("session: views.model.precision: " + std::string(e.what()));
        }
        std::optional<QRectF> window;
        if (const nlohmann::json saved = sessionObject(state, "token_window", where); !saved.empty()) {
            const auto [keysFrom, keysTo] = savedWindowRange(saved, "keys");
            const auto [queriesFrom, queriesTo] = savedWindowRange(saved, "queries");
            window = QRectF(QPointF(keysFrom, queriesFrom), QPointF(keysTo, queriesTo));
        }
        m_text->setPlainText(QString::fromStdString(text));
        m_repeat->setValue(repeat);
        m_pages->setCurrentIndex(static_cast<int>(it - pageNames().begin()));
        m_sinkInScale->setChecked(state.value("first_token_in_scale", false));
        setPositions(method, settings);
        // A session from a CPU with BF16 products, here without: float32, said (the rest of the session applies).
        const QString unavailable = hfPrecisionUnavailable(chosen);
        if (!unavailable.isEmpty())
            chosen = HfPrecision::Float32;
        setPrecision(chosen); // reloads an open model in it (and asks for the view kept, overridden just below)
        if (!unavailable.isEmpty())
            setNote(tr("The session's precision is not available here (%1); the model computes in float32.")
                        .arg(unavailable));
        m_wantedWindow = window; // applied, checked against the text's tokens, once they are known
        m_wantedWindowFromSession = window.has_value();
        m_wantedLayerHead = {layer, head};
        if (m_attention.capture)
            setLayerHead(std::min(layer, m_attention.capture->layers - 1),
                         std::min(head, m_attention.capture->heads - 1));
    } catch (const nlohmann::json::exception& e) {
        throw InputError(std::string("views.model: ") + e.what());
    }
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
