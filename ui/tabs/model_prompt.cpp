// The "needs a trained model" panel with its "Train a demo model now" button.
#include "tabs/model_prompt.h"

#include "tabs/view_base.h"
#include "workers/training_run.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QVBoxLayout>

namespace plab::ui {

ModelPrompt::ModelPrompt(const QString& message, QWidget* parent) : QWidget(parent)
{
    // Centred, at most 460 pixels wide; narrower in a narrow view (the wrapped texts take the height they need).
    auto* outer = new QVBoxLayout(this);
    auto* row = new QHBoxLayout;
    auto* box = new QWidget(this);
    box->setMinimumWidth(240);
    box->setMaximumWidth(460);
    auto* layout = new QVBoxLayout(box);
    m_message = new QLabel(message, box);
    m_message->setWordWrap(true);
    m_message->setAlignment(Qt::AlignCenter);
    QFont bold = m_message->font();
    bold.setBold(true);
    m_message->setFont(bold);
    layout->addWidget(m_message);
    m_train = new QPushButton(tr("Train a demo model now"), box);
    m_train->setObjectName(QStringLiteral("trainDemoModel"));
    layout->addWidget(m_train, 0, Qt::AlignHCenter);
    m_note = new QLabel(tr("Trains one %1 model with the \"%2\" preset in the background. It is kept, so it is here "
                           "again at the next start.")
                            .arg(QString::fromLatin1(kDemoModelScheme), QString::fromLatin1(kDemoPreset)),
                        box);
    m_note->setWordWrap(true);
    m_note->setAlignment(Qt::AlignCenter);
    layout->addWidget(m_note);
    m_progress = new QProgressBar(box);
    m_progress->hide();
    layout->addWidget(m_progress);
    m_state = new QLabel(box);
    m_state->setWordWrap(true);
    m_state->setAlignment(Qt::AlignCenter);
    layout->addWidget(m_state);
    row->addStretch(1);
    row->addWidget(box, 100); // takes the width before the stretches, up to its maximum
    row->addStretch(1);
    outer->addStretch(1);
    outer->addLayout(row);
    outer->addStretch(1);
    connect(m_train, &QPushButton::clicked, this, &ModelPrompt::trainRequested);
}

void ModelPrompt::watch(TrainingRun* run)
{
    connect(run, &TrainingRun::started, this, [this] {
        m_train->setEnabled(false);
        m_progress->setRange(0, 0);
        m_progress->show();
        m_state->setText(tr("Starting…"));
        m_clock.start();
    });
    connect(run, &TrainingRun::progress, this, [this](int done, int total) {
        m_progress->setRange(0, std::max(1, total));
        m_progress->setValue(done);
    });
    connect(run, &TrainingRun::snapshot, this, [this, run](const TrainSnapshot& s) {
        const TrainRequest& r = run->request();
        if (s.schemeIndex < 0 || s.schemeIndex >= static_cast<int>(r.schemes.size()))
            return;
        const QString scheme = QString::fromStdString(r.schemes[s.schemeIndex]);
        m_state->setText(
            s.trained ? tr("%1: trained and evaluated").arg(scheme)
            : s.step >= r.train.steps
                ? tr("%1: evaluating…").arg(scheme)
                : tr("%1: step %2 of %3, loss %4").arg(scheme).arg(s.step).arg(r.train.steps).arg(s.loss, 0, 'f', 3));
    });
    connect(run, &TrainingRun::finished, this, [this](const QString& error, bool canceled) {
        m_train->setEnabled(true);
        m_progress->hide();
        m_state->setText(canceled ? ViewBase::canceledText(m_clock.elapsed()) : error);
    });
}

QString ModelPrompt::message() const
{
    return m_message->text();
}

QString ModelPrompt::progressText() const
{
    return m_state->text();
}

} // namespace plab::ui
