// Screenshots of the real window for the README: each view driven to a typical state, then grabbed.
#pragma once

#include <QString>

namespace plab::ui {

class MainWindow;

// Drives `window` through every view (training a tiny model for the model views) and writes DIR/<view>.png,
// scaled to `width` pixels. Returns false with a message when a step fails or times out.
bool takeScreenshots(MainWindow& window, const QString& dir, int width, QString* error);
// Only the rotary length-extension pictures (no training): DIR/frequencies-yarn.png, frequencies-llama3.png (the
// Rotary frequencies view of rope + YaRN / Llama 3 at context 64) and compare-rotary.png (rope / rope+yarn /
// rope+rerope side by side), then methods.png: a demo-preset rope model trained in the Train tab and evaluated under
// every method (its "Evaluate under methods" page).
bool takeRotaryScreenshots(MainWindow& window, const QString& dir, int width, QString* error);
// The window at its own size, as it opened on this screen, with the Lessons dock open: DIR/layout-<view>.png for
// every view in a typical state (a short training run for the model views and the Train tab's Continue the text, a
// model with a long file name in Attention on text) and layout-scheme-long.png (the scheme with the longest formula), to check that nothing is
// clipped on a small or a large screen (run it under QT_QPA_PLATFORM=offscreen:configfile=..., see README). With a
// Hugging Face `modelFolder`, also the Your model tab's pages: layout-model-card/attention/sinks/entropy/methods.png.
bool takeLayoutScreenshots(MainWindow& window, const QString& dir, QString* error,
                           const QString& modelFolder = QString());
// The "Your model" tab with the Hugging Face folder `folder` opened as a user opens it: DIR/model-card.png (the
// summary card), model-attention.png (tokens on the axes, the layer x head grid), model-sinks.png, model-entropy.png
// model-methods.png (Evaluate under methods on `methodsText`, empty: the default corpus, at `lengths`) and
// model-continue.png (Continue the text, the prompt repeated to four times the context, own positions beside YaRN).
bool takeModelScreenshots(MainWindow& window, const QString& folder, const QString& dir, QString* error,
                          const QString& methodsText = QString(), const QString& lengths = QString());
// The Train tab at the window's own size running the DroPE recipe on passkey (demo preset, 600 steps): DIR/
// tasks-drope-running.png once the first curves are scored, tasks-drope-done.png at the end (the passkey heatmaps),
// tasks-passkey-heatmap.png (the heatmap widget) and tasks-drope-export.png (the exported picture).
bool takeTaskScreenshots(MainWindow& window, const QString& dir, QString* error);

// Issue 20's controls at the window's own size with the Lessons dock open: DIR/schemes-frequencies-keep.png and
// schemes-frequencies-rotary-fraction.png (rope's p-RoPE and NeoX partial rotary in the Rotary frequencies view),
// schemes-fire-curve.png (a demo fire model trained here, its learned curve beside the untrained one in the Bias tab)
// and schemes-train-options.png (a short rope run with NoPE every 2, Llama 4's temperature, SSMax and the sink logit).
bool takeSchemeScreenshots(MainWindow& window, const QString& dir, QString* error);

} // namespace plab::ui
