// The Attention on text tab: models (load, save, sessions), the text, the attention heatmap and the entropy plot.
#include "tabs/attention_view.h"
#include "tabs/fitting_combo.h"

#include "charts/curve_chart.h"
#include "settings/session.h"
#include "tabs/heatmap_widget.h"
#include "tabs/model_prompt.h"
#include "workers/headless.h"

#include "base/errors.h"
#include "base/matrix_output.h"

#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QStackedWidget>
#include <QStandardItemModel>
#include <QVBoxLayout>

#include <algorithm>
#include <utility>

namespace plab::ui {

namespace {

const char* kDefaultText = "To be, or not to be, that is the question: whether 'tis nobler in the mind to suffer "
                           "the slings and arrows of outrageous fortune.";

// Splits a picture: `fraction` of the height for the first part.
std::pair<QRectF, QRectF> splitVertically(const QRectF& r, double fraction)
{
    const double h = r.height() * fraction;
    return {QRectF(r.left(), r.top(), r.width(), h), QRectF(r.left(), r.top() + h, r.width(), r.height() - h)};
}

} // namespace

AttentionView::AttentionView(QWidget* parent)
    : ViewBase(parent), m_job(this, [this](AttentionResult r) {
          if (!r.error.isEmpty()) {
              m_heatmap->setMessage(r.error);
              Q_EMIT statusMessage(r.error);
              return;
          }
          m_result = std::move(r);
          drawResult();
      })
{
    auto* layout = new QHBoxLayout(this);
    layout->addWidget(buildControls());
    layout->addWidget(buildPages(), 1);
    connect(m_modelChoice, &QComboBox::currentIndexChanged, this, [this](int i) {
        if (i >= 0 && i < modelCount()) {
            const ModelConfig& c = m_models[i].model->config();
            m_layer->setRange(1, c.layers);
            m_info->setText(tr("%1 layers · d_model %2 · %3 heads · context %4 · scheme %5")
                                .arg(c.layers)
                                .arg(c.dModel)
                                .arg(c.heads)
                                .arg(c.context)
                                .arg(QString::fromStdString(c.scheme)));
        }
        updateShowChoices();
        markDirty();
    });
    connect(m_show, &QComboBox::currentIndexChanged, this, [this] {
        if (!m_result.probabilities.empty())
            drawResult(); // the same forward holds all three: no recomputation
    });
    connect(m_text, &QPlainTextEdit::textChanged, this, [this] { markDirty(); });
    connect(m_layer, &QSpinBox::valueChanged, this, [this] { markDirty(); });
    connect(m_repeat, &QSpinBox::valueChanged, this, [this] { markDirty(); });
    connect(m_heatmap, &HeatmapWidget::hovered, this, [this](int, int m, int n, float v) {
        const auto& t = m_result.request.tokens;
        if (m < 0 || n < 0 || m >= static_cast<int>(t.size()) || n >= static_cast<int>(t.size()))
            return;
        // Both positions and both characters, e.g. "query 12 'o' → key 7 'n': 0.231".
        Q_EMIT hoverText(
            tr("query %1 '%2' → key %3 '%4': %5")
                .arg(m)
                .arg(byteLabel(t[m]))
                .arg(n)
                .arg(byteLabel(t[n]))
                .arg(std::isfinite(v) ? QString::number(v, 'g', 3) : tr("masked (the query cannot see it)")));
    });
    connect(m_heatmap, &HeatmapWidget::hoverLeft, this, [this] { Q_EMIT hoverText(QString()); });
    connect(m_entropy, &CurvePlot::hovered, this, &ViewBase::hoverText);
}

QWidget* AttentionView::buildControls()
{
    auto* sideBox = new QWidget(this);
    auto* side = new QVBoxLayout;
    sideBox->setLayout(side);
    sideBox->setMaximumWidth(300);
    side->addWidget(new QLabel(tr("<b>Model</b>"), this));
    m_modelChoice = new FittingComboBox(this); // a long file name: its start and end
    m_modelChoice->setToolTip(tr("Models trained in the Train tab appear here; checkpoints load with the button"));
    side->addWidget(m_modelChoice);
    auto* buttons = new QHBoxLayout;
    auto* load = new QPushButton(tr("Load checkpoint…"), this);
    buttons->addWidget(load);
    m_save = new QPushButton(tr("Save model…"), this);
    m_save->setToolTip(tr("Write the chosen model as a .safetensors checkpoint (for later, or the command line)"));
    m_save->setEnabled(false);
    buttons->addWidget(m_save);
    side->addLayout(buttons);
    m_info = new QLabel(this);
    m_info->setWordWrap(true);
    side->addWidget(m_info);
    side->addWidget(new QLabel(tr("<b>Text</b> (bytes are the tokens)"), this));
    m_text = new QPlainTextEdit(this);
    m_text->setPlainText(QString::fromUtf8(kDefaultText));
    side->addWidget(m_text, 1);
    auto* form = new QFormLayout;
    m_layer = new QSpinBox(this);
    m_layer->setRange(1, 1);
    m_layer->setToolTip(tr("Transformer layer (1..layers)"));
    form->addRow(tr("Layer"), m_layer);
    m_repeat = new QSpinBox(this);
    m_repeat->setRange(0, 2048);
    m_repeat->setSpecialValueText(tr("off"));
    m_repeat->setToolTip(tr("Repeat the text to this many bytes, to see the model past its training context"));
    form->addRow(tr("Repeat to N"), m_repeat);
    m_show = new QComboBox(this);
    m_show->addItem(tr("attention weights"), QStringLiteral("weights"));
    m_show->addItem(tr("positional bias"), QStringLiteral("bias"));
    m_show->addItem(tr("contextual positions"), QStringLiteral("positions"));
    m_show->setToolTip(tr("What the heatmap shows: the attention probabilities, the positional bias the scheme adds "
                          "to each logit on this text, or CoPE's contextual positions (models with them only)"));
    form->addRow(tr("Show"), m_show);
    side->addLayout(form);
    auto* note = new QLabel(
        tr("The head comes from the panel. Hover a cell for both positions, both characters and the probability."),
        this);
    note->setWordWrap(true);
    side->addWidget(note);
    connect(load, &QPushButton::clicked, this, &AttentionView::loadModelFromDialog);
    connect(m_save, &QPushButton::clicked, this, &AttentionView::saveModelFromDialog);
    return sideBox;
}

QWidget* AttentionView::buildPages()
{
    // Without a model: why, and a button that trains one; with one, its attention and row entropies.
    m_pages = new QStackedWidget(this);
    m_prompt =
        new ModelPrompt(tr("Attention on text needs a trained model. Train a demo model now, train several in the "
                           "\"Train\" tab, or load a checkpoint (.safetensors) on the left."),
                        m_pages);
    m_pages->addWidget(m_prompt);
    auto* splitter = new QSplitter(Qt::Vertical, m_pages);
    m_heatmap = new HeatmapWidget(splitter);
    m_heatmap->setEmptyHint(tr("Type a text on the left: the model's attention on it appears here, one row per query "
                               "character, one column per key character."));
    m_entropy = new CurvePlot(splitter);
    m_entropy->setMinimumHeight(220);
    m_entropy->setEmptyHint(tr("The entropy of each query's attention appears here with the attention above."));
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 1);
    splitter->setSizes({600, 260});
    m_pages->addWidget(splitter);
    return m_pages;
}

