// Models kept across starts, in the app's data folder.
#include "workers/kept_models.h"

#include "base/errors.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>

#include <cctype>

namespace plab::ui {

void setApplicationNames()
{
    QCoreApplication::setOrganizationName(QStringLiteral("PositionLab"));
    QCoreApplication::setApplicationName(QStringLiteral("PositionLab"));
    QCoreApplication::setApplicationVersion(QStringLiteral("0.1.0"));
}

QString keptModelsFolder()
{
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/models");
}

QString keptModelPath(const std::string& preset, const std::string& scheme)
{
    // Preset and scheme names are [a-z0-9-]; anything else (a hand-edited checkpoint) must not leave the folder.
    auto safe = [](std::string name) {
        for (char& c : name)
            if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'))
                c = '_';
        return QString::fromStdString(name);
    };
    return QDir(keptModelsFolder()).filePath(QStringLiteral("%1-%2.safetensors").arg(safe(preset), safe(scheme)));
}

QString keptModelPath(const SharedModel& model)
{
    requireModel(model, ModelNeed::Keep);
    const nlohmann::json& training = model.info.training;
    std::string preset = kCustomPreset;
    if (training.is_object() && training.contains("preset") && training["preset"].is_string())
        preset = training["preset"].get<std::string>();
    // A model with options beyond its scheme (a NoPE schedule, SSMax, ...) is kept beside the plain one, not over it.
    const std::string options = modelOptionsLabel(model.model->config());
    const std::string scheme = model.model->config().scheme;
    return keptModelPath(preset, options.empty() ? scheme : scheme + "-" + options);
}

QString keepModel(const SharedModel& model)
{
    const QString path = keptModelPath(model);
    const QString folder = QFileInfo(path).absolutePath();
    if (!QDir().mkpath(folder))
        throw RunError("cannot create the folder for kept models " + folder.toStdString());
    saveSharedModel(model, path); // atomic: the previous file stays until the new one is complete
    return QFileInfo(path).absoluteFilePath();
}

std::vector<SharedModel> loadKeptModels(QStringList* problems)
{
    std::vector<SharedModel> models;
    const QDir folder(keptModelsFolder());
    if (!folder.exists())
        return models;
    const QFileInfoList files = folder.entryInfoList({QStringLiteral("*.safetensors")}, QDir::Files | QDir::Readable,
                                                     QDir::Time); // newest first
    for (const QFileInfo& file : files) {
        try {
            models.push_back(loadSharedModel(file.absoluteFilePath()));
        } catch (const std::exception& e) {
            if (problems)
                *problems << QString::fromStdString(e.what());
        }
    }
    return models;
}

} // namespace plab::ui
