// Image and data export: one PaintFunction drawn onto a QImage, a QSvgGenerator or a QPdfWriter.
#include "painting/export.h"

#include "base/atomic_file.h"
#include "base/errors.h"
#include "base/picture_limits.h"

#include <QBuffer>
#include <QClipboard>
#include <QGuiApplication>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QSvgGenerator>

#include <memory>

namespace plab::ui {

namespace {

QString suffixOf(const QString& path)
{
    const int dot = path.lastIndexOf(QLatin1Char('.'));
    const int slash = path.lastIndexOf(QLatin1Char('/'));
    return dot > slash ? path.mid(dot + 1).toLower() : QString();
}

PictureStyle styleFor(const ImageOptions& options, bool vector)
{
    PictureStyle style = PictureStyle::forSize(options.size, options.dark);
    style.vectorOutput = vector;
    return style;
}

void checkSize(const ImageOptions& options)
{
    const auto inside = [](int v, int lo, int hi) { return v >= lo && v <= hi; };
    if (!inside(options.size.width(), kMinPictureSide, kMaxPictureSide) ||
        !inside(options.size.height(), kMinPictureSide, kMaxPictureSide))
        throw InputError("image size " + std::to_string(options.size.width()) + " x " +
                         std::to_string(options.size.height()) + " is out of range; allowed: " +
                         std::to_string(kMinPictureSide) + ".." + std::to_string(kMaxPictureSide) + " pixels per side");
    if (!inside(options.dpi, kMinPictureDpi, kMaxPictureDpi))
        throw InputError("dpi = " + std::to_string(options.dpi) + " is out of range; allowed: integers in [" +
                         std::to_string(kMinPictureDpi) + ", " + std::to_string(kMaxPictureDpi) + "]");
}

// Paints onto the vector device `makeDevice` sets up on an in-memory buffer, the whole device being the picture.
template <class MakeDevice>
QByteArray renderVector(const ImageOptions& options, const PaintFunction& paint, MakeDevice makeDevice)
{
    checkSize(options);
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    {
        const auto device = makeDevice(buffer); // finishes its file when it goes
        QPainter painter(device.get());
        paint(painter, QRectF(QPointF(0, 0), QSizeF(device->width(), device->height())), styleFor(options, true));
        painter.end();
    }
    return bytes;
}

} // namespace

bool isImageFile(const QString& path)
{
    const QString s = suffixOf(path);
    return s == QLatin1String("png") || s == QLatin1String("svg") || s == QLatin1String("pdf");
}

bool isDataFile(const QString& path)
{
    const QString s = suffixOf(path);
    return s == QLatin1String("csv") || s == QLatin1String("json") || s == QLatin1String("npy");
}

ImageFormat imageFormatForPath(const QString& path)
{
    const QString s = suffixOf(path);
    if (s == QLatin1String("png"))
        return ImageFormat::Png;
    if (s == QLatin1String("svg"))
        return ImageFormat::Svg;
    if (s == QLatin1String("pdf"))
        return ImageFormat::Pdf;
    throw InputError("-o " + path.toStdString() + ": unknown picture extension '." + s.toStdString() +
                     "'; allowed: .png, .svg, .pdf");
}

QImage renderImage(const ImageOptions& options, const PaintFunction& paint)
{
    checkSize(options);
    QImage image(options.size, QImage::Format_ARGB32_Premultiplied);
    const int dotsPerMeter = static_cast<int>(options.dpi / 0.0254 + 0.5);
    image.setDotsPerMeterX(dotsPerMeter);
    image.setDotsPerMeterY(dotsPerMeter);
    const PictureStyle style = styleFor(options, false);
    image.fill(style.background);
    QPainter painter(&image);
    paint(painter, QRectF(QPointF(0, 0), QSizeF(options.size)), style);
    painter.end();
    return image;
}

QByteArray renderSvg(const ImageOptions& options, const PaintFunction& paint, const QString& title)
{
    return renderVector(options, paint, [&](QBuffer& buffer) {
        auto svg = std::make_unique<QSvgGenerator>();
        svg->setOutputDevice(&buffer);
        svg->setSize(options.size);
        svg->setViewBox(QRect(QPoint(0, 0), options.size));
        svg->setResolution(options.dpi);
        svg->setTitle(title);
        svg->setDescription(QStringLiteral("PositionLab"));
        return svg;
    });
}

QByteArray renderPdf(const ImageOptions& options, const PaintFunction& paint, const QString& title)
{
    return renderVector(options, paint, [&](QBuffer& buffer) {
        auto pdf = std::make_unique<QPdfWriter>(&buffer);
        pdf->setTitle(title);
        pdf->setCreator(QStringLiteral("PositionLab"));
        pdf->setResolution(options.dpi);
        // A page exactly the picture's size, no margins: 1 device unit = 1/dpi inch.
        pdf->setPageSize(QPageSize(QSizeF(options.size) / options.dpi, QPageSize::Inch));
        pdf->setPageMargins(QMarginsF(0, 0, 0, 0));
        return pdf;
    });
}

void writeImageFile(const QString& path, const ImageOptions& options, const PaintFunction& paint, const QString& title)
{
    QByteArray bytes;
    switch (imageFormatForPath(path)) {
    case ImageFormat::Png: {
        const QImage image = renderImage(options, paint);
        QBuffer buffer(&bytes);
        buffer.open(QIODevice::WriteOnly);
        if (!image.save(&buffer, "PNG"))
            throw RunError("could not encode " + path.toStdString() + " as PNG");
        break;
    }
    case ImageFormat::Svg:
        bytes = renderSvg(options, paint, title);
        break;
    case ImageFormat::Pdf:
        bytes = renderPdf(options, paint, title);
        break;
    }
    writeFileAtomically(path.toStdString(), bytes.toStdString());
}

void writeDataFile(const QString& path, const DataFunction& write)
{
    const DataFormat format = dataFormatForPath(path.toStdString(), true);
    AtomicFile file(path.toStdString());
    write(file.stream(), format);
    file.commit();
}

void copyImageToClipboard(const ImageOptions& options, const PaintFunction& paint)
{
    if (QClipboard* clipboard = QGuiApplication::clipboard())
        clipboard->setImage(renderImage(options, paint));
}

} // namespace plab::ui
