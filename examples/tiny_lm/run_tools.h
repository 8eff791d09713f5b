#pragma once
// What the tiny_lm and char_gpt programs share around their training loops: the record of the
// losses under a progress bar, the loss-curve picture and the profile of one training step.
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include <minigrad/profiler.h>
#include <minigrad/utils.h>
#include <minigrad/viz.h>

#include "gpt.h"

namespace tiny_lm {

/// The losses of a run, for the curves and the last line.
struct LossLog {
  std::vector<double> train_steps, train_losses, val_steps, val_losses;
  double last_val = -1, tokens_per_second = 0, seconds = 0;
  /// Starts with the validation loss measured before training, at `step`.
  LossLog(int step, double val) : val_steps{double(step)}, val_losses{val}, last_val(val) {}
  void add(const Progress& p) {
    train_steps.push_back(p.step);
    train_losses.push_back(p.loss);
    if (p.val_loss >= 0) {
      last_val = p.val_loss;
      val_steps.push_back(p.step);
      val_losses.push_back(p.val_loss);
    }
    tokens_per_second = p.tokens_per_second;
    seconds = p.seconds;
  }
};

/// A training loop that calls its argument after every step.
using TrainLoop = std::function<void(const std::function<void(const Progress&)>&)>;

/// Runs train up to step `steps` (from `initial`) under a progress bar (loss, validation loss,
/// tokens/s; on a terminal it redraws one line, into a file or a pipe it prints plain lines),
/// adding every step to log, then calling on_step.
inline void train_with_bar(int steps, int initial, LossLog& log, const TrainLoop& train,
                           const std::function<void(const Progress&)>& on_step) {
  minigrad::utils::ProgressBar bar(steps, "train",
                                   {.out = &std::cout, .initial = initial, .unit = "step"});
  train([&](const Progress& p) {
    log.add(p);
    on_step(p);
    bar.set_postfix("loss", p.loss);
    bar.set_postfix("val", log.last_val);
    bar.set_postfix("tok/s", std::round(p.tokens_per_second));
    bar.update(p.step - bar.n());
  });
  bar.close();
}

/// The train and validation curves of log, with the uniform guess (labelled uniform_label) and
/// the bigram model as flat lines, into path (PNG).
inline void plot_loss_curves(const LossLog& log, const std::string& uniform_label, double uniform,
                             double bigram, const std::string& path, const std::string& title,
                             const std::string& caption) {
  const double first = log.val_steps.front(), last = log.train_steps.back();
  minigrad::viz::plot_curves({{"train (every step)", log.train_steps, log.train_losses},
                              {"validation", log.val_steps, log.val_losses},
                              {uniform_label, {first, last}, {uniform, uniform}, false, true},
                              {"bigram baseline", {first, last}, {bigram, bigram}, false, true}},
                             path,
                             {.title = title, .y_label = "loss", .caption = caption, .y_min = 0});
}

/// Profiles `steps` training steps after one warm-up step, as torch.profiler with
/// schedule(wait=0, warmup=1, active=steps): prints the table's 25 rows of most self CPU time
/// (added up over the steps; "Self thr CPU" next to the wall time shows what the OS took away)
/// and writes the Chrome trace to trace_path. first_step numbers the warm-up step.
inline void profile_steps(const std::function<void()>& step, int first_step, int steps,
                          const std::string& trace_path) {
  minigrad::profiler::Profile prof(minigrad::profiler::schedule(0, 1, steps, 1));
  for (int i = 0; i < steps + 1; ++i) {
    step();
    prof.step();
  }
  prof.stop();
  std::cout << "\n"
            << steps << " training steps (" << first_step + 1 << " to " << first_step + steps
            << ", after one warm-up step), the 25 rows of most self CPU:\n"
            << prof.table("self_cpu_time_total", 25);
  prof.export_chrome_trace(trace_path);
  std::printf("trace: %s (open it in https://ui.perfetto.dev)\n", trace_path.c_str());
}

}  // namespace tiny_lm
