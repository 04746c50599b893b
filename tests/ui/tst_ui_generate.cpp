// "Continue the text" (offscreen): the page on tiny Hugging Face folders and on a lab model gives the ids of core's
// generate (greedy and sampled, the config's own positions and a method), Cancel stops it with "Canceled after N s.",
// and a method the cache or the model refuses shows core's message beside the other side's continuation.
#include "tabs/continue_text_page.h"
#include "tabs/hf_model_view.h"
#include "tabs/train_view.h"

#include "model_configs.h"
#include "test_main.h"
#include "test_settings.h"

#include "base/errors.h"
#include "hf/hf_model.h"
#include "hf/tokenizer.h"
#include "model/model.h"
#include "runs/generation.h"
#include "runs/language_model.h"

#include <QLabel>
#include <QPushButton>
#include <QtTest>

#include <memory>

using namespace plab;
using namespace plab::ui;

namespace {

QString hfData(const QString& name)
{
    return QStringLiteral(POSITIONLAB_TEST_DATA "/hf/") + name;
}

// A lab rope model (random weights: the mechanics, not the text, are under test).
SharedModel labModel()
{
    return makeSharedModel(QStringLiteral("rope (test)"), std::make_unique<Model>(smallModelConfig("rope", 1)), {});
}

// The page's model: `folder` opened as the tab opens it, or the lab model for "lab".
GenerationModel openModel(const QString& folder)
{
    GenerationModel model;
    if (folder == QLatin1String("lab")) {
        model.lab = labModel();
        return model;
    }
    const HfOpenResult opened = openHfModel(hfData(folder));
    if (opened.error.isEmpty())
        model.folder = opened.model;
    return model;
}

std::unique_ptr<ContinueTextPage> pageFor(const GenerationModel& model)
{
    std::unique_ptr<ContinueTextPage> page;
    if (model.folder) {
        page = std::make_unique<ContinueTextPage>(ContinueTextPage::Source::Folder);
        page->setFolder(model.folder);
    } else {
        page = std::make_unique<ContinueTextPage>(ContinueTextPage::Source::Lab);
        page->addModel(model.lab);
    }
    return page;
}

// Core's generate on the same prompt, side 0 under the model's own positions, side 1 under `method`.
GenerateResult coreGenerate(const GenerationRequest& r, int side)
{
    std::vector<int> prompt;
    if (r.model.folder) {
        prompt = r.model.folder->tokenizer->encode(r.prompt.toStdString()).ids;
    } else {
        for (const char c : r.prompt.toUtf8())
            prompt.push_back(static_cast<uint8_t>(c));
    }
    prompt = repeatedTokens(prompt, r.repeatTo);
    GenerateOptions options;
    options.maxNew = r.maxNew;
    options.temperature = r.temperature;
    options.topK = r.topK;
    options.seed = r.seed;
    const int length = static_cast<int>(prompt.size()) + r.maxNew;
    if (side == 1) {
        options.scaling = r.method.method;
        if (r.model.folder) {
            options.settings = resolvedMethodSettings(HfLanguageModel(*r.model.folder->model), r.method, {length});
        } else {
            options.settings = resolvedMethodSettings(ByteLanguageModel(*r.model.lab.model), r.method, {length});
        }
    }
    if (r.model.folder)
        return generate(*r.model.folder->model, prompt, options);
    return generate(*r.model.lab.model, prompt, options);
}

bool waitDone(const ContinueTextPage& page)
{
    return QTest::qWaitFor([&] { return !page.isBusy(); }, 120000);
}

} // namespace

