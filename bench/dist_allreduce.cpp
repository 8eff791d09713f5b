// All-reduce of one 25 MB float32 bucket on every rank: minigrad::distributed::all_reduce (with its
// header check), the unchecked path DistributedDataParallel's buckets take, and MPI_Allreduce on a
// raw buffer, interleaved in one run so that all three see the same machine.
//
//   mpirun -np 2 build-bench/bench/dist_allreduce_bench [iterations]
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <minigrad/distributed.h>
#include <minigrad/minigrad.h>

namespace mg = minigrad;
namespace dist = minigrad::distributed;

namespace {
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
template <typename F>
double time_ms(F&& f) {
  MPI_Barrier(MPI_COMM_WORLD);
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 30;
  dist::InitGuard guard;
  const std::int64_t n = 25LL * 1024 * 1024 / 4;  // 25 MiB of float32
  mg::Tensor t = mg::ones({n});
  std::vector<float> raw(static_cast<std::size_t>(n), 1.0f);
  std::vector<double> checked, bucket, mpi, mpi_nb;
  for (int i = 0; i < iterations + 3; ++i) {
    const double a = time_ms([&] { dist::all_reduce(t); });
    const double b =
        time_ms([&] { dist::detail::all_reduce_flat_async(t, dist::ReduceOp::kSum).wait(); });
    const double c = time_ms([&] {
      MPI_Allreduce(MPI_IN_PLACE, raw.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM,
                    MPI_COMM_WORLD);
    });
    const double d = time_ms([&] {
      MPI_Request req;
      MPI_Iallreduce(MPI_IN_PLACE, raw.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM,
                     MPI_COMM_WORLD, &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
    });
    if (i < 3) continue;  // warm-up
    checked.push_back(a);
    bucket.push_back(b);
    mpi.push_back(c);
    mpi_nb.push_back(d);
  }
  if (dist::rank() == 0) {
    const double m = median(mpi);
    std::printf(
        "all_reduce 25 MiB float32 on %d ranks, median of %d (ms): MPI_Allreduce %.2f, "
        "minigrad all_reduce %.2f (%.2fx), DDP bucket path %.2f (%.2fx), MPI_Iallreduce + "
        "MPI_Wait %.2f (%.2fx)\n",
        dist::world_size(), iterations, m, median(checked), median(checked) / m, median(bucket),
        median(bucket) / m, median(mpi_nb), median(mpi_nb) / m);
  }
  return 0;
}
