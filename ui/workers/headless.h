// Headless pictures for positionlab-cli: request -> core -> the GUI's figure and painter -> file. No argument parsing
// and no application start-up here (both are app/cli's: the caller makes the QApplication); every function throws
// InputError naming what is wrong, RunError when a run fails.
#pragma once

#include "workers/compute.h"
#include "painting/export.h"
#include "workers/model_compute.h"
#include "workers/hf_compute.h"
#include "workers/task_run.h"

#include <QSize>
#include <QString>

#include <functional>
#include <optional>
#include <vector>

namespace plab::ui {

// The size each view's picture has when the user gives none (the GUI's export defaults).
QSize defaultPictureSize(const QString& view, int panels = 1);

// Each writes `path` (.png, .svg or .pdf, atomically); the extension is checked before any work.
void writeBiasPicture(const BiasRequest& request, const QString& colorMap, const ImageOptions& options,
                      const QString& path);
void writeComparePicture(const CompareRequest& request, const QString& colorMap, bool sharedScale,
                         const ImageOptions& options, const QString& path);
void writeDotPicture(const DotRequest& request, bool logX, const ImageOptions& options, const QString& path);
void writeFrequenciesPicture(const SchemeSpec& spec, int length, const ImageOptions& options, const QString& path);
// FIRE's learned curve of head `head` beside the untrained one (fireCurvesFigure; the untrained alone without a name).
void writeFireCurvePicture(const FireCurves& curves, int head, const QString& modelName, const ImageOptions& options,
                           const QString& path);
void writeEntropyPicture(const EntropyRequest& request, int head, EntropyMeasure measure, const ImageOptions& options,
                         const QString& path);
// Entropy vs length with the q and k of `model`'s `layer` on its sample text (computeModelEntropy), head `head`.
void writeModelEntropyPicture(const SharedModel& model, const std::vector<int>& lengths, int layer, int head,
                              EntropyMeasure measure, const ImageOptions& options, const QString& path);
// `show`: the attention weights, the positional bias or (cope) the contextual positions of the text, above the row
// entropies.
void writeAttentionPicture(const AttentionRequest& request, int head, TextView show, const QString& colorMap,
                           const ImageOptions& options, const QString& path);
// The "Your model" tab's picture: page "attention" (layer, head; -1: the last layer), "entropy" or "sinks" of the
// model in `folder` on `text` (its tokens repeated to `repeatTo` when > 0). With no folder, a picture that says a
// model folder is needed and how to give one (lesson 12 drawn headless without a model). `positions`: a method applied
// zero-shot (empty: the config's own), as `render attention --checkpoint DIR --scaling M` asks.
void writeHfModelPicture(const QString& folder, const QString& page, const QString& text, int layer, int head,
                         int repeatTo, const ImageOptions& options, const QString& path,
                         const std::optional<SchemeSpec>& positions = std::nullopt);

void writePerplexityPicture(const std::vector<std::string>& schemes, const std::vector<std::vector<EvalPoint>>& evals,
                            int context, const ImageOptions& options, const QString& path);

// Perplexity vs length of one model under several methods (positionlab-cli eval --compare -o x.png).
void writeMethodsPicture(const std::vector<MethodCurve>& curves, const std::string& scheme, int context,
                         const ImageOptions& options, const QString& path);

// Perplexity vs length with a band per scheme, from core's summary of sweep results (positionlab-cli collect).
void writeSweepPicture(const std::vector<SweepSummaryRow>& rows, const ImageOptions& options, const QString& path);

// Runs `request` on a worker and waits, calling `onSnapshot` (on this thread) for every snapshot as it arrives;
// returns them all. RunError with the run's message when it fails; InputError when the request cannot run on its input
// (a snapshot marked badInput, e.g. a length the held-out text cannot fill).
std::vector<TrainSnapshot> runTrainingAndWait(const TrainRequest& request,
                                              const std::function<void(const TrainSnapshot&)>& onSnapshot = {});

// A task run to its end (runTaskRequest on the thread pool), each update shown to `onSnapshot`; its scored curves.
// InputError for bad input (core's checks), RunError when the run fails.
std::vector<TaskCurve> runTaskAndWait(const TaskRequest& request,
                                      const std::function<void(const TaskSnapshot&)>& onSnapshot = {});
// Accuracy against length over seeds, beside the passkey's depth x length heatmap for passkey (render train --task).
// More than kHeatmapPanelsPerStrip curves draw their heatmaps in several strips, one under the other.
void writeTaskPicture(const TaskRequest& request, const std::vector<TaskCurve>& curves, const ImageOptions& options,
                      const QString& path);
inline constexpr size_t kHeatmapPanelsPerStrip = 4;
// A task sweep's picture (positionlab-cli collect -o x.png): the same figures from the folders' results
// (sweepTaskCurves), one curve (and passkey heatmap) per summary row, `grid` giving the task and its lengths.
void writeSweepTaskPicture(const std::vector<SweepResult>& results, const SweepGrid& grid, const ImageOptions& options,
                           const QString& path);
// How many heatmap strips that picture has (0 without depths): for its default height.
int sweepPictureStrips(const std::vector<SweepResult>& results);

} // namespace plab::ui
