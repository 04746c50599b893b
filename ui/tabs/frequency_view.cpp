// The Rotary frequencies tab: core's rotaryScaling drawn on the GUI thread (d/2 numbers).
#include "tabs/frequency_view.h"

#include "charts/curve_chart.h"

#include "base/matrix_output.h"

#include <QLabel>
#include <QVBoxLayout>

#include <cmath>

namespace plab::ui {

FrequencyView::FrequencyView(QWidget* parent) : CurveViewBase(parent)
{
    auto* layout = new QVBoxLayout(this);
    m_note = new QLabel(tr("θ_i and θ'_i of the panel's rotary scheme under its length-extension method (panel: "
                           "Length extension), on a log axis. Pairs above the dashed line turn more than once within "
                           "the training context L (the panel's context, 16 when none); θ'_i/θ_i shows what a method "
                           "keeps (1) and what it interpolates (1/s): YaRN's ramp, Llama 3's bands. Sequence length n "
                           "(dynamic NTK) is the panel's length."),
                        this);
    m_note->setWordWrap(true);
    layout->addWidget(m_note);
    m_plot = new CurvePlot(this);
    m_plot->setEmptyHint(tr("Choose rope or xpos in the panel: its rotary frequencies appear here."));
    layout->addWidget(m_plot, 1);
    connect(m_plot, &CurvePlot::hovered, this, &ViewBase::hoverText);
}

void FrequencyView::refresh()
{
    // d/2 numbers from core's rotaryScaling: cheap enough for the GUI thread.
    m_rotary = m_panel.spec.info().rotary;
    m_plot->setFigure(m_rotary ? frequenciesFigure(m_panel.spec, m_panel.length) : CurveFigure{});
    Q_EMIT pictureUpdated();
}

bool FrequencyView::hasPicture() const
{
    return m_rotary;
}

void FrequencyView::writeData(std::ostream& out, DataFormat format) const
{
    requirePicture();
    const RotaryScaling scaling = rotaryScaling(m_panel.spec, m_panel.length);
    Table t;
    t.columns = {"pair", "theta", "theta_scaled", "wavelength", "wavelength_scaled"};
    t.meta = schemeSpecJson(m_panel.spec);
    t.meta["length"] = m_panel.length;
    t.meta["attention_factor"] = scaling.attentionFactor;
    t.meta["logit_scale"] = scaling.logitScale;
    for (size_t i = 0; i < scaling.theta.size(); ++i)
        t.rows.push_back({double(i), scaling.theta[i], scaling.thetaScaled[i], 2 * M_PI / scaling.theta[i],
                          2 * M_PI / scaling.thetaScaled[i]});
    writeTable(out, format, t);
}

} // namespace plab::ui
