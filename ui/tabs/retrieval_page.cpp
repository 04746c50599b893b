// The Retrieval page: controls, the worker on the thread pool, the heatmaps filled in cell by cell.
#include "tabs/retrieval_page.h"

#include "tabs/heatmap_widget.h"
#include "tabs/scaling_layers_combo.h"
#include "tabs/view_base.h"

#include "base/errors.h"
#include "base/limits.h"
#include "hf/hf_model.h"
#include "model/corpus.h"
#include "runs/language_model.h"
#include "schemes/rotary_scaling.h"

#include <QApplication>
#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPointer>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

namespace plab::ui {

namespace {

constexpr int kSideWidth = 300;

// The run itself, on a worker: the default corpus as haystack, then core's runRetrieval.
RetrievalPageResult computeRetrieval(const HfModelPtr& model, const RetrievalOptions& options,
                                     const JobControl& control,
                                     const std::function<void(const RetrievalCell&)>& cellDone)
{
    RetrievalPageResult r;
    runGuarded(r, [&] {
        const Corpus corpus = loadDefaultCorpus();
        const RetrievalGenerator generator(*model->tokenizer, retrievalHaystack(corpus), corpus.source);
        RetrievalHooks hooks;
        hooks.progress = [&control](double fraction) {
            control.report(static_cast<int>(fraction * 1000), 1000);
            return !control.isCanceled();
        };
        hooks.cellDone = cellDone;
        r.run = runRetrieval(*model->model, generator, options, hooks);
        r.canceled = r.run.stopped;
    });
    return r;
}

} // namespace

RetrievalPage::RetrievalPage(std::function<HfModelPtr()> model, QWidget* parent)
    : QWidget(parent), m_model(std::move(model)),
      m_job(this, {[this](RetrievalPageResult r) { finished(std::move(r)); },
                   [this](int done, int total) {
                       if (done <= 0 || total <= 0)
                           return;
                       const double elapsed = m_clock.elapsed() / 1000.0;
                       m_status->setText(tr("Scoring… %1% · about %2 left")
                                             .arg(100 * done / total)
                                             .arg(ViewBase::durationText(elapsed * (total - done) / done)));
                   },
                   {}})
{
    auto* h = new QHBoxLayout(this);
    auto* side = new QWidget(this);
    side->setMaximumWidth(kSideWidth);
    auto* v = new QVBoxLayout(side);
    v->setContentsMargins(0, 0, 0, 0);
    v->addLayout(makeInputsForm(side));
    v->addWidget(new QLabel(tr("Methods:"), side));
    m_methods = new QListWidget(side);
    for (const RotaryMethodInfo& m : rotaryMethodCatalog()) {
        auto* item = new QListWidgetItem(QString::fromStdString(m.name), m_methods);
        item->setData(Qt::UserRole, QString::fromStdString(m.name));
        item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
        item->setCheckState(m.name == "none" || m.name == "yarn" ? Qt::Checked : Qt::Unchecked);
    }
    v->addWidget(m_methods, 1);
    auto* reach = new QFormLayout;
    m_layers = new ScalingLayersCombo(side);
    m_layers->setObjectName(QStringLiteral("retrievalScalingLayers"));
    reach->addRow(tr("Methods reach:"), m_layers);
    v->addLayout(reach);
    m_run = new QPushButton(tr("Run"), side);
    m_run->setObjectName(QStringLiteral("runRetrieval"));
    auto* cancelButton = new QPushButton(tr("Cancel"), side);
    cancelButton->setObjectName(QStringLiteral("cancelRetrieval"));
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_run);
    buttons->addWidget(cancelButton);
    v->addLayout(buttons);
    m_estimate = new QLabel(side);
    m_estimate->setObjectName(QStringLiteral("retrievalEstimate"));
    m_estimate->setWordWrap(true);
    m_status = new QLabel(side);
    m_status->setObjectName(QStringLiteral("retrievalStatus"));
    m_status->setWordWrap(true);
    v->addWidget(m_estimate);
    v->addWidget(m_status);
    h->addWidget(side);
    m_heatmap = new HeatmapWidget(this);
    m_heatmap->setObjectName(QStringLiteral("retrievalHeatmap"));
    m_heatmap->setEmptyHint(tr("Accuracy by needle depth and length, one heatmap per method, appears here as the "
                               "cells finish: open a model folder, choose a task and press Run."));
    h->addWidget(m_heatmap, 1);
    connect(m_run, &QPushButton::clicked, this, &RetrievalPage::run);
    connect(cancelButton, &QPushButton::clicked, this, &RetrievalPage::cancel);
    connect(m_task, &QComboBox::currentIndexChanged, this, &RetrievalPage::refreshEstimate);
    connect(m_lengths, &QLineEdit::textChanged, this, &RetrievalPage::refreshEstimate);
    connect(m_depths, &QLineEdit::textChanged, this, &RetrievalPage::refreshEstimate);
    connect(m_examples, &QSpinBox::valueChanged, this, &RetrievalPage::refreshEstimate);
    connect(m_methods, &QListWidget::itemChanged, this, &RetrievalPage::refreshEstimate);
    connect(m_layers, &QComboBox::currentIndexChanged, this, &RetrievalPage::refreshEstimate);
}

