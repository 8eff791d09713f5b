// The cost of a long autograd graph (issue 39 item 5): one source, built twice, against minigrad
// (graph_memory) and against libtorch (graph_memory_torch, -DGRAPH_MEMORY_TORCH). Each chain
// builds N ops on a 1-element float32 tensor that requires grad, then runs backward, and prints
// the heap the graph holds per op (glibc's mallinfo2: bytes in use after the chain minus before,
// divided by N), the CPU time to build it and to run backward, per op.
//
//   graph_memory [N=1000000]        graph_memory_torch [N=1000000]
//
// Each chain runs in a process of its own (fork), so that no chain reuses memory another freed
// (minigrad's caching allocator keeps freed blocks for reuse, which mallinfo2 counts as in use).
// Chains: `mul` y = y * 1.0001 (the node saves no tensor), `tanh` y = tanh(y) (saves its output),
// `add` y = y + x (a leaf: two edges, nothing saved), `mul_t` y = y * x (saves both inputs).
#ifdef GRAPH_MEMORY_TORCH
#include <torch/torch.h>
namespace lib = torch;
using Tensor = torch::Tensor;
const char* const kName = "libtorch";
Tensor leaf() { return torch::full({1}, 0.5, torch::requires_grad()); }
#else
#include <minigrad/minigrad.h>
namespace lib = minigrad;
using Tensor = minigrad::Tensor;
const char* const kName = "minigrad";
Tensor leaf() { return minigrad::full({1}, 0.5).requires_grad_(); }
#endif

#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace {

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

/// Bytes the heap has handed out and not taken back (small blocks and mmapped ones).
double heap_in_use() {
  struct mallinfo2 m = mallinfo2();
  return static_cast<double>(m.uordblks) + static_cast<double>(m.hblkhd);
}

void run(const char* name, long n, const std::function<Tensor(const Tensor&, const Tensor&)>& op) {
  Tensor x = leaf();
  malloc_trim(0);
  const double heap0 = heap_in_use();
  const double t0 = cpu_seconds();
  Tensor y = x;
  for (long i = 0; i < n; ++i) y = op(y, x);
  const double t1 = cpu_seconds();
  const double heap1 = heap_in_use();
  y.sum().backward();
  const double t2 = cpu_seconds();
  const double grad = x.grad().template item<double>();
  y = Tensor();
  std::printf(
      "%-9s %-6s n=%ld: %7.1f bytes/op held, build %6.1f ns/op, backward %6.1f ns/op"
      " (x.grad %.6g)\n",
      kName, name, n, (heap1 - heap0) / static_cast<double>(n),
      (t1 - t0) * 1e9 / static_cast<double>(n), (t2 - t1) * 1e9 / static_cast<double>(n), grad);
}

}  // namespace

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 1000000;
  if (n <= 0) {
    std::fprintf(stderr, "usage: %s [N > 0]\n", argv[0]);
    return 2;
  }
  using Op = std::function<Tensor(const Tensor&, const Tensor&)>;
  const std::vector<std::pair<const char*, Op>> chains = {
      {"mul", [](const Tensor& y, const Tensor&) { return y * 1.0001; }},
      {"tanh", [](const Tensor& y, const Tensor&) { return lib::tanh(y); }},
      {"add", [](const Tensor& y, const Tensor& x) { return y + x; }},
      {"mul_t", [](const Tensor& y, const Tensor& x) { return y * x; }},
  };
  int status = 0;
  for (const auto& [name, op] : chains) {
    std::fflush(stdout);
    const pid_t pid = fork();
    if (pid == 0) {
      lib::set_num_threads(1);
      run(name, n, op);
      std::fflush(stdout);
      _exit(0);
    }
    int child = 0;
    if (pid < 0 || waitpid(pid, &child, 0) != pid || !WIFEXITED(child) || WEXITSTATUS(child) != 0) {
      std::fprintf(stderr, "%s: the %s chain failed\n", kName, name);
      status = 1;
    }
  }
  return status;
}
