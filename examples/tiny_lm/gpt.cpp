#include "gpt.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numbers>
#include <sstream>
#include <string>

namespace tiny_lm {

Block::Block(const Config& c)
    : nn::Module("Block"),
      ln1(c.d_model),
      ln2(c.d_model),
      attn(c.d_model, c.heads, /*bias=*/true, /*batch_first=*/true),
      fc(c.d_model, 4 * c.d_model),
      proj(4 * c.d_model, c.d_model),
      drop(c.dropout) {
  register_module("ln1", ln1);
  register_module("attn", attn);
  register_module("ln2", ln2);
  register_module("fc", fc);
  register_module("proj", proj);
  register_module("drop", drop);
}

mg::Tensor Block::forward(const mg::Tensor& x, const mg::Tensor& causal_mask) const {
  nn::ModuleScope scope(*this);  // names this call "blocks.0" in collapsed graphs
  mg::Tensor h = ln1(x);
  mg::Tensor a =
      attn(h, h, h, /*key_padding_mask=*/mg::Tensor(), /*need_weights=*/false, causal_mask).first;
  mg::Tensor y = x + drop(a);
  return y + drop(proj(mg::gelu(fc(ln2(y)))));
}

GPT::GPT(const Config& c)
    : nn::Module("GPT"),
      config(c),
      token_embedding(c.vocab_size, c.d_model),
      position_embedding(c.block_size, c.d_model),
      drop(c.dropout),
      ln_f(c.d_model) {
  // GPT-2's embedding scale (PyTorch's nn.Embedding default, N(0, 1), is too large for a tied
  // head).
  {
    mg::NoGradGuard no_grad;
    nn::init::normal_(token_embedding->weight, 0.0, 0.02);
    nn::init::normal_(position_embedding->weight, 0.0, 0.02);
  }
  register_module("token_embedding", token_embedding);
  register_module("position_embedding", position_embedding);
  register_module("drop", drop);
  for (std::int64_t i = 0; i < c.layers; ++i) blocks->push_back(std::make_shared<Block>(c));
  register_module("blocks", blocks);
  register_module("ln_f", ln_f);
  if (!c.tie_weights)
    head = register_module("head", nn::Linear(c.d_model, c.vocab_size, /*bias=*/false));
}

mg::Tensor GPT::forward(const mg::Tensor& idx, std::vector<mg::Tensor>* attention) const {
  const std::int64_t T = idx.size(1);
  mg::Tensor positions = mg::arange(0, T, 1, mg::kInt64);
  mg::Tensor x = drop(token_embedding(idx) + position_embedding(positions));
  // true above the diagonal: token i may not look at tokens j > i.
  mg::Tensor causal = mg::ones({T, T}, mg::kBool).triu(1);
  std::optional<nn::AttentionRecorder> recorder;  // every head's weights, without changing forward
  if (attention) recorder.emplace(*this);
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(blocks->size()); ++i)
    x = blocks->ptr<Block>(i)->forward(x, causal);
  if (attention) *attention = recorder->weights();
  x = ln_f(x);
  return head ? head(x) : nn::functional::linear(x, token_embedding->weight);
}

std::int64_t GPT::num_parameters() const {
  std::int64_t n = 0;
  for (const mg::Tensor& p : parameters()) n += p.numel();
  return n;
}

Batch Windows::get_batch(const std::vector<std::size_t>& starts) const {
  std::vector<double> x, y;
  x.reserve(starts.size() * static_cast<std::size_t>(block));
  y.reserve(starts.size() * static_cast<std::size_t>(block));
  for (std::size_t s : starts) {
    for (std::int64_t t = 0; t < block; ++t) {
      x.push_back(static_cast<double>((*stream)[s + static_cast<std::size_t>(t)]));
      y.push_back(static_cast<double>((*stream)[s + static_cast<std::size_t>(t) + 1]));
    }
  }
  const auto B = static_cast<std::int64_t>(starts.size());
  return {mg::tensor(x, {B, block}, mg::kInt64), mg::tensor(y, {B, block}, mg::kInt64)};
}

std::optional<std::vector<std::size_t>> RandomWindowSampler::next(std::size_t batch_size) {
  std::uniform_int_distribution<std::size_t> start(0, windows_ - 1);
  std::vector<std::size_t> starts(batch_size);
  for (std::size_t& s : starts) s = start(rng_);
  return starts;
}

Batch random_batch(const std::vector<std::int64_t>& stream, std::int64_t batch, std::int64_t block,
                   std::mt19937_64& rng) {
  const Windows windows{&stream, block};
  RandomWindowSampler sampler(rng, *windows.size());
  return windows.get_batch(*sampler.next(static_cast<std::size_t>(batch)));
}

