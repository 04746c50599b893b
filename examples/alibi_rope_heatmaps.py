# ALiBi's and RoPE's bias heatmaps from positionlab.bias (the numbers the app's Bias tab draws), with matplotlib.
import os
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

import positionlab as pl

out = sys.argv[1] if len(sys.argv) > 1 else "alibi_rope_heatmaps.png"
N = 64
alibi = pl.bias("alibi", N, heads=8)       # (8, N, N): -slope_h (m - n), -inf above the diagonal
rope = pl.bias("rope", N, heads=1)[0]      # the rotary probe score with q = k = all-ones, dim 64

fig, axes = plt.subplots(1, 3, figsize=(13, 4))
for ax, matrix, title in [(axes[0], alibi[0], "ALiBi, head 0 (steepest slope)"),
                          (axes[1], alibi[7], "ALiBi, head 7 (gentlest slope)"),
                          (axes[2], rope, "RoPE probe score (dim 64)")]:
    shown = np.ma.masked_invalid(np.where(np.isinf(matrix), np.nan, matrix))  # masked cells blank
    image = ax.imshow(shown, cmap="viridis", origin="upper")
    ax.set_title(title)
    ax.set_xlabel("key n")
    ax.set_ylabel("query m")
    fig.colorbar(image, ax=ax, shrink=0.8)
fig.suptitle("positionlab.bias(scheme, %d) (causal: cells n > m are masked)" % N)
fig.tight_layout()
fig.savefig(out, dpi=100)
print("wrote", os.path.abspath(out))
