// Models kept across starts: every model trained in the app is written to the app's data folder, one file per
// preset and scheme, and offered again at the next start. Also the application's identity, which names that folder.
#pragma once

#include "workers/model_compute.h"

#include <QString>
#include <QStringList>

#include <vector>

namespace plab::ui {

// Sets QCoreApplication's organization and application names (and version), which name the data and settings
// folders: the GUI and the headless CLI both call this, so both find the same kept models.
void setApplicationNames();

// AppDataLocation + "/models" (e.g. ~/.local/share/PositionLab/PositionLab/models); not created here.
QString keptModelsFolder();
// Where `keepModel` writes a model: <folder>/<preset>-<scheme>.safetensors, the preset from info.training["preset"]
// ("custom" when absent).
QString keptModelPath(const SharedModel& model);
QString keptModelPath(const std::string& preset, const std::string& scheme);
// Writes the model to keptModelPath (atomically, replacing the previous model of that preset and scheme; the folder is
// created) and returns the absolute path. Throws InputError/RunError naming the file and the problem.
QString keepModel(const SharedModel& model);
// Every kept model, most recent first; a file that does not load is skipped and named in `problems`.
std::vector<SharedModel> loadKeptModels(QStringList* problems = nullptr);

} // namespace plab::ui
