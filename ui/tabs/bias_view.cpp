// The Bias tab: the job colours the matrix and the thumbnails on the worker; the heatmap and strip show them.
#include "tabs/bias_view.h"

#include "charts/curve_chart.h"
#include "settings/session.h"
#include "tabs/fitting_combo.h"
#include "tabs/heatmap_widget.h"

#include "base/matrix_output.h"
#include "views/bias_views.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QStackedWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <mutex>

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
    m_curve = new QCheckBox(tr("FIRE: learned curve"), this);
    m_curve->setObjectName(QStringLiteral("fire_curve"));
    m_curve->setToolTip(tr("fire only: a trained model's bias against the distance beside the untrained one, instead "
                           "of the matrix"));
    m_curve->setEnabled(false);
    bar->addWidget(m_buckets);
    bar->addWidget(m_curve);
    bar->addStretch(1);
    bar->addWidget(new QLabel(tr("wheel: zoom · drag: pan · double-click: whole matrix"), this));
    bar->addWidget(reset);
    layout->addLayout(bar);
    m_pages = new QStackedWidget(this);
    auto* matrixPage = new QWidget(m_pages);
    auto* matrix = new QVBoxLayout(matrixPage);
    matrix->setContentsMargins(0, 0, 0, 0);
    m_heatmap = new HeatmapWidget(matrixPage);
    m_heatmap->setEmptyHint(tr("Choose a scheme in the panel on the left: its bias matrix appears here."));
    matrix->addWidget(m_heatmap, 1);
    m_strip = new ThumbnailStrip(matrixPage);
    auto* scroll = new QScrollArea(matrixPage);
    scroll->setWidget(m_strip);
    scroll->setWidgetResizable(false);
    scroll->setFixedHeight(m_strip->sizeHint().height() + 22);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    scroll->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    matrix->addWidget(scroll);
    m_pages->addWidget(matrixPage);
    // The curve page: which trained model, then the chart.
    auto* curvePage = new QWidget(m_pages);
    auto* curve = new QVBoxLayout(curvePage);
    curve->setContentsMargins(0, 0, 0, 0);
    auto* modelRow = new QHBoxLayout;
    // Model names are long ("fire (demo, trained here, 1200 steps)"): the closed box elides, the list shows them whole.
    m_models = new FittingComboBox(curvePage);
    m_models->setObjectName(QStringLiteral("fire_model"));
    m_models->addItem(tr("untrained only"));
    m_models->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_models->setMinimumContentsLength(16);
    auto* open = new QPushButton(tr("Open model…"), curvePage);
    open->setToolTip(tr("A fire checkpoint (.safetensors) trained here or with positionlab-cli train fire"));
    modelRow->addWidget(new QLabel(tr("Trained model:"), curvePage));
    modelRow->addWidget(m_models, 1);
    modelRow->addWidget(open);
    curve->addLayout(modelRow);
    m_curveNote = new QLabel(curvePage);
    m_curveNote->setWordWrap(true);
    curve->addWidget(m_curveNote);
    m_curvePlot = new CurvePlot(curvePage);
    curve->addWidget(m_curvePlot, 1);
    m_pages->addWidget(curvePage);
    layout->addWidget(m_pages, 1);
    connect(m_curve, &QCheckBox::toggled, this, [this] {
        m_pages->setCurrentIndex(isCurveShown() ? 1 : 0);
        updateCurve();
    });
    connect(m_models, &QComboBox::currentIndexChanged, this, [this] { updateCurve(); });
    connect(open, &QPushButton::clicked, this, &BiasView::openModel);
    connect(m_curvePlot, &CurvePlot::hovered, this, &ViewBase::hoverText);

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
    return isCurveShown() ? !m_curves.prior.empty() : !m_heatmap->heatmap().isEmpty();
}

bool BiasView::isCurveShown() const
{
    return m_curve->isEnabled() && m_curve->isChecked();
}

void BiasView::setCurveShown(bool shown)
{
    m_curve->setChecked(shown);
}

void BiasView::addModel(const SharedModel& model, bool select)
{
    if (!model.isValid() || model.model->config().scheme != "fire")
        return;
    // The same file again (a kept model offered anew) replaces its entry.
    int index = -1;
    for (size_t i = 0; i < m_fireModels.size(); ++i)
        if (!model.file.isEmpty() && m_fireModels[i].file == model.file)
            index = static_cast<int>(i);
    if (index < 0) {
        m_fireModels.push_back(model);
        m_models->addItem(model.name);
        index = static_cast<int>(m_fireModels.size()) - 1;
    } else {
        m_fireModels[index] = model;
        m_models->setItemText(index + 1, model.name);
    }
    m_models->setItemData(index + 1, model.file, Qt::ToolTipRole);
    if (select || m_models->currentIndex() == 0)
        m_models->setCurrentIndex(index + 1);
    else
        updateCurve();
}

