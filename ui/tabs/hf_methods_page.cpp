// The Your model tab's Evaluate under methods page: its controls, the request, the estimate and the curves.
#include "tabs/hf_model_view.h"

#include "charts/curve_chart.h"
#include "tabs/adaptive_splitter.h"
#include "tabs/scaling_layers_combo.h"
#include "workers/model_compute.h"

#include "base/errors.h"
#include "runs/method_comparison.h"
#include "schemes/rotary_scaling.h"

#include <QApplication>
#include <QDir>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPointer>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

namespace plab::ui {

namespace {

// The pages' proportions: below the sum of a side part and its picture's least width, the two stack.
constexpr int kMethodsSideWidth = 300; // the methods page's controls beside its chart
constexpr int kChartMinWidth = 420;    // a perplexity chart whose ticks and legend are read whole
constexpr int kStackedListRows = 4;    // the method list's rows when it wraps above the chart

} // namespace

QListWidget* HfModelView::buildMethodList(QWidget* parent)
{
    m_methodList = new QListWidget(parent);
    auto addMethod = [this](const QString& text, const QString& name) {
        auto* item = new QListWidgetItem(text, m_methodList);
        item->setData(Qt::UserRole, name);
        item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
        item->setCheckState(Qt::Checked);
    };
    addMethod(tr("the config's own scaling"), QString());
    for (const RotaryMethodInfo& m : rotaryMethodCatalog())
        addMethod(QString::fromStdString(m.name), QString::fromStdString(m.name));
    return m_methodList;
}

QFormLayout* HfModelView::buildMethodsForm(QWidget* side)
{
    auto* form = new QFormLayout;
    m_lengths = new QLineEdit(side);
    m_lengths->setPlaceholderText(tr("context ÷2 … ×2"));
    m_lengths->setToolTip(tr("Lengths in tokens, separated by commas; empty: half the model's context, the context "
                             "and twice it."));
    form->addRow(tr("Lengths:"), m_lengths);
    m_tokensPerLength = new QSpinBox(side);
    m_tokensPerLength->setRange(0, 1 << 24);
    m_tokensPerLength->setSingleStep(4096);
    m_tokensPerLength->setValue(16384);
    m_tokensPerLength->setSpecialValueText(tr("all"));
    form->addRow(tr("Tokens per length:"), m_tokensPerLength);
    m_methodsLayers = new ScalingLayersCombo(side);
    form->addRow(tr("Methods reach:"), m_methodsLayers);
    return form;
}

QWidget* HfModelView::buildMethodsPage()
{
    // The controls beside the chart when the tab is wide; above it, the method list in rows, when not.
    auto* page = new AdaptiveSplitter(kMethodsSideWidth + kChartMinWidth, 0.45, m_pages);
    auto* side = new QWidget(page);
    side->setMaximumWidth(kMethodsSideWidth);
    auto* v = new QVBoxLayout(side);
    v->setContentsMargins(0, 0, 0, 0);
    auto* choose = new QPushButton(tr("Text file…"), side);
    connect(choose, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Text to evaluate on"), m_methodsText);
        if (!path.isEmpty())
            setMethodsTextFile(path);
    });
    v->addWidget(choose);
    m_methodsSource = new QLabel(tr("Text: the default corpus"), side);
    m_methodsSource->setWordWrap(true);
    v->addWidget(m_methodsSource);
    v->addLayout(buildMethodsForm(side));
    v->addWidget(buildMethodList(side), 1);
    m_evaluate = new QPushButton(tr("Evaluate"), side);
    connect(m_evaluate, &QPushButton::clicked, this, &HfModelView::evaluateMethods);
    auto* cancel = new QPushButton(tr("Cancel"), side);
    cancel->setObjectName(QStringLiteral("cancelMethods"));
    connect(cancel, &QPushButton::clicked, this, &HfModelView::cancelMethods);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_evaluate);
    buttons->addWidget(cancel);
    v->addLayout(buttons);
    m_methodsStatus = new QLabel(side);
    m_methodsStatus->setObjectName(QStringLiteral("methodsStatus"));
    m_methodsStatus->setWordWrap(true);
    m_methodsEstimate = new QLabel(side);
    m_methodsEstimate->setObjectName(QStringLiteral("methodsEstimate"));
    m_methodsEstimate->setWordWrap(true);
    v->addWidget(m_methodsEstimate);
    v->addWidget(m_methodsStatus);
    page->addWidget(side);
    m_methodsPlot = new CurvePlot(page);
    m_methodsPlot->setEmptyHint(tr("Perplexity per token against length, one curve per method, appears here: open a "
                                   "model folder, tick methods and press Evaluate."));
    page->addWidget(m_methodsPlot);
    page->setStretchFactor(0, 0);
    page->setStretchFactor(1, 1);
    connect(page, &AdaptiveSplitter::orientationChanged, this, [this, side](Qt::Orientation orientation) {
        // Stacked, the list wraps its methods into rows as wide as the tab and is only as tall as those rows.
        const bool stacked = orientation == Qt::Vertical;
        side->setMaximumWidth(stacked ? QWIDGETSIZE_MAX : kMethodsSideWidth);
        m_methodList->setFlow(stacked ? QListView::LeftToRight : QListView::TopToBottom);
        m_methodList->setWrapping(stacked);
        m_methodList->setResizeMode(stacked ? QListView::Adjust : QListView::Fixed);
        m_methodList->setMaximumHeight(stacked ? kStackedListRows * m_methodList->sizeHintForRow(0) +
                                                     2 * m_methodList->frameWidth() + 4
                                               : QWIDGETSIZE_MAX);
    });
    connect(m_methodsPlot, &CurvePlot::hovered, this, &ViewBase::hoverText);
    connect(m_lengths, &QLineEdit::textChanged, this, &HfModelView::showMethodsEstimate);
    connect(m_tokensPerLength, &QSpinBox::valueChanged, this, &HfModelView::showMethodsEstimate);
    connect(m_methodList, &QListWidget::itemChanged, this, &HfModelView::showMethodsEstimate);
    connect(this, &ViewBase::progress, this, [this](int done, int total) {
        if (!m_methodsJob.isRunning() || m_methodsJob.isCanceled() || done <= 0 || total <= 0)
            return;
        const double elapsed = m_methodsClock.elapsed() / 1000.0;
        const double eta = elapsed * (total - done) / done;
        m_methodsStatus->setText(tr("Evaluating… %1% · about %2 s left").arg(100 * done / total).arg(eta, 0, 'f', 0));
    });
    return page;
}

