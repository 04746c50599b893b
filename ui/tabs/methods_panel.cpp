// The Train tab's methods panel: model choice, method list with editable parameters, worker, chart and exports.
#include "tabs/methods_panel.h"
#include "tabs/fitting_combo.h"
#include "tabs/view_base.h"

#include "charts/curve_chart.h"
#include "settings/i18n.h"
#include "settings/session.h"

#include "base/errors.h"
#include "runs/method_comparison.h"
#include "schemes/rotary_scaling.h"
#include "schemes/schemes.h"
#include "runs/training.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QScrollBar>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <utility>

namespace plab::ui {

namespace {

constexpr int kNameColumn = 0;
constexpr int kValueColumn = 1;

bool isRotaryModel(const SharedModel& model)
{
    return model.isValid() && schemeByName(model.model->config().scheme).rotary;
}

} // namespace

// Every catalogue method, ticked, with its parameters at their defaults; as wide as its two columns need.
void MethodsPanel::buildMethodTree(QWidget* side)
{
    m_tree = new QTreeWidget(side);
    m_tree->setObjectName(QStringLiteral("methods"));
    m_tree->setColumnCount(2);
    m_tree->setHeaderLabels({tr("method / parameter"), tr("value")});
    m_tree->setRootIsDecorated(true);
    m_tree->setUniformRowHeights(true);
    for (const RotaryMethodInfo& method : rotaryMethodCatalog()) {
        auto* item = new QTreeWidgetItem(m_tree);
        item->setText(kNameColumn, QString::fromStdString(method.name));
        item->setToolTip(kNameColumn, rotaryMethodTitle(method));
        item->setFlags((item->flags() | Qt::ItemIsUserCheckable) & ~Qt::ItemIsEditable);
        item->setCheckState(kNameColumn, Qt::Checked);
        for (const ParamInfo& p : method.params) {
            auto* child = new QTreeWidgetItem(item);
            child->setText(kNameColumn, QString::fromStdString(p.name));
            child->setText(kValueColumn, QString::number(p.defaultValue, 'g', 10));
            child->setToolTip(kValueColumn,
                              tr("%1; allowed: %2").arg(paramDescription(schemeByName("rope"), p), paramRange(p)));
            child->setFlags(child->flags() | Qt::ItemIsEditable);
        }
    }
    m_tree->expandAll();
    m_tree->header()->setSectionResizeMode(kNameColumn, QHeaderView::ResizeToContents);
    // The values take what is left (a stretched last section would keep its default 100 pixels and scroll sideways).
    m_tree->header()->setStretchLastSection(false);
    m_tree->header()->setSectionResizeMode(kValueColumn, QHeaderView::Stretch);
    // The side column is as wide as the tree's two columns need (more in some languages): no sideways scroll bar.
    m_tree->ensurePolished(); // the style's metrics (check boxes, margins) as they will be drawn
    int treeWidth = 2 * m_tree->frameWidth() + m_tree->verticalScrollBar()->sizeHint().width();
    for (const int c : {kNameColumn, kValueColumn})
        treeWidth += std::max(static_cast<const QAbstractItemView*>(m_tree)->sizeHintForColumn(c),
                              m_tree->header()->sectionSizeHint(c));
    m_tree->setMinimumWidth(treeWidth);
}

MethodsPanel::MethodsPanel(QWidget* parent)
    : QWidget(parent), m_job(this, {[this](MethodsResult r) { onResult(std::move(r)); },
                                    [this](int done, int total) { Q_EMIT progress(done, total); },
                                    [this] {
                                        m_cancel->setEnabled(false);
                                        if (!m_delivered) // canceled before a result came
                                            m_status->setText(ViewBase::canceledText(m_clock.elapsed()));
                                        updateAvailability(false); // the result's status line stays
                                        Q_EMIT busyChanged(false);
                                    }})
{
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* side = new QWidget(this);
    side->setMaximumWidth(250);
    auto* column = new QVBoxLayout(side);
    column->setContentsMargins(0, 0, 0, 0);
    column->addWidget(new QLabel(tr("<b>Model</b> (rope or xpos)"), side));
    m_model = new FittingComboBox(side); // a long file name: its start and end
    m_model->setObjectName(QStringLiteral("methods_model"));
    column->addWidget(m_model);
    column->addWidget(new QLabel(tr("<b>Methods</b> (double-click a value to edit it)"), side));
    buildMethodTree(side);
    side->setMaximumWidth(std::max(side->maximumWidth(), m_tree->minimumWidth()));
    column->addWidget(m_tree, 1);
    m_evaluate = new QPushButton(tr("Evaluate under methods"), side);
    m_evaluate->setObjectName(QStringLiteral("evaluate_methods"));
    m_cancel = new QPushButton(tr("Cancel"), side);
    m_cancel->setEnabled(false);
    m_defaults = new QPushButton(tr("Defaults"), side);
    m_defaults->setToolTip(tr("factor = longest length / L (dynamic-ntk keeps 1), window = L/2, the rest as in the "
                              "catalogue"));
    column->addWidget(m_evaluate); // a row of its own: its text is long (and longer in some languages)
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_cancel);
    buttons->addWidget(m_defaults);
    column->addLayout(buttons);
    m_status = new QLabel(side);
    m_status->setWordWrap(true);
    column->addWidget(m_status);
    layout->addWidget(side);

