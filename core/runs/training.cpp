// The training loop shared by every entry point: steps, loss windows, progress, stop requests, periodic checkpoints.
#include "runs/training.h"

#include "base/limits.h"
#include "base/errors.h"
#include "base/random.h"
#include "schemes/rotary_scaling.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace plab {

namespace {
const std::vector<uint8_t> kNoTokens;
}

Trainer::Trainer(Model& model, TrainConfig config, const std::vector<uint8_t>& trainTokens, const AdamW* resume,
                 ConfigCheck check)
    : Trainer(model, std::move(config), trainTokens, resume, BatchSource{}, check)
{
}

Trainer::Trainer(Model& model, TrainConfig config, BatchSource batches, const AdamW* resume, ConfigCheck check)
    : Trainer(model, std::move(config), kNoTokens, resume, std::move(batches), check)
{
}

Trainer::Trainer(Model& model, TrainConfig config, const std::vector<uint8_t>& trainTokens, const AdamW* resume,
                 BatchSource batches, ConfigCheck check)
    : m_model(model), m_config(std::move(config)), m_tokens(trainTokens), m_batches(std::move(batches)),
      m_optimizer(model.parameterCount()), m_rngState(m_config.dataSeed)
{
    if (resume)
        m_optimizer = *resume;
    if (m_optimizer.firstMoment().size() != model.parameterCount())
        throw InputError("the optimizer state does not fit the model's " + std::to_string(model.parameterCount()) +
                         " parameters");
    if (check == ConfigCheck::Validate)
        validateTrainConfig(m_config);
    const size_t T = model.config().context;
    // Activations, their gradients (about as large again) and the optimiser state.
    checkMemoryEstimate(
        2.0 * model.activationBytes(m_config.batch, static_cast<int>(T)) + 16.0 * model.parameterCount(),
        "training a batch of " + std::to_string(m_config.batch) + " x " + std::to_string(T) + " tokens");
    if (check == ConfigCheck::Validate && !m_batches)
        checkTrainingText(trainTokens.size(), static_cast<int>(T), "the training text");
    m_inputs.resize(static_cast<size_t>(m_config.batch) * T);
    m_targets.resize(m_inputs.size());
    if (m_batches)
        m_weights.resize(m_inputs.size());
}

TrainStepResult Trainer::step()
{
    const int B = m_config.batch, T = m_model.config().context;
    if (m_batches) {
        m_batches(m_step, B, T, m_inputs.data(), m_targets.data(), m_weights.data());
    } else {
        // Window starts come from a generator seeded by (data seed, step), so a run is reproducible step by step.
        Rng rng(m_rngState * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(m_step));
        const uint64_t starts = m_tokens.size() - T; // valid starts: [0, size - T - 1]
        for (int b = 0; b < B; ++b) {
            const size_t s = rng.below(starts);
            std::copy(m_tokens.begin() + s, m_tokens.begin() + s + T, m_inputs.begin() + static_cast<size_t>(b) * T);
            std::copy(m_tokens.begin() + s + 1, m_tokens.begin() + s + T + 1,
                      m_targets.begin() + static_cast<size_t>(b) * T);
        }
    }
    TrainStepResult r;
    r.loss = m_model.forward(m_inputs.data(), m_targets.data(), B, T, m_batches ? m_weights.data() : nullptr);
    m_model.zeroGradients();
    m_model.backward();

    layers::FloatBuffer& g = m_model.gradients();
    double sumSquares = 0;
    const long n = static_cast<long>(g.size());
#pragma omp parallel for reduction(+ : sumSquares) schedule(static) if (n > 65536)
    for (long i = 0; i < n; ++i)
        sumSquares += static_cast<double>(g[i]) * g[i];
    r.gradNorm = std::sqrt(sumSquares);
    if (!std::isfinite(r.gradNorm) || !std::isfinite(r.loss))
        throw RunError("training diverged at step " + std::to_string(m_step + 1) + " (loss " + exactText(r.loss) +
                           "); try a lower learning rate",
                       "lr");
    if (m_config.gradClip > 0 && r.gradNorm > m_config.gradClip) {
        const float scale = static_cast<float>(m_config.gradClip / r.gradNorm);
        for (float& v : g)
            v *= scale;
    }
    r.learningRate = learningRateAt(m_config, m_step);
    m_optimizer.update(m_model, m_config, r.learningRate);
    clampSchemeParameters(m_model);
    r.step = ++m_step;
    return r;
}

