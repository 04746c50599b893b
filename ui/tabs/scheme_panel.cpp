// The scheme-and-parameters panel; ranges, texts and validation all come from core's catalogue and makeSchemeSpec.
#include "tabs/scheme_panel.h"

#include "painting/colormap.h"
#include "tabs/fitting_combo.h"
#include "tabs/param_control.h"
#include "base/errors.h"
#include "settings/i18n.h"
#include "schemes/rotary_scaling.h"
#include "settings/session.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QRadioButton>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QStyledItemDelegate>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace plab::ui {

namespace {

// Rows that wrap at the list's width: a narrow dock shows every scheme's whole title on two lines instead of a
// sideways scroll bar (QListView wraps only within a grid, so the width comes from the viewport here).
class WrappingRowsDelegate : public QStyledItemDelegate {
public:
    explicit WrappingRowsDelegate(QAbstractItemView* view) : QStyledItemDelegate(view), m_view(view) {}
    QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const override
    {
        QStyleOptionViewItem wrapped = option;
        wrapped.rect.setWidth(m_view->viewport()->width());
        wrapped.features |= QStyleOptionViewItem::WrapText;
        return QStyledItemDelegate::sizeHint(wrapped, index)
            .boundedTo(QSize(m_view->viewport()->width(), QWIDGETSIZE_MAX));
    }

private:
    QAbstractItemView* m_view;
};

// Length slider: log2 scale from 1 to 4096 in steps of 1/8 octave.
constexpr int kLengthSteps = 96;
int lengthFromSlider(int pos)
{
    return static_cast<int>(std::lround(std::pow(2.0, pos / 8.0)));
}
int sliderFromLength(int length)
{
    return static_cast<int>(std::lround(std::log2(std::max(1, length)) * 8.0));
}

} // namespace

SchemePanel::SchemePanel(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);

    m_schemes = new QListWidget(this);
    m_schemes->setObjectName(QStringLiteral("schemeList"));
    for (const SchemeInfo& s : schemeCatalog()) {
        auto* item =
            new QListWidgetItem(QStringLiteral("%1   —   %2").arg(QString::fromStdString(s.name), schemeTitle(s)));
        item->setData(Qt::UserRole, QString::fromStdString(s.name));
        item->setToolTip(schemeFormula(s));
        m_schemes->addItem(item);
    }
    m_schemes->setMinimumHeight(120);
    m_schemes->setWordWrap(true);
    m_schemes->setItemDelegate(new WrappingRowsDelegate(m_schemes));
    m_schemes->setResizeMode(QListView::Adjust); // the rows wrap anew when the dock is resized
    m_schemes->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    layout->addWidget(new QLabel(tr("<b>Scheme</b>"), this));
    layout->addWidget(m_schemes, 2);

    layout->addWidget(buildAttentionBox());
    layout->addWidget(buildLayerTypeBox());

    m_paramBox = new QGroupBox(tr("Parameters"), this);
    m_paramForm = new QFormLayout(m_paramBox);
    m_paramForm->setRowWrapPolicy(QFormLayout::WrapLongRows);
    layout->addWidget(m_paramBox);

    buildFormulaLabels();
    layout->addWidget(new QLabel(tr("<b>Formula</b>"), this));
    layout->addWidget(m_formula);
    layout->addWidget(m_explanation);
    layout->addWidget(m_errorLabel);
    layout->addStretch(1);

    connect(m_schemes, &QListWidget::currentRowChanged, this, [this] {
        rebuildParameters();
        updateState();
    });
    connect(m_causal, &QRadioButton::toggled, this, [this] { updateState(); });
    connect(m_heads, &QSpinBox::valueChanged, this, [this](int h) {
        m_head->setMaximum(h);
        updateState();
    });
    connect(m_head, &QSpinBox::valueChanged, this, [this] { updateState(); });
    connect(m_length, &QSpinBox::valueChanged, this, [this](int n) {
        setLengthSlider(n);
        updateState();
    });
    connect(m_lengthSlider, &QSlider::valueChanged, this,
            [this](int pos) { m_length->setValue(lengthFromSlider(pos)); });
    connect(m_logn, &QCheckBox::toggled, this, [this] { updateState(); });
    connect(m_context, &QSpinBox::valueChanged, this, [this] { updateState(); });
    connect(m_colorMap, &QComboBox::currentIndexChanged, this, [this] { updateState(); });
    for (QSpinBox* box : {m_window, m_chunk, m_sinks})
        connect(box, &QSpinBox::valueChanged, this, [this] { updateState(); });
    connect(m_softcap, &QDoubleSpinBox::valueChanged, this, [this] { updateState(); });
    connect(m_scaling, &QComboBox::currentIndexChanged, this, [this] {
        rebuildMethodParameters();
        updateState();
    });

    setLengthSlider(64);
    m_updating = true;
    setScheme(QStringLiteral("alibi"));
    m_updating = false;
    updateState();
}

