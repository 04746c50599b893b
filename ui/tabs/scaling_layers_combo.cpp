// The full / sliding / all chooser of the Your model tab (Positions and Evaluate under methods).
#include "tabs/scaling_layers_combo.h"

#include <algorithm>

namespace plab::ui {

ScalingLayersCombo::ScalingLayersCombo(QWidget* parent) : QComboBox(parent)
{
    addItem(tr("full layers"), static_cast<int>(HfScalingLayers::Full));
    addItem(tr("sliding layers"), static_cast<int>(HfScalingLayers::Sliding));
    addItem(tr("all layers"), static_cast<int>(HfScalingLayers::All));
    setToolTip(tr("The layer types a method applied zero-shot reaches: full layers (the default, where Gemma 3's own "
                  "scaling lives), sliding and chunked layers (a window spanning the context counts as full), or "
                  "all; the other layers keep the config's own rope."));
}

HfScalingLayers ScalingLayersCombo::layers() const
{
    return static_cast<HfScalingLayers>(currentData().toInt());
}

void ScalingLayersCombo::setLayers(HfScalingLayers layers)
{
    setCurrentIndex(std::max(0, findData(static_cast<int>(layers))));
}

} // namespace plab::ui
