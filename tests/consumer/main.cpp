// Built by CI against the installed package: one gradient step on the lesson's warm/jacket scores.
#include <cmath>
#include <cstdio>

#include <minigrad/minigrad.h>

namespace mg = minigrad;

int main() {
  mg::Tensor q = mg::tensor({0.0, 2.0}).requires_grad_();
  mg::Tensor keys = mg::tensor({{1.0, 0.0}, {0.0, 1.0}});
  mg::Tensor w = mg::softmax(mg::matmul(keys, q), -1);
  w.select(0, 1).backward();  // d weight_jacket / d q
  float jacket = w.to_vector<float>()[1];
  float g = q.grad().to_vector<float>()[1];
  std::printf("weight on jacket %.4f, d/dq[1] %.4f\n", jacket, g);
  // softmax'(z) = p (1 - p) with p = 0.8808
  return std::fabs(jacket - 0.8808f) < 1e-4f && std::fabs(g - 0.8808f * 0.1192f) < 1e-3f ? 0 : 1;
}
