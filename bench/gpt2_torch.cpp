// gpt2_torch: GPT-2 small trained for a few steps in libtorch, from the weights and tokens that
// bench/gpt2_eager.py --init wrote (issue 15): the same model and step as bench/gpt2_mg.cpp and
// bench/gpt2_eager.py, written as a libtorch user would (nanoGPT's module tree and names, the
// "slow attention" path of nanoGPT since libtorch 1.13 has no scaled_dot_product_attention,
// torch::optim::AdamW with two groups, no gradient clipping, a constant learning rate).
//
//   gpt2_torch [--dir DIR] [--steps 3] [--threads 1]
//
// --threads sets torch::set_num_threads and openblas_set_num_threads. The output lines are
// gpt2_mg's. libtorch has no safetensors reader: read_safetensors below reads the simple files
// gpt2_eager.py writes (F32 and I64 tensors, string metadata).
#include <cblas.h>
#include <sys/resource.h>
#include <time.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace F = torch::nn::functional;

// ---------------------------------------------------------------- safetensors

/// A cursor over a JSON text with just what a safetensors header needs: objects, arrays, strings
/// (without escapes other than \" and \\) and integers.
struct Json {
  const std::string& s;
  std::size_t i = 0;
  void ws() {
    while (i < s.size() && std::strchr(" \t\r\n", s[i])) ++i;
  }
  void expect(char c) {
    ws();
    if (i >= s.size() || s[i] != c)
      throw std::runtime_error(std::string("safetensors header: expected '") + c + "' at " +
                               std::to_string(i));
    ++i;
  }
  bool peek(char c) {
    ws();
    return i < s.size() && s[i] == c;
  }
  std::string string() {
    expect('"');
    std::string out;
    while (i < s.size() && s[i] != '"') {
      if (s[i] == '\\') ++i;
      out += s[i++];
    }
    expect('"');
    return out;
  }
  std::int64_t integer() {
    ws();
    std::size_t used = 0;
    std::int64_t v = std::stoll(s.substr(i, 24), &used);
    i += used;
    return v;
  }
  std::vector<std::int64_t> integers() {
    std::vector<std::int64_t> v;
    expect('[');
    while (!peek(']')) {
      v.push_back(integer());
      if (peek(',')) expect(',');
    }
    expect(']');
    return v;
  }
};

struct Safetensors {
  std::map<std::string, torch::Tensor> tensors;
  std::map<std::string, std::string> metadata;
};

Safetensors read_safetensors(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error(path + ": cannot open (run gpt2_eager.py --init first)");
  std::uint64_t n = 0;
  f.read(reinterpret_cast<char*>(&n), 8);
  std::string header(n, ' ');
  f.read(header.data(), static_cast<std::streamsize>(n));
  if (!f) throw std::runtime_error(path + ": truncated header");
  const auto data_start = static_cast<std::streamoff>(8 + n);
  Safetensors out;
  Json j{header};
  j.expect('{');
  while (!j.peek('}')) {
    std::string name = j.string();
    j.expect(':');
    j.expect('{');
    std::string dtype;
    std::vector<std::int64_t> shape, offsets;
    std::map<std::string, std::string> meta;
    while (!j.peek('}')) {
      std::string key = j.string();
      j.expect(':');
      if (name == "__metadata__") {
        meta[key] = j.string();
      } else if (key == "dtype") {
        dtype = j.string();
      } else if (key == "shape") {
        shape = j.integers();
      } else if (key == "data_offsets") {
        offsets = j.integers();
      } else {
        throw std::runtime_error(path + ": unexpected key " + key);
      }
      if (j.peek(',')) j.expect(',');
    }
    j.expect('}');
    if (j.peek(',')) j.expect(',');
    if (name == "__metadata__") {
      out.metadata = meta;
      continue;
    }
    if (offsets.size() != 2 || (dtype != "F32" && dtype != "I64"))
      throw std::runtime_error(path + ": " + name + ": unsupported dtype " + dtype);
    torch::Tensor t =
        torch::empty(shape, dtype == "F32" ? torch::kFloat : torch::kLong).contiguous();
    const std::int64_t bytes = offsets[1] - offsets[0];
    if (bytes != t.numel() * static_cast<std::int64_t>(t.element_size()))
      throw std::runtime_error(path + ": " + name + ": size does not match its shape");
    f.seekg(data_start + offsets[0]);
    f.read(static_cast<char*>(t.data_ptr()), bytes);
    if (!f) throw std::runtime_error(path + ": " + name + ": truncated data");
    out.tensors.emplace(name, t);
  }
  return out;
}