void checkTrainingText(size_t bytes, int context, const std::string& source)
{
    if (bytes < static_cast<size_t>(context) + 1)
        throw InputError(source + " (" + std::to_string(bytes) + " bytes) is shorter than context + 1 = " +
                         std::to_string(context + 1) + "; allowed: a longer text or a smaller context");
}

void checkTrainingCorpus(const Corpus& corpus, int context)
{
    checkTrainingText(corpus.train.size(), context, "the training split of " + corpus.source);
}

void setTrainingSteps(TrainConfig& config, int steps)
{
    config.steps = steps;
    config.warmup = std::min(config.warmup, steps / 5);
}

void applyTaskPreset(std::string_view preset, TaskKind task, ModelConfig& model, TrainConfig& train)
{
    struct Row {
        const char* preset;
        TaskKind task;
        int trainLength; // the context is the one that holds it exactly
        int batch;
        int steps;
        double learningRate;
    };
    // Measured on 2 cores of an AMD EPYC (Zen 4) shared with other jobs: README, "Tasks".
    static const Row rows[] = {
        {"demo", TaskKind::Copy, 8, 16, 1200, 3e-3},      {"demo", TaskKind::Reverse, 8, 16, 1200, 3e-3},
        {"demo", TaskKind::Addition, 3, 16, 1200, 3e-3},  {"demo", TaskKind::Passkey, 12, 16, 1200, 3e-3},
        {"quick", TaskKind::Copy, 12, 16, 2400, 2e-3},    {"quick", TaskKind::Reverse, 12, 16, 2400, 2e-3},
        {"quick", TaskKind::Addition, 4, 16, 2400, 2e-3}, {"quick", TaskKind::Passkey, 24, 16, 2400, 2e-3},
    };
    for (const Row& r : rows)
        if (r.preset == preset && r.task == task) {
            model.context = taskExampleBytes(task, r.trainLength) - 1;
            train.batch = r.batch;
            setTrainingSteps(train, r.steps);
            train.learningRate = r.learningRate;
            train.minLearningRate = r.learningRate / 10;
            return;
        }
}

const std::vector<int>& extrapolationMultipliers()
{
    static const std::vector<int> multipliers = {1, 2, 4, 8, 16};
    return multipliers;
}

std::vector<int> extrapolationLengths(int context, const std::vector<int>& multipliers)
{
    std::vector<int> lengths;
    for (int k : multipliers)
        lengths.push_back(k * context);
    return lengths;
}

int keepOriginalContext(ModelConfig& model, const ModelConfig& init, const std::vector<std::string>& given)
{
    if (!rotaryMethodByName(model.scaling).usesContext)
        return 0;
    auto isOriginalContext = [](const std::string& s) { return s.substr(0, s.find('=')) == "original-context"; };
    // The run's own setting wins whatever its value: validated with the model as anywhere else (0: this run's
    // context), never replaced.
    if (std::any_of(given.begin(), given.end(), isOriginalContext))
        return 0;
    // A checkpoint's own original-context=0 (its resolved settings carry it, continued without a method named) means
    // the checkpoint's context: unset here, so it is replaced. Any other value the run carries is kept.
    auto unset = [&](const std::string& s) {
        return isOriginalContext(s) && parseNumber(s.substr(s.find('=') + 1), s) == 0;
    };
    if (std::any_of(model.scalingSettings.begin(), model.scalingSettings.end(),
                    [&](const std::string& s) { return isOriginalContext(s) && !unset(s); }))
        return 0;
    // The checkpoint's own original context when it was itself fine-tuned with one, else its training context.
    int original = init.context;
    for (const std::string& s : init.scalingSettings)
        if (isOriginalContext(s) && !unset(s))
            original = static_cast<int>(parseNumber(s.substr(s.find('=') + 1), s));
    // Only a shorter L is kept: original-context may not exceed the context (validateRotaryScaling), and a run at a
    // context no longer than the first one has no longer L to extend to.
    if (original >= model.context)
        return 0;
    std::erase_if(model.scalingSettings, unset);
    model.scalingSettings.push_back("original-context=" + std::to_string(original));
    return original;
}

