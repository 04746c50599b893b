// ViewBase, what every tab of the main window offers (export, data, session, recompute while shown), and CurveViewBase
// for the tabs whose picture is one curve plot.
#pragma once

#include "painting/export.h"
#include "tabs/scheme_panel.h"
#include "workers/compute.h"
#include "workers/job.h"

#include "base/errors.h"

#include <nlohmann/json.hpp>

#include <QWidget>

class QListWidget;

namespace plab::ui {

class CurvePlot;

// Every catalogue scheme with a check box (the entropy and train views' scheme lists).
QListWidget* newSchemeChecklist(const QStringList& checked, QWidget* parent);
QStringList checkedSchemes(const QListWidget* list);
void setCheckedSchemes(QListWidget* list, const QStringList& names);

// A hovered cell's value for the status bar: the number, or "masked (−inf)".
QString hoverValueText(float value);

class ViewBase : public QWidget {
    Q_OBJECT
public:
    using QWidget::QWidget;

    virtual QString viewId() const = 0;    // "bias", "compare", "dot", "entropy", "attention", "train"
    virtual QString viewTitle() const = 0; // the tab's text
    // Picture export (Ctrl+E, copy image, render).
    virtual bool hasPicture() const = 0;
    virtual QString pictureTitle() const { return viewTitle(); }
    virtual QSize defaultImageSize() const { return {1000, 820}; }
    virtual void paintPicture(QPainter& painter, const QRectF& target, const PictureStyle& style) const = 0;
    // Data export (CSV, JSON, NPY through core/base/matrix_output.h); throws core errors.
    virtual bool hasData() const { return hasPicture(); }
    virtual void writeData(std::ostream& out, DataFormat format) const = 0;
    // Session state of the view's own controls; restoreState() validates first and throws InputError.
    virtual nlohmann::json saveState() const { return nlohmann::json::object(); }
    virtual void restoreState(const nlohmann::json&) {}
    virtual void cancelJob() {}
    virtual bool isBusy() const { return false; }
    virtual void setDark(bool) {}
    virtual void resetZoom() {}

    // The panel's state; views recompute only while visible (setActive) and catch up when shown.
    void setPanelState(const PanelState& state);
    void setActive(bool active);
    const PanelState& panelState() const { return m_panel; }
    // Recomputes now if anything changed (tests and the benchmark call this directly).
    void refreshIfDirty();
    // For writeData(): InputError "the <view> view has nothing to export yet" while there is no picture.
    void requirePicture() const;

    PaintFunction paintFunction() const
    {
        return [this](QPainter& p, const QRectF& r, const PictureStyle& s) { paintPicture(p, r, s); };
    }

Q_SIGNALS:
    void hoverText(const QString& text);
    void statusMessage(const QString& text);
    void progress(int done, int total);
    void busyChanged(bool busy);
    void pictureUpdated(); // a new result is shown
    void headRequested(int head);

protected:
    virtual void refresh() = 0; // start the job for the current state
    void markDirty();           // the view's own controls changed
    PanelState m_panel;
    bool m_hasPanel = false;

private:
    bool m_active = false;
    bool m_dirty = true;
};

// A view whose picture is one curve plot (dot, entropy).
class CurveViewBase : public ViewBase {
    Q_OBJECT
public:
    using ViewBase::ViewBase;
    void paintPicture(QPainter& painter, const QRectF& target, const PictureStyle& style) const override;
    void setDark(bool dark) override;
    CurvePlot* plot() const { return m_plot; }

protected:
    CurvePlot* m_plot = nullptr; // created by the derived view
};

// Reads a view's request from its controls (a refusal goes to the status bar) and starts the job on it.
template <class Job, class MakeRequest, class Compute>
void startFromControls(ViewBase* view, Job& job, MakeRequest makeRequest, Compute compute)
{
    decltype(makeRequest()) request;
    try {
        request = makeRequest();
    } catch (const InputError& e) {
        Q_EMIT view->statusMessage(QString::fromStdString(e.what()));
        return;
    }
    Q_EMIT view->busyChanged(true);
    job.start([request, compute](const JobControl& control) { return compute(request, control); });
}

} // namespace plab::ui
