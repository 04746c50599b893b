// Settings and data folders of a test that opens windows or keeps models: never the user's own, nothing left over.
#pragma once

#include <QCoreApplication>
#include <QSettings>
#include <QStandardPaths>
#include <QString>

namespace plab::test {

// Qt's test mode (settings and data under ~/.qttest), an application name of the test's own, and no settings left
// from an earlier run.
inline void isolateSettings(const QString& testName)
{
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("PositionLabTest"));
    QCoreApplication::setApplicationName(testName);
    QSettings().clear();
}

} // namespace plab::test
