// The model views: attention of a trained model on text, and train short / test long with streamed snapshots.
#include "views.h"

#include "charts/curve_chart.h"
#include "heatmap_widget.h"
#include "session.h"

#include "errors.h"
#include "matrix_output.h"

#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <utility>

namespace plab::ui {

namespace {

const char *kDefaultText = "To be, or not to be, that is the question: whether 'tis nobler in the mind to suffer "
                           "the slings and arrows of outrageous fortune.";

// Splits a picture: `fraction` of the height for the first part.
std::pair<QRectF, QRectF> splitVertically(const QRectF &r, double fraction)
{
    const double h = r.height() * fraction;
    return {QRectF(r.left(), r.top(), r.width(), h), QRectF(r.left(), r.top() + h, r.width(), r.height() - h)};
}

} // namespace

// ---- AttentionView ------------------------------------------------------------------------------------------

AttentionView::AttentionView(QWidget *parent)
    : ViewBase(parent)
    , m_job(this, {[this](AttentionResult r) {
                       if (!r.error.isEmpty()) {
                           m_heatmap->setMessage(r.error);
                           Q_EMIT statusMessage(r.error);
                           return;
                       }
                       m_result = std::move(r);
                       m_heatmap->setFigure(attentionFigure(m_result, m_panel.head, m_panel.colorMap));
                       m_entropy->setFigure(rowEntropyFigure(m_result, m_panel.head));
                       Q_EMIT pictureUpdated();
                   },
                   [this](int d, int t) { Q_EMIT progress(d, t); }, [this] { Q_EMIT busyChanged(false); }})
{
    auto *layout = new QHBoxLayout(this);
    auto *side = new QVBoxLayout;
    auto *sideBox = new QWidget(this);
    sideBox->setLayout(side);
    sideBox->setMaximumWidth(300);
    side->addWidget(new QLabel(tr("<b>Model</b>"), this));
    m_modelChoice = new QComboBox(this);
    m_modelChoice->setToolTip(tr("Models trained in the Train tab appear here; checkpoints load with the button"));
    side->addWidget(m_modelChoice);
    auto *buttons = new QHBoxLayout;
    auto *load = new QPushButton(tr("Load checkpoint…"), this);
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
    auto *form = new QFormLayout;
    m_layer = new QSpinBox(this);
    m_layer->setRange(1, 1);
    m_layer->setToolTip(tr("Transformer layer (1..layers)"));
    form->addRow(tr("Layer"), m_layer);
    m_repeat = new QSpinBox(this);
    m_repeat->setRange(0, 2048);
    m_repeat->setSpecialValueText(tr("off"));
    m_repeat->setToolTip(tr("Repeat the text to this many bytes, to see the model past its training context"));
    form->addRow(tr("Repeat to N"), m_repeat);
    side->addLayout(form);
    auto *note = new QLabel(tr("The head comes from the panel. Hover a cell for (m, n, probability)."), this);
    note->setWordWrap(true);
    side->addWidget(note);
    layout->addWidget(sideBox);

    auto *splitter = new QSplitter(Qt::Vertical, this);
    m_heatmap = new HeatmapWidget(splitter);
    m_entropy = new CurvePlot(splitter);
    m_entropy->setMinimumHeight(220);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 1);
    splitter->setSizes({600, 260});
    layout->addWidget(splitter, 1);
    m_heatmap->setMessage(tr("Attention on text needs a trained model: train one in the \"Train short / test long\" "
                             "tab or load a checkpoint (.safetensors) here."));

