// Runs runTraining on the thread pool and hands its snapshots to the GUI thread.
#include "workers/training_run.h"

#include <QtConcurrent>

namespace plab::ui {

TrainingRun::TrainingRun(QObject* parent) : QObject(parent), m_watcher(new QFutureWatcher<TrainSnapshot>(this))
{
    connect(m_watcher, &QFutureWatcherBase::resultReadyAt, this, &TrainingRun::onResult);
    connect(m_watcher, &QFutureWatcherBase::finished, this, &TrainingRun::onFinished);
    connect(m_watcher, &QFutureWatcherBase::progressValueChanged, this,
            [this](int v) { Q_EMIT progress(v, m_watcher->progressMaximum()); });
}

TrainingRun::~TrainingRun()
{
    m_watcher->cancel();
    m_watcher->waitForFinished();
}

bool TrainingRun::start(const TrainRequest& request)
{
    if (m_inFlight)
        return false;
    m_request = request;
    m_error.clear();
    m_inFlight = true;
    m_watcher->setFuture(
        QtConcurrent::run([request](QPromise<TrainSnapshot>& promise) { runTraining(request, promise); }));
    Q_EMIT started();
    return true;
}

void TrainingRun::cancel()
{
    m_watcher->cancel();
}

void TrainingRun::onResult(int index)
{
    const TrainSnapshot s = m_watcher->future().resultAt(index);
    if (!s.error.isEmpty()) {
        m_error = s.error;
        return;
    }
    Q_EMIT snapshot(s);
}

void TrainingRun::onFinished()
{
    m_inFlight = false;
    Q_EMIT finished(m_error, m_watcher->future().isCanceled());
}

} // namespace plab::ui
