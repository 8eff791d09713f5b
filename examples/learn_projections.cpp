// learn_projections: the lesson's main example. The query and key projections are nn::Linear
// layers without bias, trained by gradient descent from a seeded random start until the adjective
// "warm" attends to the nouns "jacket" and "winter", and the words with nothing to look for spread
// their attention evenly: the table the lesson built by hand with W_Q and W_K, found by training.
//
//   learn_projections [--seed 0] [--steps 1000] [--lr 2] [--optimizer sgd|adam]
//                     [--picture learn_projections.png] [--loss-log losses.txt]
//   learn_projections --emergent [--seed 0] [--steps 100] [--lr 0.05] [--dim 8]
//                     [--picture emergent_attention.png]      (see emergent.cpp)
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <minigrad/minigrad.h>
#include <minigrad/utils.h>
#include <minigrad/viz.h>

#include "emergent.h"

namespace mg = minigrad;
namespace nn = minigrad::nn;

namespace {

const std::vector<std::string> kWords = {"warm", "jacket", "for", "winter"};

/// The lesson's attention(Q, K) = softmax(Q K^T), one row per word.
struct Attention : nn::Module {
  nn::Linear W_q{3, 3, /*bias=*/false};
  nn::Linear W_k{3, 3, /*bias=*/false};
  Attention() : nn::Module("Attention") {
    register_module("W_q", W_q);
    register_module("W_k", W_k);
  }
  /// Raw scores q k^T for every (looking word, looked-at word) pair.
  mg::Tensor scores(const mg::Tensor& X) const {
    return mg::matmul(W_q(X), W_k(X).transpose(-2, -1));
  }
};

/// Prints a table as the lesson does with np.round(table, 2), with the words as labels.
void print_table(const char* title, const mg::Tensor& table) {
  std::printf("%s\n%8s", title, "");
  for (const auto& w : kWords) std::printf("%8s", w.c_str());
  std::printf("\n");
  auto v = table.to_vector<double>();
  for (std::size_t i = 0; i < kWords.size(); ++i) {
    std::printf("%8s", kWords[i].c_str());
    for (std::size_t j = 0; j < kWords.size(); ++j) std::printf("%8.2f", v[i * 4 + j]);
    std::printf("\n");
  }
}

/// The table as shaded blocks, darker for more attention (for terminals); the darkest is the
/// table's maximum. A cell is 8 columns wide (a space, 3 blocks of 2, a space), as its label.
void print_heatmap(const mg::Tensor& table) {
  static const char* kShades[] = {"  ", "░░", "▒▒", "▓▓", "██"};
  auto v = table.to_vector<double>();
  const double max = *std::max_element(v.begin(), v.end());
  std::printf("%8s", "");
  for (const auto& w : kWords) std::printf(" %-7.6s", w.c_str());
  std::printf("\n");
  for (std::size_t i = 0; i < 4; ++i) {
    std::printf("%8s", kWords[i].c_str());
    for (std::size_t j = 0; j < 4; ++j) {
      int level = static_cast<int>(std::lround(v[i * 4 + j] / max * 4));
      std::printf(" %s%s%s ", kShades[std::min(level, 4)], kShades[std::min(level, 4)],
                  kShades[std::min(level, 4)]);
    }
    std::printf("\n");
  }
  std::printf("%8s (blank 0, %s %.2f)\n", "", kShades[4], max);
}

/// The lesson's target: warm splits its attention over the two nouns; the others spread evenly.
bool reached(const mg::Tensor& table) {
  auto v = table.to_vector<double>();
  bool warm = v[1] >= 0.45 && v[3] >= 0.45 && v[0] <= 0.05;
  bool even = true;
  for (std::size_t i = 4; i < 16; ++i) even &= std::fabs(v[i] - 0.25) <= 0.02;
  return warm && even;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Train query/key projections until 'warm' attends to the nouns."};
  std::uint64_t seed = 0;
  int steps = 1000;
  double lr = 0;  // 0: the optimizer's default below
  std::string optimizer = "sgd";
  std::string picture = "learn_projections.png";
  std::string loss_log;
  const EmergentOptions emergent_defaults;
  app.add_option("--seed", seed, "random seed for the initial projections")->capture_default_str();
  app.add_option("--steps", steps,
                 "maximum number of training steps [1000; --emergent: " +
                     std::to_string(emergent_defaults.steps) + "]")
      ->check(CLI::PositiveNumber);
  app.add_option("--lr", lr, "learning rate [2 for sgd, 0.1 for adam; --emergent: 0.05]")
      ->check(CLI::PositiveNumber);
  app.add_option("--optimizer", optimizer, "sgd or adam (not with --emergent)")
      ->check(CLI::IsMember({"sgd", "adam"}))
      ->capture_default_str();
  app.add_option("--picture", picture,
                 "PNG file for the before/after attention ('' for none) [learn_projections.png; "
                 "--emergent: emergent_attention.png]");
  app.add_option("--loss-log", loss_log,
                 "write 'step loss' for every step to this file (not with --emergent)");
  bool emergent = false;
  std::int64_t dim = emergent_defaults.dim;
  app.add_flag("--emergent", emergent,
               "no target table: W_q, W_k, W_v learn where adjectives look from a prediction task "
               "over a generated corpus");
  std::int64_t value_dim = emergent_defaults.value_dim;
  app.add_option("--dim", dim, "--emergent only: d_k")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--value-dim", value_dim, "--emergent only: d_v")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  if (emergent) {
    for (const char* flag : {"--optimizer", "--loss-log"})
      if (app.count(flag)) {
        std::fprintf(stderr,
                     "%s does not apply with --emergent (it trains with its own Adam and writes "
                     "no loss log); drop %s or --emergent\n",
                     flag, flag);
        return 2;
      }
    EmergentOptions o;
    o.seed = seed;
    if (app.count("--steps")) o.steps = steps;
    if (lr != 0) o.lr = lr;
    o.dim = dim;
    o.value_dim = value_dim;
    o.picture = app.count("--picture") ? picture : "emergent_attention.png";
    return run_emergent(o);
  }

