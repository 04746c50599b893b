// positionlab._render: the CLI's `render` verb run in-process (app/cli/verbs_render.cpp: arguments -> ui's requests ->
// ui's headless painters), so Python's render() draws every view exactly as `positionlab-cli render` does. A module of
// its own: `import positionlab` loads no Qt until a picture is asked for.
#include "cli.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <sstream>
#include <string>
#include <vector>

namespace py = pybind11;

PYBIND11_MODULE(_render, m)
{
    m.doc() = "The CLI's render verb in-process (positionlab.render wraps it).";
    plab::cli::registerRenderVerbs();
    m.def(
        "run_cli",
        [](const std::vector<std::string>& args) {
            std::ostringstream out, err;
            int code = 0;
            {
                py::gil_scoped_release release;
                code = plab::cli::runCli(args, out, err);
            }
            return py::make_tuple(code, out.str(), err.str());
        },
        py::arg("args"), "Runs positionlab-cli with `args` (the verb first); returns (exit code, stdout, stderr).");
}
