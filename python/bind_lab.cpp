// positionlab.load / train and LabModel: the lab's own byte-level models (core/model, core/runs) from Python, with a
// progress callback while training; each number from the core call the CLI's train, eval and attention make.
#include "arrays.h"

#include "attention/attention.h"
#include "base/errors.h"
#include "base/limits.h"
#include "model/checkpoint.h"
#include "model/corpus.h"
#include "model/model.h"
#include "model/presets.h"
#include "runs/evaluation.h"
#include "runs/method_comparison.h"
#include "runs/task_runs.h"
#include "runs/training.h"
#include "schemes/position_bias.h"
#include "schemes/rotary_scaling.h"
#include "tasks/task_accuracy.h"
#include "tasks/tasks.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

namespace plab::python {

namespace {

py::object jsonToPython(const nlohmann::json& j)
{
    return py::module_::import("json").attr("loads")(j.dump());
}

// corpus= of train and eval: None, the default corpus (the Debian fortunes files); a str, a text file's path.
Corpus corpusOf(const py::object& corpus)
{
    if (corpus.is_none())
        return loadDefaultCorpus();
    return loadCorpusFile(py::str(corpus).cast<std::string>());
}

py::dict pointsDict(const std::vector<EvalPoint>& points)
{
    return evalColumns(points, "bits_per_byte");
}

// A training run's hooks around a Python progress callback: progress(dict) gets step, steps, loss, learning_rate,
// grad_norm, elapsed_seconds, tokens_per_second, eta_seconds; returning False stops the run after the current step.
// An exception raised by the callback (or Ctrl-C) stops it too and is raised again once the run has ended.
struct ProgressBridge {
    py::object callback;
    bool stop = false;
    std::optional<py::error_already_set> error;

    TrainingHooks hooks(int reportEvery)
    {
        TrainingHooks h;
        h.reportEvery = reportEvery;
        h.progress = [this](const TrainingProgress& p) {
            if (callback.is_none() || stop)
                return;
            py::gil_scoped_acquire gil;
            try {
                py::dict d;
                d["step"] = p.step;
                d["steps"] = p.steps;
                d["loss"] = p.loss;
                d["learning_rate"] = p.learningRate;
                d["grad_norm"] = p.gradNorm;
                d["elapsed_seconds"] = p.elapsedSeconds;
                d["tokens_per_second"] = p.tokensPerSecond;
                d["eta_seconds"] = p.etaSeconds;
                const py::object result = callback(d);
                if (!result.is_none() && !result.cast<bool>())
                    stop = true;
            } catch (py::error_already_set& e) {
                error.emplace(std::move(e));
                stop = true;
            }
        };
        h.shouldStop = [this] {
            py::gil_scoped_acquire gil;
            if (PyErr_CheckSignals() != 0) {
                error.emplace();
                stop = true;
            }
            return stop;
        };
        return h;
    }
    void rethrow()
    {
        if (error) {
            py::error_already_set e = std::move(*error);
            error.reset();
            throw e;
        }
    }
};

class LabModel {
public:
    explicit LabModel(LoadedCheckpoint loaded) : m_loaded(std::move(loaded)) {}

    Model& model() { return *m_loaded.model; }
    py::object config() const { return jsonToPython(m_loaded.model->config().toJson()); }
    int step() const { return m_loaded.info.step; }
    double trainLoss() const { return m_loaded.info.trainLoss; }

    void save(const std::string& path)
    {
        checkCheckpointFileName(path, "path");
        CheckpointInfo info = m_loaded.info;
        py::gil_scoped_release release;
        saveCheckpoint(*m_loaded.model, info, path); // atomic, as train -o
    }

