// Main window wiring: panel -> views, views -> status bar, the docks, export, corpus and sweep files, drag and drop.
#include "window/main_window.h"

#include "window/export_dialog.h"
#include "window/lessons_panel.h"
#include "settings/i18n.h"
#include "workers/kept_models.h"
#include "tabs/model_prompt.h"
#include "tabs/scheme_panel.h"
#include "settings/session.h"
#include "workers/training_run.h"
#include "tabs/attention_view.h"
#include "tabs/bias_view.h"
#include "tabs/compare_view.h"
#include "tabs/dot_view.h"
#include "tabs/entropy_view.h"
#include "tabs/hf_model_view.h"
#include "tabs/frequency_view.h"
#include "tabs/train_view.h"
#include "tabs/view_base.h"
#include "runs/sweep.h"

#include "base/errors.h"
#include "base/picture_limits.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCheckBox>
#include <QCloseEvent>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QScopedValueRollback>
#include <QSettings>
#include <QScreen>
#include <QSpinBox>
#include <QStatusBar>
#include <QStringDecoder>
#include <QStyle>
#include <QStyleFactory>
#include <QTabWidget>

namespace plab::ui {

void applyPalette(bool dark)
{
    QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
    QPalette p;
    if (dark) {
        const QColor window(45, 45, 48), base(30, 30, 32), text(230, 230, 230), disabled(130, 130, 130);
        p.setColor(QPalette::Window, window);
        p.setColor(QPalette::WindowText, text);
        p.setColor(QPalette::Base, base);
        p.setColor(QPalette::AlternateBase, window);
        p.setColor(QPalette::ToolTipBase, QColor(60, 60, 64));
        p.setColor(QPalette::ToolTipText, text);
        p.setColor(QPalette::Text, text);
        p.setColor(QPalette::Button, window);
        p.setColor(QPalette::ButtonText, text);
        p.setColor(QPalette::BrightText, Qt::red);
        p.setColor(QPalette::Link, QColor(110, 170, 255));
        p.setColor(QPalette::Highlight, QColor(60, 130, 220));
        p.setColor(QPalette::HighlightedText, Qt::white);
        p.setColor(QPalette::Mid, QColor(90, 90, 95));
        p.setColor(QPalette::PlaceholderText, disabled);
        for (auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
            p.setColor(QPalette::Disabled, role, disabled);
    } else {
        p = QApplication::style()->standardPalette();
    }
    QApplication::setPalette(p);
}

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent)
{
    setWindowTitle(tr("PositionLab"));
    setAcceptDrops(true);
    setObjectName(QStringLiteral("MainWindow"));

    buildSchemeDock();
    buildStatusBar(); // before the views, which report to it

    m_tabs = new QTabWidget(this);
    m_tabs->setDocumentMode(true);
    // Every tab in view, whole: no scroll arrows that hide tabs, no shortened labels; the tab bar's width is part of
    // the window's minimum, so the docks give way instead.
    m_tabs->setUsesScrollButtons(false);
    m_tabs->setElideMode(Qt::ElideNone);
    setCentralWidget(m_tabs);
    m_bias = new BiasView;
    addView(m_bias);
    addView(new CompareView);
    addView(new DotView);
    addView(new FrequencyView);
    addView(new EntropyView);
    auto* attention = new AttentionView;
    auto* train = new TrainView;
    m_attention = attention;
    m_train = train;
    m_entropy = static_cast<EntropyView*>(view(QStringLiteral("entropy")));
    addView(attention);
    addView(train);
    m_model = new HfModelView;
    addView(m_model);
    // Models trained or loaded in one view are offered to the others; trained ones are kept for the next start.
    train->onModelReady = [this](const SharedModel& model) { adoptTrainedModel(model); };
    attention->onModelLoaded = [this](const SharedModel& model) {
        m_bias->addModel(model, false); // fire models only: the Bias view's learned curve
        m_entropy->addModel(model);
        m_train->addModel(model, false);
    };
    // "Train a demo model now" where a view needs a model and has none.
    m_demoRun = new TrainingRun(this);
    for (ModelPrompt* prompt : {m_attention->modelPrompt(), m_entropy->modelPrompt()}) {
        prompt->watch(m_demoRun);
        connect(prompt, &ModelPrompt::trainRequested, this, [this] { trainDemoModel(); });
    }
    connect(m_demoRun, &TrainingRun::snapshot, this, [this](const TrainSnapshot& s) {
        if (s.model.isValid())
            adoptTrainedModel(s.model);
    });
    connect(m_demoRun, &TrainingRun::finished, this, [this](const QString& error, bool) {
        if (!error.isEmpty())
            statusBar()->showMessage(tr("Demo model: %1").arg(error), 8000);
    });
    // The models kept by earlier runs, most recent first (and current).
    QStringList problems;
    for (const SharedModel& model : loadKeptModels(&problems)) {
        m_attention->addModel(model, false);
        m_bias->addModel(model, false);
        m_entropy->addModel(model, false);
        m_train->addModel(model, false);
    }

    buildLessonsDock();
    buildMenus();
    connect(m_panel, &SchemePanel::changed, this, &MainWindow::onPanelChanged);
    connect(m_tabs, &QTabWidget::currentChanged, this, &MainWindow::onTabChanged);
    onPanelChanged();
    onTabChanged(m_tabs->currentIndex());
    restoreSettings();
    m_schemePanelWanted = !m_schemeDock->isHidden();
    connect(m_schemeDock->toggleViewAction(), &QAction::toggled, this, [this](bool shown) {
        if (!m_placingSchemeDock)
            m_schemePanelWanted = shown;
    });
    placeSchemeDock();
    if (!problems.isEmpty())
        statusBar()->showMessage(tr("Kept models not loaded: %1").arg(problems.join(QStringLiteral("; "))), 12000);
}

void MainWindow::buildSchemeDock()
{
    m_panel = new SchemePanel;
    auto* scroll = new QScrollArea;
    scroll->setWidget(m_panel);
    scroll->setWidgetResizable(true);
    // Narrow enough that both docks and the views fit a 1366-pixel screen; the panel's rows wrap below that.
    scroll->setMinimumWidth(300);
    m_schemeDock = new QDockWidget(tr("Scheme and parameters"), this);
    m_schemeDock->setObjectName(QStringLiteral("schemeDock"));
    m_schemeDock->setWidget(scroll);
    // Closable: on a small screen the views get the whole width (View > Show scheme panel brings it back).
    m_schemeDock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable |
                              QDockWidget::DockWidgetClosable);
    addDockWidget(Qt::LeftDockWidgetArea, m_schemeDock);
}

