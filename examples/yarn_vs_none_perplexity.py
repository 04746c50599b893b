# YaRN against no method on a Hugging Face folder's perplexity, past its context (positionlab.Model.eval with compare=,
# the numbers of `positionlab-cli eval DIR --compare none,yarn:factor=F`).
import os
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

import positionlab as pl

here = os.path.dirname(os.path.abspath(__file__))
folder = os.environ.get("POSITIONLAB_FOLDER", os.path.join(here, "..", "tests", "data", "hf", "qwen2_text"))
out = sys.argv[1] if len(sys.argv) > 1 else "yarn_vs_none_perplexity.png"

model = pl.Model(folder)
context = model.config["context"]
lengths = [context // 2, context, 2 * context, 4 * context]
text = open(os.path.join(here, "..", "resources", "lessons", "04-train-short-test-long.md"), encoding="utf-8").read()
curves = model.eval(text, lengths, compare=["none", "yarn:factor=4"])
for label, c in curves.items():
    print("%-28s %s" % (label, "  ".join("ppl(%d) %.2f" % (n, p) for n, p in zip(c["length"], c["perplexity"]))))

fig, ax = plt.subplots(figsize=(6.5, 4))
for label, c in curves.items():
    ax.plot(c["length"], c["perplexity"], marker="o", label=label)
ax.axvline(context, color="grey", linestyle=":", label="context %d" % context)
ax.set_xscale("log", base=2)
ax.set_xlabel("window (tokens)")
ax.set_ylabel("perplexity")
ax.set_title("%s: YaRN against none" % os.path.basename(os.path.normpath(folder)))
ax.legend()
fig.tight_layout()
fig.savefig(out, dpi=100)
print("wrote", os.path.abspath(out))
