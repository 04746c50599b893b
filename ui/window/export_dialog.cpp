// ExportDialog: the file, its size in pixels, DPI and background; the extension decides picture or data.
#include "window/export_dialog.h"

#include "base/picture_limits.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>

namespace plab::ui {

ExportDialog::ExportDialog(const QString& initialPath, const QSize& size, bool dark, QWidget* parent) : QDialog(parent)
{
    setWindowTitle(tr("Export"));
    auto* form = new QFormLayout(this);
    auto* row = new QHBoxLayout;
    m_path = new QLineEdit(initialPath, this);
    m_path->setMinimumWidth(360);
    auto* browse = new QPushButton(tr("Browse…"), this);
    row->addWidget(m_path, 1);
    row->addWidget(browse);
    form->addRow(tr("File"), row);
    form->addRow(new QLabel(tr("Pictures: .png .svg .pdf · data: .csv .json .npy (the extension decides)"), this));
    m_width = new QSpinBox(this);
    m_width->setRange(kMinPictureSide, kMaxPictureSide);
    m_width->setValue(size.width());
    m_height = new QSpinBox(this);
    m_height->setRange(kMinPictureSide, kMaxPictureSide);
    m_height->setValue(size.height());
    auto* sizeRow = new QHBoxLayout;
    sizeRow->addWidget(m_width);
    sizeRow->addWidget(new QLabel(QStringLiteral("×"), this));
    sizeRow->addWidget(m_height);
    sizeRow->addWidget(new QLabel(tr("pixels"), this));
    form->addRow(tr("Size"), sizeRow);
    m_dpi = new QSpinBox(this);
    m_dpi->setRange(kMinPictureDpi, kMaxPictureDpi);
    m_dpi->setValue(96);
    form->addRow(tr("DPI"), m_dpi);
    m_dark = new QCheckBox(tr("dark background"), this);
    m_dark->setChecked(dark);
    form->addRow(QString(), m_dark);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Save | QDialogButtonBox::Cancel, this);
    form->addRow(buttons);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString p = QFileDialog::getSaveFileName(
            this, tr("Export"), m_path->text(),
            tr("PNG image (*.png);;SVG vector image (*.svg);;PDF document (*.pdf);;CSV data (*.csv);;"
               "JSON data (*.json);;NumPy array (*.npy)"));
        if (!p.isEmpty())
            m_path->setText(p);
    });
}

QString ExportDialog::path() const
{
    return m_path->text().trimmed();
}

ImageOptions ExportDialog::options() const
{
    ImageOptions o;
    o.size = QSize(m_width->value(), m_height->value());
    o.dpi = m_dpi->value();
    o.dark = m_dark->isChecked();
    return o;
}

} // namespace plab::ui