  if (lr == 0) lr = optimizer == "adam" ? 0.1 : 2.0;
  mg::manual_seed(seed);
  mg::Tensor X = mg::tensor({{1.0, 0.0, 0.0},            // warm   adjective
                             {0.0, 1.0, 0.0},            // jacket noun
                             {0.0, 0.0, 1.0},            // for    neither
                             {0.0, 1.0, 0.0}});          // winter noun
  mg::Tensor target = mg::tensor({{0.0, 0.5, 0.0, 0.5},  // warm looks for the nouns
                                  {0.25, 0.25, 0.25, 0.25},
                                  {0.25, 0.25, 0.25, 0.25},
                                  {0.25, 0.25, 0.25, 0.25}});
  Attention model;
  std::printf("%s\n\n",
              [&] {
                std::ostringstream os;
                os << model;
                return os.str();
              }()
                  .c_str());

  mg::Tensor before;
  {
    mg::NoGradGuard no_grad;
    before = mg::softmax(model.scores(X), -1);
  }
  print_table("attention before training:", before);

  // Cross-entropy against the target rows (KL divergence up to a constant): its gradient
  // softmax - target does not fade as the weights saturate, unlike a squared error.
  std::unique_ptr<mg::optim::Optimizer> opt;
  if (optimizer == "adam")
    opt = std::make_unique<mg::optim::Adam>(model.parameters(), mg::optim::AdamOptions(lr));
  else
    opt = std::make_unique<mg::optim::SGD>(model.parameters(), mg::optim::SGDOptions(lr));
  const double target_entropy = -(0.5 * std::log(0.5) * 2 + 3 * 4 * 0.25 * std::log(0.25)) / 4;

  std::FILE* log = loss_log.empty() ? nullptr : std::fopen(loss_log.c_str(), "w");
  if (!loss_log.empty() && !log) {
    std::fprintf(stderr, "could not write %s\n", loss_log.c_str());
    return 2;
  }
  mg::Tensor table;
  int step = 0;  // updates made so far
  // On a terminal the bar redraws one line; into a file or a pipe it prints plain lines.
  mg::utils::ProgressBar bar(steps, "train", {.out = &std::cout, .unit = "step"});
  for (;; ++step) {
    mg::Tensor logp = mg::log_softmax(model.scores(X), -1);
    mg::Tensor loss = -(target * logp).sum(-1).mean();
    table = logp.detach().exp();
    bool done = reached(table) || step == steps;
    if (log) std::fprintf(log, "%d %.9g\n", step, loss.item<double>());
    bar.set_postfix("loss", loss.item<double>());
    bar.set_postfix("KL to target", loss.item<double>() - target_entropy);
    if (step > 0) bar.update();  // the loss after `step` updates
    if (done) break;
    opt->zero_grad();
    loss.backward();
    opt->step();
  }
  bar.close();
  if (log) std::fclose(log);
  std::printf("\n");
  print_table("attention after training:", table);
  std::printf("\n");
  print_heatmap(table);

  // What the projections learned: score(i, j) = x_i^T (W_q^T W_k) x_j, so M = W_q^T W_k says how
  // much a word with feature r (row) wants a word with feature c (column).
  std::cout << "\nW_q.weight = " << model.W_q->weight << "\nW_k.weight = " << model.W_k->weight
            << "\n";
  mg::Tensor M = mg::matmul(model.W_q->weight.t(), model.W_k->weight).detach();
  auto m = M.to_vector<double>();
  const char* features[] = {"adjective", "noun", "neither"};
  std::printf(
      "\nM = W_q^T W_k (row: the looking word's feature, column: the looked-at word's):\n%12s", "");
  for (auto f : features) std::printf("%11s", f);
  std::printf("\n");
  for (int r = 0; r < 3; ++r) {
    std::printf("%12s", features[r]);
    for (int c = 0; c < 3; ++c) std::printf("%11.2f", m[r * 3 + c]);
    std::printf("\n");
  }
  std::printf(
      "An adjective's row rewards nouns (%.2f) over adjectives (%.2f) and other words (%.2f);\n"
      "the other rows are flat, so nouns and 'for' spread their attention evenly.\n",
      m[1], m[0], m[2]);

  bool ok = reached(table);
  std::printf("\n%s after %d steps (%s, lr %g, seed %llu)\n",
              ok ? "target reached" : "target NOT reached", step, optimizer.c_str(), lr,
              static_cast<unsigned long long>(seed));
  if (!picture.empty()) {
    char caption[160];
    std::snprintf(caption, sizeof caption,
                  "learn_projections --seed %llu --optimizer %s --lr %g: %s after %d steps",
                  static_cast<unsigned long long>(seed), optimizer.c_str(), lr,
                  ok ? "target reached" : "target NOT reached", step);
    try {
      mg::viz::attention_heatmap(mg::stack({before, table}, 0), kWords, kWords, picture,
                                 "attention of each word (softmax of q k^T)",
                                 {.caption = caption,
                                  .x_label = "the word attended to",
                                  .y_label = "the word that looks",
                                  .panel_titles = {"before training", "after training"}});
      std::printf("picture: %s\n", picture.c_str());
    } catch (const mg::Error& e) {
      std::fprintf(stderr, "%s\n", e.what());
      return 2;
    }
  }
  return ok ? 0 : 1;
}
