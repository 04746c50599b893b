// The left panel: scheme list, causal/bidirectional, heads, length, head, every parameter as slider + spin box
// with its range (from the core catalogue), the layer-type modifiers, the formula and explanation, logn and the colour
// map.
#pragma once

#include "workers/compute.h"
#include "schemes/schemes.h"

#include <nlohmann/json.hpp>

#include <QString>
#include <QWidget>

#include <vector>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QGroupBox;
class QLabel;
class QListWidget;
class QRadioButton;
class QSlider;
class QSpinBox;

namespace plab::ui {

class ParamControl;

class SchemePanel : public QWidget {
    Q_OBJECT
public:
    explicit SchemePanel(QWidget* parent = nullptr);
    ~SchemePanel() override;

    // The last valid state (the current one when isValid()).
    const PanelState& state() const { return m_state; }
    bool isValid() const { return m_error.isEmpty(); }
    QString errorText() const { return m_error; }

    void setScheme(const QString& name);
    void setHeads(int heads);
    void setHead(int head); // 0-based
    void setLength(int length);
    void setBidirectional(bool bidirectional);
    void setParameter(const QString& name, double value);
    // A layer-type modifier's field: window, chunk, sinks or softcap (0: off).
    void setModifier(const QString& name, double value);
    void setColorMap(const QString& name);
    void setLogn(bool logn, int context);
    // A rotary length-extension method ("none", "yarn", ...) for rope/xpos; its parameters appear under the scheme's.
    void setScaling(const QString& method);

    // Session state; restoreState() validates everything first and throws InputError naming the bad field.
    nlohmann::json saveState() const;
    void restoreState(const nlohmann::json& state);

    static constexpr int kMaxLength = 4096;
    static constexpr int kMaxHeads = 128;

Q_SIGNALS:
    void changed(); // a new valid state

private:
    QGroupBox* buildAttentionBox(); // mask, heads, head, length, logn and context, colour map
    QGroupBox* buildLayerTypeBox(); // the layer-type modifiers of any scheme: window, chunk, sinks, soft cap
    // The modifiers' NAME=VALUE settings of the fields that are on (not 0) and enabled.
    std::vector<std::string> modifierAssignments() const;
    void buildFormulaLabels(); // formula, explanation and the error line
    void rebuildParameters();
    void rebuildMethodParameters(); // the rows of the chosen method, below the scheme's
    void updateState();
    void setLengthSlider(int length);

    QListWidget* m_schemes = nullptr;
    QRadioButton* m_causal = nullptr;
    QRadioButton* m_bidirectional = nullptr;
    QSpinBox* m_heads = nullptr;
    QSpinBox* m_head = nullptr;
    QSpinBox* m_length = nullptr;
    QSlider* m_lengthSlider = nullptr;
    QCheckBox* m_logn = nullptr;
    QSpinBox* m_context = nullptr;
    QComboBox* m_colorMap = nullptr;
    QSpinBox* m_window = nullptr;        // sliding window W; 0: off
    QSpinBox* m_chunk = nullptr;         // chunk C; 0: off
    QSpinBox* m_sinks = nullptr;         // sinks beside the window or chunk; 0: none
    QDoubleSpinBox* m_softcap = nullptr; // soft cap c; 0: off
    QGroupBox* m_paramBox = nullptr;
    QFormLayout* m_paramForm = nullptr;
    QLabel* m_formula = nullptr;
    QLabel* m_explanation = nullptr;
    QLabel* m_errorLabel = nullptr;
    std::vector<ParamControl*> m_params;
    QComboBox* m_scaling = nullptr;
    std::vector<ParamControl*> m_methodParams;
    int m_methodRows = 0; // rows of m_paramForm that belong to the method
    PanelState m_state;
    QString m_error;
    bool m_updating = false;
};

} // namespace plab::ui
