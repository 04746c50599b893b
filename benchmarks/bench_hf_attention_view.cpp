// Benchmark (not a test): the Your model tab's attention at T tokens: the capture, the first map, a repaint, a zoom and
// a pan of the real HfModelView, in ms (QElapsedTimer, the GUI thread's view of each step).
// Run: QT_QPA_PLATFORM=offscreen build/bin/positionlab-bench-hfview tests/data/hf/qwen2_text [--length 8192]
//      [--png DIR --lang en|zh_CN]   (also grabs the tab at each step: zoomed out, zoomed in, panned)
#include "settings/i18n.h"
#include "tabs/hf_model_view.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QTimer>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstring>
#include <functional>

using namespace plab;
using namespace plab::ui;

namespace {

// Runs the event loop until `done` holds (or `timeout` ms pass); the ms it took.
double waitUntil(const std::function<bool()>& done, int timeout = 60000)
{
    QElapsedTimer timer;
    timer.start();
    while (!done() && timer.elapsed() < timeout)
        QCoreApplication::processEvents(QEventLoop::AllEvents, 5);
    return timer.nsecsElapsed() / 1e6;
}

double timed(const std::function<void()>& step)
{
    QElapsedTimer timer;
    timer.start();
    step();
    return timer.nsecsElapsed() / 1e6;
}

// Milliseconds of a zoom and a pan of the attention map, each to the repainted widget, to its detail, and a repaint.
struct ZoomPanTimes {
    double zoom = 0, zoomDetail = 0, zoomRepaint = 0, pan = 0, panDetail = 0, panRepaint = 0;
    bool panFetched = false; // the pan needed a new detail map
};

// A zoom to a sixteenth of each side about the diagonal's middle, then a pan by a quarter of the window.
template <typename Grab>
ZoomPanTimes zoomAndPan(HfModelView& view, const Grab& grab)
{
    TokenMapWidget* map = view.heatmap();
    ZoomPanTimes t;
    t.zoom = timed([&] {
        map->zoomTokens(16);
        map->repaint();
    });
    // The finer map follows once the zooming pauses (a 60 ms timer), then computes.
    t.zoomDetail = waitUntil([&] { return view.detail().map && !view.isBusy(); });
    t.zoomRepaint = timed([&] { map->repaint(); });
    grab(view, "attention-zoomed");
    const QRectF w = map->tokenWindow();
    t.pan = timed([&] {
        map->setTokenWindow(w.translated(w.width() / 4, w.height() / 4));
        map->repaint();
    });
    const HfAttentionMap* before = view.detail().map.get();
    t.panDetail = waitUntil([&] { return view.detail().map.get() != before && !view.isBusy(); }, 1000);
    t.panFetched = view.detail().map.get() != before;
    t.panRepaint = timed([&] { map->repaint(); });
    grab(view, "attention-panned");
    return t;
}

} // namespace

int main(int argc, char** argv)
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s MODEL_FOLDER [--length T]\n", argv[0]);
        return 2;
    }
    int length = 8192;
    QString png, lang = QStringLiteral("en");
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--length"))
            length = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--png"))
            png = QString::fromLocal8Bit(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--lang"))
            lang = QString::fromLocal8Bit(argv[i + 1]);
    }
    setLanguage(lang);
    auto grab = [&](QWidget& w, const char* name) {
        if (!png.isEmpty())
            w.grab().save(QStringLiteral("%1/%2-%3.png").arg(png, QString::fromLatin1(name), lang));
    };

    HfModelView view;
    view.resize(1280, 860);
    view.show();
    view.setPanelState(PanelState{}); // the tab reads no scheme panel, but computes only once it has one
    view.setActive(true);
    const double open = timed([&] { view.openFolder(QString::fromLocal8Bit(argv[1])); }) +
                        waitUntil([&] { return view.model() != nullptr; });
    view.restoreState({{"repeat_to", length}});
    QElapsedTimer timer;
    timer.start();
    waitUntil([&] { return view.attention().capture && view.hasPicture() && !view.isBusy(); });
    const double capture = timer.nsecsElapsed() / 1e6;
    if (!view.attention().capture) {
        std::fprintf(stderr, "no attention within a minute: %s\n", qPrintable(view.attention().error));
        return 1;
    }
    TokenMapWidget* map = view.heatmap();
    const double paint = timed([&] { map->repaint(); });
    grab(view, "attention-all");
    const double repaint = timed([&] { map->repaint(); });
    const ZoomPanTimes zp = zoomAndPan(view, grab);
    // Close enough for tokens on the axes: 40 tokens across.
    map->setTokenWindow(QRectF(map->tokenWindow().center() - QPointF(20, 20), QSizeF(40, 40)));
    QElapsedTimer settle;
    settle.start();
    waitUntil([&] { return settle.elapsed() > 300 && !view.isBusy(); }); // the detail timer and job
    grab(view, "attention-tokens");
    for (const auto& [page, name] :
         {std::pair{HfModelView::SinksPage, "sinks"}, {HfModelView::EntropyPage, "entropy"}}) {
        view.setPage(page);
        settle.restart();
        waitUntil([&] { return settle.elapsed() > 300; });
        grab(view, name);
    }
    // A head's overview alone (what a click on another head costs before its picture appears), and a thumbnail row.
    HfMapRequest overview = view.map().request;
    overview.head = (overview.head + 1) % view.attention().capture->heads;
    const double overviewMs = timed([&] { computeHfMap(overview); });
    std::printf("%s, %d tokens, map widget %d x %d\n", argv[1], view.attention().capture->length, map->width(),
                map->height());
    std::printf("  open %.1f ms; text -> capture, grid and first map shown %.1f ms\n", open, capture);
    std::printf("  first paint %.1f ms, repaint %.1f ms; another head's overview (1024 blocks, max) %.1f ms\n", paint,
                repaint, overviewMs);
    std::printf("  zoom x16: %.1f ms to the repainted widget, then %.1f ms until the detail, repaint %.1f ms\n",
                zp.zoom, zp.zoomDetail, zp.zoomRepaint);
    std::printf(
        "  pan by 1/4: %.1f ms to the repainted widget, then %.1f ms until a new detail (%s), repaint %.1f ms\n",
        zp.pan, zp.panDetail, zp.panFetched ? "fetched" : "none needed: the margin held it", zp.panRepaint);
    return 0;
}