QGroupBox* SchemePanel::buildAttentionBox()
{
    // What every scheme shares: mask, heads, the head shown, length, the logn modifier and its context, colour map.
    auto* shape = new QGroupBox(tr("Attention"), this);
    auto* shapeForm = new QFormLayout(shape);
    // A narrow dock (a small screen) puts a field under its label instead of cutting either short.
    shapeForm->setRowWrapPolicy(QFormLayout::WrapLongRows);
    auto* maskRow = new QHBoxLayout;
    m_causal = new QRadioButton(tr("causal"), shape);
    m_bidirectional = new QRadioButton(tr("bidirectional"), shape);
    m_causal->setChecked(true);
    maskRow->addWidget(m_causal);
    maskRow->addWidget(m_bidirectional);
    shapeForm->addRow(tr("Mask"), maskRow);
    m_heads = new QSpinBox(shape);
    m_heads->setObjectName(QStringLiteral("heads"));
    m_heads->setRange(1, kMaxHeads);
    m_heads->setValue(8);
    shapeForm->addRow(tr("Heads H"), m_heads);
    m_head = new QSpinBox(shape);
    m_head->setObjectName(QStringLiteral("head"));
    m_head->setRange(1, 8);
    m_head->setToolTip(tr("Head shown in the views (1..H)"));
    shapeForm->addRow(tr("Show head"), m_head);
    auto* lengthRow = new QHBoxLayout;
    m_lengthSlider = new QSlider(Qt::Horizontal, shape);
    m_lengthSlider->setRange(0, kLengthSteps);
    m_length = new QSpinBox(shape);
    m_length->setObjectName(QStringLiteral("length"));
    m_length->setRange(1, kMaxLength);
    m_length->setValue(64);
    m_length->setKeyboardTracking(false);
    m_length->setToolTip(tr("Sequence length N (1..%1)").arg(kMaxLength));
    lengthRow->addWidget(m_lengthSlider, 1);
    lengthRow->addWidget(m_length);
    shapeForm->addRow(tr("Length N"), lengthRow);
    auto* lognRow = new QHBoxLayout;
    m_logn = new QCheckBox(tr("logn past L ="), shape);
    m_logn->setToolTip(tr("Scale row m's scores by log(m+1)/log(L) when m+1 > L (entropy invariance)"));
    m_context = new QSpinBox(shape);
    m_context->setObjectName(QStringLiteral("context"));
    m_context->setRange(0, 1 << 20);
    m_context->setSpecialValueText(tr("none"));
    m_context->setToolTip(tr("Training context L: the logn threshold and the default window of local/bca"));
    m_context->setValue(0);
    lognRow->addWidget(m_logn);
    lognRow->addWidget(m_context, 1);
    shapeForm->addRow(tr("Context"), lognRow);
    // The closed boxes show the method's name alone, or "auto", when the dock is too narrow for the whole entry.
    auto* scaling = new FittingComboBox(shape);
    m_scaling = scaling;
    m_scaling->setObjectName(QStringLiteral("scaling"));
    for (const RotaryMethodInfo& m : rotaryMethodCatalog())
        scaling->addItem(QStringLiteral("%1 — %2").arg(QString::fromStdString(m.name), rotaryMethodTitle(m)),
                         QString::fromStdString(m.name), QString::fromStdString(m.name));
    m_scaling->setToolTip(tr("Rotary length extension (rope, xpos): scaled frequencies, logit scale or remapped "
                             "positions; L is the context above (16 when none)"));
    shapeForm->addRow(tr("Length extension"), m_scaling);
    auto* colorMap = new FittingComboBox(shape);
    m_colorMap = colorMap;
    m_colorMap->setObjectName(QStringLiteral("colorMap"));
    colorMap->addItem(tr("auto (diverging for signed data)"), tr("auto"), QStringLiteral("auto"));
    for (const QString& name : ColorMap::availableNames())
        colorMap->addItem(name, name, name);
    m_colorMap->setToolTip(
        tr("Colour map of the heatmaps; auto: diverging when the data has both signs, else viridis"));
    shapeForm->addRow(tr("Colour map"), m_colorMap);
    return shape;
}