void MainWindow::buildLessonsDock()
{
    // The lessons beside the views: the path through the argument for a first-time user.
    m_lessons = new LessonsPanel;
    m_lessons->setLanguage(currentLanguage()); // the window is rebuilt when the language changes
    m_lessonsDock = new QDockWidget(tr("Lessons"), this);
    m_lessonsDock->setObjectName(QStringLiteral("lessonsDock"));
    m_lessonsDock->setWidget(m_lessons);
    m_lessons->setMinimumWidth(300);
    addDockWidget(Qt::RightDockWidgetArea, m_lessonsDock);
    connect(m_lessons, &LessonsPanel::stateRequested, this, &MainWindow::applyLessonState);
}

void MainWindow::buildStatusBar()
{
    // The hover read-out, and the running job's progress with its Cancel.
    m_hover = new QLabel(this);
    m_hover->setMinimumWidth(380);
    m_progress = new QProgressBar(this);
    m_progress->setMaximumWidth(200);
    m_progress->setTextVisible(true);
    m_progress->hide();
    m_cancel = new QPushButton(tr("Cancel"), this);
    m_cancel->setToolTip(tr("Stop the running computation (Esc)"));
    m_cancel->setShortcut(Qt::Key_Escape);
    m_cancel->hide();
    statusBar()->addWidget(m_hover, 1);
    statusBar()->addPermanentWidget(m_progress);
    statusBar()->addPermanentWidget(m_cancel);
    connect(m_cancel, &QPushButton::clicked, this, [this] {
        if (ViewBase* v = currentView())
            v->cancelJob();
        statusBar()->showMessage(ViewBase::canceledText(m_busyClock.elapsed()), 15000);
    });
}