    m_plot = new CurvePlot(this);
    m_plot->setEmptyHint(tr("Tick methods and press \"Evaluate under methods\": the model is scored zero-shot under "
                            "each, one curve per method."));
    layout->addWidget(m_plot, 1);

    connect(m_model, &QComboBox::currentIndexChanged, this, [this] {
        showModelDefaults();
        updateAvailability();
    });
    connect(m_evaluate, &QPushButton::clicked, this, &MethodsPanel::evaluate);
    connect(m_cancel, &QPushButton::clicked, this, &MethodsPanel::cancel);
    connect(m_defaults, &QPushButton::clicked, this, &MethodsPanel::resetParameters);
    connect(m_plot, &CurvePlot::hovered, this, &MethodsPanel::hoverText);
    updateAvailability();
}

MethodsPanel::~MethodsPanel()
{
    m_job.cancel();
}

void MethodsPanel::addModel(const SharedModel& model, bool select)
{
    if (!model.isValid())
        return;
    int index = -1;
    for (size_t i = 0; i < m_models.size(); ++i)
        if (m_models[i].model == model.model)
            index = static_cast<int>(i);
    if (index >= 0) {
        m_models[index] = model;
        m_model->setItemText(index, model.name);
    } else {
        m_models.push_back(model);
        index = static_cast<int>(m_models.size()) - 1;
        const QSignalBlocker blocker(m_model);
        m_model->addItem(model.name);
    }
    m_model->setItemData(index, model.file.isEmpty() ? model.name : model.name + QLatin1Char('\n') + model.file,
                         Qt::ToolTipRole); // the combo box elides long names
    if (select || m_models.size() == 1)
        selectModel(index);
}

void MethodsPanel::selectModel(int index)
{
    if (index < 0 || index >= modelCount())
        return;
    if (m_model->currentIndex() == index) {
        showModelDefaults();
        updateAvailability();
    }
    m_model->setCurrentIndex(index);
}

SharedModel MethodsPanel::currentModel() const
{
    const int i = m_model->currentIndex();
    return i >= 0 && i < modelCount() ? m_models[i] : SharedModel{};
}

std::vector<MethodChoice> MethodsPanel::shownMethods() const
{
    std::vector<MethodChoice> methods;
    for (int i = 0; i < m_tree->topLevelItemCount(); ++i) {
        const QTreeWidgetItem* item = m_tree->topLevelItem(i);
        MethodChoice choice;
        choice.method = item->text(kNameColumn).toStdString();
        for (int c = 0; c < item->childCount(); ++c)
            choice.settings.push_back(
                (item->child(c)->text(kNameColumn) + QLatin1Char('=') + item->child(c)->text(kValueColumn).trimmed())
                    .toStdString());
        methods.push_back(std::move(choice));
    }
    return methods;
}

std::vector<MethodChoice> MethodsPanel::checkedMethods() const
{
    std::vector<MethodChoice> methods = shownMethods();
    std::erase_if(methods, [this](const MethodChoice& choice) {
        const QList<QTreeWidgetItem*> items =
            m_tree->findItems(QString::fromStdString(choice.method), Qt::MatchExactly, kNameColumn);
        return items.isEmpty() || items.front()->checkState(kNameColumn) != Qt::Checked;
    });
    return methods;
}

void MethodsPanel::setCheckedMethods(const QStringList& names)
{
    for (const QString& name : names)
        rotaryMethodByName(name.toStdString()); // InputError listing the known methods
    for (int i = 0; i < m_tree->topLevelItemCount(); ++i) {
        QTreeWidgetItem* item = m_tree->topLevelItem(i);
        item->setCheckState(kNameColumn, names.contains(item->text(kNameColumn)) ? Qt::Checked : Qt::Unchecked);
    }
}

