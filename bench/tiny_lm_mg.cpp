// minigrad's side of the tiny_lm workload: the example's own model and Trainer (examples/tiny_lm,
// library target tiny_lm_lib), built as its main.cpp builds them with the default flags.
#include <climits>
#include <memory>

#include "gpt.h"
#include "language.h"
#include "workloads.h"

namespace bench::mg_side {

namespace {

namespace mg = minigrad;

/// What main.cpp builds before training, with its defaults: the language's streams, the config,
/// the options, the model (seed 0) and the Trainer. Modules cannot move: it lives on the heap.
struct TinyLM {
  explicit TinyLM(double dropout) {
    train = lang.stream(20000, 1000);  // main.cpp: --phrases 20000, seed 1000
    validation = lang.stream(2000, 2000);
    config.vocab_size = lang.vocab_size();
    if (dropout >= 0) config.dropout = dropout;
    options.min_lr = options.lr / 10;  // main.cpp
    options.eval_every = INT_MAX;      // no validation passes in the timed loop
    mg::manual_seed(0);                // main.cpp: --seed 0
    model = std::make_unique<tiny_lm::GPT>(config);
    trainer = std::make_unique<tiny_lm::Trainer>(*model, options);
  }

  /// One step of Trainer::run; returns its loss. The schedule restarts one step before its end,
  /// where the Trainer would run a validation pass.
  double step() {
    if (trainer->step >= options.steps - 1) trainer->step = 0;
    double loss = 0;
    trainer->run(
        train, validation, [&loss](const tiny_lm::Progress& p) { loss = p.loss; },
        trainer->step + 1);
    return loss;
  }

  tiny_lm::Language lang;
  std::vector<std::int64_t> train, validation;
  tiny_lm::Config config;
  tiny_lm::TrainOptions options;
  std::unique_ptr<tiny_lm::GPT> model;
  std::unique_ptr<tiny_lm::Trainer> trainer;
};

}  // namespace

bool tiny_lm_available() { return true; }

TinyLMSetup tiny_lm_setup(double dropout) {
  TinyLM lm(dropout);
  TinyLMSetup s;
  const tiny_lm::Config& c = lm.config;
  s.vocab_size = c.vocab_size;
  s.block_size = c.block_size;
  s.d_model = c.d_model;
  s.heads = c.heads;
  s.layers = c.layers;
  s.dropout = c.dropout;
  s.tie_weights = c.tie_weights;
  const tiny_lm::TrainOptions& o = lm.options;
  s.batch = o.batch;
  s.clip = o.clip;
  s.weight_decay = o.weight_decay;
  s.schedule_steps = o.steps;
  s.learning_rate = [o](int step) { return tiny_lm::learning_rate(o, step); };
  s.data_seed = o.data_seed;
  s.train = std::make_shared<const std::vector<std::int64_t>>(lm.train);
  const auto& groups = lm.trainer->optimizer.param_groups();
  auto options_of = [](const mg::optim::OptimizerParamGroup& g) -> const mg::optim::AdamWOptions& {
    return static_cast<const mg::optim::AdamWOptions&>(g.options());
  };
  const auto [beta1, beta2] = options_of(groups.at(0)).betas();
  s.betas = {beta1, beta2};
  s.eps = options_of(groups.at(0)).eps();
  for (const auto& [name, p] : lm.model->named_parameters()) {
    TinyLMSetup::Parameter q{name, p.shape(), p.contiguous().to_vector<float>(), -1};
    for (const auto& g : groups)
      for (const mg::Tensor& t : g.params())
        if (t.is_same(p)) q.weight_decay = options_of(g).weight_decay();
    s.parameters.push_back(std::move(q));
  }
  s.num_parameters = lm.model->num_parameters();
  return s;
}

Run tiny_lm_step() {
  auto lm = std::make_shared<TinyLM>(-1);
  return [lm](std::int64_t iters) {
    for (std::int64_t i = 0; i < iters; ++i) lm->step();
  };
}

std::vector<double> tiny_lm_losses(int steps, double dropout) {
  TinyLM lm(dropout);
  std::vector<double> losses;
  for (int i = 0; i < steps; ++i) losses.push_back(lm.step());
  return losses;
}

}  // namespace bench::mg_side
