// What the model verbs' files (train, eval, eval --task, fire-curve) share with registerModelVerbs and each other.
#pragma once

#include "cli.h"

#include <string>

namespace plab::cli {

void registerFireCurveVerb(); // verbs_checkpoint.cpp
void registerTrainVerb();     // verbs_train.cpp
void registerEvalVerb();      // verbs_eval.cpp

// The model's sizes: the preset's, changed by --context, --layers, --d-model, --heads, --d-ff (verbs_model.cpp).
void modelSizesFromArgs(const ParsedArgs& args, ModelConfig& mc);
// The optimisation schedule: the preset's, changed by --steps, --batch, --lr, --min-lr, --warmup, --weight-decay,
// --grad-clip (verbs_model.cpp).
void scheduleFromArgs(const ParsedArgs& args, TrainConfig& tc);

// eval CHECKPOINT --task NAME (verbs_eval_task.cpp): exact-match accuracy per length (and depth), CSV or JSON.
int runTaskEval(const ParsedArgs& args, VerbContext& ctx);

// "interrupted WHERE; nothing written", naming -o's file as unchanged: what eval says when Ctrl-C stopped it.
void printInterrupted(const ParsedArgs& args, VerbContext& ctx, const std::string& where);

} // namespace plab::cli
