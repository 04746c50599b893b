// ExportDialog: chooses the export file and, for pictures, the size, resolution and background (Ctrl+E).
#pragma once

#include "painting/export.h"

#include <QCoreApplication>
#include <QDialog>

class QCheckBox;
class QLineEdit;
class QSpinBox;

namespace plab::ui {

class ExportDialog : public QDialog {
    Q_DECLARE_TR_FUNCTIONS(plab::ui::ExportDialog) // the context lupdate gives it (no Q_OBJECT here)
public:
    ExportDialog(const QString& initialPath, const QSize& size, bool dark, QWidget* parent);
    QString path() const;
    ImageOptions options() const;

private:
    QLineEdit* m_path;
    QSpinBox* m_width;
    QSpinBox* m_height;
    QSpinBox* m_dpi;
    QCheckBox* m_dark;
};

} // namespace plab::ui
