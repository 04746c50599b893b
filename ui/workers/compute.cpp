// Worker-side functions: each turns a request into a result by calling core, catching core's refusals.
#include "workers/compute.h"

#include "views/bias_difference.h"
#include "base/errors.h"
#include "settings/i18n.h"
#include "schemes/position_bias.h"

#include <QStringList>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <new>

namespace plab::ui {

BiasResult computeBias(const BiasRequest& request, const JobControl& control)
{
    BiasResult result = guarded<BiasResult>([&] {
        BiasResult r;
        r.request = request;
        auto matrix = std::make_shared<Matrix>();
        matrix->rows = matrix->cols = request.length;
        if (request.buckets) {
            const std::vector<int32_t> buckets = t5BucketMatrix(request.spec, request.length);
            matrix->values.resize(buckets.size());
            // Bucket -1 marks a masked cell; the heatmap shows it as masked.
            std::transform(buckets.begin(), buckets.end(), matrix->values.begin(),
                           [](int32_t b) { return b < 0 ? PositionBias::kMasked : static_cast<float>(b); });
            r.matrix = std::move(matrix);
            return r;
        }
        const PositionBias bias(request.spec, request.length);
        matrix->values = biasViewMatrix(bias, request.head, request.length);
        r.matrix = std::move(matrix);
        if (request.thumbnailSize > 0) {
            for (int h = 0; h < request.spec.heads && !control.isCanceled(); ++h) {
                SampledView samples = biasViewSamples(bias, h, request.length, request.thumbnailSize);
                auto thumbnail = std::make_shared<Matrix>();
                thumbnail->rows = thumbnail->cols = samples.size;
                thumbnail->values = std::move(samples.values);
                r.thumbnails.push_back(std::move(thumbnail));
            }
        }
        return r;
    });
    result.request = request;
    return result;
}

CompareResult computeCompare(const CompareRequest& request, const JobControl& control)
{
    CompareResult result;
    if (request.specs.size() < 2 || request.specs.size() > 4) {
        result.error = QStringLiteral("compare needs 2 to 4 schemes, got %1").arg(request.specs.size());
        return result;
    }
    const int schemes = static_cast<int>(request.specs.size());
    const bool wantDifference = request.differenceA >= 0 || request.differenceB >= 0;
    if (wantDifference && (request.differenceA < 0 || request.differenceB < 0 || request.differenceA >= schemes ||
                           request.differenceB >= schemes || request.differenceA == request.differenceB)) {
        result.error = QStringLiteral("difference of schemes %1 and %2: allowed are two different schemes of 1..%3")
                           .arg(request.differenceA + 1)
                           .arg(request.differenceB + 1)
                           .arg(schemes);
        return result;
    }
    int done = 0;
    for (const SchemeSpec& spec : request.specs) {
        if (control.isCanceled())
            break;
        BiasRequest one;
        one.spec = spec;
        one.length = request.length;
        one.head = std::min(request.head, spec.heads - 1);
        BiasResult r = computeBias(one, control);
        if (!r.error.isEmpty() && result.error.isEmpty())
            result.error = QString::fromStdString(spec.name()) + QStringLiteral(": ") + r.error;
        result.panels.push_back(std::move(r));
        control.report(++done, static_cast<int>(request.specs.size()));
    }
    const int a = request.differenceA, b = request.differenceB;
    const int k = static_cast<int>(result.panels.size());
    if (!wantDifference || !result.error.isEmpty() || control.isCanceled() ||
        k != static_cast<int>(request.specs.size()))
        return result;
    // The subtraction and its mask rule are core's (maskedDifference); the panels only hand it their matrices.
    const Matrix& ma = *result.panels[a].matrix;
    const Matrix& mb = *result.panels[b].matrix;
    try {
        auto difference = std::make_shared<Matrix>();
        difference->rows = ma.rows;
        difference->cols = ma.cols;
        difference->values = maskedDifference(ma.values, mb.values);
        result.difference = std::move(difference);
    } catch (const std::exception& e) { // InputError on a size mismatch, bad_alloc: an error, never a dead worker
        result.error = QStringLiteral("difference: %1").arg(QString::fromStdString(e.what()));
        return result;
    }
    result.differenceA = a;
    result.differenceB = b;
    return result;
}

DotResult computeDot(const DotRequest& request, const JobControl& control)
{
    return guarded<DotResult>([&] {
        DotResult r;
        int done = 0;
        for (const auto& [dim, base] : request.curves) {
            r.curves.push_back(sinusoidalDotCurve(dim, base, request.maxDistance));
            control.report(++done, static_cast<int>(request.curves.size()));
        }
        return r;
    });
}

EntropyResult computeEntropy(const EntropyRequest& request, const JobControl& control)
{
    EntropyResult result = guarded<EntropyResult>([&] {
        EntropyResult r;
        const int total = static_cast<int>(request.specs.size() * request.lengths.size());
        int done = 0;
        for (const SchemeSpec& spec : request.specs) {
            EntropySeries series;
            series.spec = spec;
            QkProvider provider;
            if (request.qk == QkSource::Random)
                provider =
                    randomQkProvider(spec, spec.info().rotary ? spec.intParam("dim") : request.headDim, request.seed);
            // Progress after every length; a cancel stops between lengths.
            series.points = entropyCurve(spec, request.lengths, provider, [&](int lengthsDone) {
                control.report(done + lengthsDone, total);
                return !control.isCanceled();
            });
            if (control.isCanceled()) {
                r.canceled = true;
                return r;
            }
            done += static_cast<int>(request.lengths.size());
            r.series.push_back(std::move(series));
        }
        return r;
    });
    result.request = request;
    return result;
}

// ---- Figures ------------------------------------------------------------------------------------------------

namespace {
std::atomic<IndexBase> g_indexBase{IndexBase::One};
} // namespace

void setFigureIndexBase(IndexBase base)
{
    g_indexBase = base;
}

IndexBase figureIndexBase()
{
    return g_indexBase;
}

QString headOfText(int head, int heads)
{
    if (figureIndexBase() == IndexBase::Zero)
        return FigureText::tr("head h = %1 of 0..%2").arg(head).arg(heads - 1);
    return FigureText::tr("head %1 of %2").arg(head + 1).arg(heads);
}

QString headText(int head)
{
    if (figureIndexBase() == IndexBase::Zero)
        return FigureText::tr("head h = %1").arg(head);
    return FigureText::tr("head %1").arg(head + 1);
}

QString layerText(int layer)
{
    if (figureIndexBase() == IndexBase::Zero)
        return FigureText::tr("layer l = %1").arg(layer);
    return FigureText::tr("layer %1").arg(layer + 1);
}

QString schemeSubtitle(const SchemeSpec& spec, int length, int head)
{
    QStringList parts;
    parts << headOfText(head, spec.heads);
    parts << QStringLiteral("N = %1").arg(length);
    parts << (spec.bidirectional ? FigureText::tr("bidirectional") : FigureText::tr("causal"));
    for (const auto& [name, value] : spec.params)
        parts << QStringLiteral("%1 = %2").arg(QString::fromStdString(name)).arg(value, 0, 'g', 6);
    // The layer-type modifiers, named as set (--set window=W ...), when on.
    for (const auto& [name, value] : {std::pair{"window", double(spec.window)},
                                      {"chunk", double(spec.chunk)},
                                      {"sinks", double(spec.sinks)},
                                      {"softcap", spec.softcap}})
        if (value > 0)
            parts << QStringLiteral("%1 = %2").arg(QLatin1String(name)).arg(value, 0, 'g', 6);
    if (spec.logn)
        parts << FigureText::tr("logn (L = %1)").arg(spec.context);
    if (spec.scaling != RotaryMethod::None) {
        QStringList method;
        for (const auto& [name, value] : spec.scalingParams)
            method << QStringLiteral("%1 = %2").arg(QString::fromStdString(name)).arg(value, 0, 'g', 6);
        parts << QStringLiteral("%1 (%2)").arg(QString::fromStdString(rotaryMethodInfo(spec.scaling).name),
                                               method.join(QStringLiteral(", ")));
    }
    return parts.join(QStringLiteral(" · "));
}

QString valueLabel(const SchemeSpec& spec, bool buckets)
{
    if (buckets)
        return FigureText::tr("T5 bucket of n − m");
    QString label;
    if (spec.kind == SchemeKind::Sinusoidal)
        label = QStringLiteral("dot(p_m, p_n) − d/2");
    else if (spec.info().rotary)
        label = FigureText::tr("probe score (q = k = 1)");
    else
        label = FigureText::tr("bias b(m, n)");
    if (spec.logn)
        label = FigureText::tr("%1 × logn scale").arg(label);
    return label;
}

HeatmapFigure biasFigure(const BiasResult& result, const QString& colorMap)
{
    HeatmapFigure figure;
    const SchemeSpec& spec = result.request.spec;
    figure.title = schemeTitle(spec.info());
    if (result.request.buckets)
        figure.title = FigureText::tr("%1: bucket map").arg(figure.title);
    else if (spec.info().rotary)
        figure.title = FigureText::tr("%1: probe score").arg(figure.title);
    else if (spec.kind == SchemeKind::Sinusoidal)
        figure.title = FigureText::tr("%1: dot(p_m, p_n) − d/2").arg(figure.title);
    else
        figure.title = FigureText::tr("%1: attention bias").arg(figure.title);
    figure.colorMap = colorMap;
    HeatmapPanel panel;
    panel.subtitle = schemeSubtitle(spec, result.request.length, result.request.head);
    panel.valueLabel = valueLabel(spec, result.request.buckets);
    panel.matrix = result.matrix;
    figure.panels.push_back(std::move(panel));
    return figure;
}

HeatmapFigure compareFigure(const CompareResult& result, const QString& colorMap, bool sharedScale)
{
    HeatmapFigure figure;
    QStringList names;
    for (const BiasResult& r : result.panels) {
        names << QString::fromStdString(schemeLabel(r.request.spec));
        HeatmapPanel panel;
        panel.title = schemeTitle(r.request.spec.info());
        if (r.request.spec.scaling != RotaryMethod::None)
            panel.title =
                FigureText::tr("%1 + %2").arg(panel.title, rotaryMethodTitle(rotaryMethodInfo(r.request.spec.scaling)));
        panel.subtitle =
            QStringList{headOfText(r.request.head, r.request.spec.heads),
                        QStringLiteral("N = %1").arg(r.request.length),
                        r.request.spec.bidirectional ? FigureText::tr("bidirectional") : FigureText::tr("causal")}
                .join(QStringLiteral(" · "));
        panel.valueLabel = valueLabel(r.request.spec, false);
        panel.matrix = r.matrix;
        figure.panels.push_back(std::move(panel));
    }
    figure.title = FigureText::tr("Compare: %1").arg(names.join(FigureText::tr(" vs ")));
    figure.colorMap = colorMap;
    figure.sharedScale = sharedScale;
    if (result.difference) {
        const BiasResult& a = result.panels[result.differenceA];
        HeatmapPanel panel;
        panel.title = FigureText::tr("Difference %1").arg(differenceName(result));
        panel.subtitle = QStringList{headText(a.request.head), QStringLiteral("N = %1").arg(a.request.length),
                                     FigureText::tr("masked where either is masked")}
                             .join(QStringLiteral(" · "));
        panel.valueLabel = QStringLiteral("A − B");
        panel.matrix = result.difference;
        panel.ownScale = true;
        panel.colorMap = QStringLiteral("diverging"); // signed: 0 (no difference) at the neutral centre
        figure.panels.push_back(std::move(panel));
    }
    return figure;
}

QString differenceName(const CompareResult& result)
{
    if (!result.difference)
        return {};
    return QString::fromStdString(schemeLabel(result.panels[result.differenceA].request.spec)) + QStringLiteral(" − ") +
           QString::fromStdString(schemeLabel(result.panels[result.differenceB].request.spec));
}

namespace {

// A curve figure with its texts and x axis, before any curve.
CurveFigure curveFigure(QString title, QString xLabel, QString yLabel, bool logX, int logBase)
{
    CurveFigure figure;
    figure.title = std::move(title);
    figure.xLabel = std::move(xLabel);
    figure.yLabel = std::move(yLabel);
    figure.logX = logX;
    figure.logBase = logBase;
    return figure;
}

} // namespace

CurveFigure dotFigure(const DotResult& result, bool logX)
{
    CurveFigure figure =
        curveFigure(FigureText::tr("Sinusoidal position embeddings: dot(p_m, p_n) − d/2"),
                    FigureText::tr("distance |m − n|"), QStringLiteral("dot(p_m, p_n) − d/2"), logX, 10);
    for (const DotCurve& c : result.curves) {
        Curve curve;
        curve.name = FigureText::tr("d = %1, base = %2").arg(c.dim).arg(c.base, 0, 'g', 6);
        for (size_t i = 0; i < c.distance.size(); ++i) {
            if (logX && c.distance[i] <= 0)
                continue; // a log axis has no 0
            curve.x.push_back(c.distance[i]);
            curve.y.push_back(c.dot[i] - c.halfDim());
        }
        figure.curves.push_back(std::move(curve));
    }
    return figure;
}

CurveFigure entropyFigure(const EntropyResult& result, int head, EntropyMeasure measure)
{
    const bool last = measure == EntropyMeasure::LastRow;
    CurveFigure figure =
        curveFigure(FigureText::tr("Attention entropy vs length (%1, %2, q·k %3)")
                        .arg(headText(head))
                        .arg(last ? FigureText::tr("last query") : FigureText::tr("mean over queries"))
                        .arg(result.request.qk == QkSource::Zero     ? QStringLiteral("= 0")
                             : result.request.qk == QkSource::Random ? FigureText::tr("random")
                                                                     : FigureText::tr("from the model")),
                    FigureText::tr("sequence length n"), FigureText::tr("entropy (nats)"), true, 2);
    figure.yFloor = 0.0; // an entropy is never negative
    for (const EntropySeries& s : result.series) {
        Curve curve;
        curve.name = QString::fromStdString(schemeLabel(s.spec)); // "rope+yarn" when a method is applied
        if (s.spec.logn)
            curve.name += QStringLiteral(" + logn");
        const int h = std::min(head, s.spec.heads - 1);
        for (const EntropyPoint& p : s.points) {
            if (p.head != h)
                continue;
            curve.x.push_back(p.length);
            curve.y.push_back(last ? p.entropyLast : p.entropyMean);
        }
        figure.curves.push_back(std::move(curve));
    }
    // The entropy of uniform attention over n keys: the ceiling every curve is measured against.
    Curve reference;
    reference.name = FigureText::tr("log n (uniform)");
    reference.reference = true;
    for (int n : result.request.lengths) {
        reference.x.push_back(n);
        reference.y.push_back(std::log(static_cast<double>(n)));
    }
    if (!reference.x.empty())
        figure.curves.push_back(std::move(reference));
    return figure;
}

CurveFigure frequenciesFigure(const SchemeSpec& spec, int length)
{
    const RotaryScaling scaling = rotaryScaling(spec, length);
    const RotaryMethodInfo& method = rotaryMethodInfo(spec.scaling);
    CurveFigure figure;
    figure.title = FigureText::tr("Rotary frequencies: %1 + %2 (d = %3, base = %4, L = %5)")
                       .arg(schemeTitle(spec.info()), rotaryMethodTitle(method))
                       .arg(scaling.dim)
                       .arg(scaling.base, 0, 'g', 6)
                       .arg(scaling.context);
    figure.xLabel = FigureText::tr("pair index i");
    figure.yLabel = FigureText::tr("frequency θ (radians per position)");
    figure.logY = true;
    Curve theta, scaled, ratio, line;
    theta.name = FigureText::tr("θ_i = base^(−2i/d)");
    scaled.name = FigureText::tr("θ'_i (%1)").arg(QString::fromStdString(method.name));
    ratio.name = FigureText::tr("θ'_i / θ_i (1: kept, 1/s: interpolated)");
    line.name = FigureText::tr("θ = 2π/L: wavelength = training context");
    line.reference = true;
    const double edge = 2 * M_PI / scaling.context;
    for (size_t i = 0; i < scaling.theta.size(); ++i) {
        if (scaling.theta[i] == 0)
            continue; // a pair keep or rotary-fraction leaves unrotated: θ = 0 has no place on the log axis
        theta.x.push_back(double(i));
        theta.y.push_back(scaling.theta[i]);
        scaled.x.push_back(double(i));
        scaled.y.push_back(scaling.thetaScaled[i]);
        ratio.x.push_back(double(i));
        ratio.y.push_back(scaling.thetaScaled[i] / scaling.theta[i]);
    }
    line.x = {0.0, double(scaling.theta.size() - 1)};
    line.y = {edge, edge};
    figure.curves = {std::move(theta), std::move(scaled), std::move(ratio), std::move(line)};
    if (scaling.keptPairs < static_cast<int>(scaling.theta.size()) || scaling.rotatedDims != scaling.dim) {
        // p-RoPE and partial rotary: the whole head's ladder beside the pairs that still turn.
        figure.curves[0].name =
            FigureText::tr("θ_i = base^(−2i/r), r = %1: %2 pairs turn").arg(scaling.rotatedDims).arg(scaling.keptPairs);
        // In a colour of its own and drawn first, under the pairs that turn: as a dashed grey line it looked like the
        // θ = 2π/L line and covered the pairs that turn.
        Curve whole;
        whole.name = FigureText::tr("whole head: base^(−2i/d), every pair");
        const std::vector<double> ladder = rotaryFrequencies(scaling.dim, scaling.base);
        for (size_t i = 0; i < ladder.size(); ++i) {
            whole.x.push_back(double(i));
            whole.y.push_back(ladder[i]);
        }
        if (spec.scaling == RotaryMethod::None) // θ'_i = θ_i and their ratio 1: they only hid the pairs that turn
            figure.curves.erase(figure.curves.begin() + 1, figure.curves.begin() + 3);
        figure.curves.insert(figure.curves.begin(), std::move(whole));
        figure.title += FigureText::tr(" · pairs %1 to %2 not rotated (θ = 0)")
                            .arg(scaling.keptPairs)
                            .arg(scaling.theta.size() - 1);
    }
    if (scaling.remapsPositions())
        figure.title += FigureText::tr(" · positions past w = %1 remapped, frequencies unchanged").arg(scaling.window);
    if (scaling.logitScale != 1.0)
        figure.title += FigureText::tr(" · logits × %1").arg(scaling.logitScale, 0, 'g', 4);
    return figure;
}

CurveFigure fireCurvesFigure(const FireCurves& curves, int head, const QString& modelName)
{
    CurveFigure figure;
    figure.title = modelName.isEmpty()
                       ? FigureText::tr("FIRE, untrained: bias against distance at row m = %1, head h = %2 of 0..%3 "
                                        "(T = %4)")
                             .arg(curves.row)
                             .arg(head)
                             .arg(curves.prior.size() - 1)
                             .arg(curves.priorThreshold, 0, 'g', 6)
                       : FigureText::tr("FIRE learned vs untrained: row m = %1, head h = %2 of 0..%3 · %4 (T = %5, "
                                        "untrained %6)")
                             .arg(curves.row)
                             .arg(head)
                             .arg(curves.prior.size() - 1)
                             .arg(modelName)
                             .arg(curves.learnedThreshold, 0, 'g', 6)
                             .arg(curves.priorThreshold, 0, 'g', 6);
    figure.xLabel = FigureText::tr("distance m − n");
    figure.yLabel = FigureText::tr("bias b_h(m, n)");
    if (head < 0 || head >= static_cast<int>(curves.prior.size()))
        return figure;
    Curve learned, prior;
    learned.name = FigureText::tr("learned"); // the title names the model
    prior.name = FigureText::tr("untrained initialisation");
    prior.reference = !modelName.isEmpty(); // dashed beside the learned curve; the only line without one
    for (size_t i = 0; i < curves.distance.size(); ++i) {
        learned.x.push_back(curves.distance[i]);
        learned.y.push_back(curves.learned[head][i]);
        prior.x.push_back(curves.distance[i]);
        prior.y.push_back(curves.prior[head][i]);
    }
    if (!modelName.isEmpty())
        figure.curves.push_back(std::move(learned));
    figure.curves.push_back(std::move(prior));
    return figure;
}

std::vector<SchemeSpec> compareSpecs(const QStringList& names, const PanelState& panel, int headDim,
                                     const std::string& headDimName)
{
    std::vector<SchemeSpec> specs;
    for (const QString& name : names) {
        if (name.toStdString() == schemeLabel(panel.spec)) {
            specs.push_back(panel.spec);
            continue;
        }
        // "rope+yarn": a rotary scheme under a length-extension method, both with their defaults.
        const auto [scheme, method] = splitSchemeLabel(name.toStdString());
        const SchemeInfo& info = schemeByName(scheme);
        const bool causalOnly = !info.bidirectionalAllowed || rotaryMethodByName(method).remapsPositions;
        const bool bidirectional = panel.spec.bidirectional && !causalOnly;
        specs.push_back(headDim > 0 ? makeSchemeSpecForHeadDim(info.name, panel.spec.heads, bidirectional, {}, headDim,
                                                               headDimName, panel.spec.context, panel.spec.logn, method)
                                    : makeSchemeSpec(info.name, panel.spec.heads, bidirectional, {}, panel.spec.context,
                                                     panel.spec.logn, method));
    }
    return specs;
}

EntropyRequest entropyRequestFor(const QStringList& names, const PanelState& panel, QkSource qk, uint64_t seed,
                                 int maxLength)
{
    EntropyRequest r;
    r.specs = compareSpecs(names, panel);
    r.qk = qk;
    r.seed = seed;
    r.lengths = defaultEntropyLengths(maxLength);
    return r;
}

} // namespace plab::ui
