// A file the user handed in holds a value hearth refuses: a checkpoint whose
// step count no run reaches, a trainer state written by something else. The
// run stops before it starts, as for a bad flag, so the programs answer it as
// they answer bad arguments: one line and exit status 2. Kept apart from
// errors.h so that only the readers of such files and the programs' entry
// points include it.
#pragma once

#include "hearth/core/errors.h"

namespace hearth {

class InputError : public ValueError {
 public:
  using ValueError::ValueError;
};

}  // namespace hearth