bool MethodsPanel::setParameterText(const QString& method, const QString& name, const QString& text)
{
    for (int i = 0; i < m_tree->topLevelItemCount(); ++i) {
        QTreeWidgetItem* item = m_tree->topLevelItem(i);
        if (item->text(kNameColumn) != method)
            continue;
        for (int c = 0; c < item->childCount(); ++c)
            if (item->child(c)->text(kNameColumn) == name) {
                item->child(c)->setText(kValueColumn, text);
                return true;
            }
    }
    return false;
}

void MethodsPanel::resetParameters()
{
    const SharedModel model = currentModel();
    // Without a model (context 0), methodDefaultSettings gives the catalogue's defaults.
    const int context = model.isValid() ? model.model->config().context : 0;
    const std::vector<int> lengths = context > 0 ? extrapolationLengths(context) : std::vector<int>{0};
    for (int i = 0; i < m_tree->topLevelItemCount(); ++i) {
        QTreeWidgetItem* item = m_tree->topLevelItem(i);
        const RotaryMethodInfo& info = rotaryMethodByName(item->text(kNameColumn).toStdString());
        // Core's one home of the defaults: NAME=VALUE for every parameter, in the catalogue's order.
        const std::vector<std::string> defaults = methodDefaultSettings(info, context, lengths.back());
        for (int c = 0; c < item->childCount() && c < static_cast<int>(defaults.size()); ++c) {
            const std::string& d = defaults[c];
            item->child(c)->setText(kValueColumn, QString::fromStdString(d.substr(d.find('=') + 1)));
        }
    }
}

void MethodsPanel::showModelDefaults()
{
    resetParameters();
    if (currentModel().isValid())
        setSettings(std::exchange(m_pendingSettings, {}));
}

void MethodsPanel::setSettings(const std::vector<MethodChoice>& settings)
{
    for (const MethodChoice& choice : settings)
        for (const std::string& setting : choice.settings) {
            const size_t eq = setting.find('='); // checked: NAME=VALUE (checkMethodChoice)
            setParameterText(QString::fromStdString(choice.method), QString::fromStdString(setting.substr(0, eq)),
                             QString::fromStdString(setting.substr(eq + 1)));
        }
}

nlohmann::json MethodsPanel::sessionState() const
{
    nlohmann::json checked = nlohmann::json::array();
    for (const MethodChoice& choice : checkedMethods())
        checked.push_back(choice.method);
    // A value typed into the list that core refuses (not a number, out of range) is left out: the session would not
    // open again (nor could the window put its own state back, e.g. when the language changes), and evaluating
    // refuses it anyway. That parameter comes back at its default.
    nlohmann::json settings = nlohmann::json::object();
    for (const MethodChoice& choice : shownMethods()) {
        nlohmann::json valid = nlohmann::json::array();
        for (const std::string& setting : choice.settings) {
            try {
                checkMethodChoice({choice.method, {setting}});
                valid.push_back(setting);
            } catch (const InputError&) {
            }
        }
        settings[choice.method] = valid;
    }
    return {{"checked", checked}, {"settings", settings}};
}

MethodsPanel::SessionState MethodsPanel::readSessionState(const nlohmann::json& state, const std::string& where)
{
    SessionState read;
    if (state.is_object() && state.contains("checked")) {
        read.checked = sessionStringList(state, "checked", where);
        for (const QString& name : read.checked) {
            try {
                rotaryMethodByName(name.toStdString());
            } catch (const InputError& e) {
                throw InputError("session: " + where + ".checked: " + e.what());
            }
        }
    } else {
        for (const RotaryMethodInfo& method : rotaryMethodCatalog())
            read.checked << QString::fromStdString(method.name);
    }
    const nlohmann::json settings = sessionObject(state, "settings", where);
    const std::string settingsWhere = where + ".settings";
    for (auto it = settings.begin(); it != settings.end(); ++it) {
        MethodChoice choice;
        choice.method = it.key();
        for (const QString& s : sessionStringList(settings, it.key().c_str(), settingsWhere))
            choice.settings.push_back(s.toStdString());
        try {
            checkMethodChoice(choice); // the method, each parameter's name and range: core's one check
        } catch (const InputError& e) {
            throw InputError("session: " + settingsWhere + "." + it.key() + ": " + e.what());
        }
        read.settings.push_back(std::move(choice));
    }
    return read;
}