    py::object eval(const std::vector<int>& lengths, const py::object& text, const py::object& corpus,
                    const py::object& compare, const std::string& mode, long long maxTokens,
                    const py::object& threads, const py::object& scaling, const py::kwargs& params)
    {
        checkIntegerRange("max_tokens", maxTokens, 0, 1LL << 40);
        if (!text.is_none() && !corpus.is_none())
            throw py::value_error("text, corpus: give one of them (None: the default corpus's validation split)");
        std::vector<uint8_t> bytes;
        if (!text.is_none()) {
            const std::string t = py::str(text);
            bytes.assign(t.begin(), t.end());
        } else {
            bytes = corpusOf(corpus).validation;
        }
        EvalOptions options;
        options.lengths = lengths;
        options.mode = evalModeFromName(mode);
        options.maxTokens = static_cast<size_t>(maxTokens);
        Model& m = model();
        if (!compare.is_none()) {
            std::string list;
            for (const py::handle& item : compare)
                list += (list.empty() ? "" : ",") + py::str(item).cast<std::string>();
            const std::vector<MethodChoice> methods = parseMethodList(list);
            checkRotaryModel(m.config());
            std::vector<MethodCurve> curves;
            {
                ThreadScope scope(threads);
                py::gil_scoped_release release;
                curves = evaluateUnderMethods(m, bytes, options, methods); // eval --compare
            }
            py::dict out;
            for (const MethodCurve& c : curves)
                out[py::str(c.label)] = pointsDict(c.points);
            return out;
        }
        const ScalingScope method(m, scaling, settingsFromKwargs(params));
        std::vector<EvalPoint> points;
        {
            ThreadScope scope(threads);
            py::gil_scoped_release release;
            points = evaluateModel(m, bytes, options); // eval
        }
        return pointsDict(points);
    }

    py::object attention(const std::string& text, const py::object& layerArg, bool probs, const py::object& scaling,
                         const py::kwargs& params)
    {
        Model& m = model();
        const ModelConfig& c = m.config();
        const int layer = layerArg.is_none() ? c.layers - 1 : layerArg.cast<int>();
        checkIntegerRange("layer", layer, 0, c.layers - 1);
        if (text.empty())
            throw py::value_error("text: the text is empty; allowed: one or more bytes");
        checkIntegerRange("len(text) in bytes", static_cast<long long>(text.size()), 1, m.maxLength());
        const ScalingScope method(m, scaling, settingsFromKwargs(params));
        const int N = static_cast<int>(text.size()), H = c.heads, D = c.headDim();
        if (probs)
            checkMemoryEstimate(4.0 * H * double(N) * N, "probabilities (H, N, N)");
        const std::vector<uint8_t> tokens(text.begin(), text.end());
        AttentionForward result;
        {
            py::gil_scoped_release release;
            m.forward(tokens.data(), nullptr, 1, N); // attention --checkpoint: the layer's q, k, v on the text
            AttentionDims dims{1, H, N, D};
            if (!m.layerLogForget(layer).empty())
                dims.logForget = m.layerLogForget(layer).data();
            AttentionOptions options;
            options.wantProbabilities = probs;
            const PositionBias bias(m.layerSchemeSpec(layer), N);
            attentionForward(bias, dims, m.layerQueries(layer).data(), m.layerKeys(layer).data(),
                             m.layerValues(layer).data(), result, options);
        }
        py::array_t<float> out = toNumpy(std::move(result.out), {H, N, D});
        if (!probs)
            return out;
        return py::make_tuple(out, toNumpy(std::move(result.probabilities), {H, N, N}));
    }

