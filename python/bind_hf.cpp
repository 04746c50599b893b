// positionlab.Model: a Hugging Face model folder (core/hf) from Python: its summary card, tokenizer, logits, exact
// attention probabilities, entropy and perplexity, each through the core call the CLI's verb makes.
#include "arrays.h"

#include "base/errors.h"
#include "hf/hf_attention.h"
#include "hf/hf_model.h"
#include "hf/tokenizer.h"
#include "runs/evaluation.h"
#include "runs/language_model.h"
#include "runs/method_comparison.h"
#include "schemes/rotary_scaling.h"
#include "views/entropy.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>

namespace plab::python {

namespace {

class FolderModel {
public:
    FolderModel(const std::string& folder, const std::string& precision)
        : m_folder(folder)
    {
        readHfConfig(folder); // config.json first: a directory that is no model folder is refused naming it
        const HfPrecision p = hfPrecisionFromName(precision);
        py::gil_scoped_release release;
        m_model = std::make_unique<HfModel>(folder, p);
    }

    py::object config() const
    {
        return py::module_::import("json").attr("loads")(hfSummaryJson(m_model->config(), m_model->precision()).dump());
    }

    py::array_t<int32_t> tokenize(const std::string& text, bool special) const
    {
        const std::vector<int> ids = tokenizer().encode(text, special).ids;
        return toNumpy(std::vector<int32_t>(ids.begin(), ids.end()));
    }

    std::string decode(const py::object& ids) const { return tokenizer().decode(idsOf(ids)); }

    py::array_t<float> logits(const py::object& idsArg, const py::object& scaling, const py::kwargs& params) const
    {
        const std::vector<int> ids = idsOf(idsArg);
        const SchemeSpec positions = positionsOf(scaling, params);
        HfMatrix out;
        {
            py::gil_scoped_release release;
            out = m_model->logits(ids, positions); // the CLI's `logits`
        }
        const long rows = static_cast<long>(out.rows()), cols = static_cast<long>(out.cols());
        std::vector<float> values(out.data(), out.data() + out.size()); // HfMatrix is row-major (T, vocab)
        return toNumpy(std::move(values), {rows, cols});
    }

    py::object attention(const py::object& idsArg, const py::object& layerArg, const py::object& head, bool output,
                         const py::object& scaling, const py::kwargs& params) const
    {
        const std::vector<int> ids = idsOf(idsArg);
        const SchemeSpec positions = positionsOf(scaling, params);
        const int layer = layerOf(layerArg);
        const int heads = m_model->config().heads;
        if (!head.is_none())
            checkIntegerRange("head", head.cast<long long>(), 0, heads - 1);
        HfLayerAttentionResult r;
        {
            py::gil_scoped_release release;
            r = hfLayerAttention(*m_model, ids, positions, layer, true); // attention --checkpoint DIR --probs
        }
        const long T = r.length, D = r.headDim;
        py::array_t<float> probs;
        if (head.is_none()) {
            probs = toNumpy(std::move(r.probabilities), {r.heads, T, T});
        } else {
            const size_t h = head.cast<size_t>(), cells = static_cast<size_t>(T) * T;
            std::vector<float> one(r.probabilities.begin() + h * cells, r.probabilities.begin() + (h + 1) * cells);
            probs = toNumpy(std::move(one), {T, T});
        }
        if (!output)
            return probs;
        return py::make_tuple(probs, toNumpy(std::move(r.out), {r.heads, T, D}));
    }

    py::dict entropy(const py::object& idsArg, const py::object& layerArg, const py::object& lengthsArg,
                     const py::object& scaling, const py::kwargs& params) const
    {
        const std::vector<int> ids = idsOf(idsArg);
        const SchemeSpec positions = positionsOf(scaling, params);
        const int layer = layerOf(layerArg);
        std::vector<int> lengths = defaultEntropyLengths(static_cast<int>(ids.size()));
        if (!lengthsArg.is_none())
            lengths = lengthsArg.cast<std::vector<int>>();
        std::vector<EntropyPoint> points;
        {
            py::gil_scoped_release release;
            points = hfEntropyCurve(*m_model, ids, positions, layer, lengths); // entropy --checkpoint DIR
        }
        return entropyColumns(points);
    }

