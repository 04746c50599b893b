// ViewBase and the two heatmap views: Bias (one head, zoom/pan, per-head thumbnails) and Compare (2-4 schemes).
#include "views.h"

#include "heatmap_widget.h"
#include "session.h"

#include "errors.h"
#include "matrix_output.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QVBoxLayout>

namespace plab::ui {

// ---- ViewBase -----------------------------------------------------------------------------------------------

void ViewBase::setPanelState(const PanelState &state)
{
    m_panel = state;
    m_hasPanel = true;
    markDirty();
}

void ViewBase::setActive(bool active)
{
    m_active = active;
    if (m_active)
        refreshIfDirty();
}

void ViewBase::markDirty()
{
    m_dirty = true;
    if (m_active)
        refreshIfDirty();
}

void ViewBase::refreshIfDirty()
{
    if (!m_dirty || !m_hasPanel)
        return;
    m_dirty = false;
    refresh();
}

namespace {

QString hoverValue(float v)
{
    return std::isfinite(v) ? QString::number(v, 'g', 6) : QStringLiteral("masked (−inf)");
}

} // namespace

// ---- BiasView -----------------------------------------------------------------------------------------------

BiasView::BiasView(QWidget *parent)
    : ViewBase(parent)
    , m_job(this, {[this](Prepared p) { showResult(std::move(p)); },
                   [this](int d, int t) { Q_EMIT progress(d, t); },
                   [this] { Q_EMIT busyChanged(false); }})
{
    auto *layout = new QVBoxLayout(this);
    auto *bar = new QHBoxLayout;
    m_buckets = new QCheckBox(tr("T5 bucket indices"), this);
    m_buckets->setToolTip(tr("t5 only: show which bucket each (m, n) falls in instead of its bias"));
    m_buckets->setEnabled(false);
    auto *reset = new QPushButton(tr("Reset zoom"), this);
    reset->setToolTip(tr("Show the whole matrix (Ctrl+0; also double-click)"));
    bar->addWidget(m_buckets);
    bar->addStretch(1);
    bar->addWidget(new QLabel(tr("wheel: zoom · drag: pan · double-click: whole matrix"), this));
    bar->addWidget(reset);
    layout->addLayout(bar);
    m_heatmap = new HeatmapWidget(this);
    layout->addWidget(m_heatmap, 1);
    m_strip = new ThumbnailStrip(this);
    auto *scroll = new QScrollArea(this);
    scroll->setWidget(m_strip);
    scroll->setWidgetResizable(false);
    scroll->setFixedHeight(m_strip->sizeHint().height() + 22);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    scroll->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    layout->addWidget(scroll);

    connect(reset, &QPushButton::clicked, this, [this] { resetZoom(); });
    connect(m_buckets, &QCheckBox::toggled, this, [this] { markDirty(); });
    connect(m_strip, &ThumbnailStrip::headClicked, this, &ViewBase::headRequested);
    connect(m_heatmap, &HeatmapWidget::hovered, this, [this](int, int m, int n, float v) {
        Q_EMIT hoverText(tr("m = %1, n = %2, value = %3   (head %4)").arg(m).arg(n).arg(hoverValue(v)).arg(m_result.request.head + 1));
    });
    connect(m_heatmap, &HeatmapWidget::hoverLeft, this, [this] { Q_EMIT hoverText(QString()); });
}

bool BiasView::hasPicture() const
{
    return !m_heatmap->heatmap().isEmpty();
}

void BiasView::setBuckets(bool buckets)
{
    m_buckets->setChecked(buckets);
}

void BiasView::refresh()
{
    const bool t5 = m_panel.spec.kind == SchemeKind::T5;
    m_buckets->setEnabled(t5);
    BiasRequest request;
    request.spec = m_panel.spec;
    request.length = m_panel.length;
    request.head = m_panel.head;
    request.buckets = t5 && m_buckets->isChecked();
    request.thumbnailSize = 48;
    Q_EMIT busyChanged(true);
    const QString colorMap = m_panel.colorMap;
    m_job.start([request, colorMap](const JobControl &control) {
        Prepared p;
        p.result = computeBias(request, control);
        if (!p.result.error.isEmpty() || control.isCanceled())
            return p;
        p.heatmap.setFigure(biasFigure(p.result, colorMap));
        // Thumbnails share one scale so heads compare at a glance.
        ValueRange range;
        for (const MatrixPtr &t : p.result.thumbnails)
            range.include(finiteRange(t->values.data(), t->values.size()));
        const ColorScale scale = makeColorScale(range, colorMap);
        for (const MatrixPtr &t : p.result.thumbnails)
            p.thumbnails.push_back(colorize(t->values.data(), t->rows, t->cols, scale));
        return p;
    });
}

void BiasView::showResult(Prepared prepared)
{
    if (!prepared.result.error.isEmpty()) {
        m_heatmap->setMessage(prepared.result.error);
        Q_EMIT statusMessage(prepared.result.error);
        return;
    }
    m_result = std::move(prepared.result);
    m_heatmap->setHeatmap(std::move(prepared.heatmap));
    m_strip->setThumbnails(std::move(prepared.thumbnails));
    m_strip->setCurrent(m_result.request.head);
    Q_EMIT pictureUpdated();
}

void BiasView::paintPicture(QPainter &painter, const QRectF &target, const PictureStyle &style) const
{
    m_heatmap->heatmap().paint(painter, target, style, m_heatmap->window());
}

void BiasView::writeData(std::ostream &out, DataFormat format) const
{
    if (!m_result.matrix)
        throw InputError("the bias view has nothing to export yet");
    const BiasRequest &r = m_result.request;
    nlohmann::json meta = specMeta(r.spec);
    meta["length"] = r.length;
    meta["values"] = r.buckets ? "t5 bucket index (-1 masked)" : (r.spec.info().rotary ? "probe score" : "bias");
    meta["head_indices"] = {r.head};
    MatrixStackWriter writer(out, format, 1, r.length, r.length, false, meta, r.buckets && format != DataFormat::Npy);
    if (r.buckets) {
        // The heatmap stores masked buckets as -inf; files carry core's -1.
        std::vector<float> buckets(m_result.matrix->values);
        for (float &v : buckets)
            if (!std::isfinite(v))
                v = -1;
        writer.write(r.head, buckets.data());
    } else {
        writer.write(r.head, m_result.matrix->values.data());
    }
    writer.finish();
}

nlohmann::json BiasView::saveState() const
{
    return {{"buckets", m_buckets->isChecked()}};
}

void BiasView::restoreState(const nlohmann::json &state)
{
    m_buckets->setChecked(sessionBool(state, "buckets", false, "views.bias"));
}

void BiasView::cancelJob()
{
    m_job.cancel();
}

bool BiasView::isBusy() const
{
    return m_job.isRunning();
}

void BiasView::setDark(bool dark)
{
    m_heatmap->setDark(dark);
}

void BiasView::resetZoom()
{
    m_heatmap->resetZoom();
}

// ---- CompareView --------------------------------------------------------------------------------------------

CompareView::CompareView(QWidget *parent)
    : ViewBase(parent)
    , m_job(this, {[this](Prepared p) {
                       if (!p.result.error.isEmpty()) {
                           m_heatmap->setMessage(p.result.error);
                           Q_EMIT statusMessage(p.result.error);
                           return;
                       }
                       m_result = std::move(p.result);
                       m_heatmap->setHeatmap(std::move(p.heatmap));
                       Q_EMIT pictureUpdated();
                   },
                   [this](int d, int t) { Q_EMIT progress(d, t); }, [this] { Q_EMIT busyChanged(false); }})
{
    auto *layout = new QVBoxLayout(this);
    auto *bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Schemes:"), this));
    m_count = new QSpinBox(this);
    m_count->setRange(2, 4);
    m_count->setValue(2);
    m_count->setToolTip(tr("How many schemes side by side (2-4)"));
    bar->addWidget(m_count);
    const QStringList defaults = {QStringLiteral("alibi"), QStringLiteral("local"), QStringLiteral("kerple-log"),
                                  QStringLiteral("sandwich")};
    for (int i = 0; i < 4; ++i) {
        auto *combo = new QComboBox(this);
        for (const SchemeInfo &s : schemeCatalog())
            combo->addItem(QString::fromStdString(s.name));
        combo->setCurrentText(defaults[i]);
        combo->setVisible(i < 2);
        connect(combo, &QComboBox::currentIndexChanged, this, [this] { markDirty(); });
        m_choices.push_back(combo);
        bar->addWidget(combo);
    }
    m_shared = new QCheckBox(tr("shared colour scale"), this);
    m_shared->setChecked(true);
    m_shared->setToolTip(tr("One colour scale for every panel, so equal colours mean equal values"));
    bar->addWidget(m_shared);
    bar->addStretch(1);
    auto *reset = new QPushButton(tr("Reset zoom"), this);
    bar->addWidget(reset);
    layout->addLayout(bar);
    auto *note = new QLabel(tr("Length, head, mask and colour map come from the panel; the panel's scheme uses "
                               "its parameters, the others their defaults (window = context, else 16)."),
                            this);
    note->setWordWrap(true);
    layout->addWidget(note);
    m_heatmap = new HeatmapWidget(this);
    layout->addWidget(m_heatmap, 1);

    connect(m_count, &QSpinBox::valueChanged, this, [this](int k) {
        for (int i = 0; i < 4; ++i)
            m_choices[i]->setVisible(i < k);
        markDirty();
    });
    connect(m_shared, &QCheckBox::toggled, this, [this] {
        if (!m_result.panels.empty())
            m_heatmap->setFigure(compareFigure(m_result, m_panel.colorMap, m_shared->isChecked()));
    });
    connect(reset, &QPushButton::clicked, this, [this] { resetZoom(); });
    connect(m_heatmap, &HeatmapWidget::hovered, this, [this](int panel, int m, int n, float v) {
        Q_EMIT hoverText(tr("%1: m = %2, n = %3, value = %4")
                             .arg(QString::fromStdString(m_result.panels[panel].request.spec.name()))
                             .arg(m)
                             .arg(n)
                             .arg(hoverValue(v)));
    });
    connect(m_heatmap, &HeatmapWidget::hoverLeft, this, [this] { Q_EMIT hoverText(QString()); });
}

QStringList CompareView::schemes() const
{
    QStringList out;
    for (int i = 0; i < m_count->value(); ++i)
        out << m_choices[i]->currentText();
    return out;
}

void CompareView::setSchemes(const QStringList &names)
{
    const int k = std::clamp(static_cast<int>(names.size()), 2, 4);
    for (int i = 0; i < k && i < names.size(); ++i)
        m_choices[i]->setCurrentText(names[i]);
    m_count->setValue(k);
    markDirty();
}

std::vector<SchemeSpec> CompareView::specsFor(const QStringList &names, const PanelState &panel)
{
    std::vector<SchemeSpec> specs;
    for (const QString &name : names) {
        if (name.toStdString() == panel.spec.name()) {
            specs.push_back(panel.spec);
            continue;
        }
        const SchemeInfo &info = schemeByName(name.toStdString());
        specs.push_back(makeSchemeSpec(info.name, panel.spec.heads, panel.spec.bidirectional && info.bidirectionalAllowed,
                                       {}, panel.spec.context, panel.spec.logn));
    }
    return specs;
}

void CompareView::refresh()
{
    CompareRequest request;
    try {
        request.specs = specsFor(schemes(), m_panel);
    } catch (const InputError &e) {
        m_heatmap->setMessage(QString::fromStdString(e.what()));
        return;
    }
    request.length = m_panel.length;
    request.head = m_panel.head;
    Q_EMIT busyChanged(true);
    const QString colorMap = m_panel.colorMap;
    const bool shared = m_shared->isChecked();
    m_job.start([request, colorMap, shared](const JobControl &control) {
        Prepared p;
        p.result = computeCompare(request, control);
        if (p.result.error.isEmpty() && !control.isCanceled())
            p.heatmap.setFigure(compareFigure(p.result, colorMap, shared));
        return p;
    });
}

bool CompareView::hasPicture() const
{
    return !m_heatmap->heatmap().isEmpty();
}

void CompareView::paintPicture(QPainter &painter, const QRectF &target, const PictureStyle &style) const
{
    m_heatmap->heatmap().paint(painter, target, style, m_heatmap->window());
}

void CompareView::writeData(std::ostream &out, DataFormat format) const
{
    if (m_result.panels.empty())
        throw InputError("the compare view has nothing to export yet");
    const int n = m_result.panels.front().request.length;
    nlohmann::json meta;
    meta["schemes"] = nlohmann::json::array();
    for (const BiasResult &r : m_result.panels)
        meta["schemes"].push_back(specMeta(r.request.spec));
    meta["length"] = n;
    meta["head"] = m_result.panels.front().request.head;
    meta["values"] = "bias or probe score, one matrix per scheme in the order of \"schemes\"";
    MatrixStackWriter writer(out, format, static_cast<int>(m_result.panels.size()), n, n, true, meta);
    for (size_t i = 0; i < m_result.panels.size(); ++i)
        writer.write(static_cast<int>(i), m_result.panels[i].matrix->values.data());
    writer.finish();
}

nlohmann::json CompareView::saveState() const
{
    nlohmann::json names = nlohmann::json::array();
    for (const QString &s : schemes())
        names.push_back(s.toStdString());
    return {{"schemes", names}, {"shared_scale", m_shared->isChecked()}};
}

void CompareView::restoreState(const nlohmann::json &state)
{
    QStringList names;
    if (state.contains("schemes")) {
        const nlohmann::json &list = state.at("schemes");
        if (!list.is_array() || list.size() < 2 || list.size() > 4)
            throw InputError("session: views.compare.schemes must be a list of 2 to 4 scheme names");
        for (const nlohmann::json &s : list) {
            if (!s.is_string())
                throw InputError("session: views.compare.schemes holds a non-string " + s.dump());
            names << QString::fromStdString(schemeByName(s.get<std::string>()).name);
        }
    }
    const bool shared = sessionBool(state, "shared_scale", true, "views.compare");
    if (!names.isEmpty())
        setSchemes(names);
    m_shared->setChecked(shared);
}

void CompareView::cancelJob()
{
    m_job.cancel();
}

bool CompareView::isBusy() const
{
    return m_job.isRunning();
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
