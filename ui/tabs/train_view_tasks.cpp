// The Train tab's task runs: the task chooser, the request, the DroPE recipe's run and its accuracy results.
#include "tabs/train_view.h"

#include "charts/curve_chart.h"
#include "tabs/heatmap_widget.h"
#include "workers/task_run.h"
#include "workers/training_run.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>

#include <algorithm>
#include <cmath>

namespace plab::ui {

void TrainView::connectTaskRuns()
{
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

} // namespace plab::ui
