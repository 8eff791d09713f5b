// The memory bound of the fused AdamW step (docs/performance.md, issue 15): a memcpy of as many
// floats as GPT-2 small has parameters (124,439,808), timed in process CPU time (the machine is
// shared), median and minimum of 7 copies.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <vector>

namespace {
double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}
}  // namespace

int main() {
  const std::size_t n = 124439808;
  std::vector<float> a(n, 1.0f), b(n, 2.0f);  // written first: no page faults in the copies
  std::vector<double> t;
  for (int r = 0; r < 7; ++r) {
    const double s = cpu_seconds();
    std::memcpy(b.data(), a.data(), n * sizeof(float));
    t.push_back(cpu_seconds() - s);
  }
  std::sort(t.begin(), t.end());
  const double bytes = static_cast<double>(n * sizeof(float));
  std::printf("memcpy of %.0f MB: median %.1f ms, min %.1f ms; %.2f GB/s (read + write) median\n",
              bytes / 1e6, t[3] * 1e3, t[0] * 1e3, 2 * bytes / t[3] / 1e9);
  return b[n - 1] == 1.0f ? 0 : 1;
}
