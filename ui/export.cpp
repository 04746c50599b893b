// Image and data export: one PaintFunction drawn onto a QImage, a QSvgGenerator or a QPdfWriter.
#include "export.h"

#include "atomic_file.h"
#include "errors.h"

#include <QBuffer>
#include <QClipboard>
#include <QGuiApplication>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QSvgGenerator>

namespace plab::ui {

namespace {

QString suffixOf(const QString &path)
{
    const int dot = path.lastIndexOf(QLatin1Char('.'));
    const int slash = path.lastIndexOf(QLatin1Char('/'));
    return dot > slash ? path.mid(dot + 1).toLower() : QString();
}

PictureStyle styleFor(const ImageOptions &options, bool vector)
{
    PictureStyle style = PictureStyle::forSize(options.size, options.dark);
    style.vectorOutput = vector;
    return style;
}

void checkSize(const ImageOptions &options)
{
    if (options.size.width() < 64 || options.size.height() < 64 || options.size.width() > 16384 ||
        options.size.height() > 16384)
        throw InputError("image size " + std::to_string(options.size.width()) + " x " +
                         std::to_string(options.size.height()) + " is out of range; allowed: 64..16384 pixels per side");
    if (options.dpi < 30 || options.dpi > 2400)
        throw InputError("dpi = " + std::to_string(options.dpi) + " is out of range; allowed: integers in [30, 2400]");
}

} // namespace

bool isImageFile(const QString &path)
{
    const QString s = suffixOf(path);
    return s == QLatin1String("png") || s == QLatin1String("svg") || s == QLatin1String("pdf");
}

bool isDataFile(const QString &path)
{
    const QString s = suffixOf(path);
    return s == QLatin1String("csv") || s == QLatin1String("json") || s == QLatin1String("npy");
}

ImageFormat imageFormatForPath(const QString &path)
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

QImage renderImage(const ImageOptions &options, const PaintFunction &paint)
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

QByteArray renderSvg(const ImageOptions &options, const PaintFunction &paint, const QString &title)
{
    checkSize(options);
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    QSvgGenerator svg;
    svg.setOutputDevice(&buffer);
    svg.setSize(options.size);
    svg.setViewBox(QRect(QPoint(0, 0), options.size));
    svg.setResolution(options.dpi);
    svg.setTitle(title);
    svg.setDescription(QStringLiteral("PositionLab"));
    QPainter painter(&svg);
    paint(painter, QRectF(QPointF(0, 0), QSizeF(options.size)), styleFor(options, true));
    painter.end();
    return bytes;
}

QByteArray renderPdf(const ImageOptions &options, const PaintFunction &paint, const QString &title)
{
    checkSize(options);
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    {
        QPdfWriter pdf(&buffer);
        pdf.setTitle(title);
        pdf.setCreator(QStringLiteral("PositionLab"));
        pdf.setResolution(options.dpi);
        // A page exactly the picture's size, no margins: 1 device unit = 1/dpi inch.
        pdf.setPageSize(QPageSize(QSizeF(options.size) / options.dpi, QPageSize::Inch));
        pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
        QPainter painter(&pdf);
        const QRectF target(QPointF(0, 0), QSizeF(pdf.width(), pdf.height()));
        paint(painter, target, styleFor(options, true));
        painter.end();
    }
    return bytes;
}

void writeImageFile(const QString &path, const ImageOptions &options, const PaintFunction &paint, const QString &title)
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

void writeDataFile(const QString &path, const DataFunction &write)
{
    const DataFormat format = dataFormatForPath(path.toStdString(), true);
    AtomicFile file(path.toStdString());
    write(file.stream(), format);
    file.commit();
}

void copyImageToClipboard(const ImageOptions &options, const PaintFunction &paint)
{
    if (QClipboard *clipboard = QGuiApplication::clipboard())
        clipboard->setImage(renderImage(options, paint));
}

} // namespace plab::ui
