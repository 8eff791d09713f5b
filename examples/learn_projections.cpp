// learn_projections: the lesson's main example. The query and key projections are nn::Linear
// layers without bias, trained by gradient descent from a seeded random start until the adjective
// "warm" attends to the nouns "jacket" and "winter", and the words with nothing to look for spread
// their attention evenly: the table the lesson built by hand with W_Q and W_K, found by training.
//
//   learn_projections [--seed 0] [--steps 1000] [--optimizer sgd|adam] [--lr 2]
//                     [--picture learn_projections.png] [--loss-log losses.txt]
//
// Read it top to bottom: the knobs, the data, the model, the training loop; the printing and the
// command line come after. (The pattern can also emerge without a target: examples/emergent.cpp.)
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <minigrad/minigrad.h>
#include <minigrad/utils.h>
#include <minigrad/viz.h>

namespace mg = minigrad;
namespace nn = minigrad::nn;

namespace {

// ---------------------------------------------------------------- the knobs

struct Knobs {
  std::uint64_t seed = 0;  // the initial projections
  int steps = 1000;        // at most; training stops when the table is reached
  std::string optimizer = "sgd";
  double lr = 0;                                  // 0: 2 for sgd, 0.1 for adam
  std::string picture = "learn_projections.png";  // before/after heatmap ("": none)
  std::string loss_log;                           // "step loss" per step ("": none)
};

// ---------------------------------------------------------------- the data

const std::vector<std::string> kWords = {"warm", "jacket", "for", "winter"};

/// One row of features per word: adjective, noun, neither.
mg::Tensor words() {
  return mg::tensor({{1.0, 0.0, 0.0},    // warm   adjective
                     {0.0, 1.0, 0.0},    // jacket noun
                     {0.0, 0.0, 1.0},    // for    neither
                     {0.0, 1.0, 0.0}});  // winter noun
}

/// The lesson's table: warm splits its attention over the two nouns; the others spread evenly.
mg::Tensor target_table() {
  return mg::tensor({{0.0, 0.5, 0.0, 0.5},  // warm looks for the nouns
                     {0.25, 0.25, 0.25, 0.25},
                     {0.25, 0.25, 0.25, 0.25},
                     {0.25, 0.25, 0.25, 0.25}});
}

// ---------------------------------------------------------------- the model

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

// Printing, below the training loop.
bool reached(const mg::Tensor& table);
void print_table(const char* title, const mg::Tensor& table);
void print_heatmap(const mg::Tensor& table);
void print_what_was_learned(const Attention& model);
bool draw(const Knobs& k, const mg::Tensor& before, const mg::Tensor& after, bool ok, int step);

// ---------------------------------------------------------------- training

int train(Knobs k) {
  if (k.lr == 0) k.lr = k.optimizer == "adam" ? 0.1 : 2.0;
  mg::manual_seed(k.seed);
  mg::Tensor X = words(), target = target_table();
  Attention model;
  std::cout << model << "\n\n";

  mg::Tensor before;
  {
    mg::NoGradGuard no_grad;
    before = mg::softmax(model.scores(X), -1);
  }
  print_table("attention before training:", before);

  std::unique_ptr<mg::optim::Optimizer> opt;
  if (k.optimizer == "adam")
    opt = std::make_unique<mg::optim::Adam>(model.parameters(), mg::optim::AdamOptions(k.lr));
  else
    opt = std::make_unique<mg::optim::SGD>(model.parameters(), mg::optim::SGDOptions(k.lr));

  std::FILE* log = k.loss_log.empty() ? nullptr : std::fopen(k.loss_log.c_str(), "w");
  if (!k.loss_log.empty() && !log) {
    std::fprintf(stderr, "could not write %s\n", k.loss_log.c_str());
    return 2;
  }
  // The loss's floor: the target rows' own entropy (the loss minus it is the KL divergence).
  const double target_entropy = -(0.5 * std::log(0.5) * 2 + 3 * 4 * 0.25 * std::log(0.25)) / 4;
  // On a terminal the bar redraws one line; into a file or a pipe it prints plain lines.
  mg::utils::ProgressBar bar(k.steps, "train", {.out = &std::cout, .unit = "step"});
  mg::Tensor table;
  int step = 0;  // updates made so far
  for (;; ++step) {
    // Cross-entropy against the target rows (KL divergence up to a constant): its gradient
    // softmax - target does not fade as the weights saturate, unlike a squared error.
    mg::Tensor logp = mg::log_softmax(model.scores(X), -1);
    mg::Tensor loss = -(target * logp).sum(-1).mean();
    table = logp.detach().exp();
    bool done = reached(table) || step == k.steps;
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
  print_what_was_learned(model);

  bool ok = reached(table);
  std::printf("\n%s after %d steps (%s, lr %g, seed %llu)\n",
              ok ? "target reached" : "target NOT reached", step, k.optimizer.c_str(), k.lr,
              static_cast<unsigned long long>(k.seed));
  if (!draw(k, before, table, ok, step)) return 2;
  return ok ? 0 : 1;
}

// ---------------------------------------------------------------- printing

/// The lesson's target reached: warm splits its attention over the two nouns, the others even.
bool reached(const mg::Tensor& table) {
  auto v = table.to_vector<double>();
  bool warm = v[1] >= 0.45 && v[3] >= 0.45 && v[0] <= 0.05;
  bool even = true;
  for (std::size_t i = 4; i < 16; ++i) even &= std::fabs(v[i] - 0.25) <= 0.02;
  return warm && even;
}

/// Prints a table as the lesson does with np.round(table, 2), with the words as labels.
void print_table(const char* title, const mg::Tensor& table) {
  const std::size_t n = kWords.size();
  std::printf("%s\n%8s", title, "");
  for (const auto& w : kWords) std::printf("%8s", w.c_str());
  std::printf("\n");
  auto v = table.to_vector<double>();
  for (std::size_t i = 0; i < n; ++i) {
    std::printf("%8s", kWords[i].c_str());
    for (std::size_t j = 0; j < n; ++j) std::printf("%8.2f", v[i * n + j]);
    std::printf("\n");
  }
}

/// The table as shaded blocks, darker for more attention (for terminals); the darkest is the
/// table's maximum. A cell is 8 columns wide (a space, 3 blocks of 2, a space), as its label.
void print_heatmap(const mg::Tensor& table) {
  static const char* kShades[] = {"  ", "░░", "▒▒", "▓▓", "██"};
  const std::size_t n = kWords.size();
  auto v = table.to_vector<double>();
  const double max = *std::max_element(v.begin(), v.end());
  std::printf("%8s", "");
  for (const auto& w : kWords) std::printf(" %-7.6s", w.c_str());
  std::printf("\n");
  for (std::size_t i = 0; i < n; ++i) {
    std::printf("%8s", kWords[i].c_str());
    for (std::size_t j = 0; j < n; ++j) {
      const char* shade =
          kShades[std::min(static_cast<int>(std::lround(v[i * n + j] / max * 4)), 4)];
      std::printf(" %s%s%s ", shade, shade, shade);
    }
    std::printf("\n");
  }
  std::printf("%8s (blank 0, %s %.2f)\n", "", kShades[4], max);
}

/// What the projections learned: score(i, j) = x_i^T (W_q^T W_k) x_j, so M = W_q^T W_k says how
/// much a word with feature r (row) wants a word with feature c (column).
void print_what_was_learned(const Attention& model) {
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
}

/// The before/after heatmap as a PNG (k.picture; nothing when empty). False when not written.
bool draw(const Knobs& k, const mg::Tensor& before, const mg::Tensor& after, bool ok, int step) {
  if (k.picture.empty()) return true;
  char caption[160];
  std::snprintf(caption, sizeof caption,
                "learn_projections --seed %llu --optimizer %s --lr %g: %s after %d steps",
                static_cast<unsigned long long>(k.seed), k.optimizer.c_str(), k.lr,
                ok ? "target reached" : "target NOT reached", step);
  try {
    mg::viz::attention_heatmap(mg::stack({before, after}, 0), kWords, kWords, k.picture,
                               "attention of each word (softmax of q k^T)",
                               {.caption = caption,
                                .x_label = "the word attended to",
                                .y_label = "the word that looks",
                                .panel_titles = {"before training", "after training"}});
  } catch (const mg::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return false;
  }
  std::printf("picture: %s\n", k.picture.c_str());
  return true;
}

}  // namespace

// ---------------------------------------------------------------- the command line

int main(int argc, char** argv) {
  CLI::App app{"Train query/key projections until 'warm' attends to the nouns."};
  Knobs k;
  app.add_option("--seed", k.seed, "random seed for the initial projections")
      ->capture_default_str();
  app.add_option("--steps", k.steps, "maximum number of training steps")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--optimizer", k.optimizer, "sgd or adam")
      ->check(CLI::IsMember({"sgd", "adam"}))
      ->capture_default_str();
  app.add_option("--lr", k.lr, "learning rate [2 for sgd, 0.1 for adam]")
      ->check(CLI::PositiveNumber);
  app.add_option("--picture", k.picture, "PNG file for the before/after attention ('' for none)")
      ->capture_default_str();
  app.add_option("--loss-log", k.loss_log, "write 'step loss' for every step to this file");
  bool emergent = false;
  app.add_flag("--emergent", emergent, "moved: the emergent variant is its own example, emergent");
  CLI11_PARSE(app, argc, argv);
  if (emergent) {
    std::fprintf(stderr,
                 "learn_projections: --emergent is its own example now: run "
                 "build/examples/emergent (same options: --seed, --steps, --lr, --dim, "
                 "--value-dim, --picture)\n");
    return 2;
  }
  return train(k);
}
