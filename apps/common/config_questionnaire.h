// The questions of `hearth config`, one per setting of UserConfig, answered
// line by line from a stream, so that it works at a terminal and with answers
// piped in (`printf 'cuda\n2\n...' | hearth config`).
#pragma once

#include <iosfwd>

#include "apps/common/user_config.h"

namespace hearth::cli {

// Asks each question of user_config_settings() on `out`, with the current
// value in brackets. An empty answer keeps it; an invalid one is explained
// and the question asked again; at the end of the input the remaining
// questions keep their current values (and `out` says so). echo_answers
// prints each answer after its question, for input that is not typed at a
// terminal, so the transcript reads as a dialogue.
UserConfig ask_user_config(std::istream& in, std::ostream& out, const UserConfig& start, bool echo_answers = false);

}  // namespace hearth::cli
