// char_gpt: a character-level GPT (nanoGPT's model and training loop) trained on the English text
// of Debian's fortunes package (see char_gpt.h and docs/char_gpt.md).
//
//   char_gpt [--steps 1000] [--layers 4] [--heads 4] [--dim 128] [--block 64] [--batch 24]
//            [--lr 2e-3] [--warmup 50] [--seed 0] [--prompt "The "] [--temperature 0.8] [--top-k
//            10]
//            [--curve char_gpt_loss_curve.png] [--attention char_gpt_attention.png]
//            [--save char_gpt.safetensors] [--save-every 200] [--resume char_gpt.safetensors]
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

#include "char_gpt.h"
#include "fortunes.h"
#include "gpt.h"
#include "language.h"
#include "run_tools.h"

using namespace char_gpt;

namespace {

/// A character as a heatmap label: a visible mark for space, tab and newline.
std::string label(char c) {
  if (c == ' ') return "\u2423";  // ␣
  if (c == '\n') return "\\n";
  if (c == '\t') return "\\t";
  return std::string(1, c);
}

/// Flag checks whose message names the value ("--steps: 'many' is not a number"), unlike CLI11's
/// PositiveNumber ("not in range 0.000000 to 1.797e308" written out in full).
CLI::Validator number_check(bool allow_zero) {
  return CLI::Validator(
      [allow_zero](std::string& s) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(s, v) || !std::isfinite(v))
          return "'" + s + "' is not a number";
        if (v < 0 || (v == 0 && !allow_zero))
          return "'" + s + "' must be " + (allow_zero ? "zero or more" : "positive");
        return "";
      },
      allow_zero ? ">= 0" : "> 0");
}
const CLI::Validator kPositive = number_check(false), kNonNegative = number_check(true);

