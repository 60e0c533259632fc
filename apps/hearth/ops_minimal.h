// `hearth ops --minimal`: the primitive ops a backend must implement to train
// hearth's models, found by tracing a training step of each.
#pragma once

namespace hearth::cli {

// Prints the table (Markdown: docs/backend_op_set.md is its output) and returns 0.
int print_minimal_op_set();

}  // namespace hearth::cli
