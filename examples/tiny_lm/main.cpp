// tiny_lm: a small GPT-style language model trained from scratch on a language it generates itself
// (see language.h and docs/tiny_lm.md).
//
//   tiny_lm [--steps 1000] [--layers 2] [--heads 4] [--dim 64] [--block 24] [--batch 32]
//           [--lr 3e-3] [--dropout 0.1] [--seed 0] [--sample "the"] [--temperature 0.8]
//           [--top-k 5] [--curve loss_curve.png] [--attention attention.png]
//           [--save tiny_lm.safetensors] [--save-every 200] [--resume tiny_lm.safetensors]
#include <cairo.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "gpt.h"
#include "language.h"

using namespace tiny_lm;

namespace {

void progress_bar(const Progress& p, int steps, double last_val) {
  const int width = 24;
  int filled = static_cast<int>(static_cast<double>(width) * p.step / steps);
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.resize(width, '.');
  double left = p.seconds / p.step * (steps - p.step);
  std::printf("\rstep %5d/%d [%s] loss %.3f", p.step, steps, bar.c_str(), p.loss);
  if (last_val >= 0) std::printf("  val %.3f", last_val);
  std::printf("  %.1fk tok/s  %3.0fs left ", p.tokens_per_second / 1000, left);
  std::fflush(stdout);
}

void text(cairo_t* cr, double x, double y, const std::string& s, double size = 13) {
  cairo_set_font_size(cr, size);
  cairo_move_to(cr, x, y);
  cairo_show_text(cr, s.c_str());
}

/// Train and validation loss against steps, with the two baselines as dashed lines.
bool write_curve(const std::string& path, const std::vector<std::pair<int, double>>& train,
                 const std::vector<std::pair<int, double>>& val, double uniform, double bigram) {
  const double W = 720, H = 440, left = 70, right = 20, top = 50, bottom = 50;
  cairo_surface_t* s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, (int)W, (int)H);
  cairo_t* cr = cairo_create(s);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  const double x_max = train.empty() ? 1 : train.back().first, y_max = std::ceil(uniform + 0.2);
  auto X = [&](double step) { return left + (W - left - right) * step / x_max; };
  auto Y = [&](double loss) {
    return H - bottom - (H - top - bottom) * std::min(loss, y_max) / y_max;
  };
  cairo_set_source_rgb(cr, 0, 0, 0);
  text(cr, left, 30, "tiny_lm: cross-entropy (nats per token)", 16);
  cairo_set_line_width(cr, 1);
  cairo_move_to(cr, left, top);
  cairo_line_to(cr, left, H - bottom);
  cairo_line_to(cr, W - right, H - bottom);
  cairo_stroke(cr);
  for (int i = 0; i <= static_cast<int>(y_max); ++i) {
    text(cr, left - 24, Y(i) + 4, std::to_string(i));
    cairo_move_to(cr, left - 4, Y(i));
    cairo_line_to(cr, left, Y(i));
    cairo_stroke(cr);
  }
  for (int i = 0; i <= 4; ++i) {
    double step = x_max * i / 4;
    text(cr, X(step) - 12, H - bottom + 18, std::to_string(static_cast<int>(step)));
  }
  text(cr, (W - left) / 2 + left - 15, H - 12, "step");
  auto dashed = [&](double y, double r, double g, double b, const std::string& label) {
    const double dash[] = {6, 4};
    cairo_set_dash(cr, dash, 2, 0);
    cairo_set_source_rgb(cr, r, g, b);
    cairo_move_to(cr, left, Y(y));
    cairo_line_to(cr, W - right, Y(y));
    cairo_stroke(cr);
    cairo_set_dash(cr, nullptr, 0, 0);
    text(cr, W - right - 230, Y(y) - 6, label);
  };
  char buf[96];
  std::snprintf(buf, sizeof buf, "uniform guess, log V = %.2f", uniform);
  dashed(uniform, 0.5, 0.5, 0.5, buf);
  std::snprintf(buf, sizeof buf, "bigram baseline = %.2f", bigram);
  dashed(bigram, 0.8, 0.4, 0.0, buf);
  auto curve = [&](const std::vector<std::pair<int, double>>& pts, double r, double g, double b,
                   double width) {
    cairo_set_source_rgb(cr, r, g, b);
    cairo_set_line_width(cr, width);
    for (std::size_t i = 0; i < pts.size(); ++i)
      (i ? cairo_line_to : cairo_move_to)(cr, X(pts[i].first), Y(pts[i].second));
    cairo_stroke(cr);
  };
  curve(train, 0.55, 0.7, 0.95, 1);
  curve(val, 0.1, 0.25, 0.7, 2.5);
  cairo_set_source_rgb(cr, 0.55, 0.7, 0.95);
  text(cr, left + 20, top + 20, "train (every step)");
  cairo_set_source_rgb(cr, 0.1, 0.25, 0.7);
  text(cr, left + 20, top + 38, "validation");
  cairo_status_t status = cairo_surface_write_to_png(s, path.c_str());
  cairo_destroy(cr);
  cairo_surface_destroy(s);
  return status == CAIRO_STATUS_SUCCESS;
}

