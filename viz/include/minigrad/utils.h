#pragma once
// minigrad::utils: helpers for training scripts (library minigrad::viz).
//
//   mg::utils::ProgressBar bar(steps, "train");      // as tqdm(total=steps, desc="train")
//   for (int step = 0; step < steps; ++step) {
//     ...
//     bar.set_postfix("loss", loss.item<double>());
//     if (step % 100 == 0) bar.write("checkpoint saved");  // as tqdm.write: above the bar
//     bar.update();
//   }
//   bar.close();                                      // 100%, or "stopped early" at n/total
//   mg::utils::summary(model, x);                     // as torchinfo.summary(model, input_data=x):
//                                                     // prints the table and returns it
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "minigrad/nn/module.h"
#include "minigrad/tensor.h"

namespace minigrad::utils {

struct ProgressBarOptions {
  /// Where the bar goes (tqdm's default is stderr too).
  std::ostream* out = nullptr;  // nullptr: std::cerr
  /// Whether out is a terminal: then the bar redraws one line with '\r'; otherwise it prints
  /// plain full lines. Unset: true when out is std::cout or std::cerr and that stream is a tty.
  std::optional<bool> terminal{};
  /// On a terminal, the shortest time between two redraws (tqdm's mininterval).
  double refresh_seconds = 0.1;
  /// Not on a terminal, the shortest time between two printed lines. The first update and the
  /// last one (the count reaching total, or close()) always print.
  double log_seconds = 5.0;
  /// Where the count starts (a resumed run), as tqdm's initial; the rate counts from here.
  std::int64_t initial = 0;
  /// What one update counts: "it/s" by default, "step/s" with unit "step".
  std::string unit = "it";
  /// Seconds since some fixed time (tests inject one); unset: std::chrono::steady_clock.
  std::function<double()> clock{};
};

/// A progress bar like tqdm's:
///   `train  45%|#########...........| 45/100 [00:02<00:03, 19.80it/s, loss=0.1234]`
/// with the elapsed time, the time left (ETA) and a postfix of named values. The destructor
/// calls close(). Throws minigrad::Error for a negative total.
class ProgressBar {
 public:
  explicit ProgressBar(std::int64_t total, std::string desc = "", ProgressBarOptions options = {});
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  /// Advances the count by n and redraws (or prints a line) when its interval has passed.
  void update(std::int64_t n = 1);
  /// Sets a named value shown after the rate ("loss=0.1234", 4 significant digits; whole numbers
  /// from 10^4 on); a name set again keeps its place. Shown at the next update() or close().
  void set_postfix(const std::string& name, double value);
  void set_postfix(const std::string& name, const std::string& value);
  /// Prints a line of text above the bar without garbling it, as tqdm.write: on a terminal the
  /// bar is wiped, the line printed and the bar redrawn below it; into a log the line is printed
  /// between the bar's lines. A '\n' is added.
  void write(const std::string& line);
  /// Prints the final state (if not printed yet) and ends the line; a bar closed before its count
  /// reached total says so: `... 30/100 [00:03<00:07, 10.00it/s] stopped early`. Later calls do
  /// nothing.
  void close();
  /// The current line, without '\r' or '\n'.
  std::string line() const;
  std::int64_t n() const { return n_; }

 private:
  void print(bool force);
  std::string format(double now) const;

  std::int64_t total_;
  std::string desc_;
  ProgressBarOptions options_;
  std::ostream* out_;
  bool terminal_;
  double start_;
  double last_print_ = 0;
  std::int64_t n_;
  bool printed_state_ = false;  // the current state is on screen
  bool any_printed_ = false;
  bool closed_ = false;
  std::size_t last_width_ = 0;
  std::vector<std::pair<std::string, std::string>> postfix_;
};

/// How summary() shows its table.
struct SummaryOptions {
  /// As torchinfo's verbose: 1 prints the table (to out), 0 only returns it.
  int verbose = 1;
  /// Where the table goes; nullptr: std::cout.
  std::ostream* out = nullptr;
};

/// `torchinfo.summary`'s table for a module and the output of its forward pass on an example
/// input: one row per module (indented by depth; "name (Type)"), its output shape and its
/// parameter count (with its children's), then the totals: all, trainable, non-trainable
/// parameters and their size in MB (10^6 bytes). Output shapes come from the autograd graph of
/// output (minigrad has no forward hooks): a layer (trainable parameters of its own, no child
/// with parameters) shows the shape of the first op that combines them with its input (Linear's
/// matmul, Embedding's lookup); the top row shows output's shape; other rows show "--". Use the
/// template below, which runs the forward pass. As torchinfo's summary, it prints the table
/// (`{.verbose = 0}`: it does not) and returns it.
std::string summary(const nn::Module& module, const Tensor& input, const Tensor& output,
                    const SummaryOptions& options = {});

/// Runs model.forward(input) (model(input) for a holder) with gradients on, and returns
/// summary(model, input, output, options), which prints the table unless options.verbose is 0.
template <typename M>
std::string summary(M& model, const Tensor& input, const SummaryOptions& options = {}) {
  GradModeGuard grad_on(true);
  if constexpr (nn::IsModuleHolder<M>) {
    Tensor output = model(input);
    return summary(*model, input, output, options);
  } else {
    Tensor output = model.forward(input);
    return summary(model, input, output, options);
  }
}

}  // namespace minigrad::utils
