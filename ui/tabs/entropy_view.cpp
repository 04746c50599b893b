// The Entropy tab: scheme list, q/k source and options, the plot or the prompt for a model.
#include "tabs/entropy_view.h"
#include "tabs/fitting_combo.h"

#include "charts/curve_chart.h"
#include "settings/session.h"
#include "tabs/model_prompt.h"

#include "base/matrix_output.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QSpinBox>
#include <QStackedWidget>
#include <QVBoxLayout>

namespace plab::ui {

EntropyView::EntropyView(QWidget* parent)
    : CurveViewBase(parent), m_job(this, [this](EntropyResult r) {
          if (!r.error.isEmpty()) {
              Q_EMIT statusMessage(r.error);
              return;
          }
          if (r.canceled)
              return;
          m_result = std::move(r);
          m_plot->setFigure(entropyFigure(m_result, m_panel.head, measure()));
          Q_EMIT pictureUpdated();
      })
{
    auto* layout = new QHBoxLayout(this);
    auto* side = new QVBoxLayout;
    side->addWidget(new QLabel(tr("<b>Schemes</b> (one curve each)"), this));
    m_schemes = newSchemeChecklist({QStringLiteral("alibi"), QStringLiteral("kerple-log"), QStringLiteral("sandwich"),
                                    QStringLiteral("local"), QStringLiteral("t5")},
                                   this);
    m_schemes->setMaximumWidth(240);
    side->addWidget(m_schemes, 1);
    side->addLayout(buildOptions());
    layout->addLayout(side);
    layout->addWidget(buildPages(), 1);

    connect(m_schemes, &QListWidget::itemChanged, this, [this] { markDirty(); });
    connect(m_qk, &QComboBox::currentIndexChanged, this, [this] {
        updatePages();
        markDirty();
    });
    connect(m_modelChoice, &QComboBox::currentIndexChanged, this, [this](int i) {
        if (i >= 0 && i < modelCount()) {
            const QSignalBlocker blocker(m_layer);
            const int layers = m_models[i].model->config().layers;
            m_layer->setRange(1, layers);
            m_layer->setValue(layers);
        }
        markDirty();
    });
    connect(m_layer, &QSpinBox::valueChanged, this, [this] { markDirty(); });
    connect(m_seed, &QSpinBox::valueChanged, this, [this] { markDirty(); });
    connect(m_maxLength, &QComboBox::currentIndexChanged, this, [this] { markDirty(); });
    connect(m_measure, &QComboBox::currentIndexChanged, this, [this] {
        if (!m_result.series.empty())
            m_plot->setFigure(entropyFigure(m_result, m_panel.head, measure()));
        Q_EMIT pictureUpdated();
    });
    connect(m_plot, &CurvePlot::hovered, this, &ViewBase::hoverText);
}

QVBoxLayout* EntropyView::buildOptions()
{
    auto* form = new QVBoxLayout;
    form->addWidget(new QLabel(tr("q and k"), this));
    m_qk = new QComboBox(this);
    m_qk->addItem(tr("zero (bias alone)"), 0);
    m_qk->addItem(tr("random (seeded Gaussian)"), 1);
    m_qk->addItem(tr("from a trained model"), 2);
    // Without a model the plot offers to train one.
    m_qk->setItemData(2,
                      tr("q and k of a trained model reading held-out text: train one here, in the Train tab, or "
                         "load a checkpoint in Attention on text"),
                      Qt::ToolTipRole);
    form->addWidget(m_qk);
    m_modelChoice = new FittingComboBox(this); // a long file name: its start and end
    m_modelChoice->setVisible(false);
    form->addWidget(m_modelChoice);
    // The model's layer whose q and k are scored (1-based, as in Attention on text); follows the chosen model's
    // depth and starts at its last layer, as `entropy --checkpoint` does.
    m_layer = new QSpinBox(this);
    m_layer->setPrefix(tr("layer "));
    m_layer->setRange(1, 1);
    m_layer->setVisible(false);
    form->addWidget(m_layer);
    form->addWidget(new QLabel(tr("seed"), this));
    m_seed = new QSpinBox(this);
    m_seed->setRange(0, 1 << 30);
    form->addWidget(m_seed);
    form->addWidget(new QLabel(tr("lengths 16 … "), this));
    m_maxLength = new QComboBox(this);
    for (int n = 64; n <= 8192; n *= 2)
        m_maxLength->addItem(QString::number(n), n);
    m_maxLength->setCurrentText(QStringLiteral("2048"));
    form->addWidget(m_maxLength);
    form->addWidget(new QLabel(tr("entropy of"), this));
    m_measure = new QComboBox(this);
    m_measure->addItem(tr("the last query"));
    m_measure->addItem(tr("the mean over queries"));
    form->addWidget(m_measure);
    auto* note = new QLabel(tr("Heads, the shown head, mask, context and logn come from the panel. Rotary "
                               "schemes with q = k = 0 attend uniformly: their curve is log n."),
                            this);
    note->setWordWrap(true);
    note->setMaximumWidth(240);
    form->addWidget(note);
    return form;
}

QStackedWidget* EntropyView::buildPages()
{
    // The plot, or the prompt for a model source without a model.
    m_pages = new QStackedWidget(this);
    m_plot = new CurvePlot(m_pages);
    m_plot->setEmptyHint(tr("Tick schemes on the left: the entropy of each scheme's attention against length appears "
                            "here, one curve per scheme."));
    m_pages->addWidget(m_plot);
    m_prompt = new ModelPrompt(tr("\"q and k from a trained model\" needs a trained model. Train a demo model now, "
                                  "train several in the \"Train\" tab, or load a checkpoint in "
                                  "\"Attention on text\"."),
                               m_pages);
    m_pages->addWidget(m_prompt);
    return m_pages;
}

QStringList EntropyView::schemes() const
{
    return checkedSchemes(m_schemes);
}

void EntropyView::setSchemes(const QStringList& names)
{
    {
        const QSignalBlocker b(m_schemes);
        setCheckedSchemes(m_schemes, names);
    }
    markDirty();
}

void EntropyView::setMaxLength(int length)
{
    m_maxLength->setCurrentText(QString::number(length));
}

void EntropyView::setQk(QkSource qk)
{
    m_qk->setCurrentIndex(qk == QkSource::Random ? 1 : (qk == QkSource::Model ? 2 : 0));
}

void EntropyView::updatePages()
{
    const bool modelSource = m_qk->currentIndex() == 2;
    m_pages->setCurrentWidget(modelSource && m_models.empty() ? static_cast<QWidget*>(m_prompt) : m_plot);
    // The model and layer choices only once there is a model to choose.
    m_modelChoice->setVisible(modelSource && !m_models.empty());
    m_layer->setVisible(modelSource && !m_models.empty());
}

bool EntropyView::isShowingModelPrompt() const
{
    return m_pages->currentWidget() == m_prompt;
}

int EntropyView::modelLayer() const
{
    return m_layer->value();
}

void EntropyView::setModelLayer(int layer)
{
    m_layer->setValue(layer);
}

void EntropyView::addModel(const SharedModel& model, bool select)
{
    m_models.push_back(model);
    m_modelChoice->addItem(model.name);
    if (select)
        m_modelChoice->setCurrentIndex(modelCount() - 1);
    updatePages();
}

EntropyMeasure EntropyView::measure() const
{
    return m_measure->currentIndex() == 0 ? EntropyMeasure::LastRow : EntropyMeasure::MeanOverRows;
}

EntropyRequest EntropyView::request() const
{
    return entropyRequestFor(schemes(), m_panel, m_qk->currentIndex() == 1 ? QkSource::Random : QkSource::Zero,
                             static_cast<uint64_t>(m_seed->value()), m_maxLength->currentData().toInt());
}

void EntropyView::refresh()
{
    if (m_qk->currentIndex() == 2) {
        const int i = m_modelChoice->currentIndex();
        if (i < 0 || i >= modelCount()) {
            // The prompt stands in for the plot: nothing from another source stays behind it to export.
            m_job.cancel();
            m_result = EntropyResult{};
            m_plot->setFigure(CurveFigure{});
            return;
        }
        const SharedModel model = m_models[i];
        const std::vector<int> lengths = defaultEntropyLengths(m_maxLength->currentData().toInt());
        const int layer = m_layer->value() - 1;
        m_job.start([model, lengths, layer](const JobControl& control) {
            return computeModelEntropy(model, lengths, layer, control);
        });
        return;
    }
    if (schemes().isEmpty()) {
        Q_EMIT statusMessage(tr("Entropy: tick at least one scheme"));
        return;
    }
    startFromControls(
        this, m_job, [this] { return request(); }, computeEntropy);
}

bool EntropyView::hasPicture() const
{
    return !m_result.series.empty();
}

void EntropyView::writeData(std::ostream& out, DataFormat format) const
{
    requirePicture();
    Table t;
    t.columns = {"scheme_index", "length", "head", "entropy_last", "entropy_mean"};
    t.meta["schemes"] = nlohmann::json::array();
    t.meta["qk"] =
        m_result.request.qk == QkSource::Zero ? "zero" : (m_result.request.qk == QkSource::Random ? "random" : "model");
    if (m_result.request.qk == QkSource::Random)
        t.meta["seed"] = m_result.request.seed;
    for (size_t s = 0; s < m_result.series.size(); ++s) {
        t.meta["schemes"].push_back(schemeSpecJson(m_result.series[s].spec));
        for (const EntropyPoint& p : m_result.series[s].points)
            t.rows.push_back({double(s), double(p.length), double(p.head), p.entropyLast, p.entropyMean});
    }
    writeTable(out, format, t);
}

nlohmann::json EntropyView::saveState() const
{
    nlohmann::json names = nlohmann::json::array();
    for (const QString& s : schemes())
        names.push_back(s.toStdString());
    return {{"schemes", names},
            {"qk", m_qk->currentIndex() == 1 ? "random" : "zero"},
            {"seed", m_seed->value()},
            {"max_length", m_maxLength->currentData().toInt()},
            {"measure", m_measure->currentIndex() == 0 ? "last" : "mean"}};
}

void EntropyView::restoreState(const nlohmann::json& state)
{
    const std::string where = "views.entropy";
    const QStringList names = sessionSchemeNames(state, "schemes", where);
    const std::string qk = sessionString(state, "qk", "zero", where);
    if (qk != "zero" && qk != "random")
        throw InputError("session: views.entropy.qk = '" + qk + "' is not allowed; allowed: zero, random");
    const int seed = sessionInt(state, "seed", 0, 0, 1 << 30, where);
    const int maxLength = sessionInt(state, "max_length", 2048, 64, 8192, where);
    if (maxLength & (maxLength - 1))
        throw InputError("session: views.entropy.max_length = " + std::to_string(maxLength) +
                         " must be a power of two");
    const std::string measureName = sessionString(state, "measure", "last", where);
    if (measureName != "last" && measureName != "mean")
        throw InputError("session: views.entropy.measure = '" + measureName + "' is not allowed; allowed: last, mean");
    if (!names.isEmpty())
        setSchemes(names);
    m_qk->setCurrentIndex(qk == "random" ? 1 : 0);
    m_seed->setValue(seed);
    setMaxLength(maxLength);
    m_measure->setCurrentIndex(measureName == "last" ? 0 : 1);
}

} // namespace plab::ui
