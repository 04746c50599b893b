// The Train short / test long tab: its layout, a training run's live loss curves, the perplexity plot and table.
#include "tabs/train_view.h"

#include "tabs/layer_type_fields.h"

#include "charts/curve_chart.h"
#include "settings/session.h"
#include "tabs/heatmap_widget.h"
#include "tabs/continue_text_page.h"
#include "tabs/methods_panel.h"
#include "workers/headless.h"
#include "workers/training_run.h"

#include "base/matrix_output.h"
#include "model/corpus.h"
#include "model/model_config.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QResizeEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <utility>

namespace plab::ui {

TrainView::TrainView(QWidget* parent) : ViewBase(parent), m_run(new TrainingRun(this))
{
    m_taskRunner = new TaskRunner(this);
    auto* layout = new QHBoxLayout(this);
    m_controls = buildControlColumn();
    layout->addWidget(m_controls);
    layout->addWidget(buildResults(), 1);
    setCorpus(QString());
    m_preset->setObjectName(QStringLiteral("preset"));
    m_lr->setObjectName(QStringLiteral("learning_rate"));
    for (const auto& [key, box] : intFields())
        box->setObjectName(QString::fromLatin1(key)); // as in sessions
    setPreset(QString::fromLatin1(kDemoPreset));

    connect(m_preset, &QComboBox::currentIndexChanged, this, [this] {
        const QString name = m_preset->currentData().toString();
        if (name != QLatin1String(kCustomPreset))
            setPreset(name);
    });
    connect(m_schemes, &QListWidget::itemChanged, this, &TrainView::previewTable);
    connectTaskRuns();
    connect(m_stop, &QPushButton::clicked, this, [this] { cancelJob(); });
    connect(m_run, &TrainingRun::snapshot, this, &TrainView::onSnapshot);
    connect(m_run, &TrainingRun::finished, this, &TrainView::onFinished);
    connect(m_run, &TrainingRun::progress, this, &ViewBase::progress);
    connect(m_lossPlot, &CurvePlot::hovered, this, &ViewBase::hoverText);
    connect(m_pplPlot, &CurvePlot::hovered, this, &ViewBase::hoverText);
    connect(m_methods, &MethodsPanel::progress, this, &ViewBase::progress);
    connect(m_methods, &MethodsPanel::busyChanged, this, &ViewBase::busyChanged);
    connect(m_methods, &MethodsPanel::hoverText, this, &ViewBase::hoverText);
    connect(m_methods, &MethodsPanel::statusMessage, this, &ViewBase::statusMessage);
    connect(m_methods, &MethodsPanel::pictureUpdated, this, &ViewBase::pictureUpdated);
    connect(m_evalBytes, &QSpinBox::valueChanged, this, &TrainView::syncMethodsEvaluation);
    connect(m_mode, &QComboBox::currentIndexChanged, this, &TrainView::syncMethodsEvaluation);
    syncMethodsEvaluation();
}

QWidget* TrainView::buildControlColumn()
{
    // The fields scroll when the window is shorter than they are (a 768-pixel screen in Chinese): the window fits.
    auto* scroll = new QScrollArea(this);
    QWidget* fields = buildControls();
    scroll->setWidget(fields);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setMinimumWidth(fields->sizeHint().width() + scroll->verticalScrollBar()->sizeHint().width());
    scroll->setMaximumWidth(fields->maximumWidth() + scroll->verticalScrollBar()->sizeHint().width());
    // The buttons and the status stay in view under the scrolling fields (in Chinese on a 768-pixel screen they
    // were below the fold).
    auto* column = new QWidget(this);
    auto* columnLayout = new QVBoxLayout(column);
    columnLayout->setContentsMargins(0, 0, 0, 0);
    columnLayout->addWidget(scroll, 1);
    auto* actions = new QWidget(column);
    actions->setObjectName(QStringLiteral("train_actions"));
    actions->setMaximumWidth(scroll->maximumWidth());
    auto* actionsLayout = new QVBoxLayout(actions);
    actionsLayout->setContentsMargins(fields->layout()->contentsMargins().left(), 0,
                                      fields->layout()->contentsMargins().right(), 0);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_train);
    buttons->addWidget(m_stop);
    actionsLayout->addLayout(buttons);
    actionsLayout->addWidget(m_drope);
    actionsLayout->addWidget(m_status);
    columnLayout->addWidget(actions);
    return column;
}