QGroupBox* SchemePanel::buildLayerTypeBox()
{
    // Ranges and texts from core's modifier rows (modifierParams: logit-c, window, chunk, sinks, softcap); 0 is off.
    const std::vector<ParamInfo>& rows = modifierParams();
    auto* box = new QGroupBox(tr("Layer type"), this);
    auto* form = new QFormLayout(box);
    form->setRowWrapPolicy(QFormLayout::WrapLongRows);
    auto integerField = [&](const ParamInfo& row, const QString& tip) {
        auto* field = new QSpinBox(box);
        field->setObjectName(QString::fromStdString(row.name));
        field->setRange(0, static_cast<int>(row.maxValue));
        field->setSpecialValueText(tr("off"));
        field->setKeyboardTracking(false);
        field->setToolTip(tip);
        return field;
    };
    m_window = integerField(rows[1], tr("Sliding window W: query m sees keys m - W < n <= m (Mistral, Gemma); off: "
                                        "every key before it. Causal only; local and bca have their own window"));
    m_chunk = integerField(rows[2], tr("Chunked attention C (Llama 4): query m sees the keys n <= m of its own chunk, "
                                       "⌊n/C⌋ = ⌊m/C⌋. Causal only"));
    m_sinks = integerField(rows[3], tr("Attention sinks beside a window or chunk: keys n < S stay visible"));
    m_sinks->setSpecialValueText(tr("none"));
    m_softcap = new QDoubleSpinBox(box);
    m_softcap->setObjectName(QStringLiteral("softcap"));
    m_softcap->setRange(0, 1000);
    m_softcap->setDecimals(2);
    m_softcap->setSpecialValueText(tr("off"));
    m_softcap->setKeyboardTracking(false);
    m_softcap->setToolTip(tr("Soft cap c (Gemma 2): every score s becomes c tanh(s/c), after the bias and scale, "
                             "before the softmax"));
    form->addRow(tr("Window"), m_window);
    form->addRow(tr("Chunk"), m_chunk);
    form->addRow(tr("Sinks"), m_sinks);
    form->addRow(tr("Soft cap"), m_softcap);
    return box;
}

std::vector<std::string> SchemePanel::modifierAssignments() const
{
    std::vector<std::string> out;
    for (const auto& [field, name] : {std::pair{m_window, "window"}, {m_chunk, "chunk"}, {m_sinks, "sinks"}})
        if (field->isEnabled() && field->value() > 0)
            out.push_back(std::string(name) + "=" + std::to_string(field->value()));
    if (m_softcap->value() > 0)
        out.push_back("softcap=" + QString::number(m_softcap->value(), 'g', 17).toStdString());
    return out;
}

void SchemePanel::buildFormulaLabels()
{
    m_formula = new QLabel(this);
    m_formula->setWordWrap(true);
    m_formula->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_formula->setObjectName(QStringLiteral("formula"));
    QFont mono(QStringLiteral("DejaVu Sans Mono"));
    mono.setStyleHint(QFont::Monospace);
    m_formula->setFont(mono);
    m_explanation = new QLabel(this);
    m_explanation->setWordWrap(true);
    m_explanation->setObjectName(QStringLiteral("explanation"));
    m_errorLabel = new QLabel(this);
    m_errorLabel->setWordWrap(true);
    m_errorLabel->setStyleSheet(QStringLiteral("color: #c0392b; font-weight: bold"));
    m_errorLabel->setObjectName(QStringLiteral("error"));
    m_errorLabel->hide();
}

