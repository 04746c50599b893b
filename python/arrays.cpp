// NumPy arrays in and out, keyword parameters as settings, threads= and core's errors for the positionlab module.
#include "arrays.h"

#include "base/errors.h"
#include "schemes/rotary_scaling.h"

#include <omp.h>

#include <cmath>
#include <limits>

namespace plab::python {

namespace {

std::string shapeText(const py::array& a)
{
    std::string s = "(";
    for (py::ssize_t i = 0; i < a.ndim(); ++i)
        s += (i ? ", " : "") + std::to_string(a.shape(i));
    return s + (a.ndim() == 1 ? ",)" : ")");
}

std::string dtypeText(const py::array& a)
{
    return py::str(a.dtype()).cast<std::string>();
}

} // namespace

FloatInput floatInput(const py::handle& object, const std::string& name, const std::vector<int>& ranks,
                      const std::string& expected, bool copy)
{
    if (!py::isinstance<py::array>(object))
        throw py::value_error(name + ": a " + std::string(py::str(object.get_type().attr("__name__"))) +
                              " is not allowed; allowed: a NumPy float32 array " + expected);
    const py::array a = py::reinterpret_borrow<py::array>(object);
    const char kind = a.dtype().kind();
    const bool float32 = a.dtype().is(py::dtype::of<float>());
    if (kind != 'f')
        throw py::value_error(name + ": dtype " + dtypeText(a) +
                              " is not allowed; allowed: float32 (float64 and float16 are converted)");
    bool rankAllowed = false;
    std::string rankList;
    for (int r : ranks) {
        rankAllowed = rankAllowed || a.ndim() == r;
        rankList += (rankList.empty() ? "" : " or ") + std::to_string(r);
    }
    if (!rankAllowed)
        throw py::value_error(name + ": shape " + shapeText(a) + " has " + std::to_string(a.ndim()) +
                              " dimensions; allowed: " + rankList + " dimensions, " + expected);
    const bool inPlace = float32 && (a.flags() & py::array::c_style);
    if (!inPlace && !copy)
        throw py::value_error(name + ": a " + dtypeText(a) + (float32 ? " array that is not C-contiguous" : " array") +
                              " needs a copy, which copy=False refuses; allowed: a C-contiguous float32 array "
                              "(numpy.ascontiguousarray(x, dtype=numpy.float32)), or copy=True");
    FloatInput in;
    in.array = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(a); // in place when it can be
    if (!in.array)
        throw py::value_error(name + ": the " + dtypeText(a) + " array could not be converted to float32");
    for (py::ssize_t i = 0; i < in.array.ndim(); ++i) {
        in.shape.push_back(static_cast<long>(in.array.shape(i)));
        if (in.shape.back() < 1)
            throw py::value_error(name + ": shape " + shapeText(a) + " has an empty dimension; allowed: " + expected +
                                  ", every size >= 1");
    }
    // Non-finite values are refused, as the CLI's readNpy refuses them in a file. One branch-free pass first (it
    // vectorises: a NaN or an infinity fails |x| <= FLT_MAX), the element named only when one is there.
    const float* data = in.array.data();
    const py::ssize_t size = in.array.size();
    bool finite = true;
    for (py::ssize_t i = 0; i < size; ++i)
        finite &= std::abs(data[i]) <= std::numeric_limits<float>::max();
    for (py::ssize_t i = 0; !finite && i < size; ++i)
        if (!std::isfinite(data[i]))
            throw py::value_error(name + ": element " + std::to_string(i) + " is " + std::to_string(data[i]) +
                                  "; allowed: finite values");
    return in;
}

std::vector<std::string> settingsFromKwargs(const py::kwargs& params)
{
    std::vector<std::string> settings;
    for (const auto& [key, value] : params) {
        std::string name = py::str(key);
        const std::string keyword = name;
        for (char& c : name)
            if (c == '_')
                c = '-';
        double number = 0;
        if (py::isinstance<py::bool_>(value))
            number = value.cast<bool>() ? 1 : 0;
        else if (py::isinstance<py::int_>(value) || py::isinstance<py::float_>(value) ||
                 py::hasattr(value, "__float__"))
            number = value.cast<double>();
        else
            throw py::value_error(keyword + " = " + std::string(py::repr(value)) +
                                  " is not allowed; allowed: a number (a scheme's or a method's parameter)");
        settings.push_back(name + "=" + exactText(number));
    }
    return settings;
}

SchemeWord schemeWord(const std::string& word, const py::object& scaling)
{
    const auto [scheme, labelMethod] = splitSchemeLabel(word);
    SchemeWord out{scheme, labelMethod};
    if (!scaling.is_none()) {
        const std::string given = py::str(scaling);
        if (labelMethod != "none" && given != labelMethod)
            throw py::value_error("scaling = '" + given + "' disagrees with the method in scheme '" + word +
                                  "'; allowed: one of them, or both the same");
        out.scaling = given;
    }
    return out;
}

ThreadScope::ThreadScope(const py::object& threads) : m_previous(omp_get_max_threads())
{
    if (threads.is_none())
        return;
    const long long n = threads.cast<long long>();
    if (n < 1 || n > 1024)
        throw py::value_error("threads = " + std::to_string(n) + " is out of range; allowed: integers in [1, 1024]");
    omp_set_num_threads(static_cast<int>(n));
}

ThreadScope::~ThreadScope()
{
    omp_set_num_threads(m_previous);
}

namespace {

std::string pythonMessage(const ParameterError& e)
{
    const std::string what = e.what();
    const std::string& p = e.parameter();
    if (p.empty() || what.rfind(p, 0) == 0)
        return what;
    return p + ": " + what;
}

} // namespace

void registerExceptions(py::module_& module)
{
    (void)module;
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p)
                std::rethrow_exception(p);
        } catch (const InputError& e) {
            PyErr_SetString(PyExc_ValueError, pythonMessage(e).c_str());
        } catch (const RunError& e) {
            PyErr_SetString(PyExc_RuntimeError, pythonMessage(e).c_str());
        }
    });
}

py::dict entropyColumns(const std::vector<EntropyPoint>& points)
{
    std::vector<long long> length, head;
    std::vector<double> last, mean;
    for (const EntropyPoint& p : points) {
        length.push_back(p.length);
        head.push_back(p.head);
        last.push_back(p.entropyLast);
        mean.push_back(p.entropyMean);
    }
    py::dict d;
    d["length"] = toNumpy(length);
    d["head"] = toNumpy(head);
    d["entropy_last"] = toNumpy(last);
    d["entropy_mean"] = toNumpy(mean);
    return d;
}

py::dict evalColumns(const std::vector<EvalPoint>& points, const char* bitsName)
{
    std::vector<long long> length, tokens;
    std::vector<double> loss, perplexity, bits;
    for (const EvalPoint& p : points) {
        length.push_back(p.length);
        loss.push_back(p.loss);
        perplexity.push_back(p.perplexity);
        bits.push_back(p.bitsPerByte);
        tokens.push_back(static_cast<long long>(p.tokens));
    }
    py::dict d;
    d["length"] = toNumpy(length);
    d["loss"] = toNumpy(loss);
    d["perplexity"] = toNumpy(perplexity);
    d[bitsName] = toNumpy(bits);
    d["tokens"] = toNumpy(tokens);
    return d;
}

} // namespace plab::python
