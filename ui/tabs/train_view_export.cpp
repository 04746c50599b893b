// The Train tab's picture and data export: the shown page's figures, and its numbers as tables.
#include "tabs/train_view.h"

#include "charts/curve_chart.h"
#include "tabs/heatmap_widget.h"
#include "tabs/methods_panel.h"
#include "workers/headless.h"

#include "base/matrix_output.h"

#include <QPainter>

namespace plab::ui {

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

} // namespace plab::ui
