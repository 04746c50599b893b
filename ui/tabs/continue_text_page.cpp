// The "Continue the text" page: prompt, repeat, method and sampling fields, two continuations side by side.
#include "tabs/continue_text_page.h"

#include "tabs/fitting_combo.h"
#include "tabs/view_base.h"

#include "base/errors.h"
#include "schemes/rotary_scaling.h"
#include "schemes/schemes.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTextEdit>
#include <QVBoxLayout>

#include <tuple>

namespace plab::ui {

namespace {

const char* kDefaultPrompt = "Once upon a time, in a small town by the sea, there lived an old clockmaker. Every "
                             "morning he opened his shop, wound every clock on the wall, and";

constexpr int kMaxNewTokens = 65536; // the spin box's top: far past any context, and core checks the rest

// Halfway between the text and its background: the prompt's end, read as context, not as the model's words.
QColor dimColor(const QPalette& palette)
{
    const QColor t = palette.color(QPalette::Text), b = palette.color(QPalette::Base);
    return QColor((t.red() + b.red()) / 2, (t.green() + b.green()) / 2, (t.blue() + b.blue()) / 2);
}

// A side's text: the prompt's end dimmed, then the continuation.
QString sideHtml(const GenerationSnapshot& s, const QColor& dim)
{
    return QStringLiteral("<div style=\"white-space: pre-wrap\"><span style=\"color:%1\">%2</span><b>%3</b></div>")
        .arg(dim.name(), s.promptTail.toHtmlEscaped(), s.text.toHtmlEscaped());
}

} // namespace

ContinueTextPage::ContinueTextPage(Source source, QWidget* parent)
    : QWidget(parent), m_source(source), m_run(new GenerationRun(this))
{
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(buildControls());
    auto* sides = new QSplitter(Qt::Horizontal, this);
    sides->setChildrenCollapsible(false);
    for (int side : {0, 1}) {
        sides->addWidget(buildSide(side));
        sides->setStretchFactor(side, 1); // the two continuations equally wide
    }
    layout->addWidget(sides, 1);
    connect(m_run, &GenerationRun::snapshot, this, &ContinueTextPage::onSnapshot);
    connect(m_run, &GenerationRun::finished, this, &ContinueTextPage::onFinished);
    connect(m_prompt, &QPlainTextEdit::textChanged, this, &ContinueTextPage::showPromptLength);
    connect(m_repeat, &QSpinBox::valueChanged, this, &ContinueTextPage::showPromptLength);
    connect(m_method, &QComboBox::currentIndexChanged, this, &ContinueTextPage::showMethodHint);
    connect(m_sampled, &QCheckBox::toggled, this, [this](bool sampled) {
        for (QWidget* w : std::initializer_list<QWidget*>{m_temperature, m_topK, m_seed})
            w->setEnabled(sampled);
    });
    connect(m_continue, &QPushButton::clicked, this, &ContinueTextPage::start);
    connect(m_cancel, &QPushButton::clicked, this, &ContinueTextPage::cancel);
    showMethodHint();
    showPromptLength();
    updateAvailability();
}

ContinueTextPage::~ContinueTextPage() = default; // the run cancels and waits for its worker

QHBoxLayout* ContinueTextPage::buildModelRow(QWidget* box)
{
    auto* row = new QHBoxLayout;
    m_model = new FittingComboBox(box);
    m_model->setObjectName(QStringLiteral("continueModel"));
    connect(m_model, &QComboBox::currentIndexChanged, this, [this] {
        showPromptLength();
        updateAvailability();
    });
    row->addWidget(new QLabel(tr("Model:"), box));
    row->addWidget(m_model, 1);
    return row;
}

QWidget* ContinueTextPage::buildControls()
{
    auto* box = new QWidget(this);
    auto* v = new QVBoxLayout(box);
    v->setContentsMargins(0, 0, 0, 0);
    if (m_source == Source::Lab)
        v->addLayout(buildModelRow(box));
    m_prompt = new QPlainTextEdit(QString::fromLatin1(kDefaultPrompt), box);
    m_prompt->setObjectName(QStringLiteral("continuePrompt"));
    m_prompt->setPlaceholderText(tr("Type or paste the beginning of a text"));
    m_prompt->setMaximumHeight(4 * m_prompt->fontMetrics().lineSpacing() + 2 * m_prompt->frameWidth() + 8);
    v->addWidget(new QLabel(tr("Prompt:"), box));
    v->addWidget(m_prompt);

    // Four short rows, so that the page is no wider than the tab's other pages on a 1366-pixel screen.
    auto* grid = new QGridLayout;
    m_repeat = new QSpinBox(box);
    m_repeat->setObjectName(QStringLiteral("continueRepeat"));
    m_repeat->setRange(0, kHfMaxTokens);
    m_repeat->setSingleStep(256);
    m_repeat->setSpecialValueText(tr("off"));
    m_repeat->setToolTip(tr("Repeat the prompt's tokens until this many, to continue it past the model's context."));
    grid->addWidget(new QLabel(tr("Repeat to:"), box), 0, 0);
    grid->addWidget(m_repeat, 0, 1);
    m_maxNew = new QSpinBox(box);
    m_maxNew->setObjectName(QStringLiteral("continueMaxNew"));
    m_maxNew->setRange(1, kMaxNewTokens);
    m_maxNew->setValue(32);
    auto* maxNewRow = new QHBoxLayout;
    maxNewRow->addWidget(new QLabel(m_source == Source::Lab ? tr("New bytes:") : tr("New tokens:"), box));
    maxNewRow->addWidget(m_maxNew);
    maxNewRow->addStretch(1);
    grid->addLayout(maxNewRow, 0, 2, 1, 2);
    m_promptLength = new QLabel(box);
    m_promptLength->setObjectName(QStringLiteral("continuePromptLength"));
    m_promptLength->setWordWrap(true);
    grid->addWidget(m_promptLength, 1, 0, 1, 4);

    m_method = new FittingComboBox(box);
    m_method->setObjectName(QStringLiteral("continueMethod"));
    for (const RotaryMethodInfo& m : rotaryMethodCatalog())
        m_method->addItem(QString::fromStdString(m.name), QString::fromStdString(m.name));
    m_method->setCurrentIndex(m_method->findData(QStringLiteral("yarn")));
    m_method->setToolTip(tr("The right-hand continuation's positions: a length-extension method applied zero-shot."));
    grid->addWidget(new QLabel(tr("Method:"), box), 2, 0);
    grid->addWidget(m_method, 2, 1);
    m_settings = new QLineEdit(box);
    m_settings->setObjectName(QStringLiteral("continueSettings"));
    auto* settingsRow = new QHBoxLayout;
    settingsRow->addWidget(new QLabel(tr("Settings:"), box));
    settingsRow->addWidget(m_settings, 1);
    grid->addLayout(settingsRow, 2, 2, 1, 2);

    buildSampling(box, grid);
    grid->setColumnStretch(3, 1);
    v->addLayout(grid);

    auto* buttons = new QHBoxLayout;
    m_continue = new QPushButton(tr("Continue"), box);
    m_continue->setObjectName(QStringLiteral("continueStart"));
    m_cancel = new QPushButton(tr("Cancel"), box);
    m_cancel->setObjectName(QStringLiteral("continueCancel"));
    m_cancel->setEnabled(false);
    m_status = new QLabel(box);
    m_status->setObjectName(QStringLiteral("continueStatus"));
    m_status->setWordWrap(true);
    buttons->addWidget(m_continue);
    buttons->addWidget(m_cancel);
    buttons->addWidget(m_status, 1);
    v->addLayout(buttons);
    return box;
}

void ContinueTextPage::buildSampling(QWidget* box, QGridLayout* grid)
{
    m_sampled = new QCheckBox(tr("Sample"), box);
    m_sampled->setToolTip(tr("Off: greedy, the likeliest token each time (the same text every run). On: drawn at the "
                             "temperature from the k likeliest tokens (0: all), the same seed giving the same text."));
    grid->addWidget(m_sampled, 3, 0);
    m_temperature = new QDoubleSpinBox(box);
    m_temperature->setRange(0.01, 10);
    m_temperature->setSingleStep(0.1);
    m_temperature->setValue(0.8);
    m_topK = new QSpinBox(box);
    m_topK->setRange(0, 100000);
    m_topK->setSpecialValueText(tr("all"));
    m_seed = new QSpinBox(box);
    m_seed->setRange(0, 999999);
    // Temperature and top-k beside the box, the seed under them: two short rows rather than one long one.
    auto* sampling = new QHBoxLayout;
    auto* seedRow = new QHBoxLayout;
    for (const auto& [label, field, row] :
         {std::tuple{tr("Temperature:"), static_cast<QWidget*>(m_temperature), sampling},
          std::tuple{tr("Top-k:"), static_cast<QWidget*>(m_topK), sampling},
          std::tuple{tr("Seed:"), static_cast<QWidget*>(m_seed), seedRow}}) {
        row->addWidget(new QLabel(label, box));
        row->addWidget(field);
        field->setEnabled(false);
    }
    sampling->addStretch(1);
    seedRow->addStretch(1);
    grid->addLayout(sampling, 3, 1, 1, 3);
    grid->addLayout(seedRow, 4, 1, 1, 3);
}

QWidget* ContinueTextPage::buildSide(int side)
{
    auto* box = new QGroupBox(side == 0 ? tr("The model's own positions") : tr("Under the method"), this);
    auto* v = new QVBoxLayout(box);
    auto* text = new QTextEdit(box);
    text->setReadOnly(true);
    text->setObjectName(side == 0 ? QStringLiteral("continueOwnText") : QStringLiteral("continueMethodText"));
    text->setPlaceholderText(tr("The continuation appears here, token by token: press Continue."));
    auto* line = new QLabel(box);
    line->setWordWrap(true);
    line->setTextInteractionFlags(Qt::TextSelectableByMouse);
    v->addWidget(text, 1);
    v->addWidget(line);
    m_sideBoxes[static_cast<size_t>(side)] = box;
    m_sideTexts[static_cast<size_t>(side)] = text;
    m_sideLines[static_cast<size_t>(side)] = line;
    return box;
}

void ContinueTextPage::setFolder(const HfModelPtr& folder)
{
    m_folder = folder;
    showPromptLength();
    updateAvailability();
}

void ContinueTextPage::addModel(const SharedModel& model, bool select)
{
    if (!model.isValid() || !m_model)
        return;
    int index = -1;
    for (size_t i = 0; i < m_models.size(); ++i)
        if (m_models[i].model == model.model || (!model.file.isEmpty() && m_models[i].file == model.file))
            index = static_cast<int>(i);
    if (index < 0) {
        m_models.push_back(model);
        m_model->addItem(model.name);
        index = m_model->count() - 1;
    } else {
        m_models[static_cast<size_t>(index)] = model;
        m_model->setItemText(index, model.name);
    }
    // A rotary model is preferred where none is chosen: its method side has something to show.
    const bool rotary = schemeByName(model.model->config().scheme).rotary;
    if (select || m_model->currentIndex() < 0 || (rotary && !currentModel().rotary()))
        m_model->setCurrentIndex(index);
}

GenerationModel ContinueTextPage::currentModel() const
{
    GenerationModel model;
    if (m_source == Source::Folder)
        model.folder = m_folder;
    else if (const int i = m_model->currentIndex(); i >= 0 && i < modelCount())
        model.lab = m_models[static_cast<size_t>(i)];
    return model;
}

void ContinueTextPage::setPrompt(const QString& text)
{
    m_prompt->setPlainText(text);
}

void ContinueTextPage::setRepeatTo(int tokens)
{
    m_repeat->setValue(tokens);
}

void ContinueTextPage::setMethod(const QString& method, const QString& settings)
{
    const int index = m_method->findData(method);
    if (index < 0)
        throw InputError("method '" + method.toStdString() + "' is unknown; allowed: a rotary method of the catalogue");
    m_method->setCurrentIndex(index);
    m_settings->setText(settings);
}

void ContinueTextPage::setMaxNew(int tokens)
{
    m_maxNew->setValue(tokens);
}

void ContinueTextPage::setSampling(double temperature, int topK, quint64 seed)
{
    m_sampled->setChecked(temperature > 0);
    if (temperature > 0)
        m_temperature->setValue(temperature);
    m_topK->setValue(topK);
    m_seed->setValue(static_cast<int>(seed));
}

GenerationRequest ContinueTextPage::request() const
{
    GenerationRequest r;
    r.model = currentModel();
    r.prompt = m_prompt->toPlainText();
    r.repeatTo = m_repeat->value();
    r.method.method = m_method->currentData().toString().toStdString();
    for (const QString& s : m_settings->text().split(QLatin1Char(','), Qt::SkipEmptyParts))
        r.method.settings.push_back(s.trimmed().toStdString());
    r.maxNew = m_maxNew->value();
    if (m_sampled->isChecked()) {
        r.temperature = m_temperature->value();
        r.topK = m_topK->value();
        r.seed = static_cast<uint64_t>(m_seed->value());
    }
    return r;
}

void ContinueTextPage::start()
{
    if (m_run->isRunning() || !currentModel().isValid())
        return;
    m_canceled = false;
    for (int side : {0, 1}) {
        m_sides[static_cast<size_t>(side)] = {};
        m_sides[static_cast<size_t>(side)].side = side;
        showSide(side);
    }
    m_sideLines[1]->setText(tr("Waiting for the first continuation…"));
    m_clock.start();
    m_status->setText(tr("Continuing…"));
    m_run->start(request());
    updateAvailability();
    Q_EMIT busyChanged(true);
}

void ContinueTextPage::cancel()
{
    if (!m_run->isRunning() || m_canceled)
        return;
    m_canceled = true;
    m_run->cancel();
    const QString text = ViewBase::canceledText(m_clock.elapsed());
    m_status->setText(text);
    Q_EMIT statusMessage(text);
    updateAvailability();
}

bool ContinueTextPage::isBusy() const
{
    return m_run->isRunning();
}

void ContinueTextPage::onSnapshot(const GenerationSnapshot& snapshot)
{
    if (m_canceled || snapshot.side < 0 || snapshot.side > 1)
        return;
    m_sides[static_cast<size_t>(snapshot.side)] = snapshot;
    showSide(snapshot.side);
    if (snapshot.done && !snapshot.error.isEmpty())
        Q_EMIT statusMessage(snapshot.error);
}

void ContinueTextPage::onFinished(bool canceled)
{
    // A prompt core refused stops both sides with its message: the status line says it instead of "Done".
    const QString refused = m_sides[0].error == m_sides[1].error ? m_sides[0].error : QString();
    if (!canceled && !m_canceled)
        m_status->setText(!refused.isEmpty() ? refused
                                             : tr("Done in %1 s.").arg(m_clock.elapsed() / 1000.0, 0, 'f', 1));
    updateAvailability();
    Q_EMIT busyChanged(false);
}

QString ContinueTextPage::sideStatus(int side) const
{
    return m_sideLines[static_cast<size_t>(side)]->text();
}

void ContinueTextPage::showSide(int side)
{
    const GenerationSnapshot& s = m_sides[static_cast<size_t>(side)];
    QGroupBox* box = m_sideBoxes[static_cast<size_t>(side)];
    // Short titles (a long one would widen its side); the positions core applied head the line under the text.
    box->setTitle(side == 0 ? tr("The model's own positions") : tr("Under %1").arg(m_method->currentText()));
    QTextEdit* text = m_sideTexts[static_cast<size_t>(side)];
    if (s.promptTail.isEmpty() && s.text.isEmpty())
        text->clear();
    else
        text->setHtml(sideHtml(s, dimColor(palette())));
    text->moveCursor(QTextCursor::End);
    QLabel* line = m_sideLines[static_cast<size_t>(side)];
    const int n = static_cast<int>(s.ids.size());
    const bool bytes = m_source == Source::Lab; // a lab model's tokens are bytes
    if (!s.error.isEmpty())
        line->setText(n == 0 ? s.error
                      : bytes ? tr("Stopped after %n byte(s): %1", nullptr, n).arg(s.error)
                              : tr("Stopped after %n token(s): %1", nullptr, n).arg(s.error));
    else if (s.done)
        line->setText(s.positions + QLatin1Char('\n') +
                      (bytes ? tr("%n new byte(s) after %1 of the prompt · prefill %2 ms · %3 bytes/s", nullptr, n)
                             : tr("%n new token(s) after %1 of the prompt · prefill %2 ms · %3 tokens/s", nullptr, n))
                          .arg(s.promptTokens)
                          .arg(s.prefillMs, 0, 'f', 0)
                          .arg(s.tokensPerSecond, 0, 'f', 1));
    else if (s.promptTokens > 0)
        line->setText(bytes ? tr("%n new byte(s)…", nullptr, n) : tr("%n new token(s)…", nullptr, n));
    else
        line->clear();
}

void ContinueTextPage::showPromptLength()
{
    const GenerationModel model = currentModel();
    if (!model.isValid()) {
        m_promptLength->setText(m_source == Source::Lab ? tr("Train or load a model in the Train tab first.")
                                                        : tr("Open a model folder first."));
        return;
    }
    const PromptLength length = promptLength(model, m_prompt->toPlainText(), m_repeat->value());
    if (!length.error.isEmpty()) {
        m_promptLength->setText(length.error);
        return;
    }
    QString text = m_source == Source::Lab
                       ? tr("%1 bytes; the model's context is %2.").arg(length.tokens).arg(length.context)
                       : tr("%1 tokens; the model's context is %2.").arg(length.tokens).arg(length.context);
    if (length.tokens > length.context)
        text += QLatin1Char(' ') + tr("Past the context.");
    m_promptLength->setText(text);
}

void ContinueTextPage::showMethodHint()
{
    const RotaryMethodInfo& info = rotaryMethodByName(m_method->currentData().toString().toStdString());
    QStringList names;
    for (const ParamInfo& p : info.params)
        names << QString::fromStdString(p.name);
    m_settings->setPlaceholderText(names.isEmpty() ? tr("no parameters") : names.join(QStringLiteral("=…, ")) +
                                                                               QStringLiteral("=…"));
    m_settings->setToolTip(tr("NAME=VALUE, separated by commas, on top of core's defaults for the prompt and its "
                              "continuation (the factor: their length over the context; a folder's own method: its "
                              "config's values)."));
    m_settings->setEnabled(!names.isEmpty());
    if (!m_run->isRunning())
        showSide(1);
}

void ContinueTextPage::updateAvailability()
{
    const bool running = m_run->isRunning();
    m_continue->setEnabled(!running && currentModel().isValid());
    m_cancel->setEnabled(running && !m_canceled);
}

} // namespace plab::ui
