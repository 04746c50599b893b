// Lessons panel: lesson choice, the page (Markdown prose with a "Show me" button per state), Back and Next.
#include "window/lessons_panel.h"
#include "tabs/fitting_combo.h"

#include "base/errors.h"
#include "schemes/rotary_scaling.h"

#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace plab::ui {

namespace {

nlohmann::json panelJson(const LessonState& s)
{
    nlohmann::json params = nlohmann::json::object();
    for (const auto& [name, value] : s.params)
        params[name] = value;
    const auto [scheme, method] = splitSchemeLabel(s.schemes.front()); // "rope+yarn": rope under yarn
    return {{"scheme", scheme},
            {"heads", s.heads},
            {"head", s.head},
            {"length", s.length},
            {"bidirectional", s.bidirectional},
            {"logn", s.logn},
            {"context", s.context},
            {"scaling", method},
            {"parameters", params}};
}

// The entropy view draws lengths 16, 32, ... up to a power of two; the smallest that holds the lesson's lengths.
int entropyMaxLength(const std::vector<int>& lengths)
{
    const int longest = lengths.empty() ? 2048 : *std::max_element(lengths.begin(), lengths.end());
    int n = 64;
    while (n < longest && n < 8192)
        n *= 2;
    return n;
}

QString shellQuoted(const QString& word)
{
    static const QString plain =
        QStringLiteral("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.,:=/+");
    if (!word.isEmpty() && std::all_of(word.begin(), word.end(), [](QChar c) { return plain.contains(c); }))
        return word;
    QString quoted = word;
    quoted.replace(QLatin1Char('\''), QStringLiteral("'\\''"));
    return QLatin1Char('\'') + quoted + QLatin1Char('\'');
}

} // namespace

LessonStateSession lessonStateSession(const LessonState& s)
{
    LessonStateSession out;
    out.view = QString::fromStdString(lessonViewName(s.view));
    switch (s.view) {
    case LessonView::Bias:
        out.panel = panelJson(s);
        out.viewState = {{"buckets", s.buckets}, {"fire_curve", s.curve}};
        break;
    case LessonView::Frequencies:
        out.panel = panelJson(s); // rope with the state's parameters and method
        break;
    case LessonView::Compare:
        out.panel = panelJson(s);
        out.viewState = {{"schemes", s.schemes},
                         {"difference", s.difference},
                         {"difference_a", 0},
                         {"difference_b", 1},
                         {"shared_scale", !s.separateScales}};
        break;
    case LessonView::Dot: {
        nlohmann::json curves = nlohmann::json::array();
        for (const auto& [dim, base] : s.curves)
            curves.push_back({dim, base});
        out.viewState = {{"curves", curves}, {"max_distance", s.maxDistance}, {"log_x", s.logX}};
        break;
    }
    case LessonView::Entropy:
        out.panel = panelJson(s);
        out.viewState = {{"schemes", s.schemes},
                         {"qk", s.qk},
                         {"seed", s.seed},
                         {"max_length", entropyMaxLength(s.lengths)},
                         {"measure", s.measure}};
        break;
    case LessonView::Attention:
        out.viewState = {{"text", s.text}, {"repeat_to", s.repeatTo}, {"show", s.show}};
        if (s.layer)
            out.viewState["layer"] = *s.layer;
        break;
    case LessonView::Train:
        out.viewState = {{"schemes", s.schemes}, {"preset", s.preset}};
        if (!s.task.empty()) {
            out.viewState["task"] = s.task;
            if (s.taskLength > 0)
                out.viewState["task_length"] = s.taskLength;
            if (s.recalibration > 0)
                out.viewState["recalibration_percent"] = s.recalibration;
        }
        // The model options always: a state without them trains without them, whatever the tab held before.
        out.viewState["nope_every"] = s.nopeEvery;
        out.viewState["attn_temperature_tuning"] = s.temperature.tuning;
        out.viewState["floor_scale"] = s.temperature.floorScale;
        out.viewState["attn_scale"] = s.temperature.attnScale;
        out.viewState["ssmax"] = s.ssmax;
        out.viewState["sink_logit"] = s.sinkLogit;
        out.viewState["layer_types"] = s.layerTypes;
        out.viewState["sliding_window"] = s.window;
        out.viewState["attention_chunk_size"] = s.chunk;
        out.viewState["full_scheme"] = s.fullScheme;
        out.viewState["full_settings"] = s.fullSettings;
        break;
    case LessonView::Model:
        out.viewState = {{"text", s.text}, {"repeat_to", s.repeatTo}, {"page", s.page}, {"head", s.head}};
        if (s.layer)
            out.viewState["layer"] = *s.layer;
        break;
    }
    return out;
}

