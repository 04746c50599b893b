# Lesson 4's Figure 1 from Python: four byte-level models (sinusoidal, RoPE, ALiBi, local) trained at context 32
# (preset demo) and evaluated at 32 ... 512 bytes: the ALiBi paper's Figure 1 in miniature. POSITIONLAB_STEPS=N trains
# N steps instead of the preset's (the test suite's quick run).
import os
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

import positionlab as pl

out = sys.argv[1] if len(sys.argv) > 1 else "lesson4_figure1.png"
steps = int(os.environ["POSITIONLAB_STEPS"]) if "POSITIONLAB_STEPS" in os.environ else None
lengths = [32, 64, 128, 256, 512]

fig, ax = plt.subplots(figsize=(6.5, 4))
for scheme in ["sinusoidal", "rope", "alibi", "local"]:
    model = pl.train(scheme, preset="demo", steps=steps,
                     progress=lambda p: print("  %s step %d/%d loss %.3f" % (scheme, p["step"], p["steps"], p["loss"]))
                     if p["step"] == p["steps"] else None)
    curve = model.eval(lengths, max_tokens=16384)  # the demo preset's held-out bytes per length, as the lesson
    print("%-10s %s" % (scheme, "  ".join("%d: %.2f" % (n, p) for n, p in zip(curve["length"], curve["perplexity"]))))
    ax.plot(curve["length"], curve["perplexity"], marker="o", label=scheme)
ax.axvline(32, color="grey", linestyle=":", label="training context")
ax.set_xscale("log", base=2)
ax.set_yscale("log")
ax.set_xlabel("evaluation length (bytes)")
ax.set_ylabel("perplexity")
ax.set_title("Train short, test long (lesson 4, Figure 1)")
ax.legend()
fig.tight_layout()
fig.savefig(out, dpi=100)
print("wrote", os.path.abspath(out))
