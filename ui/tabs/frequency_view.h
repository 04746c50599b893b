// The Rotary frequencies tab: θ_i and θ'_i of the panel's rotary scheme under its length-extension method.
#pragma once

#include "tabs/view_base.h"

class QLabel;

namespace plab::ui {

// θ_i and θ'_i of the panel's rotary scheme under its length-extension method (the panel's context is L).
class FrequencyView : public CurveViewBase {
    Q_OBJECT
public:
    explicit FrequencyView(QWidget* parent = nullptr);
    QString viewId() const override { return QStringLiteral("frequencies"); }
    QString viewTitle() const override { return tr("Rotary frequencies"); }
    bool hasPicture() const override;
    QSize defaultImageSize() const override { return {1100, 700}; }
    void writeData(std::ostream& out, DataFormat format) const override;
    nlohmann::json saveState() const override { return nlohmann::json::object(); }
    void restoreState(const nlohmann::json&) override {}

protected:
    void refresh() override;

private:
    QLabel* m_note = nullptr;
    bool m_rotary = false;
};

} // namespace plab::ui
