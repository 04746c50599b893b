// A training run in the background: runTraining on the thread pool, its snapshots, progress and end delivered on
// the GUI thread. The Train tab and "Train a demo model now" (attention and entropy views, lessons) share it.
#pragma once

#include "workers/model_compute.h"

#include <QFutureWatcher>
#include <QObject>

namespace plab::ui {

class TrainingRun : public QObject {
    Q_OBJECT
public:
    explicit TrainingRun(QObject* parent = nullptr);
    ~TrainingRun() override; // cancels the run and waits for it (it holds a copy of the request, not references)

    // Starts `request`; false (and nothing started) while a run is in flight. A run is in flight until its end is
    // handled, not merely until the worker returns: its last snapshots may still wait in the event queue.
    bool start(const TrainRequest& request);
    void cancel();
    bool isRunning() const { return m_inFlight; }
    const TrainRequest& request() const { return m_request; } // the running or last run's

Q_SIGNALS:
    void started();
    void snapshot(const plab::ui::TrainSnapshot& snapshot); // every streamed update except errors, in order
    void progress(int done, int total);
    // Empty `error` and not canceled: every scheme trained and evaluated.
    void finished(const QString& error, bool canceled);

private:
    void onResult(int index);
    void onFinished();
    QFutureWatcher<TrainSnapshot>* m_watcher;
    TrainRequest m_request;
    QString m_error;
    bool m_inFlight = false;
};

} // namespace plab::ui