void TrainView::syncMethodsEvaluation()
{
    m_methods->setEvaluation(static_cast<size_t>(m_evalBytes->value()),
                             evalModeFromName(m_mode->currentData().toString().toStdString()), m_corpus);
}

void TrainView::addModel(const SharedModel& model, bool select)
{
    if (!model.isValid())
        return;
    const bool rotary = schemeByName(model.model->config().scheme).rotary;
    m_methods->addModel(model, select && (rotary || !m_methods->currentModel().isValid()));
    m_continueText->addModel(model, select);
}

bool TrainView::methodsShown() const
{
    return m_pages->currentWidget() == m_methods;
}

void TrainView::showMethodsPage(bool show)
{
    m_pages->setCurrentIndex(show ? 1 : 0);
}

QWidget* TrainView::buildControls()
{
    auto* sideBox = new QWidget(this);
    auto* side = new QVBoxLayout(sideBox);
    sideBox->setMaximumWidth(290);
    side->addWidget(new QLabel(tr("<b>Schemes</b> to train"), this));
    QStringList defaults;
    for (const std::string& name : TrainRequest{}.schemes)
        defaults << QString::fromStdString(name);
    m_schemes = newSchemeChecklist(defaults, this);
    side->addWidget(m_schemes, 1);
    side->addLayout(buildFields());
    m_corpusLabel = new QLabel(this);
    m_corpusLabel->setWordWrap(true);
    side->addWidget(m_corpusLabel);
    m_train = new QPushButton(tr("Train"), this);
    m_stop = new QPushButton(tr("Cancel"), this);
    m_stop->setEnabled(false);
    m_drope = new QPushButton(tr("Run the DroPE recipe"), this);
    m_drope->setObjectName(QStringLiteral("drope_recipe"));
    m_drope->setToolTip(tr("On the chosen task: train rope, drop the positions, recalibrate for the chosen share of "
                           "the steps, then score it beside rope, rope + YaRN zero-shot and NoPE"));
    m_status = new QLabel(
        tr("Trains each scheme at context L, then scores held-out text at %1.").arg(evaluationLengthsText()), this);
    m_status->setWordWrap(true);
    return sideBox; // the buttons and the status go under the scroll area (the constructor)
}

QWidget* TrainView::buildResults()
{
    m_pages = new QTabWidget(this);
    m_pages->setObjectName(QStringLiteral("train_pages"));
    auto* right = new QSplitter(Qt::Vertical, m_pages);
    m_results = right;
    auto* plots = new QSplitter(Qt::Horizontal, right);
    m_lossPlot = new CurvePlot(plots);
    m_lossPlot->setEmptyHint(tr("Press Train to train the ticked schemes: each one's training loss appears here as it "
                                "trains."));
    m_pplPlot = new CurvePlot(plots);
    m_pplPlot->setEmptyHint(tr("Press Train to train the ticked schemes; each curve appears when its model is "
                               "evaluated."));
    m_heatmap = new HeatmapWidget(right); // under the charts: four panels need the width
    m_heatmap->setObjectName(QStringLiteral("passkey_heatmap"));
    m_heatmap->setEmptyHint(tr("Passkey accuracy by needle depth and length appears here as each model is scored."));
    m_heatmap->hide(); // passkey runs only
    m_table = new QTableWidget(right);
    m_table->setObjectName(QStringLiteral("train_table"));
    m_table->verticalHeader()->hide();
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->viewport()->installEventFilter(this);
    right->setStretchFactor(0, 3);
    right->setStretchFactor(1, 3);
    right->setStretchFactor(2, 1);
    m_methods = new MethodsPanel(m_pages);
    m_pages->addTab(right, tr("Training runs"));
    m_pages->addTab(m_methods, tr("Evaluate under methods"));
    m_pages->setTabToolTip(1, tr("A trained rope or xpos model scored zero-shot under length-extension methods: one "
                                 "perplexity curve per method"));
    m_continueText = new ContinueTextPage(ContinueTextPage::Source::Lab, m_pages);
    connect(m_continueText, &ContinueTextPage::busyChanged, this, &ViewBase::busyChanged);
    connect(m_continueText, &ContinueTextPage::statusMessage, this, &ViewBase::statusMessage);
    m_pages->addTab(m_continueText, tr("Continue the text"));
    // The training fields do not apply to the methods page (but its eval bytes, mode and corpus): the chart gets the
    // room.
    connect(m_pages, &QTabWidget::currentChanged, this, [this] {
        m_controls->setVisible(m_pages->currentWidget() == m_results); // the training fields: that page only
        Q_EMIT pictureUpdated();
    });
    return m_pages;
}

