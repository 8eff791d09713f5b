// A rank that throws, or one that is stuck, makes the whole job exit non-zero within seconds,
// never hang; ranks that go apart (different numbers of batches, different models, a rank that
// has left) get a minigrad::Error on every rank that is still waiting, never Open MPI's own abort.
// Runs fail_fast_child (2 ranks) through the same mpiexec wrapper as the tests.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <string>

namespace {

struct Result {
  int exit_code;
  double seconds;
  std::string output;
};

Result run_job(const std::string& mode, const std::string& env) {
  const std::string cmd =
      env + " " MINIGRAD_MPI_WRAPPER " " MINIGRAD_MPIEXEC " -x MINIGRAD_DIST_TIMEOUT -np 2 " +
      MINIGRAD_FAIL_FAST_CHILD " " + mode + " 2>&1";
  const auto start = std::chrono::steady_clock::now();
  FILE* pipe = popen(cmd.c_str(), "r");
  std::string output;
  std::array<char, 512> buf{};
  while (pipe && fgets(buf.data(), buf.size(), pipe)) output += buf.data();
  const int status = pipe ? pclose(pipe) : -1;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, seconds, output};
}

TEST(FailFast, ARankThatThrowsEndsTheJob) {
  // The deadline is 10 minutes: ending within seconds is mpirun's doing, not the timeout's.
  const Result r = run_job("throw", "MINIGRAD_DIST_TIMEOUT=600");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_LT(r.seconds, 20.0) << r.output;
  EXPECT_NE(r.output.find("[fail_fast_child] rank 1 gives up"), std::string::npos) << r.output;
}

TEST(FailFast, AStuckRankTimesOut) {
  const Result r = run_job("stuck", "MINIGRAD_DIST_TIMEOUT=2");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_LT(r.seconds, 20.0) << r.output;
  EXPECT_NE(r.output.find("[all_reduce] timed out after 2 s waiting for the other ranks (this is "
                          "rank 0 of 2)"),
            std::string::npos)
      << r.output;
  // Rank 0 catches the error and returns from main: its InitGuard ends the job rather than wait in
  // MPI_Finalize for the rank that sleeps.
  EXPECT_NE(r.output.find("[finalize] rank 0 ends the job: an operation timed out, and MPI cannot "
                          "finalize while another rank is stuck"),
            std::string::npos)
      << r.output;
}

/// Whether the job's output has `line` as a whole line.
bool has_line(const std::string& output, const std::string& line) {
  return ("\n" + output).find("\n" + line + "\n") != std::string::npos;
}

/// A job of mode that fails with the same error on both ranks, and not through Open MPI's abort.
void expect_error_on_both_ranks(const std::string& mode, const std::string& what) {
  const Result r = run_job(mode, "MINIGRAD_DIST_TIMEOUT=600");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has_line(r.output, "rank 0: " + what)) << r.output;
  EXPECT_TRUE(has_line(r.output, "rank 1: " + what)) << r.output;
  EXPECT_EQ(r.output.find("MPI_ERR"), std::string::npos) << r.output;
}

// The case: rank 0 trains 8 batches, rank 1 trains 5 and then calls barrier(). Before,
// Open MPI aborted the job (MPI_ERR_TRUNCATE ... MPI_ERRORS_ARE_FATAL).
TEST(FailFast, RanksThatRunDifferentNumbersOfBatchesBothThrow) {
  const Result r = run_job("uneven", "MINIGRAD_DIST_TIMEOUT=600");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_LT(r.seconds, 20.0) << r.output;
  const std::string what =
      "the ranks disagree: rank 0 called DistributedDataParallel's all_reduce of the gradients (1 "
      "bucket, 21 elements), rank 1 called barrier";
  EXPECT_TRUE(has_line(r.output, "rank 0: [DistributedDataParallel] " + what)) << r.output;
  EXPECT_TRUE(has_line(r.output, "rank 1: [barrier] " + what)) << r.output;
  EXPECT_EQ(r.output.find("MPI_ERR"), std::string::npos) << r.output;
}

TEST(FailFast, RanksWithDifferentModelsBothThrow) {
  expect_error_on_both_ranks(
      "params",
      "[DistributedDataParallel] the ranks disagree: rank 0 called DistributedDataParallel on a "
      "model of 4 parameters (21 elements) and 0 buffers (0 elements), rank 1 called "
      "DistributedDataParallel on a model of 6 parameters (23 elements) and 0 buffers (0 "
      "elements)");
}

// Rank 1 returns from main (its InitGuard finalizes) while rank 0 waits in an all_reduce: rank 0
// throws within the grace period, not after the 600 s deadline.
TEST(FailFast, ARankThatHasLeftIsNoticedWithinSeconds) {
  const Result r = run_job("gone", "MINIGRAD_DIST_TIMEOUT=600");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_LT(r.seconds, 20.0) << r.output;
  EXPECT_TRUE(has_line(r.output,
                       "rank 0: [all_reduce] rank 1 has left (it called finalize(), or its "
                       "InitGuard ended) while this rank (0 of 2) waits in all_reduce: every rank "
                       "must make the same calls in the same order (did the ranks run different "
                       "numbers of steps?)"))
      << r.output;
}

TEST(FailFast, AllReduceOfAnExpandedTensorNamesTheCollective) {
  expect_error_on_both_ranks(
      "expanded",
      "[all_reduce] the tensor is an expanded view (shape (4, 3), stride 0 in dim 0): its elements "
      "share memory, so all_reduce cannot write a result into each of them. Pass a tensor of its "
      "own: Tensor c = t.contiguous(); all_reduce(c);");
}

}  // namespace
