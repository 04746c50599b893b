// The Train short / test long tab: fields and presets, live loss curves, the perplexity plot and table, the methods
// page.
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

namespace {
// The task chooser's first entry: train on text and score perplexity (no task).
constexpr const char* kTextTask = "text";
} // namespace

TrainView::TrainView(QWidget* parent) : ViewBase(parent), m_run(new TrainingRun(this))
{
    m_taskRunner = new TaskRunner(this);
    auto* layout = new QHBoxLayout(this);
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
    m_controls = column;
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
    connect(m_train, &QPushButton::clicked, this, [this] {
        if (m_task->currentData().toString() == QLatin1String(kTextTask)) {
            start(request());
            return;
        }
        try {
            startTask(taskRequest(false));
        } catch (const InputError& e) {
            m_status->setText(QString::fromStdString(e.what()));
            Q_EMIT statusMessage(m_status->text());
        }
    });
    connect(m_drope, &QPushButton::clicked, this, [this] {
        try {
            startTask(taskRequest(true));
        } catch (const InputError& e) {
            m_status->setText(QString::fromStdString(e.what()));
            Q_EMIT statusMessage(m_status->text());
        }
    });
    connect(m_taskRunner, &TaskRunner::snapshot, this, &TrainView::onTaskSnapshot);
    connect(m_taskRunner, &TaskRunner::finished, this, &TrainView::finishRun);
    connect(m_taskRunner, &TaskRunner::progress, this, &ViewBase::progress);
    connect(m_task, &QComboBox::currentIndexChanged, this, &TrainView::onTaskChosen);
    connect(m_context, &QSpinBox::valueChanged, this, &TrainView::onTaskChosen);
    connect(m_heatmap, &HeatmapWidget::hovered, this, [this](int panel, int m, int n, float v) {
        const HeatmapFigure& f = m_heatmap->heatmap().figure();
        if (panel < 0 || panel >= static_cast<int>(f.panels.size()) || m >= static_cast<int>(f.rowTickLabels.size()) ||
            n >= static_cast<int>(f.tickLabels.size()))
            return;
        Q_EMIT hoverText(std::isfinite(v) ? tr("%1: depth %2, length %3: accuracy %4")
                                                .arg(f.panels[panel].title, f.rowTickLabels[m], f.tickLabels[n])
                                                .arg(v, 0, 'f', 3)
                                          : tr("%1: depth %2, length %3: not scored")
                                                .arg(f.panels[panel].title, f.rowTickLabels[m], f.tickLabels[n]));
    });
    onTaskChosen();
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

QFormLayout* TrainView::buildFields()
{
    auto* form = new QFormLayout;
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    // Every preset of core's table, the demo first; "custom" once a field is edited by hand.
    m_preset = new QComboBox(this);
    std::vector<const Preset*> rows;
    for (const Preset& p : presets())
        (p.name == kDemoPreset ? rows.insert(rows.begin(), &p) : rows.insert(rows.end(), &p));
    for (const Preset* p : rows) {
        m_preset->addItem(QString::fromStdString(p->name), QString::fromStdString(p->name));
        m_preset->setItemData(m_preset->count() - 1, QString::fromStdString(p->summary), Qt::ToolTipRole);
    }
    m_preset->addItem(tr("custom"), QString::fromLatin1(kCustomPreset));
    m_preset->setItemData(m_preset->count() - 1, tr("Values edited by hand; choose a preset to restore its values"),
                          Qt::ToolTipRole);
    form->addRow(tr("Preset"), m_preset);
    m_task = new QComboBox(this);
    m_task->setObjectName(QStringLiteral("task"));
    m_task->addItem(tr("text perplexity"), QString::fromLatin1(kTextTask));
    m_task->setItemData(0, tr("Train on the corpus, score perplexity against length"), Qt::ToolTipRole);
    for (const TaskInfo& t : taskTable()) {
        m_task->addItem(QString::fromStdString(t.name), QString::fromStdString(t.name));
        m_task->setItemData(m_task->count() - 1, QString::fromStdString(t.summary), Qt::ToolTipRole);
    }
    m_task->setToolTip(tr("What the schemes learn: text (perplexity) or a task scored by exact-match accuracy at "
                          "lengths L to 4L"));
    form->addRow(tr("Task"), m_task);
    m_taskLength = new QSpinBox(this);
    m_taskLength->setObjectName(QStringLiteral("task_length"));
    m_taskLength->setRange(1, 1);
    m_taskLength->setToolTip(tr("Training examples have lengths 1..L (at most what the context holds); scored at L to "
                                "4L"));
    form->addRow(tr("Task length L"), m_taskLength);
    auto intField = [&](const QString& label, const QString& tip, int lo, int hi, int step = 1) {
        auto* box = new QSpinBox(this);
        box->setRange(lo, hi);
        box->setSingleStep(step);
        box->setToolTip(tip);
        form->addRow(label, box);
        connect(box, &QSpinBox::valueChanged, this, &TrainView::onFieldEdited);
        return box;
    };
    m_steps = intField(tr("Steps"), tr("Optimiser steps per scheme"), 1, 1000000, 50);
    m_lr = new QDoubleSpinBox(this);
    m_lr->setDecimals(5);
    m_lr->setRange(0.00001, 10);
    m_lr->setSingleStep(0.0005);
    m_lr->setToolTip(tr("Peak learning rate after the warm-up (cosine decay afterwards)"));
    form->addRow(tr("Learning rate"), m_lr);
    connect(m_lr, &QDoubleSpinBox::valueChanged, this, &TrainView::onFieldEdited);
    m_context =
        intField(tr("Context L"), tr("Training context in bytes; evaluation runs at %1").arg(evaluationLengthsText()),
                 2, 8192, 16);
    m_layers = intField(tr("Layers"), tr("Transformer layers"), 1, 64);
    m_dModel = intField(tr("d_model"), tr("Width of the model (a multiple of the heads)"), 2, 4096, 16);
    m_heads = intField(tr("Heads"), tr("Attention heads (d_model must divide by them)"), 1, 256);
    m_dFf = intField(tr("d_ff"), tr("Width of each MLP's hidden layer"), 1, 16384, 64);
    // The model options `train` has beyond the sizes; their defaults and ranges are core's (AttentionTemperature,
    // validateModelConfig), which also refuses a combination at Train with a message naming the field.
    m_nopeEvery = intField(tr("NoPE every"),
                           tr("K ≥ 2: layers K, 2K, 3K, … (counted from 1) use no positional encoding and the others "
                              "the ticked rotary scheme, as SmolLM3 and Llama 4 do; off: every layer uses it"),
                           1, 64);
    m_nopeEvery->setSpecialValueText(tr("off"));
    m_nopeEvery->setObjectName(QStringLiteral("nope_every"));
    m_scheduleNote = new QLabel(this);
    m_scheduleNote->setObjectName(QStringLiteral("schedule_note"));
    m_scheduleNote->setWordWrap(true);
    form->addRow(m_scheduleNote);
    const AttentionTemperature temperature;
    m_temperature = new QCheckBox(tr("Llama 4 temperature on NoPE layers"), this);
    m_temperature->setObjectName(QStringLiteral("attn_temperature_tuning"));
    m_temperature->setToolTip(tr("attn_temperature_tuning: the query at position p times 1 + β·ln(1 + ⌊(p + 1)/F⌋) "
                                 "on the NoPE layers only"));
    form->addRow(m_temperature);
    auto numberField = [&](const QString& label, const QString& tip, double lo, double hi, double value, int decimals,
                           double step) {
        auto* box = new QDoubleSpinBox(this);
        box->setDecimals(decimals);
        box->setRange(lo, hi);
        box->setSingleStep(step);
        box->setValue(value);
        box->setToolTip(tip);
        form->addRow(label, box);
        connect(box, &QDoubleSpinBox::valueChanged, this, &TrainView::onFieldEdited);
        return box;
    };
    m_floorScale = numberField(tr("floor_scale F"),
                               tr("The temperature grows one step every F positions; Llama 4's 8192 never acts at "
                                  "the lab's short contexts: set F near L to see it"),
                               AttentionTemperature::kMinFloorScale, AttentionTemperature::kMaxFloorScale,
                               temperature.floorScale, 0, 1024);
    m_floorScale->setObjectName(QStringLiteral("floor_scale"));
    m_attnScale = numberField(tr("attn_scale β"), tr("The size of each step of the temperature"),
                              AttentionTemperature::kMinAttnScale, AttentionTemperature::kMaxAttnScale,
                              temperature.attnScale, 3, 0.05);
    m_attnScale->setObjectName(QStringLiteral("attn_scale"));
    // The softmax-side modifiers combine with every ticked scheme (and with the schedule).
    m_ssmax = new QCheckBox(tr("SSMax"), this);
    m_ssmax->setObjectName(QStringLiteral("ssmax"));
    m_ssmax->setToolTip(tr("Scalable softmax: row m's scores times s_h·ln n, n the keys it sees, s learned per head "
                           "(from 1/ln L)"));
    m_sinkLogit = new QCheckBox(tr("sink logit"), this);
    m_sinkLogit->setObjectName(QStringLiteral("sink_logit"));
    m_sinkLogit->setToolTip(tr("A learned logit per head as one more softmax column, dropped after the softmax "
                               "(gpt-oss)"));
    auto* modifiers = new QHBoxLayout;
    modifiers->addWidget(m_ssmax);
    modifiers->addWidget(m_sinkLogit);
    modifiers->addStretch(1);
    form->addRow(tr("Softmax"), modifiers);
    m_layerTypeFields = new LayerTypeFields(this);
    m_layerTypeFields->addRows(form);
    connect(m_layerTypeFields, &LayerTypeFields::edited, this, &TrainView::onFieldEdited);
    for (QCheckBox* box : {m_temperature, m_ssmax, m_sinkLogit})
        connect(box, &QCheckBox::toggled, this, &TrainView::onFieldEdited);
    connect(m_nopeEvery, &QSpinBox::valueChanged, this, &TrainView::updateModelOptions);
    connect(m_layers, &QSpinBox::valueChanged, this, &TrainView::updateModelOptions);
    connect(m_temperature, &QCheckBox::toggled, this, &TrainView::updateModelOptions);
    m_batch = intField(tr("Batch"), tr("Sequences of L bytes per step"), 1, 65536);
    m_evalBytes =
        intField(tr("Eval bytes"), tr("Held-out bytes scored per length (the last 10% of the corpus); 0: all"), 0,
                 1 << 24, 4096);
    m_evalBytes->setSpecialValueText(tr("all"));
    // Not part of a preset: more seeds repeat the same run, so changing them keeps the preset.
    m_seeds = new QSpinBox(this);
    m_seeds->setRange(1, kMaxTrainSeeds);
    m_seeds->setToolTip(tr("Runs per scheme with seeds 1, 2, …: with more than one, each scheme shows its mean "
                           "curve with a ± sd band and the table mean ± sd"));
    form->addRow(tr("Seeds"), m_seeds);
    connect(m_seeds, &QSpinBox::valueChanged, this, &TrainView::previewTable);
    m_mode = new QComboBox(this);
    m_mode->addItem(tr("non-overlapping"), QString::fromLatin1(evalModeName(EvalMode::NonOverlapping)));
    m_mode->addItem(tr("sliding window"), QString::fromLatin1(evalModeName(EvalMode::Sliding)));
    form->addRow(tr("Evaluation"), m_mode);
    m_fraction = new QDoubleSpinBox(this);
    m_fraction->setObjectName(QStringLiteral("recalibration_percent"));
    m_fraction->setDecimals(1);
    m_fraction->setRange(0.5, 100);
    m_fraction->setSingleStep(2.5);
    m_fraction->setSuffix(QStringLiteral(" %"));
    m_fraction->setValue(12.5);
    m_fraction->setToolTip(tr("DroPE's recalibration: steps after dropping the positions, as a share of the rope "
                              "run's (the paper uses 0.5-12.5%)"));
    form->addRow(tr("Recalibration"), m_fraction);
    m_logitC = new QDoubleSpinBox(this);
    m_logitC->setObjectName(QStringLiteral("logit_c"));
    m_logitC->setDecimals(2);
    m_logitC->setRange(0, 100);
    m_logitC->setSingleStep(0.05);
    m_logitC->setValue(DropeRecipe{}.logitC);
    m_logitC->setToolTip(tr("DroPE is scored with its logits times 1 + c·ln(n/L) past L; 0: unscaled"));
    form->addRow(tr("DroPE logit-c"), m_logitC);
    return form;
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

void TrainView::setPreset(const QString& name)
{
    const TrainRequest r = presetTrainRequest(name.toStdString()); // InputError naming the allowed presets
    m_applyingPreset = true;
    m_preset->setCurrentIndex(m_preset->findData(name));
    m_steps->setValue(r.train.steps);
    m_lr->setValue(r.train.learningRate);
    m_context->setValue(r.model.context);
    m_layers->setValue(r.model.layers);
    m_dModel->setValue(r.model.dModel);
    m_heads->setValue(r.model.heads);
    m_dFf->setValue(r.model.dFf);
    m_batch->setValue(r.train.batch);
    m_evalBytes->setValue(static_cast<int>(std::min<size_t>(r.evalBytes, m_evalBytes->maximum())));
    // A preset is a plain model: no schedule, no temperature, no softmax modifier.
    m_nopeEvery->setValue(std::max(r.model.nopeEvery, m_nopeEvery->minimum()));
    m_temperature->setChecked(r.model.temperature.tuning);
    m_floorScale->setValue(r.model.temperature.floorScale);
    m_attnScale->setValue(r.model.temperature.attnScale);
    m_ssmax->setChecked(r.model.ssmax);
    m_sinkLogit->setChecked(r.model.sinkLogit);
    m_layerTypeFields->setFrom(r.model);
    m_applyingPreset = false;
    updateModelOptions();
    m_basePreset = name;
    previewTable();
}

void TrainView::onFieldEdited()
{
    if (m_applyingPreset)
        return;
    {
        const QSignalBlocker blocker(m_preset);
        m_preset->setCurrentIndex(m_preset->findData(QString::fromLatin1(kCustomPreset)));
    }
    previewTable();
}

void TrainView::updateModelOptions()
{
    m_floorScale->setEnabled(m_temperature->isChecked());
    m_attnScale->setEnabled(m_temperature->isChecked());
    const int every = m_nopeEvery->value() == m_nopeEvery->minimum() ? 0 : m_nopeEvery->value();
    if (every == 0) {
        m_scheduleNote->setText(m_temperature->isChecked()
                                    ? tr("The temperature acts on NoPE layers only: set NoPE every, or tick none.")
                                    : tr("Every layer uses the ticked scheme."));
        return;
    }
    // Which layers core's schedule leaves without positions (modelLayerUsesScheme: the one home of the rule).
    ModelConfig config;
    config.scheme = "rope";
    config.layers = m_layers->value();
    config.nopeEvery = every;
    QStringList nope;
    for (int layer = 0; layer < config.layers; ++layer)
        if (!modelLayerUsesScheme(config, layer))
            nope << QString::number(layer + 1);
    m_scheduleNote->setText(
        nope.isEmpty()
            ? tr("<b>The model has %1 layer(s), fewer than K = %2: no layer would be NoPE, so the schedule does "
                 "nothing.</b> Raise Layers or lower K.")
                  .arg(config.layers)
                  .arg(every)
            : tr("NoPE layers: %1 of %2 (counted from 1); rope or xpos on the others.")
                  .arg(nope.join(QStringLiteral(", ")))
                  .arg(config.layers));
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

QString TrainView::pictureTitle() const
{
    return methodsShown() ? tr("Evaluate under methods") : viewTitle();
}

QSize TrainView::defaultImageSize() const
{
    if (methodsShown())
        return defaultPictureSize(QStringLiteral("methods"));
    // A passkey run adds its depth x length heatmaps to the loss and accuracy charts.
    return m_taskShown && m_taskRunning.run.task.kind == TaskKind::Passkey ? QSize(1500, 1200) : QSize(1500, 650);
}

bool TrainView::hasPicture() const
{
    if (methodsShown())
        return m_methods->hasPicture();
    if (m_taskShown) {
        if (!m_taskCurves.empty())
            return true;
        for (const Curve& c : m_taskLosses)
            if (!c.x.empty())
                return true;
        return false;
    }
    if (!m_summary.empty())
        return true;
    for (const Curve& c : m_losses)
        if (!c.x.empty())
            return true;
    return false;
}

void TrainView::paintPicture(QPainter& painter, const QRectF& target, const PictureStyle& style) const
{
    if (methodsShown()) {
        m_methods->paintPicture(painter, target, style);
        return;
    }
    if (m_taskShown && m_taskRunning.run.task.kind == TaskKind::Passkey) { // loss | accuracy over the heatmaps
        const double h = target.height() * 0.5;
        const QRectF loss(target.left(), target.top(), target.width() * 0.45, h);
        const QRectF accuracy(loss.right(), target.top(), target.right() - loss.right(), h);
        const QRectF heatmap(target.left(), loss.bottom(), target.width(), target.bottom() - loss.bottom());
        renderCurveFigure(painter, loss, m_lossPlot->figure(), style, m_lossPlot->emptyHint());
        renderCurveFigure(painter, accuracy, m_pplPlot->figure(), style, m_pplPlot->emptyHint());
        m_heatmap->heatmap().paint(painter, heatmap, style);
        return;
    }
    if (!m_sweepSource.isEmpty()) { // loaded sweep results have no training curves: the perplexities take it all
        renderCurveFigure(painter, target, m_pplPlot->figure(), style);
        return;
    }
    const QRectF left(target.left(), target.top(), target.width() * 0.45, target.height());
    const QRectF right(left.right(), target.top(), target.width() - left.width(), target.height());
    renderCurveFigure(painter, left, m_lossPlot->figure(), style, m_lossPlot->emptyHint());
    renderCurveFigure(painter, right, m_pplPlot->figure(), style, m_pplPlot->emptyHint());
}

void TrainView::writeData(std::ostream& out, DataFormat format) const
{
    if (methodsShown()) {
        m_methods->writeData(out, format);
        return;
    }
    requirePicture();
    if (m_taskShown) { // accuracy over seeds: per (length, depth) for passkey, per length otherwise
        const bool passkey = m_taskRunning.run.task.kind == TaskKind::Passkey;
        const std::vector<TaskAccuracyRow> rows = summarizeTaskAccuracy(m_taskCurves, !passkey);
        if (format == DataFormat::Json) {
            nlohmann::json j = taskAccuracyJson(rows, m_taskRunning.run.task);
            j["model"] = m_taskRunning.run.model.toJson();
            j["training"] = m_taskRunning.run.train.toJson();
            if (m_taskRunning.drope)
                j["recalibration_fraction"] = m_taskRunning.fraction;
            out << j.dump(2) << '\n';
        } else if (format == DataFormat::Csv) {
            out << taskAccuracyCsv(rows);
        } else {
            Table t;
            t.columns = {"label_index",   "length",      "depth",        "n",
                         "accuracy_mean", "accuracy_sd", "accuracy_min", "accuracy_max"};
            const std::vector<std::string> labels = m_taskRunning.labels();
            t.meta["labels"] = labels;
            for (const TaskAccuracyRow& r : rows)
                t.rows.push_back({double(std::find(labels.begin(), labels.end(), r.label) - labels.begin()),
                                  double(r.length), r.depth, double(r.accuracy.n), r.accuracy.n ? r.accuracy.mean : NAN,
                                  r.accuracy.n ? r.accuracy.sd : NAN, r.accuracy.n ? r.accuracy.min : NAN,
                                  r.accuracy.n ? r.accuracy.max : NAN});
            writeTable(out, format, t);
        }
        return;
    }
    if (!m_summary.empty()) { // over seeds: the summary `positionlab-cli collect` writes
        if (format == DataFormat::Json)
            out << sweepSummaryJson(m_summary, {m_sweepSource.toStdString()}).dump(2) << '\n';
        else if (format == DataFormat::Csv)
            out << sweepSummaryCsv(m_summary);
        else
            throw InputError("the summary over seeds is exported as .csv or .json");
        return;
    }
    Table t;
    t.columns = {"scheme_index", "length", "loss", "perplexity", "bits_per_byte", "supported"};
    t.meta["schemes"] = nlohmann::json::array();
    for (const std::string& s : m_running.schemes)
        t.meta["schemes"].push_back(s);
    t.meta["preset"] = m_running.preset.toStdString();
    t.meta["model"] = m_running.model.toJson();
    t.meta["training"] = m_running.train.toJson();
    t.meta["eval_mode"] = evalModeName(m_running.mode);
    for (size_t s = 0; s < m_evals.size(); ++s)
        for (const EvalPoint& p : m_evals[s])
            t.rows.push_back(
                {double(s), double(p.length), p.loss, p.perplexity, p.bitsPerByte, p.supported ? 1.0 : 0.0});
    writeTable(out, format, t);
}

std::vector<std::pair<const char*, QSpinBox*>> TrainView::intFields() const
{
    return {{"steps", m_steps},    {"context", m_context},      {"layers", m_layers},
            {"d_model", m_dModel}, {"heads", m_heads},          {"d_ff", m_dFf},
            {"batch", m_batch},    {"eval_bytes", m_evalBytes}, {"seeds", m_seeds}};
}

nlohmann::json TrainView::saveState() const
{
    nlohmann::json names = nlohmann::json::array();
    for (const QString& name : checkedSchemes(m_schemes))
        names.push_back(name.toStdString());
    nlohmann::json state{{"schemes", names},
                         {"preset", preset().toStdString()},
                         {"learning_rate", m_lr->value()},
                         {"eval_mode", m_mode->currentData().toString().toStdString()}};
    for (const auto& [key, box] : intFields())
        state[key] = box->value();
    state["task"] = m_task->currentData().toString().toStdString();
    state["task_length"] = m_taskLength->value();
    state["recalibration_percent"] = m_fraction->value();
    state["logit_c"] = m_logitC->value();
    // The model options under modelShapeJson's names; nope_every 0 is off.
    const ModelConfig model = request().model;
    state["nope_every"] = model.nopeEvery;
    state["attn_temperature_tuning"] = model.temperature.tuning;
    state["floor_scale"] = model.temperature.floorScale;
    state["attn_scale"] = model.temperature.attnScale;
    state["ssmax"] = model.ssmax;
    state["sink_logit"] = model.sinkLogit;
    m_layerTypeFields->saveState(state);
    state["page"] = methodsShown() ? "methods" : "runs";
    state["methods"] = m_methods->sessionState();
    return state;
}

void TrainView::restoreState(const nlohmann::json& state)
{
    // Everything is checked before anything changes.
    const std::string where = "views.train";
    const QStringList names = sessionSchemeNames(state, "schemes", where);
    const std::string presetName = sessionString(state, "preset", kDemoPreset, where);
    if (presetName != kCustomPreset) {
        try {
            presetByName(presetName);
        } catch (const InputError& e) {
            throw InputError("session: views.train.preset: " + std::string(e.what()) + ", " + kCustomPreset);
        }
    }
    std::vector<std::pair<QSpinBox*, int>> values;
    for (const auto& [key, box] : intFields())
        if (state.contains(key))
            values.emplace_back(box, sessionInt(state, key, 0, box->minimum(), box->maximum(), where));
    const double lr = sessionNumber(state, "learning_rate", m_lr->value(), where);
    if (!(lr >= m_lr->minimum() && lr <= m_lr->maximum()))
        throw InputError("session: views.train.learning_rate = " + std::to_string(lr) + " is out of range; allowed: [" +
                         std::to_string(m_lr->minimum()) + ", " + std::to_string(m_lr->maximum()) + "]");
    const std::string mode = sessionString(state, "eval_mode", evalModeName(EvalMode::NonOverlapping), where);
    evalModeFromName(mode); // throws InputError naming the allowed modes
    // Sessions from before the task chooser train on text.
    const std::string task = sessionString(state, "task", kTextTask, where);
    int taskLength = 0;
    if (task != kTextTask) {
        TaskKind kind;
        try {
            kind = taskByName(task).kind;
        } catch (const InputError& e) {
            throw InputError("session: views.train.task: " + std::string(e.what()) + ", or " + kTextTask);
        }
        int context = m_context->value();
        for (const auto& [box, value] : values)
            if (box == m_context)
                context = value;
        const int longest = std::max(1, taskLongestLength(kind, context));
        taskLength = sessionInt(state, "task_length", longest, 1, longest, where);
    }
    const double percent = sessionNumber(state, "recalibration_percent", m_fraction->value(), where);
    if (!(percent >= m_fraction->minimum() && percent <= m_fraction->maximum()))
        throw InputError("session: views.train.recalibration_percent = " + std::to_string(percent) +
                         " is out of range; allowed: [" + std::to_string(m_fraction->minimum()) + ", " +
                         std::to_string(m_fraction->maximum()) + "]");
    const double logitC = sessionNumber(state, "logit_c", m_logitC->value(), where);
    if (!(logitC >= m_logitC->minimum() && logitC <= m_logitC->maximum()))
        throw InputError("session: views.train.logit_c = " + std::to_string(logitC) + " is out of range; allowed: [" +
                         std::to_string(m_logitC->minimum()) + ", " + std::to_string(m_logitC->maximum()) + "]");
    // Sessions from before the model options: every option off.
    const int nopeEvery = sessionInt(state, "nope_every", 0, 0, m_nopeEvery->maximum(), where);
    if (nopeEvery == 1)
        throw InputError("session: views.train.nope_every = 1 is out of range; allowed: 0 (off) or integers in [2, " +
                         std::to_string(m_nopeEvery->maximum()) + "]");
    const bool tuning = sessionBool(state, "attn_temperature_tuning", false, where);
    AttentionTemperature temperature;
    temperature.tuning = true; // so that core checks the numbers
    temperature.floorScale = sessionNumber(state, "floor_scale", temperature.floorScale, where);
    temperature.attnScale = sessionNumber(state, "attn_scale", temperature.attnScale, where);
    try {
        validateAttentionTemperature(temperature);
    } catch (const InputError& e) {
        throw InputError("session: views.train: " + std::string(e.what()));
    }
    const bool ssmax = sessionBool(state, "ssmax", false, where);
    const bool sinkLogit = sessionBool(state, "sink_logit", false, where);
    const ModelConfig layerTypes = m_layerTypeFields->readState(state, where);
    const std::string page = sessionString(state, "page", "runs", where);
    if (page != "runs" && page != "methods")
        throw InputError("session: views.train.page = '" + page + "' is not a page; allowed: runs, methods");
    // Sessions from before the methods page had no "methods": its defaults apply.
    const MethodsPanel::SessionState methods =
        MethodsPanel::readSessionState(sessionObject(state, "methods", where), where + ".methods");
    if (state.contains("schemes"))
        setCheckedSchemes(m_schemes, names);
    // The preset's values, then the session's own: a value that differs from the preset makes the run custom.
    setPreset(presetName == kCustomPreset ? m_basePreset : QString::fromStdString(presetName));
    for (const auto& [box, value] : values)
        box->setValue(value);
    if (state.contains("learning_rate"))
        m_lr->setValue(lr);
    m_nopeEvery->setValue(std::max(nopeEvery, m_nopeEvery->minimum()));
    m_temperature->setChecked(tuning);
    m_floorScale->setValue(temperature.floorScale);
    m_attnScale->setValue(temperature.attnScale);
    m_ssmax->setChecked(ssmax);
    m_sinkLogit->setChecked(sinkLogit);
    m_layerTypeFields->setFrom(layerTypes);
    if (presetName == kCustomPreset)
        onFieldEdited();
    m_mode->setCurrentIndex(m_mode->findData(QString::fromStdString(mode)));
    m_task->setCurrentIndex(m_task->findData(QString::fromStdString(task)));
    onTaskChosen();
    if (taskLength > 0)
        m_taskLength->setValue(taskLength);
    m_fraction->setValue(percent);
    m_logitC->setValue(logitC);
    // The kept models are offered when the window is built, before a session is applied: the restored values win
    // over the current model's defaults (and over the first model's when none is there yet).
    m_methods->applySessionState(methods);
    showMethodsPage(page == "methods");
}

void TrainView::onTaskChosen()
{
    const QString name = m_task->currentData().toString();
    const bool text = name == QLatin1String(kTextTask);
    m_taskLength->setEnabled(!text);
    m_fraction->setEnabled(!text);
    m_logitC->setEnabled(!text);
    m_drope->setEnabled(!text && !isBusy());
    if (text)
        return;
    // The longest length whose examples the context holds; a length at the old longest follows it.
    const int longest = std::max(1, taskLongestLength(taskByName(name.toStdString()).kind, m_context->value()));
    const bool atLongest = m_taskLength->value() == m_taskLength->maximum();
    m_taskLength->setMaximum(longest);
    if (atLongest)
        m_taskLength->setValue(longest);
}

TaskRequest TrainView::taskRequest(bool drope) const
{
    const QString name = m_task->currentData().toString();
    if (name == QLatin1String(kTextTask))
        throw InputError(tr("choose a task (copy, reverse, addition or passkey) for the DroPE recipe").toStdString());
    const TaskSpec task{taskByName(name.toStdString()).kind, m_taskLength->value()};
    return taskRequestFor(request(), task, drope, m_fraction->value() / 100, m_logitC->value());
}

void TrainView::startTask(const TaskRequest& request)
{
    if (m_run->isRunning() || m_taskRunner->isRunning())
        return;
    if (!request.drope && request.schemes.empty()) {
        Q_EMIT statusMessage(tr("Train: tick at least one scheme"));
        return;
    }
    try { // core's checks before anything changes: the message names the field and what is allowed
        request.check();
    } catch (const InputError& e) {
        m_status->setText(QString::fromStdString(e.what()));
        Q_EMIT statusMessage(m_status->text());
        return;
    }
    m_taskRunning = request;
    m_taskStages.clear();
    m_taskCurves.clear();
    m_taskLosses.assign(request.labels().size(), Curve{});
    m_taskShown = true;
    m_summary.clear();
    m_sweepSource.clear();
    m_seedResults.clear();
    m_losses.clear();
    m_lossPlot->show();
    m_pplPlot->setEmptyHint(tr("Each curve appears when its model is scored on the task."));
    showTaskResults();
    m_status->setText(
        request.drope ? tr("DroPE recipe on task %1…").arg(m_task->currentText())
                      : tr("Training %1 scheme(s) on task %2…").arg(request.schemes.size()).arg(m_task->currentText()));
    m_train->setEnabled(false);
    m_drope->setEnabled(false);
    m_stop->setEnabled(true);
    m_canceled = false;
    m_runClock.start();
    m_taskRunner->start(request);
    Q_EMIT busyChanged(true);
    Q_EMIT pictureUpdated();
}

void TrainView::onTaskSnapshot(const TaskSnapshot& s)
{
    if (!s.stage.isEmpty()) {
        if (!m_canceled)
            m_status->setText(s.stage);
        m_taskStages << s.stage;
        return;
    }
    if (s.scored) {
        m_taskCurves.push_back(s.curve);
        showTaskResults();
        Q_EMIT pictureUpdated();
        return;
    }
    const std::vector<std::string> labels = m_taskRunning.labels();
    const auto at = std::find(labels.begin(), labels.end(), s.label);
    if (at == labels.end())
        return;
    Curve& c = m_taskLosses[at - labels.begin()];
    if (!c.x.empty() && s.step <= c.x.back())
        c = Curve{}; // the next seed of this curve starts again
    c.x.push_back(s.step);
    c.y.push_back(s.loss);
    std::vector<std::string> names;
    for (const std::string& label : labels)
        names.push_back(taskCurveName(label, m_taskRunning.fraction, m_taskRunning.logitC).toStdString());
    m_lossPlot->setFigure(trainingLossFigure(names, m_taskLosses, m_taskRunning.run.model.context));
    if (m_canceled)
        return;
    const QString stage = m_status->text().section(QStringLiteral(" — "), 0, 0);
    m_status->setText(tr("%1 — step %2 of %3, loss %4").arg(stage).arg(s.step).arg(s.steps).arg(s.loss, 0, 'f', 3));
}

void TrainView::showTaskResults()
{
    const bool passkey = m_taskRunning.run.task.kind == TaskKind::Passkey;
    const std::vector<TaskAccuracyRow> byLength = summarizeTaskAccuracy(m_taskCurves, true);
    std::vector<std::string> names;
    for (const std::string& label : m_taskRunning.labels())
        names.push_back(taskCurveName(label, m_taskRunning.fraction, m_taskRunning.logitC).toStdString());
    if (m_taskCurves.empty())
        m_lossPlot->setFigure(trainingLossFigure(names, m_taskLosses, m_taskRunning.run.model.context));
    m_pplPlot->setFigure(taskAccuracyFigure(byLength, m_taskRunning));
    if (passkey && m_heatmap->isHidden()) { // the charts keep room to be read: 2 : 2 : 1 of the height
        const int h = std::max(300, m_results->height());
        m_results->setSizes({h * 2 / 5, h * 2 / 5, h / 5});
    }
    m_heatmap->setVisible(passkey);
    if (passkey)
        m_heatmap->setFigure(passkeyHeatmapFigure(summarizeTaskAccuracy(m_taskCurves, false), m_taskRunning));
    // The table: a row per curve, a column per length, accuracy (mean ± sd over seeds).
    const std::vector<int> lengths = taskRunEvalLengths(m_taskRunning.run);
    const std::vector<std::string> labels = m_taskRunning.labels();
    m_table->clear();
    m_table->setRowCount(static_cast<int>(labels.size()));
    m_table->setColumnCount(static_cast<int>(lengths.size()) + 1);
    QStringList headers{tr("model")};
    for (int length : lengths)
        headers << tr("acc @ %1").arg(length);
    m_table->setHorizontalHeaderLabels(headers);
    for (size_t i = 0; i < labels.size(); ++i)
        m_table->setItem(static_cast<int>(i), 0, new QTableWidgetItem(QString::fromStdString(names[i])));
    for (const TaskAccuracyRow& r : byLength) {
        const int row = static_cast<int>(std::find(labels.begin(), labels.end(), r.label) - labels.begin());
        const int column = static_cast<int>(std::find(lengths.begin(), lengths.end(), r.length) - lengths.begin());
        if (row >= static_cast<int>(labels.size()) || column >= static_cast<int>(lengths.size()))
            continue;
        const SampleStats& a = r.accuracy;
        auto* item = new QTableWidgetItem(a.n == 0   ? tr("unsupported")
                                          : a.n == 1 ? QString::number(a.mean, 'f', 3)
                                                     : tr("%1 ± %2").arg(a.mean, 0, 'f', 3).arg(a.sd, 0, 'f', 3));
        if (a.n > 0)
            item->setToolTip(tr("n = %1 seeds, min %2, max %3").arg(a.n).arg(a.min, 0, 'f', 3).arg(a.max, 0, 'f', 3));
        item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        m_table->setItem(row, column + 1, item);
    }
    m_table->resizeColumnsToContents();
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