void AttentionView::loadModelFromDialog()
{
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Load checkpoint"), QString(), tr("Checkpoints (*.safetensors)"));
    QString error;
    if (!path.isEmpty() && !loadModel(path, &error))
        Q_EMIT statusMessage(error);
}

void AttentionView::saveModelFromDialog()
{
    const int i = m_modelChoice->currentIndex();
    if (i < 0 || i >= modelCount())
        return;
    const ModelConfig& c = m_models[i].model->config();
    const QString suggested = QStringLiteral("%1-%2layers-step%3.safetensors")
                                  .arg(QString::fromStdString(c.scheme))
                                  .arg(c.layers)
                                  .arg(m_models[i].info.step);
    QFileDialog dialog(this, tr("Save model"), suggested, tr("Checkpoints (*.safetensors)"));
    dialog.setAcceptMode(QFileDialog::AcceptSave);
    dialog.setDefaultSuffix(QStringLiteral("safetensors"));
    if (dialog.exec() != QDialog::Accepted || dialog.selectedFiles().isEmpty())
        return;
    const QString path = dialog.selectedFiles().constFirst();
    QString error;
    Q_EMIT statusMessage(saveModel(i, path, &error) ? tr("Saved %1 to %2").arg(m_models[i].name, path) : error);
}

bool AttentionView::isShowingModelPrompt() const
{
    return m_pages->currentWidget() == m_prompt;
}

void AttentionView::addModel(const SharedModel& model, bool select)
{
    // The file now holds this model: one that came from it before (an older kept model) no longer does.
    if (!model.file.isEmpty())
        for (SharedModel& m : m_models)
            if (m.file == model.file)
                m.file.clear();
    m_models.push_back(model);
    m_modelChoice->addItem(model.name);
    if (select)
        m_modelChoice->setCurrentIndex(modelCount() - 1);
    m_save->setEnabled(true);
    m_pages->setCurrentIndex(1);
}