    connect(load, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Load checkpoint"), QString(),
                                                          tr("Checkpoints (*.safetensors)"));
        QString error;
        if (!path.isEmpty() && !loadModel(path, &error))
            Q_EMIT statusMessage(error);
    });
    connect(m_save, &QPushButton::clicked, this, [this] {
        const int i = m_modelChoice->currentIndex();
        if (i < 0 || i >= modelCount())
            return;
        const ModelConfig &c = m_models[i].model->config();
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
    });
    connect(m_modelChoice, &QComboBox::currentIndexChanged, this, [this](int i) {
        if (i >= 0 && i < modelCount()) {
            const ModelConfig &c = m_models[i].model->config();
            m_layer->setRange(1, c.layers);
            m_info->setText(tr("%1 layers · d_model %2 · %3 heads · context %4 · scheme %5")
                                .arg(c.layers)
                                .arg(c.dModel)
                                .arg(c.heads)
                                .arg(c.context)
                                .arg(QString::fromStdString(c.scheme)));
        }
        markDirty();
    });
    connect(m_text, &QPlainTextEdit::textChanged, this, [this] { markDirty(); });
    connect(m_layer, &QSpinBox::valueChanged, this, [this] { markDirty(); });
    connect(m_repeat, &QSpinBox::valueChanged, this, [this] { markDirty(); });
    connect(m_heatmap, &HeatmapWidget::hovered, this, [this](int, int m, int n, float v) {
        const auto &t = m_result.request.tokens;
        Q_EMIT hoverText(tr("query m = %1 '%2', key n = %3 '%4', probability = %5")
                             .arg(m)
                             .arg(byteLabel(t[m]))
                             .arg(n)
                             .arg(byteLabel(t[n]))
                             .arg(std::isfinite(v) ? QString::number(v, 'g', 5) : tr("masked")));
    });
    connect(m_heatmap, &HeatmapWidget::hoverLeft, this, [this] { Q_EMIT hoverText(QString()); });
    connect(m_entropy, &CurvePlot::hovered, this, &ViewBase::hoverText);
}

void AttentionView::addModel(const SharedModel &model)
{
    m_models.push_back(model);
    m_modelChoice->addItem(model.name);
    m_modelChoice->setCurrentIndex(modelCount() - 1);
    m_save->setEnabled(true);
}

bool AttentionView::saveModel(int index, const QString &path, QString *error)
{
    try {
        if (modelCount() > 0 && (index < 0 || index >= modelCount()))
            throw InputError("model " + std::to_string(index + 1) + " does not exist; allowed: 1.." +
                             std::to_string(modelCount()));
        // With no model at all, saveSharedModel refuses the empty one by itself.
        saveSharedModel(modelCount() > 0 ? m_models[index] : SharedModel{}, path);
        // A session now brings it back from there; a model that came from the overwritten file no longer can.
        const QString file = QFileInfo(path).absoluteFilePath();
        for (SharedModel &m : m_models)
            if (m.file == file)
                m.file.clear();
        m_models[index].file = file;
        return true;
    } catch (const std::exception &e) {
        if (error)
            *error = QString::fromStdString(e.what());
        return false;
    }
}

bool AttentionView::loadModel(const QString &path, QString *error)
{
    try {
        const SharedModel model = loadSharedModel(path);
        addModel(model);
        if (onModelLoaded)
            onModelLoaded(model);
        return true;
    } catch (const std::exception &e) {
        if (error)
            *error = QString::fromStdString(e.what());
        return false;
    }
}

void AttentionView::setText(const QString &text)
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
    if (repeat > 0 && !t.empty()) {
        std::vector<uint8_t> r(repeat);
        for (int i = 0; i < repeat; ++i)
            r[i] = t[i % t.size()];
        return r;
    }
    return t;
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
    Q_EMIT busyChanged(true);
    m_job.start([request](const JobControl &control) { return computeAttention(request, control); });
}

bool AttentionView::hasPicture() const
{
    return !m_result.probabilities.empty();
}

void AttentionView::paintPicture(QPainter &painter, const QRectF &target, const PictureStyle &style) const
{
    const auto [top, bottom] = splitVertically(target, 0.7);
    PictureStyle heatmapStyle = PictureStyle::forSize(top.size(), style.dark);
    heatmapStyle.vectorOutput = style.vectorOutput;
    m_heatmap->heatmap().paint(painter, top, heatmapStyle, m_heatmap->window());
    renderCurveFigure(painter, bottom, m_entropy->figure(), style);
}