    // prompt: a text (its UTF-8 bytes) or byte ids 0..255. The dict of runGenerate, plus "text": the new bytes
    // decoded as UTF-8 (an incomplete or invalid sequence as U+FFFD).
    py::dict generate(const py::object& prompt, int maxNew, const py::object& scaling, double temperature, int topK,
                      unsigned long long seed, const py::object& stop, const py::object& callback,
                      const py::object& threads, const py::kwargs& params)
    {
        std::vector<int> ids;
        if (py::isinstance<py::str>(prompt)) {
            const std::string text = prompt.cast<std::string>();
            ids.assign(reinterpret_cast<const uint8_t*>(text.data()),
                       reinterpret_cast<const uint8_t*>(text.data()) + text.size());
        } else {
            for (const py::handle& id : prompt) {
                const long long v = py::reinterpret_borrow<py::object>(id).cast<long long>();
                checkIntegerRange("prompt", v, 0, 255);
                ids.push_back(static_cast<int>(v));
            }
        }
        if (ids.empty())
            throw py::value_error("prompt: the prompt is empty; allowed: a text or one or more byte ids");
        const GenerateOptions options =
            generateOptions(maxNew, scaling, temperature, topK, seed, stop, params, model().config().scaling);
        Model& m = model();
        py::dict d = runGenerate(
            [&](const GeneratedToken& onToken) { return plab::generate(m, ids, options, onToken); }, callback, threads);
        const std::vector<int32_t> out = d["ids"].cast<std::vector<int32_t>>();
        const std::string bytes(out.begin(), out.end());
        d["text"] = py::bytes(bytes).attr("decode")("utf-8", "replace");
        return d;
    }

    // eval MODEL --task NAME: exact-match accuracy of the greedy answers per length (and depth for passkey); lengths
    // None: the CLI's defaults (multiples of the checkpoint's own task length, else of the longest the context reads).
    py::dict task(const std::string& name, const py::object& lengthsArg, const py::object& depthsArg,
                  long long examples, unsigned long long seed, const py::object& threads, const py::object& scaling,
                  const py::kwargs& params)
    {
        const TaskKind kind = taskByName(name).kind;
        Model& m = model();
        TaskEvalOptions options;
        options.lengths = defaultTaskLengths(taskEvalTrainLength(kind, m_loaded.info.training, m.config().context));
        if (!lengthsArg.is_none()) {
            options.lengths.clear();
            for (const long long length : lengthsArg.cast<std::vector<long long>>()) {
                checkIntegerRange("lengths", length, 1, kMaxLength); // as the CLI's --lengths list reads it
                options.lengths.push_back(static_cast<int>(length));
            }
        }
        if (!depthsArg.is_none()) {
            if (kind != TaskKind::Passkey)
                throw py::value_error("depths: applies only to task 'passkey', not to '" + taskInfo(kind).name +
                                      "'; allowed: depths=None");
            options.depths = depthsArg.cast<std::vector<double>>();
        }
        checkIntegerRange("examples", examples, 1, 1000000); // as the CLI's --examples reads it
        options.examples = static_cast<int>(examples);
        options.seed = seed;
        options.maxLength = m.maxLength();
        try {
            checkTaskEvalOptions(kind, options);
        } catch (const InputError& e) {
            throw py::value_error((depthsArg.is_none() ? "lengths: " : "lengths, depths: ") + std::string(e.what()));
        }
        const ScalingScope method(m, scaling, settingsFromKwargs(params));
        // Ctrl-C stops it: core then throws RunError "cancelled", and the KeyboardInterrupt is raised instead.
        std::optional<py::error_already_set> interrupt;
        options.progress = [&](double) {
            py::gil_scoped_acquire gil;
            if (PyErr_CheckSignals() == 0)
                return true;
            interrupt.emplace();
            return false;
        };
        std::vector<TaskAccuracyPoint> points;
        try {
            ThreadScope scope(threads);
            py::gil_scoped_release release;
            points = evaluateTask(kind, modelPredictor(m), options);
        } catch (const RunError&) {
            if (!interrupt)
                throw;
            py::error_already_set e = std::move(*interrupt);
            interrupt.reset();
            throw e;
        }
        std::vector<int32_t> length, count, correct;
        std::vector<double> depth, accuracy;
        std::vector<uint8_t> supported;
        for (const TaskAccuracyPoint& p : points) {
            length.push_back(p.length);
            depth.push_back(p.depth);
            count.push_back(p.examples);
            correct.push_back(p.supported ? p.correct : 0);
            // NaN where unsupported, as the CLI's table writes such a cell
            accuracy.push_back(p.supported ? p.accuracy : std::nan(""));
            supported.push_back(p.supported);
        }
        py::dict d;
        d["length"] = toNumpy(length);
        d["depth"] = toNumpy(depth);
        d["examples"] = toNumpy(count);
        d["correct"] = toNumpy(correct);
        d["accuracy"] = toNumpy(accuracy);
        d["supported"] = toNumpy(supported).attr("astype")("bool");
        return d;
    }

