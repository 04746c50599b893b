// The Train tab's "Evaluate under methods": a trained rope/xpos model, a checkable list of length-extension methods
// with their parameters, a background evaluation (progress, cancel) and one perplexity-vs-length chart.
#pragma once

#include "painting/export.h"
#include "workers/job.h"
#include "workers/model_compute.h"

#include <QElapsedTimer>
#include <QStringList>
#include <QWidget>

#include <nlohmann/json.hpp>

class QComboBox;
class QLabel;
class QPushButton;
class QTreeWidget;
class QTreeWidgetItem;

namespace plab::ui {

class CurvePlot;

class MethodsPanel : public QWidget {
    Q_OBJECT
public:
    explicit MethodsPanel(QWidget* parent = nullptr);
    ~MethodsPanel() override;

    // Offers a model (trained here, kept or loaded elsewhere); the same model again replaces its entry. `select`
    // makes it the current one.
    void addModel(const SharedModel& model, bool select = true);
    int modelCount() const { return static_cast<int>(m_models.size()); }
    void selectModel(int index);
    SharedModel currentModel() const;

    // The methods ticked, in catalogue order, each with every parameter as shown (NAME=VALUE).
    std::vector<MethodChoice> checkedMethods() const;
    // Ticks exactly these methods (catalogue names); InputError naming an unknown one.
    void setCheckedMethods(const QStringList& names);
    // Sets a shown parameter's text (as a user types it); false when the method has no such parameter.
    bool setParameterText(const QString& method, const QString& name, const QString& text);
    // The defaults of the current model (core's methodDefaultSettings; without a model, the catalogue's) in every
    // parameter.
    void resetParameters();

    // Session state: the ticked methods and every method's parameters as shown (but those core refuses),
    // {"checked": ["none", "yarn"], "settings": {"yarn": ["factor=8", ...], ...}}.
    nlohmann::json sessionState() const;
    // A session's state, read and checked without changing anything: an unknown method, a parameter a method does
    // not take or a value out of its range (core's checkMethodChoice) throws InputError naming `where`'s key.
    struct SessionState {
        QStringList checked;                // catalogue names
        std::vector<MethodChoice> settings; // per method: its NAME=VALUE settings
    };
    // Missing keys give the defaults: every method ticked, the model's default values.
    static SessionState readSessionState(const nlohmann::json& state, const std::string& where);
    // Ticks and fills in the state. Restored values win over the model's defaults: a session is applied after the
    // kept models are offered, and when no model is there yet (the session's own checkpoints load after it), the
    // first model offered keeps them too. Choosing another model later resets to its defaults, as always.
    void applySessionState(const SessionState& state);

    // Evaluation settings the Train tab's fields give (bytes per length, mode, corpus).
    void setEvaluation(size_t evalBytes, EvalMode mode, const QString& corpusPath);
    MethodsRequest request() const;
    void start(const MethodsRequest& request);
    void evaluate() { start(request()); }
    void cancel();
    bool isBusy() const { return m_job.isRunning(); }

    // Why "Evaluate under methods" is disabled (empty when it is enabled).
    QString disabledReason() const;
    QPushButton* evaluateButton() const { return m_evaluate; }
    QPushButton* cancelButton() const { return m_cancel; }
    QLabel* statusLabel() const { return m_status; }
    QTreeWidget* methodTree() const { return m_tree; }
    CurvePlot* plot() const { return m_plot; }
    const MethodsResult& result() const { return m_result; }

    bool hasPicture() const { return !m_result.curves.empty(); }
    void paintPicture(QPainter& painter, const QRectF& target, const PictureStyle& style) const;
    void writeData(std::ostream& out, DataFormat format) const;
    void setDark(bool dark);

Q_SIGNALS:
    void progress(int done, int total);
    void busyChanged(bool busy);
    void hoverText(const QString& text);
    void statusMessage(const QString& text);
    void pictureUpdated();

private:
    void buildMethodTree(QWidget* side); // m_tree: the methods and their parameters
    // The buttons for the current model; the status line shows the reason it is disabled, or (`resetStatus`) what
    // the page does.
    void updateAvailability(bool resetStatus = true);
    void onResult(MethodsResult result);
    // A model was chosen: its defaults, or the values a session restored before any model was there.
    void showModelDefaults();
    // Every method (ticked or not) with every parameter as shown.
    std::vector<MethodChoice> shownMethods() const;
    void setSettings(const std::vector<MethodChoice>& settings);
    std::vector<MethodChoice> m_pendingSettings; // restored while no model was there
    QComboBox* m_model = nullptr;
    QTreeWidget* m_tree = nullptr;
    QPushButton* m_evaluate = nullptr;
    QPushButton* m_cancel = nullptr;
    QPushButton* m_defaults = nullptr;
    QLabel* m_status = nullptr;
    CurvePlot* m_plot = nullptr;
    std::vector<SharedModel> m_models;
    size_t m_evalBytes = 16384;
    EvalMode m_mode = EvalMode::NonOverlapping;
    QString m_corpus;
    MethodsResult m_result;
    bool m_delivered = true; // the last job's result (or error) was shown
    QElapsedTimer m_clock;   // since the evaluation started: the time a Cancel reports
    LatestJob<MethodsResult> m_job;
};

} // namespace plab::ui
