// Model.task(): a retrieval task (core/tasks/retrieval, core/runs/retrieval_runs) on a Hugging Face folder, as
// `eval DIR --task` runs it: core's defaults, the GIL released, the accuracy per (method, length, depth) as NumPy
// columns and, on request, every scored example as the CLI's --examples-out line.
#include "arrays.h"

#include "base/errors.h"
#include "hf/hf_config.h"
#include "hf/hf_model.h"
#include "hf/tokenizer.h"
#include "model/corpus.h"
#include "runs/language_model.h"
#include "runs/method_comparison.h"
#include "runs/retrieval_runs.h"
#include "schemes/position_bias.h"

#include <exception>
#include <utility>

namespace plab::python {

using namespace pybind11::literals;

namespace {

// Core names the options as the CLI does (--lengths, --scaling-layers); the Python keywords are lengths,
// scaling_layers.
[[noreturn]] void throwWithKeywordNames(const InputError& e)
{
    std::string message = e.what();
    for (const auto& [option, keyword] : {std::pair<std::string, std::string>{"--scaling-layers", "scaling_layers"},
                                          {"--lengths", "lengths"},
                                          {"--depths", "depths"},
                                          {"--examples", "examples"},
                                          {"--score", "score"},
                                          {"--task", "task"},
                                          {"--compare", "compare"},
                                          {"--corpus", "corpus"}})
        for (size_t at = message.find(option); at != std::string::npos; at = message.find(option, at + keyword.size()))
            message.replace(at, option.size(), keyword);
    throw py::value_error(message);
}

// The haystack's corpus: text= (a string), corpus= (a UTF-8 file, as --corpus) or the CLI's default corpus.
Corpus taskCorpus(const py::object& text, const py::object& corpus)
{
    if (!text.is_none() && !corpus.is_none())
        throw py::value_error("text: give text= or corpus=, not both");
    if (!text.is_none())
        return makeCorpus(py::str(text).cast<std::string>(), "the text");
    if (!corpus.is_none())
        return loadCorpusFile(py::str(corpus).cast<std::string>());
    return loadDefaultCorpus();
}

std::string methodList(const py::object& compare)
{
    if (py::isinstance<py::str>(compare))
        return compare.cast<std::string>(); // "none,yarn", as --compare reads it
    std::string list;
    for (const py::handle& item : compare)
        list += (list.empty() ? "" : ",") + py::str(item).cast<std::string>();
    return list;
}

py::dict cellColumns(const RetrievalRun& run, bool ranks)
{
    py::list method, label;
    std::vector<int32_t> length, examples, correct;
    std::vector<double> depth, accuracy, meanRank;
    for (const RetrievalCell& c : run.cells) {
        method.append(run.methods[c.method].choice.method);
        label.append(run.methods[c.method].label);
        length.push_back(c.length);
        depth.push_back(c.depth);
        examples.push_back(c.examples);
        correct.push_back(c.correct);
        accuracy.push_back(c.accuracy);
        meanRank.push_back(c.meanRank);
    }
    const py::module_ np = py::module_::import("numpy");
    py::dict d;
    d["method"] = np.attr("array")(method, "dtype"_a = "str");
    d["label"] = np.attr("array")(label, "dtype"_a = "str");
    d["length"] = toNumpy(length);
    d["depth"] = toNumpy(depth);
    d["examples"] = toNumpy(examples);
    d["correct"] = toNumpy(correct);
    d["accuracy"] = toNumpy(accuracy);
    if (ranks)
        d["mean_rank"] = toNumpy(meanRank);
    return d;
}

} // namespace

py::object runFolderTask(const HfModel& model, const hf::Tokenizer& tokenizer, const TaskArguments& a)
{
    try {
        RetrievalOptions options;
        options.kind = retrievalTaskByName(py::str(a.task).cast<std::string>()).kind;
        const Corpus corpus = taskCorpus(a.text, a.corpus);
        const RetrievalGenerator generator(tokenizer, retrievalHaystack(corpus), corpus.source);
        const HfConfig& c = model.config();
        const HfLanguageModel language(model);
        const RetrievalOptions defaults = retrievalDefaults(
            options.kind, c.context, language.scaling(), language.rotary(), hfMaxLength(c),
            generator.minimumLength(options.kind), [&c](int n) { return c.prefillFlops(n); }, kHfEvalFlopsPerSecond);
        options.lengths = defaults.lengths;
        if (!a.lengths.is_none()) {
            options.lengths.clear();
            for (const long long length : a.lengths.cast<std::vector<long long>>()) {
                checkIntegerRange("lengths", length, 1, kMaxLength); // as the CLI's --lengths list reads it
                options.lengths.push_back(static_cast<int>(length));
            }
        }
        options.depths = a.depths.is_none() ? defaults.depths : a.depths.cast<std::vector<double>>();
        options.examples = defaults.examples;
        if (!a.examples.is_none()) {
            const long long examples = a.examples.cast<long long>();
            checkIntegerRange("examples", examples, 1, 1000000); // as the CLI's --examples reads it
            options.examples = static_cast<int>(examples);
        }
        options.seed = a.seed;
        options.scoring = retrievalScoringFromName(a.score);
        options.methods = a.compare.is_none() ? defaults.methods : parseMethodList(methodList(a.compare));
        if (!a.scalingLayers.is_none())
            options.scalingLayers = hfScalingLayersByName(py::str(a.scalingLayers).cast<std::string>());
        checkRetrievalOptions(options, c, generator);
        (void)retrievalMethods(language, options); // every method checked before any work, as the CLI does

        // progress(fraction) runs with the GIL taken back; it stops the run by returning False, and an exception it
        // raises (or Ctrl-C, checked between examples) stops it and is raised again once core has returned.
        std::exception_ptr error;
        RetrievalHooks hooks;
        hooks.progress = [&](double fraction) {
            py::gil_scoped_acquire gil;
            try {
                if (PyErr_CheckSignals() != 0)
                    throw py::error_already_set();
                if (a.progress.is_none())
                    return true;
                const py::object keepGoing = a.progress(fraction);
                return keepGoing.is_none() || keepGoing.cast<bool>();
            } catch (...) {
                error = std::current_exception();
                return false;
            }
        };
        std::vector<nlohmann::json> records;
        if (a.returnExamples)
            hooks.exampleDone = [&](const RetrievalRecord& r) { records.push_back(retrievalRecordJson(r)); };
        RetrievalRun run;
        {
            ThreadScope scope(a.threads);
            py::gil_scoped_release release;
            run = runRetrieval(model, generator, options, hooks);
        }
        if (error)
            std::rethrow_exception(error);
        py::dict table = cellColumns(run, options.scoring == RetrievalScoring::Loglik);
        table["canceled"] = run.stopped; // progress returned False: the cells done so far
        if (!a.returnExamples)
            return table;
        const py::object loads = py::module_::import("json").attr("loads");
        py::list examples;
        for (const nlohmann::json& r : records)
            examples.append(loads(r.dump())); // the CLI's --examples-out line, as a dict
        return py::make_tuple(table, examples);
    } catch (const InputError& e) {
        throwWithKeywordNames(e);
    }
}

} // namespace plab::python
