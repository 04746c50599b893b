// The Train tab's layer-type fields: a comma list of sliding/full/chunked, W, C, the full layers' scheme and settings.
#include "tabs/layer_type_fields.h"

#include "base/errors.h"
#include "settings/session.h"

#include <QComboBox>
#include <QFormLayout>
#include <QLineEdit>
#include <QSpinBox>

#include <algorithm>

namespace plab::ui {

namespace {

std::vector<std::string> splitOn(const QString& text, QChar separator)
{
    std::vector<std::string> out;
    for (const QString& part : text.split(separator, Qt::SkipEmptyParts))
        out.push_back(part.trimmed().toStdString());
    return out;
}

QString joined(const std::vector<std::string>& items, const QString& separator)
{
    QStringList list;
    for (const std::string& item : items)
        list << QString::fromStdString(item);
    return list.join(separator);
}

} // namespace

LayerTypeFields::LayerTypeFields(QWidget* parent) : QObject(parent)
{
    m_types = new QLineEdit(parent);
    m_types->setObjectName(QStringLiteral("layer_types"));
    m_types->setPlaceholderText(tr("off (e.g. sliding,full)"));
    m_types->setToolTip(tr("A comma list of sliding, full and chunked, repeating over the layers: "
                           "sliding,sliding,sliding,sliding,sliding,full is Gemma 3's 5:1; empty: no layer types"));
    auto span = [parent](const char* name, const QString& tip) {
        auto* box = new QSpinBox(parent);
        box->setObjectName(QString::fromLatin1(name));
        box->setRange(0, 1000000);
        box->setSpecialValueText(tr("default (L/4)"));
        box->setToolTip(tip);
        return box;
    };
    m_window = span("sliding_window", tr("The sliding layers' window W: query m sees keys m − W < n ≤ m"));
    m_chunk = span("attention_chunk_size", tr("The chunked layers' chunk C: query m sees keys n ≤ m of its own chunk"));
    m_fullScheme = new QComboBox(parent);
    m_fullScheme->setObjectName(QStringLiteral("full_scheme"));
    m_fullScheme->addItem(tr("the model's scheme"), QString());
    for (const SchemeInfo& info : schemeCatalog())
        if (fullLayerSchemeAllowed(info))
            m_fullScheme->addItem(QString::fromStdString(info.name), QString::fromStdString(info.name));
    m_fullScheme->setToolTip(tr("The full layers' own scheme: none is RNoPE-SWA (rope and a window on the sliding "
                                "layers, no positions on the full ones)"));
    m_fullSettings = new QLineEdit(parent);
    m_fullSettings->setObjectName(QStringLiteral("full_settings"));
    m_fullSettings->setPlaceholderText(tr("e.g. base=1000000"));
    m_fullSettings->setToolTip(tr("NAME=VALUE parameters of the full layers' scheme, separated by spaces: "
                                  "base=1000000 is Gemma 3's global base"));
    connect(m_types, &QLineEdit::editingFinished, this, &LayerTypeFields::edited);
    connect(m_fullSettings, &QLineEdit::editingFinished, this, &LayerTypeFields::edited);
    connect(m_window, &QSpinBox::valueChanged, this, &LayerTypeFields::edited);
    connect(m_chunk, &QSpinBox::valueChanged, this, &LayerTypeFields::edited);
    connect(m_fullScheme, &QComboBox::currentIndexChanged, this, &LayerTypeFields::edited);
}

void LayerTypeFields::addRows(QFormLayout* form)
{
    form->addRow(tr("Layer types"), m_types);
    form->addRow(tr("Window W"), m_window);
    form->addRow(tr("Chunk C"), m_chunk);
    form->addRow(tr("Full layers' scheme"), m_fullScheme);
    form->addRow(tr("Full layers' settings"), m_fullSettings);
}

void LayerTypeFields::apply(ModelConfig& model) const
{
    model.layerTypes = splitOn(m_types->text(), QLatin1Char(','));
    model.window = m_window->value();
    model.chunk = m_chunk->value();
    model.fullScheme = m_fullScheme->currentData().toString().toStdString();
    model.fullSettings = splitOn(m_fullSettings->text(), QLatin1Char(' '));
}

void LayerTypeFields::setFrom(const ModelConfig& model)
{
    m_types->setText(joined(model.layerTypes, QStringLiteral(",")));
    m_window->setValue(std::max(0, model.window));
    m_chunk->setValue(std::max(0, model.chunk));
    const int index = m_fullScheme->findData(QString::fromStdString(model.fullScheme));
    m_fullScheme->setCurrentIndex(std::max(0, index));
    m_fullSettings->setText(joined(model.fullSettings, QStringLiteral(" ")));
}

void LayerTypeFields::saveState(nlohmann::json& state) const
{
    ModelConfig model;
    apply(model);
    state["layer_types"] = model.layerTypes;
    state["sliding_window"] = model.window;
    state["attention_chunk_size"] = model.chunk;
    state["full_scheme"] = model.fullScheme;
    state["full_settings"] = model.fullSettings;
}

ModelConfig LayerTypeFields::readState(const nlohmann::json& state, const std::string& where) const
{
    // Sessions from before the layer types: none.
    ModelConfig model;
    for (const QString& s : sessionStringList(state, "layer_types", where))
        model.layerTypes.push_back(s.toStdString());
    model.window = sessionInt(state, "sliding_window", 0, 0, m_window->maximum(), where);
    model.chunk = sessionInt(state, "attention_chunk_size", 0, 0, m_chunk->maximum(), where);
    model.fullScheme = sessionString(state, "full_scheme", "", where);
    if (!model.fullScheme.empty() && m_fullScheme->findData(QString::fromStdString(model.fullScheme)) < 0)
        throw InputError("session: " + where + ".full_scheme = '" + model.fullScheme +
                         "' is not a scheme the full layers can have");
    for (const QString& s : sessionStringList(state, "full_settings", where))
        model.fullSettings.push_back(s.toStdString());
    return model;
}

} // namespace plab::ui
