// A 2-rank job that must fail, for test_fail_fast.cpp. "throw": rank 1 throws at once while rank 0
// waits in an all_reduce (mpirun must end rank 0). "stuck": rank 1 sleeps while rank 0 waits in an
// all_reduce (rank 0's MINIGRAD_DIST_TIMEOUT must end the job).
#include <chrono>
#include <string>
#include <thread>

#include <minigrad/distributed.h>
#include <minigrad/minigrad.h>

int main(int argc, char** argv) {
  namespace dist = minigrad::distributed;
  const std::string mode = argc > 1 ? argv[1] : "";
  dist::InitGuard guard;
  if (dist::rank() == 1) {
    if (mode == "throw") throw minigrad::Error("[fail_fast_child] rank 1 gives up");
    std::this_thread::sleep_for(std::chrono::seconds(60));
    return 0;
  }
  minigrad::Tensor t = minigrad::ones({4});
  dist::all_reduce(t);  // never completes: rank 1 is not there
  return 0;
}