/// The text of a sample, indented, the fortune separators shown as they are.
void print_sample(const std::string& text) {
  std::string out = "    ";
  for (char c : text) out += c == '\n' ? std::string("\n    ") : std::string(1, c);
  std::printf("%s\n", out.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Train a character-level GPT (nanoGPT's) on the fortunes of Debian's fortunes package."};
  tiny_lm::Config config = default_config();
  tiny_lm::TrainOptions opt = default_train_options();
  std::uint64_t seed = 0;
  std::string data_dir = kFortuneDir, prompt = "The ", curve_path = "char_gpt_loss_curve.png",
              attention_path = "char_gpt_attention.png", graph_path;
  std::string probe = "Love is a grave mental disease.";
  double temperature = 0.8;
  int top_k = 10, samples = 3, length = 300, sample_every = 250, sample_length = 160;
  // --help shows each default; a flag given twice takes the last value (e.g. after a config).
  app.option_defaults()->always_capture_default()->multi_option_policy(
      CLI::MultiOptionPolicy::TakeLast);
  app.add_option("--data", data_dir, "directory of fortune files (Debian's fortunes package)");
  app.add_option("--steps", opt.steps, "training steps")->check(kPositive);
  app.add_option("--batch", opt.batch, "windows per step")->check(kPositive);
  app.add_option("--block", config.block_size, "context length, in characters")
      ->check(CLI::Range(2, 1024));
  app.add_option("--layers", config.layers, "transformer blocks")->check(kPositive);
  app.add_option("--heads", config.heads, "attention heads")->check(kPositive);
  app.add_option("--dim", config.d_model, "model width")->check(kPositive);
  app.add_option("--dropout", config.dropout, "dropout probability")->check(CLI::Range(0.0, 0.99));
  app.add_option("--lr", opt.lr, "peak learning rate (AdamW)")->check(kPositive);
  app.add_option("--min-lr", opt.min_lr, "learning rate at the end of the cosine decay")
      ->check(kNonNegative);
  app.add_option("--warmup", opt.warmup, "steps of linear warm-up (then cosine decay)")
      ->check(kNonNegative);
  app.add_option("--weight-decay", opt.weight_decay, "AdamW weight decay of the matrices")
      ->check(kNonNegative);
  app.add_option("--clip", opt.clip, "gradient norm clipping threshold")->check(kPositive);
  app.add_option("--eval-every", opt.eval_every, "steps between validation losses")
      ->check(kPositive);
  app.add_option("--eval-windows", opt.eval_windows,
                 "validation windows per estimate, spread evenly over the validation text")
      ->check(kPositive);
  app.add_option("--seed", seed, "seed of the initial weights, dropout and the training windows");
  app.add_option("--prompt", prompt, "text the samples continue (characters of the vocabulary)");
  app.add_option("--samples", samples, "samples printed after training")->check(kNonNegative);
  app.add_option("--length", length, "characters per sample")->check(kPositive);
  app.add_option("--temperature", temperature, "sampling temperature")->check(kPositive);
  app.add_option("--top-k", top_k, "sample from the k most likely characters (0: all)")
      ->check(CLI::Range(0, static_cast<int>(Vocabulary::kSize)));
  app.add_option("--sample-every", sample_every,
                 "steps between samples taken during training, printed at the end (0: none)")
      ->check(kNonNegative);
  app.add_option("--sample-length", sample_length, "characters per sample taken during training")
      ->check(kPositive);
  app.add_option("--curve", curve_path, "PNG of the loss curves ('' for none)");
  app.add_option("--attention", attention_path,
                 "PNG of the attention of the last layer's heads on --probe ('' for none)");
  app.add_option("--probe", probe, "the sentence whose attention is drawn");
  app.add_option("--graph", graph_path,
                 "PNG (or .svg, .dot) of the autograd graph of one transformer block's forward");
  std::string model_graph_path, profile_path;
  int model_graph_depth = 2;
  app.add_option("--model-graph", model_graph_path,
                 "PNG (or .svg, .dot) of the autograd graph of the whole model's loss on one "
                 "window, one box per module call");
  app.add_option("--model-graph-depth", model_graph_depth,
                 "which modules --model-graph draws as boxes: 1 the blocks (blocks.0), 2 their "
                 "layers (blocks.0.attn)")
      ->check(kPositive);
  app.add_option("--profile", profile_path,
                 "profile --profile-steps training steps (after one warm-up step): print the "
                 "profiler's table, write this Chrome trace (JSON) and exit");
  int profile_steps_n = 5;
  app.add_option("--profile-steps", profile_steps_n,
                 "how many steps --profile adds up (one step alone crowns whichever op the OS "
                 "preempted)")
      ->check(CLI::Range(1, 1000));
  std::string save_path, resume_path;
  int save_every = 0;
  app.add_option("--save", save_path,
                 "checkpoint file (safetensors; the optimizer goes to FILE.optim), written at "
                 "the end and every --save-every steps");
  app.add_option("--save-every", save_every, "steps between checkpoints (0: only at the end)")
      ->check(kNonNegative);
  app.add_option("--resume", resume_path,
                 "continue from this checkpoint (give the same model flags and --steps)");
  bool show_summary = false;
  app.add_flag("--summary", show_summary,
               "print the model's layers, output shapes and parameter counts");
  CLI11_PARSE(app, argc, argv);
  if (app.count("--min-lr") == 0) opt.min_lr = opt.lr / 10;
  opt.data_seed = seed + 1;
  auto fail = [](const std::string& message) {
    std::fprintf(stderr, "char_gpt: %s\n", message.c_str());
    return 2;
  };
  if (config.d_model % config.heads != 0)
    return fail("--dim (" + std::to_string(config.d_model) + ") must be divisible by --heads (" +
                std::to_string(config.heads) + ")");
  if (opt.warmup >= opt.steps)
    return fail("--warmup (" + std::to_string(opt.warmup) + ") must be smaller than --steps (" +
                std::to_string(opt.steps) + ")");
  if (opt.min_lr > opt.lr) return fail("--min-lr must not exceed --lr");
  for (const std::string* text : {&prompt, &probe}) {
    if (text->empty()) return fail("--prompt and --probe must not be empty");
    for (char c : *text)
      if (!Vocabulary::contains(c))
        return fail("\"" + *text + "\" holds a character outside the vocabulary (character code " +
                    std::to_string(static_cast<int>(static_cast<unsigned char>(c))) +
                    "): only tab, newline and printable ASCII");
  }

  Corpus corpus;
  try {
    corpus = read_fortunes(data_dir);
  } catch (const mg::Error& e) {
    return fail(e.what());
  }
  if (corpus.files.size() < 10)  // fortunes-min alone puts one file there
    std::printf("note: only %zu fortune file%s in %s; Debian's fortunes package has 43: %s\n",
                corpus.files.size(), corpus.files.size() == 1 ? "" : "s", data_dir.c_str(),
                kInstallLine);
  const Split split = split_fortunes(corpus);
  const std::vector<std::int64_t> train_ids = Vocabulary::encode(split.train),
                                  val_ids = Vocabulary::encode(split.validation);
  if (static_cast<std::int64_t>(val_ids.size()) <= config.block_size ||
      static_cast<std::int64_t>(train_ids.size()) <= config.block_size)
    return fail("the text in " + data_dir + " is shorter than the context (--block " +
                std::to_string(config.block_size) + ")");
  config.vocab_size = Vocabulary::kSize;
  const double uniform = std::log(static_cast<double>(Vocabulary::kSize));
  const double bigram = tiny_lm::bigram_loss(train_ids, val_ids, Vocabulary::kSize, 1.0);
  std::printf(
      "data: %zu fortunes from %zu files in %s (%lld characters outside the vocabulary "
      "dropped)\n  train: %zu fortunes, %zu characters; validation (every 10th fortune): %zu "
      "fortunes, %zu characters; vocabulary %lld characters\n",
      corpus.fortunes.size(), corpus.files.size(), data_dir.c_str(),
      static_cast<long long>(corpus.dropped_chars), split.train_fortunes, train_ids.size(),
      split.validation_fortunes, val_ids.size(), static_cast<long long>(Vocabulary::kSize));
  std::printf(
      "baselines on validation: uniform guess %.3f, bigram (add-one) %.3f nats per "
      "character\n\n",
      uniform, bigram);

  mg::manual_seed(seed);
  tiny_lm::GPT model(config);
  std::printf(
      "GPT: %lld layers, %lld heads, d_model %lld, context %lld, %lld parameters; batch "
      "%lld, lr %g -> %g (warm-up %d, cosine), %d steps\n",
      static_cast<long long>(config.layers), static_cast<long long>(config.heads),
      static_cast<long long>(config.d_model), static_cast<long long>(config.block_size),
      static_cast<long long>(model.num_parameters()), static_cast<long long>(opt.batch), opt.lr,
      opt.min_lr, opt.warmup, opt.steps);
  if (show_summary) {
    std::vector<double> x(static_cast<std::size_t>(opt.batch * config.block_size), 0.0);
    mg::utils::summary(model, mg::tensor(x, {opt.batch, config.block_size}, mg::kInt64));
    std::printf("\n");
  }
  if (!graph_path.empty()) {
    // One block's forward on a small input: the graph backward walks through it.
    auto block = model.blocks->ptr<tiny_lm::Block>(0);
    const std::int64_t T = 4;
    mg::Tensor x = mg::randn({1, T, config.d_model}).requires_grad_();
    mg::Tensor causal = mg::ones({T, T}, mg::kBool).triu(1);
    mg::autograd::DotOptions dot;
    dot.names.emplace_back("x", x);
    for (const auto& [name, p] : block->named_parameters()) dot.names.emplace_back(name, p);
    try {
      mg::viz::draw_graph(block->forward(x, causal), graph_path, dot);
    } catch (const mg::Error& e) {
      return fail(e.what());
    }
    std::printf("graph of blocks.0's forward (input [1, %lld, %lld]): %s\n",
                static_cast<long long>(T), static_cast<long long>(config.d_model),
                graph_path.c_str());
  }

  if (!model_graph_path.empty()) {
    // The loss of one short window through the whole model, recorded with module scopes.
    const std::int64_t T = std::min<std::int64_t>(8, config.block_size);
    std::vector<double> x(train_ids.begin(), train_ids.begin() + T),
        y(train_ids.begin() + 1, train_ids.begin() + T + 1);
    mg::Tensor loss;
    {
      mg::nn::RecordModuleScopes scopes(model);
      mg::Tensor logits = model.forward(mg::tensor(x, {1, T}, mg::kInt64));
      loss = mg::nn::functional::cross_entropy(logits.reshape({T, config.vocab_size}),
                                               mg::tensor(y, {T}, mg::kInt64));
    }
    try {
      mg::viz::draw_graph(
          loss, model_graph_path,
          {.show_saved = false, .collapse_modules = true, .collapse_depth = model_graph_depth});
    } catch (const mg::Error& e) {
      return fail(e.what());
    }
    std::printf(
        "graph of the model's loss on one window of %lld characters, modules at depth %d: "
        "%s\n",
        static_cast<long long>(T), model_graph_depth, model_graph_path.c_str());
  }

  tiny_lm::Trainer trainer(model, opt);
  if (!resume_path.empty()) {
    try {
      tiny_lm::load_checkpoint(trainer, resume_path);
    } catch (const std::exception& e) {
      return fail(e.what());
    }
    std::printf("resumed from %s at step %d\n", resume_path.c_str(), trainer.step);
  }
  if (!profile_path.empty()) {
    auto one_step = [&] {
      train(
          trainer, train_ids, val_ids, [](const tiny_lm::Progress&) {}, trainer.step + 1);
    };
    try {
      tiny_lm::profile_steps(one_step, trainer.step + 1, profile_steps_n, profile_path);
    } catch (const mg::Error& e) {
      return fail(e.what());
    }
    return 0;
  }
  tiny_lm::LossLog log(trainer.step, estimate_loss(model, val_ids, opt.eval_windows));
  std::vector<std::pair<int, std::string>> progress_samples;
  const std::vector<std::int64_t> prompt_ids = Vocabulary::encode(prompt);
  auto sample_at = [&](int step) {
    mg::Generator g;
    g.manual_seed(seed + 1000);  // the same draws at every step: only the model changes
    progress_samples.emplace_back(
        step,
        Vocabulary::decode(generate(model, prompt_ids, sample_length, temperature, top_k, g)));
  };
  if (sample_every > 0 && trainer.step == 0) sample_at(0);
  if (trainer.step >= opt.steps) {
    std::printf(
        "nothing to train: the checkpoint is at step %d and --steps is %d; validation "
        "loss %.3f\n",
        trainer.step, opt.steps, log.last_val);
  } else {
    try {
      tiny_lm::train_with_bar(
          opt.steps, trainer.step, log,
          [&](const std::function<void(const tiny_lm::Progress&)>& on_step) {
            train(trainer, train_ids, val_ids, on_step);
          },
          [&](const tiny_lm::Progress& p) {
            if (sample_every > 0 && p.step % sample_every == 0) sample_at(p.step);
            if (!save_path.empty() && save_every > 0 && p.step % save_every == 0 &&
                p.step < opt.steps)
              tiny_lm::save_checkpoint(trainer, save_path);
          });
    } catch (const mg::Error& e) {
      return fail(e.what());
    }
    std::printf(
        "\nvalidation loss %.3f (uniform guess %.3f, bigram %.3f) after %d steps; %.0f "
        "s, %.0f tokens/s on %d thread%s (%u hardware threads)\n",
        log.last_val, uniform, bigram, trainer.step, log.seconds, log.tokens_per_second,
        mg::get_num_threads(), mg::get_num_threads() == 1 ? "" : "s",
        std::thread::hardware_concurrency());
  }
  if (!save_path.empty()) {
    try {
      tiny_lm::save_checkpoint(trainer, save_path);
    } catch (const mg::Error& e) {
      return fail(e.what());
    }
    std::printf("checkpoint: %s (+ %s.optim) at step %d\n", save_path.c_str(), save_path.c_str(),
                trainer.step);
  }

  if (!progress_samples.empty()) {
    std::printf("\nsamples during training (the same seed each time; temperature %g, top-k %d):\n",
                temperature, top_k);
    for (const auto& [step, text] : progress_samples) {
      std::printf("  step %d:\n", step);
      print_sample(text);
    }
  }
  mg::Generator generator;
  generator.manual_seed(seed);
  std::printf("\nsamples (temperature %g, top-k %d, seed %llu):\n", temperature, top_k,
              static_cast<unsigned long long>(seed));
  for (int i = 0; i < samples; ++i) {
    std::printf("  sample %d:\n", i + 1);
    print_sample(
        Vocabulary::decode(generate(model, prompt_ids, length, temperature, top_k, generator)));
  }

  char settings[240];
  std::snprintf(settings, sizeof settings,
                "char_gpt on Debian's fortunes: %lld layers, %lld heads, d_model %lld, context "
                "%lld, batch %lld, lr %g, %d steps, seed %llu",
                static_cast<long long>(config.layers), static_cast<long long>(config.heads),
                static_cast<long long>(config.d_model), static_cast<long long>(config.block_size),
                static_cast<long long>(opt.batch), opt.lr, opt.steps,
                static_cast<unsigned long long>(seed));
  try {
    if (!curve_path.empty() && !log.train_steps.empty()) {
      tiny_lm::plot_loss_curves(log, "uniform guess, log 97", uniform, bigram, curve_path,
                                "char_gpt: cross-entropy (nats per character)", settings);
      std::printf("\nloss curves: %s\n", curve_path.c_str());
    }
    if (!attention_path.empty()) {
      std::string text = probe.substr(0, static_cast<std::size_t>(config.block_size));
      std::vector<std::string> chars;
      for (char c : text) chars.push_back(label(c));
      std::vector<mg::Tensor> att;
      {
        mg::InferenceMode inference;
        model.eval();
        std::vector<std::int64_t> ids = Vocabulary::encode(text);
        std::vector<double> x(ids.begin(), ids.end());
        model.forward(mg::tensor(x, {1, static_cast<std::int64_t>(ids.size())}, mg::kInt64), &att);
      }
      const std::size_t layer = att.size() - 1;
      std::string title = "layer " + std::to_string(layer) + " (the last) on \"" + text + "\"";
      mg::viz::attention_heatmap(att[layer].select(0, 0), chars, chars, attention_path, title,
                                 {.caption = settings, .values = false});
      std::printf("attention: %s (%s)\n", attention_path.c_str(), title.c_str());
    }
  } catch (const mg::Error& e) {
    return fail(e.what());
  }
  return 0;
}
