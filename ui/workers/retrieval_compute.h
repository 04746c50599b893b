// The Retrieval page's figures and worker: a retrieval run's depth x length heatmaps, one per method, and the run on
// the thread pool with its cells reported as they finish (core/runs/retrieval_runs).
#pragma once

#include "painting/export.h"
#include "painting/figures.h"
#include "runs/retrieval_runs.h"

#include <QString>

#include <atomic>
#include <functional>
#include <vector>

namespace plab::ui {

// Accuracy by needle depth (rows) and length (columns) of methods [first, first + count), one panel each; cells not
// scored yet are masked. Accuracy on the fixed scale 0..1.
HeatmapFigure retrievalHeatmapFigure(const std::vector<RetrievalMethod>& methods,
                                     const std::vector<RetrievalCell>& cells, const RetrievalOptions& options,
                                     size_t first = 0, size_t count = 4);
// Every method's heatmap, four to a strip (positionlab-cli eval DIR --task -o x.png).
void writeRetrievalPicture(const RetrievalRun& run, const RetrievalOptions& options, const ImageOptions& imageOptions,
                           const QString& path);
// The picture's default size for `methods` heatmaps.
QSize retrievalPictureSize(size_t methods);

} // namespace plab::ui