void AttentionView::writeData(std::ostream &out, DataFormat format) const
{
    requirePicture();
    const int n = m_result.length;
    nlohmann::json meta = specMeta(m_result.spec);
    meta["model"] = m_result.request.model.name.toStdString();
    meta["layer"] = m_result.request.layer;
    meta["text"] = std::string(m_result.request.tokens.begin(), m_result.request.tokens.end());
    meta["values"] = "attention probability per head, keys a query cannot see -inf";
    MatrixStackWriter writer(out, format, m_result.heads, n, n, true, meta);
    for (int h = 0; h < m_result.heads; ++h)
        writer.write(h, m_result.probabilities[h]->values.data());
    writer.finish();
}

nlohmann::json AttentionView::saveState() const
{
    nlohmann::json state{{"text", m_text->toPlainText().toStdString()}, {"layer", m_layer->value() - 1},
                         {"repeat_to", m_repeat->value()}};
    // Checkpoints by path: the models that have a file come back with the session.
    QStringList files;
    for (const SharedModel &m : m_models)
        if (!m.file.isEmpty() && !files.contains(m.file))
            files << m.file;
    nlohmann::json list = nlohmann::json::array();
    for (const QString &f : files)
        list.push_back(f.toStdString());
    state["checkpoints"] = list;
    const int i = m_modelChoice->currentIndex();
    if (i >= 0 && i < modelCount() && !m_models[i].file.isEmpty())
        state["model"] = m_models[i].file.toStdString();
    return state;
}

void AttentionView::restoreState(const nlohmann::json &state)
{
    const std::string where = "views.attention";
    const std::string text = sessionString(state, "text", kDefaultText, where);
    const int layer = sessionInt(state, "layer", 0, 0, 1023, where);
    const int repeat = sessionInt(state, "repeat_to", 0, 0, 2048, where);
    const QStringList checkpoints = sessionStringList(state, "checkpoints", where);
    const std::string model = sessionString(state, "model", "", where);
    setText(QString::fromStdString(text));
    m_layer->setMaximum(std::max(m_layer->maximum(), layer + 1));
    setLayer(layer);
    setRepeatTo(repeat);
    // Loading waits until the whole session is accepted: a session refused later must leave no model behind.
    m_sessionCheckpoints = checkpoints;
    m_sessionModel = QString::fromStdString(model);
}

int AttentionView::modelIndexForFile(const QString &file) const
{
    const QString absolute = QFileInfo(file).absoluteFilePath();
    for (int i = 0; i < modelCount(); ++i)
        if (m_models[i].file == absolute)
            return i;
    return -1;
}

int AttentionView::unsavedModelCount() const
{
    return static_cast<int>(std::count_if(m_models.begin(), m_models.end(), [](const SharedModel &m) { return m.file.isEmpty(); }));
}

QStringList AttentionView::loadSessionCheckpoints(const QString &folder)
{
    QStringList problems;
    const QDir base(folder.isEmpty() ? QDir::currentPath() : folder);
    const int layer = m_layer->value(); // choosing a model resets the layer's range; keep the session's layer
    for (const QString &name : std::exchange(m_sessionCheckpoints, {})) {
        const QString file = base.absoluteFilePath(name);
        QString error;
        if (modelIndexForFile(file) < 0 && !loadModel(file, &error))
            problems << error;
    }
    if (const QString current = std::exchange(m_sessionModel, {}); !current.isEmpty()) {
        const QString file = base.absoluteFilePath(current);
        if (const int i = modelIndexForFile(file); i >= 0)
            m_modelChoice->setCurrentIndex(i);
        else if (std::none_of(problems.begin(), problems.end(), [&](const QString &p) { return p.contains(file); }))
            problems << tr("views.attention.model: %1 is not among the session's checkpoints").arg(current);
    }
    m_layer->setValue(layer);
    return problems;
}

void AttentionView::cancelJob()
{
    m_job.cancel();
}

