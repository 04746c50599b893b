// The Sinusoidal dot tab: the curve table, the largest distance and the plot.
#include "tabs/dot_view.h"

#include "charts/curve_chart.h"
#include "settings/session.h"

#include "base/matrix_output.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

namespace plab::ui {

DotView::DotView(QWidget* parent)
    : CurveViewBase(parent), m_job(this, [this](DotResult r) {
          if (!r.error.isEmpty()) {
              Q_EMIT statusMessage(r.error);
              return;
          }
          m_result = std::move(r);
          m_plot->setFigure(dotFigure(m_result, m_logX->isChecked()));
          Q_EMIT pictureUpdated();
      })
{
    auto* layout = new QHBoxLayout(this);
    auto* side = new QVBoxLayout;
    side->addWidget(new QLabel(tr("<b>Curves</b> (dim, base)"), this));
    m_curves = new QTableWidget(0, 2, this);
    m_curves->setHorizontalHeaderLabels({tr("dim d"), tr("base")});
    m_curves->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    m_curves->verticalHeader()->hide();
    m_curves->setMaximumWidth(240);
    m_curves->setToolTip(tr("Each row is one curve: dim even in [2, 4096], base > 1"));
    side->addWidget(m_curves, 1);
    auto* buttons = new QHBoxLayout;
    auto* add = new QPushButton(tr("Add"), this);
    auto* remove = new QPushButton(tr("Remove"), this);
    buttons->addWidget(add);
    buttons->addWidget(remove);
    side->addLayout(buttons);
    side->addWidget(new QLabel(tr("Largest distance"), this));
    m_maxDistance = new QSpinBox(this);
    m_maxDistance->setRange(1, 1000000);
    m_maxDistance->setValue(256);
    m_maxDistance->setKeyboardTracking(false);
    side->addWidget(m_maxDistance);
    m_logX = new QCheckBox(tr("logarithmic distance axis"), this);
    side->addWidget(m_logX);
    auto* note = new QLabel(tr("dot(p_m, p_n) − d/2 = Σ cos(r w_i) − d/2: zero at r = 0, then an oscillating "
                               "decay; larger bases decay more slowly."),
                            this);
    note->setWordWrap(true);
    note->setMaximumWidth(240);
    side->addWidget(note);
    layout->addLayout(side);
    m_plot = new CurvePlot(this);
    m_plot->setEmptyHint(tr("Add a (dim, base) row on the left: its curve dot(p_m, p_n) − d/2 against distance "
                            "appears here."));
    layout->addWidget(m_plot, 1);

    setRequest(DotRequest{}, false);
    connect(m_curves, &QTableWidget::cellChanged, this, [this] { markDirty(); });
    connect(m_maxDistance, &QSpinBox::valueChanged, this, [this] { markDirty(); });
    connect(m_logX, &QCheckBox::toggled, this, [this] {
        if (!m_result.curves.empty())
            m_plot->setFigure(dotFigure(m_result, m_logX->isChecked()));
        Q_EMIT pictureUpdated();
    });
    connect(add, &QPushButton::clicked, this, [this] {
        const int row = m_curves->rowCount();
        m_curves->insertRow(row);
        m_curves->setItem(row, 0, new QTableWidgetItem(QStringLiteral("32")));
        m_curves->setItem(row, 1, new QTableWidgetItem(QStringLiteral("10000")));
    });
    connect(remove, &QPushButton::clicked, this, [this] {
        if (m_curves->rowCount() > 1)
            m_curves->removeRow(m_curves->currentRow() >= 0 ? m_curves->currentRow() : m_curves->rowCount() - 1);
        markDirty();
    });
    connect(m_plot, &CurvePlot::hovered, this, &ViewBase::hoverText);
}

DotRequest DotView::request() const
{
    DotRequest r;
    r.curves.clear();
    for (int row = 0; row < m_curves->rowCount(); ++row) {
        const QTableWidgetItem* d = m_curves->item(row, 0);
        const QTableWidgetItem* b = m_curves->item(row, 1);
        if (!d || !b)
            continue;
        bool okD = false, okB = false;
        const int dim = d->text().trimmed().toInt(&okD);
        const double base = b->text().trimmed().toDouble(&okB);
        if (!okD || !okB)
            throw InputError("curve " + std::to_string(row + 1) + ": dim '" + d->text().toStdString() + "' and base '" +
                             b->text().toStdString() + "' must be numbers");
        r.curves.emplace_back(dim, base);
    }
    r.maxDistance = m_maxDistance->value();
    return r;
}

void DotView::setRequest(const DotRequest& request, bool logX)
{
    {
        const QSignalBlocker b1(m_curves), b2(m_maxDistance), b3(m_logX);
        m_curves->setRowCount(0);
        for (const auto& [dim, base] : request.curves) {
            const int row = m_curves->rowCount();
            m_curves->insertRow(row);
            m_curves->setItem(row, 0, new QTableWidgetItem(QString::number(dim)));
            m_curves->setItem(row, 1, new QTableWidgetItem(QString::number(base, 'g', 10)));
        }
        m_maxDistance->setValue(request.maxDistance);
        m_logX->setChecked(logX);
    }
    markDirty();
}

void DotView::refresh()
{
    startFromControls(
        this, m_job, [this] { return request(); }, computeDot);
}

bool DotView::hasPicture() const
{
    return !m_result.curves.empty();
}

void DotView::writeData(std::ostream& out, DataFormat format) const
{
    requirePicture();
    Table t;
    t.columns = {"curve", "dim", "base", "distance", "dot", "dot_minus_half_dim"};
    t.meta = {{"curves", nlohmann::json::array()}};
    for (size_t c = 0; c < m_result.curves.size(); ++c) {
        const DotCurve& curve = m_result.curves[c];
        t.meta["curves"].push_back({{"dim", curve.dim}, {"base", curve.base}});
        for (size_t i = 0; i < curve.distance.size(); ++i)
            t.rows.push_back({double(c), double(curve.dim), curve.base, double(curve.distance[i]), curve.dot[i],
                              curve.dot[i] - curve.halfDim()});
    }
    writeTable(out, format, t);
}

nlohmann::json DotView::saveState() const
{
    nlohmann::json curves = nlohmann::json::array();
    try {
        for (const auto& [dim, base] : request().curves)
            curves.push_back({dim, base});
    } catch (const InputError&) {
    }
    return {{"curves", curves}, {"max_distance", m_maxDistance->value()}, {"log_x", m_logX->isChecked()}};
}

void DotView::restoreState(const nlohmann::json& state)
{
    DotRequest r;
    if (state.contains("curves")) {
        const nlohmann::json& list = state.at("curves");
        if (!list.is_array() || list.empty() || list.size() > 16)
            throw InputError("session: views.dot.curves must be a list of 1 to 16 [dim, base] pairs");
        r.curves.clear();
        for (const nlohmann::json& c : list) {
            if (!c.is_array() || c.size() != 2 || !c[0].is_number_integer() || !c[1].is_number())
                throw InputError("session: views.dot.curves holds " + c.dump() + "; expected [dim, base]");
            r.curves.emplace_back(c[0].get<int>(), c[1].get<double>());
            sinusoidalDotCurve(r.curves.back().first, r.curves.back().second, 0); // validates, throws InputError
        }
    }
    r.maxDistance = sessionInt(state, "max_distance", 256, 1, 1000000, "views.dot");
    setRequest(r, sessionBool(state, "log_x", false, "views.dot"));
}

} // namespace plab::ui
