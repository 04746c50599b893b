// A splitter that lays its two parts side by side when it is wide enough for both, else one above the other.
#pragma once

#include <QSplitter>

namespace plab::ui {

// Side by side from `sideBySideWidth` pixels up, stacked below it. On each change of direction the first part gets its
// size hint along the new direction (at most `firstShareMax` of the room) and the rest goes to the second part, the
// picture. Laptop screens with both docks open leave a tab too little width for a grid or a list beside a chart.
class AdaptiveSplitter : public QSplitter {
    Q_OBJECT
public:
    AdaptiveSplitter(int sideBySideWidth, double firstShareMax, QWidget* parent = nullptr);

Q_SIGNALS:
    void orientationChanged(Qt::Orientation orientation);

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    void shareRoom(int room);

    int m_sideBySideWidth;
    double m_firstShareMax;
    bool m_sized = false;
};

} // namespace plab::ui