MainWindow::~MainWindow()
{
    // QWidget's destructor closes the window, and the docks' view actions then emit toggled(false) into lambdas
    // of this object, whose MainWindow part is already gone. Cut every child's connection to this first.
    for (QObject* child : findChildren<QObject*>())
        child->disconnect(this);
}

void MainWindow::addView(ViewBase* view)
{
    m_views.push_back(view);
    m_tabs->addTab(view, view->viewTitle());
    connect(view, &ViewBase::hoverText, m_hover, &QLabel::setText);
    connect(view, &ViewBase::statusMessage, this,
            [this](const QString& text) { statusBar()->showMessage(text, 8000); });
    connect(view, &ViewBase::progress, this, [this, view](int done, int total) {
        if (view != currentView())
            return;
        m_progress->setRange(0, std::max(1, total));
        m_progress->setValue(done);
    });
    connect(view, &ViewBase::busyChanged, this, &MainWindow::onBusyChanged);
    connect(view, &ViewBase::headRequested, this, [this](int head) { m_panel->setHead(head); });
}

ViewBase* MainWindow::view(const QString& id) const
{
    for (ViewBase* v : m_views)
        if (v->viewId() == id)
            return v;
    return nullptr;
}

ViewBase* MainWindow::currentView() const
{
    return qobject_cast<ViewBase*>(m_tabs->currentWidget());
}

void MainWindow::showView(const QString& id)
{
    if (ViewBase* v = view(id))
        m_tabs->setCurrentWidget(v);
}

void MainWindow::onPanelChanged()
{
    for (ViewBase* v : m_views)
        v->setPanelState(m_panel->state());
}

void MainWindow::onTabChanged(int)
{
    m_hover->clear(); // the read-out belongs to the view the cursor was over
    for (ViewBase* v : m_views)
        v->setActive(v == currentView());
    placeSchemeDock();
    onBusyChanged();
}

void MainWindow::placeSchemeDock()
{
    const ViewBase* v = currentView();
    const bool show = m_schemePanelWanted && (!v || v->usesSchemePanel());
    if (m_schemeDock->isHidden() != show)
        return;
    const QScopedValueRollback placing(m_placingSchemeDock, true);
    m_schemeDock->setVisible(show);
}

void MainWindow::onBusyChanged()
{
    ViewBase* v = currentView();
    const bool busy = v && v->isBusy();
    if (busy && m_progress->isHidden())
        m_busyClock.start(); // the time a Cancel reports
    m_progress->setVisible(busy);
    m_cancel->setVisible(busy);
    if (busy)
        m_progress->setRange(0, 0); // busy indicator until the first progress report
}

void MainWindow::setDark(bool dark)
{
    m_dark = dark;
    applyPalette(dark);
    for (ViewBase* v : m_views)
        v->setDark(dark);
    if (auto* action = findChild<QAction*>(QStringLiteral("darkAction")); action && action->isChecked() != dark)
        action->setChecked(dark);
}

bool MainWindow::applyLessonState(const LessonState& state)
{
    const LessonStateSession session = lessonStateSession(state);
    ViewBase* target = view(session.view);
    if (!target)
        return false;
    const nlohmann::json panelBefore = m_panel->saveState();
    try {
        if (!session.panel.is_null())
            m_panel->restoreState(session.panel);
        target->restoreState(session.viewState);
    } catch (const InputError& e) {
        m_panel->restoreState(panelBefore); // all or nothing, as a session
        statusBar()->showMessage(tr("This figure cannot be shown: %1").arg(QString::fromUtf8(e.what())), 10000);
        return false;
    }
    showView(session.view);
    if (state.view == LessonView::Train && !m_train->isBusy()) {
        if (state.task.empty())
            m_train->start(m_train->request());
        else // a task: the ticked schemes on it, or the DroPE recipe
            m_train->startTask(m_train->taskRequest(state.recalibration > 0));
    }
    if (state.view == LessonView::Attention)
        showLessonModel(state);
    return true;
}

