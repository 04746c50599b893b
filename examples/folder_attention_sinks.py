# A Hugging Face folder's exact attention on a text, and its sinks: the share of each query's attention that goes to the
# first token, per head (positionlab.Model.attention: the kernel's probabilities, no Python model code).
# The default folder is a tiny random test model (no sinks to speak of): POSITIONLAB_FOLDER=DIR names a real one.
import os
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

import positionlab as pl

here = os.path.dirname(os.path.abspath(__file__))
folder = os.environ.get("POSITIONLAB_FOLDER", os.path.join(here, "..", "tests", "data", "hf", "qwen2_text"))
out = sys.argv[1] if len(sys.argv) > 1 else "folder_attention_sinks.png"
text = ("Attention sinks: many heads of a trained model send most of each row's attention to the first token, "
        "whatever it says. ") * 2

model = pl.Model(folder)
ids = model.tokenize(text)
layer = model.config["layers"] - 1
probs = model.attention(ids, layer)                 # (heads, T, T), rows sum to 1, 0 above the diagonal
sink = probs[:, 1:, 0].mean(axis=1)                 # each head's mean share on token 0 (rows m >= 1)
print("%s: %d tokens, layer %d; attention on token 0 per head: %s" % (
    model.config["model_type"], len(ids), layer, np.array2string(sink, precision=3)))

fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
image = left.imshow(probs.mean(axis=0), cmap="magma", vmin=0, vmax=1)
left.set_title("layer %d, mean over %d heads" % (layer, probs.shape[0]))
left.set_xlabel("key n")
left.set_ylabel("query m")
fig.colorbar(image, ax=left, shrink=0.8)
right.bar(np.arange(len(sink)), sink)
right.set_ylim(0, 1)
right.set_xlabel("head")
right.set_ylabel("mean attention on the first token")
right.set_title("sinks")
fig.suptitle(os.path.basename(os.path.normpath(folder)))
fig.tight_layout()
fig.savefig(out, dpi=100)
print("wrote", os.path.abspath(out))
