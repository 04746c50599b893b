// The sizes a picture may be written at: the one range behind the CLI's --width, --height and --dpi (their check and
// their help), ui's exporter and the GUI's export dialog. Plain numbers: core draws nothing.
#pragma once

namespace plab {

// Pixels per side of a PNG, or 1/dpi inch units of an SVG or PDF.
constexpr int kMinPictureSide = 64;
constexpr int kMaxPictureSide = 16384;
// Dots per inch stored in a PNG, used for SVG and PDF.
constexpr int kMinPictureDpi = 30;
constexpr int kMaxPictureDpi = 2400;

} // namespace plab
