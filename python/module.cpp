// The compiled part of `import positionlab` (positionlab._core): version, exceptions and the bindings over core.
#include "arrays.h"

PYBIND11_MODULE(_core, m)
{
    m.doc() = "PositionLab's core (positional encodings, the fused attention kernel, Hugging Face folders, the lab's "
              "models) as NumPy functions.";
    m.attr("__version__") = POSITIONLAB_VERSION;
    plab::python::registerExceptions(m);
    plab::python::bindSchemes(m);
    plab::python::bindHf(m);
    plab::python::bindLab(m);
}
