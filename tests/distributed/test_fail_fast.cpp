// A rank that throws, or one that is stuck, makes the whole job exit non-zero within seconds,
// never hang: runs fail_fast_child (2 ranks) through the same mpiexec wrapper as the tests.
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
}

}  // namespace
