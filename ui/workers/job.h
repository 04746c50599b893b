// LatestJob: runs a view's work on the thread pool (QtConcurrent + QPromise), reports progress, delivers only the
// newest request's result; a request arriving while one runs cancels the running one and waits its turn.
#pragma once

#include "workers/compute.h"

#include <QFutureWatcher>
#include <QObject>
#include <QPromise>
#include <QtConcurrent>

#include <functional>
#include <optional>

namespace plab::ui {

template <class Result>
class LatestJob {
public:
    using Work = std::function<Result(const JobControl&)>;
    struct Callbacks {
        std::function<void(Result)> done;       // GUI thread, the newest request's result
        std::function<void(int, int)> progress; // GUI thread
        std::function<void()> idle;             // GUI thread, nothing left to run (done or canceled)
    };

    LatestJob(QObject* owner, Callbacks callbacks)
        : m_callbacks(std::move(callbacks)), m_watcher(new QFutureWatcher<Result>(owner))
    {
        QObject::connect(m_watcher, &QFutureWatcherBase::finished, owner, [this] { onFinished(); });
        QObject::connect(m_watcher, &QFutureWatcherBase::progressValueChanged, owner, [this](int value) {
            // A canceled job's late reports would put back the "…% left" a Cancel has replaced.
            if (m_callbacks.progress && !m_canceled)
                m_callbacks.progress(value, m_watcher->progressMaximum());
        });
    }

    void start(Work work)
    {
        // In flight until its "finished" is handled, not merely until the worker returns: a job can be done while
        // its "finished" still waits in the event queue, and launching now would leave the older pending work to be
        // launched by that late "finished", replacing this newer one.
        m_canceled = false;
        if (m_inFlight) {
            m_pending = std::move(work);
            m_watcher->cancel();
            return;
        }
        launch(std::move(work));
    }

    void cancel()
    {
        m_pending.reset();
        if (m_inFlight) {
            m_canceled = true;
            m_watcher->cancel();
        }
    }

    // Canceled and not started again: the worker may still be finishing its current step, but no progress of it is
    // reported and no result delivered.
    bool isCanceled() const { return m_canceled; }

    // Busy until the newest request's result is delivered (or its cancellation handled).
    bool isRunning() const { return m_inFlight || m_pending.has_value(); }

private:
    void launch(Work work)
    {
        m_inFlight = true;
        m_watcher->setFuture(QtConcurrent::run([work = std::move(work)](QPromise<Result>& promise) {
            JobControl control;
            control.progress = [&promise](int done, int total) {
                promise.setProgressRange(0, total);
                promise.setProgressValue(done);
            };
            control.canceled = [&promise] { return promise.isCanceled(); };
            promise.addResult(work(control));
        }));
    }

    void onFinished()
    {
        if (m_pending) {
            Work next = std::move(*m_pending);
            m_pending.reset();
            launch(std::move(next));
            return;
        }
        m_inFlight = false;
        const QFuture<Result> future = m_watcher->future();
        // Canceled: nothing is shown, even when the worker had already returned before the Cancel.
        if (!m_canceled && !future.isCanceled() && future.resultCount() > 0 && m_callbacks.done)
            m_callbacks.done(future.result());
        if (m_callbacks.idle)
            m_callbacks.idle();
    }

    Callbacks m_callbacks;
    QFutureWatcher<Result>* m_watcher;
    std::optional<Work> m_pending;
    // Launched and its "finished" not handled yet; only one job is ever in flight, so every "finished" belongs to
    // the watched future.
    bool m_inFlight = false;
    bool m_canceled = false;
};

} // namespace plab::ui