void takeCheckpointModel(ModelConfig& model, const ModelConfig& checkpoint, bool keepSizes)
{
    model.scheme = checkpoint.scheme;
    if (!keepSizes) {
        model.context = checkpoint.context;
        model.layers = checkpoint.layers;
        model.dModel = checkpoint.dModel;
        model.heads = checkpoint.heads;
        model.dFf = checkpoint.dFf;
    }
    model.logn = checkpoint.logn;
    model.nopeEvery = checkpoint.nopeEvery;
    model.layerTypes = checkpoint.layerTypes;
    model.window = checkpoint.window;
    model.chunk = checkpoint.chunk;
    model.fullScheme = checkpoint.fullScheme;
    model.fullSettings = checkpoint.fullSettings;
    model.temperature = checkpoint.temperature;
    model.ssmax = checkpoint.ssmax;
    model.sinkLogit = checkpoint.sinkLogit;
    model.seed = checkpoint.seed;
}

int mergeCheckpointSettings(ModelConfig& model, const ModelConfig& checkpoint, const std::optional<std::string>& method,
                            const std::vector<std::string>& settings)
{
    // Dropping positions (DroPE) leaves nothing of rope: neither its parameters nor its length-extension method.
    const bool dropping = droppingPositions(model, checkpoint);
    model.schemeSettings = dropping ? std::vector<std::string>{} : checkpoint.schemeSettings;
    model.scaling = dropping ? "none" : checkpoint.scaling;
    model.scalingSettings = dropping ? std::vector<std::string>{} : checkpoint.scalingSettings;
    if (method) {
        model.scaling = *method;
        model.scalingSettings.clear();
    }
    const SchemeInfo& info = schemeByName(model.scheme);
    for (const std::string& setting : settings) {
        const std::string name = setting.substr(0, setting.find('='));
        const bool ofScheme =
            std::any_of(info.params.begin(), info.params.end(), [&](const ParamInfo& p) { return p.name == name; });
        std::vector<std::string>& target = ofScheme ? model.schemeSettings : model.scalingSettings;
        std::erase_if(target, [&](const std::string& s) { return s.substr(0, s.find('=')) == name; });
        target.push_back(setting);
    }
    return keepOriginalContext(model, checkpoint, settings);
}

namespace {

std::string shapeText(const std::vector<int64_t>& shape)
{
    std::string text;
    for (int64_t d : shape)
        text += (text.empty() ? "" : ", ") + std::to_string(d);
    return "(" + text + (shape.size() == 1 ? ",)" : ")");
}

// What continuing from a checkpoint allows, as every refusal of checkInitCompatible ends.
std::string initAllowedText(const ModelConfig& was)
{
    return "; allowed: the checkpoint's scheme and shapes (scheme " + was.scheme + ", layers " +
           std::to_string(was.layers) + ", d-model " + std::to_string(was.dModel) + ", heads " +
           std::to_string(was.heads) + ", d-ff " + std::to_string(was.dFf) +
           "); the context, the scheme's parameters, the length-extension method and its parameters, and the "
           "schedule may change" +
           (was.scheme == "rope" ? "; a rope checkpoint may also continue as scheme none (DroPE)" : "");
}

} // namespace

bool droppingPositions(const ModelConfig& model, const ModelConfig& checkpoint)
{
    return model.scheme == "none" && checkpoint.scheme == "rope";
}

int recalibrationSteps(double fraction, int steps)
{
    return std::max(1, static_cast<int>(std::lround(fraction * steps)));
}

std::string logitCSetting(double c)
{
    std::ostringstream text;
    text.precision(17);
    text << "logit-c=" << c;
    return text.str();
}

