// The retrieval heatmaps (one panel per method) and their picture file.
#include "workers/retrieval_compute.h"

#include "painting/heatmap_painter.h"

#include <QPainter>

#include <algorithm>
#include <limits>
#include <memory>

namespace plab::ui {

HeatmapFigure retrievalHeatmapFigure(const std::vector<RetrievalMethod>& methods,
                                     const std::vector<RetrievalCell>& cells, const RetrievalOptions& options,
                                     size_t first, size_t count)
{
    HeatmapFigure figure;
    figure.title = FigureText::tr("Retrieval (%1): accuracy by needle depth and length")
                       .arg(QString::fromStdString(retrievalTaskInfo(options.kind).name));
    // Short: four panels share a row, and a label wider than its panel is elided.
    figure.xLabel = options.lengthsInTokens ? FigureText::tr("length (tokens)") : FigureText::tr("length (prompts file)");
    figure.yLabel = FigureText::tr("needle depth");
    figure.colorMap = QStringLiteral("viridis");
    figure.fixedLo = 0;
    figure.fixedHi = 1;
    for (int length : options.lengths)
        figure.tickLabels.push_back(QString::number(length));
    for (double depth : options.depths)
        figure.rowTickLabels.push_back(QStringLiteral("%1%").arg(depth * 100));
    for (size_t m = first; m < methods.size() && m < first + count; ++m) {
        auto matrix = std::make_shared<Matrix>();
        matrix->rows = static_cast<int>(options.depths.size());
        matrix->cols = static_cast<int>(options.lengths.size());
        matrix->values.assign(static_cast<size_t>(matrix->rows) * matrix->cols,
                              -std::numeric_limits<float>::infinity());
        int examples = 0;
        for (const RetrievalCell& c : cells) {
            if (c.method != m)
                continue;
            const auto col = std::find(options.lengths.begin(), options.lengths.end(), c.length);
            const auto row = std::find(options.depths.begin(), options.depths.end(), c.depth);
            if (col == options.lengths.end() || row == options.depths.end())
                continue;
            matrix->values[static_cast<size_t>(row - options.depths.begin()) * matrix->cols +
                           static_cast<size_t>(col - options.lengths.begin())] = static_cast<float>(c.accuracy);
            examples = std::max(examples, c.examples);
        }
        HeatmapPanel panel;
        panel.title = QString::fromStdString(methods[m].label);
        examples = examples > 0 ? examples : options.examples; // the cells' own count (a prompts file's may differ)
        panel.subtitle = options.scoring == RetrievalScoring::Exact
                             ? FigureText::tr("greedy answer, %n example(s) per cell", nullptr, examples)
                             : FigureText::tr("log-likelihood rank 1 of 10, %n example(s) per cell", nullptr, examples);
        panel.valueLabel = FigureText::tr("accuracy");
        panel.matrix = std::move(matrix);
        figure.panels.push_back(std::move(panel));
    }
    return figure;
}

QSize retrievalPictureSize(size_t methods)
{
    const int strips = static_cast<int>((std::max<size_t>(1, methods) + 3) / 4);
    const int across = static_cast<int>(std::min<size_t>(4, std::max<size_t>(1, methods)));
    return {std::max(700, 380 * across + 200), 120 + 420 * strips};
}

void writeRetrievalPicture(const RetrievalRun& run, const RetrievalOptions& options, const ImageOptions& imageOptions,
                           const QString& path)
{
    std::vector<std::unique_ptr<HeatmapPainter>> strips;
    for (size_t first = 0; first < run.methods.size(); first += 4) {
        HeatmapFigure figure = retrievalHeatmapFigure(run.methods, run.cells, options, first, 4);
        if (!strips.empty())
            figure.title.clear(); // one title over the strips
        figure.dark = imageOptions.dark;
        strips.push_back(std::make_unique<HeatmapPainter>());
        strips.back()->setFigure(std::move(figure));
    }
    const QString title = strips.empty() ? QString() : strips.front()->figure().title;
    writeImageFile(
        path, imageOptions,
        [&](QPainter& p, const QRectF& r, const PictureStyle& s) {
            const double h = r.height() / static_cast<double>(std::max<size_t>(1, strips.size()));
            for (size_t i = 0; i < strips.size(); ++i)
                strips[i]->paint(p, QRectF(r.left(), r.top() + static_cast<double>(i) * h, r.width(), h), s);
        },
        title);
}

} // namespace plab::ui
