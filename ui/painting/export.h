// Exports of every view: pictures as PNG (size, DPI), SVG and PDF from the same painter code, data files via
// core/base/matrix_output.h, and the clipboard. Files are written atomically.
#pragma once

#include "painting/heatmap_painter.h"

#include "base/matrix_output.h"

#include <QImage>
#include <QSize>
#include <QString>

#include <functional>
#include <ostream>

class QPainter;

namespace plab::ui {

enum class ImageFormat { Png, Svg, Pdf };

struct ImageOptions {
    QSize size{1000, 820}; // pixels (PNG) or 1/dpi inch units (SVG, PDF)
    int dpi = 96;
    bool dark = false;
};

// Paints a picture into `target` with `style`; every view provides one.
using PaintFunction = std::function<void(QPainter&, const QRectF& target, const PictureStyle& style)>;
// Writes a view's data in a format; throws core errors.
using DataFunction = std::function<void(std::ostream&, DataFormat)>;

bool isImageFile(const QString& path);
bool isDataFile(const QString& path);
// The format from the extension; throws InputError naming it and the allowed ones.
ImageFormat imageFormatForPath(const QString& path);

QImage renderImage(const ImageOptions& options, const PaintFunction& paint);
QByteArray renderSvg(const ImageOptions& options, const PaintFunction& paint, const QString& title);
QByteArray renderPdf(const ImageOptions& options, const PaintFunction& paint, const QString& title);

// Renders in the format of the path's extension and writes it atomically; throws InputError / RunError.
void writeImageFile(const QString& path, const ImageOptions& options, const PaintFunction& paint, const QString& title);
// Writes data (CSV, JSON, NPY by extension) atomically; throws InputError / RunError.
void writeDataFile(const QString& path, const DataFunction& write);
// Puts the PNG rendering on the clipboard.
void copyImageToClipboard(const ImageOptions& options, const PaintFunction& paint);

} // namespace plab::ui
