// The Train tab's session state: what it saves, and the checks of a saved state before any of it is applied.
#include "tabs/train_view.h"

#include "tabs/layer_type_fields.h"
#include "tabs/methods_panel.h"
#include "settings/session.h"

#include "model/model_config.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QListWidget>
#include <QSpinBox>

#include <algorithm>
#include <string>

namespace plab::ui {

std::vector<std::pair<const char*, QSpinBox*>> TrainView::intFields() const
{
    return {{"steps", m_steps},    {"context", m_context},      {"layers", m_layers},
            {"d_model", m_dModel}, {"heads", m_heads},          {"d_ff", m_dFf},
            {"batch", m_batch},    {"eval_bytes", m_evalBytes}, {"seeds", m_seeds}};
}

nlohmann::json TrainView::saveState() const
{
    nlohmann::json names = nlohmann::json::array();
    for (const QString& name : checkedSchemes(m_schemes))
        names.push_back(name.toStdString());
    nlohmann::json state{{"schemes", names},
                         {"preset", preset().toStdString()},
                         {"learning_rate", m_lr->value()},
                         {"eval_mode", m_mode->currentData().toString().toStdString()}};
    for (const auto& [key, box] : intFields())
        state[key] = box->value();
    state["task"] = m_task->currentData().toString().toStdString();
    state["task_length"] = m_taskLength->value();
    state["recalibration_percent"] = m_fraction->value();
    state["logit_c"] = m_logitC->value();
    // The model options under modelShapeJson's names; nope_every 0 is off.
    const ModelConfig model = request().model;
    state["nope_every"] = model.nopeEvery;
    state["attn_temperature_tuning"] = model.temperature.tuning;
    state["floor_scale"] = model.temperature.floorScale;
    state["attn_scale"] = model.temperature.attnScale;
    state["ssmax"] = model.ssmax;
    state["sink_logit"] = model.sinkLogit;
    m_layerTypeFields->saveState(state);
    state["page"] = methodsShown() ? "methods" : "runs";
    state["methods"] = m_methods->sessionState();
    return state;
}

namespace {

// A number a session gives for `box` (its value when missing), inside the box's range.
double sessionBoxValue(const nlohmann::json& state, const char* key, const QDoubleSpinBox* box,
                       const std::string& where)
{
    const double value = sessionNumber(state, key, box->value(), where);
    if (!(value >= box->minimum() && value <= box->maximum()))
        throw InputError("session: " + where + "." + key + " = " + std::to_string(value) +
                         " is out of range; allowed: [" + std::to_string(box->minimum()) + ", " +
                         std::to_string(box->maximum()) + "]");
    return value;
}

// The temperature's numbers a session gives, checked by core (tuning is read on its own: off keeps the numbers).
AttentionTemperature sessionTemperature(const nlohmann::json& state, const std::string& where)
{
    AttentionTemperature temperature;
    temperature.tuning = true; // so that core checks the numbers
    temperature.floorScale = sessionNumber(state, "floor_scale", temperature.floorScale, where);
    temperature.attnScale = sessionNumber(state, "attn_scale", temperature.attnScale, where);
    try {
        validateAttentionTemperature(temperature);
    } catch (const InputError& e) {
        throw InputError("session: views.train: " + std::string(e.what()));
    }
    return temperature;
}

} // namespace

int TrainView::sessionTaskLength(const nlohmann::json& state, const std::string& task,
                                 const std::vector<std::pair<QSpinBox*, int>>& values, const std::string& where) const
{
    if (task == kTextTask)
        return 0;
    TaskKind kind;
    try {
        kind = taskByName(task).kind;
    } catch (const InputError& e) {
        throw InputError("session: views.train.task: " + std::string(e.what()) + ", or " + kTextTask);
    }
    // The session's context when it gives one: the task's longest length follows it.
    int context = m_context->value();
    for (const auto& [box, value] : values)
        if (box == m_context)
            context = value;
    const int longest = std::max(1, taskLongestLength(kind, context));
    return sessionInt(state, "task_length", longest, 1, longest, where);
}

void TrainView::restoreState(const nlohmann::json& state)
{
    // Everything is checked before anything changes.
    const std::string where = "views.train";
    const QStringList names = sessionSchemeNames(state, "schemes", where);
    const std::string presetName = sessionString(state, "preset", kDemoPreset, where);
    if (presetName != kCustomPreset) {
        try {
            presetByName(presetName);
        } catch (const InputError& e) {
            throw InputError("session: views.train.preset: " + std::string(e.what()) + ", " + kCustomPreset);
        }
    }
    std::vector<std::pair<QSpinBox*, int>> values;
    for (const auto& [key, box] : intFields())
        if (state.contains(key))
            values.emplace_back(box, sessionInt(state, key, 0, box->minimum(), box->maximum(), where));
    const double lr = sessionBoxValue(state, "learning_rate", m_lr, where);
    const std::string mode = sessionString(state, "eval_mode", evalModeName(EvalMode::NonOverlapping), where);
    evalModeFromName(mode); // throws InputError naming the allowed modes
    // Sessions from before the task chooser train on text.
    const std::string task = sessionString(state, "task", kTextTask, where);
    const int taskLength = sessionTaskLength(state, task, values, where);
    const double percent = sessionBoxValue(state, "recalibration_percent", m_fraction, where);
    const double logitC = sessionBoxValue(state, "logit_c", m_logitC, where);
    // Sessions from before the model options: every option off.
    const int nopeEvery = sessionInt(state, "nope_every", 0, 0, m_nopeEvery->maximum(), where);
    if (nopeEvery == 1)
        throw InputError("session: views.train.nope_every = 1 is out of range; allowed: 0 (off) or integers in [2, " +
                         std::to_string(m_nopeEvery->maximum()) + "]");
    const bool tuning = sessionBool(state, "attn_temperature_tuning", false, where);
    const AttentionTemperature temperature = sessionTemperature(state, where);
    const bool ssmax = sessionBool(state, "ssmax", false, where);
    const bool sinkLogit = sessionBool(state, "sink_logit", false, where);
    const ModelConfig layerTypes = m_layerTypeFields->readState(state, where);
    const std::string page = sessionString(state, "page", "runs", where);
    if (page != "runs" && page != "methods")
        throw InputError("session: views.train.page = '" + page + "' is not a page; allowed: runs, methods");
    // Sessions from before the methods page had no "methods": its defaults apply.
    const MethodsPanel::SessionState methods =
        MethodsPanel::readSessionState(sessionObject(state, "methods", where), where + ".methods");
    if (state.contains("schemes"))
        setCheckedSchemes(m_schemes, names);
    // The preset's values, then the session's own: a value that differs from the preset makes the run custom.
    setPreset(presetName == kCustomPreset ? m_basePreset : QString::fromStdString(presetName));
    for (const auto& [box, value] : values)
        box->setValue(value);
    if (state.contains("learning_rate"))
        m_lr->setValue(lr);
    m_nopeEvery->setValue(std::max(nopeEvery, m_nopeEvery->minimum()));
    m_temperature->setChecked(tuning);
    m_floorScale->setValue(temperature.floorScale);
    m_attnScale->setValue(temperature.attnScale);
    m_ssmax->setChecked(ssmax);
    m_sinkLogit->setChecked(sinkLogit);
    m_layerTypeFields->setFrom(layerTypes);
    if (presetName == kCustomPreset)
        onFieldEdited();
    m_mode->setCurrentIndex(m_mode->findData(QString::fromStdString(mode)));
    m_task->setCurrentIndex(m_task->findData(QString::fromStdString(task)));
    onTaskChosen();
    if (taskLength > 0)
        m_taskLength->setValue(taskLength);
    m_fraction->setValue(percent);
    m_logitC->setValue(logitC);
    // The kept models are offered when the window is built, before a session is applied: the restored values win
    // over the current model's defaults (and over the first model's when none is there yet).
    m_methods->applySessionState(methods);
    showMethodsPage(page == "methods");
}

} // namespace plab::ui