void HfModelView::setMethodsTextFile(const QString& path)
{
    m_methodsText = path;
    m_methodsSource->setText(path.isEmpty() ? tr("Text: the default corpus")
                                            : tr("Text: %1").arg(QDir::toNativeSeparators(path)));
}

void HfModelView::setMethodsLengths(const QString& lengths)
{
    m_lengths->setText(lengths);
}

void HfModelView::setMethodsTokensPerLength(int tokens)
{
    m_tokensPerLength->setValue(tokens);
}

void HfModelView::setMethodsChecked(const QStringList& names)
{
    for (int i = 0; i < m_methodList->count(); ++i) {
        QListWidgetItem* item = m_methodList->item(i);
        item->setCheckState(names.contains(item->data(Qt::UserRole).toString()) ? Qt::Checked : Qt::Unchecked);
    }
}

QStringList HfModelView::methodsChecked() const
{
    QStringList names;
    for (int i = 0; i < m_methodList->count(); ++i)
        if (m_methodList->item(i)->checkState() == Qt::Checked)
            names << m_methodList->item(i)->data(Qt::UserRole).toString();
    return names;
}

void HfModelView::applyMethodsDefaults()
{
    if (!m_model)
        return;
    const MethodComparisonDefaults d = hfMethodsDefaults(m_model->model->config());
    QStringList names{QString()};
    QStringList lengths;
    for (const std::string& m : d.methods)
        names << QString::fromStdString(m);
    for (const int n : d.lengths)
        lengths << QString::number(n);
    setMethodsChecked(names);
    m_lengths->setPlaceholderText(lengths.join(QLatin1Char(',')));
    m_tokensPerLength->setValue(static_cast<int>(d.tokensPerLength));
    showMethodsEstimate();
}