SchemePanel::~SchemePanel() = default;

void SchemePanel::setLengthSlider(int length)
{
    const QSignalBlocker b(m_lengthSlider);
    m_lengthSlider->setValue(sliderFromLength(length));
}

void SchemePanel::rebuildParameters()
{
    // Every row goes, the "(no parameters)" placeholder too (removing only the controls left one per visit).
    while (m_paramForm->rowCount() > 0)
        m_paramForm->removeRow(0);
    m_params.clear();
    m_methodParams.clear();
    m_methodRows = 0;
    const int row = m_schemes->currentRow();
    if (row < 0)
        return;
    const SchemeInfo& info = schemeCatalog()[row];
    for (const ParamInfo& p : info.params) {
        auto* control = new ParamControl(info, p, m_paramBox);
        control->onChanged = [this] { updateState(); };
        auto* label = new QLabel(QString::fromStdString(p.name), m_paramBox);
        label->setToolTip(control->toolTip());
        m_paramForm->addRow(label, control);
        m_params.push_back(control);
    }
    if (info.params.empty())
        m_paramForm->addRow(new QLabel(tr("(no parameters)"), m_paramBox));
    // A window defaults to the training context when one is set, as on the command line.
    if (info.hasWindow && m_context->value() > 0)
        for (ParamControl* c : m_params)
            if (c->info().name == "window")
                c->setValue(info.kind == SchemeKind::Bca && m_context->value() % 2 ? m_context->value() + 1
                                                                                   : m_context->value());
    m_window->setEnabled(!info.hasWindow); // local and bca: their own window and sinks parameters
    m_sinks->setEnabled(!info.hasWindow);
    m_bidirectional->setEnabled(info.bidirectionalAllowed);
    if (!info.bidirectionalAllowed)
        m_causal->setChecked(true);
    m_formula->setText(schemeFormula(info));
    m_explanation->setText(schemeExplanation(info));
    m_paramBox->setTitle(tr("Parameters of %1").arg(QString::fromStdString(info.name)));
    {
        const QSignalBlocker block(m_scaling);
        m_scaling->setEnabled(info.rotary);
        if (!info.rotary)
            m_scaling->setCurrentIndex(0);
    }
    rebuildMethodParameters();
}

void SchemePanel::rebuildMethodParameters()
{
    for (; m_methodRows > 0; --m_methodRows)
        m_paramForm->removeRow(m_paramForm->rowCount() - 1);
    m_methodParams.clear();
    const int row = m_schemes->currentRow();
    if (row < 0 || !schemeCatalog()[row].rotary)
        return;
    const RotaryMethodInfo& method = rotaryMethodByName(m_scaling->currentData().toString().toStdString());
    if (method.method == RotaryMethod::None)
        return;
    m_paramForm->addRow(new QLabel(tr("<i>%1</i>").arg(rotaryMethodTitle(method)), m_paramBox));
    ++m_methodRows;
    for (const ParamInfo& p : method.params) {
        auto* control = new ParamControl(schemeCatalog()[row], p, m_paramBox);
        control->onChanged = [this] { updateState(); };
        auto* label = new QLabel(QString::fromStdString(p.name), m_paramBox);
        label->setToolTip(control->toolTip());
        m_paramForm->addRow(label, control);
        m_methodParams.push_back(control);
        ++m_methodRows;
    }
}