void MainWindow::showLessonModel(const LessonState& state)
{
    // The lesson's model: a model of its scheme trained with its preset (kept from an earlier run), else any model of
    // the scheme, else a demo run of that scheme now (it is kept and shown when done).
    const std::vector<SharedModel>& models = m_attention->models();
    int best = -1;
    for (int i = 0; i < static_cast<int>(models.size()); ++i) {
        if (models[i].model->config().scheme != state.schemes.front())
            continue;
        const nlohmann::json& training = models[i].info.training;
        const bool samePreset = training.is_object() && training.value("preset", std::string()) == state.preset;
        if (best < 0 || samePreset)
            best = i;
    }
    if (best >= 0) {
        m_attention->selectModel(best);
        if (state.layer)
            m_attention->setLayer(*state.layer);
        m_panel->setHead(state.head);
        return;
    }
    TrainRequest request = presetTrainRequest(state.preset, {state.schemes.front()});
    request.corpusPath = m_corpus;
    if (trainDemoModel(request))
        statusBar()->showMessage(
            tr("Training a %1 model for this figure (%2 preset); it appears here when done")
                .arg(QString::fromStdString(state.schemes.front()), QString::fromStdString(state.preset)),
            8000);
}

void MainWindow::chooseLanguage(const QString& code)
{
    if (code == currentLanguage())
        return;
    const bool busy = std::any_of(m_views.begin(), m_views.end(), [](const ViewBase* v) { return v->isBusy(); });
    if (busy || m_train->hasPicture()) {
        QMessageBox box(QMessageBox::Question, tr("Language"),
                        tr("Changing the language now rebuilds the window. Running computations and the training "
                           "results shown in \"Train\" are not kept (the trained models are). "
                           "Change it now, or at the next start?"),
                        QMessageBox::NoButton, this);
        QPushButton* now = box.addButton(tr("Change now"), QMessageBox::AcceptRole);
        QPushButton* later = box.addButton(tr("At the next start"), QMessageBox::RejectRole);
        box.setDefaultButton(later);
        box.exec();
        if (box.clickedButton() != now) {
            saveLanguage(code);
            statusBar()->showMessage(tr("The language changes at the next start."), 8000);
            return;
        }
    }
    QString error;
    if (!switchLanguage(code, &error))
        showError(tr("Language"), error);
}

MainWindow* MainWindow::switchLanguage(const QString& code, QString* error)
{
    if (code == currentLanguage()) {
        saveLanguage(code);
        return this;
    }
    const nlohmann::json session = sessionState();
    const QString previous = currentLanguage();
    if (!setLanguage(code, error))
        return nullptr;
    saveLanguage(code);
    for (ViewBase* v : m_views)
        v->cancelJob();
    auto* next = new MainWindow;
    next->setAttribute(Qt::WA_DeleteOnClose, testAttribute(Qt::WA_DeleteOnClose));
    // Models first, so the session's checkpoints that are already here are not loaded a second time.
    for (const SharedModel& model : m_attention->models()) {
        next->m_attention->addModel(model);
        next->m_bias->addModel(model);
        next->m_entropy->addModel(model);
    }
    try {
        next->applySession(session);
    } catch (const std::exception& e) { // cannot happen for a window's own state; keep the old window then
        delete next;
        setLanguage(previous);
        saveLanguage(previous);
        if (error)
            *error = QString::fromStdString(e.what());
        return nullptr;
    }
    next->m_sessionPath = m_sessionPath;
    if (!m_sessionPath.isEmpty())
        next->setWindowTitle(tr("PositionLab — %1").arg(QFileInfo(m_sessionPath).fileName()));
    next->restoreGeometry(saveGeometry());
    next->restoreState(saveState());
    if (isVisible())
        next->show();
    hide();
    if (testAttribute(Qt::WA_DeleteOnClose))
        deleteLater();
    return next;
}

bool MainWindow::setCorpus(const QString& path, QString* error)
{
    auto fail = [&](const QString& message) {
        if (error)
            *error = message;
        return false;
    };
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return fail(tr("%1: cannot open as a corpus (%2)").arg(path, file.errorString()));
    const QByteArray head = file.read(1 << 20);
    if (head.isEmpty())
        return fail(tr("%1: the corpus is empty").arg(path));
    QStringDecoder decoder(QStringDecoder::Utf8);
    const QString decoded = decoder.decode(head); // decode() is lazy: converting runs it
    // A cut in the middle of a multi-byte character at the 1 MiB boundary is fine; anything else is not UTF-8.
    if (decoder.hasError() && head.size() < (1 << 20))
        return fail(tr("%1: not UTF-8 text; a corpus must be a UTF-8 text file").arg(path));
    m_corpus = QFileInfo(path).absoluteFilePath();
    m_train->setCorpus(m_corpus);
    statusBar()->showMessage(tr("Corpus: %1").arg(m_corpus), 5000);
    return true;
}

