// The desktop application's command line: its options, in the interface language, and what they asked for.
#pragma once

#include <QString>

class QCoreApplication;

namespace plab::ui {

struct GuiCommandLine {
    QString session;           // a session file to open, or empty
    QString screenshots;       // --screenshots DIR, or empty
    QString rotaryScreenshots; // --screenshots-rotary DIR, or empty
    QString layoutScreenshots; // --screenshots-layout DIR, or empty
    QString modelScreenshots;  // --screenshots-model DIR (with --model FOLDER), or empty
    QString modelFolder;       // --model FOLDER: a Hugging Face folder opened in "Your model", or empty
    QString taskScreenshots;   // --screenshots-tasks DIR, or empty
    QString schemeScreenshots; // --screenshots-schemes DIR, or empty
    QString error;             // a bad --lang (the run stops with exit 2), or empty
};

// Sets the interface language first (--lang, else the saved choice), so that --help speaks it, then parses the
// arguments; --help and --version print and exit as QCommandLineParser does.
GuiCommandLine parseGuiCommandLine(QCoreApplication& app);

} // namespace plab::ui