void AttentionView::selectModel(int index)
{
    if (index >= 0 && index < modelCount())
        m_modelChoice->setCurrentIndex(index);
}

int AttentionView::selectedModel() const
{
    return m_modelChoice->currentIndex();
}

bool AttentionView::saveModel(int index, const QString& path, QString* error)
{
    try {
        if (modelCount() > 0 && (index < 0 || index >= modelCount()))
            throw InputError("model " + std::to_string(index + 1) + " does not exist; allowed: 1.." +
                             std::to_string(modelCount()));
        // With no model at all, saveSharedModel refuses the empty one by itself.
        saveSharedModel(modelCount() > 0 ? m_models[index] : SharedModel{}, path);
        // A session now brings it back from there; a model that came from the overwritten file no longer can.
        const QString file = QFileInfo(path).absoluteFilePath();
        for (SharedModel& m : m_models)
            if (m.file == file)
                m.file.clear();
        m_models[index].file = file;
        return true;
    } catch (const std::exception& e) {
        if (error)
            *error = QString::fromStdString(e.what());
        return false;
    }
}

bool AttentionView::loadModel(const QString& path, QString* error)
{
    try {
        const SharedModel model = loadSharedModel(path);
        addModel(model);
        if (onModelLoaded)
            onModelLoaded(model);
        return true;
    } catch (const std::exception& e) {
        if (error)
            *error = QString::fromStdString(e.what());
        return false;
    }
}

void AttentionView::setText(const QString& text)
{
    m_text->setPlainText(text);
}

void AttentionView::setLayer(int layer)
{
    m_layer->setValue(layer + 1);
}

void AttentionView::setRepeatTo(int length)
{
    m_repeat->setValue(length);
}

std::vector<uint8_t> AttentionView::tokens() const
{
    const QByteArray bytes = m_text->toPlainText().toUtf8();
    std::vector<uint8_t> t(bytes.begin(), bytes.end());
    const int repeat = m_repeat->value();
    return repeat > 0 ? repeatedText(t, repeat) : t;
}

TextView AttentionView::textView() const
{
    return static_cast<TextView>(std::max(0, m_show->currentIndex()));
}

void AttentionView::setTextView(TextView show)
{
    m_show->setCurrentIndex(static_cast<int>(show));
}

bool AttentionView::canShowPositions() const
{
    const int i = m_modelChoice->currentIndex();
    return i >= 0 && i < modelCount() && hasContextualPositions(schemeByName(m_models[i].model->config().scheme).kind);
}

void AttentionView::updateShowChoices()
{
    if (auto* items = qobject_cast<QStandardItemModel*>(m_show->model()))
        items->item(static_cast<int>(TextView::Positions))->setEnabled(canShowPositions());
}

void AttentionView::drawResult()
{
    // A model without contextual positions draws its weights while "positions" stays chosen for the next one.
    const TextView shown = m_result.canShow(textView()) ? textView() : TextView::Weights;
    m_heatmap->setFigure(attentionFigure(m_result, m_panel.head, m_panel.colorMap, shown));
    m_entropy->setFigure(rowEntropyFigure(m_result, m_panel.head));
    Q_EMIT pictureUpdated();
}

void AttentionView::refresh()
{
    const int i = m_modelChoice->currentIndex();
    if (i < 0 || i >= modelCount())
        return; // the "needs a trained model" message stays
    AttentionRequest request;
    request.model = m_models[i];
    request.tokens = tokens();
    request.layer = m_layer->value() - 1;
    m_job.start([request](const JobControl& control) { return computeAttention(request, control); });
}

bool AttentionView::hasPicture() const
{
    return !m_result.probabilities.empty();
}

void AttentionView::paintPicture(QPainter& painter, const QRectF& target, const PictureStyle& style) const
{
    const auto [top, bottom] = splitVertically(target, 0.7);
    PictureStyle heatmapStyle = PictureStyle::forSize(top.size(), style.dark);
    heatmapStyle.vectorOutput = style.vectorOutput;
    m_heatmap->heatmap().paint(painter, top, heatmapStyle, m_heatmap->window());
    renderCurveFigure(painter, bottom, m_entropy->figure(), style);
}