void MethodsPanel::applySessionState(const SessionState& state)
{
    setCheckedMethods(state.checked);
    resetParameters(); // what the session does not give: the defaults
    setSettings(state.settings);
    // No model yet: the first one offered (e.g. the session's own checkpoint) keeps these values over its defaults.
    m_pendingSettings = currentModel().isValid() ? std::vector<MethodChoice>{} : state.settings;
}

void MethodsPanel::setEvaluation(size_t evalBytes, EvalMode mode, const QString& corpusPath)
{
    m_evalBytes = evalBytes;
    m_mode = mode;
    m_corpus = corpusPath;
}

MethodsRequest MethodsPanel::request() const
{
    MethodsRequest r;
    r.model = currentModel();
    r.methods = checkedMethods();
    r.mode = m_mode;
    r.evalBytes = m_evalBytes;
    r.corpusPath = m_corpus;
    return r;
}

QString MethodsPanel::disabledReason() const
{
    const SharedModel model = currentModel();
    if (!model.isValid())
        return tr("No model yet: train rope or xpos on the \"Training runs\" page or load a checkpoint in "
                  "\"Attention on text\".");
    if (!isRotaryModel(model))
        return tr("%1 is not a rotary model (its scheme is %2): length-extension methods apply to rope and xpos only.")
            .arg(model.name, QString::fromStdString(model.model->config().scheme));
    return {};
}

void MethodsPanel::updateAvailability(bool resetStatus)
{
    const QString reason = disabledReason();
    const bool busy = m_job.isRunning();
    m_evaluate->setEnabled(reason.isEmpty() && !busy);
    m_evaluate->setToolTip(reason);
    m_defaults->setEnabled(reason.isEmpty());
    m_tree->setEnabled(reason.isEmpty());
    if (!busy && (resetStatus || !reason.isEmpty()))
        m_status->setText(!reason.isEmpty()
                              ? reason
                              : tr("Scores held-out text at %1 under each ticked method (eval bytes, evaluation "
                                   "mode and corpus as on the \"Training runs\" page).")
                                    .arg(evaluationLengthsText()));
}

void MethodsPanel::start(const MethodsRequest& request)
{
    if (m_job.isRunning())
        return;
    if (request.methods.empty()) {
        m_status->setText(tr("Tick at least one method."));
        return;
    }
    m_status->setText(tr("Evaluating %1 under %2 method(s)…").arg(request.model.name).arg(request.methods.size()));
    m_evaluate->setEnabled(false);
    m_cancel->setEnabled(true);
    m_delivered = false;
    m_clock.start();
    Q_EMIT busyChanged(true);
    m_job.start([request](const JobControl& control) { return computeMethods(request, control); });
}

void MethodsPanel::cancel()
{
    const bool running = m_job.isRunning() && !m_job.isCanceled();
    m_job.cancel();
    if (!running)
        return;
    // At once, whatever step the worker is still finishing: its result will not be shown.
    m_delivered = true;
    m_cancel->setEnabled(false);
    m_status->setText(ViewBase::canceledText(m_clock.elapsed()));
}

void MethodsPanel::onResult(MethodsResult result)
{
    m_delivered = true;
    if (result.canceled) {
        m_status->setText(ViewBase::canceledText(m_clock.elapsed()));
        return;
    }
    if (!result.error.isEmpty()) {
        m_status->setText(result.error);
        Q_EMIT statusMessage(result.error);
        return;
    }
    m_result = std::move(result);
    m_plot->setFigure(methodsPerplexityFigure(m_result.curves, m_result.scheme, m_result.context));
    m_status->setText(tr("Done: %1 under %2 method(s).").arg(m_result.request.model.name).arg(m_result.curves.size()));
    Q_EMIT pictureUpdated();
}

void MethodsPanel::paintPicture(QPainter& painter, const QRectF& target, const PictureStyle& style) const
{
    renderCurveFigure(painter, target, m_plot->figure(), style, m_plot->emptyHint());
}

void MethodsPanel::writeData(std::ostream& out, DataFormat format) const
{
    if (!hasPicture())
        throw InputError("the methods chart has nothing to export yet; press \"Evaluate under methods\" first");
    const MethodsResult& r = m_result;
    nlohmann::json meta = {
        {"model", r.request.model.name.toStdString()}, {"config", r.config},    {"mode", evalModeName(r.request.mode)},
        {"corpus", r.corpusSource.toStdString()},      {"split", "validation"}, {"max_bytes", r.request.evalBytes}};
    writeMethodComparison(out, format, r.curves, meta);
}

void MethodsPanel::setDark(bool dark)
{
    m_plot->setDark(dark);
}

} // namespace plab::ui
