// tiny_lm: a small GPT-style language model trained from scratch on a language it generates itself
// (see language.h and docs/tiny_lm.md).
//
//   tiny_lm [--steps 1000] [--layers 2] [--heads 4] [--dim 64] [--block 24] [--batch 32]
//           [--lr 3e-3] [--dropout 0.1] [--seed 0] [--sample "the"] [--temperature 0.8]
//           [--top-k 5] [--curve tiny_lm_loss_curve.png] [--attention tiny_lm_attention.png]
//           [--attention-maps tiny_lm_heads.png]
//           [--save tiny_lm.safetensors] [--save-every 200] [--resume tiny_lm.safetensors]
//           [--profile tiny_lm_trace.json [--profile-steps 5]]
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <minigrad/utils.h>
#include <minigrad/viz.h>

#include "gpt.h"
#include "language.h"
#include "run_tools.h"

using namespace tiny_lm;

namespace {

int run(int argc, char** argv) {
  CLI::App app{"Train a tiny GPT-style language model on a generated language."};
  Config config;
  TrainOptions opt;
  std::uint64_t seed = 0;
  std::string prompt = "the", curve_path = "tiny_lm_loss_curve.png",
              attention_path = "tiny_lm_attention.png", attention_maps_path;
  std::string probe = "the soup for lunch is hot .";
  double temperature = 0.8;
  int top_k = 5, samples = 5;
  std::size_t train_phrases = 20000;
  app.option_defaults()->always_capture_default();  // --help shows each default
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
  app.add_option("--attention", attention_path,
                 "PNG of the attention of the heads of the layer with the clearest head "
                 "('' for none)");
  app.add_option("--probe", probe, "the phrase whose attention is drawn");
  app.add_option("--attention-maps", attention_maps_path,
                 "PNG of every head of every layer on --probe, as nn::capture_attention records "
                 "them ('' for none)");
  std::string save_path, resume_path;
  int save_every = 0;
  app.add_option("--save", save_path,
                 "checkpoint file (safetensors; the optimizer goes to FILE.optim), written at "
                 "the end and every --save-every steps");
  app.add_option("--save-every", save_every, "steps between checkpoints (0: only at the end)");
  app.add_option("--resume", resume_path, "continue from this checkpoint");
  bool show_summary = false;
  app.add_flag(
      "--summary", show_summary,
      "print the model's layers, output shapes and parameter counts (torchinfo's summary)");
  std::string profile_path;
  app.add_option("--profile", profile_path,
                 "profile --profile-steps training steps (after one warm-up step): print the "
                 "profiler's table, write this Chrome trace (Perfetto) and exit");
  int profile_steps_n = 5;
  app.add_option("--profile-steps", profile_steps_n,
                 "how many steps --profile adds up (one step alone crowns whichever op the OS "
                 "preempted)")
      ->check(CLI::Range(1, 1000));
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

  if (show_summary) {
    std::vector<double> x(static_cast<std::size_t>(opt.batch * config.block_size), 0.0);
    mg::utils::summary(model, mg::tensor(x, {opt.batch, config.block_size}, mg::kInt64));
    std::printf("\n");
  }

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
  if (!profile_path.empty()) {
    profile_steps(
        [&] {
          trainer.run(
              train, validation, [](const Progress&) {}, trainer.step + 1);
        },
        trainer.step + 1, profile_steps_n, profile_path);
    return 0;
  }
  LossLog log(trainer.step, evaluate(model, validation, opt.eval_windows));
  if (trainer.step >= opt.steps) {
    std::printf(
        "nothing to train: the checkpoint is at step %d and --steps is %d (give a larger --steps "
        "to train on); validation loss %.3f\n",
        trainer.step, opt.steps, log.last_val);
  } else {
    train_with_bar(
        opt.steps, trainer.step, log,
        [&](const std::function<void(const Progress&)>& on_step) {
          trainer.run(train, validation, on_step);
        },
        [&](const Progress& p) {
          if (!save_path.empty() && save_every > 0 && p.step % save_every == 0 &&
              p.step < opt.steps)
            save_checkpoint(trainer, save_path);
        });
    std::printf(
        "\nvalidation loss %.3f (uniform guess %.3f, bigram %.3f); %.0f tokens/s on %d "
        "thread%s (mg::set_num_threads; %u hardware threads)\n",
        log.last_val, uniform, bigram, log.tokens_per_second, mg::get_num_threads(),
        mg::get_num_threads() == 1 ? "" : "s", std::thread::hardware_concurrency());
  }

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

  char settings[200];
  std::snprintf(settings, sizeof settings,
                "tiny_lm: %lld layers, %lld heads, d_model %lld, context %lld, batch %lld, lr %g, "
                "dropout %g, seed %llu",
                static_cast<long long>(config.layers), static_cast<long long>(config.heads),
                static_cast<long long>(config.d_model), static_cast<long long>(config.block_size),
                static_cast<long long>(opt.batch), opt.lr, config.dropout,
                static_cast<unsigned long long>(seed));
  if (!curve_path.empty() && !log.train_steps.empty()) {
    plot_loss_curves(log, "uniform guess, log V", uniform, bigram, curve_path,
                     "tiny_lm: cross-entropy (nats per token)", settings);
    std::printf("loss curves: %s\n", curve_path.c_str());
  }
  // Every head's attention weights on the probe phrase, in layer order: one call records them,
  // the model's forward is unchanged (its attention asks for no weights).
  std::vector<std::int64_t> ids = lang.encode(probe);
  std::vector<std::string> words;
  for (auto id : ids) words.push_back(lang.word(id));
  std::vector<nn::AttentionRecord> maps;
  if (!attention_path.empty() || !attention_maps_path.empty()) {
    mg::NoGradGuard no_grad;
    model.eval();
    std::vector<double> x(ids.begin(), ids.end());
    const mg::Tensor idx = mg::tensor(x, {1, static_cast<std::int64_t>(ids.size())}, mg::kInt64);
    maps = nn::capture_attention(model, [&] { model.forward(idx); });  // [1, heads, T, T] each
  }
  if (!attention_maps_path.empty()) {
    std::vector<mg::Tensor> panels;
    std::vector<std::string> titles;
    for (const nn::AttentionRecord& m : maps) {
      panels.push_back(m.weights.select(0, 0));
      for (std::int64_t h = 0; h < config.heads; ++h)
        titles.push_back(m.name + ", head " + std::to_string(h));
    }
    mg::viz::attention_heatmap(mg::cat(panels, 0), words, words, attention_maps_path,
                               "tiny_lm: every head of every layer on \"" + probe + "\"",
                               {.caption = settings, .panel_titles = titles});
    std::printf("attention maps: %s (%zu layers x %lld heads)\n", attention_maps_path.c_str(),
                maps.size(), static_cast<long long>(config.heads));
  }
  if (!attention_path.empty()) {
    // The head that looks hardest from the adjective back to its noun.
    std::vector<mg::Tensor> att;
    for (const nn::AttentionRecord& m : maps) att.push_back(m.weights);
    std::size_t adj = 0, noun = 0;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (lang.is_adjective(ids[i])) adj = i;
      if (lang.is_noun(ids[i]) && noun == 0) noun = i;
    }
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
    char title[160];
    std::snprintf(title, sizeof title,
                  "layer %lld, head %lld: \"%s\" looks back at \"%s\" (%.2f) to predict \"%s\"",
                  static_cast<long long>(best_layer), static_cast<long long>(best_head),
                  words[adj - 1].c_str(), words[noun].c_str(), best, words[adj].c_str());
    std::vector<std::string> heads;
    for (std::int64_t h = 0; h < config.heads; ++h)
      heads.push_back("head " + std::to_string(h) + (h == best_head ? " (the title's)" : ""));
    mg::viz::attention_heatmap(att[static_cast<std::size_t>(best_layer)].select(0, 0), words, words,
                               attention_path, title, {.caption = settings, .panel_titles = heads});
    std::printf("attention: %s (%s)\n", attention_path.c_str(), title);
  }
  return 0;
}

}  // namespace

// An error, such as a picture, trace or checkpoint it cannot write, ends the program with its
// message and exit status 2 (as char_gpt's).
int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fflush(stdout);  // what it printed before, then the reason
    std::fprintf(stderr, "tiny_lm: %s\n", e.what());
    return 2;
  }
}
