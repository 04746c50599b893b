// Shared by the tests that read committed NumPy references: a JSON array as numbers.
#pragma once

#include <QJsonArray>
#include <QJsonValue>

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