TrainView::~TrainView() = default; // the run cancels and waits for its worker

void TrainView::setCorpus(const QString& path)
{
    m_corpus = path;
    if (m_methods)
        syncMethodsEvaluation();
    m_corpusLabel->setText(path.isEmpty() ? tr("Corpus: fortunes (default; drop a text file on the window to change)")
                                          : tr("Corpus: %1").arg(path));
}

QString TrainView::preset() const
{
    return m_preset->currentData().toString();
}

QString TrainView::runLabel(const std::string& scheme) const
{
    const std::string options = modelOptionsLabel(m_running.model);
    return QString::fromStdString(options.empty() || scheme.empty() ? scheme + options : scheme + " " + options);
}

std::vector<std::string> TrainView::runLabels() const
{
    std::vector<std::string> labels;
    for (const std::string& scheme : m_running.schemes)
        labels.push_back(runLabel(scheme).toStdString());
    return labels;
}

void TrainView::previewTable()
{
    // Before the first run the table shows what a run would fill: the ticked schemes and the evaluation lengths.
    if (m_run->isRunning() || m_taskRunner->isRunning() || hasPicture())
        return;
    try {
        m_running = request();
    } catch (const InputError&) {
        return;
    }
    m_losses.assign(m_running.schemes.size(), Curve{});
    m_evals.assign(m_running.schemes.size(), {});
    m_seedResults.clear();
    updateTable();
}

TrainRequest TrainView::request() const
{
    // The preset last chosen gives what the tab does not show (learning-rate floor, warm-up); the fields the rest.
    TrainRequest r = presetTrainRequest(m_basePreset.toStdString());
    r.schemes.clear();
    for (const QString& name : checkedSchemes(m_schemes))
        r.schemes.push_back(name.toStdString());
    r.preset = preset();
    setTrainingSteps(r.train, m_steps->value()); // with the warm-up rule
    r.train.learningRate = m_lr->value();
    r.train.minLearningRate = std::min(r.train.minLearningRate, r.train.learningRate);
    r.train.batch = m_batch->value();
    r.model.context = m_context->value();
    r.model.layers = m_layers->value();
    r.model.dModel = m_dModel->value();
    r.model.heads = m_heads->value();
    r.model.dFf = m_dFf->value();
    r.model.nopeEvery = m_nopeEvery->value() == m_nopeEvery->minimum() ? 0 : m_nopeEvery->value();
    r.model.temperature.tuning = m_temperature->isChecked();
    r.model.temperature.floorScale = m_floorScale->value();
    r.model.temperature.attnScale = m_attnScale->value();
    r.model.ssmax = m_ssmax->isChecked();
    r.model.sinkLogit = m_sinkLogit->isChecked();
    m_layerTypeFields->apply(r.model);
    r.mode = evalModeFromName(m_mode->currentData().toString().toStdString());
    r.evalBytes = static_cast<size_t>(m_evalBytes->value());
    r.corpusPath = m_corpus;
    r.reportEvery = reportInterval(r.train.steps);
    r.seeds = m_seeds->value();
    return r;
}