double evaluate(GPT& model, const std::vector<std::int64_t>& stream, std::int64_t windows) {
  const std::int64_t T = model.config.block_size;
  windows = std::min<std::int64_t>(windows, static_cast<std::int64_t>(stream.size() - 1) / T);
  std::vector<double> x, y;
  for (std::int64_t w = 0; w < windows; ++w)
    for (std::int64_t t = 0; t < T; ++t) {
      x.push_back(static_cast<double>(stream[static_cast<std::size_t>(w * T + t)]));
      y.push_back(static_cast<double>(stream[static_cast<std::size_t>(w * T + t + 1)]));
    }
  mg::NoGradGuard no_grad;
  bool was_training = model.is_training();
  model.eval();
  mg::Tensor logits = model.forward(mg::tensor(x, {windows, T}, mg::kInt64));
  double loss = nn::functional::cross_entropy(logits.reshape({-1, model.config.vocab_size}),
                                              mg::tensor(y, {windows * T}, mg::kInt64))
                    .item<double>();
  model.train(was_training);
  return loss;
}

double learning_rate(const TrainOptions& o, int step) {
  if (step < o.warmup) return o.lr * (step + 1) / o.warmup;
  double progress = static_cast<double>(step - o.warmup) / std::max(1, o.steps - o.warmup);
  return o.min_lr +
         0.5 * (o.lr - o.min_lr) * (1 + std::cos(std::numbers::pi * std::min(1.0, progress)));
}

namespace {
/// AdamW groups as nanoGPT: matrices decay, biases, LayerNorm weights and embeddings do not.
std::vector<mg::optim::OptimizerParamGroup> param_groups(const GPT& model, const TrainOptions& o) {
  std::vector<mg::Tensor> decay, no_decay;
  for (const auto& [name, p] : model.named_parameters()) {
    bool is_matrix = p.dim() == 2 && name.find("embedding") == std::string::npos;
    (is_matrix ? decay : no_decay).push_back(p);
  }
  const auto options = mg::optim::AdamWOptions(o.lr).betas({0.9, 0.95});
  return {{decay, mg::optim::AdamWOptions(options).weight_decay(o.weight_decay)},
          {no_decay, mg::optim::AdamWOptions(options).weight_decay(0.0)}};
}
}  // namespace

Trainer::Trainer(GPT& m, const TrainOptions& o)
    : model(m), optimizer(param_groups(m, o)), options(o), rng(o.data_seed) {}

void Trainer::run(const std::vector<std::int64_t>& train,
                  const std::vector<std::int64_t>& validation,
                  const std::function<void(const Progress&)>& on_step, int until) {
  const int last = until >= 0 ? std::min(until, options.steps) : options.steps;
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  const int first = step;
  const std::int64_t tokens_per_step = options.batch * model.config.block_size;
  model.train();
  // nanoGPT's get_batch through the data API: the windows as a dataset, random starts as its
  // sampler; each step takes one batch (begin() of the endless epoch draws exactly one).
  const Windows windows{&train, model.config.block_size};
  mg::data::DataLoader<Windows> loader(
      windows, mg::data::DataLoaderOptions(static_cast<std::size_t>(options.batch)),
      std::make_shared<RandomWindowSampler>(rng, *windows.size()));
  while (step < last) {
    double lr = learning_rate(options, step);
    for (std::size_t g = 0; g < optimizer.num_param_groups(); ++g) optimizer.set_lr(g, lr);
    auto batch = loader.begin();
    const Batch& b = *batch;
    mg::Tensor logits = model.forward(b.x);
    mg::Tensor loss = nn::functional::cross_entropy(logits.reshape({-1, model.config.vocab_size}),
                                                    b.y.reshape({-1}));
    optimizer.zero_grad();
    loss.backward();
    nn::utils::clip_grad_norm_(model.parameters(), options.clip);
    optimizer.step();
    ++step;

    Progress p;
    p.step = step;
    p.loss = loss.item<double>();
    p.lr = lr;
    p.seconds = std::chrono::duration<double>(clock::now() - t0).count();
    p.tokens_per_second = static_cast<double>((step - first) * tokens_per_step) / p.seconds;
    if (step % options.eval_every == 0 || step == options.steps)
      p.val_loss = evaluate(model, validation, options.eval_windows);
    on_step(p);
  }
}