    // More steps from this model's weights (and its optimiser state when it has one), as train --init.
    void train(int steps, const py::object& corpus, const py::object& progress, int reportEvery,
               const py::object& threads)
    {
        ModelConfig mc = m_loaded.model->config();
        TrainConfig tc = m_loaded.info.training.is_null()
                             ? TrainConfig{}
                             : TrainConfig::fromJson(m_loaded.info.training, "the model's training record");
        setTrainingSteps(tc, steps);
        *this = LabModel(runTraining(mc, tc, corpusOf(corpus), progress, reportEvery, threads, &m_loaded));
    }

    static LoadedCheckpoint runTraining(const ModelConfig& mc, const TrainConfig& tc, const Corpus& corpus,
                                        const py::object& progress, int reportEvery, const py::object& threads,
                                        const LoadedCheckpoint* init)
    {
        ProgressBridge bridge;
        bridge.callback = progress;
        const TrainingHooks hooks = bridge.hooks(reportEvery);
        TrainingResult result;
        {
            ThreadScope scope(threads);
            py::gil_scoped_release release;
            result = trainModel(mc, tc, corpus, hooks, init, "the model", "train()");
        }
        bridge.rethrow();
        LoadedCheckpoint out;
        out.model = std::move(result.model);
        out.info = result.info;
        return out;
    }

private:
    // scaling= and keyword settings applied to the model for one call (the model's own method and settings after).
    class ScalingScope {
    public:
        ScalingScope(Model& model, const py::object& scaling, const std::vector<std::string>& settings)
            : m_model(model), m_method(model.config().scaling), m_settings(model.config().scalingSettings)
        {
            if (scaling.is_none() && settings.empty())
                return;
            model.setScaling(scaling.is_none() ? m_method : py::str(scaling).cast<std::string>(), settings);
            m_changed = true;
        }
        ~ScalingScope()
        {
            if (m_changed)
                m_model.setScaling(m_method, m_settings);
        }

    private:
        Model& m_model;
        std::string m_method;
        std::vector<std::string> m_settings;
        bool m_changed = false;
    };