LessonsPanel::LessonsPanel(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    // As wide as the dock, not as the longest lesson title: the dock stays narrow enough for a small screen.
    m_choice = new FittingComboBox(this);
    m_choice->setObjectName(QStringLiteral("lessonChoice"));
    m_choice->setMinimumContentsLength(12);
    layout->addWidget(m_choice);
    m_problems = new QLabel(this);
    m_problems->setWordWrap(true);
    m_problems->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_problems->setStyleSheet(QStringLiteral("color: #c0392b;"));
    m_problems->hide();
    layout->addWidget(m_problems);
    m_scroll = new QScrollArea(this);
    m_scroll->setWidgetResizable(true);
    m_scroll->setFrameShape(QFrame::NoFrame);
    layout->addWidget(m_scroll, 1);
    auto* nav = new QHBoxLayout;
    m_back = new QPushButton(tr("◀ Back"), this);
    m_next = new QPushButton(tr("Next ▶"), this);
    m_back->setToolTip(tr("The previous figure of the lesson (Alt+Left)"));
    m_next->setToolTip(tr("The next figure, then the next lesson (Alt+Right)"));
    m_back->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Left));
    m_next->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Right));
    m_position = new QLabel(this);
    // Wraps in a narrow dock (a small screen) instead of running under the Next button.
    m_position->setWordWrap(true);
    m_position->setAlignment(Qt::AlignCenter);
    nav->addWidget(m_back);
    nav->addWidget(m_position, 1);
    nav->addWidget(m_next);
    layout->addLayout(nav);

    connect(m_choice, &QComboBox::activated, this, [this](int row) { showLesson(m_choice->itemData(row).toInt()); });
    connect(m_back, &QPushButton::clicked, this, &LessonsPanel::back);
    connect(m_next, &QPushButton::clicked, this, &LessonsPanel::next);
    reload();
}

void LessonsPanel::setLanguage(const QString& language)
{
    checkLanguage(language.toStdString()); // throws InputError for anything but en, zh_CN
    if (language == m_language)
        return;
    m_language = language;
    reload();
}

bool LessonsPanel::openFolder(const QString& folder, QString* error)
{
    try {
        if (!folder.isEmpty())
            lessonSourcesInFolder(folder.toStdString()); // the folder itself must be readable and hold lessons
    } catch (const InputError& e) {
        if (error)
            *error = QString::fromUtf8(e.what());
        return false;
    }
    m_folder = folder.isEmpty() ? QString() : QFileInfo(folder).absoluteFilePath();
    reload();
    return true;
}

void LessonsPanel::reload()
{
    const int number =
        m_lesson >= 0 && m_lesson < static_cast<int>(m_set.lessons.size()) ? m_set.lessons[m_lesson].number : -1;
    try {
        m_set = readLessons(m_folder.isEmpty() ? builtinLessonSources() : lessonSourcesInFolder(m_folder.toStdString()),
                            m_language.toStdString());
    } catch (const InputError& e) {
        m_set = LessonSet{};
        m_set.errors.push_back(e.what());
    }
    m_choice->clear();
    for (size_t i = 0; i < m_set.lessons.size(); ++i) {
        const Lesson& l = m_set.lessons[i];
        m_choice->addItem(QStringLiteral("%1. %2").arg(l.number).arg(QString::fromStdString(l.title)),
                          static_cast<int>(i));
    }
    // Broken files stay in the list, greyed out, with their error as the tooltip.
    for (size_t i = 0; i < m_set.errors.size(); ++i) {
        const QString file = i < m_set.brokenFiles.size()
                                 ? QFileInfo(QString::fromStdString(m_set.brokenFiles[i])).fileName()
                                 : tr("lesson folder");
        m_choice->addItem(tr("⚠ %1 (cannot be read)").arg(file), -1);
        const int row = m_choice->count() - 1;
        m_choice->setItemData(row, QString::fromStdString(m_set.errors[i]), Qt::ToolTipRole);
        m_choice->setItemData(row, 0, Qt::UserRole - 1); // disabled item
    }
    QStringList problems;
    for (const std::string& e : m_set.errors)
        problems << QString::fromStdString(e).toHtmlEscaped();
    m_problems->setText(problems.isEmpty() ? QString()
                                           : tr("Not loaded:<br>%1").arg(problems.join(QStringLiteral("<br>"))));
    m_problems->setVisible(!problems.isEmpty());
    int index = 0;
    for (size_t i = 0; i < m_set.lessons.size(); ++i)
        if (m_set.lessons[i].number == number)
            index = static_cast<int>(i);
    m_lesson = -1;
    showLesson(m_set.lessons.empty() ? -1 : index);
}

void LessonsPanel::showLesson(int index)
{
    if (index >= static_cast<int>(m_set.lessons.size()))
        return;
    m_lesson = index;
    m_state = -1;
    const int row = m_choice->findData(index);
    if (row >= 0)
        m_choice->setCurrentIndex(row);
    rebuildPage();
    updateButtons();
}

