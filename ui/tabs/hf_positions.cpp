// The Your model tab's Positions chooser: a rotary method applied zero-shot to the maps, with its parameters.
#include "tabs/hf_model_view.h"

#include "tabs/param_control.h"
#include "tabs/scaling_layers_combo.h"

#include "base/errors.h"
#include "hf/hf_config.h"
#include "schemes/rotary_scaling.h"
#include "schemes/schemes.h"

#include <QComboBox>
#include <QFormLayout>
#include <QLabel>
#include <QSignalBlocker>

#include <map>

namespace plab::ui {

void HfModelView::checkPositions(const QString& method, const QStringList& settings)
{
    if (method.isEmpty()) {
        if (!settings.isEmpty())
            throw InputError("settings need a method; allowed: an empty list for the config's own positions");
        return;
    }
    MethodChoice choice{method.toStdString(), {}};
    for (const QString& s : settings)
        choice.settings.push_back(s.toStdString());
    checkMethodChoice(choice);
}

void HfModelView::showPositionsAvailability()
{
    const bool rotary = m_model && m_model->model->config().scheme == "rope";
    m_positions->setEnabled(rotary);
    if (!m_model) {
        m_positions->setToolTip(tr("Open a model folder first."));
        return;
    }
    if (!rotary) {
        // Core's reason, as the CLI gives it for --scaling on this folder.
        QString reason;
        try {
            hfPositionSpec(m_model->model->config(), "pi");
        } catch (const InputError& e) {
            reason = QString::fromStdString(e.what());
        }
        const QSignalBlocker block(m_positions);
        m_positions->setCurrentIndex(0);
        rebuildPositionParameters();
        m_positions->setToolTip(reason);
        return;
    }
    m_positions->setToolTip(
        tr("Positions of the attention, entropy and sinks pages: the config's own rope scaling, or "
           "a length-extension method applied zero-shot (no training), with its parameters below. Methods that remap "
           "positions (rerope, self-extend) are on the Evaluate under methods page."));
}

void HfModelView::rebuildPositionParameters()
{
    while (m_positionParamForm->rowCount() > 0)
        m_positionParamForm->removeRow(0);
    m_positionParams.clear();
    const QString method = positionsMethod();
    if (method.isEmpty())
        return;
    if (m_model) { // a folder that mixes layer types: where the method goes (core's rule)
        const std::string strip = hfLayerStrip(m_model->model->config());
        if (strip.find_first_not_of(strip.front()) != std::string::npos) {
            auto* layers = new ScalingLayersCombo(m_positionParamForm->parentWidget());
            layers->setObjectName(QStringLiteral("hfScalingLayers"));
            layers->setLayers(m_positionsLayers);
            connect(layers, &QComboBox::currentIndexChanged, this, [this, layers] {
                m_positionsLayers = layers->layers();
                markDirty();
            });
            m_positionParamForm->addRow(tr("Reaches:"), layers);
        }
    }
    const RotaryMethodInfo& info = rotaryMethodByName(method.toStdString());
    // The values core applies when no setting is given: the config's own for its own method, else the catalogue's.
    std::map<std::string, double> start;
    if (m_model && m_model->model->config().scheme == "rope") {
        try {
            start = hfPositionSpec(m_model->model->config(), method.toStdString()).scalingParams;
        } catch (const InputError&) {
            // longrope without the config's lists: the catalogue's values; the request shows core's message
        }
    }
    for (const ParamInfo& p : info.params) {
        auto* control = new ParamControl(schemeByName("rope"), p, m_positionParamForm->parentWidget());
        if (const auto it = start.find(p.name); it != start.end())
            control->setValue(it->second);
        control->onChanged = [this] { markDirty(); };
        auto* label = new QLabel(QString::fromStdString(p.name), m_positionParamForm->parentWidget());
        label->setToolTip(control->toolTip());
        m_positionParamForm->addRow(label, control);
        m_positionParams.push_back(control);
    }
}

QString HfModelView::positionsMethod() const
{
    return m_positions->currentData().toString();
}

QStringList HfModelView::positionsSettings() const
{
    QStringList settings;
    for (const ParamControl* c : m_positionParams)
        settings << QStringLiteral("%1=%2").arg(QString::fromStdString(c->info().name),
                                                QString::fromStdString(exactText(c->value())));
    return settings;
}

void HfModelView::setPositions(const QString& method, const QStringList& settings)
{
    checkPositions(method, settings);
    if (m_positions->findData(method) < 0)
        throw InputError("positions '" + method.toStdString() +
                         "' remap positions, which the attention maps cannot draw; allowed: a method that does not "
                         "(Evaluate under methods takes it)");
    {
        const QSignalBlocker block(m_positions);
        m_positions->setCurrentIndex(std::max(0, m_positions->findData(method)));
        rebuildPositionParameters();
    }
    for (const QString& s : settings) {
        const QString name = s.section(QLatin1Char('='), 0, 0).trimmed();
        for (ParamControl* c : m_positionParams)
            if (QString::fromStdString(c->info().name) == name)
                c->setValue(s.section(QLatin1Char('='), 1).trimmed().toDouble());
    }
    markDirty();
}

std::optional<SchemeSpec> HfModelView::chosenPositions() const
{
    const QString method = positionsMethod();
    if (!m_model || method.isEmpty())
        return std::nullopt;
    std::vector<std::string> settings;
    for (const QString& s : positionsSettings())
        settings.push_back(s.toStdString());
    return hfPositionSpec(m_model->model->config(), method.toStdString(), settings);
}

} // namespace plab::ui