Recalibration droppedPositionsRun(TrainingResult&& rope, const TrainConfig& train, double fraction)
{
    Recalibration r;
    // Nothing of rope is left: neither its parameters nor a length-extension method nor a NoPE-layer schedule.
    r.model = rope.model->config();
    r.model.scheme = "none";
    r.model.schemeSettings.clear();
    r.model.scaling = "none";
    r.model.scalingSettings.clear();
    r.model.nopeEvery = 0;
    r.model.fullScheme.clear(); // the layer types' masks stay: they are not positions
    r.model.fullSettings.clear();
    r.train = train;
    setTrainingSteps(r.train, recalibrationSteps(fraction, train.steps));
    r.train.dataSeed = train.dataSeed + 0x9e3779b9u; // batches the rope run has not seen step for step
    r.init.info = rope.info;
    r.init.optimizer = std::make_unique<AdamW>(*rope.info.optimizer);
    r.init.model = std::move(rope.model);
    return r;
}

void checkInitSchemeAndSizes(const ModelConfig& model, const ModelConfig& was, const std::string& source,
                             const std::string& run)
{
    std::string differences;
    auto compare = [&](const std::string& what, const std::string& asked, const std::string& has) {
        if (asked != has)
            differences += (differences.empty() ? "" : ", ") + what + " " + asked + " where the checkpoint has " + has;
    };
    // DroPE (Gelberg et al. 2025): a rope model continued as NoPE keeps every weight; rope has no tensor of its own,
    // so the shapes agree and only the rotations go.
    if (!droppingPositions(model, was))
        compare("scheme", model.scheme, was.scheme);
    compare("layers", std::to_string(model.layers), std::to_string(was.layers));
    compare("d-model", std::to_string(model.dModel), std::to_string(was.dModel));
    compare("heads", std::to_string(model.heads), std::to_string(was.heads));
    compare("d-ff", std::to_string(model.dFf), std::to_string(was.dFf));
    if (!differences.empty())
        throw InputError(source + ": " + run + " asks for " + differences + initAllowedText(was));
}

void checkInitCompatible(const ModelConfig& model, const LoadedCheckpoint& init, const std::string& source,
                         const std::string& run)
{
    const ModelConfig& was = init.model->config();
    checkInitSchemeAndSizes(model, was, source, run);
    // Then every tensor: the same scheme and sizes can still differ in a learned table's rows (one per context
    // position) or in t5's buckets.
    const std::vector<ParameterTensor> want = modelTensorLayout(model);
    const std::vector<ParameterTensor>& have = init.model->tensors();
    for (size_t i = 0; i < std::max(want.size(), have.size()); ++i) {
        if (i < want.size() && i < have.size() && want[i].name == have[i].name && want[i].shape == have[i].shape)
            continue;
        const bool learnedRows = i < want.size() && want[i].name == "wpe.weight";
        throw InputError(source + ": " + run + " asks for " +
                         (i < want.size() ? "tensor " + want[i].name + " " + shapeText(want[i].shape) : "no tensor") +
                         " where the checkpoint has " +
                         (i < have.size() ? "tensor " + have[i].name + " " + shapeText(have[i].shape) : "none") +
                         (learnedRows ? " (a learned table has one row per position of the context " +
                                            std::to_string(model.context) + ")"
                                      : std::string()) +
                         initAllowedText(was));
    }
}

