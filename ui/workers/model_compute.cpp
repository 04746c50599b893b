// Worker side of the model views: attention probabilities and row entropies of a trained model, and training runs
// streamed as snapshots. Every number comes from core (Model, attentionForward, trainSweepCell, evaluateModel and
// evaluateUnderMethods, modelEntropyCurve).
#include "workers/model_compute.h"

#include "runs/training.h"

#include "attention/attention.h"
#include "model/corpus.h"
#include "base/errors.h"
#include "runs/eval_check.h"
#include "schemes/rotary_scaling.h"

#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>
#include <QStringList>

#include <algorithm>
#include <cmath>

namespace plab::ui {

SharedModel makeSharedModel(QString name, std::unique_ptr<Model> model, std::vector<uint8_t> sampleText,
                            CheckpointInfo info)
{
    SharedModel s;
    s.name = std::move(name);
    s.model = std::shared_ptr<Model>(std::move(model));
    s.mutex = std::make_shared<std::mutex>();
    s.sampleText = std::move(sampleText);
    s.info = std::move(info);
    return s;
}

namespace {

// The translation context of the model workers' own messages (core's stay English).
struct ModelText {
    Q_DECLARE_TR_FUNCTIONS(ModelText)
};

} // namespace

void requireModel(const SharedModel& model, ModelNeed need)
{
    if (model.isValid())
        return;
    QString text;
    switch (need) {
    case ModelNeed::Save:
        text = ModelText::tr("no model to save: train one in the Train tab or load a checkpoint");
        break;
    case ModelNeed::Keep:
        text = ModelText::tr("no model to keep: train one in the Train tab or load a checkpoint");
        break;
    case ModelNeed::Compute:
        text = ModelText::tr("no model: train one in the Train tab or load a checkpoint");
        break;
    }
    throw InputError(text.toStdString());
}

SharedModel loadSharedModel(const QString& path)
{
    LoadedCheckpoint loaded = loadCheckpoint(path.toStdString());
    // Held-out text for the model's q/k: the end of the default corpus when present, else a fixed paragraph.
    std::vector<uint8_t> sample;
    try {
        const std::string text = defaultCorpusText();
        const size_t n = std::min<size_t>(text.size(), 65536);
        sample.assign(text.end() - n, text.end());
    } catch (const InputError&) {
        const std::string text = "The quick brown fox jumps over the lazy dog. A journey of a thousand miles begins "
                                 "with a single step. To be, or not to be, that is the question. ";
        sample.assign(text.begin(), text.end());
    }
    SharedModel shared = makeSharedModel({}, std::move(loaded.model), std::move(sample), std::move(loaded.info));
    shared.file = QFileInfo(path).absoluteFilePath();
    shared.name = checkpointModelName(shared);
    return shared;
}

QString checkpointModelName(const SharedModel& model)
{
    requireModel(model);
    return FigureText::tr("%1 (%2, step %3)")
        .arg(QFileInfo(model.file).fileName(), QString::fromStdString(schemeLabel(model.model->schemeSpec())))
        .arg(model.info.step);
}

void saveSharedModel(const SharedModel& model, const QString& path)
{
    requireModel(model, ModelNeed::Save);
    checkCheckpointFileName(path.toStdString(), "checkpoint");
    // Never wait here: the caller is the GUI thread, and an entropy curve holds the lock for all of its lengths.
    std::unique_lock<std::mutex> lock(*model.mutex, std::try_to_lock);
    if (!lock.owns_lock())
        throw InputError("the model is busy with a computation (attention or an entropy curve); save again when it "
                         "finishes");
    saveCheckpoint(*model.model, model.info, QFile::encodeName(path).toStdString());
}

// ---- Attention ----------------------------------------------------------------------------------------------

AttentionResult computeAttention(const AttentionRequest& request, const JobControl& control)
{
    AttentionResult result;
    result.request = request;
    runGuarded(result, [&] {
        requireModel(request.model);
        if (request.tokens.empty())
            throw InputError("the text is empty");
        const int n = static_cast<int>(request.tokens.size());
        if (n > 2048)
            throw InputError("text of " + std::to_string(n) + " bytes is too long for this view; allowed: up to 2048");
        std::lock_guard<std::mutex> lock(*request.model.mutex);
        Model& model = *request.model.model;
        const ModelConfig& config = model.config();
        if (request.layer < 0 || request.layer >= config.layers)
            throw InputError("layer = " + std::to_string(request.layer + 1) + " is out of range; allowed: 1.." +
                             std::to_string(config.layers));
        if (n > model.maxLength())
            throw InputError("this model's learned positions stop at " + std::to_string(model.maxLength()) +
                             " bytes; the text has " + std::to_string(n) + " (unsupported, not clamped)");
        model.forward(request.tokens.data(), nullptr, 1, n);
        control.report(1, 3);
        const auto& q = model.layerQueries(request.layer); // (1, H, N, D), before rotation
        const auto& k = model.layerKeys(request.layer);
        result.spec = model.layerSchemeSpec(request.layer); // NoPE on the schedule's NoPE layers
        const PositionBias bias(result.spec, n);
        AttentionDims dims;
        dims.batch = 1;
        dims.heads = config.heads;
        dims.length = n;
        dims.headDim = config.headDim();
        if (!model.layerLogForget(request.layer).empty()) // fox: this text's forget gates, as the forward used them
            dims.logForget = model.layerLogForget(request.layer).data();
        AttentionOptions options;
        options.wantProbabilities = true;
        options.wantRowEntropy = true;
        // v only shapes the output, which this view does not show: pass k.
        const AttentionForward forward = attentionForward(bias, dims, q.data(), k.data(), k.data(), options);
        control.report(2, 3);
        result.heads = config.heads;
        result.length = n;
        for (int h = 0; h < config.heads; ++h) {
            auto mat = std::make_shared<Matrix>();
            mat->rows = mat->cols = n;
            mat->values.assign(forward.probabilities.begin() + static_cast<size_t>(h) * n * n,
                               forward.probabilities.begin() + static_cast<size_t>(h + 1) * n * n);
            // Keys a query cannot see are drawn as masked, not as probability 0.
            for (int m = 0; m < n; ++m) {
                const KeyRange keys = bias.keyRange(m, n);
                for (int j = 0; j < n; ++j)
                    if (j < keys.begin || j >= keys.end)
                        mat->values[static_cast<size_t>(m) * n + j] = PositionBias::kMasked;
            }
            result.probabilities.push_back(std::move(mat));
            result.rowEntropy.emplace_back(forward.rowEntropy.begin() + static_cast<size_t>(h) * n,
                                           forward.rowEntropy.begin() + static_cast<size_t>(h + 1) * n);
            // The bias and positions of the same forward (q and k of this text are still the model's).
            const TextPositions view = positionsOfLastForward(model, n, request.layer, h);
            auto toMatrix = [n](const Eigen::MatrixXf& values) {
                auto matrix = std::make_shared<Matrix>();
                matrix->rows = matrix->cols = n;
                matrix->values.resize(static_cast<size_t>(n) * n);
                for (int m = 0; m < n; ++m)
                    for (int j = 0; j < n; ++j)
                        matrix->values[static_cast<size_t>(m) * n + j] = values(m, j);
                return matrix;
            };
            result.biases.push_back(toMatrix(view.bias));
            if (view.positions.size() > 0)
                result.positions.push_back(toMatrix(view.positions));
        }
        control.report(3, 3);
    });
    return result;
}

QString byteLabel(uint8_t byte)
{
    if (byte == ' ')
        return QStringLiteral("␣");
    if (byte == '\n')
        return QStringLiteral("↵");
    if (byte == '\t')
        return QStringLiteral("⇥");
    if (byte > 32 && byte < 127)
        return QString(QChar(byte));
    return QStringLiteral("%1").arg(byte, 2, 16, QLatin1Char('0'));
}

namespace {

// "layer 2 (sliding: window 16)", "layer 3 (full, NoPE: no positions)": a hybrid model's layer with its type.
QString layerTypeText(const ModelConfig& config, int layerIndex, const SchemeSpec& spec, const QString& layer)
{
    switch (modelLayerType(config, layerIndex)) {
    case LayerType::Sliding:
        return FigureText::tr("%1 (sliding: window %2)").arg(layer).arg(modelLayerWindow(config));
    case LayerType::Chunked:
        return FigureText::tr("%1 (chunked: chunk %2)").arg(layer).arg(modelLayerChunk(config));
    case LayerType::Full:
        break;
    }
    if (spec.kind == SchemeKind::None && config.scheme != "none")
        return FigureText::tr("%1 (full, NoPE: no positions)").arg(layer);
    return FigureText::tr("%1 (full: %2)").arg(layer, QString::fromStdString(spec.name()));
}

} // namespace

HeatmapFigure attentionFigure(const AttentionResult& result, int head, const QString& colorMap, TextView show)
{
    HeatmapFigure figure;
    const int h = std::clamp(head, 0, std::max(0, result.heads - 1));
    figure.title = FigureText::tr("Attention on text: %1").arg(result.request.model.name);
    figure.colorMap = colorMap;
    figure.xLabel = FigureText::tr("key (byte n)");
    figure.yLabel = FigureText::tr("query (byte m)");
    for (uint8_t b : result.request.tokens)
        figure.tickLabels.push_back(byteLabel(b));
    HeatmapPanel panel;
    QString layer = layerText(result.request.layer);
    // A NoPE layer of a per-layer schedule (--nope-every) reads no positions: say so, or its diffuse map looks wrong.
    if (result.request.model.isValid() && result.request.model.model->config().nopeEvery > 0 &&
        !modelLayerUsesScheme(result.request.model.model->config(), result.request.layer))
        layer = FigureText::tr("%1 (NoPE layer: no positions)").arg(layer);
    // A hybrid model's layer names its type, so the band of a sliding or chunked layer is read as its mask.
    if (result.request.model.isValid() && !result.request.model.model->config().layerTypes.empty())
        layer = layerTypeText(result.request.model.model->config(), result.request.layer, result.spec, layer);
    panel.subtitle =
        QStringList{layer, headOfText(h, result.heads), FigureText::tr("N = %1 bytes").arg(result.length),
                    FigureText::tr("training context %1")
                        .arg(result.request.model.isValid() ? result.request.model.model->config().context : 0)}
            .join(QStringLiteral(" · "));
    const std::vector<MatrixPtr>& shown = show == TextView::Bias        ? result.biases
                                          : show == TextView::Positions ? result.positions
                                                                        : result.probabilities;
    panel.valueLabel = show == TextView::Bias        ? FigureText::tr("positional bias added to the logit")
                       : show == TextView::Positions ? FigureText::tr("contextual position p(m, n)")
                                                     : FigureText::tr("attention probability");
    if (show == TextView::Bias)
        figure.title = FigureText::tr("Positional bias on text: %1").arg(result.request.model.name);
    else if (show == TextView::Positions)
        figure.title = FigureText::tr("Contextual positions on text: %1").arg(result.request.model.name);
    if (h < static_cast<int>(shown.size()))
        panel.matrix = shown[h];
    figure.panels.push_back(std::move(panel));
    return figure;
}

CurveFigure rowEntropyFigure(const AttentionResult& result, int head)
{
    CurveFigure figure;
    const int h = std::clamp(head, 0, std::max(0, result.heads - 1));
    figure.title = FigureText::tr("Entropy of each query's attention (%1)").arg(headText(h));
    figure.xLabel = FigureText::tr("query position m");
    figure.yLabel = FigureText::tr("nats");
    figure.yFloor = 0.0; // an entropy is never negative
    Curve curve;
    curve.name = FigureText::tr("row entropy");
    if (h < static_cast<int>(result.rowEntropy.size()))
        for (size_t m = 0; m < result.rowEntropy[h].size(); ++m) {
            curve.x.push_back(static_cast<double>(m));
            curve.y.push_back(result.rowEntropy[h][m]);
        }
    figure.curves.push_back(std::move(curve));
    // Uniform attention over the m + 1 visible keys of a causal query: the ceiling.
    Curve reference;
    reference.name = FigureText::tr("log(m + 1) (uniform)");
    reference.reference = true;
    for (int m = 0; m < result.length; ++m) {
        reference.x.push_back(m);
        reference.y.push_back(std::log(m + 1.0));
    }
    figure.curves.push_back(std::move(reference));
    if (result.request.model.isValid()) {
        // Where the training context ends.
        Curve edge;
        const int L = result.request.model.model->config().context;
        if (L < result.length) {
            edge.name = FigureText::tr("training context L = %1").arg(L);
            edge.reference = true;
            double top = 0;
            for (double y : figure.curves.back().y)
                top = std::max(top, y);
            edge.x = {double(L), double(L)};
            edge.y = {0.0, top};
            figure.curves.push_back(std::move(edge));
        }
    }
    return figure;
}

EntropyResult computeModelEntropy(const SharedModel& model, const std::vector<int>& lengths, int layer,
                                  const JobControl& control)
{
    EntropyResult result;
    result.request.qk = QkSource::Model;
    runGuarded(result, [&] {
        requireModel(model);
        std::lock_guard<std::mutex> lock(*model.mutex);
        Model& m = *model.model;
        result.request.lengths.clear(); // EntropyRequest starts with the default lengths
        for (int n : lengths)
            if (n <= m.maxLength())
                result.request.lengths.push_back(n);
        if (result.request.lengths.empty())
            throw InputError("every length is past this model's learned positions (" + std::to_string(m.maxLength()) +
                             ")");
        EntropySeries series;
        const int total = static_cast<int>(result.request.lengths.size());
        ModelEntropyCurve curve =
            modelEntropyCurve(m, model.sampleText, layer, result.request.lengths, [&](int lengthsDone) {
                control.report(lengthsDone, total);
                return !control.isCanceled();
            });
        series.spec = std::move(curve.spec);
        series.points = std::move(curve.points);
        if (control.isCanceled()) {
            result.canceled = true;
            return;
        }
        result.request.specs = {series.spec};
        result.series.push_back(std::move(series));
    });
    return result;
}

// ---- Evaluate under methods ---------------------------------------------------------------------------------

std::vector<int> methodsLengths(const MethodsRequest& request)
{
    if (!request.lengths.empty() || !request.model.isValid())
        return request.lengths;
    return extrapolationLengths(request.model.model->config().context);
}

MethodsResult computeMethods(const MethodsRequest& request, const JobControl& control)
{
    MethodsResult result;
    result.request = request;
    runGuardedCancelable(result, [&control] { return control.isCanceled(); }, [&] {
        requireModel(request.model);
        result.request.lengths = methodsLengths(request);
        const Corpus corpus =
            request.corpusPath.isEmpty() ? loadDefaultCorpus() : loadCorpusFile(request.corpusPath.toStdString());
        result.corpusSource = QString::fromStdString(corpus.source);
        EvalOptions options;
        options.lengths = result.request.lengths;
        options.mode = request.mode;
        options.maxTokens = request.evalBytes;
        options.progress = [&control](double fraction) {
            control.report(static_cast<int>(fraction * 1000), 1000);
            return !control.isCanceled();
        };
        std::lock_guard<std::mutex> lock(*request.model.mutex);
        Model& model = *request.model.model;
        checkEvalLengthsFit(options.lengths, model.maxLength(), corpus.validation.size(), options.maxTokens,
                            "the validation split of " + corpus.source);
        result.scheme = model.config().scheme;
        result.context = model.config().context;
        result.config = model.config().toJson();
        result.curves = evaluateUnderMethods(model, corpus.validation, options, request.methods);
    });
    return result;
}

// ---- Training -----------------------------------------------------------------------------------------------

const std::vector<std::string>& demoSchemes()
{
    static const std::vector<std::string> schemes{"sinusoidal", "rope", "alibi", "local"};
    return schemes;
}

TrainRequest presetTrainRequest(std::string_view preset, const std::vector<std::string>& schemes)
{
    const Preset& p = presetByName(preset); // InputError naming the allowed presets
    TrainRequest r;
    r.schemes = schemes;
    r.preset = QString::fromStdString(p.name);
    applyPreset(p.name, r.model, r.train);
    r.evalBytes = p.evalBytes;
    r.reportEvery = reportInterval(r.train.steps);
    return r;
}

ModelConfig schemeModelConfig(const TrainRequest& request, size_t s)
{
    ModelConfig config = request.model;
    const auto [scheme, method] = splitSchemeLabel(request.schemes.at(s));
    config.scheme = scheme;
    if (method != "none")
        config.scaling = method;
    // One list of settings for every scheme of the run: each takes those of its parameters and its method's.
    config.schemeSettings = settingsTakenBy(config.scheme, config.scaling, request.model.schemeSettings);
    return config;
}

SweepGrid trainGrid(const TrainRequest& request, size_t s)
{
    SweepGrid grid;
    grid.model = schemeModelConfig(request, s);
    grid.schemes = {grid.model.scheme};
    const int seeds = std::clamp(request.seeds, 1, kMaxTrainSeeds);
    for (int k = 0; k < seeds; ++k)
        grid.seeds.push_back(request.model.seed + static_cast<uint64_t>(k));
    grid.preset = request.preset.toStdString();
    grid.train = request.train;
    grid.corpus = request.corpusPath.toStdString();
    grid.evalLengths = evaluationLengths(request); // L, 2L, ... instead of core's default lengths
    grid.evalMode = request.mode;
    grid.evalBytes = request.evalBytes;
    return grid;
}

TrainRequest demoTrainRequest(const std::vector<std::string>& schemes)
{
    return presetTrainRequest(kDemoPreset, schemes);
}

int reportInterval(int steps)
{
    return std::max(1, steps / 100);
}

std::vector<int> evaluationLengths(const TrainRequest& request)
{
    return extrapolationLengths(request.model.context, request.evalMultipliers);
}

QString evaluationLengthsText(const std::vector<int>& multipliers)
{
    QStringList names;
    for (int k : multipliers)
        names << (k == 1 ? QStringLiteral("L") : QStringLiteral("%1L").arg(k));
    return names.join(QStringLiteral(", "));
}

namespace {

// The translation context of the training worker's messages.
struct TrainingText {
    Q_DECLARE_TR_FUNCTIONS(TrainingText)
};

// The Train tab's message when a length it evaluates at needs more held-out text than is scored: core's
// evalLengthsPastText, the rule evaluateModel refuses with, checked before any training. Empty when every fits.
QString heldOutTextProblem(const TrainRequest& request, const Corpus& corpus)
{
    std::vector<int> past;
    for (size_t s = 0; s < request.schemes.size(); ++s) {
        const ModelConfig config = schemeModelConfig(request, s);
        for (int length : evalLengthsPastText(evaluationLengths(request), modelMaxLength(config),
                                              corpus.validation.size(), request.evalBytes))
            if (std::find(past.begin(), past.end(), length) == past.end())
                past.push_back(length);
    }
    if (past.empty())
        return {};
    std::sort(past.begin(), past.end());
    QStringList lengths;
    for (int length : past)
        lengths << QString::number(length);
    return TrainingText::tr("Evaluation at length %1 needs more held-out text: %2 of the %3 held-out bytes of %4 are "
                            "scored, so a longer window cannot be filled. Lower the context L, raise Eval bytes, or "
                            "use a longer corpus.")
        .arg(lengths.join(QStringLiteral(", ")))
        .arg(evalScoredBytes(corpus.validation.size(), request.evalBytes))
        .arg(corpus.validation.size())
        .arg(QString::fromStdString(corpus.source));
}

// The name a model trained by the Train tab is offered under, e.g. "alibi (demo, trained here, 200 steps)"; `label`
// is the request's scheme word.
QString trainedModelName(const TrainRequest& request, const std::string& label, const ModelConfig& config, int seeds)
{
    // "rope+yarn" when trained under a method; the model's options after it, so two kept runs are told apart.
    const std::string options = modelOptionsLabel(config);
    const QString scheme = QString::fromStdString(options.empty() ? label : label + " " + options);
    return seeds == 1
               ? FigureText::tr("%1 (%2, trained here, %3 steps)").arg(scheme, request.preset).arg(request.train.steps)
               : FigureText::tr("%1 (%2, trained here, %3 steps, seed %4)")
                     .arg(scheme, request.preset)
                     .arg(request.train.steps)
                     .arg(config.seed);
}

} // namespace

void runTraining(const TrainRequest& request, QPromise<TrainSnapshot>& promise)
{
    promise.start();
    TrainSnapshot failure;
    runGuardedCancelable(failure, [&promise] { return promise.isCanceled(); }, [&] {
        const Corpus corpus =
            request.corpusPath.isEmpty() ? loadDefaultCorpus() : loadCorpusFile(request.corpusPath.toStdString());
        if (const QString problem = heldOutTextProblem(request, corpus); !problem.isEmpty()) {
            TrainSnapshot bad;
            bad.error = problem;
            bad.badInput = true;
            promise.addResult(bad);
            return;
        }
        const int schemes = static_cast<int>(request.schemes.size());
        const int seeds = std::clamp(request.seeds, 1, kMaxTrainSeeds);
        const int stepsTotal = request.train.steps;
        // Progress units: every step, plus one per evaluation length.
        const int evalUnits = static_cast<int>(request.evalMultipliers.size());
        promise.setProgressRange(0, seeds * schemes * (stepsTotal + evalUnits));
        std::vector<SweepGrid> grids;
        for (int s = 0; s < schemes; ++s)
            grids.push_back(trainGrid(request, static_cast<size_t>(s)));
        for (int run = 0; run < seeds * schemes; ++run) {
            const int s = run % schemes, seed = run / schemes;
            TrainingHooks hooks;
            hooks.reportEvery = std::max(1, request.reportEvery);
            hooks.shouldStop = [&promise] { return promise.isCanceled(); };
            hooks.progress = [&](const TrainingProgress& p) {
                promise.setProgressValue(run * (stepsTotal + evalUnits) + p.step);
                TrainSnapshot snap;
                snap.schemeIndex = s;
                snap.seed = seed;
                snap.step = p.step;
                snap.loss = p.loss;
                snap.corpusSource = QString::fromStdString(corpus.source);
                promise.addResult(snap);
            };
            const int base = run * (stepsTotal + evalUnits) + stepsTotal;
            auto evalProgress = [&promise, base, evalUnits](double fraction) {
                promise.setProgressValue(base + static_cast<int>(fraction * evalUnits));
                return !promise.isCanceled();
            };
            // The sweep's cell: one seed rule and one train-and-evaluate for the Train tab and `sweep`.
            std::optional<SweepCellRun> cell =
                trainSweepCell(grids[s], static_cast<size_t>(seed), corpus, hooks, evalProgress);
            if (!cell)
                return;
            CheckpointInfo info = cell->info;
            info.training["preset"] = request.preset.toStdString();
            TrainSnapshot done;
            done.schemeIndex = s;
            done.seed = seed;
            done.step = stepsTotal;
            done.trained = true;
            done.eval = std::move(cell->points);
            done.result = std::move(cell->result);
            const size_t sampleBytes = std::min<size_t>(corpus.validation.size(), 65536);
            // Named before the model moves into the call: arguments are evaluated in no fixed order.
            const QString name = trainedModelName(request, request.schemes[s], cell->model->config(), seeds);
            done.model = makeSharedModel(
                name, std::move(cell->model),
                std::vector<uint8_t>(corpus.validation.begin(), corpus.validation.begin() + sampleBytes), info);
            done.corpusSource = QString::fromStdString(corpus.source);
            promise.addResult(done);
        }
        return;
    });
    // A run that ends well (or stops early) leaves `failure` empty; a canceled run's is not shown.
    if (!failure.error.isEmpty() && !promise.isCanceled())
        promise.addResult(failure);
}

CurveFigure trainingLossFigure(const std::vector<std::string>& schemes, const std::vector<Curve>& losses, int context)
{
    CurveFigure figure;
    figure.title = FigureText::tr("Training loss (context L = %1)").arg(context);
    figure.xLabel = FigureText::tr("step");
    figure.yLabel = FigureText::tr("loss (nats per byte)");
    for (size_t i = 0; i < schemes.size() && i < losses.size(); ++i) {
        Curve c = losses[i];
        c.name = QString::fromStdString(schemes[i]);
        figure.curves.push_back(std::move(c));
    }
    return figure;
}

CurveFigure perplexityFigure(const std::vector<std::string>& schemes, const std::vector<std::vector<EvalPoint>>& evals,
                             int context)
{
    CurveFigure figure;
    figure.title = FigureText::tr("Perplexity vs length (L = %1)").arg(context);
    figure.xLabel = FigureText::tr("evaluation length (bytes)");
    figure.yLabel = FigureText::tr("perplexity (per byte)");
    figure.logX = true;
    figure.logBase = 2;
    for (size_t i = 0; i < schemes.size() && i < evals.size(); ++i) {
        Curve c;
        c.name = QString::fromStdString(schemes[i]);
        for (const EvalPoint& p : evals[i])
            if (p.supported) { // learned positions past the context have no value to plot
                c.x.push_back(p.length);
                c.y.push_back(p.perplexity);
            }
        figure.curves.push_back(std::move(c));
    }
    return figure;
}

CurveFigure methodsPerplexityFigure(const std::vector<MethodCurve>& curves, const std::string& scheme, int context)
{
    CurveFigure figure;
    figure.title =
        FigureText::tr("Perplexity vs length per method (%1, L = %2)").arg(QString::fromStdString(scheme)).arg(context);
    figure.xLabel = FigureText::tr("evaluation length (bytes)");
    figure.yLabel = FigureText::tr("perplexity (per byte)");
    figure.logX = true;
    figure.logBase = 2;
    for (const MethodCurve& m : curves) {
        Curve c;
        c.name = QString::fromStdString(m.label);
        for (const EvalPoint& p : m.points)
            if (p.supported) {
                c.x.push_back(p.length);
                c.y.push_back(p.perplexity);
            }
        figure.curves.push_back(std::move(c));
    }
    return figure;
}

CurveFigure sweepPerplexityFigure(const std::vector<SweepSummaryRow>& rows)
{
    CurveFigure figure;
    std::vector<int> contexts;
    for (const SweepSummaryRow& r : rows)
        if (std::find(contexts.begin(), contexts.end(), r.context) == contexts.end())
            contexts.push_back(r.context);
    QStringList contextText;
    for (int c : contexts)
        contextText << QString::number(c);
    // A model grid's rows (sweep --model): one model under methods, no seeds, lengths in its tokens.
    const bool modelRows = !rows.empty() && !rows.front().model.empty();
    if (modelRows) {
        figure.title = FigureText::tr("Perplexity vs length of %1 under each method (L = %2)")
                           .arg(QFileInfo(QString::fromStdString(rows.front().model)).fileName(),
                                contextText.join(QStringLiteral(", ")));
        figure.xLabel = FigureText::tr("evaluation length (tokens)");
        figure.yLabel = FigureText::tr("perplexity (per token)");
    } else {
        figure.title = FigureText::tr("Perplexity vs length, mean ± sd over seeds (L = %1)")
                           .arg(contextText.join(QStringLiteral(", ")));
        figure.xLabel = FigureText::tr("evaluation length (bytes)");
        figure.yLabel = FigureText::tr("perplexity (per byte)");
    }
    figure.logX = true;
    figure.logBase = 2;
    // Folders of different depth collected together name it (core's sweepModelName).
    const bool withDepth = std::any_of(rows.begin(), rows.end(),
                                       [&](const SweepSummaryRow& r) { return r.layers != rows.front().layers; });
    for (size_t i = 0; i < rows.size();) {
        const SweepSummaryRow& first = rows[i];
        Curve c;
        int seeds = 0;
        for (; i < rows.size() && rows[i].scheme == first.scheme && rows[i].variant == first.variant &&
               rows[i].context == first.context && rows[i].layers == first.layers &&
               rows[i].modelOptions == first.modelOptions;
             ++i) {
            const SampleStats& p = rows[i].perplexity;
            if (p.n == 0)
                continue; // no seed could evaluate this length (learned positions past the context)
            seeds = std::max(seeds, p.n);
            c.x.push_back(rows[i].length);
            c.y.push_back(p.mean);
            c.lower.push_back(p.mean - p.sd);
            c.upper.push_back(p.mean + p.sd);
        }
        QString name = QString::fromStdString(first.scheme);
        if (!first.variant.empty())
            name += QLatin1Char(' ') + QString::fromStdString(first.variant);
        if (const std::string model = sweepModelName(first.layers, first.modelOptions, withDepth); !model.empty())
            name += QLatin1Char(' ') + QString::fromStdString(model);
        if (contexts.size() > 1)
            name += QStringLiteral(" (L = %1)").arg(first.context);
        c.name = modelRows ? name : FigureText::tr("%1 (n = %2)").arg(name).arg(seeds);
        figure.curves.push_back(std::move(c));
    }
    return figure;
}

} // namespace plab::ui