// The task, lengths, depths and examples controls.
QFormLayout* RetrievalPage::makeInputsForm(QWidget* side)
{
    auto* form = new QFormLayout;
    m_task = new QComboBox(side);
    for (const RetrievalTaskInfo& t : retrievalTaskTable())
        m_task->addItem(QString::fromStdString(t.name), static_cast<int>(t.kind));
    m_task->setToolTip(tr("passkey: a 5-digit number in filler; niah: special magic numbers for a key (one, among "
                          "other keys, or all four of a key); variable-tracking: the value at the end of a chain."));
    form->addRow(tr("Task:"), m_task);
    m_lengths = new QLineEdit(side);
    m_lengths->setPlaceholderText(tr("default"));
    m_lengths->setToolTip(tr("Prompt lengths in tokens, exact, separated by commas; empty: up to 5/4 of the "
                             "context, as many as fit about 5 minutes."));
    form->addRow(tr("Lengths:"), m_lengths);
    m_depths = new QLineEdit(side);
    m_depths->setPlaceholderText(QStringLiteral("0, 0.5, 1"));
    m_depths->setToolTip(tr("Needle depths from 0 (the haystack's start) to 1 (its end), separated by commas."));
    form->addRow(tr("Depths:"), m_depths);
    m_examples = new QSpinBox(side);
    m_examples->setRange(1, 1000);
    m_examples->setValue(1);
    form->addRow(tr("Examples per cell:"), m_examples);
    return form;
}

RetrievalPage::~RetrievalPage()
{
    m_job.cancel();
}

RetrievalOptions RetrievalPage::defaults() const
{
    const HfModelPtr model = m_model();
    if (!model || !model->tokenizer)
        throw InputError(tr("Open a model folder first.").toStdString());
    const HfConfig& c = model->model->config();
    const HfLanguageModel language(*model->model);
    const auto kind = static_cast<RetrievalKind>(m_task->currentData().toInt());
    const RetrievalGenerator probe(*model->tokenizer, std::string(), std::string());
    return retrievalDefaults(
        kind, c.context, language.scaling(), language.rotary(), hfMaxLength(c), probe.minimumLength(kind),
        [&c](int n) { return c.prefillFlops(n); }, kHfEvalFlopsPerSecond);
}

RetrievalOptions RetrievalPage::options() const
{
    RetrievalOptions o = defaults();
    if (!m_lengths->text().trimmed().isEmpty()) {
        o.lengths.clear();
        for (const QString& word : m_lengths->text().split(QLatin1Char(','), Qt::SkipEmptyParts)) {
            bool ok = false;
            const int n = word.trimmed().toInt(&ok);
            if (!ok || n < 1 || n > kMaxLength)
                throw InputError(tr("Lengths: '%1' is not allowed; allowed: whole numbers from 1 to %2, separated "
                                    "by commas")
                                     .arg(word.trimmed())
                                     .arg(kMaxLength)
                                     .toStdString());
            o.lengths.push_back(n);
        }
    }
    if (!m_depths->text().trimmed().isEmpty()) {
        o.depths.clear();
        for (const QString& word : m_depths->text().split(QLatin1Char(','), Qt::SkipEmptyParts)) {
            bool ok = false;
            const double d = word.trimmed().toDouble(&ok);
            if (!ok || !(d >= 0 && d <= 1))
                throw InputError(tr("Depths: '%1' is not allowed; allowed: numbers from 0 to 1, separated by commas")
                                     .arg(word.trimmed())
                                     .toStdString());
            o.depths.push_back(d);
        }
    }
    o.examples = m_examples->value();
    o.scalingLayers = m_layers->layers();
    o.methods.clear();
    const HfModelPtr model = m_model();
    if (model && model->model->config().scheme == "rope") // methods apply to rotary models only
        for (int i = 0; i < m_methods->count(); ++i)
            if (m_methods->item(i)->checkState() == Qt::Checked)
                o.methods.push_back({m_methods->item(i)->data(Qt::UserRole).toString().toStdString(), {}});
    if (model && model->model->config().scheme == "rope" && o.methods.empty())
        throw InputError(tr("Methods: none ticked; tick at least one.").toStdString());
    return o;
}

