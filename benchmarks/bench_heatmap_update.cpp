// Benchmark (not a test): time from a parameter change to the repainted 1024 x 1024 bias heatmap in the real
// BiasView (worker thread compute + colouring + paint), plus the stages alone. Prints medians in ms.
// Run: QT_QPA_PLATFORM=offscreen build/bin/positionlab-bench-heatmap [--length N] [--repeat R]
#include "workers/compute.h"
#include "tabs/heatmap_widget.h"
#include "tabs/bias_view.h"
#include "tabs/view_base.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QImage>
#include <QPainter>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

using namespace plab;
using namespace plab::ui;

namespace {

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : (v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]));
}

double percentile(std::vector<double> v, double p)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[std::min(v.size() - 1, static_cast<size_t>(p * (v.size() - 1) + 0.5))];
}

} // namespace

int main(int argc, char** argv)
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    int length = 1024, repeat = 60;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--length"))
            length = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--repeat"))
            repeat = std::atoi(argv[i + 1]);
    }

    BiasView view;
    view.resize(1100, 1000);
    view.show();
    view.setActive(true);
    auto stateFor = [&](int i) {
        PanelState s;
        // A different r1 every time: a real parameter change, as dragging the slider makes.
        s.spec = makeSchemeSpec("kerple-power", 8, false, {"r1=" + std::to_string(0.5 + 0.01 * (i % 50)), "r2=1.3"});
        s.length = length;
        s.head = 0;
        return s;
    };
    auto waitForPicture = [&] {
        QEventLoop loop;
        QObject::connect(&view, &ViewBase::pictureUpdated, &loop, &QEventLoop::quit);
        QTimer::singleShot(30000, &loop, &QEventLoop::quit);
        loop.exec();
    };

    std::vector<double> total, repaintOnly, compute, colour, paint;
    for (int i = -5; i < repeat; ++i) { // 5 warm-up rounds
        QElapsedTimer timer;
        timer.start();
        view.setPanelState(stateFor(i + 5));
        waitForPicture();
        const qint64 before = timer.nsecsElapsed();
        view.heatmap()->repaint(); // synchronous paint of the widget
        const double ms = timer.nsecsElapsed() / 1e6;
        if (i >= 0) {
            total.push_back(ms);
            repaintOnly.push_back(ms - before / 1e6);
        }
    }
    // The stages alone, for the record.
    for (int i = 0; i < repeat; ++i) {
        BiasRequest request;
        request.spec = stateFor(i).spec;
        request.length = length;
        request.thumbnailSize = 48;
        QElapsedTimer t;
        t.start();
        const BiasResult r = computeBias(request);
        compute.push_back(t.nsecsElapsed() / 1e6);
        t.restart();
        HeatmapPainter heatmap;
        heatmap.setFigure(biasFigure(r, QStringLiteral("auto")));
        colour.push_back(t.nsecsElapsed() / 1e6);
        QImage image(view.heatmap()->size(), QImage::Format_ARGB32_Premultiplied);
        QPainter painter(&image);
        t.restart();
        heatmap.paint(painter, QRectF(image.rect()), PictureStyle::forSize(image.size()));
        paint.push_back(t.nsecsElapsed() / 1e6);
    }
    std::printf("bias heatmap %d x %d, kerple-power r1 change, widget %d x %d, %d repeats\n", length, length,
                view.heatmap()->width(), view.heatmap()->height(), repeat);
    std::printf("  parameter change -> repainted widget: median %.2f ms, p90 %.2f ms, min %.2f ms\n", median(total),
                percentile(total, 0.9), *std::min_element(total.begin(), total.end()));
    std::printf("  of which the widget repaint: median %.2f ms\n", median(repaintOnly));
    std::printf("  stages: core compute (+8 thumbnails) %.2f ms, range + colouring %.2f ms, paint %.2f ms (medians)\n",
                median(compute), median(colour), median(paint));
    return 0;
}
