// One parameter's control: the slider and spin box built from core's catalogue row.
#include "tabs/param_control.h"

#include "settings/i18n.h"

#include <QCoreApplication>
#include <QHBoxLayout>

namespace plab::ui {

ParamControl::ParamControl(const SchemeInfo& scheme, const ParamInfo& info, QWidget* parent)
    : QWidget(parent), m_info(info)
{
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_slider = new QSlider(Qt::Horizontal, this);
    m_slider->setRange(0, kSteps);
    m_slider->setObjectName(QStringLiteral("slider_") + QString::fromStdString(info.name));
    layout->addWidget(m_slider, 1);
    // Exclusive bounds are nudged inside so every value the box offers is accepted by core.
    const double lo = info.minValue + (info.minExclusive ? (info.integer ? 1 : lowNudge()) : 0);
    const double hi = info.maxValue - (info.maxExclusive ? (info.integer ? 1 : 1e-4) : 0);
    if (info.integer) {
        auto* box = new QSpinBox(this);
        const int ilo = static_cast<int>(std::ceil(lo)), ihi = static_cast<int>(std::min(hi, 2.0e9));
        box->setRange(info.even && ilo % 2 ? ilo + 1 : ilo, ihi);
        box->setSingleStep(info.even ? 2 : 1);
        m_box = box;
        connect(box, &QSpinBox::valueChanged, this, [this] { valueEdited(); });
    } else {
        auto* box = new QDoubleSpinBox(this);
        box->setDecimals(lo > 0 && lo < 0.01 ? 6 : 4);
        box->setRange(lo, hi);
        box->setStepType(QAbstractSpinBox::AdaptiveDecimalStepType);
        m_box = box;
        connect(box, &QDoubleSpinBox::valueChanged, this, [this] { valueEdited(); });
    }
    m_box->setObjectName(QStringLiteral("spin_") + QString::fromStdString(info.name));
    // The box may give way down to 96 pixels (its size hint is as wide as its largest value, base's 1e12), so the
    // slider keeps a usable length in a narrow dock; narrower still, the form puts the row under its label.
    m_box->setMinimumWidth(96);
    m_box->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
    m_slider->setMinimumWidth(56);
    m_box->setKeyboardTracking(false);
    layout->addWidget(m_box);
    m_sliderLo = lo;
    m_sliderHi = std::min(hi, sliderCeiling());
    m_log = m_sliderLo > 0 && m_sliderHi / m_sliderLo >= 100;
    const QString tip = QCoreApplication::translate("plab::ui::SchemePanel", "%1\nallowed: %2")
                            .arg(paramDescription(scheme, info), paramRange(info));
    setToolTip(tip);
    m_slider->setToolTip(tip);
    m_box->setToolTip(tip);
    connect(m_slider, &QSlider::valueChanged, this, [this](int pos) { sliderMoved(pos); });
    setValue(info.defaultValue);
}

} // namespace plab::ui
