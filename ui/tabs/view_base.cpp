// ViewBase's recompute-while-shown logic, the scheme check lists and CurveViewBase's picture.
#include "tabs/view_base.h"

#include "charts/curve_chart.h"
#include "settings/i18n.h"

#include "base/errors.h"

#include <QListWidget>

#include <algorithm>
#include <cmath>

namespace plab::ui {

void ViewBase::setPanelState(const PanelState& state)
{
    m_panel = state;
    m_hasPanel = true;
    markDirty();
}

void ViewBase::setActive(bool active)
{
    m_active = active;
    if (m_active)
        refreshIfDirty();
}

void ViewBase::markDirty()
{
    m_dirty = true;
    if (m_active)
        refreshIfDirty();
}

void ViewBase::refreshIfDirty()
{
    if (!m_dirty || !m_hasPanel)
        return;
    m_dirty = false;
    refresh();
}

QString ViewBase::canceledText(qint64 elapsedMs)
{
    return tr("Canceled after %1 s.").arg(static_cast<double>(elapsedMs) / 1000.0, 0, 'f', 1);
}

QString ViewBase::durationText(double seconds)
{
    const long long s = std::llround(std::max(0.0, seconds));
    if (s < 60)
        return tr("%1 s").arg(s);
    return tr("%1 min %2 s").arg(s / 60).arg(s % 60);
}

void ViewBase::cancelJob()
{
    for (JobHandle* job : m_jobs)
        job->cancel();
}

bool ViewBase::isBusy() const
{
    return std::any_of(m_jobs.begin(), m_jobs.end(), [](const JobHandle* job) { return job->isRunning(); });
}

void ViewBase::requirePicture() const
{
    if (!hasPicture())
        throw InputError("the " + viewId().toStdString() + " view has nothing to export yet");
}

QListWidget* newSchemeChecklist(const QStringList& checked, QWidget* parent)
{
    auto* list = new QListWidget(parent);
    for (const SchemeInfo& s : schemeCatalog()) {
        auto* item = new QListWidgetItem(QString::fromStdString(s.name), list);
        item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
        item->setCheckState(checked.contains(item->text()) ? Qt::Checked : Qt::Unchecked);
        item->setToolTip(schemeTitle(s));
    }
    return list;
}

QStringList checkedSchemes(const QListWidget* list)
{
    QStringList out;
    for (int i = 0; i < list->count(); ++i)
        if (list->item(i)->checkState() == Qt::Checked)
            out << list->item(i)->text();
    return out;
}

void setCheckedSchemes(QListWidget* list, const QStringList& names)
{
    for (int i = 0; i < list->count(); ++i)
        list->item(i)->setCheckState(names.contains(list->item(i)->text()) ? Qt::Checked : Qt::Unchecked);
}

QString hoverValueText(float v)
{
    return std::isfinite(v) ? QString::number(v, 'g', 6) : ViewBase::tr("masked (−inf)");
}

// ---- CurveViewBase -------------------------------------------------------------------------------------------

void CurveViewBase::paintPicture(QPainter& painter, const QRectF& target, const PictureStyle& style) const
{
    renderCurveFigure(painter, target, m_plot->figure(), style);
}

void CurveViewBase::setDark(bool dark)
{
    m_plot->setDark(dark);
}

} // namespace plab::ui