void LessonsPanel::rebuildPage()
{
    m_showButtons.clear();
    m_page = new QWidget;
    m_pageLayout = new QVBoxLayout(m_page);
    if (m_lesson < 0) {
        auto* empty =
            new QLabel(tr("No lesson to show. Lessons → Open folder… loads a folder of NN-slug.md files."), m_page);
        empty->setWordWrap(true);
        m_pageLayout->addWidget(empty);
    } else {
        const Lesson& lesson = m_set.lessons[m_lesson];
        auto* title =
            new QLabel(QStringLiteral("<h2>%1</h2>").arg(QString::fromStdString(lesson.title).toHtmlEscaped()), m_page);
        title->setWordWrap(true);
        m_pageLayout->addWidget(title);
        for (const LessonSegment& segment : lesson.segments) {
            if (segment.state < 0) {
                auto* text = new QLabel(m_page);
                text->setTextFormat(Qt::MarkdownText);
                text->setText(QString::fromStdString(segment.markdown));
                text->setWordWrap(true);
                text->setOpenExternalLinks(true);
                text->setTextInteractionFlags(Qt::TextBrowserInteraction);
                m_pageLayout->addWidget(text);
                continue;
            }
            const LessonState& state = lesson.states[segment.state];
            auto* row = new QHBoxLayout;
            const QString caption = QString::fromStdString(state.caption);
            auto* show = new QPushButton(tr("▶ Show me"), m_page);
            show->setToolTip(caption.isEmpty() ? tr("Set the views to this figure") : caption);
            const int index = segment.state;
            connect(show, &QPushButton::clicked, this, [this, index] { showState(index); });
            auto* copy = new QToolButton(m_page);
            copy->setText(tr("Command"));
            QStringList words{QStringLiteral("positionlab-cli"), QStringLiteral("render")};
            for (const std::string& w : lessonRenderArguments(state))
                words << shellQuoted(QString::fromStdString(w));
            words << QStringLiteral("-o") << QStringLiteral("figure.png");
            const QString command = words.join(QLatin1Char(' '));
            copy->setToolTip(tr("Copy the command that draws this figure headless:\n%1").arg(command));
            connect(copy, &QToolButton::clicked, this, [command] { QApplication::clipboard()->setText(command); });
            row->addWidget(show);
            row->addWidget(copy);
            row->addStretch(1);
            m_pageLayout->addLayout(row);
            if (!caption.isEmpty()) {
                auto* captionLabel = new QLabel(QStringLiteral("<i>%1</i>").arg(caption.toHtmlEscaped()), m_page);
                captionLabel->setWordWrap(true);
                m_pageLayout->addWidget(captionLabel);
            }
            m_showButtons.push_back(show);
        }
    }
    m_pageLayout->addStretch(1);
    m_scroll->setWidget(m_page); // deletes the previous page
}

void LessonsPanel::showState(int index)
{
    if (m_lesson < 0 || index < 0 || index >= static_cast<int>(m_set.lessons[m_lesson].states.size()))
        return;
    m_state = index;
    updateButtons();
    if (index < static_cast<int>(m_showButtons.size()))
        m_scroll->ensureWidgetVisible(m_showButtons[index], 0, m_scroll->height() / 3);
    Q_EMIT stateRequested(m_set.lessons[m_lesson].states[index]);
}

void LessonsPanel::next()
{
    if (m_lesson < 0)
        return;
    if (m_state + 1 < static_cast<int>(m_set.lessons[m_lesson].states.size())) {
        showState(m_state + 1);
    } else if (m_lesson + 1 < static_cast<int>(m_set.lessons.size())) {
        showLesson(m_lesson + 1);
        showState(0);
    }
}

void LessonsPanel::back()
{
    if (m_lesson < 0)
        return;
    if (m_state > 0) {
        showState(m_state - 1);
    } else if (m_lesson > 0) {
        showLesson(m_lesson - 1);
        showState(static_cast<int>(m_set.lessons[m_lesson].states.size()) - 1);
    }
}

void LessonsPanel::updateButtons()
{
    const bool have = m_lesson >= 0;
    const int states = have ? static_cast<int>(m_set.lessons[m_lesson].states.size()) : 0;
    m_back->setEnabled(have && (m_state > 0 || m_lesson > 0));
    m_next->setEnabled(have && (m_state + 1 < states || m_lesson + 1 < static_cast<int>(m_set.lessons.size())));
    m_position->setText(have ? tr("Lesson %1 of %2 · figure %3 of %4")
                                   .arg(m_lesson + 1)
                                   .arg(m_set.lessons.size())
                                   .arg(std::max(m_state + 1, 0))
                                   .arg(states)
                             : QString());
    for (int i = 0; i < static_cast<int>(m_showButtons.size()); ++i)
        m_showButtons[i]->setDefault(i == m_state);
}

} // namespace plab::ui
