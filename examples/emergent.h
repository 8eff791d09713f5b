#pragma once
// learn_projections --emergent: the attention pattern is not given as a target; it has to emerge
// from a prediction task over a generated corpus (see emergent.cpp).
#include <cstdint>
#include <string>

struct EmergentOptions {
  std::uint64_t seed = 0;
  int steps = 100;
  double lr = 0.05;
  std::int64_t dim = 8;        // d_k
  std::int64_t value_dim = 3;  // d_v
  std::string picture;         // PNG of the adjectives' attention in a few held-out phrases
};

/// Trains W_q, W_k, W_v and a readout; returns 0 when the held-out accuracy is at least 0.9.
int run_emergent(const EmergentOptions& options);