/// One head's attention over a phrase, as a labelled heatmap.
bool write_attention(const std::string& path, const std::vector<std::string>& words,
                     const std::vector<double>& w, const std::string& title) {
  const double cell = 56, left = 110, top = 110;
  const auto n = static_cast<int>(words.size());
  cairo_surface_t* s = cairo_image_surface_create(
      CAIRO_FORMAT_ARGB32, std::max(600, (int)(left + cell * n + 30)), (int)(top + cell * n + 50));
  cairo_t* cr = cairo_create(s);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_source_rgb(cr, 0, 0, 0);
  text(cr, 20, 30, title, 15);
  text(cr, 20, 52, "rows: the word that looks; columns: the earlier word it attends to", 12);
  for (int j = 0; j < n; ++j) {
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_save(cr);
    cairo_move_to(cr, left + cell * j + cell / 2 + 4, top - 8);
    cairo_rotate(cr, -0.6);
    cairo_set_font_size(cr, 13);
    cairo_show_text(cr, words[static_cast<std::size_t>(j)].c_str());
    cairo_restore(cr);
    text(cr, 20, top + cell * j + cell / 2 + 5, words[static_cast<std::size_t>(j)]);
  }
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double a = w[static_cast<std::size_t>(i * n + j)];
      cairo_set_source_rgb(cr, 1 - 0.85 * a, 1 - 0.55 * a, 1 - 0.2 * a);
      cairo_rectangle(cr, left + cell * j, top + cell * i, cell - 2, cell - 2);
      cairo_fill(cr);
      if (j <= i) {
        char num[16];
        std::snprintf(num, sizeof num, "%.2f", a);
        double ink = a > 0.6 ? 1 : 0;
        cairo_set_source_rgb(cr, ink, ink, ink);
        text(cr, left + cell * j + 12, top + cell * i + cell / 2 + 4, num, 12);
      }
    }
  cairo_status_t status = cairo_surface_write_to_png(s, path.c_str());
  cairo_destroy(cr);
  cairo_surface_destroy(s);
  return status == CAIRO_STATUS_SUCCESS;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Train a tiny GPT-style language model on a generated language."};
  Config config;
  TrainOptions opt;
  std::uint64_t seed = 0;
  std::string prompt = "the", curve_path = "loss_curve.png", attention_path = "attention.png";
  std::string probe = "the soup for lunch is hot .";
  double temperature = 0.8;
  int top_k = 5, samples = 5;
  std::size_t train_phrases = 20000;
  app.add_option("--steps", opt.steps, "training steps")->check(CLI::PositiveNumber);
  app.add_option("--batch", opt.batch, "windows per step")->check(CLI::PositiveNumber);
  app.add_option("--block", config.block_size, "context length")->check(CLI::Range(2, 256));
  app.add_option("--layers", config.layers, "transformer blocks")->check(CLI::PositiveNumber);
  app.add_option("--heads", config.heads, "attention heads")->check(CLI::PositiveNumber);
  app.add_option("--dim", config.d_model, "model width")->check(CLI::PositiveNumber);
  app.add_option("--dropout", config.dropout, "dropout probability")->check(CLI::Range(0.0, 1.0));
  app.add_flag(
      "--no-tie", [&](std::int64_t) { config.tie_weights = false; },
      "a separate head instead of the token embedding's weight");
  app.add_option("--lr", opt.lr, "peak learning rate (cosine schedule, warm-up 50 steps)");
  app.add_option("--eval-every", opt.eval_every, "steps between validation losses")
      ->check(CLI::PositiveNumber);
  app.add_option("--seed", seed, "seed of the initial weights and dropout");
  app.add_option("--phrases", train_phrases, "training phrases to generate");
  app.add_option("--sample", prompt, "prompt to continue after training");
  app.add_option("--samples", samples, "how many phrases to sample");
  app.add_option("--temperature", temperature, "sampling temperature")->check(CLI::PositiveNumber);
  app.add_option("--top-k", top_k, "sample from the k most likely tokens (0: all)");
  app.add_option("--curve", curve_path, "PNG of the loss curves ('' for none)");
  app.add_option("--attention", attention_path, "PNG of one head's attention ('' for none)");
  app.add_option("--probe", probe, "the phrase whose attention is drawn");
  std::string save_path, resume_path;
  int save_every = 0;
  app.add_option("--save", save_path,
                 "checkpoint file (safetensors; the optimizer goes to FILE.optim), written at "
                 "the end and every --save-every steps");
  app.add_option("--save-every", save_every, "steps between checkpoints (0: only at the end)");
  app.add_option("--resume", resume_path, "continue from this checkpoint");
  CLI11_PARSE(app, argc, argv);
  opt.min_lr = opt.lr / 10;
  if (config.d_model % config.heads != 0) {
    std::fprintf(stderr, "--dim (%lld) must be divisible by --heads (%lld)\n",
                 static_cast<long long>(config.d_model), static_cast<long long>(config.heads));
    return 2;
  }

  Language lang;
  std::vector<std::int64_t> train = lang.stream(train_phrases, 1000 + 0);
  std::vector<std::int64_t> validation = lang.stream(2000, 2000);
  config.vocab_size = lang.vocab_size();
  const double uniform = std::log(static_cast<double>(lang.vocab_size()));
  const double bigram = bigram_loss(train, validation, lang.vocab_size());
  std::mt19937_64 show(3);
  std::printf("language: %lld words; %zu training tokens, %zu validation tokens; e.g.\n",
              static_cast<long long>(lang.vocab_size()), train.size(), validation.size());
  for (int i = 0; i < 3; ++i) {
    std::string p;
    for (const auto& w : lang.phrase(show)) p += w + " ";
    std::printf("  %s\n", p.c_str());
  }
  std::printf("baselines: uniform guess %.3f, bigram %.3f nats per token\n\n", uniform, bigram);

  mg::manual_seed(seed);
  GPT model(config);
  std::printf("GPT: %lld layers, %lld heads, d_model %lld, context %lld, %lld parameters%s\n",
              static_cast<long long>(config.layers), static_cast<long long>(config.heads),
              static_cast<long long>(config.d_model), static_cast<long long>(config.block_size),
              static_cast<long long>(model.num_parameters()),
              config.tie_weights ? " (head tied to the token embedding)" : "");

  Trainer trainer(model, opt);
  if (!resume_path.empty()) {
    try {
      load_checkpoint(trainer, resume_path);
    } catch (const mg::Error& e) {
      std::fprintf(stderr, "%s\n", e.what());
      return 2;
    }
    std::printf("resumed from %s at step %d\n", resume_path.c_str(), trainer.step);
  }
  std::vector<std::pair<int, double>> train_curve, val_curve;
  double last_val = -1, tokens_per_second = 0;
  val_curve.emplace_back(trainer.step, evaluate(model, validation, opt.eval_windows));
  trainer.run(train, validation, [&](const Progress& p) {
    train_curve.emplace_back(p.step, p.loss);
    if (p.val_loss >= 0) {
      last_val = p.val_loss;
      val_curve.emplace_back(p.step, p.val_loss);
    }
    tokens_per_second = p.tokens_per_second;
    if (!save_path.empty() && save_every > 0 && p.step % save_every == 0 && p.step < opt.steps)
      save_checkpoint(trainer, save_path);
    if (p.step % 10 == 0 || p.val_loss >= 0 || p.step == opt.steps)
      progress_bar(p, opt.steps, last_val);
  });
  std::printf(
      "\n\nvalidation loss %.3f (uniform guess %.3f, bigram %.3f); %.0f tokens/s on %d "
      "thread%s (mg::set_num_threads; %u hardware threads)\n",
      last_val, uniform, bigram, tokens_per_second, mg::get_num_threads(),
      mg::get_num_threads() == 1 ? "" : "s", std::thread::hardware_concurrency());

  if (!save_path.empty()) {
    save_checkpoint(trainer, save_path);
    std::printf("checkpoint: %s (+ %s.optim) at step %d\n", save_path.c_str(), save_path.c_str(),
                trainer.step);
  }

  // Samples, and how often the generated adjectives agree with their nouns.
  std::mt19937_64 rng(seed + 17);
  std::printf("\nsamples (temperature %g, top-k %d) after \"%s\":\n", temperature, top_k,
              prompt.c_str());
  for (int i = 0; i < samples; ++i) {
    auto out = generate(model, lang.encode(prompt), 16, temperature, top_k, rng);
    std::string s = lang.decode(out);
    std::printf("  %s\n", s.substr(0, s.find(" .") + 2).c_str());
  }
  auto long_text = generate(model, lang.encode("."), 3000, temperature, top_k, rng);
  Language::Agreement ag = lang.agreement(long_text);
  std::printf(
      "agreement in 3000 generated tokens: %lld of %lld adjective-noun pairs agree (%.3f; "
      "chance %.3f)\n",
      static_cast<long long>(ag.agreeing), static_cast<long long>(ag.pairs), ag.rate(),
      lang.chance_agreement());

  if (!curve_path.empty() && write_curve(curve_path, train_curve, val_curve, uniform, bigram))
    std::printf("loss curves: %s\n", curve_path.c_str());
  if (!attention_path.empty()) {
    // The head of the last layer that looks hardest from the adjective back to its noun.
    std::vector<std::int64_t> ids = lang.encode(probe);
    std::vector<std::string> words;
    for (auto id : ids) words.push_back(lang.word(id));
    std::vector<mg::Tensor> att;
    {
      mg::NoGradGuard no_grad;
      model.eval();
      std::vector<double> x(ids.begin(), ids.end());
      model.forward(mg::tensor(x, {1, static_cast<std::int64_t>(ids.size())}, mg::kInt64), &att);
    }
    std::size_t adj = 0, noun = 0;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (lang.is_adjective(ids[i])) adj = i;
      if (lang.is_noun(ids[i]) && noun == 0) noun = i;
    }
    const auto n = static_cast<std::int64_t>(ids.size());
    double best = -1;
    std::int64_t best_layer = 0, best_head = 0;
    for (std::size_t l = 0; l < att.size(); ++l)
      for (std::int64_t h = 0; h < config.heads; ++h) {
        // Attention from the word before the adjective ("is": it must predict the adjective).
        double a = att[l]
                       .select(0, 0)
                       .select(0, h)
                       .select(0, static_cast<std::int64_t>(adj) - 1)
                       .select(0, static_cast<std::int64_t>(noun))
                       .item<double>();
        if (a > best) {
          best = a;
          best_layer = static_cast<std::int64_t>(l);
          best_head = h;
        }
      }
    std::vector<double> w = att[static_cast<std::size_t>(best_layer)]
                                .select(0, 0)
                                .select(0, best_head)
                                .reshape({n * n})
                                .to_vector<double>();
    char title[160];
    std::snprintf(title, sizeof title,
                  "layer %lld, head %lld: \"%s\" looks back at \"%s\" (%.2f) to predict \"%s\"",
                  static_cast<long long>(best_layer), static_cast<long long>(best_head),
                  words[adj - 1].c_str(), words[noun].c_str(), best, words[adj].c_str());
    if (write_attention(attention_path, words, w, title))
      std::printf("attention: %s (%s)\n", attention_path.c_str(), title);
  }
  return 0;
}
