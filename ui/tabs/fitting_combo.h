// A combo box whose closed box never cuts its text: the item's text when it fits, else its short form, else the text
// elided in the middle (the whole in the tooltip); the open list always shows every item's whole text.
#pragma once

#include <QComboBox>
#include <QString>
#include <QVariant>

namespace plab::ui {

class FittingComboBox : public QComboBox {
    Q_OBJECT
public:
    // Where an item keeps the text its closed box shows when the whole text does not fit.
    static constexpr int kShortTextRole = Qt::UserRole + 100;

    explicit FittingComboBox(QWidget* parent = nullptr);

    using QComboBox::addItem;
    void addItem(const QString& text, const QString& shortText, const QVariant& data = {});
    // What the closed box shows now, at its present width.
    QString displayText() const;

protected:
    void paintEvent(QPaintEvent* event) override;
    bool event(QEvent* event) override; // the tooltip leads with the whole text when the box shows less

private:
    int textRoom() const; // the width the style gives the closed box's text
};

} // namespace plab::ui
