// The Your model tab's session state: what it saves and the checks before a saved state is applied.
#include "tabs/hf_model_view.h"

#include "settings/session.h"

#include "base/errors.h"

#include <QCheckBox>
#include <QPlainTextEdit>
#include <QSpinBox>
#include <QTabWidget>

#include <algorithm>
#include <cmath>

namespace plab::ui {

namespace {
const std::vector<std::string>& pageNames()
{
    static const std::vector<std::string> names = {"attention", "entropy", "sinks", "methods", "continue",
                                                   "retrieval"};
    return names;
}

// A saved zoom window's [from, to) in tokens along one axis ("keys" or "queries"): two numbers, 0 <= from < to.
std::pair<double, double> savedWindowRange(const nlohmann::json& window, const char* axis)
{
    const std::string name = std::string("session: views.model.token_window.") + axis;
    const std::string allowed = "; allowed: [from, to], token positions with 0 <= from < to";
    if (!window.contains(axis))
        throw InputError(name + " is missing" + allowed);
    const nlohmann::json& v = window.at(axis);
    if (!v.is_array() || v.size() != 2 || !v[0].is_number() || !v[1].is_number())
        throw InputError(name + " = " + v.dump() + " is not two numbers" + allowed);
    const double from = v[0].get<double>(), to = v[1].get<double>();
    if (!std::isfinite(from) || !std::isfinite(to) || from < 0 || to <= from)
        throw InputError(name + " = " + v.dump() + " is not allowed" + allowed);
    return {from, to};
}
} // namespace

nlohmann::json HfModelView::positionsJson() const
{
    nlohmann::json settings = nlohmann::json::array();
    for (const QString& s : positionsSettings())
        settings.push_back(s.toStdString());
    return {{"method", positionsMethod().toStdString()}, {"settings", settings}};
}

nlohmann::json HfModelView::saveState() const
{
    nlohmann::json state{{"text", m_text->toPlainText().toStdString()},
                         {"repeat_to", m_repeat->value()},
                         {"page", pageNames()[m_pages->currentIndex()]},
                         {"layer", m_layer->value() - 1},
                         {"head", m_head->value() - 1},
                         {"first_token_in_scale", m_sinkInScale->isChecked()},
                         {"precision", hfPrecisionName(precision())},
                         {"positions", positionsJson()}};
    // The zoom window: one still waiting for its text's tokens, else the one shown unless it shows every token.
    std::optional<QRectF> window = m_wantedWindow;
    if (!window && m_attention.capture) {
        const double T = m_attention.capture->length;
        if (m_heatmap->tokenWindow() != QRectF(0, 0, T, T))
            window = m_heatmap->tokenWindow();
    }
    if (window)
        state["token_window"] = {{"keys", {window->left(), window->right()}},
                                 {"queries", {window->top(), window->bottom()}}};
    return state;
}

void HfModelView::restoreState(const nlohmann::json& state)
{
    try {
        const std::string where = "views.model";
        const std::string text = state.value("text", std::string(kDefaultText));
        const int repeat = state.value("repeat_to", 0);
        const std::string page = state.value("page", std::string("attention"));
        const int layer = state.value("layer", 0), head = state.value("head", 0);
        checkIntegerRange("views.model.repeat_to", repeat, 0, kHfMaxTokens);
        checkIntegerRange("views.model.layer", layer, 0, 1023);
        checkIntegerRange("views.model.head", head, 0, 1023);
        const auto it = std::find(pageNames().begin(), pageNames().end(), page);
        if (it == pageNames().end())
            throw InputError("views.model.page is '" + page + "'; allowed: attention, entropy, sinks, methods, continue");
        // Positions: checked by core before anything is applied (an unknown method or setting names its key).
        const nlohmann::json positions = state.value("positions", nlohmann::json::object());
        const QString method = QString::fromStdString(positions.value("method", std::string()));
        QStringList settings;
        for (const std::string& setting : positions.value("settings", std::vector<std::string>()))
            settings << QString::fromStdString(setting);
        try {
            checkPositions(method, settings);
        } catch (const InputError& e) {
            throw InputError(std::string("session: views.model.positions: ") + e.what());
        }
        // Missing (sessions before the chooser, lessons): the current choice stays; it is how to compute, not what.
        const std::string precisionName = sessionString(state, "precision", hfPrecisionName(precision()), where);
        HfPrecision chosen = HfPrecision::Float32;
        try {
            chosen = hfPrecisionFromName(precisionName);
        } catch (const InputError& e) {
            throw InputError("session: views.model.precision: " + std::string(e.what()));
        }
        std::optional<QRectF> window;
        if (const nlohmann::json saved = sessionObject(state, "token_window", where); !saved.empty()) {
            const auto [keysFrom, keysTo] = savedWindowRange(saved, "keys");
            const auto [queriesFrom, queriesTo] = savedWindowRange(saved, "queries");
            window = QRectF(QPointF(keysFrom, queriesFrom), QPointF(keysTo, queriesTo));
        }
        m_text->setPlainText(QString::fromStdString(text));
        m_repeat->setValue(repeat);
        m_pages->setCurrentIndex(static_cast<int>(it - pageNames().begin()));
        m_sinkInScale->setChecked(state.value("first_token_in_scale", false));
        setPositions(method, settings);
        // A session from a CPU with BF16 products, here without: float32, said (the rest of the session applies).
        const QString unavailable = hfPrecisionUnavailable(chosen);
        if (!unavailable.isEmpty())
            chosen = HfPrecision::Float32;
        setPrecision(chosen); // reloads an open model in it (and asks for the view kept, overridden just below)
        if (!unavailable.isEmpty())
            setNote(tr("The session's precision is not available here (%1); the model computes in float32.")
                        .arg(unavailable));
        m_wantedWindow = window; // applied, checked against the text's tokens, once they are known
        m_wantedWindowFromSession = window.has_value();
        m_wantedLayerHead = {layer, head};
        if (m_attention.capture)
            setLayerHead(std::min(layer, m_attention.capture->layers - 1),
                         std::min(head, m_attention.capture->heads - 1));
    } catch (const nlohmann::json::exception& e) {
        throw InputError(std::string("views.model: ") + e.what());
    }
}

} // namespace plab::ui