bool MainWindow::exportCurrent(const QString& path, const ImageOptions& options, QString* error)
{
    ViewBase* v = currentView();
    try {
        if (!v || !v->hasPicture())
            throw InputError((v && (v->viewId() == "attention" || v->viewId() == "train")
                                  ? tr("this view has nothing to export yet (it needs a trained model)")
                                  : tr("this view has nothing to export yet"))
                                 .toStdString());
        if (isImageFile(path))
            writeImageFile(path, options, v->paintFunction(), v->pictureTitle());
        else if (isDataFile(path))
            writeDataFile(path, [v](std::ostream& out, DataFormat f) { v->writeData(out, f); });
        else
            throw InputError(
                tr("%1: unknown extension; allowed: .png .svg .pdf .csv .json .npy").arg(path).toStdString());
        statusBar()->showMessage(tr("Exported %1").arg(path), 5000);
        return true;
    } catch (const std::exception& e) {
        if (error)
            *error = QString::fromStdString(e.what());
        return false;
    }
}

void MainWindow::exportDialog()
{
    ViewBase* v = currentView();
    if (!v || !v->hasPicture()) {
        showError(tr("Export"), tr("This view has nothing to export yet."));
        return;
    }
    QSettings settings;
    const QString dir = settings.value(QStringLiteral("exportDir"), QDir::homePath()).toString();
    ExportDialog dialog(QDir(dir).filePath(v->viewId() + QStringLiteral(".png")), v->defaultImageSize(), m_dark, this);
    if (dialog.exec() != QDialog::Accepted)
        return;
    QString error;
    if (!exportCurrent(dialog.path(), dialog.options(), &error))
        showError(tr("Export"), error);
    else
        settings.setValue(QStringLiteral("exportDir"), QFileInfo(dialog.path()).absolutePath());
}

void MainWindow::copyImage()
{
    ViewBase* v = currentView();
    if (!v || !v->hasPicture()) {
        statusBar()->showMessage(tr("Nothing to copy in this view"), 4000);
        return;
    }
    ImageOptions options;
    options.size = v->defaultImageSize();
    options.dark = m_dark;
    copyImageToClipboard(options, v->paintFunction());
    statusBar()->showMessage(tr("Image copied to the clipboard"), 4000);
}

void MainWindow::openCorpusDialog()
{
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Open corpus"), QString(), tr("Text (*.txt);;All files (*)"));
    if (path.isEmpty())
        return;
    QString error;
    if (!setCorpus(path, &error))
        showError(tr("Open corpus"), error);
}

void MainWindow::openSweepDialog()
{
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Open sweep results"));
    if (dir.isEmpty())
        return;
    QString error;
    if (!openSweepResults(dir, &error))
        showError(tr("Open sweep results"), error);
}

bool MainWindow::openSweepResults(const QString& dir, QString* error)
{
    if (m_train->isBusy()) {
        if (error)
            *error = tr("The Train tab is training; cancel it first.");
        return false;
    }
    try {
        m_train->showSweepResults(collectSweepResults({dir.toStdString()}), QDir::toNativeSeparators(dir));
    } catch (const std::exception& e) {
        if (error)
            *error = QString::fromStdString(e.what());
        return false;
    }
    m_tabs->setCurrentWidget(m_train);
    return true;
}

void MainWindow::showError(const QString& title, const QString& message)
{
    QMessageBox::warning(this, title, message);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event)
{
    if (event->mimeData()->hasUrls() && event->mimeData()->urls().size() == 1 &&
        event->mimeData()->urls().first().isLocalFile())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event)
{
    QString error;
    if (!openDroppedFile(event->mimeData()->urls().first().toLocalFile(), &error))
        showError(tr("Drop"), error);
    event->acceptProposedAction();
}

bool MainWindow::openDroppedFile(const QString& path, QString* error)
{
    return path.endsWith(QStringLiteral(".json"), Qt::CaseInsensitive) ? openSession(path, error)
                                                                       : setCorpus(path, error);
}