// ---------------------------------------------------------------- nanoGPT's model

struct Config {
  std::int64_t n_layer = 0, n_head = 0, n_embd = 0, vocab_size = 0, block_size = 0, batch = 0,
               seq = 0;
};

struct CausalSelfAttentionImpl : torch::nn::Module {
  explicit CausalSelfAttentionImpl(const Config& c)
      : c_attn(register_module("c_attn", torch::nn::Linear(c.n_embd, 3 * c.n_embd))),
        c_proj(register_module("c_proj", torch::nn::Linear(c.n_embd, c.n_embd))),
        n_head(c.n_head),
        n_embd(c.n_embd) {}
  torch::Tensor forward(const torch::Tensor& x) {
    const std::int64_t B = x.size(0), T = x.size(1), C = x.size(2), hd = C / n_head;
    std::vector<torch::Tensor> qkv = c_attn(x).split(n_embd, 2);
    auto heads = [&](const torch::Tensor& t) { return t.view({B, T, n_head, hd}).transpose(1, 2); };
    torch::Tensor q = heads(qkv[0]), k = heads(qkv[1]), v = heads(qkv[2]);
    torch::Tensor att = torch::matmul(q, k.transpose(-2, -1)) * (1.0 / std::sqrt(double(hd)));
    torch::Tensor future = torch::ones({T, T}, torch::kBool).triu(1);
    att = torch::softmax(att.masked_fill(future, -INFINITY), -1);
    torch::Tensor y = torch::matmul(att, v).transpose(1, 2).contiguous().view({B, T, C});
    return c_proj(y);
  }
  torch::nn::Linear c_attn, c_proj;
  std::int64_t n_head, n_embd;
};
TORCH_MODULE(CausalSelfAttention);

struct MLPImpl : torch::nn::Module {
  explicit MLPImpl(const Config& c)
      : c_fc(register_module("c_fc", torch::nn::Linear(c.n_embd, 4 * c.n_embd))),
        c_proj(register_module("c_proj", torch::nn::Linear(4 * c.n_embd, c.n_embd))) {}
  torch::Tensor forward(const torch::Tensor& x) { return c_proj(torch::gelu(c_fc(x), "tanh")); }
  torch::nn::Linear c_fc, c_proj;
};
TORCH_MODULE(MLP);

