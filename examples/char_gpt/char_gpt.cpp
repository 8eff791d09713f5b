#include "char_gpt.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace char_gpt {

namespace nn = minigrad::nn;
namespace sched = minigrad::optim::lr_scheduler;

tiny_lm::Config default_config() {
  tiny_lm::Config c;
  c.block_size = 64;
  c.d_model = 128;
  c.heads = 4;
  c.layers = 4;
  c.dropout = 0.0;  // nanoGPT's Shakespeare-on-a-CPU setting: too few steps to overfit
  return c;
}

tiny_lm::TrainOptions default_train_options() {
  tiny_lm::TrainOptions o;
  o.steps = 1000;
  o.batch = 24;
  o.lr = 2e-3;
  o.min_lr = 2e-4;
  o.warmup = 50;
  o.weight_decay = 0.1;
  o.clip = 1.0;
  o.eval_every = 100;
  o.eval_windows = 128;
  return o;
}

std::unique_ptr<sched::LRScheduler> make_schedule(mg::optim::Optimizer& optimizer,
                                                  const tiny_lm::TrainOptions& o, int done) {
  MG_CHECK(o.warmup >= 0 && o.warmup < o.steps, "char_gpt", "the warm-up (", o.warmup,
           " steps) must be shorter than the run (", o.steps, " steps)");
  for (std::size_t g = 0; g < optimizer.num_param_groups(); ++g) optimizer.set_lr(g, o.lr);
  std::unique_ptr<sched::LRScheduler> s;
  if (o.warmup == 0) {
    s = std::make_unique<sched::CosineAnnealingLR>(optimizer, o.steps, o.min_lr);
  } else {
    auto warmup = std::make_shared<sched::LinearLR>(optimizer, 1.0 / o.warmup, 1.0, o.warmup);
    auto cosine =
        std::make_shared<sched::CosineAnnealingLR>(optimizer, o.steps - o.warmup, o.min_lr);
    s = std::make_unique<sched::SequentialLR>(
        optimizer, std::vector<std::shared_ptr<sched::LRScheduler>>{warmup, cosine},
        std::vector<std::int64_t>{o.warmup});
  }
  for (int i = 0; i < done; ++i) s->step();
  return s;
}

double estimate_loss(tiny_lm::GPT& model, const std::vector<std::int64_t>& stream,
                     std::int64_t windows) {
  const std::int64_t T = model.config.block_size;
  const auto available = static_cast<std::int64_t>(stream.size()) - T;
  MG_CHECK(available > 0, "char_gpt", "the validation text (", stream.size(),
           " characters) is shorter than the context (", T, ")");
  windows = std::clamp<std::int64_t>(windows, 1, available);
  const double stride = static_cast<double>(available) / static_cast<double>(windows);
  std::vector<std::size_t> starts;
  for (std::int64_t w = 0; w < windows; ++w)
    starts.push_back(static_cast<std::size_t>(std::floor(static_cast<double>(w) * stride)));
  mg::InferenceMode inference;
  const bool was_training = model.is_training();
  model.eval();
  const tiny_lm::Windows all{&stream, T};
  double total = 0;
  constexpr std::size_t kChunk = 32;  // windows per forward: bounds the activations' memory
  for (std::size_t first = 0; first < starts.size(); first += kChunk) {
    std::vector<std::size_t> chunk(
        starts.begin() + static_cast<std::ptrdiff_t>(first),
        starts.begin() + static_cast<std::ptrdiff_t>(std::min(starts.size(), first + kChunk)));
    tiny_lm::Batch b = all.get_batch(chunk);
    mg::Tensor logits = model.forward(b.x);
    total += nn::functional::cross_entropy(logits.reshape({-1, model.config.vocab_size}),
                                           b.y.reshape({-1}))
                 .item<double>() *
             static_cast<double>(chunk.size());
  }
  model.train(was_training);
  return total / static_cast<double>(starts.size());
}

