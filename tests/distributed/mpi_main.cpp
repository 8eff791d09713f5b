// main() of the MPI test programs: one init before the tests, one finalize after; only rank 0
// prints gtest's summary, and the job fails if any rank failed.
#include <gtest/gtest.h>

#include <cstdint>

#include <minigrad/distributed.h>
#include <minigrad/minigrad.h>

int main(int argc, char** argv) {
  namespace dist = minigrad::distributed;
  ::testing::InitGoogleTest(&argc, argv);
  dist::InitGuard guard;
  if (dist::rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int rc = RUN_ALL_TESTS();
  minigrad::Tensor worst = minigrad::tensor({static_cast<std::int64_t>(rc)}, minigrad::kInt64);
  dist::all_reduce(worst, dist::ReduceOp::kMax);
  return static_cast<int>(worst.item<std::int64_t>());
}
