// "Continue the text" in the background (worker side): a prompt, repeated to a length, continued token by token under
// the model's own positions and under a chosen method through core's KV-cache generation, streamed as snapshots.
#pragma once

#include "workers/hf_compute.h"
#include "workers/model_compute.h"

#include "runs/method_comparison.h"

#include <QFutureWatcher>
#include <QObject>
#include <QPromise>
#include <QString>

#include <cstdint>
#include <vector>

namespace plab::ui {

// What is continued: a Hugging Face folder (its tokenizer's tokens) or a lab byte model (bytes); exactly one is set.
struct GenerationModel {
    HfModelPtr folder;
    SharedModel lab;
    bool isValid() const { return folder != nullptr || lab.isValid(); }
    int context() const;      // the training context, in the model's tokens
    const char* unit() const; // "token" or "byte"
    bool rotary() const;      // whether a length-extension method applies
};

// The prompt's length as the page shows it before a run: its tokens after the repeat, against the context; `error`
// holds the tokenizer's or the repeat rule's refusal (then tokens is 0).
struct PromptLength {
    QString error;
    int tokens = 0;
    int context = 0;
};
PromptLength promptLength(const GenerationModel& model, const QString& text, int repeatTo);

struct GenerationRequest {
    GenerationModel model;
    QString prompt;
    int repeatTo = 0;    // the tab's Repeat to (repeatedTokens): 0 off
    MethodChoice method; // the second continuation's (its settings on top of core's defaults for this length)
    int maxNew = 32;
    double temperature = 0; // 0: greedy (the default); else sampled at this temperature
    int topK = 0;           // sampled: only the k likeliest tokens (0: all)
    uint64_t seed = 0;
};

// One side's state as it grows: sent when a side starts, every few tokens, and when it ends.
struct GenerationSnapshot {
    int side = 0;             // 0: the model's own positions, 1: the method
    QString positions;        // what that side runs under, as core names it ("rope+yarn (factor 4)")
    QString error;            // core's refusal of this side (the other side still runs)
    int promptTokens = 0;     // after the repeat
    QString promptTail;       // the prompt's end as text (the start elided), what the continuation follows
    std::vector<int> ids;     // the new tokens so far
    QString text;             // their text through the folder's tokenizer (bytes as UTF-8 for a lab model)
    double prefillMs = 0;     // core's timing of the prompt's pass
    double tokensPerSecond = 0; // core's decode rate so far
    bool done = false;
};

// Both sides, the model's own first: runs core's generation and adds a snapshot to `promise` as tokens come; stops at
// the next token once the promise is canceled.
void runGeneration(const GenerationRequest& request, QPromise<GenerationSnapshot>& promise);

// runGeneration on the thread pool, its snapshots delivered on the GUI thread in order.
class GenerationRun : public QObject {
    Q_OBJECT
public:
    explicit GenerationRun(QObject* parent = nullptr);
    ~GenerationRun() override; // cancels and waits (the worker holds a copy of the request)

    // False (nothing started) while a run is in flight: in flight until its end is handled.
    bool start(const GenerationRequest& request);
    void cancel();
    bool isRunning() const { return m_inFlight; }

Q_SIGNALS:
    void snapshot(const plab::ui::GenerationSnapshot& snapshot);
    void finished(bool canceled);

private:
    QFutureWatcher<GenerationSnapshot>* m_watcher;
    bool m_inFlight = false;
};

} // namespace plab::ui
