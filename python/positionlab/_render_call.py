# positionlab.render: any view drawn by the app's painters, headless, through the CLI's own `render` verb in-process.
import os


def _arguments(view, out_path, words, state):
    args = ["render", str(view)] + [str(w) for w in words]
    for key, value in state.items():
        option = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            args.append(option)
        elif isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
            for v in value:  # a repeated option: set=["factor=4", "window=8"]
                args += [option, v]
        elif isinstance(value, (list, tuple)):
            args += [option, ",".join(str(v) for v in value)]  # a list option: lengths=[16, 32, 64]
        else:
            args += [option, str(value)]
    return args + ["-o", os.fspath(out_path)]


def render(view, out_path, *words, **state):
    """Draws `view` (bias, compare, dot, frequencies, entropy, attention, model, train, lesson, ...) into out_path
    (.png, .svg or .pdf) with the app's painters, as `positionlab-cli render VIEW WORDS... --KEY VALUE -o out_path`:
    words are the verb's words (e.g. the scheme), each keyword an option (set=["factor=4"] repeats --set, a list of
    numbers is comma-separated, True is a flag). Returns out_path. ValueError with the CLI's message for bad input."""
    try:
        from . import _render
    except ImportError as e:
        raise RuntimeError("render: this build has no picture module (positionlab._render needs the GUI library, "
                           "POSITIONLAB_BUILD_GUI=ON): " + str(e)) from e
    code, out, err = _render.run_cli(_arguments(view, out_path, words, state))
    message = err.strip()
    if code == 2:
        raise ValueError(message)
    if code != 0:
        raise RuntimeError(message or "render failed with exit code %d" % code)
    return out_path
