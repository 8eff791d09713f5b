// gpt2_mg: GPT-2 small trained for a few steps in minigrad, from the weights and tokens that
// bench/gpt2_eager.py --init wrote (issue 15). The same model and step as bench/gpt2_eager.py
// (PyTorch eager) and bench/gpt2_torch.cpp (libtorch); bench/gpt2_compare.py runs the three and
// compares their losses and times.
//
//   gpt2_mg [--dir DIR] [--steps 3] [--threads 1] [--profile]
// --profile records the steps after the first with minigrad's profiler and prints its table
// (sorted by self CPU time) at the end.
//
// The model is nanoGPT's (its parameter names, so the file loads with load_state_dict): pre-
// LayerNorm blocks of causal self-attention (c_attn: one Linear(d, 3d) for q, k, v; c_proj) and an
// MLP (c_fc, GELU tanh, c_proj), no dropout, the head tied to the token embedding. It is written
// here rather than taken from examples/tiny_lm because the example's layout is not GPT-2's: its
// attention is nn::MultiheadAttention (in_proj_weight, out_proj), its GELU is exact, and its AdamW
// groups leave the embeddings undecayed (nanoGPT decays every tensor of dim >= 2).
// AdamW: lr 6e-4, betas (0.9, 0.95), eps 1e-8, weight decay 0.1 on tensors of dim >= 2, constant
// learning rate, no gradient clipping. Per step it prints the loss and the ms of forward (model and
// loss), backward (zero_grad and backward), optimizer (step) and the whole step; then the medians
// of the steps after the first, tokens/s and the peak RSS (getrusage).
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include <minigrad/minigrad.h>
#include <minigrad/profiler.h>

#include "fma_peak.h"

namespace {

namespace mg = minigrad;
namespace nn = minigrad::nn;

struct Config {
  std::int64_t n_layer = 0, n_head = 0, n_embd = 0, vocab_size = 0, block_size = 0, batch = 0,
               seq = 0;
};

Config config_from(const mg::Metadata& meta, const std::string& path) {
  auto get = [&](const char* key) -> std::int64_t {
    auto it = meta.find(key);
    if (it == meta.end())
      throw mg::Error(path + ": no \"" + key + "\" in the metadata (written by gpt2_eager.py?)");
    return std::stoll(it->second);
  };
  return {get("n_layer"),    get("n_head"), get("n_embd"), get("vocab_size"),
          get("block_size"), get("batch"),  get("seq")};
}

struct CausalSelfAttention : nn::Module {
  nn::Linear c_attn, c_proj;
  std::int64_t n_head, n_embd;
  explicit CausalSelfAttention(const Config& c)
      : nn::Module("CausalSelfAttention"),
        c_attn(c.n_embd, 3 * c.n_embd),
        c_proj(c.n_embd, c.n_embd),
        n_head(c.n_head),
        n_embd(c.n_embd) {
    register_module("c_attn", c_attn);
    register_module("c_proj", c_proj);
  }
  mg::Tensor forward(const mg::Tensor& x) const {
    const std::int64_t B = x.size(0), T = x.size(1), C = x.size(2), hd = C / n_head;
    std::vector<mg::Tensor> qkv = c_attn(x).split(n_embd, 2);
    auto heads = [&](const mg::Tensor& t) { return t.reshape({B, T, n_head, hd}).transpose(1, 2); };
    mg::Tensor y = nn::functional::scaled_dot_product_attention(heads(qkv[0]), heads(qkv[1]),
                                                                heads(qkv[2]), {}, 0.0, true);
    return c_proj(y.transpose(1, 2).reshape({B, T, C}));
  }
};

struct MLP : nn::Module {
  nn::Linear c_fc, c_proj;
  explicit MLP(const Config& c)
      : nn::Module("MLP"), c_fc(c.n_embd, 4 * c.n_embd), c_proj(4 * c.n_embd, c.n_embd) {
    register_module("c_fc", c_fc);
    register_module("c_proj", c_proj);
  }
  mg::Tensor forward(const mg::Tensor& x) const { return c_proj(mg::gelu(c_fc(x), "tanh")); }
};

struct Block : nn::Module {
  nn::LayerNorm ln_1;
  CausalSelfAttention attn;
  nn::LayerNorm ln_2;
  MLP mlp;
  explicit Block(const Config& c)
      : nn::Module("Block"), ln_1(c.n_embd), attn(c), ln_2(c.n_embd), mlp(c) {
    register_module("ln_1", ln_1);
    register_module("attn", attn);
    register_module("ln_2", ln_2);
    register_module("mlp", mlp);
  }
  mg::Tensor forward(const mg::Tensor& x) const {
    mg::Tensor y = x + attn.forward(ln_1(x));
    return y + mlp.forward(ln_2(y));
  }
};

/// nanoGPT's `transformer` ModuleDict.
struct Transformer : nn::Module {
  nn::Embedding wte, wpe;
  nn::ModuleList h;
  nn::LayerNorm ln_f;
  explicit Transformer(const Config& c)
      : nn::Module("ModuleDict"),
        wte(c.vocab_size, c.n_embd),
        wpe(c.block_size, c.n_embd),
        ln_f(c.n_embd) {
    register_module("wte", wte);
    register_module("wpe", wpe);
    for (std::int64_t i = 0; i < c.n_layer; ++i) h->push_back(std::make_shared<Block>(c));
    register_module("h", h);
    register_module("ln_f", ln_f);
  }
};

struct GPT : nn::Module {
  Config config;
  Transformer transformer;
  explicit GPT(const Config& c) : nn::Module("GPT"), config(c), transformer(c) {
    register_module("transformer", transformer);
  }
  /// idx, targets [B, T] int64 -> the mean cross-entropy of the next tokens.
  mg::Tensor forward(const mg::Tensor& idx, const mg::Tensor& targets) const {
    const std::int64_t T = idx.size(1);
    mg::Tensor x = transformer.wte(idx) + transformer.wpe(mg::arange(0, T, 1, mg::kInt64));
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(transformer.h->size()); ++i)
      x = transformer.h->ptr<Block>(i)->forward(x);
    mg::Tensor logits = nn::functional::linear(transformer.ln_f(x), transformer.wte->weight);
    return nn::functional::cross_entropy(logits.reshape({-1, config.vocab_size}),
                                         targets.reshape({-1}));
  }
};

