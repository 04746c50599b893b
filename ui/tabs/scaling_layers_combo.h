// A chooser of the layer types a rope method applied zero-shot reaches (--scaling-layers in the GUI): full, sliding or
// all layers; the rule itself is core's (hf_scaling_layers.h).
#pragma once

#include "hf/hf_scaling_layers.h"

#include <QComboBox>

namespace plab::ui {

class ScalingLayersCombo : public QComboBox {
    Q_OBJECT
public:
    explicit ScalingLayersCombo(QWidget* parent = nullptr);
    HfScalingLayers layers() const;
    void setLayers(HfScalingLayers layers);
};

} // namespace plab::ui