SharedModel BiasView::chosenModel() const
{
    const int i = m_models->currentIndex() - 1;
    return i >= 0 && i < static_cast<int>(m_fireModels.size()) ? m_fireModels[i] : SharedModel{};
}

void BiasView::openModel()
{
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Open a FIRE model"), QString(), tr("Checkpoints (*.safetensors)"));
    if (path.isEmpty())
        return;
    try {
        const SharedModel model = loadSharedModel(path);
        if (model.model->config().scheme != "fire")
            throw InputError(tr("%1: its scheme is %2; the learned curve needs a fire model")
                                 .arg(QFileInfo(path).fileName(), QString::fromStdString(model.model->config().scheme))
                                 .toStdString());
        addModel(model, true);
    } catch (const std::exception& e) {
        Q_EMIT statusMessage(QString::fromStdString(e.what()));
    }
}

void BiasView::updateCurve()
{
    if (!isCurveShown())
        return;
    // core's fireCurves: H × length MLP evaluations, cheap enough for the GUI thread. The panel's length gives the
    // query row (the matrix's last), its head the curve.
    const SharedModel model = chosenModel();
    const int row = std::clamp(m_panel.length - 1, 0, kMaxLength - 1);
    try {
        if (model.isValid()) {
            SchemeSpec spec;
            {
                const std::lock_guard lock(*model.mutex);
                spec = model.model->schemeSpec();
            }
            m_curves = fireCurves(spec, row);
            const int head = std::min(m_panel.head, spec.heads - 1);
            m_curvePlot->setFigure(fireCurvesFigure(m_curves, head, model.name));
            m_curveNote->setText(
                m_panel.head < spec.heads
                    ? tr("Head h = %1 of 0..%2 at row m = %3 (the panel's length − 1). Past the threshold T the "
                         "distance is divided by ψ(m), so a longer row reads the same distance differently.")
                          .arg(head)
                          .arg(spec.heads - 1)
                          .arg(row)
                    : tr("The model has %1 heads: head h = %2 is shown (the panel's head h = %3 is not in it).")
                          .arg(spec.heads)
                          .arg(head)
                          .arg(m_panel.head));
        } else {
            m_curves = fireCurves(m_panel.spec, row);
            m_curvePlot->setFigure(fireCurvesFigure(m_curves, m_panel.head, QString()));
            m_curveNote->setText(tr("No trained FIRE model yet: the untrained initialisation alone. Tick fire in the "
                                    "Train tab and train it, or open a fire checkpoint, to draw its learned curve "
                                    "beside this one."));
        }
    } catch (const InputError& e) {
        m_curves = FireCurves{};
        m_curvePlot->setFigure(CurveFigure{});
        m_curveNote->setText(QString::fromStdString(e.what()));
    }
    Q_EMIT pictureUpdated();
}

void BiasView::setBuckets(bool buckets)
{
    m_buckets->setChecked(buckets);
}

void BiasView::refresh()
{
    const bool t5 = m_panel.spec.kind == SchemeKind::T5;
    m_buckets->setEnabled(t5);
    m_curve->setEnabled(m_panel.spec.kind == SchemeKind::Fire);
    m_pages->setCurrentIndex(isCurveShown() ? 1 : 0);
    updateCurve();
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
    if (isCurveShown()) {
        renderCurveFigure(painter, target, m_curvePlot->figure(), style);
        return;
    }
    m_heatmap->heatmap().paint(painter, target, style, m_heatmap->window());
}

void BiasView::writeData(std::ostream& out, DataFormat format) const
{
    requirePicture();
    if (isCurveShown()) { // the curves of every head, as `positionlab-cli fire-curve` writes them
        Table t = fireCurvesTable(m_curves);
        const SharedModel model = chosenModel();
        t.meta["model"] = model.isValid() ? model.name.toStdString() : std::string("untrained");
        writeTable(out, format, t);
        return;
    }
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
    return {{"buckets", m_buckets->isChecked()}, {"fire_curve", m_curve->isChecked()}};
}

void BiasView::restoreState(const nlohmann::json& state)
{
    const bool buckets = sessionBool(state, "buckets", false, "views.bias");
    const bool curve = sessionBool(state, "fire_curve", false, "views.bias"); // sessions before it: the matrix
    m_buckets->setChecked(buckets);
    m_curve->setChecked(curve);
}

void BiasView::setDark(bool dark)
{
    m_heatmap->setDark(dark);
    m_curvePlot->setDark(dark);
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
