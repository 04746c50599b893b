// The Entropy page of the Your model tab: its plot and the "by layer type" choice (the grouping is core's).
#include "tabs/hf_entropy_page.h"

#include "charts/curve_chart.h"

#include <QCheckBox>
#include <QVBoxLayout>

namespace plab::ui {

HfEntropyPage::HfEntropyPage(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_byType = new QCheckBox(tr("Group the curves by layer type"), this);
    m_byType->setToolTip(tr("One curve per layer type (sliding, full, chunked), the mean over its layers, instead of "
                            "one curve per layer"));
    m_byType->setVisible(false);
    m_plot = new CurvePlot(this);
    layout->addWidget(m_byType);
    layout->addWidget(m_plot, 1);
    connect(m_byType, &QCheckBox::toggled, this, &HfEntropyPage::groupingChanged);
}

bool HfEntropyPage::byLayerType() const
{
    return m_available && m_byType->isChecked();
}

void HfEntropyPage::setByLayerType(bool grouped)
{
    m_byType->setChecked(grouped);
}

void HfEntropyPage::setGroupingAvailable(bool available)
{
    m_available = available;
    m_byType->setVisible(available);
}

} // namespace plab::ui
