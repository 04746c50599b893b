// Shared by the tests that read committed NumPy references: the file's array of cases, a JSON array as numbers.
#pragma once

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonValue>
#include <QString>

#include <vector>

inline std::vector<double> toVector(const QJsonValue& v)
{
    std::vector<double> out;
    for (const QJsonValue& x : v.toArray())
        out.push_back(x.toDouble());
    return out;
}

inline std::vector<float> toFloats(const QJsonValue& v)
{
    std::vector<float> out;
    for (const QJsonValue& x : v.toArray())
        out.push_back(static_cast<float>(x.toDouble()));
    return out;
}

// The array `key` of tests/data/`file` (a committed reference); a missing file ends the test run, naming it.
inline QJsonArray readReferenceArray(const char* file, const char* key)
{
    QFile f(QStringLiteral(POSITIONLAB_TEST_DATA "/") + QString::fromUtf8(file));
    if (!f.open(QIODevice::ReadOnly))
        qFatal("cannot open %s", file);
    return QJsonDocument::fromJson(f.readAll()).object()[QString::fromUtf8(key)].toArray();
}
