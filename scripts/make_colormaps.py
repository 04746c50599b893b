#!/usr/bin/python3
"""Writes the 256-entry colour tables of resources/colormaps/ from matplotlib's published data.

viridis, magma and cividis are the perceptually uniform maps of matplotlib (van der Walt & Smith; Nuñez et al.);
`diverging` is Moreland's cool-warm map (matplotlib "coolwarm") for signed data, centred on 0.
One line per entry: "r g b" as integers 0..255, entry 0 is the low end.
Run: /usr/bin/python3 scripts/make_colormaps.py   (needs python3-matplotlib)
"""
import os

from matplotlib import colormaps

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "resources", "colormaps")
MAPS = {"viridis": "viridis", "magma": "magma", "cividis": "cividis", "diverging": "coolwarm"}

os.makedirs(OUT, exist_ok=True)
for name, source in MAPS.items():
    cmap = colormaps[source].resampled(256)
    lines = [f"# {name}: matplotlib '{source}' resampled to 256 entries, r g b in 0..255"]
    for i in range(256):
        r, g, b, _ = cmap(i)
        lines.append(f"{round(r * 255)} {round(g * 255)} {round(b * 255)}")
    with open(os.path.join(OUT, name + ".txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote", name)
