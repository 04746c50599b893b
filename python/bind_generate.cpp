// generate() of positionlab.Model and LabModel: core's KV-cache generation (core/runs/generation) with the options as
// keywords, a per-token Python callback that can stop it, the GIL released while it runs, the result as a dict.
#include "arrays.h"

#include "base/errors.h"

#include <exception>
#include <optional>
#include <utility>

namespace plab::python {

namespace {

// Core names its options as the CLI does (max-new, top-k); the Python keywords are max_new, top_k.
[[noreturn]] void throwWithPythonNames(const InputError& e)
{
    std::string message = e.what();
    for (const auto& [core, keyword] : {std::pair<std::string, std::string>{"max-new", "max_new"}, {"top-k", "top_k"}})
        for (size_t at = message.find(core); at != std::string::npos; at = message.find(core, at + keyword.size()))
            message.replace(at, core.size(), keyword);
    throw py::value_error(message);
}

} // namespace

GenerateOptions generateOptions(int maxNew, const py::object& scaling, double temperature, int topK,
                                unsigned long long seed, const py::object& stop, const py::kwargs& params,
                                const std::string& ownScaling)
{
    GenerateOptions options;
    options.maxNew = maxNew;
    options.temperature = temperature;
    options.topK = topK;
    options.seed = seed;
    options.scaling = scaling.is_none() ? "" : py::str(scaling).cast<std::string>();
    options.settings = settingsFromKwargs(params);
    if (!options.settings.empty() && options.scaling.empty())
        options.scaling = ownScaling; // parameters alone retune the model's own method, as logits() and eval() do
    if (!stop.is_none()) {
        if (py::isinstance<py::int_>(stop))
            options.stopIds.push_back(stop.cast<int>());
        else
            for (const py::handle& id : stop)
                options.stopIds.push_back(py::reinterpret_borrow<py::object>(id).cast<int>());
    }
    try {
        checkGenerateOptions(options);
    } catch (const InputError& e) {
        throwWithPythonNames(e);
    }
    return options;
}

py::dict runGenerate(const std::function<GenerateResult(const GeneratedToken&)>& run, const py::object& callback,
                     const py::object& threads)
{
    // The callback runs with the GIL taken back for it; an exception it raises (or Ctrl-C, checked at every token)
    // stops the generation and is raised again once core has returned.
    std::exception_ptr error;
    const GeneratedToken onToken = [&](int id) {
        py::gil_scoped_acquire gil;
        try {
            if (PyErr_CheckSignals() != 0)
                throw py::error_already_set();
            if (callback.is_none())
                return true;
            const py::object keepGoing = callback(id);
            return keepGoing.is_none() || keepGoing.cast<bool>();
        } catch (...) {
            error = std::current_exception();
            return false;
        }
    };
    GenerateResult result;
    try {
        ThreadScope scope(threads);
        py::gil_scoped_release release;
        result = run(onToken);
    } catch (const InputError& e) {
        throwWithPythonNames(e);
    }
    if (error)
        std::rethrow_exception(error);
    py::dict d;
    d["ids"] = toNumpy(std::vector<int32_t>(result.ids.begin(), result.ids.end()));
    d["canceled"] = result.canceled;
    d["positions"] = result.positions;
    d["prefill_ms"] = result.prefillMs;
    d["decode_tokens_per_s"] = result.decodeTokensPerSecond;
    d["cache_bytes"] = result.cacheBytes;
    return d;
}

} // namespace plab::python
