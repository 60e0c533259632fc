// Reading the environment variables that belong to other programs: the shell
// (HOME, TMPDIR, TERM), the XDG base directories, OpenMP, CUDA's device
// selection, Gloo, and the launchers' rank variables (torchrun, Slurm, Open
// MPI). hearth's own switches (HEARTH_*) are declared and read through
// hearth/core/switches.h instead; this is the one other place hearth reads the
// environment, and it reads only the names listed in env.cpp.
#pragma once

#include <string>

namespace hearth {

// The variable's value, or "" when it is unset. `name` must be one of the
// outside variables env.cpp lists (a HEARTH_* name or an unlisted one is an
// InternalError: declare a switch instead).
std::string outside_env(const char* name);

// Whether `name` is set at all, even to "": CUDA_VISIBLE_DEVICES="" hides
// every GPU, which an unset variable does not.
bool outside_env_is_set(const char* name);

// Whether `name` is one of the outside variables hearth reads.
bool is_outside_variable(const std::string& name);

}  // namespace hearth
