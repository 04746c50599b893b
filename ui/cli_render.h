// Headless rendering for positionlab-cli: the `render` verb and the image exporter behind `bias/dot/entropy -o
// FILE.png|svg|pdf`, drawing the same figures with the same painters as the GUI.
#pragma once

namespace plab::ui {

// Registers `render` and installs the image exporter (app/cli/cli.h). Safe to call more than once.
void installCliRendering();

} // namespace plab::ui
