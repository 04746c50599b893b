// The positionlab module's shared glue: NumPy arrays in and out (float32, C-contiguous, no copy where the layout
// allows), Python keyword parameters as core's NAME=VALUE settings, threads= and core's errors as Python exceptions.
#pragma once

#include "runs/evaluation.h"
#include "runs/generation.h"
#include "schemes/schemes.h"
#include "views/entropy.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace plab {
class HfModel;
namespace hf {
class Tokenizer;
}
} // namespace plab

namespace plab::python {

namespace py = pybind11;

// A float32 C-contiguous view of a Python object passed as argument `name`, and the array that owns its memory.
// float32 C-contiguous NumPy arrays are read in place; a float32 array of another layout and float64/float16 arrays are
// converted (one copy) unless `copy` is false; any other dtype (integers, bool, complex, object) and a wrong rank are
// refused with ValueError naming `name`, its dtype or shape and what is allowed.
struct FloatInput {
    py::array_t<float, py::array::c_style | py::array::forcecast> array;
    std::vector<long> shape;
    const float* data() const { return array.data(); }
};
FloatInput floatInput(const py::handle& object, const std::string& name, const std::vector<int>& ranks,
                      const std::string& expected, bool copy);

// A NumPy array that takes over `values` without copying them (its memory is freed with the array).
template <typename T>
py::array_t<T> toNumpy(std::vector<T>&& values, const std::vector<long>& shape)
{
    auto* owned = new std::vector<T>(std::move(values));
    py::capsule free(owned, [](void* p) { delete static_cast<std::vector<T>*>(p); });
    std::vector<py::ssize_t> dims(shape.begin(), shape.end());
    return py::array_t<T>(dims, owned->data(), free);
}
template <typename T>
py::array_t<T> toNumpy(const std::vector<T>& values)
{
    return toNumpy(std::vector<T>(values), {static_cast<long>(values.size())});
}

// Python keyword parameters as core's NAME=VALUE settings: `num_buckets=32` is "num-buckets=32" (underscores read as
// the dashes of core's names). Numbers only (bool as 0/1); anything else is refused naming the keyword.
std::vector<std::string> settingsFromKwargs(const py::kwargs& params);

// The scheme word as the CLI reads it: "rope+yarn" is rope under yarn. `scaling` (None: none, or the word's method)
// must agree with the word's method when both name one (ValueError naming both otherwise).
struct SchemeWord {
    std::string scheme;
    std::string scaling;
};
SchemeWord schemeWord(const std::string& word, const py::object& scaling);

// The OpenMP thread count for one call (threads=None: the process's own), restored when the scope ends. ValueError
// naming threads outside [1, 1024].
class ThreadScope {
public:
    explicit ThreadScope(const py::object& threads);
    ~ThreadScope();
    ThreadScope(const ThreadScope&) = delete;
    ThreadScope& operator=(const ThreadScope&) = delete;

private:
    int m_previous = 0;
};

// Core's InputError -> ValueError and RunError -> RuntimeError, with core's message (its parameter first, as
// "scaling: 'x' is not a known method", when the message is about one setting and does not start with its name).
void registerExceptions(py::module_& module);

// The bindings, one function per source file.
void bindSchemes(py::module_& module); // schemes, bias, frequencies, dot, entropy, attention
void bindHf(py::module_& module);      // Model (Hugging Face folders)
void bindLab(py::module_& module);     // LabModel, load, train

// generate()'s shared part (bind_generate.cpp). The options from the keywords (max_new, scaling and the method's
// parameters, temperature, top_k, seed, stop ids), checked by core with ValueError naming the keyword; parameters with
// scaling=None retune `ownScaling`, the model's own method.
GenerateOptions generateOptions(int maxNew, const py::object& scaling, double temperature, int topK,
                                unsigned long long seed, const py::object& stop, const py::kwargs& params,
                                const std::string& ownScaling);
// Runs `run` with the GIL released and threads= applied; callback(id) is called (GIL held) with each new token id and
// stops the generation by returning False (an exception it raises stops it and is raised again). The result as a dict:
// ids (int32 array of the new tokens), canceled, positions, prefill_ms, decode_tokens_per_s, cache_bytes.
py::dict runGenerate(const std::function<GenerateResult(const GeneratedToken&)>& run, const py::object& callback,
                     const py::object& threads);

// Model.task()'s keywords (bind_task.cpp); None takes core's default (retrievalDefaults) where the CLI has one.
struct TaskArguments {
    py::object task, lengths, depths, compare, examples;
    unsigned long long seed = 1;
    std::string score = "exact";
    py::object text, corpus, scalingLayers;
    bool returnExamples = false;
    py::object progress, threads;
};
// The retrieval task of `a` on a folder's model, as `eval DIR --task` runs it (its options' checks with ValueError
// naming the keyword): a dict of NumPy columns method, label, length, depth, examples, correct, accuracy (and
// mean_rank for score='loglik') plus canceled; with return_examples also the list of the scored examples, each the
// dict of the CLI's --examples-out line.
py::object runFolderTask(const HfModel& model, const hf::Tokenizer& tokenizer, const TaskArguments& a);

// entropy's table as NumPy columns: length, head, entropy_last, entropy_mean (nats), as the CLI's CSV names them.
py::dict entropyColumns(const std::vector<EntropyPoint>& points);
// eval's table as NumPy columns: length, loss, perplexity, tokens and the bits column, `bitsName` (bits_per_byte for
// the lab's byte models, bits_per_token for a Hugging Face folder), as eval -o x.json names them.
py::dict evalColumns(const std::vector<EvalPoint>& points, const char* bitsName);

} // namespace plab::python
