// The Sinusoidal dot tab: dot(p_m, p_n) − d/2 against distance for a list of (dim, base) curves.
#pragma once

#include "tabs/view_base.h"

class QCheckBox;
class QSpinBox;
class QTableWidget;

namespace plab::ui {

class DotView : public CurveViewBase {
    Q_OBJECT
public:
    explicit DotView(QWidget* parent = nullptr);
    QString viewId() const override { return QStringLiteral("dot"); }
    QString viewTitle() const override { return tr("Sinusoidal dot"); }
    bool hasPicture() const override;
    QSize defaultImageSize() const override { return {1100, 700}; }
    void writeData(std::ostream& out, DataFormat format) const override;
    nlohmann::json saveState() const override;
    void restoreState(const nlohmann::json& state) override;

    DotRequest request() const;
    void setRequest(const DotRequest& request, bool logX);
    const DotResult& result() const { return m_result; }

protected:
    void refresh() override;

private:
    QTableWidget* m_curves = nullptr;
    QSpinBox* m_maxDistance = nullptr;
    QCheckBox* m_logX = nullptr;
    ViewJob<DotResult> m_job;
    DotResult m_result;
};

} // namespace plab::ui
