// The fitting combo box: chooses what the closed box shows from the room the style gives its text.
#include "tabs/fitting_combo.h"

#include <QHelpEvent>
#include <QStyleOptionComboBox>
#include <QStylePainter>
#include <QToolTip>

namespace plab::ui {

FittingComboBox::FittingComboBox(QWidget* parent) : QComboBox(parent)
{
    // As wide as the layout allows, not as the longest item: the short forms and the open list cover the rest.
    setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    setMinimumContentsLength(6);
}

void FittingComboBox::addItem(const QString& text, const QString& shortText, const QVariant& data)
{
    QComboBox::addItem(text, data);
    setItemData(count() - 1, shortText, kShortTextRole);
}

int FittingComboBox::textRoom() const
{
    QStyleOptionComboBox option;
    initStyleOption(&option);
    const QRect field = style()->subControlRect(QStyle::CC_ComboBox, &option, QStyle::SC_ComboBoxEditField, this);
    // The style draws the label 1 pixel in from each side of the field, after the icon and its 4-pixel gap.
    return field.width() - 2 - (option.currentIcon.isNull() ? 0 : option.iconSize.width() + 4);
}

QString FittingComboBox::displayText() const
{
    const QString whole = currentText();
    const int room = textRoom();
    if (fontMetrics().horizontalAdvance(whole) <= room)
        return whole;
    const QString shortText = currentData(kShortTextRole).toString();
    if (!shortText.isEmpty() && fontMetrics().horizontalAdvance(shortText) <= room)
        return shortText;
    // A file name longer than the box: its start and its end are what tell models apart.
    return fontMetrics().elidedText(shortText.isEmpty() ? whole : shortText, Qt::ElideMiddle, room);
}

void FittingComboBox::paintEvent(QPaintEvent*)
{
    QStylePainter painter(this);
    painter.setPen(palette().color(QPalette::Text));
    QStyleOptionComboBox option;
    initStyleOption(&option);
    option.currentText = displayText();
    painter.drawComplexControl(QStyle::CC_ComboBox, option);
    painter.drawControl(QStyle::CE_ComboBoxLabel, option);
}

bool FittingComboBox::event(QEvent* event)
{
    if (event->type() == QEvent::ToolTip && displayText() != currentText()) {
        const QString own = toolTip();
        QToolTip::showText(static_cast<QHelpEvent*>(event)->globalPos(),
                           own.isEmpty() ? currentText() : currentText() + QStringLiteral("\n\n") + own, this);
        return true;
    }
    return QComboBox::event(event);
}

} // namespace plab::ui