void RetrievalPage::refreshEstimate()
{
    try {
        const RetrievalOptions o = options();
        const HfModelPtr model = m_model();
        const HfConfig& c = model->model->config();
        const size_t methods = std::max<size_t>(1, o.methods.size());
        const double seconds =
            retrievalSeconds([&c](int n) { return c.prefillFlops(n); }, o, methods, kHfEvalFlopsPerSecond);
        QStringList lengths;
        for (int n : o.lengths)
            lengths << QString::number(n);
        m_estimate->setText(tr("%1 method(s) × lengths %2 × %3 depth(s) × %4 example(s). Estimate: about %5 on 2 "
                               "cores (a cost model; a busy machine takes longer).")
                                .arg(methods)
                                .arg(lengths.join(QStringLiteral(", ")))
                                .arg(o.depths.size())
                                .arg(o.examples)
                                .arg(ViewBase::durationText(seconds)));
    } catch (const std::exception& e) {
        m_estimate->setText(QString::fromStdString(e.what()));
    }
}

void RetrievalPage::setInputs(const QString& lengths, const QString& depths)
{
    m_lengths->setText(lengths);
    m_depths->setText(depths);
}

void RetrievalPage::run()
{
    RetrievalOptions o;
    const HfModelPtr model = m_model();
    try {
        o = options();
        m_shownMethods = retrievalMethods(HfLanguageModel(*model->model), o); // labels now, the checks too
    } catch (const std::exception& e) {
        m_status->setText(QString::fromStdString(e.what()));
        return;
    }
    m_running = o;
    m_shownCells.clear();
    showCells();
    const int runId = ++m_runId;
    // Each finished cell reaches the GUI thread through the application object; the page may be gone by then.
    auto cellDone = [self = QPointer<RetrievalPage>(this), runId](const RetrievalCell& cell) {
        QMetaObject::invokeMethod(
            qApp,
            [self, runId, cell] {
                if (!self || runId != self->m_runId || self->m_job.isCanceled())
                    return;
                self->m_shownCells.push_back(cell);
                self->showCells();
            },
            Qt::QueuedConnection);
    };
    m_clock.start();
    m_status->setText(tr("Scoring…"));
    m_job.start(
        [model, o, cellDone](const JobControl& control) { return computeRetrieval(model, o, control, cellDone); });
}

void RetrievalPage::cancel()
{
    const bool running = m_job.isRunning() && !m_job.isCanceled();
    m_job.cancel();
    if (running)
        m_status->setText(ViewBase::canceledText(m_clock.elapsed()));
}

void RetrievalPage::writeData(std::ostream& out, DataFormat format, const nlohmann::json& meta) const
{
    RetrievalRun run;
    run.methods = m_shownMethods;
    run.cells = m_shownCells;
    nlohmann::json doc = meta;
    doc["task"] = retrievalTaskInfo(m_running.kind).name;
    doc["examples"] = m_running.examples;
    writeRetrievalRun(out, format, run, doc);
}

void RetrievalPage::showCells()
{
    m_heatmap->setFigure(retrievalHeatmapFigure(m_shownMethods, m_shownCells, m_running));
}

void RetrievalPage::finished(RetrievalPageResult result)
{
    if (result.canceled) {
        m_status->setText(ViewBase::canceledText(m_clock.elapsed()));
        return;
    }
    if (!result.error.isEmpty()) {
        m_status->setText(result.error);
        return;
    }
    m_shownMethods = result.run.methods;
    m_shownCells = result.run.cells;
    showCells();
    int correct = 0, examples = 0;
    for (const RetrievalCell& c : m_shownCells) {
        correct += c.correct;
        examples += c.examples;
    }
    m_status->setText(
        tr("%1 of %2 answers right; %3 s.").arg(correct).arg(examples).arg(m_clock.elapsed() / 1000.0, 0, 'f', 1));
}

} // namespace plab::ui
