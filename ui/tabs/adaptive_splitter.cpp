// A splitter that turns from side by side to stacked when its width falls below a threshold.
#include "tabs/adaptive_splitter.h"

#include <QResizeEvent>

#include <algorithm>

namespace plab::ui {

AdaptiveSplitter::AdaptiveSplitter(int sideBySideWidth, double firstShareMax, QWidget* parent)
    : QSplitter(Qt::Horizontal, parent), m_sideBySideWidth(sideBySideWidth), m_firstShareMax(firstShareMax)
{
    setChildrenCollapsible(false);
}

void AdaptiveSplitter::resizeEvent(QResizeEvent* event)
{
    const Qt::Orientation wanted = event->size().width() >= m_sideBySideWidth ? Qt::Horizontal : Qt::Vertical;
    const bool turned = wanted != orientation();
    if (turned)
        setOrientation(wanted);
    QSplitter::resizeEvent(event);
    if (turned || !m_sized) {
        m_sized = true;
        if (turned)
            Q_EMIT orientationChanged(wanted); // before sharing: the parts' hints may follow the direction
        shareRoom(wanted == Qt::Horizontal ? event->size().width() : event->size().height());
    }
}

void AdaptiveSplitter::shareRoom(int room)
{
    if (count() < 2)
        return;
    const QSize hint = widget(0)->sizeHint();
    const int wanted = orientation() == Qt::Horizontal ? hint.width() : hint.height();
    const int first = std::min(wanted, static_cast<int>(room * m_firstShareMax));
    setSizes({first, std::max(room - first - handleWidth(), 1)});
}

} // namespace plab::ui