void TrainView::start(const TrainRequest& request)
{
    // A run is over when its end is handled (TrainingRun::isRunning), not when the worker returns.
    if (m_run->isRunning() || m_taskRunner->isRunning())
        return;
    if (request.schemes.empty()) {
        Q_EMIT statusMessage(tr("Train: tick at least one scheme"));
        return;
    }
    // Core's checks of every scheme's model (NoPE every needs a rotary scheme and K ≤ layers) before anything changes.
    for (size_t s = 0; s < request.schemes.size(); ++s) {
        try {
            validateModelConfig(schemeModelConfig(request, s));
        } catch (const InputError& e) {
            m_status->setText(tr("%1 cannot train: %2")
                                  .arg(QString::fromStdString(request.schemes[s]), QString::fromStdString(e.what())));
            Q_EMIT statusMessage(m_status->text());
            return;
        }
    }
    m_running = request;
    m_taskShown = false;
    m_heatmap->hide();
    m_losses.assign(request.schemes.size(), Curve{});
    m_evals.assign(request.schemes.size(), {});
    m_lossSeed.assign(request.schemes.size(), 0);
    m_seedResults.clear();
    m_summary.clear();
    m_sweepSource.clear();
    m_lossPlot->setEmptyHint(tr("Press Train to train the ticked schemes: each one's training loss appears here as it "
                                "trains."));
    m_lossPlot->show();
    m_lossPlot->setFigure(trainingLossFigure(runLabels(), m_losses, m_running.model.context));
    m_pplPlot->setFigure(perplexityFigure(runLabels(), m_evals, m_running.model.context));
    updateTable();
    m_status->setText(request.seeds > 1
                          ? tr("Training %1 scheme(s) × %2 seeds…").arg(request.schemes.size()).arg(request.seeds)
                          : tr("Training %1 scheme(s)…").arg(request.schemes.size()));
    m_train->setEnabled(false);
    m_drope->setEnabled(false);
    m_stop->setEnabled(true);
    m_canceled = false;
    m_runClock.start();
    m_run->start(request);
    Q_EMIT busyChanged(true);
}

void TrainView::onSnapshot(const TrainSnapshot& s)
{
    if (s.schemeIndex < 0 || s.schemeIndex >= static_cast<int>(m_losses.size()))
        return;
    if (!s.trained) {
        if (s.seed != m_lossSeed[s.schemeIndex]) { // a new seed of this scheme: its loss curve starts again
            m_losses[s.schemeIndex] = Curve{};
            m_lossSeed[s.schemeIndex] = s.seed;
        }
        m_losses[s.schemeIndex].x.push_back(s.step);
        m_losses[s.schemeIndex].y.push_back(s.loss);
        m_lossPlot->setFigure(trainingLossFigure(runLabels(), m_losses, m_running.model.context));
        const QString name =
            m_running.seeds > 1
                ? tr("%1, seed %2").arg(runLabel(m_running.schemes[s.schemeIndex])).arg(m_running.model.seed + s.seed)
                : runLabel(m_running.schemes[s.schemeIndex]);
        if (!m_canceled) // a step that came after Cancel keeps the "Canceled" line
            m_status->setText(tr("%1: step %2 of %3, loss %4")
                                  .arg(name)
                                  .arg(s.step)
                                  .arg(m_running.train.steps)
                                  .arg(s.loss, 0, 'f', 3));
        return;
    }
    // This scheme's curve and table row now, not at the end of the run.
    m_seedResults.push_back(s.result); // the cell's result line: one seed or many feed the same table
    if (s.seed == 0)
        m_evals[s.schemeIndex] = s.eval;
    if (m_running.seeds > 1) {
        m_summary = summarizeSweep(m_seedResults);
        showSummary();
    } else {
        m_pplPlot->setFigure(perplexityFigure(runLabels(), m_evals, m_running.model.context));
        updateTable();
    }
    if (s.seed == 0 && s.model.isValid()) {
        addModel(s.model);
        if (onModelReady) // the first seed's model is the one kept and offered
            onModelReady(s.model);
    }
    Q_EMIT pictureUpdated();
}

