// One parameter's control (slider and exact spin box), shared by the scheme panel and the Your model tab's positions.
#pragma once

#include "schemes/schemes.h"

#include <QAbstractSpinBox>
#include <QDoubleSpinBox>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QWidget>

#include <algorithm>
#include <cmath>
#include <functional>

namespace plab::ui {

// One parameter of a scheme or a rotary method: a slider (log-scaled for wide ranges) and a spin box holding the exact
// value, its range and tooltip from core's catalogue row.
class ParamControl : public QWidget {
public:
    ParamControl(const SchemeInfo& scheme, const ParamInfo& info, QWidget* parent);

    const ParamInfo& info() const { return m_info; }
    double value() const
    {
        if (auto* i = qobject_cast<QSpinBox*>(m_box))
            return i->value();
        return static_cast<QDoubleSpinBox*>(m_box)->value();
    }
    void setValue(double v)
    {
        {
            const QSignalBlocker b(m_box);
            if (auto* i = qobject_cast<QSpinBox*>(m_box))
                i->setValue(static_cast<int>(std::lround(v)));
            else
                static_cast<QDoubleSpinBox*>(m_box)->setValue(v);
        }
        syncSlider();
    }
    std::function<void()> onChanged;

private:
    static constexpr int kSteps = 1000;
    double lowNudge() const { return m_info.maxValue <= 10 ? 1e-3 : 1e-3; }
    // Sliders of unbounded-looking ranges (base up to 1e12) stop at a useful value; the box takes the rest.
    double sliderCeiling() const
    {
        if (m_info.name == "base")
            return 1e6;
        if (m_info.name == "window" || m_info.name == "max-distance")
            return 4096;
        return m_info.maxValue;
    }
    double fromSlider(int pos) const
    {
        const double t = static_cast<double>(pos) / kSteps;
        double v =
            m_log ? m_sliderLo * std::pow(m_sliderHi / m_sliderLo, t) : m_sliderLo + t * (m_sliderHi - m_sliderLo);
        if (m_info.integer) {
            v = std::round(v);
            if (m_info.even)
                v = 2 * std::round(v / 2);
        } else {
            // Three significant digits: slider values read well.
            const double mag = std::pow(10.0, std::floor(std::log10(std::abs(v) + 1e-300)) - 2);
            v = std::round(v / mag) * mag;
        }
        return std::clamp(v, m_sliderLo, std::max(m_sliderLo, m_sliderHi));
    }
    int toSlider(double v) const
    {
        double t = m_log ? std::log(std::max(v, m_sliderLo) / m_sliderLo) / std::log(m_sliderHi / m_sliderLo)
                         : (m_sliderHi > m_sliderLo ? (v - m_sliderLo) / (m_sliderHi - m_sliderLo) : 0);
        return static_cast<int>(std::lround(std::clamp(t, 0.0, 1.0) * kSteps));
    }
    void syncSlider()
    {
        const QSignalBlocker b(m_slider);
        m_slider->setValue(toSlider(value()));
    }
    void sliderMoved(int pos)
    {
        {
            const QSignalBlocker b(m_box);
            setBoxValue(fromSlider(pos));
        }
        if (onChanged)
            onChanged();
    }
    void setBoxValue(double v)
    {
        if (auto* i = qobject_cast<QSpinBox*>(m_box))
            i->setValue(static_cast<int>(std::lround(v)));
        else
            static_cast<QDoubleSpinBox*>(m_box)->setValue(v);
    }
    void valueEdited()
    {
        syncSlider();
        if (onChanged)
            onChanged();
    }

    ParamInfo m_info;
    QSlider* m_slider = nullptr;
    QAbstractSpinBox* m_box = nullptr;
    double m_sliderLo = 0, m_sliderHi = 1;
    bool m_log = false;
};

} // namespace plab::ui
