// Limits on every JSON document hearth reads (configs, tokenizer.json,
// trainer_state.json, safetensors headers, optimizer and scheduler metadata).
// A hostile file must not exhaust memory or the stack: nesting deeper than
// kMaxJsonDepth overflows recursive writers (dump()) and makes unbounded
// copies when re-indented, and a document beyond its size limit is refused
// before it is read into memory.
#pragma once

#include <cstddef>
#include <istream>
#include <string>
#include <string_view>

namespace hearth::io {

// Arrays and objects nested deeper than this are refused.
inline constexpr int kMaxJsonDepth = 128;
// Default size limit of a JSON file (tokenizer.json of large vocabularies
// reach tens of MB); callers with smaller documents pass their own.
inline constexpr size_t kMaxJsonBytes = size_t{256} << 20;

// Throws ValueError "<where>: ..." when `text` is longer than `max_bytes` or
// nests arrays/objects deeper than kMaxJsonDepth. `where` is the message
// prefix, e.g. "[BertConfig] models/x/config.json". Strings are skipped, so
// brackets inside them do not count. Does not otherwise validate the JSON.
void check_json_limits(std::string_view text, const std::string& where, size_t max_bytes = kMaxJsonBytes);

// Reads the rest of `in` (at most max_bytes + 1 bytes, so an endless or huge
// stream is refused without reading it all) and checks it as above.
std::string read_json_text(std::istream& in, const std::string& where, size_t max_bytes = kMaxJsonBytes);

// What check_json_limits would say after "<where>: ", or "" when within them.
std::string json_limits_problem(std::string_view text, size_t max_bytes = kMaxJsonBytes);

// `text` as an error message may quote it: whole when at most `max_chars`
// long, else its first `max_chars` characters, "..." and how long it was, so
// a hostile value of megabytes never floods a message.
std::string excerpt(std::string_view text, size_t max_chars = 200);

// The deepest nesting of arrays and objects in `text` (0 for a scalar).
int json_nesting_depth(std::string_view text);

}  // namespace hearth::io