struct BlockImpl : torch::nn::Module {
  explicit BlockImpl(const Config& c)
      : ln_1(
            register_module("ln_1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.n_embd})))),
        attn(register_module("attn", CausalSelfAttention(c))),
        ln_2(
            register_module("ln_2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.n_embd})))),
        mlp(register_module("mlp", MLP(c))) {}
  torch::Tensor forward(torch::Tensor x) {
    x = x + attn(ln_1(x));
    return x + mlp(ln_2(x));
  }
  torch::nn::LayerNorm ln_1;
  CausalSelfAttention attn;
  torch::nn::LayerNorm ln_2;
  MLP mlp;
};
TORCH_MODULE(Block);

/// nanoGPT's `transformer` ModuleDict.
struct TransformerImpl : torch::nn::Module {
  explicit TransformerImpl(const Config& c)
      : wte(register_module("wte", torch::nn::Embedding(c.vocab_size, c.n_embd))),
        wpe(register_module("wpe", torch::nn::Embedding(c.block_size, c.n_embd))) {
    for (std::int64_t i = 0; i < c.n_layer; ++i) h->push_back(Block(c));
    register_module("h", h);
    ln_f = register_module("ln_f", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.n_embd})));
  }
  torch::nn::Embedding wte, wpe;
  torch::nn::ModuleList h;
  torch::nn::LayerNorm ln_f{nullptr};
};
TORCH_MODULE(Transformer);

struct GPTImpl : torch::nn::Module {
  explicit GPTImpl(const Config& c)
      : config(c), transformer(register_module("transformer", Transformer(c))) {}
  /// idx, targets [B, T] int64 -> the mean cross-entropy of the next tokens.
  torch::Tensor forward(const torch::Tensor& idx, const torch::Tensor& targets) {
    const std::int64_t T = idx.size(1);
    torch::Tensor x = transformer->wte(idx) + transformer->wpe(torch::arange(T, torch::kLong));
    for (const auto& block : *transformer->h) x = block->as<BlockImpl>()->forward(x);
    torch::Tensor logits = F::linear(transformer->ln_f(x), transformer->wte->weight);  // tied
    return F::cross_entropy(logits.view({-1, config.vocab_size}), targets.view({-1}));
  }
  Config config;
  Transformer transformer;
};
TORCH_MODULE(GPT);

Config config_from(const std::map<std::string, std::string>& meta, const std::string& path) {
  auto get = [&](const char* key) -> std::int64_t {
    auto it = meta.find(key);
    if (it == meta.end()) throw std::runtime_error(path + ": no \"" + key + "\" in the metadata");
    return std::stoll(it->second);
  };
  return {get("n_layer"),    get("n_head"), get("n_embd"), get("vocab_size"),
          get("block_size"), get("batch"),  get("seq")};
}

/// Windows step*B .. step*B+B-1 of T+1 tokens (wrapping), as gpt2_eager.py's batch().
std::pair<torch::Tensor, torch::Tensor> batch(const torch::Tensor& tokens, int step, std::int64_t B,
                                              std::int64_t T) {
  const std::int64_t windows = tokens.numel() / (T + 1);
  std::vector<torch::Tensor> rows;
  for (std::int64_t b = 0; b < B; ++b)
    rows.push_back(tokens.narrow(0, ((step * B + b) % windows) * (T + 1), T + 1));
  torch::Tensor w = torch::stack(rows);
  return {w.narrow(1, 0, T).contiguous(), w.narrow(1, 1, T).contiguous()};
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

int run(const std::string& dir, int steps, int threads) {
  torch::set_num_threads(threads);
  openblas_set_num_threads(threads);
  const std::string weights_path = dir + "/gpt2_init.safetensors";
  Config c;
  GPT model{nullptr};
  {
    Safetensors f = read_safetensors(weights_path);
    c = config_from(f.metadata, weights_path);
    model = GPT(c);  // its random init is overwritten now
    torch::NoGradGuard no_grad;
    auto named = model->named_parameters();
    if (named.size() != f.tensors.size())
      throw std::runtime_error(weights_path + ": " + std::to_string(f.tensors.size()) +
                               " tensors, the model has " + std::to_string(named.size()));
    for (auto& item : named) {
      auto it = f.tensors.find(item.key());
      if (it == f.tensors.end() || it->second.sizes() != item.value().sizes())
        throw std::runtime_error(weights_path + ": no tensor " + item.key() + " of its shape");
      item.value().copy_(it->second);
    }
  }
  const torch::Tensor tokens =
      read_safetensors(dir + "/gpt2_tokens.safetensors").tensors.at("tokens");
  model->train();

  std::vector<torch::Tensor> decay, no_decay;
  std::int64_t n_params = 0;
  for (const torch::Tensor& p : model->parameters()) {
    (p.dim() >= 2 ? decay : no_decay).push_back(p);
    n_params += p.numel();
  }
  auto options = [](double weight_decay) {
    return std::make_unique<torch::optim::AdamWOptions>(
        torch::optim::AdamWOptions(6e-4).betas({0.9, 0.95}).eps(1e-8).weight_decay(weight_decay));
  };
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(decay, options(0.1));
  groups.emplace_back(no_decay, options(0.0));
  torch::optim::AdamW opt(groups);

  std::printf(
      "gpt2 libtorch %s: %lld parameters, B=%lld T=%lld layers=%lld d=%lld vocab=%lld, "
      "threads=%d\n",
      TORCH_VERSION, static_cast<long long>(n_params), static_cast<long long>(c.batch),
      static_cast<long long>(c.seq), static_cast<long long>(c.n_layer),
      static_cast<long long>(c.n_embd), static_cast<long long>(c.vocab_size), threads);
  using clock = std::chrono::steady_clock;
  auto ms = [](clock::time_point a, clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  };
  std::vector<double> fwd, bwd, optim, whole, cpu_fwd, cpu_bwd, cpu_optim, cpu_whole;
  for (int s = 0; s < steps; ++s) {
    auto [x, y] = batch(tokens, s, c.batch, c.seq);
    const auto t0 = clock::now();
    const double c0 = cpu_ms();
    torch::Tensor loss = model->forward(x, y);
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
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--dir" && has_value) {
      dir = argv[++i];
    } else if (arg == "--steps" && has_value) {
      steps = std::atoi(argv[++i]);
    } else if (arg == "--threads" && has_value) {
      threads = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--dir DIR] [--steps N] [--threads N]\n", argv[0]);
      return 2;
    }
  }
  if (steps < 1 || threads < 1) {
    std::fprintf(stderr, "gpt2_torch: --steps and --threads must be >= 1\n");
    return 2;
  }
  try {
    return run(dir, steps, threads);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpt2_torch: %s\n", e.what());
    return 1;
  }
}
