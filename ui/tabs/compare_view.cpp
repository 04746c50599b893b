// The Compare tab: scheme and difference bars, the side-by-side heatmap, its data and session state.
#include "tabs/compare_view.h"

#include "settings/session.h"
#include "tabs/heatmap_widget.h"

#include "base/matrix_output.h"
#include "views/bias_views.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <tuple>

namespace plab::ui {

CompareView::CompareView(QWidget* parent)
    : ViewBase(parent), m_job(this, [this](Prepared p) {
          if (!p.result.error.isEmpty()) {
              m_heatmap->setMessage(p.result.error);
              Q_EMIT statusMessage(p.result.error);
              return;
          }
          m_result = std::move(p.result);
          m_heatmap->setHeatmap(std::move(p.heatmap));
          Q_EMIT pictureUpdated();
      })
{
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(buildSchemeBar());
    layout->addLayout(buildDifferenceBar());
    auto* note = new QLabel(tr("Length, head, mask and colour map come from the panel; the panel's scheme uses "
                               "its parameters, the others their defaults (window = context, else 16)."),
                            this);
    note->setWordWrap(true);
    layout->addWidget(note);
    m_heatmap = new HeatmapWidget(this);
    m_heatmap->setEmptyHint(tr("Choose 2 to 4 schemes above: their bias matrices appear here side by side."));
    layout->addWidget(m_heatmap, 1);

    connect(m_heatmap, &HeatmapWidget::hovered, this, [this](int panel, int m, int n, float v) {
        const bool difference = panel >= static_cast<int>(m_result.panels.size());
        Q_EMIT hoverText(tr("%1: m = %2, n = %3, %4 = %5")
                             .arg(difference ? differenceName(m_result)
                                             : QString::fromStdString(schemeLabel(m_result.panels[panel].request.spec)))
                             .arg(m)
                             .arg(n)
                             .arg(difference ? tr("difference") : tr("value"))
                             .arg(std::isfinite(v) ? QString::number(v, 'g', 6)
                                                   : (difference ? tr("masked in A or B") : hoverValueText(v))));
    });
    connect(m_heatmap, &HeatmapWidget::hoverLeft, this, [this] { Q_EMIT hoverText(QString()); });
}

QHBoxLayout* CompareView::buildSchemeBar()
{
    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Schemes:"), this));
    m_count = new QSpinBox(this);
    m_count->setRange(2, 4);
    m_count->setValue(2);
    m_count->setToolTip(tr("How many schemes side by side (2-4)"));
    bar->addWidget(m_count);
    const QStringList defaults = {QStringLiteral("alibi"), QStringLiteral("local"), QStringLiteral("kerple-log"),
                                  QStringLiteral("sandwich")};
    for (int i = 0; i < 4; ++i) {
        auto* combo = new QComboBox(this);
        for (const SchemeInfo& s : schemeCatalog())
            combo->addItem(QString::fromStdString(s.name));
        // Rotary schemes under each length-extension method, e.g. rope / rope+yarn / rope+rerope side by side.
        for (const SchemeInfo& s : schemeCatalog())
            for (const RotaryMethodInfo& m : rotaryMethodCatalog())
                if (s.rotary && m.method != RotaryMethod::None)
                    combo->addItem(QString::fromStdString(s.name + "+" + m.name));
        combo->setCurrentText(defaults[i]);
        // Share the bar's width instead of each asking for its longest entry ("rope+leaky-rerope").
        combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        combo->setMinimumContentsLength(10);
        combo->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
        combo->setMaximumWidth(220);
        combo->setVisible(i < 2);
        connect(combo, &QComboBox::currentIndexChanged, this, [this] {
            updateDifferenceChoices();
            markDirty();
        });
        m_choices.push_back(combo);
        bar->addWidget(combo);
    }
    bar->addStretch(1);
    // The colour scale and zoom go on the difference bar: four scheme boxes fill this one on a small screen.
    m_shared = new QCheckBox(tr("shared colour scale"), this);
    m_shared->setChecked(true);
    m_shared->setToolTip(tr("One colour scale for every panel, so equal colours mean equal values"));
    m_reset = new QPushButton(tr("Reset zoom"), this);
    connect(m_count, &QSpinBox::valueChanged, this, [this](int k) {
        for (int i = 0; i < 4; ++i)
            m_choices[i]->setVisible(i < k);
        updateDifferenceChoices();
        markDirty();
    });
    connect(m_shared, &QCheckBox::toggled, this, [this] {
        if (!m_result.panels.empty())
            m_heatmap->setFigure(compareFigure(m_result, m_panel.colorMap, m_shared->isChecked()));
    });
    connect(m_reset, &QPushButton::clicked, this, [this] { resetZoom(); });
    return bar;
}

QHBoxLayout* CompareView::buildDifferenceBar()
{
    auto* differenceBar = new QHBoxLayout;
    m_difference = new QCheckBox(tr("difference A − B:"), this);
    m_difference->setChecked(true);
    m_difference->setToolTip(
        tr("Add a panel with A − B on a diverging scale centred on 0 (masked where either is masked)"));
    differenceBar->addWidget(m_difference);
    m_diffA = new QComboBox(this);
    m_diffB = new QComboBox(this);
    m_diffA->setToolTip(tr("A of the difference A − B"));
    m_diffB->setToolTip(tr("B of the difference A − B"));
    differenceBar->addWidget(m_diffA);
    differenceBar->addWidget(new QLabel(QStringLiteral("−"), this));
    differenceBar->addWidget(m_diffB);
    differenceBar->addStretch(1);
    differenceBar->addWidget(m_shared);
    differenceBar->addWidget(m_reset);
    updateDifferenceChoices(); // before the connections: filling the choices is no edit
    connect(m_difference, &QCheckBox::toggled, this, [this](bool on) {
        m_diffA->setEnabled(on);
        m_diffB->setEnabled(on);
        markDirty();
    });
    // A and B stay different: picking the other side's scheme moves the other side away.
    for (const auto& sides : {std::pair{m_diffA, m_diffB}, std::pair{m_diffB, m_diffA}}) {
        QComboBox* changed = sides.first;
        QComboBox* other = sides.second;
        connect(changed, &QComboBox::currentIndexChanged, this, [this, other](int i) {
            if (i >= 0 && i == other->currentIndex()) {
                const QSignalBlocker block(other);
                other->setCurrentIndex(i == 0 ? 1 : 0);
            }
            markDirty();
        });
    }
    return differenceBar;
}

QStringList CompareView::schemes() const
{
    QStringList out;
    for (int i = 0; i < m_count->value(); ++i)
        out << m_choices[i]->currentText();
    return out;
}

void CompareView::setSchemes(const QStringList& names)
{
    const int k = std::clamp(static_cast<int>(names.size()), 2, 4);
    for (int i = 0; i < k && i < names.size(); ++i)
        m_choices[i]->setCurrentText(names[i]);
    m_count->setValue(k);
    markDirty();
}

void CompareView::updateDifferenceChoices()
{
    const QStringList names = schemes();
    for (QComboBox* combo : {m_diffA, m_diffB}) {
        const QSignalBlocker block(combo);
        const int current = combo->currentIndex();
        combo->clear();
        for (int i = 0; i < names.size(); ++i)
            combo->addItem(QStringLiteral("%1: %2").arg(i + 1).arg(names[i]));
        combo->setCurrentIndex(current >= 0 && current < names.size() ? current : -1);
    }
    if (m_diffA->currentIndex() < 0)
        m_diffA->setCurrentIndex(0);
    if (m_diffB->currentIndex() < 0 || m_diffB->currentIndex() == m_diffA->currentIndex())
        m_diffB->setCurrentIndex(m_diffA->currentIndex() == 0 ? 1 : 0);
}

void CompareView::setDifference(bool shown, int a, int b)
{
    const int k = m_count->value();
    if (a < 0 || b < 0 || a >= k || b >= k || a == b)
        throw InputError("difference of schemes " + std::to_string(a + 1) + " and " + std::to_string(b + 1) +
                         ": allowed are two different schemes of 1.." + std::to_string(k));
    {
        const QSignalBlocker b1(m_diffA), b2(m_diffB);
        m_diffA->setCurrentIndex(a);
        m_diffB->setCurrentIndex(b);
    }
    m_difference->setChecked(shown);
    markDirty();
}

bool CompareView::differenceShown() const
{
    return m_difference->isChecked();
}

std::pair<int, int> CompareView::differencePair() const
{
    return {m_diffA->currentIndex(), m_diffB->currentIndex()};
}

void CompareView::refresh()
{
    CompareRequest request;
    try {
        request.specs = compareSpecs(schemes(), m_panel);
    } catch (const InputError& e) {
        m_heatmap->setMessage(QString::fromStdString(e.what()));
        return;
    }
    request.length = m_panel.length;
    request.head = m_panel.head;
    if (differenceShown())
        std::tie(request.differenceA, request.differenceB) = differencePair();
    const QString colorMap = m_panel.colorMap;
    const bool shared = m_shared->isChecked();
    const bool dark = m_heatmap->isDark();
    m_job.start([request, colorMap, shared, dark](const JobControl& control) {
        Prepared p;
        p.result = computeCompare(request, control);
        if (p.result.error.isEmpty() && !control.isCanceled()) {
            HeatmapFigure figure = compareFigure(p.result, colorMap, shared);
            figure.dark = dark;
            p.heatmap.setFigure(std::move(figure));
        }
        return p;
    });
}

QSize CompareView::defaultImageSize() const
{
    // About 380 pixels per panel (the difference is one) plus the colour bars.
    const int panels = m_count->value() + (differenceShown() ? 1 : 0);
    return {std::max(1000, 380 * panels + 260), 720};
}

bool CompareView::hasPicture() const
{
    return !m_heatmap->heatmap().isEmpty();
}

void CompareView::paintPicture(QPainter& painter, const QRectF& target, const PictureStyle& style) const
{
    m_heatmap->heatmap().paint(painter, target, style, m_heatmap->window());
}

void CompareView::writeData(std::ostream& out, DataFormat format) const
{
    requirePicture();
    const int n = m_result.panels.front().request.length;
    nlohmann::json meta;
    meta["schemes"] = nlohmann::json::array();
    for (const BiasResult& r : m_result.panels)
        meta["schemes"].push_back(schemeSpecJson(r.request.spec));
    meta["length"] = n;
    meta["head"] = m_result.panels.front().request.head;
    meta["values"] = "bias or probe score, one matrix per scheme in the order of \"schemes\"";
    const int k = static_cast<int>(m_result.panels.size());
    if (m_result.difference) {
        meta["values"] = "bias or probe score, one matrix per scheme in the order of \"schemes\", then the difference";
        meta["difference"] = {{"index", k},
                              {"a", m_result.differenceA},
                              {"b", m_result.differenceB},
                              {"values", "A - B; masked (-inf, null in JSON) where A or B is masked"}};
    }
    MatrixStackWriter writer(out, format, k + (m_result.difference ? 1 : 0), n, n, true, meta);
    for (int i = 0; i < k; ++i)
        writer.write(i, m_result.panels[i].matrix->values.data());
    if (m_result.difference)
        writer.write(k, m_result.difference->values.data());
    writer.finish();
}

nlohmann::json CompareView::saveState() const
{
    nlohmann::json names = nlohmann::json::array();
    for (const QString& s : schemes())
        names.push_back(s.toStdString());
    const auto [a, b] = differencePair();
    return {{"schemes", names},
            {"shared_scale", m_shared->isChecked()},
            {"difference", differenceShown()},
            {"difference_a", a},
            {"difference_b", b}};
}

void CompareView::restoreState(const nlohmann::json& state)
{
    QStringList names;
    if (state.contains("schemes")) {
        const nlohmann::json& list = state.at("schemes");
        if (!list.is_array() || list.size() < 2 || list.size() > 4)
            throw InputError("session: views.compare.schemes must be a list of 2 to 4 scheme names");
        for (const nlohmann::json& s : list) {
            if (!s.is_string())
                throw InputError("session: views.compare.schemes holds a non-string " + s.dump());
            const auto [scheme, method] = splitSchemeLabel(s.get<std::string>());
            const SchemeInfo& info = schemeByName(scheme);
            const RotaryMethodInfo& m = rotaryMethodByName(method);
            if (m.method != RotaryMethod::None && !info.rotary)
                throw InputError("session: views.compare.schemes holds '" + s.get<std::string>() +
                                 "'; a length-extension method needs a rotary scheme (rope, xpos)");
            names << QString::fromStdString(m.method == RotaryMethod::None ? info.name : info.name + "+" + m.name);
        }
    }
    const bool shared = sessionBool(state, "shared_scale", true, "views.compare");
    const bool difference = sessionBool(state, "difference", true, "views.compare");
    const int count = names.isEmpty() ? m_count->value() : static_cast<int>(names.size());
    const int a = sessionInt(state, "difference_a", 0, 0, count - 1, "views.compare");
    const int b = sessionInt(state, "difference_b", a == 0 ? 1 : 0, 0, count - 1, "views.compare");
    if (a == b)
        throw InputError("session: views.compare.difference_a and difference_b are both " + std::to_string(a) +
                         "; allowed: two different scheme indices");
    if (!names.isEmpty())
        setSchemes(names);
    m_shared->setChecked(shared);
    setDifference(difference, a, b);
}

void CompareView::setDark(bool dark)
{
    m_heatmap->setDark(dark);
}

void CompareView::resetZoom()
{
    m_heatmap->resetZoom();
}

} // namespace plab::ui
