// The Bias tab: the job colours the matrix and the thumbnails on the worker; the heatmap and strip show them.
#include "tabs/bias_view.h"

#include "settings/session.h"
#include "tabs/heatmap_widget.h"

#include "base/matrix_output.h"
#include "views/bias_views.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QVBoxLayout>

#include <cmath>
#include <utility>

namespace plab::ui {

BiasView::BiasView(QWidget* parent) : ViewBase(parent), m_job(this, [this](Prepared p) { showResult(std::move(p)); })
{
    auto* layout = new QVBoxLayout(this);
    auto* bar = new QHBoxLayout;
    m_buckets = new QCheckBox(tr("T5 bucket indices"), this);
    m_buckets->setToolTip(tr("t5 only: show which bucket each (m, n) falls in instead of its bias"));
    m_buckets->setEnabled(false);
    auto* reset = new QPushButton(tr("Reset zoom"), this);
    reset->setToolTip(tr("Show the whole matrix (Ctrl+0; also double-click)"));
    bar->addWidget(m_buckets);
    bar->addStretch(1);
    bar->addWidget(new QLabel(tr("wheel: zoom · drag: pan · double-click: whole matrix"), this));
    bar->addWidget(reset);
    layout->addLayout(bar);
    m_heatmap = new HeatmapWidget(this);
    m_heatmap->setEmptyHint(tr("Choose a scheme in the panel on the left: its bias matrix appears here."));
    layout->addWidget(m_heatmap, 1);
    m_strip = new ThumbnailStrip(this);
    auto* scroll = new QScrollArea(this);
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
        Q_EMIT hoverText(tr("m = %1, n = %2, value = %3   (head %4)")
                             .arg(m)
                             .arg(n)
                             .arg(hoverValueText(v))
                             .arg(m_result.request.head + 1));
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
    const QString colorMap = m_panel.colorMap;
    const bool dark = m_heatmap->isDark();
    m_job.start([request, colorMap, dark](const JobControl& control) {
        Prepared p;
        p.result = computeBias(request, control);
        if (!p.result.error.isEmpty() || control.isCanceled())
            return p;
        HeatmapFigure figure = biasFigure(p.result, colorMap);
        figure.dark = dark;
        p.heatmap.setFigure(std::move(figure));
        // Thumbnails share one scale so heads compare at a glance.
        ValueRange range;
        for (const MatrixPtr& t : p.result.thumbnails)
            range.include(finiteRange(t->values.data(), t->values.size()));
        p.thumbnailScale = makeColorScale(range, colorMap);
        p.thumbnailScale.dark = dark;
        for (const MatrixPtr& t : p.result.thumbnails)
            p.thumbnails.push_back(colorize(t->values.data(), t->rows, t->cols, p.thumbnailScale));
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
    m_thumbnailScale = prepared.thumbnailScale;
    setThumbnailPalette(m_heatmap->isDark()); // the palette may have changed while the worker coloured them
    m_strip->setCurrent(m_result.request.head);
    Q_EMIT pictureUpdated();
}

void BiasView::paintPicture(QPainter& painter, const QRectF& target, const PictureStyle& style) const
{
    m_heatmap->heatmap().paint(painter, target, style, m_heatmap->window());
}

void BiasView::writeData(std::ostream& out, DataFormat format) const
{
    requirePicture();
    const BiasRequest& r = m_result.request;
    const nlohmann::json meta = biasMatrixMeta(r.spec, r.length, r.buckets, {r.head});
    MatrixStackWriter writer(out, format, 1, r.length, r.length, false, meta, r.buckets && format != DataFormat::Npy);
    if (r.buckets) {
        // The heatmap stores masked buckets as -inf; files carry core's -1.
        std::vector<float> buckets(m_result.matrix->values);
        for (float& v : buckets)
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

void BiasView::restoreState(const nlohmann::json& state)
{
    m_buckets->setChecked(sessionBool(state, "buckets", false, "views.bias"));
}

void BiasView::setDark(bool dark)
{
    m_heatmap->setDark(dark);
    setThumbnailPalette(dark);
}

void BiasView::setThumbnailPalette(bool dark)
{
    if (m_thumbnailScale.dark == dark)
        return;
    const QRgb from = m_thumbnailScale.maskColor();
    m_thumbnailScale.dark = dark;
    m_strip->replaceColor(from, m_thumbnailScale.maskColor());
}

void BiasView::resetZoom()
{
    m_heatmap->resetZoom();
}

} // namespace plab::ui