HfMethodsRequest HfModelView::methodsRequest() const
{
    HfMethodsRequest request;
    request.model = m_model;
    request.textPath = m_methodsText;
    request.maxTokens = static_cast<size_t>(m_tokensPerLength->value());
    request.scalingLayers = m_methodsLayers->layers();
    request.own = false;
    for (const QString& name : methodsChecked()) {
        if (name.isEmpty())
            request.own = true;
        else
            request.methods.push_back(name.toStdString());
    }
    if (m_model) // a method that would reach no rotary layer is refused (core's rule)
        checkHfMethodsReach(m_model->model->config(), request.methods, request.scalingLayers);
    for (const QString& word : m_lengths->text().split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        bool ok = false;
        const int n = word.trimmed().toInt(&ok);
        if (!ok || n < 2 || n > kMaxLength)
            throw InputError(
                tr("Lengths: '%1' is not allowed; allowed: whole numbers from 2 to %2, separated by commas")
                    .arg(word.trimmed())
                    .arg(kMaxLength)
                    .toStdString());
        request.lengths.push_back(n);
    }
    return request;
}

QString HfModelView::methodsEstimateText() const
{
    if (!m_model)
        return {};
    try {
        const HfMethodsRequest request = methodsRequest();
        const size_t curves = request.methods.size() + (request.own ? 1 : 0);
        if (request.maxTokens == 0)
            return tr("Estimate: all the text's tokens at each length; the time depends on the text.");
        const double seconds = hfMethodsSecondsEstimate(m_model->model->config(), request, curves);
        return tr("Estimate: about %1 for %n curve(s) on 2 cores (a cost model; a busy machine takes longer).", nullptr,
                  static_cast<int>(curves))
            .arg(durationText(seconds));
    } catch (const InputError& e) {
        return QString::fromStdString(e.what());
    }
}

void HfModelView::showMethodsEstimate()
{
    m_methodsEstimate->setText(methodsEstimateText());
}

void HfModelView::evaluateMethods()
{
    HfMethodsRequest request;
    try {
        request = methodsRequest();
    } catch (const InputError& e) {
        m_methodsStatus->setText(QString::fromStdString(e.what()));
        return;
    }
    // Each finished curve reaches the GUI thread through the application object; the view may be gone by then.
    const int run = ++m_methodsRun;
    m_methodsShown.clear();
    request.curveDone = [self = QPointer<HfModelView>(this), run](const MethodCurve& curve) {
        QMetaObject::invokeMethod(
            qApp,
            [self, run, curve] {
                if (!self || run != self->m_methodsRun || self->m_methodsJob.isCanceled())
                    return;
                self->m_methodsShown.push_back(curve);
                if (self->m_model)
                    self->showMethodsCurves(self->m_methodsShown, self->m_model->model->config().context,
                                            self->m_model->model->precision());
            },
            Qt::QueuedConnection);
    };
    m_methodsClock.start();
    m_methodsStatus->setText(tr("Evaluating…"));
    m_methodsJob.start([request](const JobControl& control) { return computeHfMethods(request, control); });
}

void HfModelView::cancelMethods()
{
    const bool running = m_methodsJob.isRunning() && !m_methodsJob.isCanceled();
    m_methodsJob.cancel();
    if (running)
        m_methodsStatus->setText(canceledText(m_methodsClock.elapsed()));
}

void HfModelView::showMethodsCurves(const std::vector<MethodCurve>& curves, int context, HfPrecision precision)
{
    CurveFigure figure = methodsPerplexityFigure(curves, m_model ? m_model->model->config().scheme : "rope", context);
    if (precision != HfPrecision::Float32)
        figure.title += QStringLiteral(" · ") + hfPrecisionLabel(precision);
    figure.xLabel = tr("evaluation length (tokens)"); // a real model's unit is its tokenizer's, not bytes
    figure.yLabel = tr("perplexity (per token)");
    m_methodsPlot->setFigure(figure);
    Q_EMIT pictureUpdated();
}

void HfModelView::methodsFinished(HfMethodsResult r)
{
    if (r.canceled) {
        m_methodsStatus->setText(canceledText(m_methodsClock.elapsed()));
        return;
    }
    if (!r.error.isEmpty()) {
        m_methodsStatus->setText(r.error);
        Q_EMIT statusMessage(r.error);
        return;
    }
    m_methods = std::move(r);
    m_methodsShown = m_methods.curves;
    QString status = tr("%1 tokens of %2; %3 s.")
                         .arg(m_methods.textTokens)
                         .arg(m_methods.textSource)
                         .arg(m_methodsClock.elapsed() / 1000.0, 0, 'f', 1);
    for (const QString& message : m_methods.leftOut)
        status += QLatin1Char('\n') + tr("Left out: %1").arg(message);
    m_methodsStatus->setText(status);
    showMethodsCurves(m_methods.curves, m_methods.context, m_methods.request.model->model->precision());
}

} // namespace plab::ui