void AttentionView::writeData(std::ostream& out, DataFormat format) const
{
    requirePicture();
    const int n = m_result.length;
    nlohmann::json meta = schemeSpecJson(m_result.spec);
    meta["model"] = m_result.request.model.name.toStdString();
    meta["layer"] = m_result.request.layer;
    meta["text"] = std::string(m_result.request.tokens.begin(), m_result.request.tokens.end());
    const TextView shown = m_result.canShow(textView()) ? textView() : TextView::Weights;
    meta["show"] = textViewName(shown);
    meta["values"] = shown == TextView::Bias ? "positional bias per head, keys a query cannot see -inf"
                     : shown == TextView::Positions
                         ? "contextual position p(m, n) per head, keys a query cannot see -inf"
                         : "attention probability per head, keys a query cannot see -inf";
    const std::vector<MatrixPtr>& matrices = shown == TextView::Bias        ? m_result.biases
                                             : shown == TextView::Positions ? m_result.positions
                                                                            : m_result.probabilities;
    MatrixStackWriter writer(out, format, m_result.heads, n, n, true, meta);
    for (int h = 0; h < m_result.heads; ++h)
        writer.write(h, matrices[h]->values.data());
    writer.finish();
}

nlohmann::json AttentionView::saveState() const
{
    nlohmann::json state{{"text", m_text->toPlainText().toStdString()},
                         {"layer", m_layer->value() - 1},
                         {"repeat_to", m_repeat->value()},
                         {"show", textViewName(textView())}};
    // Checkpoints by path: the models that have a file come back with the session.
    QStringList files;
    for (const SharedModel& m : m_models)
        if (!m.file.isEmpty() && !files.contains(m.file))
            files << m.file;
    nlohmann::json list = nlohmann::json::array();
    for (const QString& f : files)
        list.push_back(f.toStdString());
    state["checkpoints"] = list;
    const int i = m_modelChoice->currentIndex();
    if (i >= 0 && i < modelCount() && !m_models[i].file.isEmpty())
        state["model"] = m_models[i].file.toStdString();
    return state;
}

void AttentionView::restoreState(const nlohmann::json& state)
{
    const std::string where = "views.attention";
    const std::string text = sessionString(state, "text", kDefaultText, where);
    const int layer = sessionInt(state, "layer", 0, 0, 1023, where);
    const int repeat = sessionInt(state, "repeat_to", 0, 0, 2048, where);
    const QStringList checkpoints = sessionStringList(state, "checkpoints", where);
    const std::string model = sessionString(state, "model", "", where);
    TextView shown = TextView::Weights;
    try {
        shown = textViewByName(sessionString(state, "show", "weights", where));
    } catch (const InputError& e) {
        throw InputError(where + ": " + e.what());
    }
    setTextView(shown);
    setText(QString::fromStdString(text));
    m_layer->setMaximum(std::max(m_layer->maximum(), layer + 1));
    setLayer(layer);
    setRepeatTo(repeat);
    // Loading waits until the whole session is accepted: a session refused later must leave no model behind.
    m_sessionCheckpoints = checkpoints;
    m_sessionModel = QString::fromStdString(model);
}

int AttentionView::modelIndexForFile(const QString& file) const
{
    const QString absolute = QFileInfo(file).absoluteFilePath();
    for (int i = 0; i < modelCount(); ++i)
        if (m_models[i].file == absolute)
            return i;
    return -1;
}

int AttentionView::unsavedModelCount() const
{
    return static_cast<int>(
        std::count_if(m_models.begin(), m_models.end(), [](const SharedModel& m) { return m.file.isEmpty(); }));
}

QStringList AttentionView::loadSessionCheckpoints(const QString& folder)
{
    QStringList problems;
    const QDir base(folder.isEmpty() ? QDir::currentPath() : folder);
    const int layer = m_layer->value(); // choosing a model resets the layer's range; keep the session's layer
    for (const QString& name : std::exchange(m_sessionCheckpoints, {})) {
        const QString file = base.absoluteFilePath(name);
        QString error;
        if (modelIndexForFile(file) < 0 && !loadModel(file, &error))
            problems << error;
    }
    if (const QString current = std::exchange(m_sessionModel, {}); !current.isEmpty()) {
        const QString file = base.absoluteFilePath(current);
        if (const int i = modelIndexForFile(file); i >= 0)
            m_modelChoice->setCurrentIndex(i);
        else if (std::none_of(problems.begin(), problems.end(), [&](const QString& p) { return p.contains(file); }))
            problems << tr("views.attention.model: %1 is not among the session's checkpoints").arg(current);
    }
    m_layer->setValue(layer);
    return problems;
}

void AttentionView::setDark(bool dark)
{
    m_heatmap->setDark(dark);
    m_entropy->setDark(dark);
}

void AttentionView::resetZoom()
{
    m_heatmap->resetZoom();
}

} // namespace plab::ui