namespace {

// The one check of a run's inputs: the model, the schedule, the corpus (when text) and the checkpoint continued.
void checkTrainingInputs(const ModelConfig& modelConfig, const TrainConfig& train, const Corpus* corpus,
                         const LoadedCheckpoint* init, const std::string& initSource, const std::string& initRun)
{
    validateModelConfig(modelConfig);
    validateTrainConfig(train);
    if (corpus)
        checkTrainingCorpus(*corpus, modelConfig.context);
    if (init)
        checkInitCompatible(modelConfig, *init, initSource, initRun);
}

// A progress report after step r.step of `steps`: `loss` is the mean since the last report.
TrainingProgress progressAt(const TrainStepResult& r, int steps, double loss, double elapsedSeconds,
                            size_t tokensPerStep)
{
    TrainingProgress p;
    p.step = r.step;
    p.steps = steps;
    p.loss = loss;
    p.learningRate = r.learningRate;
    p.gradNorm = r.gradNorm;
    p.elapsedSeconds = elapsedSeconds;
    p.tokensPerSecond = r.step * static_cast<double>(tokensPerStep) / p.elapsedSeconds;
    p.etaSeconds = p.elapsedSeconds / r.step * (steps - r.step);
    return p;
}

// The loop of both trainModel overloads: windows of corpus->train, or batches of `batches`.
TrainingResult runTraining(const ModelConfig& modelConfig, const TrainConfig& train, const Corpus* corpus,
                           const TrainingBatches* batches, const TrainingHooks& hooks, const LoadedCheckpoint* init,
                           const std::string& initSource, const std::string& initRun)
{
    // Every input is checked here once; the model and the trainer are told so.
    checkTrainingInputs(modelConfig, train, corpus, init, initSource, initRun);
    TrainingResult result;
    result.model = std::make_unique<Model>(modelConfig, ConfigCheck::Validated);
    Model& model = *result.model;
    if (init) {
        model.parameters() = init->model->parameters();
        model.parametersChanged();
    }
    const AdamW* resume = init ? init->optimizer.get() : nullptr;
    Trainer trainer = corpus ? Trainer(model, train, corpus->train, resume, ConfigCheck::Validated)
                             : Trainer(model, train, batches->draw, resume, ConfigCheck::Validated);
    result.info.corpus = corpus ? corpus->source : batches->source;
    result.info.training = train.toJson();
    if (batches)
        result.info.training.update(batches->record);
    // Periodic checkpoints save the live state; the result keeps its own copy (below).
    result.info.optimizer = std::shared_ptr<const AdamW>(&trainer.optimizer(), [](const AdamW*) {});
    if (hooks.started)
        hooks.started(model);
    model.setCancelFlag(hooks.interrupt);
    auto stopRequested = [&] {
        return (hooks.interrupt && hooks.interrupt->load()) || (hooks.shouldStop && hooks.shouldStop());
    };

    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
    const int every = hooks.reportEvery > 0 ? hooks.reportEvery : std::max(1, train.steps / 50);
    double windowLoss = 0;
    int windowSteps = 0;
    while (trainer.stepsDone() < train.steps) {
        if (stopRequested()) {
            result.stopped = true;
            break;
        }
        TrainStepResult r;
        try {
            r = trainer.step();
        } catch (const RunError&) {
            if (!stopRequested())
                throw;
            result.stopped = true; // cancelled inside the step: the parameters are those after the last full step
            break;
        }
        windowLoss += r.loss;
        ++windowSteps;
        result.info.trainLoss = r.loss;
        result.info.step = r.step;
        if (hooks.saveEvery > 0 && hooks.checkpoint && r.step % hooks.saveEvery == 0 && r.step < train.steps)
            hooks.checkpoint(model, result.info);
        if (hooks.progress && (r.step % every == 0 || r.step == train.steps || r.step == 1)) {
            hooks.progress(progressAt(r, train.steps, windowLoss / windowSteps, elapsed(), trainer.tokensPerStep()));
            windowLoss = 0;
            windowSteps = 0;
        }
    }
    model.setCancelFlag(nullptr);
    result.info.optimizer = std::make_shared<const AdamW>(trainer.optimizer());
    result.info.step = trainer.stepsDone();
    result.elapsedSeconds = elapsed();
    result.tokensPerSecond =
        result.elapsedSeconds > 0
            ? trainer.stepsDone() * static_cast<double>(trainer.tokensPerStep()) / result.elapsedSeconds
            : 0;
    return result;
}

} // namespace

TrainingResult trainModel(const ModelConfig& model, const TrainConfig& train, const Corpus& corpus,
                          const TrainingHooks& hooks, const LoadedCheckpoint* init, const std::string& initSource,
                          const std::string& initRun)
{
    return runTraining(model, train, &corpus, nullptr, hooks, init, initSource, initRun);
}

TrainingResult trainModel(const ModelConfig& model, const TrainConfig& train, const TrainingBatches& batches,
                          const TrainingHooks& hooks, const LoadedCheckpoint* init, const std::string& initSource,
                          const std::string& initRun)
{
    if (!batches.draw)
        throw std::logic_error("trainModel: TrainingBatches without a draw function");
    return runTraining(model, train, nullptr, &batches, hooks, init, initSource, initRun);
}

} // namespace plab
