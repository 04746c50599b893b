// Requests and results of every view's background work, and the functions that run core on them (worker side).
#pragma once

#include "painting/figures.h"

#include "base/errors.h"

#include "views/bias_views.h"
#include "views/entropy.h"
#include "views/fire_curves.h"
#include "schemes/schemes.h"

#include <QString>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <exception>
#include <functional>
#include <new>
#include <utility>
#include <vector>

namespace plab::ui {

// Progress and cancellation hooks a worker polls; both may be empty.
struct JobControl {
    std::function<void(int done, int total)> progress;
    std::function<bool()> canceled;
    void report(int done, int total) const
    {
        if (progress)
            progress(done, total);
    }
    bool isCanceled() const { return canceled && canceled(); }
};

// The one catch block of every worker: runs `fn` (which fills `result`) and turns any exception into result.error,
// core's words ("out of memory" for bad_alloc), so a job ends with an error, never a dead worker.
template <class Result, class Fn>
void runGuarded(Result& result, Fn&& fn)
{
    try {
        fn();
    } catch (const std::bad_alloc&) {
        result.error = FigureText::tr("out of memory");
    } catch (const std::exception& e) {
        result.error = QString::fromStdString(e.what());
    }
}
// The same for a worker that builds its result in `fn`: fn()'s result, or a fresh Result with the error.
template <class Result, class Fn>
Result guarded(Fn&& fn)
{
    Result result;
    runGuarded(result, [&] { result = fn(); });
    return result;
}
// The same for a worker core can stop: a RunError (core's hooks asked it to stop) while `canceled()` holds marks
// result.canceled instead of an error; any other failure, RunError included, is result.error as above.
template <class Result, class Canceled, class Fn>
void runGuardedCancelable(Result& result, Canceled&& canceled, Fn&& fn)
{
    runGuarded(result, [&] {
        try {
            fn();
        } catch (const RunError&) {
            if (!canceled())
                throw;
            result.canceled = true;
        }
    });
}

// ---- Bias heatmap -------------------------------------------------------------------------------------------
struct BiasRequest {
    SchemeSpec spec;
    int length = 64;
    int head = 0;          // 0-based
    bool buckets = false;  // t5: bucket indices instead of values
    int thumbnailSize = 0; // > 0: also sample every head on a thumbnailSize^2 grid of the same matrix
};

struct BiasResult {
    QString error; // non-empty when core refused the request
    BiasRequest request;
    MatrixPtr matrix;                  // (N, N)
    std::vector<MatrixPtr> thumbnails; // one per head, (T, T) samples of the (N, N) matrix
};
BiasResult computeBias(const BiasRequest& request, const JobControl& control = {});

// What the views read from the scheme panel: a validated spec and the display choices.
struct PanelState {
    SchemeSpec spec;
    int length = 64;
    int head = 0; // 0-based (shown 1-based)
    QString colorMap = QStringLiteral("auto");
};

// ---- Compare ------------------------------------------------------------------------------------------------
// The specs compared for a panel state (the Compare and Entropy views, `render compare|entropy`): the panel's own
// spec for each name that is its scheme as schemeLabel writes it ("rope+yarn" when the panel applies yarn), the others
// with their defaults ("rope+yarn": rope under yarn) and the panel's heads, context, logn and direction. With
// headDim > 0 those others are for q and k of that head dim (core's makeSchemeSpecForHeadDim, naming headDimName), as
// `render entropy --head-dim` reads its first scheme.
std::vector<SchemeSpec> compareSpecs(const QStringList& names, const PanelState& panel, int headDim = 0,
                                     const std::string& headDimName = {});

struct CompareRequest {
    std::vector<SchemeSpec> specs; // 2..4
    int length = 64;
    int head = 0;
    // Also the difference A − B of panels differenceA and differenceB (indices into specs); -1: none.
    int differenceA = -1;
    int differenceB = -1;
};
struct CompareResult {
    QString error;
    std::vector<BiasResult> panels;
    int differenceA = -1;
    int differenceB = -1;
    MatrixPtr difference; // (N, N) from core's maskedDifference, masked where either panel is; null when not asked
};
CompareResult computeCompare(const CompareRequest& request, const JobControl& control = {});

// ---- Sinusoidal dot -----------------------------------------------------------------------------------------
struct DotRequest {
    std::vector<std::pair<int, double>> curves{{128, 10000.0}, {64, 10000.0}, {128, 500.0}}; // (dim, base)
    int maxDistance = 256;
};
struct DotResult {
    QString error;
    std::vector<DotCurve> curves;
};
DotResult computeDot(const DotRequest& request, const JobControl& control = {});

// ---- Entropy ------------------------------------------------------------------------------------------------
enum class QkSource { Zero, Random, Model };
struct EntropyRequest {
    std::vector<SchemeSpec> specs; // one curve per scheme
    std::vector<int> lengths{16, 32, 64, 128, 256, 512, 1024, 2048};
    QkSource qk = QkSource::Zero;
    uint64_t seed = 0;
    int headDim = 64; // random q/k of non-rotary schemes; rotary schemes use their `dim`
};
struct EntropySeries {
    SchemeSpec spec;
    std::vector<EntropyPoint> points; // (length, head) pairs as entropyCurve returns them
};
struct EntropyResult {
    QString error;
    bool canceled = false;
    EntropyRequest request;
    std::vector<EntropySeries> series;
};
EntropyResult computeEntropy(const EntropyRequest& request, const JobControl& control = {});
// The entropy request for a panel state, scheme names and options: lengths 16, 32, ... up to maxLength.
EntropyRequest entropyRequestFor(const QStringList& names, const PanelState& panel, QkSource qk, uint64_t seed,
                                 int maxLength);

// ---- Figures (what the painters draw), shared by the GUI views and `positionlab-cli render` --------------
QString schemeSubtitle(const SchemeSpec& spec, int length, int head);
QString valueLabel(const SchemeSpec& spec, bool buckets);
HeatmapFigure biasFigure(const BiasResult& result, const QString& colorMap);
// The compared panels, then the difference (when the result has one) with its own diverging scale centred on 0.
HeatmapFigure compareFigure(const CompareResult& result, const QString& colorMap, bool sharedScale);
QString differenceName(const CompareResult& result); // "alibi − local"; empty without a difference
CurveFigure dotFigure(const DotResult& result, bool logX);
// θ_i, θ'_i and θ'_i/θ_i of a rotary spec against the pair index on a log axis (core's rotaryScaling at sequence
// length `length`), with the line θ = 2π/L where the wavelength equals the training context. InputError for a scheme
// that is not rotary.
CurveFigure frequenciesFigure(const SchemeSpec& spec, int length);
// FIRE's bias against the distance m − n at query row curves.row, head `head`: the learned curve of the model named
// `modelName` (solid) beside the untrained initialisation it started from (dashed); the untrained one alone when
// `modelName` is empty.
CurveFigure fireCurvesFigure(const FireCurves& curves, int head, const QString& modelName);
enum class EntropyMeasure { LastRow, MeanOverRows };
CurveFigure entropyFigure(const EntropyResult& result, int head, EntropyMeasure measure);

} // namespace plab::ui