void TrainView::onFinished(const QString& error, bool canceled)
{
    finishRun(error, canceled);
}

void TrainView::finishRun(const QString& error, bool canceled)
{
    m_train->setEnabled(true);
    m_drope->setEnabled(m_task->currentData().toString() != QLatin1String(kTextTask));
    m_stop->setEnabled(false);
    if (!canceled || !std::exchange(m_canceled, false)) // Cancel already said so, with the time at the click
        m_status->setText(canceled ? canceledText(m_runClock.elapsed()) : (error.isEmpty() ? tr("Done.") : error));
    if (!error.isEmpty())
        Q_EMIT statusMessage(error);
    Q_EMIT busyChanged(false);
    Q_EMIT trainingFinished(canceled ? tr("canceled") : error);
}

void TrainView::showSweepResults(const std::vector<SweepResult>& results, const QString& source)
{
    if (m_run->isRunning())
        return;
    m_summary = summarizeSweep(results);
    m_sweepSource = source;
    m_taskShown = false;
    m_heatmap->hide();
    m_losses.clear();
    m_lossPlot->setEmptyHint(
        tr("Sweep results from %1: a sweep folder keeps perplexities, not training curves.").arg(source));
    CurveFigure none;
    none.title = tr("Training loss");
    m_lossPlot->setFigure(none);
    m_lossPlot->hide(); // the perplexities take the room, as in the exported picture
    showSummary();
    m_status->setText(tr("Sweep results from %1: %2 finished cells.").arg(source).arg(results.size()));
    Q_EMIT pictureUpdated();
}

void TrainView::showSummary()
{
    // A run's rows carry its model options (its cells' results), so their curves name them as its single-seed ones do.
    m_pplPlot->setFigure(sweepPerplexityFigure(m_summary));
    std::vector<int> lengths;
    for (const SweepSummaryRow& r : m_summary)
        if (std::find(lengths.begin(), lengths.end(), r.length) == lengths.end())
            lengths.push_back(r.length);
    std::sort(lengths.begin(), lengths.end());
    fillTable({}, lengths, m_summary);
}

void TrainView::updateTable()
{
    // The run's schemes in its order (before their results too), its lengths, its results so far: one seed or many.
    fillTable(m_running.schemes, evaluationLengths(m_running), summarizeSweep(m_seedResults));
}

