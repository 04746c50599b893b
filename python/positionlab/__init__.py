# positionlab: PositionLab's core from Python (a pybind11 module over core/; docs/python.md lists every function).
"""PositionLab's core as NumPy functions: schemes, bias, frequencies, dot, entropy, attention (the fused kernel),
Hugging Face folders (Model), the lab's own models (load, train) and the app's pictures (render)."""

from ._core import (  # noqa: F401
    __version__,
    schemes,
    bias,
    frequencies,
    dot,
    entropy,
    attention,
    Model,
    LabModel,
    load,
    train,
)
from ._render_call import render  # noqa: F401

__all__ = ["__version__", "schemes", "bias", "frequencies", "dot", "entropy", "attention", "Model", "LabModel",
           "load", "train", "render"]