class TestUiGenerate : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { plab::test::isolateSettings(QStringLiteral("tst_ui_generate")); }

    void sameIdsAsCore_data()
    {
        QTest::addColumn<QString>("folder");
        QTest::addColumn<QString>("method");
        QTest::addColumn<QString>("settings");
        QTest::addColumn<int>("repeatTo");
        QTest::addColumn<double>("temperature");
        QTest::addColumn<int>("topK");
        QTest::newRow("qwen2_text: greedy, own and yarn") << QStringLiteral("qwen2_text") << QStringLiteral("yarn") << QStringLiteral("") << 0 << 0.0 << 0;
        QTest::newRow("qwen2: repeated past its context, pi factor=4") << QStringLiteral("qwen2") << QStringLiteral("pi") << QStringLiteral("factor=4") << 40 << 0.0
                                                                        << 0;
        QTest::newRow("llama_longrope: sampled t=0.8 top-k 5, ntk") << QStringLiteral("llama_longrope") << QStringLiteral("ntk") << QStringLiteral("") << 0 << 0.8
                                                                     << 5;
        QTest::newRow("lab rope model: greedy, own and yarn, past its context") << QStringLiteral("lab") << QStringLiteral("yarn") << QStringLiteral("") << 24 << 0.0
                                                                                 << 0;
    }

    // Both sides' ids and text are core's generate's for the same prompt, options and method.
    void sameIdsAsCore()
    {
        QFETCH(QString, folder);
        QFETCH(QString, method);
        QFETCH(QString, settings);
        QFETCH(int, repeatTo);
        QFETCH(double, temperature);
        QFETCH(int, topK);
        const GenerationModel model = openModel(folder);
        QVERIFY2(model.isValid(), qPrintable(folder));
        auto page = pageFor(model);
        page->setPrompt(QStringLiteral("The cat sat on the mat. The dog"));
        page->setRepeatTo(repeatTo);
        page->setMethod(method, settings);
        page->setMaxNew(6);
        page->setSampling(temperature, topK, 7);
        QVERIFY(page->continueButton()->isEnabled());
        page->start();
        QVERIFY(page->isBusy());
        QVERIFY(waitDone(*page));
        QVERIFY2(page->statusLabel()->text().startsWith(QStringLiteral("Done")), qPrintable(page->statusLabel()->text()));
        const GenerationRequest request = page->request();
        for (int side : {0, 1}) {
            const GenerationSnapshot& s = page->side(side);
            QVERIFY2(s.error.isEmpty(), qPrintable(s.error));
            QVERIFY(s.done);
            const GenerateResult reference = coreGenerate(request, side);
            QCOMPARE(s.ids, reference.ids);
            QCOMPARE(static_cast<int>(s.ids.size()), 6);
            QCOMPARE(s.positions, QString::fromStdString(reference.positions));
            QString text;
            if (model.folder) {
                // The folders' models have 300 ids, their tokenizers 296: an id past them shows as ⟨id⟩.
                try {
                    text = QString::fromStdString(model.folder->tokenizer->decode(s.ids));
                } catch (const InputError&) {
                    QVERIFY2(s.text.contains(QStringLiteral("⟩")), qPrintable(s.text));
                    text = s.text;
                }
            } else {
                QByteArray bytes;
                for (const int id : s.ids)
                    bytes.append(static_cast<char>(id));
                text = QString::fromUtf8(bytes);
            }
            QCOMPARE(s.text, text);
            const QString counted = model.folder ? QStringLiteral("6 new token") : QStringLiteral("6 new byte");
            QVERIFY2(page->sideStatus(side).contains(counted), qPrintable(page->sideStatus(side)));
        }
        if (repeatTo > model.context())
            QVERIFY2(page->promptLengthLabel()->text().contains(QStringLiteral("Past the context")),
                     qPrintable(page->promptLengthLabel()->text()));
    }

    void refusedMethodShowsMessage_data()
    {
        QTest::addColumn<QString>("folder");
        QTest::addColumn<QString>("method");
        QTest::addColumn<QString>("said"); // a word core's message must hold
        QTest::newRow("qwen2: rerope remaps positions") << QStringLiteral("qwen2") << QStringLiteral("rerope") << QStringLiteral("rerope");
        QTest::newRow("qwen2: self-extend remaps positions") << QStringLiteral("qwen2") << QStringLiteral("self-extend") << QStringLiteral("self-extend");
        QTest::newRow("gpt2: learned positions take no method") << QStringLiteral("gpt2") << QStringLiteral("yarn") << QStringLiteral("yarn");
        QTest::newRow("bloom: alibi takes no method") << QStringLiteral("bloom") << QStringLiteral("pi") << QStringLiteral("pi");
    }

    // The method's side shows core's refusal; the model's own side continues as ever.
    void refusedMethodShowsMessage()
    {
        QFETCH(QString, folder);
        QFETCH(QString, method);
        QFETCH(QString, said);
        const GenerationModel model = openModel(folder);
        QVERIFY2(model.isValid(), qPrintable(folder));
        auto page = pageFor(model);
        page->setPrompt(QStringLiteral("The cat sat on the mat.")); // within gpt2's 32 learned positions
        page->setMethod(method);
        page->setMaxNew(3);
        page->start();
        QVERIFY(waitDone(*page));
        QVERIFY2(page->side(0).error.isEmpty(), qPrintable(page->side(0).error));
        QCOMPARE(static_cast<int>(page->side(0).ids.size()), 3);
        const GenerationSnapshot& refused = page->side(1);
        QVERIFY2(!refused.error.isEmpty(), "the method was not refused");
        QVERIFY2(refused.error.contains(said), qPrintable(refused.error));
        QVERIFY(refused.ids.empty());
        QCOMPARE(page->sideStatus(1), refused.error);
    }

    void refusedPromptShowsMessage_data()
    {
        QTest::addColumn<QString>("folder");
        QTest::addColumn<QString>("prompt");
        QTest::addColumn<int>("repeatTo");
        QTest::addColumn<int>("maxNew");
        QTest::addColumn<QString>("said"); // a word the message must hold
        QTest::newRow("qwen2: an empty prompt") << QStringLiteral("qwen2") << QString() << 0 << 4
                                               << QStringLiteral("no tokens");
        QTest::newRow("lab model: an empty prompt") << QStringLiteral("lab") << QString() << 0 << 4
                                                    << QStringLiteral("no tokens");
    }

    // A prompt core refuses: both sides and the status line say why; nothing crashes, Continue is offered again.
    void refusedPromptShowsMessage()
    {
        QFETCH(QString, folder);
        QFETCH(QString, prompt);
        QFETCH(int, repeatTo);
        QFETCH(int, maxNew);
        QFETCH(QString, said);
        const GenerationModel model = openModel(folder);
        QVERIFY2(model.isValid(), qPrintable(folder));
        auto page = pageFor(model);
        page->setPrompt(prompt);
        page->setRepeatTo(repeatTo);
        page->setMaxNew(maxNew);
        page->start();
        QVERIFY(waitDone(*page));
        for (int side : {0, 1}) {
            QVERIFY2(page->side(side).error.contains(said), qPrintable(page->side(side).error));
            QVERIFY(page->side(side).ids.empty());
        }
        QCOMPARE(page->statusLabel()->text(), page->side(0).error);
        QVERIFY(page->continueButton()->isEnabled());
    }

    void cancelStops_data()
    {
        QTest::addColumn<QString>("where");
        QTest::newRow("the page's Cancel") << QStringLiteral("page");
        QTest::newRow("Your model tab's cancelJob (Esc)") << QStringLiteral("tab");
        QTest::newRow("Train tab's cancelJob (Esc), a lab model") << QStringLiteral("train");
    }

    // Clicked while tokens come: "Canceled after N s." at once, the worker stops well before its 65536 tokens, and
    // nothing it still sends changes the line or the text.
    void cancelStops()
    {
        QFETCH(QString, where);
        std::unique_ptr<HfModelView> tab;
        std::unique_ptr<TrainView> train;
        std::unique_ptr<ContinueTextPage> own;
        ContinueTextPage* page = nullptr;
        if (where == QLatin1String("train")) {
            train = std::make_unique<TrainView>();
            train->addModel(labModel());
            page = train->continueTextPage();
        } else {
            const GenerationModel model = openModel(QStringLiteral("qwen2_text"));
            QVERIFY(model.isValid());
            if (where == QLatin1String("tab")) {
                tab = std::make_unique<HfModelView>();
                tab->openFolder(hfData(QStringLiteral("qwen2_text")));
                QTRY_VERIFY_WITH_TIMEOUT(tab->model() != nullptr, 60000);
                page = tab->continueTextPage();
            } else {
                own = pageFor(model);
                page = own.get();
            }
        }
        // Far more tokens than even a fast machine makes before the click (the tiny folders decode ~25000 a second).
        page->setMaxNew(65536);
        page->start();
        QTRY_VERIFY_WITH_TIMEOUT(!page->side(0).ids.empty(), 60000);
        QVERIFY2(page->isBusy(), "the continuation ended before Cancel");
        if (where == QLatin1String("page"))
            page->cancelButton()->click();
        else if (tab)
            tab->cancelJob();
        else
            train->cancelJob();
        const QString said = page->statusLabel()->text();
        QVERIFY2(said.startsWith(QStringLiteral("Canceled after ")), qPrintable(said));
        const std::vector<int> shown = page->side(0).ids;
        QVERIFY(waitDone(*page));
        QTest::qWait(50);
        QCOMPARE(page->statusLabel()->text(), said);
        QCOMPARE(page->side(0).ids, shown);
        QVERIFY(static_cast<int>(shown.size()) < 65536);
        QVERIFY(page->continueButton()->isEnabled());
    }
};

PLAB_QTEST_MAIN(TestUiGenerate)
#include "tst_ui_generate.moc"