void TrainView::fillTable(const std::vector<std::string>& schemes, const std::vector<int>& lengths,
                          const std::vector<SweepSummaryRow>& rows)
{
    // Rows: each scheme (and variant), the given ones first; columns: the lengths; cells: perplexity, mean ± sd when
    // more than one seed is collected.
    std::vector<std::pair<std::string, std::string>> groups;
    // A sweep folder's rows name its model options here (a run's names come from runLabel below).
    auto variantOf = [&](const SweepSummaryRow& r) {
        const std::string model =
            m_sweepSource.isEmpty() ? std::string() : sweepModelName(r.layers, r.modelOptions, false);
        return model.empty() ? r.variant : r.variant.empty() ? model : r.variant + " " + model;
    };
    auto addGroup = [&](const std::string& scheme, const std::string& variant) {
        if (std::find(groups.begin(), groups.end(), std::make_pair(scheme, variant)) == groups.end())
            groups.emplace_back(scheme, variant);
    };
    for (const std::string& scheme : schemes) {
        bool found = false;
        for (const SweepSummaryRow& r : rows)
            if (r.scheme == scheme) {
                addGroup(r.scheme, variantOf(r));
                found = true;
            }
        if (!found)
            addGroup(scheme, {});
    }
    for (const SweepSummaryRow& r : rows)
        addGroup(r.scheme, variantOf(r));
    m_table->clear();
    m_table->setRowCount(static_cast<int>(groups.size()));
    m_table->setColumnCount(static_cast<int>(lengths.size()) + 1);
    m_table->setHorizontalHeaderItem(0, new QTableWidgetItem(tr("scheme")));
    for (size_t c = 0; c < lengths.size(); ++c) {
        auto* header = new QTableWidgetItem;
        header->setData(Qt::UserRole, lengths[c]); // fitTableColumns writes its text
        m_table->setHorizontalHeaderItem(static_cast<int>(c) + 1, header);
    }
    for (size_t g = 0; g < groups.size(); ++g) {
        const std::string scheme =
            groups[g].first + (groups[g].second.empty() ? std::string() : " " + groups[g].second);
        const QString name = m_sweepSource.isEmpty() ? runLabel(scheme) : QString::fromStdString(scheme);
        m_table->setItem(static_cast<int>(g), 0, new QTableWidgetItem(name));
    }
    for (const SweepSummaryRow& r : rows) {
        const auto column = std::find(lengths.begin(), lengths.end(), r.length);
        if (column == lengths.end())
            continue;
        const int row = static_cast<int>(
            std::find(groups.begin(), groups.end(), std::make_pair(r.scheme, variantOf(r))) - groups.begin());
        const SampleStats& p = r.perplexity;
        auto* item = new QTableWidgetItem(p.n == 0   ? tr("unsupported")
                                          : p.n == 1 ? QString::number(p.mean, 'f', 3)
                                                     : tr("%1 ± %2").arg(p.mean, 0, 'f', 3).arg(p.sd, 0, 'f', 3));
        if (p.n > 0)
            item->setToolTip(tr("n = %1 seeds, min %2, max %3; ppl / ppl(L) = %4 ± %5")
                                 .arg(p.n)
                                 .arg(p.min, 0, 'f', 3)
                                 .arg(p.max, 0, 'f', 3)
                                 .arg(r.ratio.mean, 0, 'f', 3)
                                 .arg(r.ratio.sd, 0, 'f', 3));
        item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        m_table->setItem(row, static_cast<int>(column - lengths.begin()) + 1, item);
    }
    fitTableColumns();
}

void TrainView::fitTableColumns()
{
    // A narrow table (a small screen, the Lessons dock open, longer headers in Chinese) puts the length under "ppl"
    // rather than scroll sideways.
    for (const bool twoLines : {false, true}) {
        for (int c = 1; c < m_table->columnCount(); ++c) {
            QTableWidgetItem* header = m_table->horizontalHeaderItem(c);
            const int length = header->data(Qt::UserRole).toInt();
            header->setText(twoLines ? tr("ppl\n@ %1").arg(length) : tr("ppl @ %1").arg(length));
        }
        m_table->resizeColumnsToContents();
        if (m_table->horizontalHeader()->length() <= m_table->viewport()->width())
            return;
    }
}

bool TrainView::eventFilter(QObject* watched, QEvent* event)
{
    // Only a new width: the header's own change of height resizes the viewport too.
    if (watched == m_table->viewport() && event->type() == QEvent::Resize &&
        static_cast<QResizeEvent*>(event)->size().width() != static_cast<QResizeEvent*>(event)->oldSize().width())
        fitTableColumns();
    return ViewBase::eventFilter(watched, event);
}

QString TrainView::statusText() const
{
    return m_status->text();
}

void TrainView::cancelJob()
{
    // "Canceled" and the time at once: the worker stops at its next step, and its late updates leave this line be.
    if ((m_run->isRunning() || m_taskRunner->isRunning()) && !m_canceled) {
        m_canceled = true;
        m_status->setText(canceledText(m_runClock.elapsed()));
    }
    m_run->cancel();
    m_taskRunner->cancel();
    m_methods->cancel();
    m_continueText->cancel();
}

bool TrainView::isBusy() const
{
    return m_run->isRunning() || m_taskRunner->isRunning() || m_methods->isBusy() || m_continueText->isBusy();
}

void TrainView::setDark(bool dark)
{
    m_lossPlot->setDark(dark);
    m_pplPlot->setDark(dark);
    m_heatmap->setDark(dark);
    m_methods->setDark(dark);
}

} // namespace plab::ui