void train(tiny_lm::Trainer& trainer, const std::vector<std::int64_t>& train_stream,
           const std::vector<std::int64_t>& validation_stream,
           const std::function<void(const tiny_lm::Progress&)>& on_step, int until) {
  const tiny_lm::TrainOptions& o = trainer.options;
  tiny_lm::GPT& model = trainer.model;
  const int last = until >= 0 ? std::min(until, o.steps) : o.steps;
  MG_CHECK(static_cast<std::int64_t>(train_stream.size()) > model.config.block_size, "char_gpt",
           "the training text (", train_stream.size(), " characters) is shorter than the context");
  auto scheduler = make_schedule(trainer.optimizer, o, trainer.step);
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  const int first = trainer.step;
  const std::int64_t tokens_per_step = o.batch * model.config.block_size;
  const tiny_lm::Windows windows{&train_stream, model.config.block_size};
  mg::data::DataLoader<tiny_lm::Windows> loader(
      windows, mg::data::DataLoaderOptions(static_cast<std::size_t>(o.batch)),
      std::make_shared<tiny_lm::RandomWindowSampler>(trainer.rng, *windows.size()));
  model.train();
  while (trainer.step < last) {
    const double lr = trainer.optimizer.lr(0);
    auto batch = loader.begin();
    const tiny_lm::Batch& b = *batch;
    mg::Tensor logits = model.forward(b.x);
    mg::Tensor loss = nn::functional::cross_entropy(logits.reshape({-1, model.config.vocab_size}),
                                                    b.y.reshape({-1}));
    trainer.optimizer.zero_grad();  // gradients accumulate: clear last step's first
    loss.backward();
    nn::utils::clip_grad_norm_(model.parameters(), o.clip);
    trainer.optimizer.step();
    scheduler->step();
    ++trainer.step;

    tiny_lm::Progress p;
    p.step = trainer.step;
    p.loss = loss.item<double>();
    p.lr = lr;
    p.seconds = std::chrono::duration<double>(clock::now() - t0).count();
    p.tokens_per_second = static_cast<double>((trainer.step - first) * tokens_per_step) / p.seconds;
    if (trainer.step % o.eval_every == 0 || trainer.step == o.steps)
      p.val_loss = estimate_loss(model, validation_stream, o.eval_windows);
    on_step(p);
  }
}

std::vector<std::int64_t> generate(tiny_lm::GPT& model, std::vector<std::int64_t> tokens, int n,
                                   double temperature, int top_k, mg::Generator& generator) {
  MG_CHECK(!tokens.empty(), "char_gpt", "the prompt must hold at least one character");
  MG_CHECK(temperature > 0, "char_gpt", "the temperature must be positive, got ", temperature);
  const std::int64_t V = model.config.vocab_size, T = model.config.block_size;
  MG_CHECK(top_k >= 0 && top_k <= V, "char_gpt", "top_k must be in [0, ", V, "], got ", top_k);
  mg::InferenceMode inference;
  const bool was_training = model.is_training();
  model.eval();
  for (int i = 0; i < n; ++i) {
    const std::size_t start = tokens.size() > static_cast<std::size_t>(T) ? tokens.size() - T : 0;
    std::vector<double> ctx(tokens.begin() + static_cast<std::ptrdiff_t>(start), tokens.end());
    const auto len = static_cast<std::int64_t>(ctx.size());
    mg::Tensor logits =
        model.forward(mg::tensor(ctx, {1, len}, mg::kInt64)).select(1, len - 1) / temperature;
    if (top_k > 0 && top_k < V) {  // nanoGPT: logits[logits < v[:, [-1]]] = -inf
      auto [values, indices] = mg::topk(logits, top_k);
      logits = mg::masked_fill(logits, logits < values.narrow(-1, top_k - 1, 1),
                               -std::numeric_limits<double>::infinity());
    }
    mg::Tensor probs = mg::softmax(logits, -1);
    tokens.push_back(mg::multinomial(probs, 1, /*replacement=*/false, generator)
                         .reshape({1})
                         .item<std::int64_t>());
  }
  model.train(was_training);
  return tokens;
}

}  // namespace char_gpt