    py::object eval(const std::string& text, const std::vector<int>& lengths, const py::object& compare,
                    const std::string& mode, const py::object& stride, const py::object& scaling,
                    const py::object& threads, const py::kwargs& params) const
    {
        const std::vector<uint8_t> bytes(text.begin(), text.end());
        const std::vector<int32_t> tokens = folderTextTokens(tokenizer(), bytes, "the text");
        EvalOptions options;
        options.lengths = lengths;
        options.mode = evalModeFromName(mode);
        options.textName = "the text (" + std::to_string(tokens.size()) + " tokens)";
        if (!stride.is_none()) {
            if (options.mode != EvalMode::Sliding)
                throw py::value_error("stride: applies to mode='sliding' only");
            options.stride = stride.cast<int>();
            checkIntegerRange("stride", options.stride, 1, kMaxLength);
        }
        HfLanguageModel model(*m_model);
        if (compare.is_none()) {
            const std::vector<std::string> settings = settingsFromKwargs(params);
            if (!scaling.is_none() || !settings.empty()) // as eval DIR --scaling M --set ... (applyFolderScaling)
                model.setScaling(scaling.is_none() ? model.scaling() : py::str(scaling).cast<std::string>(),
                                 settings);
            std::vector<EvalPoint> points;
            {
                ThreadScope scope(threads);
                py::gil_scoped_release release;
                points = evaluateModel(model, tokens, options);
            }
            return pointsDict(points);
        }
        if (!scaling.is_none() || params.size() > 0)
            throw py::value_error("compare: give each method's settings in its item (e.g. 'yarn:factor=4'), not "
                                  "scaling= or keyword parameters");
        std::string list;
        for (const py::handle& item : compare)
            list += (list.empty() ? "" : ",") + py::str(item).cast<std::string>();
        const std::vector<MethodChoice> methods = parseMethodList(list); // eval DIR --compare LIST
        checkRotaryModel(model);
        std::vector<MethodCurve> curves;
        {
            ThreadScope scope(threads);
            py::gil_scoped_release release;
            curves = evaluateUnderMethods(model, tokens, options, methods);
        }
        py::dict out;
        for (const MethodCurve& c : curves)
            out[py::str(c.label)] = pointsDict(c.points);
        return out;
    }

    // prompt: a text (tokenized with special tokens, as tokenize()) or token ids. The dict of runGenerate, plus "text"
    // (the new tokens decoded) when the prompt was a text.
    py::dict generate(const py::object& prompt, int maxNew, const py::object& scaling, double temperature, int topK,
                      unsigned long long seed, const py::object& stop, const py::object& callback,
                      const py::object& threads, const py::kwargs& params) const
    {
        const bool isText = py::isinstance<py::str>(prompt);
        const std::vector<int> ids = isText ? tokenizer().encode(prompt.cast<std::string>(), true).ids : idsOf(prompt);
        if (ids.empty())
            throw py::value_error("prompt: the text gives no tokens; allowed: a text or one or more token ids");
        const GenerateOptions options =
            generateOptions(maxNew, scaling, temperature, topK, seed, stop, params, m_model->config().scaling);
        const HfModel& model = *m_model;
        py::dict d =
            runGenerate([&](const GeneratedToken& onToken) { return plab::generate(model, ids, options, onToken); },
                        callback, threads);
        if (isText) {
            const std::vector<int32_t> out = d["ids"].cast<std::vector<int32_t>>();
            d["text"] = tokenizer().decode(std::vector<int>(out.begin(), out.end()));
        }
        return d;
    }