bool AttentionView::isBusy() const
{
    return m_job.isRunning();
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

// ---- TrainView ----------------------------------------------------------------------------------------------

TrainView::TrainView(QWidget *parent)
    : ViewBase(parent)
    , m_watcher(new QFutureWatcher<TrainSnapshot>(this))
{
    auto *layout = new QHBoxLayout(this);
    auto *sideBox = new QWidget(this);
    auto *side = new QVBoxLayout(sideBox);
    sideBox->setMaximumWidth(280);
    side->addWidget(new QLabel(tr("<b>Schemes</b> to train"), this));
    m_schemes = newSchemeChecklist(
        {QStringLiteral("sinusoidal"), QStringLiteral("rope"), QStringLiteral("t5"), QStringLiteral("alibi")}, this);
    side->addWidget(m_schemes, 1);
    auto *form = new QFormLayout;
    m_preset = new QComboBox(this);
    m_preset->addItem(tr("tiny (1 layer, d 64, L 32)"), QStringLiteral("tiny"));
    m_preset->addItem(tr("quick (2 layers, d 128, L 64)"), QStringLiteral("quick"));
    m_preset->setToolTip(tr("Model size; 'quick' is the CLI's default preset"));
    form->addRow(tr("Model"), m_preset);
    m_steps = new QSpinBox(this);
    m_steps->setRange(1, 1000000);
    m_steps->setValue(150);
    form->addRow(tr("Steps"), m_steps);
    m_mode = new QComboBox(this);
    m_mode->addItem(tr("non-overlapping"), QStringLiteral("nonoverlapping"));
    m_mode->addItem(tr("sliding window"), QStringLiteral("sliding"));
    form->addRow(tr("Evaluation"), m_mode);
    m_evalBytes = new QSpinBox(this);
    m_evalBytes->setRange(0, 1 << 24);
    m_evalBytes->setValue(16384);
    m_evalBytes->setSpecialValueText(tr("all"));
    m_evalBytes->setToolTip(tr("Held-out bytes scored per length (the last 10% of the corpus)"));
    form->addRow(tr("Eval bytes"), m_evalBytes);
    side->addLayout(form);
    m_corpusLabel = new QLabel(this);
    m_corpusLabel->setWordWrap(true);
    side->addWidget(m_corpusLabel);
    auto *buttons = new QHBoxLayout;
    m_train = new QPushButton(tr("Train"), this);
    m_stop = new QPushButton(tr("Cancel"), this);
    m_stop->setEnabled(false);
    buttons->addWidget(m_train);
    buttons->addWidget(m_stop);
    side->addLayout(buttons);
    m_status = new QLabel(tr("Trains each scheme at context L, then scores held-out text at L, 2L, 4L, 8L, 16L."), this);
    m_status->setWordWrap(true);
    side->addWidget(m_status);
    layout->addWidget(sideBox);

    auto *right = new QSplitter(Qt::Vertical, this);
    auto *plots = new QSplitter(Qt::Horizontal, right);
    m_lossPlot = new CurvePlot(plots);
    m_pplPlot = new CurvePlot(plots);
    m_table = new QTableWidget(right);
    m_table->verticalHeader()->hide();
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    right->setStretchFactor(0, 3);
    right->setStretchFactor(1, 1);
    layout->addWidget(right, 1);
    setCorpus(QString());

    connect(m_train, &QPushButton::clicked, this, [this] { start(request()); });
    connect(m_stop, &QPushButton::clicked, this, [this] { cancelJob(); });
    connect(m_watcher, &QFutureWatcherBase::resultReadyAt, this, &TrainView::onSnapshot);
    connect(m_watcher, &QFutureWatcherBase::finished, this, &TrainView::onFinished);
    connect(m_watcher, &QFutureWatcherBase::progressValueChanged, this,
            [this](int v) { Q_EMIT progress(v, m_watcher->progressMaximum()); });
    connect(m_lossPlot, &CurvePlot::hovered, this, &ViewBase::hoverText);
    connect(m_pplPlot, &CurvePlot::hovered, this, &ViewBase::hoverText);
}

TrainView::~TrainView()
{
    // The run holds references into this view's request: stop and wait before it goes.
    m_watcher->cancel();
    m_watcher->waitForFinished();
}

void TrainView::setCorpus(const QString &path)
{
    m_corpus = path;
    m_corpusLabel->setText(path.isEmpty() ? tr("Corpus: fortunes (default; drop a text file on the window to change)")
                                          : tr("Corpus: %1").arg(path));
}

TrainRequest TrainView::request() const
{
    TrainRequest r;
    r.schemes.clear();
    for (const QString &name : checkedSchemes(m_schemes))
        r.schemes.push_back(name.toStdString());
    applyPreset(m_preset->currentData().toString().toStdString(), r.model, r.train); // tiny or quick, from core
    r.train.steps = m_steps->value();
    r.train.warmup = std::min(r.train.warmup, r.train.steps / 5);
    r.mode = evalModeFromName(m_mode->currentData().toString().toStdString());
    r.evalBytes = static_cast<size_t>(m_evalBytes->value());
    r.corpusPath = m_corpus;
    r.reportEvery = std::max(1, r.train.steps / 100);
    return r;
}

void TrainView::start(const TrainRequest &request)
{
    // A run is over when its "finished" is handled: the worker may have returned while that signal still waits in
    // the event queue, and a new future set now would silently drop the old run's last snapshots and its
    // trainingFinished.
    if (m_inFlight)
        return;
    if (request.schemes.empty()) {
        Q_EMIT statusMessage(tr("Train: tick at least one scheme"));
        return;
    }
    m_running = request;
    m_losses.assign(request.schemes.size(), Curve{});
    m_evals.assign(request.schemes.size(), {});
    m_error.clear();
    m_lossPlot->setFigure(trainingLossFigure(m_running.schemes, m_losses, m_running.model.context));
    m_pplPlot->setFigure(perplexityFigure(m_running.schemes, m_evals, m_running.model.context));
    updateTable();
    m_status->setText(tr("Training %1 scheme(s)…").arg(request.schemes.size()));
    m_train->setEnabled(false);
    m_stop->setEnabled(true);
    m_inFlight = true;
    m_watcher->setFuture(QtConcurrent::run([request](QPromise<TrainSnapshot> &promise) { runTraining(request, promise); }));
    Q_EMIT busyChanged(true);
}

void TrainView::onSnapshot(int index)
{
    const TrainSnapshot s = m_watcher->future().resultAt(index);
    if (!s.error.isEmpty()) {
        m_error = s.error;
        return;
    }
    if (s.scheme < 0 || s.scheme >= static_cast<int>(m_losses.size()))
        return;
    if (!s.trained) {
        m_losses[s.scheme].x.push_back(s.step);
        m_losses[s.scheme].y.push_back(s.loss);
        m_lossPlot->setFigure(trainingLossFigure(m_running.schemes, m_losses, m_running.model.context));
        m_status->setText(tr("%1: step %2 of %3, loss %4")
                              .arg(QString::fromStdString(m_running.schemes[s.scheme]))
                              .arg(s.step)
                              .arg(m_running.train.steps)
                              .arg(s.loss, 0, 'f', 3));
        return;
    }
    m_evals[s.scheme] = s.eval;
    m_pplPlot->setFigure(perplexityFigure(m_running.schemes, m_evals, m_running.model.context));
    updateTable();
    if (s.model.isValid() && onModelReady)
        onModelReady(s.model);
    Q_EMIT pictureUpdated();
}

void TrainView::onFinished()
{
    m_inFlight = false;
    m_train->setEnabled(true);
    m_stop->setEnabled(false);
    const bool canceled = m_watcher->future().isCanceled();
    m_status->setText(canceled ? tr("Canceled.") : (m_error.isEmpty() ? tr("Done.") : m_error));
    if (!m_error.isEmpty())
        Q_EMIT statusMessage(m_error);
    Q_EMIT busyChanged(false);
    Q_EMIT trainingFinished(canceled ? tr("canceled") : m_error);
}

void TrainView::updateTable()
{
    // Rows: schemes; columns: evaluation lengths; cells: perplexity.
    const auto &m = m_running.evalMultipliers;
    m_table->clear();
    m_table->setRowCount(static_cast<int>(m_running.schemes.size()));
    m_table->setColumnCount(static_cast<int>(m.size()) + 1);
    QStringList headers{tr("scheme")};
    for (int k : m)
        headers << tr("ppl @ %1").arg(k * m_running.model.context);
    m_table->setHorizontalHeaderLabels(headers);
    for (size_t s = 0; s < m_running.schemes.size(); ++s) {
        m_table->setItem(static_cast<int>(s), 0, new QTableWidgetItem(QString::fromStdString(m_running.schemes[s])));
        for (size_t i = 0; i < m_evals[s].size() && i < m.size(); ++i) {
            const EvalPoint &p = m_evals[s][i];
            auto *item = new QTableWidgetItem(p.supported ? QString::number(p.perplexity, 'f', 3) : tr("unsupported"));
            item->setToolTip(p.supported ? tr("loss %1 nats/byte, %2 bits/byte, %3 bytes scored")
                                               .arg(p.loss, 0, 'f', 4)
                                               .arg(p.bitsPerByte, 0, 'f', 4)
                                               .arg(p.tokens)
                                         : QString::fromStdString(p.note));
            item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            m_table->setItem(static_cast<int>(s), static_cast<int>(i) + 1, item);
        }
    }
    m_table->resizeColumnsToContents();
}

bool TrainView::hasPicture() const
{
    for (const Curve &c : m_losses)
        if (!c.x.empty())
            return true;
    return false;
}

void TrainView::paintPicture(QPainter &painter, const QRectF &target, const PictureStyle &style) const
{
    const QRectF left(target.left(), target.top(), target.width() * 0.45, target.height());
    const QRectF right(left.right(), target.top(), target.width() - left.width(), target.height());
    renderCurveFigure(painter, left, m_lossPlot->figure(), style);
    renderCurveFigure(painter, right, m_pplPlot->figure(), style);
}

void TrainView::writeData(std::ostream &out, DataFormat format) const
{
    requirePicture();
    Table t;
    t.columns = {"scheme_index", "length", "loss", "perplexity", "bits_per_byte", "supported"};
    t.meta["schemes"] = nlohmann::json::array();
    for (const std::string &s : m_running.schemes)
        t.meta["schemes"].push_back(s);
    t.meta["model"] = m_running.model.toJson();
    t.meta["training"] = m_running.train.toJson();
    t.meta["eval_mode"] = m_running.mode == EvalMode::Sliding ? "sliding" : "nonoverlapping";
    for (size_t s = 0; s < m_evals.size(); ++s)
        for (const EvalPoint &p : m_evals[s])
            t.rows.push_back({double(s), double(p.length), p.loss, p.perplexity, p.bitsPerByte, p.supported ? 1.0 : 0.0});
    writeTable(out, format, t);
}

nlohmann::json TrainView::saveState() const
{
    nlohmann::json names = nlohmann::json::array();
    for (const QString &name : checkedSchemes(m_schemes))
        names.push_back(name.toStdString());
    return {{"schemes", names},
            {"preset", m_preset->currentData().toString().toStdString()},
            {"steps", m_steps->value()},
            {"eval_mode", m_mode->currentData().toString().toStdString()},
            {"eval_bytes", m_evalBytes->value()}};
}

void TrainView::restoreState(const nlohmann::json &state)
{
    const std::string where = "views.train";
    const QStringList names = sessionSchemeNames(state, "schemes", where);
    const std::string preset = sessionString(state, "preset", "tiny", where);
    if (preset != "tiny" && preset != "quick")
        throw InputError("session: views.train.preset = '" + preset + "' is not allowed; allowed: tiny, quick");
    const int steps = sessionInt(state, "steps", 150, 1, 1000000, where);
    const std::string mode = sessionString(state, "eval_mode", "nonoverlapping", where);
    evalModeFromName(mode); // throws InputError naming the allowed modes
    const int bytes = sessionInt(state, "eval_bytes", 16384, 0, 1 << 24, where);
    if (state.contains("schemes"))
        setCheckedSchemes(m_schemes, names);
    m_preset->setCurrentIndex(m_preset->findData(QString::fromStdString(preset)));
    m_steps->setValue(steps);
    m_mode->setCurrentIndex(m_mode->findData(QString::fromStdString(mode)));
    m_evalBytes->setValue(bytes);
}

void TrainView::cancelJob()
{
    m_watcher->cancel();
}

bool TrainView::isBusy() const
{
    return m_inFlight;
}

void TrainView::setDark(bool dark)
{
    m_lossPlot->setDark(dark);
    m_pplPlot->setDark(dark);
}

} // namespace plab::ui
