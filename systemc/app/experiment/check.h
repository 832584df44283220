#pragma once
// Checks of an experiment file that need the registries (the loader cannot make them).

#include "config/experiment_loader.h"

namespace gpumux {

/// Checks the analysis and policy names and policy options (against the registries) and that every
/// `paper:` key names a row the analysis produces. InputError with the file, line and key otherwise.
/// Simulates nothing.
void validate_experiment(const ExperimentConfig& config, const ExpandedExperiment& grid);

}  // namespace gpumux