    py::object task(const py::object& name, const py::object& lengths, const py::object& depths,
                    const py::object& compare, const py::object& examples, unsigned long long seed,
                    const std::string& score, const py::object& text, const py::object& corpus,
                    const py::object& scalingLayers, bool returnExamples, const py::object& progress,
                    const py::object& threads) const
    {
        return runFolderTask(*m_model, tokenizer(),
                             {name, lengths, depths, compare, examples, seed, score, text, corpus, scalingLayers,
                              returnExamples, progress, threads});
    }

    std::string repr() const
    {
        const HfConfig& c = m_model->config();
        return "positionlab.Model('" + m_folder + "': " + c.modelType + ", " + std::to_string(c.layers) + " layers, " +
               std::to_string(c.heads) + " heads, " + hfPositionText(hfPositionSpec(c)) + ")";
    }

private:
    // The folder's tokenizer.json, read on first use: logits, attention and entropy of ids need none (as the CLI's
    // `logits --ids`), so a folder without one still loads; tokenize and eval then refuse naming the file.
    const hf::Tokenizer& tokenizer() const
    {
        if (!m_tokenizer)
            m_tokenizer.emplace(hf::Tokenizer::fromFolder(m_folder));
        return *m_tokenizer;
    }

    static py::dict pointsDict(const std::vector<EvalPoint>& points) { return evalColumns(points, "bits_per_token"); }

    std::vector<int> idsOf(const py::object& ids) const
    {
        std::vector<int> out;
        if (py::isinstance<py::str>(ids))
            throw py::value_error("ids: a str is not allowed; allowed: token ids (a list or an integer array; "
                                  "model.tokenize(text) gives them)");
        for (const py::handle& id : ids) {
            const long long v = py::reinterpret_borrow<py::object>(id).cast<long long>();
            checkIntegerRange("ids", v, 0, m_model->config().vocab - 1);
            out.push_back(static_cast<int>(v));
        }
        if (out.empty())
            throw py::value_error("ids: the list is empty; allowed: one or more token ids");
        return out;
    }

    int layerOf(const py::object& layer) const
    {
        const int layers = m_model->config().layers;
        if (layer.is_none())
            return layers - 1; // the CLI's --layer default
        const long long l = layer.cast<long long>();
        checkIntegerRange("layer", l, 0, layers - 1);
        return static_cast<int>(l);
    }

    // The folder's positions under scaling= and keyword settings: the config's own method keeps its settings, another
    // starts from its defaults (core's hfPositionSpec), as the CLI's folderPositionsFromArgs.
    SchemeSpec positionsOf(const py::object& scalingArg, const py::kwargs& params) const
    {
        const HfConfig& config = m_model->config();
        const std::string scaling = scalingArg.is_none() ? "" : py::str(scalingArg).cast<std::string>();
        const std::vector<std::string> settings = settingsFromKwargs(params);
        if (!settings.empty() && config.scheme == "rope") {
            const RotaryMethodInfo& info = rotaryMethodByName(scaling.empty() ? config.scaling : scaling);
            for (const std::string& s : settings)
                checkMethodSetting(info, s);
        }
        if (scaling.empty() && settings.empty())
            return hfPositionSpec(config);
        return hfPositionSpec(config, scaling.empty() ? (config.scheme == "rope" ? config.scaling : "none") : scaling,
                              settings);
    }

