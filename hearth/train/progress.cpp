#include "hearth/train/progress.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ostream>

#include "hearth/core/env.h"

namespace hearth::train {
namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// Keys a log line shows first, in this order, and how.
struct KeyFormat {
  const char* key;
  const char* label;
  const char* format;
};
constexpr KeyFormat kOrdered[] = {
    {"epoch", "epoch", "%.2f"},         {"loss", "loss", "%.4f"},
    {"eval_loss", "eval_loss", "%.4f"}, {"eval_accuracy", "accuracy", "%.4f"},
    {"eval_f1", "f1", "%.4f"},          {"learning_rate", "lr", "%.3e"},
    {"grad_norm", "grad_norm", "%.3f"}, {"eval_runtime", "eval time", "%.1f s"},
};

}  // namespace

bool stdout_is_terminal() { return ::isatty(STDOUT_FILENO) == 1; }

bool progress_bar_by_default(bool disable_tqdm) {
  return !disable_tqdm && stdout_is_terminal() && outside_env("TERM") != "dumb";
}

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  auto s = static_cast<int64_t>(seconds + 0.5);
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", static_cast<long long>(s / 3600),
                  static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60));
  } else {
    std::snprintf(buf, sizeof buf, "%02lld:%02lld", static_cast<long long>(s / 60), static_cast<long long>(s % 60));
  }
  return buf;
}

std::string format_log_entry(const nlohmann::json& entry, int64_t max_steps) {
  std::string s;
  bool eval = entry.contains("eval_loss");
  if (entry.contains("step")) {
    s = eval ? "eval at step " : "step ";
    s += entry["step"].dump();
    if (!eval && max_steps > 0) {
      s += '/';
      s += std::to_string(max_steps);
    }
  }
  // Appends "label value", separated from what came before.
  auto append = [&](const std::string& label, const std::string& value) {
    if (!s.empty()) s += " | ";
    s += label;
    s += ' ';
    s += value;
  };
  for (const KeyFormat& k : kOrdered) {
    if (entry.contains(k.key) && entry[k.key].is_number()) append(k.label, fmt(k.format, entry[k.key].get<double>()));
  }
  for (const auto& [key, value] : entry.items()) {
    if (key == "step") continue;
    bool known = false;
    for (const KeyFormat& k : kOrdered) known = known || key == k.key;
    if (known) continue;
    append(key, value.is_number_float() ? fmt("%.4g", value.get<double>()) : value.dump());
  }
  return s;
}

ProgressCallback::ProgressCallback(std::ostream& out, bool bar, double plain_line_seconds)
    : out_(out), bar_(bar), plain_line_seconds_(plain_line_seconds) {}

double ProgressCallback::elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

double ProgressCallback::samples_per_second(const TrainerState& state) const {
  double t = elapsed();
  return t > 0 ? static_cast<double>((state.global_step - start_step_) * state.train_batch_size) / t : 0.0;
}

std::string ProgressCallback::eta(const TrainerState& state) const {
  int64_t done = state.global_step - start_step_;
  if (done <= 0) return "?";
  return format_duration(elapsed() / static_cast<double>(done) *
                         static_cast<double>(state.max_steps - state.global_step));
}

void ProgressCallback::on_train_begin(const TrainingArguments&, TrainerState& state, TrainerControl&) {
  start_ = Clock::now();
  last_draw_ = last_line_ = start_;
  start_step_ = state.global_step;
  if (bar_) draw_bar(state);
}

void ProgressCallback::on_step_end(const TrainingArguments&, TrainerState& state, TrainerControl&) {
  auto now = Clock::now();
  if (!bar_) {
    if (std::chrono::duration<double>(now - last_line_).count() >= plain_line_seconds_) print_progress_line(state);
    return;
  }
  if (now - last_draw_ < std::chrono::milliseconds(100) && state.global_step < state.max_steps) return;
  draw_bar(state);
}

void ProgressCallback::on_log(const TrainingArguments&, TrainerState& state, TrainerControl&,
                              const nlohmann::json& entry) {
  if (entry.contains("train_runtime")) return;  // the final summary is the caller's to print
  if (entry.contains("loss") && entry["loss"].is_number()) last_loss_ = fmt("%.4f", entry["loss"].get<double>());
  if (entry.contains("learning_rate") && entry["learning_rate"].is_number())
    last_lr_ = fmt("%.2e", entry["learning_rate"].get<double>());
  std::string line = format_log_entry(entry, state.max_steps);
  if (!entry.contains("eval_loss")) {
    line += " | ";
    line += fmt("%.0f", samples_per_second(state));
    line += " samples/s | ETA ";
    line += eta(state);
  }
  if (bar_) clear_bar();
  out_ << line << "\n";
  out_.flush();
  last_line_ = Clock::now();
  if (bar_) draw_bar(state);
}

void ProgressCallback::print_progress_line(const TrainerState& state) {
  out_ << "step " << state.global_step << "/" << state.max_steps << " | epoch " << fmt("%.2f", state.epoch)
       << " | loss " << last_loss_ << " | " << fmt("%.0f", samples_per_second(state)) << " samples/s | elapsed "
       << format_duration(elapsed()) << " | ETA " << eta(state) << "\n";
  out_.flush();
  last_line_ = Clock::now();
}

void ProgressCallback::on_train_end(const TrainingArguments&, TrainerState& state, TrainerControl&) {
  if (!bar_) return;
  draw_bar(state);
  close();
}

void ProgressCallback::close() {
  if (!bar_drawn_) return;
  out_ << "\n";
  out_.flush();
  bar_drawn_ = false;
}

void ProgressCallback::clear_bar() {
  if (bar_drawn_) out_ << "\r\033[K";
  bar_drawn_ = false;
}

void ProgressCallback::draw_bar(const TrainerState& state) {
  last_draw_ = Clock::now();
  constexpr int kWidth = 24;
  double frac = state.max_steps > 0 ? static_cast<double>(state.global_step) / static_cast<double>(state.max_steps) : 0;
  frac = std::min(std::max(frac, 0.0), 1.0);
  int filled = static_cast<int>(frac * kWidth);
  std::string bar;
  for (int i = 0; i < kWidth; ++i) bar += i < filled ? "\u2588" : " ";
  double t = elapsed();
  double steps_per_s = t > 0 ? static_cast<double>(state.global_step - start_step_) / t : 0.0;
  char head[96];
  std::snprintf(head, sizeof head, "\r%3d%%|", static_cast<int>(frac * 100));
  out_ << head << bar << "| " << state.global_step << "/" << state.max_steps << " [" << format_duration(t) << "<"
       << eta(state) << ", " << fmt("%.2f", steps_per_s) << " it/s] epoch " << fmt("%.2f", state.epoch) << " loss "
       << last_loss_ << " lr " << last_lr_ << " " << fmt("%.0f", samples_per_second(state)) << " samples/s\033[K";
  out_.flush();
  bar_drawn_ = true;
}

}  // namespace hearth::train