    LoadedCheckpoint m_loaded;
};

LabModel load(const std::string& path)
{
    py::gil_scoped_release release;
    return LabModel(loadCheckpoint(path));
}

// train(scheme, preset=..., steps=..., **options): the preset's model and schedule (train --preset), then the given
// sizes and the scheme's parameters (keyword settings), as the CLI's train.
LabModel train(const std::string& scheme, const std::string& preset, const py::object& steps,
               const py::object& context, const py::object& seed, bool logn, const std::string& scaling,
               const py::object& corpus, const py::object& progress, int reportEvery, const py::object& threads,
               const py::kwargs& params)
{
    ModelConfig mc;
    TrainConfig tc;
    applyPreset(preset, mc, tc);
    mc.scheme = scheme;
    mc.logn = logn;
    mc.scaling = scaling;
    const std::vector<std::string> settings = settingsFromKwargs(params);
    mc.schemeSettings = settingsTakenBy(scheme, "none", settings);
    for (const std::string& s : settings)
        if (std::find(mc.schemeSettings.begin(), mc.schemeSettings.end(), s) == mc.schemeSettings.end())
            mc.scalingSettings.push_back(s);
    if (!context.is_none())
        mc.context = context.cast<int>();
    if (!seed.is_none())
        mc.seed = seed.cast<uint64_t>();
    if (!steps.is_none())
        setTrainingSteps(tc, steps.cast<int>());
    return LabModel(LabModel::runTraining(mc, tc, corpusOf(corpus), progress, reportEvery, threads, nullptr));
}

} // namespace

void bindLab(py::module_& m)
{
    py::class_<LabModel>(m, "LabModel", "One of the lab's byte-level transformers (a .safetensors checkpoint).")
        .def_property_readonly("config", &LabModel::config, "The model's config (as saved in its checkpoint).")
        .def_property_readonly("step", &LabModel::step, "Training steps done.")
        .def_property_readonly("train_loss", &LabModel::trainLoss, "The last training loss.")
        .def("save", &LabModel::save, py::arg("path"), "Writes the checkpoint (.safetensors, atomically).")
        .def("eval", &LabModel::eval, py::arg("lengths"), py::kw_only(), py::arg("text") = py::none(),
             py::arg("corpus") = py::none(), py::arg("compare") = py::none(), py::arg("mode") = "nonoverlapping",
             py::arg("max_tokens") = 0, py::arg("threads") = py::none(), py::arg("scaling") = py::none(),
             "Perplexity against length (bytes) on a text or a corpus's validation split (max_tokens > 0: at most that "
             "many bytes scored per length, as the lessons' presets do); compare=['none', 'yarn'] evaluates a rotary "
             "model under each method.")
        .def("attention", &LabModel::attention, py::arg("text"), py::arg("layer") = py::none(), py::kw_only(),
             py::arg("probs") = true, py::arg("scaling") = py::none(),
             "One layer's attention on a text (its bytes): (out (H, N, D), probabilities (H, N, N)).")
        .def("task", &LabModel::task, py::arg("task"), py::arg("lengths") = py::none(), py::arg("depths") = py::none(),
             py::kw_only(), py::arg("examples") = 100, py::arg("seed") = 1, py::arg("threads") = py::none(),
             py::arg("scaling") = py::none(),
             "Exact-match accuracy of the greedy answers on a byte task (copy, reverse, addition, passkey), as "
             "`eval MODEL --task` scores it: NumPy columns length, depth (-1 but for passkey), examples, correct, "
             "accuracy (NaN where the examples are longer than the model reads), supported.")
        .def("train", &LabModel::train, py::arg("steps"), py::kw_only(), py::arg("corpus") = py::none(),
             py::arg("progress") = py::none(), py::arg("report_every") = 0, py::arg("threads") = py::none(),
             "More training steps from these weights (as train --init).")
        .def("generate", &LabModel::generate, py::arg("prompt"), py::arg("max_new") = 32, py::kw_only(),
             py::arg("scaling") = py::none(), py::arg("temperature") = 0.0, py::arg("top_k") = 0, py::arg("seed") = 0,
             py::arg("stop") = py::none(), py::arg("callback") = py::none(), py::arg("threads") = py::none(),
             "Continues a prompt (a text or byte ids) by max_new bytes: greedy (temperature=0) or sampled "
             "(temperature, top_k, seed), under the model's method or another (scaling='yarn', factor=4); stop= ids "
             "end it; callback(id) sees each new byte and stops it by returning False. A dict: ids, text, canceled, "
             "positions, prefill_ms, decode_tokens_per_s, cache_bytes.");
    m.def("load", &load, py::arg("path"), "Loads a lab checkpoint (.safetensors written by train).");
    m.def("train", &train, py::arg("scheme"), py::kw_only(), py::arg("preset") = "quick",
          py::arg("steps") = py::none(), py::arg("context") = py::none(), py::arg("seed") = py::none(),
          py::arg("logn") = false, py::arg("scaling") = "none", py::arg("corpus") = py::none(),
          py::arg("progress") = py::none(), py::arg("report_every") = 0, py::arg("threads") = py::none(),
          "Trains a lab model from a preset (quick, ...) with a scheme; progress(dict) is called as it goes "
          "(return False to stop).");
}

} // namespace plab::python
