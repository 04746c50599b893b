// The translations: every message of translations/positionlab_*.ts translated with the same %N placeholders, the
// .ts current with the sources (lupdate), core's scheme texts matched by ui's table, the window rebuilt in another
// language, and positionlab-cli drawing its pictures in Chinese.
#include "lessons/lessons.h"
#include "cli_runner.h"
#include "workers/compute.h"
#include "settings/i18n.h"
#include "window/main_window.h"
#include "workers/model_compute.h"
#include "base/errors.h"
#include "tabs/scheme_panel.h"
#include "tabs/view_base.h"
#include "test_main.h"
#include "test_settings.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QMenuBar>
#include <QProcess>
#include <QRegularExpression>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QXmlStreamReader>
#include <QtTest>

#include <set>

namespace {

using plab::test::CliResult;
using plab::test::runCli;

struct TsMessage {
    QString context;
    QString source;
    QString type;             // the translation's type attribute: "", "unfinished", "vanished", "obsolete"
    QStringList translations; // one, or one per numerus form
    bool numerus = false;
};

QList<TsMessage> readTs(const QString& path, QString* error)
{
    QList<TsMessage> out;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        *error = path + QStringLiteral(": ") + file.errorString();
        return out;
    }
    QXmlStreamReader xml(&file);
    QString context;
    TsMessage message;
    while (!xml.atEnd()) {
        xml.readNext();
        if (!xml.isStartElement())
            continue;
        const auto name = xml.name();
        if (name == QLatin1String("name")) {
            context = xml.readElementText();
        } else if (name == QLatin1String("message")) {
            message = {};
            message.context = context;
            message.numerus = xml.attributes().value(QLatin1String("numerus")) == QLatin1String("yes");
        } else if (name == QLatin1String("source")) {
            message.source = xml.readElementText();
        } else if (name == QLatin1String("translation")) {
            message.type = xml.attributes().value(QLatin1String("type")).toString();
            if (message.numerus) {
                while (xml.readNextStartElement())
                    message.translations << xml.readElementText();
            } else {
                message.translations << xml.readElementText();
            }
            out << message;
        }
    }
    if (xml.hasError())
        *error = path + QStringLiteral(": ") + xml.errorString();
    return out;
}

// The placeholders of a message, sorted, with repeats: "%1", "%2", "%n" (Qt's arg() and plural markers).
QStringList placeholders(const QString& text)
{
    static const QRegularExpression re(QStringLiteral("%(\\d{1,2}|n)"));
    QStringList found;
    for (auto it = re.globalMatch(text); it.hasNext();)
        found << it.next().captured(0);
    found.sort();
    return found;
}

QStringList tsFiles()
{
    QStringList files;
    for (const QString& f : QStringLiteral(POSITIONLAB_TS_FILES).split(QLatin1Char('|'), Qt::SkipEmptyParts))
        files << f;
    return files;
}

bool hasChinese(const QString& text)
{
    for (const QChar c : text)
        if (c.unicode() >= 0x4e00 && c.unicode() <= 0x9fff)
            return true;
    return false;
}

} // namespace

class TestTranslations : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { plab::test::isolateSettings(QStringLiteral("tst_translations")); }
    void cleanup() { plab::ui::setLanguage(QStringLiteral("en")); }

    void messageTranslated_data();
    void messageTranslated();
    void tsIsCurrent_data();
    void tsIsCurrent();
    void schemeTextsMatchCore();
    void languagesAgree();
    void figuresFollowLanguage();
    void modelRefusalsFollowLanguage_data();
    void modelRefusalsFollowLanguage();
    void windowRebuiltInLanguage();
    void cliRendersChinese_data();
    void cliRendersChinese();
    void guiHelpInLanguage_data();
    void guiHelpInLanguage();
};

