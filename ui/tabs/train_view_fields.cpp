// The Train tab's fields: the preset, the task, the model's sizes and options, the run's and DroPE's settings.
#include "tabs/train_view.h"

#include "tabs/layer_type_fields.h"
#include "workers/model_compute.h"

#include "model/model_config.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSpinBox>

#include <algorithm>

namespace plab::ui {

QFormLayout* TrainView::buildFields()
{
    auto* form = new QFormLayout;
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    addPresetRows(form);
    addSizeRows(form);
    addModelOptionRows(form);
    addRunRows(form);
    addDropeRows(form);
    return form;
}

QSpinBox* TrainView::addIntField(QFormLayout* form, const QString& label, const QString& tip, int lo, int hi, int step)
{
    auto* box = new QSpinBox(this);
    box->setRange(lo, hi);
    box->setSingleStep(step);
    box->setToolTip(tip);
    form->addRow(label, box);
    connect(box, &QSpinBox::valueChanged, this, &TrainView::onFieldEdited);
    return box;
}

QDoubleSpinBox* TrainView::addNumberField(QFormLayout* form, const QString& label, const QString& tip, double lo,
                                          double hi, double value, int decimals, double step)
{
    auto* box = new QDoubleSpinBox(this);
    box->setDecimals(decimals);
    box->setRange(lo, hi);
    box->setSingleStep(step);
    box->setValue(value);
    box->setToolTip(tip);
    form->addRow(label, box);
    connect(box, &QDoubleSpinBox::valueChanged, this, &TrainView::onFieldEdited);
    return box;
}

void TrainView::addPresetRows(QFormLayout* form)
{
    // Every preset of core's table, the demo first; "custom" once a field is edited by hand.
    m_preset = new QComboBox(this);
    std::vector<const Preset*> rows;
    for (const Preset& p : presets())
        (p.name == kDemoPreset ? rows.insert(rows.begin(), &p) : rows.insert(rows.end(), &p));
    for (const Preset* p : rows) {
        m_preset->addItem(QString::fromStdString(p->name), QString::fromStdString(p->name));
        m_preset->setItemData(m_preset->count() - 1, QString::fromStdString(p->summary), Qt::ToolTipRole);
    }
    m_preset->addItem(tr("custom"), QString::fromLatin1(kCustomPreset));
    m_preset->setItemData(m_preset->count() - 1, tr("Values edited by hand; choose a preset to restore its values"),
                          Qt::ToolTipRole);
    form->addRow(tr("Preset"), m_preset);
    m_task = new QComboBox(this);
    m_task->setObjectName(QStringLiteral("task"));
    m_task->addItem(tr("text perplexity"), QString::fromLatin1(kTextTask));
    m_task->setItemData(0, tr("Train on the corpus, score perplexity against length"), Qt::ToolTipRole);
    for (const TaskInfo& t : taskTable()) {
        m_task->addItem(QString::fromStdString(t.name), QString::fromStdString(t.name));
        m_task->setItemData(m_task->count() - 1, QString::fromStdString(t.summary), Qt::ToolTipRole);
    }
    m_task->setToolTip(tr("What the schemes learn: text (perplexity) or a task scored by exact-match accuracy at "
                          "lengths L to 4L"));
    form->addRow(tr("Task"), m_task);
    m_taskLength = new QSpinBox(this);
    m_taskLength->setObjectName(QStringLiteral("task_length"));
    m_taskLength->setRange(1, 1);
    m_taskLength->setToolTip(tr("Training examples have lengths 1..L (at most what the context holds); scored at L to "
                                "4L"));
    form->addRow(tr("Task length L"), m_taskLength);
}

void TrainView::addSizeRows(QFormLayout* form)
{
    m_steps = addIntField(form, tr("Steps"), tr("Optimiser steps per scheme"), 1, 1000000, 50);
    m_lr = new QDoubleSpinBox(this);
    m_lr->setDecimals(5);
    m_lr->setRange(0.00001, 10);
    m_lr->setSingleStep(0.0005);
    m_lr->setToolTip(tr("Peak learning rate after the warm-up (cosine decay afterwards)"));
    form->addRow(tr("Learning rate"), m_lr);
    connect(m_lr, &QDoubleSpinBox::valueChanged, this, &TrainView::onFieldEdited);
    m_context = addIntField(form, tr("Context L"),
                            tr("Training context in bytes; evaluation runs at %1").arg(evaluationLengthsText()), 2,
                            8192, 16);
    m_layers = addIntField(form, tr("Layers"), tr("Transformer layers"), 1, 64);
    m_dModel = addIntField(form, tr("d_model"), tr("Width of the model (a multiple of the heads)"), 2, 4096, 16);
    m_heads = addIntField(form, tr("Heads"), tr("Attention heads (d_model must divide by them)"), 1, 256);
    m_dFf = addIntField(form, tr("d_ff"), tr("Width of each MLP's hidden layer"), 1, 16384, 64);
}

void TrainView::addModelOptionRows(QFormLayout* form)
{
    // The model options `train` has beyond the sizes; their defaults and ranges are core's (AttentionTemperature,
    // validateModelConfig), which also refuses a combination at Train with a message naming the field.
    m_nopeEvery = addIntField(form, tr("NoPE every"),
                              tr("K ≥ 2: layers K, 2K, 3K, … (counted from 1) use no positional encoding and the "
                                 "others the ticked rotary scheme, as SmolLM3 and Llama 4 do; off: every layer uses it"),
                              1, 64);
    m_nopeEvery->setSpecialValueText(tr("off"));
    m_nopeEvery->setObjectName(QStringLiteral("nope_every"));
    m_scheduleNote = new QLabel(this);
    m_scheduleNote->setObjectName(QStringLiteral("schedule_note"));
    m_scheduleNote->setWordWrap(true);
    form->addRow(m_scheduleNote);
    const AttentionTemperature temperature;
    m_temperature = new QCheckBox(tr("Llama 4 temperature on NoPE layers"), this);
    m_temperature->setObjectName(QStringLiteral("attn_temperature_tuning"));
    m_temperature->setToolTip(tr("attn_temperature_tuning: the query at position p times 1 + β·ln(1 + ⌊(p + 1)/F⌋) "
                                 "on the NoPE layers only"));
    form->addRow(m_temperature);
    m_floorScale = addNumberField(form, tr("floor_scale F"),
                                  tr("The temperature grows one step every F positions; Llama 4's 8192 never acts at "
                                     "the lab's short contexts: set F near L to see it"),
                                  AttentionTemperature::kMinFloorScale, AttentionTemperature::kMaxFloorScale,
                                  temperature.floorScale, 0, 1024);
    m_floorScale->setObjectName(QStringLiteral("floor_scale"));
    m_attnScale = addNumberField(form, tr("attn_scale β"), tr("The size of each step of the temperature"),
                                 AttentionTemperature::kMinAttnScale, AttentionTemperature::kMaxAttnScale,
                                 temperature.attnScale, 3, 0.05);
    m_attnScale->setObjectName(QStringLiteral("attn_scale"));
    // The softmax-side modifiers combine with every ticked scheme (and with the schedule).
    m_ssmax = new QCheckBox(tr("SSMax"), this);
    m_ssmax->setObjectName(QStringLiteral("ssmax"));
    m_ssmax->setToolTip(tr("Scalable softmax: row m's scores times s_h·ln n, n the keys it sees, s learned per head "
                           "(from 1/ln L)"));
    m_sinkLogit = new QCheckBox(tr("sink logit"), this);
    m_sinkLogit->setObjectName(QStringLiteral("sink_logit"));
    m_sinkLogit->setToolTip(tr("A learned logit per head as one more softmax column, dropped after the softmax "
                               "(gpt-oss)"));
    auto* modifiers = new QHBoxLayout;
    modifiers->addWidget(m_ssmax);
    modifiers->addWidget(m_sinkLogit);
    modifiers->addStretch(1);
    form->addRow(tr("Softmax"), modifiers);
    m_layerTypeFields = new LayerTypeFields(this);
    m_layerTypeFields->addRows(form);
    connect(m_layerTypeFields, &LayerTypeFields::edited, this, &TrainView::onFieldEdited);
    for (QCheckBox* box : {m_temperature, m_ssmax, m_sinkLogit})
        connect(box, &QCheckBox::toggled, this, &TrainView::onFieldEdited);
    connect(m_nopeEvery, &QSpinBox::valueChanged, this, &TrainView::updateModelOptions);
    connect(m_layers, &QSpinBox::valueChanged, this, &TrainView::updateModelOptions);
    connect(m_temperature, &QCheckBox::toggled, this, &TrainView::updateModelOptions);
}

void TrainView::addRunRows(QFormLayout* form)
{
    m_batch = addIntField(form, tr("Batch"), tr("Sequences of L bytes per step"), 1, 65536);
    m_evalBytes =
        addIntField(form, tr("Eval bytes"), tr("Held-out bytes scored per length (the last 10% of the corpus); 0: all"),
                    0, 1 << 24, 4096);
    m_evalBytes->setSpecialValueText(tr("all"));
    // Not part of a preset: more seeds repeat the same run, so changing them keeps the preset.
    m_seeds = new QSpinBox(this);
    m_seeds->setRange(1, kMaxTrainSeeds);
    m_seeds->setToolTip(tr("Runs per scheme with seeds 1, 2, …: with more than one, each scheme shows its mean "
                           "curve with a ± sd band and the table mean ± sd"));
    form->addRow(tr("Seeds"), m_seeds);
    connect(m_seeds, &QSpinBox::valueChanged, this, &TrainView::previewTable);
    m_mode = new QComboBox(this);
    m_mode->addItem(tr("non-overlapping"), QString::fromLatin1(evalModeName(EvalMode::NonOverlapping)));
    m_mode->addItem(tr("sliding window"), QString::fromLatin1(evalModeName(EvalMode::Sliding)));
    form->addRow(tr("Evaluation"), m_mode);
}

void TrainView::addDropeRows(QFormLayout* form)
{
    m_fraction = new QDoubleSpinBox(this);
    m_fraction->setObjectName(QStringLiteral("recalibration_percent"));
    m_fraction->setDecimals(1);
    m_fraction->setRange(0.5, 100);
    m_fraction->setSingleStep(2.5);
    m_fraction->setSuffix(QStringLiteral(" %"));
    m_fraction->setValue(12.5);
    m_fraction->setToolTip(tr("DroPE's recalibration: steps after dropping the positions, as a share of the rope "
                              "run's (the paper uses 0.5-12.5%)"));
    form->addRow(tr("Recalibration"), m_fraction);
    m_logitC = new QDoubleSpinBox(this);
    m_logitC->setObjectName(QStringLiteral("logit_c"));
    m_logitC->setDecimals(2);
    m_logitC->setRange(0, 100);
    m_logitC->setSingleStep(0.05);
    m_logitC->setValue(DropeRecipe{}.logitC);
    m_logitC->setToolTip(tr("DroPE is scored with its logits times 1 + c·ln(n/L) past L; 0: unscaled"));
    form->addRow(tr("DroPE logit-c"), m_logitC);
}

void TrainView::setPreset(const QString& name)
{
    const TrainRequest r = presetTrainRequest(name.toStdString()); // InputError naming the allowed presets
    m_applyingPreset = true;
    m_preset->setCurrentIndex(m_preset->findData(name));
    m_steps->setValue(r.train.steps);
    m_lr->setValue(r.train.learningRate);
    m_context->setValue(r.model.context);
    m_layers->setValue(r.model.layers);
    m_dModel->setValue(r.model.dModel);
    m_heads->setValue(r.model.heads);
    m_dFf->setValue(r.model.dFf);
    m_batch->setValue(r.train.batch);
    m_evalBytes->setValue(static_cast<int>(std::min<size_t>(r.evalBytes, m_evalBytes->maximum())));
    // A preset is a plain model: no schedule, no temperature, no softmax modifier.
    m_nopeEvery->setValue(std::max(r.model.nopeEvery, m_nopeEvery->minimum()));
    m_temperature->setChecked(r.model.temperature.tuning);
    m_floorScale->setValue(r.model.temperature.floorScale);
    m_attnScale->setValue(r.model.temperature.attnScale);
    m_ssmax->setChecked(r.model.ssmax);
    m_sinkLogit->setChecked(r.model.sinkLogit);
    m_layerTypeFields->setFrom(r.model);
    m_applyingPreset = false;
    updateModelOptions();
    m_basePreset = name;
    previewTable();
}

void TrainView::onFieldEdited()
{
    if (m_applyingPreset)
        return;
    {
        const QSignalBlocker blocker(m_preset);
        m_preset->setCurrentIndex(m_preset->findData(QString::fromLatin1(kCustomPreset)));
    }
    previewTable();
}

void TrainView::updateModelOptions()
{
    m_floorScale->setEnabled(m_temperature->isChecked());
    m_attnScale->setEnabled(m_temperature->isChecked());
    const int every = m_nopeEvery->value() == m_nopeEvery->minimum() ? 0 : m_nopeEvery->value();
    if (every == 0) {
        m_scheduleNote->setText(m_temperature->isChecked()
                                    ? tr("The temperature acts on NoPE layers only: set NoPE every, or tick none.")
                                    : tr("Every layer uses the ticked scheme."));
        return;
    }
    // Which layers core's schedule leaves without positions (modelLayerUsesScheme: the one home of the rule).
    ModelConfig config;
    config.scheme = "rope";
    config.layers = m_layers->value();
    config.nopeEvery = every;
    QStringList nope;
    for (int layer = 0; layer < config.layers; ++layer)
        if (!modelLayerUsesScheme(config, layer))
            nope << QString::number(layer + 1);
    m_scheduleNote->setText(
        nope.isEmpty()
            ? tr("<b>The model has %1 layer(s), fewer than K = %2: no layer would be NoPE, so the schedule does "
                 "nothing.</b> Raise Layers or lower K.")
                  .arg(config.layers)
                  .arg(every)
            : tr("NoPE layers: %1 of %2 (counted from 1); rope or xpos on the others.")
                  .arg(nope.join(QStringLiteral(", ")))
                  .arg(config.layers));
}

} // namespace plab::ui
