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

#include <functional>
#include <vector>

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
    // The view's background work: by default its ViewJobs (a view with other work overrides both).
    virtual void cancelJob();
    virtual bool isBusy() const;
    virtual void setDark(bool) {}
    virtual void resetZoom() {}
    // Whether the view reads the scheme panel: the window hides the panel on the tabs that do not.
    virtual bool usesSchemePanel() const { return true; }

    // What every Cancel leaves in a status line: "Canceled after 12.3 s." (the time since the work started).
    static QString canceledText(qint64 elapsedMs);
    // A duration for an estimate: "45 s", "4 min 50 s".
    static QString durationText(double seconds);

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

public:
    // What cancelJob() and isBusy() see of a ViewJob, whatever its result type.
    class JobHandle {
    public:
        virtual void cancel() = 0;
        virtual bool isRunning() const = 0;

    protected:
        ~JobHandle() = default;
    };

protected:
    virtual void refresh() = 0; // start the job for the current state
    void markDirty();           // the view's own controls changed
    PanelState m_panel;
    bool m_hasPanel = false;

private:
    template <class Result>
    friend class ViewJob;
    std::vector<JobHandle*> m_jobs; // the view's ViewJobs, members of the view: they live as long as it
    bool m_active = false;
    bool m_dirty = true;
};

// A view's background job (LatestJob: the newest request wins). Its progress and its end reach the window through
// the view's progress() and busyChanged() signals; start() announces busyChanged(true); the view's cancelJob() and
// isBusy() cover it.
template <class Result>
class ViewJob final : public ViewBase::JobHandle {
public:
    using Work = typename LatestJob<Result>::Work;
    // `done` gets the newest request's result on the GUI thread.
    ViewJob(ViewBase* view, std::function<void(Result)> done)
        : m_view(view),
          m_job(view, {std::move(done), [view](int done, int total) { Q_EMIT view->progress(done, total); },
                       [view] { Q_EMIT view->busyChanged(false); }})
    {
        view->m_jobs.push_back(this);
    }
    ViewJob(const ViewJob&) = delete;
    ViewJob& operator=(const ViewJob&) = delete;

    void start(Work work)
    {
        Q_EMIT m_view->busyChanged(true);
        m_job.start(std::move(work));
    }
    void cancel() override { m_job.cancel(); }
    bool isRunning() const override { return m_job.isRunning(); }
    bool isCanceled() const { return m_job.isCanceled(); } // canceled, its worker perhaps still finishing a step

private:
    ViewBase* m_view;
    LatestJob<Result> m_job;
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
template <class Result, class MakeRequest, class Compute>
void startFromControls(ViewBase* view, ViewJob<Result>& job, MakeRequest makeRequest, Compute compute)
{
    decltype(makeRequest()) request;
    try {
        request = makeRequest();
    } catch (const InputError& e) {
        Q_EMIT view->statusMessage(QString::fromStdString(e.what()));
        return;
    }
    job.start([request, compute](const JobControl& control) { return compute(request, control); });
}

} // namespace plab::ui