void SchemePanel::updateState()
{
    if (m_updating)
        return;
    const int row = m_schemes->currentRow();
    if (row < 0)
        return;
    const SchemeInfo& info = schemeCatalog()[row];
    std::vector<std::string> assignments;
    for (ParamControl* c : m_params)
        assignments.push_back(c->info().name + "=" + QString::number(c->value(), 'g', 17).toStdString());
    for (ParamControl* c : m_methodParams)
        assignments.push_back(c->info().name + "=" + QString::number(c->value(), 'g', 17).toStdString());
    for (const std::string& a : modifierAssignments())
        assignments.push_back(a);
    try {
        PanelState s;
        s.spec = makeSchemeSpec(info.name, m_heads->value(), m_bidirectional->isChecked(), assignments,
                                m_context->value(), m_logn->isChecked(),
                                info.rotary ? m_scaling->currentData().toString().toStdString() : std::string("none"));
        if (s.spec.logn && s.spec.context < 2)
            throw InputError(
                tr("logn needs a training context L >= 2 (the threshold of log(m+1)/log(L))").toStdString());
        s.length = m_length->value();
        s.head = std::min(m_head->value(), m_heads->value()) - 1;
        s.colorMap = m_colorMap->currentData().toString();
        m_state = std::move(s);
        m_error.clear();
        m_errorLabel->hide();
        Q_EMIT changed();
    } catch (const InputError& e) {
        m_error = QString::fromStdString(e.what());
        m_errorLabel->setText(m_error);
        m_errorLabel->show();
    }
}

void SchemePanel::setScheme(const QString& name)
{
    for (int i = 0; i < m_schemes->count(); ++i)
        if (m_schemes->item(i)->data(Qt::UserRole).toString() == name) {
            m_schemes->setCurrentRow(i);
            return;
        }
}

void SchemePanel::setHeads(int heads)
{
    m_heads->setValue(heads);
}

void SchemePanel::setHead(int head)
{
    m_head->setValue(head + 1);
}

void SchemePanel::setLength(int length)
{
    m_length->setValue(length);
}

void SchemePanel::setBidirectional(bool bidirectional)
{
    (bidirectional ? m_bidirectional : m_causal)->setChecked(true);
}

void SchemePanel::setScaling(const QString& method)
{
    const int i = m_scaling->findData(method);
    if (i >= 0)
        m_scaling->setCurrentIndex(i);
}

void SchemePanel::setParameter(const QString& name, double value)
{
    std::vector<ParamControl*> all = m_params;
    all.insert(all.end(), m_methodParams.begin(), m_methodParams.end());
    for (ParamControl* c : all)
        if (QString::fromStdString(c->info().name) == name) {
            c->setValue(value);
            updateState();
        }
}

void SchemePanel::setModifier(const QString& name, double value)
{
    if (name == QLatin1String("softcap"))
        m_softcap->setValue(value);
    for (const auto& [field, fieldName] : {std::pair{m_window, "window"}, {m_chunk, "chunk"}, {m_sinks, "sinks"}})
        if (name == QLatin1String(fieldName))
            field->setValue(static_cast<int>(std::lround(value)));
}

void SchemePanel::setColorMap(const QString& name)
{
    const int i = m_colorMap->findData(name);
    if (i >= 0)
        m_colorMap->setCurrentIndex(i);
}

void SchemePanel::setLogn(bool logn, int context)
{
    m_updating = true;
    m_context->setValue(context);
    m_logn->setChecked(logn);
    m_updating = false;
    updateState();
}

nlohmann::json SchemePanel::saveState() const
{
    nlohmann::json params = nlohmann::json::object();
    for (ParamControl* c : m_params)
        params[c->info().name] = c->value();
    for (ParamControl* c : m_methodParams)
        params[c->info().name] = c->value();
    const int row = m_schemes->currentRow();
    return {{"scheme", row >= 0 ? schemeCatalog()[row].name : std::string("alibi")},
            {"heads", m_heads->value()},
            {"head", m_head->value() - 1},
            {"length", m_length->value()},
            {"bidirectional", m_bidirectional->isChecked()},
            {"logn", m_logn->isChecked()},
            {"context", m_context->value()},
            {"colormap", m_colorMap->currentData().toString().toStdString()},
            {"scaling", m_scaling->currentData().toString().toStdString()},
            {"parameters", params},
            {"modifiers",
             {{"window", m_window->value()},
              {"chunk", m_chunk->value()},
              {"sinks", m_sinks->value()},
              {"softcap", m_softcap->value()}}}};
}