// One row per message of every .ts: translated (no "unfinished", "vanished" or "obsolete" left), with exactly the
// source's %N placeholders in every form.
void TestTranslations::messageTranslated_data()
{
    QTest::addColumn<QString>("context");
    QTest::addColumn<QString>("source");
    QTest::addColumn<QString>("type");
    QTest::addColumn<QStringList>("translations");
    QTest::addColumn<bool>("numerus");
    const QStringList files = tsFiles();
    QVERIFY2(!files.isEmpty(), "no .ts file configured");
    for (const QString& path : files) {
        QString error;
        const QList<TsMessage> messages = readTs(path, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QVERIFY2(!messages.isEmpty(), qPrintable(path + QStringLiteral(" holds no message")));
        int i = 0;
        for (const TsMessage& m : messages) {
            const QString row = QStringLiteral("%1 %2 #%3 %4")
                                    .arg(QFileInfo(path).baseName(), m.context)
                                    .arg(++i)
                                    .arg(m.source.left(40).replace(QLatin1Char('\n'), QLatin1Char(' ')));
            QTest::newRow(qPrintable(row)) << m.context << m.source << m.type << m.translations << m.numerus;
        }
    }
}

void TestTranslations::messageTranslated()
{
    QFETCH(QString, source);
    QFETCH(QString, type);
    QFETCH(QStringList, translations);
    QFETCH(bool, numerus);
    QVERIFY2(type.isEmpty(),
             qPrintable(QStringLiteral("translation type=\"%1\" (translate it, or refresh the .ts)").arg(type)));
    QVERIFY(!translations.isEmpty());
    QStringList expected = placeholders(source);
    if (numerus)
        expected.removeAll(QStringLiteral("%n")); // a plural form may leave the count out
    for (const QString& t : translations) {
        QVERIFY2(!t.trimmed().isEmpty(), "empty translation");
        QStringList got = placeholders(t);
        if (numerus)
            got.removeAll(QStringLiteral("%n"));
        QVERIFY2(got == expected, qPrintable(QStringLiteral("placeholders %1 in \"%2\", the source has %3")
                                                 .arg(got.join(QLatin1Char(',')), t, expected.join(QLatin1Char(',')))));
    }
}

// The .ts holds exactly the messages the sources have: lupdate on the same sources into a fresh .ts must find the
// same (context, source) pairs. Refresh with `cmake --build build --target update_translations`.
void TestTranslations::tsIsCurrent_data()
{
    QTest::addColumn<QString>("path");
    for (const QString& path : tsFiles())
        QTest::newRow(qPrintable(QFileInfo(path).fileName())) << path;
}

void TestTranslations::tsIsCurrent()
{
    QFETCH(QString, path);
    const QString lupdate = QStringLiteral(POSITIONLAB_LUPDATE);
    if (lupdate.isEmpty() || !QFileInfo(lupdate).isExecutable())
        QSKIP("lupdate was not found at configure time (install qt6-l10n-tools): cannot check that the .ts is current");
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString fresh = dir.filePath(QStringLiteral("fresh.ts"));
    QStringList args{QStringLiteral("-silent"), QStringLiteral("-locations"), QStringLiteral("none")};
    args << QStringLiteral(POSITIONLAB_TR_SOURCES); // the folder qt_add_translations scans (ui/CMakeLists.txt)
    args << QStringLiteral("-ts") << fresh;
    QProcess p;
    p.start(lupdate, args);
    QVERIFY2(p.waitForFinished(120000), "lupdate did not finish");
    QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0, p.readAllStandardError().constData());
    QString error;
    const QList<TsMessage> now = readTs(fresh, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    const QList<TsMessage> stored = readTs(path, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    std::set<std::pair<QString, QString>> want, have;
    for (const TsMessage& m : now)
        want.insert({m.context, m.source});
    for (const TsMessage& m : stored)
        have.insert({m.context, m.source});
    QStringList missing, extra;
    for (const auto& m : want)
        if (!have.count(m))
            missing << m.first + QStringLiteral(": ") + m.second;
    for (const auto& m : have)
        if (!want.count(m))
            extra << m.first + QStringLiteral(": ") + m.second;
    QVERIFY2(missing.isEmpty() && extra.isEmpty(),
             qPrintable(QStringLiteral("%1 is not current; run `cmake --build build --target update_translations` and "
                                       "translate.\nnot in the .ts: %2\nno longer in the sources: %3")
                            .arg(QFileInfo(path).fileName(), missing.join(QStringLiteral(" | ")),
                                 extra.join(QStringLiteral(" | ")))));
}

// ui's table of core's catalogue texts (ui/i18n.cpp) matches core word for word, so every text gets translated.
void TestTranslations::schemeTextsMatchCore()
{
    const QStringList stale = plab::ui::staleSchemeTexts();
    QVERIFY2(stale.isEmpty(), qPrintable(QStringLiteral("core's texts changed; update kSchemeTexts/kParamTexts in "
                                                        "ui/settings/i18n.cpp: ") +
                                         stale.join(QStringLiteral(", "))));
}

void TestTranslations::languagesAgree()
{
    QStringList ui;
    for (const plab::ui::Language& l : plab::ui::languages())
        ui << l.code;
    QStringList cli;
    for (const std::string& code : plab::supportedLanguages())
        cli << QString::fromStdString(code);
    QCOMPARE(ui, cli);
    QString error;
    QVERIFY(!plab::ui::setLanguage(QStringLiteral("xx"), &error));
    QVERIFY2(error.contains(QStringLiteral("allowed: en, zh_CN")), qPrintable(error));
    for (const QString& code : ui)
        QVERIFY2(plab::ui::setLanguage(code, &error), qPrintable(error));
}

void TestTranslations::figuresFollowLanguage()
{
    const plab::SchemeInfo& alibi = plab::schemeByName("alibi");
    plab::ui::BiasRequest request;
    request.spec = plab::makeSchemeSpec("alibi", 8, false, {});
    request.length = 8;
    const plab::ui::BiasResult result = plab::ui::computeBias(request);
    QVERIFY(result.error.isEmpty());

    QVERIFY(plab::ui::setLanguage(QStringLiteral("zh_CN")));
    QCOMPARE(plab::ui::currentLanguage(), QStringLiteral("zh_CN"));
    QCOMPARE(plab::ui::schemeTitle(alibi), QStringLiteral("ALiBi（线性偏置）"));
    QVERIFY(hasChinese(plab::ui::schemeExplanation(alibi)));
    const plab::ui::HeatmapFigure zh = plab::ui::biasFigure(result, QStringLiteral("auto"));
    QVERIFY2(hasChinese(zh.title) && hasChinese(zh.xLabel) && hasChinese(zh.yLabel), qPrintable(zh.title));
    QVERIFY(hasChinese(zh.panels.at(0).subtitle) && hasChinese(zh.panels.at(0).valueLabel));

    QVERIFY(plab::ui::setLanguage(QStringLiteral("en")));
    QCOMPARE(plab::ui::schemeTitle(alibi), QString::fromStdString(alibi.title));
    const plab::ui::HeatmapFigure en = plab::ui::biasFigure(result, QStringLiteral("auto"));
    QCOMPARE(en.title, QStringLiteral("ALiBi (linear biases): attention bias"));
    QCOMPARE(en.xLabel, QStringLiteral("key position n"));
}

// The GUI's refusals for want of a model (Save model…, keeping a trained model, a model view's job) are the GUI's own
// words, shown as they are: in the window's language (they were English whatever the language).
void TestTranslations::modelRefusalsFollowLanguage_data()
{
    QTest::addColumn<QString>("language");
    QTest::addColumn<int>("need"); // plab::ui::ModelNeed
    QTest::addColumn<QString>("message");
    using plab::ui::ModelNeed;
    QTest::newRow("save, en") << "en" << int(ModelNeed::Save)
                              << "no model to save: train one in the Train tab or load a checkpoint";
    QTest::newRow("save, zh_CN") << "zh_CN" << int(ModelNeed::Save)
                                 << "没有可保存的模型：请在“训练”页训练一个，或加载检查点";
    QTest::newRow("keep, zh_CN") << "zh_CN" << int(ModelNeed::Keep)
                                 << "没有可保留的模型：请在“训练”页训练一个，或加载检查点";
    QTest::newRow("a view's job, zh_CN") << "zh_CN" << int(ModelNeed::Compute)
                                         << "没有模型：请在“训练”页训练一个，或加载检查点";
}

void TestTranslations::modelRefusalsFollowLanguage()
{
    QFETCH(QString, language);
    QFETCH(int, need);
    QFETCH(QString, message);
    QVERIFY(plab::ui::setLanguage(language));
    try {
        plab::ui::requireModel(plab::ui::SharedModel{}, static_cast<plab::ui::ModelNeed>(need));
        QFAIL("no model was accepted");
    } catch (const plab::InputError& e) {
        QCOMPARE(QString::fromUtf8(e.what()), message);
    }
}

// View > Language: the window is rebuilt in the new language with its session state, and the choice is remembered.
void TestTranslations::windowRebuiltInLanguage()
{
    auto* window = new plab::ui::MainWindow;
    window->setAttribute(Qt::WA_DeleteOnClose);
    window->resize(1400, 900);
    window->show();
    window->panel()->setScheme(QStringLiteral("rope"));
    window->panel()->setLength(100);
    window->showView(QStringLiteral("compare"));
    QCOMPARE(window->menuBar()->actions().at(1)->text(), QStringLiteral("&View"));

    QString error;
    QPointer<plab::ui::MainWindow> old = window;
    plab::ui::MainWindow* zh = window->switchLanguage(QStringLiteral("zh_CN"), &error);
    QVERIFY2(zh, qPrintable(error));
    QVERIFY(zh != window);
    QTRY_VERIFY(old.isNull()); // deleted later (it had WA_DeleteOnClose)
    QVERIFY(zh->isVisible());
    QVERIFY(zh->testAttribute(Qt::WA_DeleteOnClose));
    QCOMPARE(plab::ui::savedLanguage(), QStringLiteral("zh_CN"));
    QCOMPARE(zh->menuBar()->actions().at(1)->text(), QStringLiteral("视图(&V)"));
    QCOMPARE(zh->panel()->state().spec.name(), std::string("rope"));
    QCOMPARE(zh->panel()->state().length, 100);
    QCOMPARE(zh->currentView()->viewId(), QStringLiteral("compare"));
    QVERIFY(hasChinese(zh->currentView()->viewTitle()));
    // The language names stay as each language writes itself.
    QCOMPARE(zh->findChild<QAction*>(QStringLiteral("language_en"))->text(), QStringLiteral("English"));
    QCOMPARE(zh->findChild<QAction*>(QStringLiteral("language_zh_CN"))->text(), QStringLiteral("中文"));
    QVERIFY(zh->findChild<QAction*>(QStringLiteral("language_zh_CN"))->isChecked());
    // Screenshots for a person to look at: PLAB_SCREENSHOT_DIR=/some/dir.
    const QString shots = qEnvironmentVariable("PLAB_SCREENSHOT_DIR");
    if (!shots.isEmpty()) {
        QDir().mkpath(shots);
        for (const QString& id : {QStringLiteral("bias"), QStringLiteral("compare"), QStringLiteral("dot"),
                                  QStringLiteral("entropy"), QStringLiteral("attention"), QStringLiteral("train")}) {
            zh->showView(id);
            QTest::qWait(id == QLatin1String("entropy") ? 3000 : 600);
            QVERIFY(zh->grab().save(QDir(shots).filePath(QStringLiteral("window_zh_%1.png").arg(id))));
        }
    }

    plab::ui::MainWindow* en = zh->switchLanguage(QStringLiteral("en"), &error);
    QVERIFY2(en, qPrintable(error));
    QCOMPARE(en->menuBar()->actions().at(1)->text(), QStringLiteral("&View"));
    QCOMPARE(plab::ui::savedLanguage(), QStringLiteral("en"));
    QCOMPARE(en->switchLanguage(QStringLiteral("en")), en); // already English: nothing rebuilt
    QVERIFY(!en->switchLanguage(QStringLiteral("xx"), &error));
    QVERIFY(error.contains(QStringLiteral("allowed: en, zh_CN")));
    en->close(); // WA_DeleteOnClose
}

// positionlab-cli draws its pictures in Chinese with --lang zh_CN: they differ from the English ones, and the SVG's
// text holds the Chinese strings (boxes drawn for a missing font would also differ from the English picture).
void TestTranslations::cliRendersChinese_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("chinese"); // in the zh_CN picture's text, not in the English one's
    QTest::addColumn<QString>("english"); // its source, in the English picture's text
    QTest::newRow("render bias") << QStringList{"render", "bias", "alibi"} << QStringLiteral("注意力偏置")
                                 << QStringLiteral("attention bias");
    QTest::newRow("render compare") << QStringList{"render", "compare", "local", "alibi", "--difference"}
                                    << QStringLiteral("差值") << QStringLiteral("Difference");
    // The axis "distance |m − n|" is drawn in pieces; its word is one of them.
    QTest::newRow("render dot") << QStringList{"render", "dot"} << QStringLiteral("距离") << QStringLiteral("distance");
    QTest::newRow("render entropy") << QStringList{"render", "entropy", "alibi", "rope", "--lengths", "16,64"}
                                    << QStringLiteral("最后一个查询") << QStringLiteral("last query");
    QTest::newRow("bias -o png") << QStringList{"bias", "alibi"} << QStringLiteral("注意力偏置")
                                 << QStringLiteral("attention bias");
}

// The text an SVG draws: its <text> (and <tspan>) elements' characters, one string.
static QString svgText(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    QXmlStreamReader xml(&f);
    QString text;
    int depth = 0; // inside a text element
    while (!xml.atEnd()) {
        xml.readNext();
        if (xml.isStartElement() && xml.name() == QLatin1String("text"))
            ++depth;
        else if (xml.isEndElement() && xml.name() == QLatin1String("text"))
            --depth, text += QLatin1Char('\n');
        else if (xml.isCharacters() && depth > 0)
            text += xml.text();
    }
    return text;
}

void TestTranslations::cliRendersChinese()
{
    QFETCH(QStringList, args);
    QFETCH(QString, chinese);
    QFETCH(QString, english);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString zh = dir.filePath(QStringLiteral("zh.png")), en = dir.filePath(QStringLiteral("en.png"));
    const QString zhSvg = dir.filePath(QStringLiteral("zh.svg")), enSvg = dir.filePath(QStringLiteral("en.svg"));
    for (const auto& [lang, path] :
         {std::pair{QStringLiteral("zh_CN"), zhSvg}, std::pair{QStringLiteral("en"), enSvg}}) {
        const CliResult svg = runCli(args + QStringList{"--lang", lang, "-o", path});
        QVERIFY2(svg.exitCode == 0, svg.err.constData());
    }
    const QString zhText = svgText(zhSvg), enText = svgText(enSvg);
    QVERIFY2(zhText.contains(chinese) && !zhText.contains(english), qPrintable(zhText));
    QVERIFY2(enText.contains(english) && !enText.contains(chinese), qPrintable(enText));
    const CliResult a = runCli(args + QStringList{"--lang", "zh_CN", "-o", zh});
    QVERIFY2(a.exitCode == 0, a.err.constData());
    const CliResult b = runCli(args + QStringList{"--lang", "en", "-o", en});
    QVERIFY2(b.exitCode == 0, b.err.constData());
    QImage zhImage(zh), enImage(en);
    QVERIFY(!zhImage.isNull() && !enImage.isNull());
    QCOMPARE(zhImage.size(), enImage.size());
    QVERIFY2(zhImage != enImage, "the Chinese picture is the English one");
    const CliResult refused = runCli(args + QStringList{"--lang", "xx", "-o", dir.filePath(QStringLiteral("xx.png"))});
    QCOMPARE(refused.exitCode, 2);
    QVERIFY2(refused.err.contains("--lang: language xx is not allowed; allowed: en, zh_CN"), refused.err.constData());
    QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("xx.png"))));
}