/// Windows step*B .. step*B+B-1 of T+1 tokens (wrapping), as gpt2_eager.py's batch().
std::pair<mg::Tensor, mg::Tensor> batch(const std::vector<double>& tokens, int step, std::int64_t B,
                                        std::int64_t T) {
  const auto windows = static_cast<std::int64_t>(tokens.size()) / (T + 1);
  std::vector<double> x, y;
  for (std::int64_t b = 0; b < B; ++b) {
    const std::int64_t start = ((step * B + b) % windows) * (T + 1);
    for (std::int64_t t = 0; t < T; ++t) {
      x.push_back(tokens[static_cast<std::size_t>(start + t)]);
      y.push_back(tokens[static_cast<std::size_t>(start + t + 1)]);
    }
  }
  return {mg::tensor(x, {B, T}, mg::kInt64), mg::tensor(y, {B, T}, mg::kInt64)};
}

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // KiB on Linux
}

/// The process's CPU time (all threads) in ms: on a loaded machine, wall time also counts the time
/// other processes hold the core.
double cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int run(const std::string& dir, int steps, int threads, bool profile) {
  mg::set_num_threads(threads);
  const std::string weights_path = dir + "/gpt2_init.safetensors";
  Config c;
  std::unique_ptr<GPT> model;
  {
    mg::SafetensorsFile f = mg::load_safetensors(weights_path);
    c = config_from(f.metadata, weights_path);
    model = std::make_unique<GPT>(c);  // its random init is overwritten now
    model->load_state_dict(f.tensors, /*strict=*/true);
  }
  const std::vector<double> tokens =
      mg::load_safetensors(dir + "/gpt2_tokens.safetensors").at("tokens").to_vector<double>();
  model->train();

  // nanoGPT's two groups: weight decay on the matrices and embeddings, none on biases and norms.
  std::vector<mg::Tensor> decay, no_decay;
  std::int64_t n_params = 0;
  for (const mg::Tensor& p : model->parameters()) {
    (p.dim() >= 2 ? decay : no_decay).push_back(p);
    n_params += p.numel();
  }
  const auto options = mg::optim::AdamWOptions(6e-4).betas({0.9, 0.95}).eps(1e-8);
  mg::optim::AdamW opt(
      {mg::optim::OptimizerParamGroup(decay, mg::optim::AdamWOptions(options).weight_decay(0.1)),
       mg::optim::OptimizerParamGroup(no_decay,
                                      mg::optim::AdamWOptions(options).weight_decay(0.0))},
      options);

  std::printf(
      "gpt2 minigrad: %lld parameters, B=%lld T=%lld layers=%lld d=%lld vocab=%lld, "
      "threads=%d\n",
      static_cast<long long>(n_params), static_cast<long long>(c.batch),
      static_cast<long long>(c.seq), static_cast<long long>(c.n_layer),
      static_cast<long long>(c.n_embd), static_cast<long long>(c.vocab_size), threads);
  // The step's matrix products, forward and backward (twice the forward: every input and weight
  // gradient), as all three sides compute them: per layer the four Linears (12 d^2 weights per
  // token) and attention's scores and mixing over the full T x T; the tied head (d V per token).
  // At one core's FMA peak they alone take at least products / peak: bench/gpt2_compare.py's
  // floor.
  const double bt = static_cast<double>(c.batch * c.seq), d = static_cast<double>(c.n_embd);
  const double forward_flops =
      2 * bt *
          (12 * static_cast<double>(c.n_layer) * d * d + d * static_cast<double>(c.vocab_size)) +
      4 * static_cast<double>(c.n_layer) * bt * static_cast<double>(c.seq) * d;
  std::printf("products %.1f GFLOP a step; float32 FMA peak of one core %.1f GFLOP/s\n",
              3 * forward_flops / 1e9, bench::fma_peak_gflops());
  using clock = std::chrono::steady_clock;
  auto ms = [](clock::time_point a, clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  };
  std::vector<double> fwd, bwd, optim, whole, cpu_fwd, cpu_bwd, cpu_optim, cpu_whole;
  std::unique_ptr<mg::profiler::Profile> prof;
  for (int s = 0; s < steps; ++s) {
    if (profile && s == 1) prof = std::make_unique<mg::profiler::Profile>();
    auto [x, y] = batch(tokens, s, c.batch, c.seq);
    const auto t0 = clock::now();
    const double c0 = cpu_ms();
    mg::Tensor loss = model->forward(x, y);
    const auto t1 = clock::now();
    const double c1 = cpu_ms();
    opt.zero_grad();
    loss.backward();
    const auto t2 = clock::now();
    const double c2 = cpu_ms();
    opt.step();
    const auto t3 = clock::now();
    const double c3 = cpu_ms();
    std::printf(
        "step %d loss %.6f forward %.1f ms backward %.1f ms optimizer %.1f ms step %.1f ms"
        " | cpu forward %.1f ms backward %.1f ms optimizer %.1f ms step %.1f ms\n",
        s, loss.item<double>(), ms(t0, t1), ms(t1, t2), ms(t2, t3), ms(t0, t3), c1 - c0, c2 - c1,
        c3 - c2, c3 - c0);
    std::fflush(stdout);
    if (s > 0 || steps == 1) {
      fwd.push_back(ms(t0, t1));
      bwd.push_back(ms(t1, t2));
      optim.push_back(ms(t2, t3));
      whole.push_back(ms(t0, t3));
      cpu_fwd.push_back(c1 - c0);
      cpu_bwd.push_back(c2 - c1);
      cpu_optim.push_back(c3 - c2);
      cpu_whole.push_back(c3 - c0);
    }
  }
  if (prof) {
    prof->stop();
    std::printf("%s", prof->table("self_cpu_time_total", 30).c_str());
  }
  if (whole.empty()) return 0;
  std::printf(
      "median of steps 1..%d: forward %.1f ms backward %.1f ms optimizer %.1f ms | cpu "
      "forward %.1f ms backward %.1f ms optimizer %.1f ms step %.1f ms\n",
      steps - 1, median(fwd), median(bwd), median(optim), median(cpu_fwd), median(cpu_bwd),
      median(cpu_optim), median(cpu_whole));
  const double step_ms = median(whole);
  std::printf("ms/step %.1f tokens/s %.1f peak RSS %.0f MiB\n", step_ms,
              static_cast<double>(c.batch * c.seq) / step_ms * 1e3, peak_rss_mib());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = ".";
  int steps = 3, threads = 1;
  bool profile = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--dir" && has_value) {
      dir = argv[++i];
    } else if (arg == "--steps" && has_value) {
      steps = std::atoi(argv[++i]);
    } else if (arg == "--threads" && has_value) {
      threads = std::atoi(argv[++i]);
    } else if (arg == "--profile") {
      profile = true;
    } else {
      std::fprintf(stderr, "usage: %s [--dir DIR] [--steps N] [--threads N] [--profile]\n",
                   argv[0]);
      return 2;
    }
  }
  if (steps < 1 || threads < 1) {
    std::fprintf(stderr, "gpt2_mg: --steps and --threads must be >= 1\n");
    return 2;
  }
  try {
    return run(dir, steps, threads, profile);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpt2_mg: %s\n", e.what());
    return 1;
  }
}
