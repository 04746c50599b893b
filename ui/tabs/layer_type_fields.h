// The Train tab's layer-type fields (train's --layer-types, --window, --chunk, --full-scheme, --full-set).
#pragma once

#include "model/model_config.h"

#include <nlohmann/json.hpp>

#include <QObject>

#include <string>

class QComboBox;
class QFormLayout;
class QLineEdit;
class QSpinBox;
class QWidget;

namespace plab::ui {

// The fields of a hybrid model, in their own rows of a form; core's validateModelConfig checks what they give.
class LayerTypeFields : public QObject {
    Q_OBJECT
public:
    explicit LayerTypeFields(QWidget* parent);
    void addRows(QFormLayout* form);
    // The fields into `model` (empty layer types: none; window or chunk 0: the default, a quarter of L).
    void apply(ModelConfig& model) const;
    void setFrom(const ModelConfig& model);
    // Session keys under modelShapeJson's names: layer_types, sliding_window, attention_chunk_size, full_scheme,
    // full_settings. readState checks the values' types (InputError naming `where`) and changes nothing: setFrom
    // applies what it gives.
    void saveState(nlohmann::json& state) const;
    ModelConfig readState(const nlohmann::json& state, const std::string& where) const;
    QLineEdit* typesEdit() const { return m_types; }

Q_SIGNALS:
    void edited();

private:
    QLineEdit* m_types = nullptr;
    QSpinBox* m_window = nullptr;
    QSpinBox* m_chunk = nullptr;
    QComboBox* m_fullScheme = nullptr;
    QLineEdit* m_fullSettings = nullptr;
};

} // namespace plab::ui