void MainWindow::restoreSettings()
{
    QSettings settings;
    // The first start: a size that suits the screen; on a small one the Lessons dock starts collapsed.
    const QRect available = screen()->availableGeometry();
    resize(std::max(1400, available.width() * 9 / 10), std::max(900, available.height() * 9 / 10));
    const bool restored = restoreGeometry(settings.value(QStringLiteral("geometry")).toByteArray());
    const bool stateRestored = restoreState(settings.value(QStringLiteral("windowState")).toByteArray());
    if (!stateRestored && available.width() < kSmallScreenWidth)
        m_lessonsDock->hide();
    fitToScreen(available);
    if (!restored)
        move(available.topLeft() + QPoint(available.width() - width(), available.height() - height()) / 2);
    if (settings.value(QStringLiteral("dark"), false).toBool())
        setDark(true);
}

void MainWindow::fitToScreen(const QRect& available)
{
    // The frame (title bar, borders) counts: the whole window must be on the screen.
    const QMargins frame(geometry().left() - frameGeometry().left(), geometry().top() - frameGeometry().top(),
                         frameGeometry().right() - geometry().right(), frameGeometry().bottom() - geometry().bottom());
    const QRect room = available.marginsRemoved(frame);
    const QSize size = this->size().boundedTo(room.size());
    QRect placed(geometry().topLeft(), size);
    if (!room.contains(placed))
        placed.moveTopLeft(QPoint(std::clamp(placed.left(), room.left(), room.right() - size.width() + 1),
                                  std::clamp(placed.top(), room.top(), room.bottom() - size.height() + 1)));
    setGeometry(placed);
}

void MainWindow::showEvent(QShowEvent* event)
{
    QMainWindow::showEvent(event);
    if (!m_shownOnce) {
        m_shownOnce = true;
        const QRect available = screen()->availableGeometry();
        fitToScreen(available);
        // Docks start as wide as their content asks (a wrapped Chinese explanation asks for 470 pixels); on a small
        // screen that leaves the views too little, so there they start at a share of the width.
        if (available.width() < kSmallScreenWidth) {
            resizeDocks({m_schemeDock}, {std::max(300, available.width() * 22 / 100)}, Qt::Horizontal);
            connect(m_lessonsDock, &QDockWidget::visibilityChanged, this, [this, available](bool visible) {
                if (visible && !m_lessonsDockSized) {
                    m_lessonsDockSized = true;
                    resizeDocks({m_lessonsDock}, {std::max(300, available.width() * 24 / 100)}, Qt::Horizontal);
                }
            });
            if (m_lessonsDock->isVisible()) {
                m_lessonsDockSized = true;
                resizeDocks({m_lessonsDock}, {std::max(300, available.width() * 24 / 100)}, Qt::Horizontal);
            }
        }
    }
}

bool MainWindow::trainDemoModel(const std::optional<TrainRequest>& request)
{
    TrainRequest r = request ? *request : demoTrainRequest({kDemoModelScheme});
    if (!request)
        r.corpusPath = m_corpus;
    if (!m_demoRun->start(r)) {
        statusBar()->showMessage(tr("A demo model is training already"), 4000);
        return false;
    }
    return true;
}

void MainWindow::adoptTrainedModel(const SharedModel& model)
{
    SharedModel kept = model;
    try {
        kept.file = keepModel(model);
    } catch (const std::exception& e) {
        statusBar()->showMessage(
            tr("The model is not kept for the next start: %1").arg(QString::fromStdString(e.what())), 8000);
    }
    m_attention->addModel(kept);
    m_bias->addModel(kept);
    m_entropy->addModel(kept);
    m_train->addModel(kept, false); // the same model: its entry now names the kept file
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    QSettings settings;
    if (m_schemePanelWanted && m_schemeDock->isHidden()) { // hidden for this tab only: the next start shows it
        const QScopedValueRollback placing(m_placingSchemeDock, true);
        m_schemeDock->show();
    }
    settings.setValue(QStringLiteral("geometry"), saveGeometry());
    settings.setValue(QStringLiteral("windowState"), saveState());
    settings.setValue(QStringLiteral("dark"), m_dark);
    for (ViewBase* v : m_views)
        v->cancelJob();
    m_demoRun->cancel();
    event->accept();
}

} // namespace plab::ui
