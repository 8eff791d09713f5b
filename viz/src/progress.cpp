// utils::ProgressBar: tqdm's line, redrawn on a terminal, printed as plain lines into a log.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "minigrad/error.h"
#include "minigrad/utils.h"

namespace minigrad::utils {

namespace {

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool is_terminal(const std::ostream* out) {
  if (out == &std::cout) return ::isatty(STDOUT_FILENO) == 1;
  if (out == &std::cerr || out == &std::clog) return ::isatty(STDERR_FILENO) == 1;
  return false;
}

/// tqdm's time format: 01:05, or 1:02:03 from an hour on.
std::string format_time(double seconds) {
  auto s = static_cast<long long>(std::max(0.0, seconds));
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%02lld:%02lld", s / 60, s % 60);
  return buf;
}

std::string format_number(double value) {
  char buf[32];
  // 4 significant digits; whole numbers from 10^4 on (12345 tok/s, not 1.234e+04).
  if (std::fabs(value) >= 1e4 && std::fabs(value) < 1e15)
    std::snprintf(buf, sizeof buf, "%.0f", value);
  else
    std::snprintf(buf, sizeof buf, "%.4g", value);
  return buf;
}

}  // namespace

ProgressBar::ProgressBar(std::int64_t total, std::string desc, ProgressBarOptions options)
    : total_(total), desc_(std::move(desc)), options_(std::move(options)) {
  MG_CHECK(total_ >= 0, "ProgressBar", "total must be non-negative, got ", total_);
  MG_CHECK(options_.initial >= 0 && options_.initial <= total_, "ProgressBar", "initial (",
           options_.initial, ") must be in [0, total] = [0, ", total_, "]");
  if (!options_.clock) options_.clock = steady_seconds;
  out_ = options_.out ? options_.out : &std::cerr;
  terminal_ = options_.terminal.value_or(is_terminal(out_));
  start_ = options_.clock();
  n_ = options_.initial;
}

ProgressBar::~ProgressBar() {
  try {
    close();
  } catch (...) {  // a destructor must not throw (a failing stream, a throwing clock)
  }
}

void ProgressBar::update(std::int64_t n) {
  if (closed_) return;
  n_ = std::min(total_, n_ + n);
  printed_state_ = false;
  print(n_ == total_);
}

void ProgressBar::set_postfix(const std::string& name, double value) {
  set_postfix(name, format_number(value));
}

void ProgressBar::set_postfix(const std::string& name, const std::string& value) {
  auto it = std::find_if(postfix_.begin(), postfix_.end(),
                         [&](const auto& kv) { return kv.first == name; });
  if (it != postfix_.end())
    it->second = value;
  else
    postfix_.emplace_back(name, value);
  printed_state_ = false;
}

void ProgressBar::write(const std::string& line) {
  if (terminal_ && !closed_ && last_width_ > 0) {
    // Wipe the bar, print the line where it was, and draw the bar again below it.
    *out_ << '\r' << std::string(last_width_, ' ') << '\r' << line << '\n';
    last_width_ = 0;
    print(true);
  } else {
    *out_ << line << '\n' << std::flush;
  }
}

void ProgressBar::close() {
  if (closed_) return;
  closed_ = true;
  // A bar that stopped before its total says so on its last line.
  if (!printed_state_ || n_ < total_) print(true);
  if (terminal_) *out_ << '\n' << std::flush;
}

std::string ProgressBar::line() const { return format(options_.clock()); }

std::string ProgressBar::format(double now) const {
  const double elapsed = now - start_;
  const auto done = static_cast<double>(n_ - options_.initial);
  const double rate = elapsed > 0 ? done / elapsed : 0;
  std::string s = desc_.empty() ? "" : desc_ + " ";
  char buf[64];
  const double fraction = total_ > 0 ? static_cast<double>(n_) / static_cast<double>(total_) : 1;
  std::snprintf(buf, sizeof buf, "%3d%%|", static_cast<int>(fraction * 100));
  s += buf;
  constexpr int kWidth = 20;
  const auto filled = static_cast<std::size_t>(fraction * kWidth);
  s += std::string(filled, '#') + std::string(kWidth - filled, '.') + "| ";
  s += std::to_string(n_) + "/" + std::to_string(total_) + " [" + format_time(elapsed) + "<";
  s += rate > 0 ? format_time(static_cast<double>(total_ - n_) / rate) : "?";
  if (rate <= 0)
    std::snprintf(buf, sizeof buf, ", ?%s/s", options_.unit.c_str());
  else if (rate < 1)
    std::snprintf(buf, sizeof buf, ", %.2fs/%s", 1 / rate, options_.unit.c_str());
  else
    std::snprintf(buf, sizeof buf, ", %.2f%s/s", rate, options_.unit.c_str());
  s += buf;
  for (const auto& [name, value] : postfix_) s += ", " + name + "=" + value;
  return s + (closed_ && n_ < total_ ? "] stopped early" : "]");
}

void ProgressBar::print(bool force) {
  const double now = options_.clock();
  const double interval = terminal_ ? options_.refresh_seconds : options_.log_seconds;
  if (!force && any_printed_ && now - last_print_ < interval) return;
  const std::string text = format(now);
  if (terminal_) {
    // Spaces wipe the rest of a longer previous line.
    *out_ << '\r' << text
          << std::string(last_width_ > text.size() ? last_width_ - text.size() : 0, ' ');
    last_width_ = text.size();
  } else {
    *out_ << text << '\n';
  }
  *out_ << std::flush;
  last_print_ = now;
  any_printed_ = printed_state_ = true;
}

}  // namespace minigrad::utils