namespace {
std::string config_text(const Config& c) {
  return "vocab_size=" + std::to_string(c.vocab_size) +
         " block_size=" + std::to_string(c.block_size) + " d_model=" + std::to_string(c.d_model) +
         " heads=" + std::to_string(c.heads) + " layers=" + std::to_string(c.layers) +
         " tie_weights=" + std::to_string(c.tie_weights);
}
std::string hex(const std::vector<std::uint8_t>& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (std::uint8_t b : bytes) {
    s += digits[b >> 4];
    s += digits[b & 15];
  }
  return s;
}
std::vector<std::uint8_t> unhex(const std::string& s, const std::string& path) {
  auto nibble = [&](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    throw mg::Error("[load_checkpoint] " + path + ": rng_state is not hexadecimal");
  };
  if (s.size() % 2) throw mg::Error("[load_checkpoint] " + path + ": rng_state has odd length");
  std::vector<std::uint8_t> b;
  for (std::size_t i = 0; i < s.size(); i += 2)
    b.push_back(static_cast<std::uint8_t>(nibble(s[i]) * 16 + nibble(s[i + 1])));
  return b;
}
}  // namespace

void save_checkpoint(const Trainer& t, const std::string& path) {
  std::ostringstream data_rng;
  data_rng << t.rng;
  mg::Metadata meta = {{"step", std::to_string(t.step)},
                       {"config", config_text(t.model.config)},
                       {"data_rng", data_rng.str()},
                       {"rng_state", hex(mg::get_rng_state())}};
  mg::optim::save(t.optimizer, path + ".optim");
  nn::save(t.model, path, meta);
}

void load_checkpoint(Trainer& t, const std::string& path) {
  mg::Metadata meta = mg::load_safetensors(path).metadata;
  for (const char* key : {"step", "config", "data_rng", "rng_state"})
    if (!meta.count(key))
      throw mg::Error(std::string("[load_checkpoint] ") + path + ": no \"" + key +
                      "\" in the metadata: not a tiny_lm checkpoint");
  if (meta["config"] != config_text(t.model.config))
    throw mg::Error("[load_checkpoint] " + path + ": made for the model " + meta["config"] +
                    ", but this model is " + config_text(t.model.config));
  std::mt19937_64 rng;
  std::istringstream is(meta["data_rng"]);
  is >> rng;
  if (is.fail()) throw mg::Error("[load_checkpoint] " + path + ": bad data_rng");
  std::vector<std::uint8_t> rng_state = unhex(meta["rng_state"], path);
  int step = std::stoi(meta["step"]);
  // Everything read: now change the trainer (the loads validate before they change anything).
  nn::load(t.model, path);
  mg::optim::load(t.optimizer, path + ".optim");
  mg::set_rng_state(rng_state);
  t.rng = rng;
  t.step = step;
}

std::vector<std::int64_t> generate(GPT& model, std::vector<std::int64_t> tokens, int n,
                                   double temperature, int top_k, std::mt19937_64& rng) {
  mg::NoGradGuard no_grad;
  bool was_training = model.is_training();
  model.eval();
  const std::int64_t V = model.config.vocab_size, T = model.config.block_size;
  for (int i = 0; i < n; ++i) {
    std::size_t start = tokens.size() > static_cast<std::size_t>(T) ? tokens.size() - T : 0;
    std::vector<double> ctx(tokens.begin() + static_cast<std::ptrdiff_t>(start), tokens.end());
    auto len = static_cast<std::int64_t>(ctx.size());
    mg::Tensor logits = model.forward(mg::tensor(ctx, {1, len}, mg::kInt64)).select(1, len - 1);
    std::vector<double> l = (logits.reshape({V}) / temperature).to_vector<double>();
    if (top_k > 0 && top_k < V) {  // keep the k largest logits
      std::vector<double> sorted = l;
      std::nth_element(sorted.begin(), sorted.begin() + (top_k - 1), sorted.end(),
                       std::greater<double>());
      double kth = sorted[static_cast<std::size_t>(top_k - 1)];
      for (double& v : l)
        if (v < kth) v = -INFINITY;
    }
    double m = *std::max_element(l.begin(), l.end()), total = 0;
    for (double& v : l) total += (v = std::exp(v - m));
    double r = std::uniform_real_distribution<double>(0, total)(rng);
    std::int64_t next = V - 1;
    for (std::int64_t j = 0; j < V; ++j) {
      r -= l[static_cast<std::size_t>(j)];
      if (r < 0 && l[static_cast<std::size_t>(j)] > 0) {
        next = j;
        break;
      }
    }
    tokens.push_back(next);
  }
  model.train(was_training);
  return tokens;
}

}  // namespace tiny_lm