void TestTranslations::guiHelpInLanguage_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QString>("expected"); // in stdout when the exit code is 0, else in stderr
    QTest::newRow("zh_CN --help") << QStringList{"--lang", "zh_CN", "--help"} << 0
                                  << QStringLiteral("要打开的会话文件");
    QTest::newRow("--lang=zh_CN --help") << QStringList{"--lang=zh_CN", "--help"} << 0
                                         << QStringLiteral("本次运行的界面语言：en, zh_CN");
    QTest::newRow("en --help") << QStringList{"--help", "--lang", "en"} << 0
                               << QStringLiteral("A session file to open (optional)");
    QTest::newRow("unknown language") << QStringList{"--lang", "xx"} << 2
                                      << QStringLiteral("language 'xx' is not available; allowed: en, zh_CN");
}

// positionlab --help speaks the --lang it is given (its texts are built after the language is set).
void TestTranslations::guiHelpInLanguage()
{
    QFETCH(QStringList, args);
    QFETCH(int, exitCode);
    QFETCH(QString, expected);
    QTemporaryDir home;
    QProcess gui;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    env.insert(QStringLiteral("HOME"), home.path());
    env.insert(QStringLiteral("XDG_CONFIG_HOME"), home.path());
    gui.setProcessEnvironment(env);
    gui.start(QStringLiteral(POSITIONLAB_GUI), args);
    QVERIFY(gui.waitForFinished(60000));
    QCOMPARE(gui.exitCode(), exitCode);
    const QString text = QString::fromUtf8(exitCode == 0 ? gui.readAllStandardOutput() : gui.readAllStandardError());
    QVERIFY2(text.contains(expected), qPrintable(text));
}

PLAB_QTEST_MAIN(TestTranslations)
#include "tst_translations.moc"