void SchemePanel::restoreState(const nlohmann::json& state)
{
    const std::string where = "panel";
    // Validate everything before touching a widget, so a bad file leaves the panel as it was.
    const std::string scheme = sessionString(state, "scheme", "alibi", where);
    const SchemeInfo& info = schemeByName(scheme);
    const int heads = sessionInt(state, "heads", 8, 1, kMaxHeads, where);
    const int head = sessionInt(state, "head", 0, 0, heads - 1, where);
    const int length = sessionInt(state, "length", 64, 1, kMaxLength, where);
    const bool bidirectional = sessionBool(state, "bidirectional", false, where);
    const bool logn = sessionBool(state, "logn", false, where);
    const int context = sessionInt(state, "context", 0, 0, 1 << 20, where);
    const QString colorMap = QString::fromStdString(sessionString(state, "colormap", "auto", where));
    if (colorMap != QLatin1String("auto") && !ColorMap::isKnown(colorMap))
        throw InputError("session: panel.colormap = '" + colorMap.toStdString() +
                         "' is not allowed; allowed: auto, viridis, magma, cividis, diverging");
    std::vector<std::string> assignments;
    std::map<std::string, double> values;
    if (state.contains("parameters")) {
        const nlohmann::json& params = state.at("parameters");
        if (!params.is_object())
            throw InputError("session: panel.parameters must be an object of NAME: number");
        for (const auto& [key, value] : params.items()) {
            if (!value.is_number())
                throw InputError("session: panel.parameters." + key + " must be a number");
            assignments.push_back(key + "=" + QString::number(value.get<double>(), 'g', 17).toStdString());
            values[key] = value.get<double>();
        }
    }
    const std::string scaling = sessionString(state, "scaling", "none", where);
    // The layer-type modifiers (0: off), each in its field's range; their combination is checked with the spec.
    const nlohmann::json modifiers = state.contains("modifiers") ? state.at("modifiers") : nlohmann::json::object();
    if (!modifiers.is_object())
        throw InputError("session: panel.modifiers must be an object of NAME: number");
    const std::string modifierWhere = where + ".modifiers";
    const int window = sessionInt(modifiers, "window", 0, 0, m_window->maximum(), modifierWhere);
    const int chunk = sessionInt(modifiers, "chunk", 0, 0, m_chunk->maximum(), modifierWhere);
    const int sinks = sessionInt(modifiers, "sinks", 0, 0, m_sinks->maximum(), modifierWhere);
    const double softcap = sessionNumber(modifiers, "softcap", 0, modifierWhere);
    if (!(softcap >= 0 && softcap <= m_softcap->maximum()))
        throw InputError("session: panel.modifiers.softcap = " + std::to_string(softcap) +
                         " is out of range; allowed: 0 (off) or (0, " + std::to_string(m_softcap->maximum()) + "]");
    std::vector<std::string> withModifiers = assignments;
    for (const auto& [name, value] : {std::pair{"window", double(window)},
                                      {"chunk", double(chunk)},
                                      {"sinks", double(sinks)},
                                      {"softcap", softcap}})
        if (value > 0)
            withModifiers.push_back(std::string(name) + "=" + QString::number(value, 'g', 17).toStdString());
    makeSchemeSpec(info.name, heads, bidirectional, withModifiers, context, logn, scaling); // throws InputError

    m_updating = true;
    setScheme(QString::fromStdString(info.name));
    m_heads->setValue(heads);
    m_head->setMaximum(heads);
    m_head->setValue(head + 1);
    m_length->setValue(length);
    setLengthSlider(length);
    setBidirectional(bidirectional);
    m_context->setValue(context);
    m_logn->setChecked(logn);
    setColorMap(colorMap);
    m_window->setValue(window);
    m_chunk->setValue(chunk);
    m_sinks->setValue(sinks);
    m_softcap->setValue(softcap);
    setScaling(QString::fromStdString(scaling));
    rebuildMethodParameters();
    std::vector<ParamControl*> all = m_params;
    all.insert(all.end(), m_methodParams.begin(), m_methodParams.end());
    for (ParamControl* c : all) {
        auto it = values.find(c->info().name);
        c->setValue(it != values.end() ? it->second : c->info().defaultValue);
    }
    m_updating = false;
    updateState();
}

} // namespace plab::ui
