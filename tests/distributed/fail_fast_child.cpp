// A 2-rank job that must fail, for test_fail_fast.cpp. Each mode is one way for ranks to go apart:
//   throw    rank 1 throws at once while rank 0 waits in an all_reduce (mpirun must end rank 0);
//   stuck    rank 1 sleeps while rank 0 waits in an all_reduce (MINIGRAD_DIST_TIMEOUT ends it);
//   uneven   DDP training where rank 0 runs 8 batches and rank 1 runs 5, then a barrier;
//   params   DDP over models with different numbers of parameters;
//   gone     rank 1 leaves (its InitGuard finalizes) while rank 0 waits in an all_reduce;
//   expanded all_reduce of an expanded tensor (on both ranks).
// Every rank catches what it throws and prints "rank R: <what()>", then exits 1.
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include <minigrad/distributed.h>
#include <minigrad/minigrad.h>
#include <minigrad/nn/parallel/distributed.h>

namespace {
namespace mg = minigrad;
namespace dist = minigrad::distributed;
namespace nn = minigrad::nn;

void train(nn::Sequential& model, int batches) {
  nn::parallel::DistributedDataParallel ddp(model);
  for (int step = 0; step < batches; ++step) {
    mg::Tensor x = mg::ones({4, 3}) * (step + 1);
    mg::Tensor loss = ddp.forward(x).pow(2).mean();
    loss.backward();
  }
}

void run(const std::string& mode) {
  const int rank = dist::rank();
  if (mode == "throw" && rank == 1) throw minigrad::Error("[fail_fast_child] rank 1 gives up");
  if (mode == "stuck" && rank == 1) {
    std::this_thread::sleep_for(std::chrono::seconds(60));
    return;
  }
  if (mode == "gone" && rank == 1) return;
  if (mode == "uneven") {
    mg::manual_seed(0);
    nn::Sequential model{nn::Linear(3, 4), nn::Tanh(), nn::Linear(4, 1)};
    train(model, rank == 0 ? 8 : 5);
    dist::barrier();
    return;
  }
  if (mode == "params") {
    nn::Sequential model{nn::Linear(3, 4), nn::Tanh(), nn::Linear(4, 1)};
    if (rank == 1) model->push_back(nn::Linear(1, 1));
    train(model, 2);
    return;
  }
  if (mode == "expanded") {
    mg::Tensor t = mg::ones({1, 3}).expand({4, 3});
    dist::all_reduce(t);
    return;
  }
  mg::Tensor t = mg::ones({4});
  dist::all_reduce(t);  // never completes: rank 1 is not there
}
}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  dist::InitGuard guard;
  if (mode == "throw") run(mode);  // uncaught: the job must end through mpirun
  try {
    run(mode);
  } catch (const minigrad::Error& e) {
    std::printf("rank %d: %s\n", dist::rank(), e.what());
    std::fflush(stdout);
    return 1;
  }
  return 0;
}