    std::string m_folder;
    mutable std::optional<hf::Tokenizer> m_tokenizer;
    std::unique_ptr<HfModel> m_model;
};

} // namespace

void bindHf(py::module_& m)
{
    py::class_<FolderModel>(m, "Model",
                            "A Hugging Face model folder (config.json, tokenizer.json, *.safetensors) run by core's "
                            "float32 (or BF16) forward through the lab's attention kernel.")
        .def(py::init<const std::string&, const std::string&>(), py::arg("folder"), py::arg("precision") = "f32")
        .def_property_readonly("config", &FolderModel::config,
                               "The summary card as `positionlab-cli inspect --json` writes it.")
        .def("tokenize", &FolderModel::tokenize, py::arg("text"), py::arg("special") = true,
             "Token ids (int32) of a text through the folder's tokenizer.json (special tokens added as Hugging Face's "
             "encode adds them).")
        .def("decode", &FolderModel::decode, py::arg("ids"))
        .def("logits", &FolderModel::logits, py::arg("ids"), py::arg("scaling") = py::none(),
             "Logits (T, vocab) float32 of token ids at positions 0..T-1, under the config's own positions or a "
             "method applied zero-shot (scaling='yarn', factor=4).")
        .def("attention", &FolderModel::attention, py::arg("ids"), py::arg("layer") = py::none(),
             py::arg("head") = py::none(), py::kw_only(), py::arg("output") = false, py::arg("scaling") = py::none(),
             "Exact attention probabilities of one layer (default the last): (heads, T, T), or (T, T) of one head; "
             "with output=True also the layer's attention output (heads, T, D).")
        .def("entropy", &FolderModel::entropy, py::arg("ids"), py::arg("layer") = py::none(), py::kw_only(),
             py::arg("lengths") = py::none(), py::arg("scaling") = py::none(),
             "Each head's attention entropy (nats) at the first n tokens for each n of lengths (default 16, 32, ... "
             "up to len(ids)).")
        .def("eval", &FolderModel::eval, py::arg("text"), py::arg("lengths"), py::kw_only(),
             py::arg("compare") = py::none(), py::arg("mode") = "nonoverlapping", py::arg("stride") = py::none(),
             py::arg("scaling") = py::none(), py::arg("threads") = py::none(),
             "Perplexity against window length (in tokens) on a text; compare=['none', 'yarn:factor=4'] evaluates "
             "under each method (a dict by method label).")
        .def("generate", &FolderModel::generate, py::arg("prompt"), py::arg("max_new") = 32, py::kw_only(),
             py::arg("scaling") = py::none(), py::arg("temperature") = 0.0, py::arg("top_k") = 0, py::arg("seed") = 0,
             py::arg("stop") = py::none(), py::arg("callback") = py::none(), py::arg("threads") = py::none(),
             "Continues a prompt (a text or token ids) by max_new tokens with a key/value cache: greedy "
             "(temperature=0) or sampled (temperature, top_k, seed), under the config's positions or a method "
             "(scaling='yarn', factor=4); stop= ids end it; callback(id) sees each new token and stops it by returning "
             "False. A dict: ids, text (for a text prompt), canceled, positions, prefill_ms, "
             "decode_tokens_per_s, cache_bytes.")
        .def("task", &FolderModel::task, py::arg("task"), py::arg("lengths") = py::none(),
             py::arg("depths") = py::none(), py::kw_only(), py::arg("compare") = py::none(),
             py::arg("examples") = py::none(), py::arg("seed") = 1, py::arg("score") = "exact",
             py::arg("text") = py::none(), py::arg("corpus") = py::none(), py::arg("scaling_layers") = py::none(),
             py::arg("return_examples") = false, py::arg("progress") = py::none(), py::arg("threads") = py::none(),
             "A retrieval task in the folder's own tokens (passkey, niah-single, niah-multikey, niah-multivalue, "
             "variable-tracking), as `eval DIR --task` runs it: accuracy per (method, length, depth) as NumPy columns "
             "method, label, length, depth, examples, correct, accuracy (mean_rank with score='loglik'). lengths are "
             "prompt tokens, depths in [0, 1]; compare=['none', 'yarn'] the methods (default: the folder's own, none "
             "and yarn); the haystack is text=, corpus= (a file) or the CLI's default corpus. return_examples=True "
             "also gives every scored example (prompt_ids, needle_span, answer_ids, output_ids, correct, ...).")
        .def("__repr__", &FolderModel::repr);
}

} // namespace plab::python
