// Headless pictures: the CLI's `render` and `-o x.png` draw with the same figures and painters as the GUI.
#include "workers/headless.h"

#include "charts/curve_chart.h"
#include "painting/heatmap_painter.h"
#include "workers/kept_models.h"

#include "base/limits.h"
#include "base/errors.h"

#include <QPainter>
#include <QThread>
#include <QtConcurrent>

#include <algorithm>
#include <memory>
#include <set>

namespace plab::ui {

namespace {

[[noreturn]] void fail(const QString& error)
{
    throw InputError(error.toStdString());
}

void save(const QString& path, const ImageOptions& options, const PaintFunction& paint, const QString& title)
{
    writeImageFile(path, options, paint, title);
}

void writeHeatmap(HeatmapFigure figure, const ImageOptions& options, const QString& path)
{
    figure.dark = options.dark;
    HeatmapPainter heatmap;
    heatmap.setFigure(std::move(figure));
    save(
        path, options, [&](QPainter& p, const QRectF& r, const PictureStyle& s) { heatmap.paint(p, r, s); },
        heatmap.figure().title);
}

void writeCurves(const CurveFigure& figure, const ImageOptions& options, const QString& path)
{
    save(
        path, options, [&](QPainter& p, const QRectF& r, const PictureStyle& s) { renderCurveFigure(p, r, figure, s); },
        figure.title);
}

} // namespace

QSize defaultPictureSize(const QString& view, int panels)
{
    if (view == QLatin1String("compare"))
        return {420 * panels + 260, 640};
    if (view == QLatin1String("collect") && panels > 1) // a task sweep's heatmap strips (sweepPictureStrips)
        return {1100, 380 + 420 * panels};
    if (view == QLatin1String("dot") || view == QLatin1String("train") || view == QLatin1String("frequencies") ||
        view == QLatin1String("collect") || view == QLatin1String("methods") || view == QLatin1String("fire-curve"))
        return {1100, 700};
    if (view == QLatin1String("entropy"))
        return {1100, 720};
    if (view == QLatin1String("attention"))
        return {1000, 1150};
    if (view == QLatin1String("model"))
        return {1000, 900};
    return {1000, 820}; // bias
}

void writeBiasPicture(const BiasRequest& request, const QString& colorMap, const ImageOptions& options,
                      const QString& path)
{
    imageFormatForPath(path); // a clear message before any work
    checkMemoryEstimate(8.0 * request.length * request.length,
                        "a " + std::to_string(request.length) + " x " + std::to_string(request.length) + " picture");
    const BiasResult result = computeBias(request);
    if (!result.error.isEmpty())
        fail(result.error);
    writeHeatmap(biasFigure(result, colorMap), options, path);
}

void writeComparePicture(const CompareRequest& request, const QString& colorMap, bool sharedScale,
                         const ImageOptions& options, const QString& path)
{
    imageFormatForPath(path);
    const CompareResult result = computeCompare(request);
    if (!result.error.isEmpty())
        fail(result.error);
    writeHeatmap(compareFigure(result, colorMap, sharedScale), options, path);
}

void writeDotPicture(const DotRequest& request, bool logX, const ImageOptions& options, const QString& path)
{
    imageFormatForPath(path);
    const DotResult result = computeDot(request);
    if (!result.error.isEmpty())
        fail(result.error);
    writeCurves(dotFigure(result, logX), options, path);
}

void writeFrequenciesPicture(const SchemeSpec& spec, int length, const ImageOptions& options, const QString& path)
{
    imageFormatForPath(path);
    writeCurves(frequenciesFigure(spec, length), options, path);
}

void writeFireCurvePicture(const FireCurves& curves, int head, const QString& modelName, const ImageOptions& options,
                           const QString& path)
{
    imageFormatForPath(path);
    writeCurves(fireCurvesFigure(curves, head, modelName), options, path);
}

void writeEntropyPicture(const EntropyRequest& request, int head, EntropyMeasure measure, const ImageOptions& options,
                         const QString& path)
{
    imageFormatForPath(path);
    const EntropyResult result = computeEntropy(request);
    if (!result.error.isEmpty())
        fail(result.error);
    writeCurves(entropyFigure(result, head, measure), options, path);
}

void writeModelEntropyPicture(const SharedModel& model, const std::vector<int>& lengths, int layer, int head,
                              EntropyMeasure measure, const ImageOptions& options, const QString& path)
{
    imageFormatForPath(path);
    const EntropyResult result = computeModelEntropy(model, lengths, layer);
    if (!result.error.isEmpty())
        fail(result.error);
    writeCurves(entropyFigure(result, head, measure), options, path);
}

void writeAttentionPicture(const AttentionRequest& request, int head, TextView show, const QString& colorMap,
                           const ImageOptions& options, const QString& path)
{
    imageFormatForPath(path);
    const AttentionResult result = computeAttention(request);
    if (!result.error.isEmpty())
        fail(result.error);
    HeatmapFigure figure = attentionFigure(result, head, colorMap, show);
    figure.dark = options.dark;
    HeatmapPainter heatmap;
    heatmap.setFigure(std::move(figure));
    const CurveFigure entropy = rowEntropyFigure(result, head);
    save(
        path, options,
        [&](QPainter& p, const QRectF& r, const PictureStyle& s) {
            // As the GUI's view: the heatmap above, the row entropies below.
            const QRectF top(r.left(), r.top(), r.width(), r.height() * 0.7);
            const QRectF bottom(r.left(), top.bottom(), r.width(), r.height() - top.height());
            PictureStyle hs = PictureStyle::forSize(top.size(), s.dark);
            hs.vectorOutput = s.vectorOutput;
            heatmap.paint(p, top, hs);
            renderCurveFigure(p, bottom, entropy, s);
        },
        heatmap.figure().title);
}

void writeHfModelPicture(const QString& folder, const QString& page, const QString& text, int layer, int head,
                         int repeatTo, const ImageOptions& options, const QString& path,
                         const std::optional<SchemeSpec>& positions)
{
    imageFormatForPath(path);
    if (folder.isEmpty()) {
        const QString message =
            FigureText::tr("This figure needs a Hugging Face model folder (config.json, the weights, tokenizer.json). "
                           "In the app: File → Open model folder…; on the command line: --model DIR.");
        save(
            path, options,
            [&](QPainter& p, const QRectF& r, const PictureStyle& s) {
                p.fillRect(r, s.background);
                p.setPen(s.text);
                p.setFont(s.font);
                p.drawText(r.adjusted(r.width() * 0.1, 0, -r.width() * 0.1, 0), Qt::AlignCenter | Qt::TextWordWrap,
                           message);
            },
            FigureText::tr("No model folder"));
        return;
    }
    const HfOpenResult opened = openHfModel(folder);
    if (!opened.error.isEmpty())
        fail(opened.error);
    const HfAttentionResult attention = computeHfAttention({opened.model, text, repeatTo, positions});
    if (!attention.error.isEmpty())
        fail(attention.error);
    if (page == QLatin1String("entropy")) {
        const CurveFigure figure = hfEntropyFigure(attention);
        save(
            path, options,
            [&](QPainter& p, const QRectF& r, const PictureStyle& s) { renderCurveFigure(p, r, figure, s); },
            figure.title);
        return;
    }
    if (page == QLatin1String("sinks")) {
        writeHeatmap(hfSinkFigure(attention), options, path);
        return;
    }
    const HfAttentionCapture& c = *attention.capture;
    if (layer >= c.layers || head >= c.heads)
        fail(QStringLiteral("layer %1, head %2: the model has %3 layers of %4 heads; allowed: layer 0..%5, head 0..%6")
                 .arg(layer)
                 .arg(head)
                 .arg(c.layers)
                 .arg(c.heads)
                 .arg(c.layers - 1)
                 .arg(c.heads - 1));
    HfMapRequest request;
    request.capture = attention.capture;
    request.layer = layer < 0 ? c.layers - 1 : layer;
    request.head = head;
    const HfMapResult map = computeHfMap(request);
    if (!map.error.isEmpty())
        fail(map.error);
    writeHeatmap(hfAttentionFigure(attention, map, false), options, path);
}

void writePerplexityPicture(const std::vector<std::string>& schemes, const std::vector<std::vector<EvalPoint>>& evals,
                            int context, const ImageOptions& options, const QString& path)
{
    imageFormatForPath(path);
    writeCurves(perplexityFigure(schemes, evals, context), options, path);
}

void writeMethodsPicture(const std::vector<MethodCurve>& curves, const std::string& scheme, int context,
                         const ImageOptions& options, const QString& path)
{
    imageFormatForPath(path);
    writeCurves(methodsPerplexityFigure(curves, scheme, context), options, path);
}

void writeSweepPicture(const std::vector<SweepSummaryRow>& rows, const ImageOptions& options, const QString& path)
{
    imageFormatForPath(path);
    writeCurves(sweepPerplexityFigure(rows), options, path);
}

std::vector<TrainSnapshot> runTrainingAndWait(const TrainRequest& request,
                                              const std::function<void(const TrainSnapshot&)>& onSnapshot)
{
    QFuture<TrainSnapshot> future =
        QtConcurrent::run([request](QPromise<TrainSnapshot>& promise) { runTraining(request, promise); });
    int shown = 0;
    auto report = [&] {
        for (; shown < future.resultCount(); ++shown)
            if (onSnapshot)
                onSnapshot(future.resultAt(shown));
    };
    while (!future.isFinished()) {
        report();
        QThread::msleep(100);
    }
    report();
    const QList<TrainSnapshot> results = future.results();
    std::vector<TrainSnapshot> all(results.begin(), results.end());
    for (const TrainSnapshot& s : all)
        if (!s.error.isEmpty() && s.badInput)
            throw InputError(s.error.toStdString());
        else if (!s.error.isEmpty())
            throw RunError(s.error.toStdString());
    return all;
}

std::vector<TaskCurve> runTaskAndWait(const TaskRequest& request,
                                      const std::function<void(const TaskSnapshot&)>& onSnapshot)
{
    request.check(); // core's checks first: bad input is an InputError, not a failed run
    QFuture<TaskSnapshot> future =
        QtConcurrent::run([request](QPromise<TaskSnapshot>& promise) { runTaskRequest(request, promise); });
    int shown = 0;
    std::vector<TaskCurve> curves;
    auto report = [&] {
        for (; shown < future.resultCount(); ++shown) {
            const TaskSnapshot s = future.resultAt(shown);
            if (!s.error.isEmpty())
                throw RunError(s.error.toStdString());
            if (s.scored)
                curves.push_back(s.curve);
            if (onSnapshot)
                onSnapshot(s);
        }
    };
    while (!future.isFinished()) {
        report();
        QThread::msleep(100);
    }
    report();
    return curves;
}

void writeTaskPicture(const TaskRequest& request, const std::vector<TaskCurve>& curves, const ImageOptions& options,
                      const QString& path)
{
    imageFormatForPath(path);
    const CurveFigure accuracy = taskAccuracyFigure(summarizeTaskAccuracy(curves, true), request);
    if (request.run.task.kind != TaskKind::Passkey) {
        writeCurves(accuracy, options, path);
        return;
    }
    // One strip of heatmaps per four curves (a panel narrower than that is unreadable), stacked under the accuracy.
    const std::vector<TaskAccuracyRow> grid = summarizeTaskAccuracy(curves, false);
    const std::vector<std::string> labels = request.labels();
    std::vector<std::unique_ptr<HeatmapPainter>> strips;
    for (size_t first = 0; first < labels.size(); first += kHeatmapPanelsPerStrip) {
        TaskRequest part = request;
        part.drope = false; // the strip's own labels, whatever they are
        part.schemes.assign(labels.begin() + static_cast<std::ptrdiff_t>(first),
                            labels.begin() +
                                static_cast<std::ptrdiff_t>(std::min(labels.size(), first + kHeatmapPanelsPerStrip)));
        HeatmapFigure figure = passkeyHeatmapFigure(grid, part);
        if (figure.panels.empty())
            continue;
        if (!strips.empty())
            figure.title.clear(); // one title over the strips
        figure.dark = options.dark;
        strips.push_back(std::make_unique<HeatmapPainter>());
        strips.back()->setFigure(std::move(figure));
    }
    const QString title = strips.empty() ? accuracy.title : strips.front()->figure().title;
    save(
        path, options,
        [&](QPainter& p, const QRectF& r, const PictureStyle& s) {
            // Accuracy over the heatmaps: four panels need the whole width.
            const double top = strips.size() <= 1 ? 0.42 : 0.9 / (strips.size() + 1.2);
            const QRectF curvesRect(r.left(), r.top(), r.width(), r.height() * top);
            renderCurveFigure(p, curvesRect, accuracy, s);
            const double stripH = (r.bottom() - curvesRect.bottom()) / std::max<size_t>(1, strips.size());
            for (size_t i = 0; i < strips.size(); ++i)
                strips[i]->paint(p, QRectF(r.left(), curvesRect.bottom() + i * stripH, r.width(), stripH), s);
        },
        title);
}

int sweepPictureStrips(const std::vector<SweepResult>& results)
{
    // Lines written before passkey kept its depths have none: a folder of those alone has no heatmap.
    if (std::none_of(results.begin(), results.end(), [](const SweepResult& r) { return !r.depths.empty(); }))
        return 0;
    std::set<std::string> labels;
    for (const TaskCurve& c : sweepTaskCurves(results))
        labels.insert(c.label);
    return static_cast<int>((labels.size() + kHeatmapPanelsPerStrip - 1) / kHeatmapPanelsPerStrip);
}

void writeSweepTaskPicture(const std::vector<SweepResult>& results, const SweepGrid& grid, const ImageOptions& options,
                           const QString& path)
{
    imageFormatForPath(path);
    if (!grid.task)
        throw InputError("the sweep folder holds a text sweep; its picture is perplexity against length");
    TaskRequest request;
    request.run.task = *grid.task;
    request.run.model = grid.model;
    request.run.train = grid.train;
    request.run.examples = grid.taskExamples;
    request.run.lengths = grid.evalLengths;
    const std::vector<TaskCurve> curves = sweepTaskCurves(results);
    for (const TaskCurve& c : curves)
        if (std::find(request.schemes.begin(), request.schemes.end(), c.label) == request.schemes.end())
            request.schemes.push_back(c.label);
    writeTaskPicture(request, curves, options, path);
}

} // namespace plab::ui
