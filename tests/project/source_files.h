// The project's C++ sources as the source-reading tests (tst_layering, tst_code_size) walk them.
#pragma once

#include <QDir>
#include <QDirIterator>
#include <QStringList>

namespace plab::test {

// Every .h and .cpp below `folder` of the project (POSITIONLAB_SOURCE_DIR), relative to the project root, sorted.
inline QStringList sourcesBelow(const QString& folder)
{
    QStringList files;
    const QDir root(QStringLiteral(POSITIONLAB_SOURCE_DIR));
    QDirIterator it(root.filePath(folder), {QStringLiteral("*.h"), QStringLiteral("*.cpp")}, QDir::Files,
                    QDirIterator::Subdirectories);
    while (it.hasNext())
        files << root.relativeFilePath(it.next());
    files.sort();
    return files;
}

} // namespace plab::test
