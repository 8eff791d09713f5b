#pragma once
// MG_ARG: a chained option of a module's options struct, as libtorch's TORCH_ARG (defined in
// minigrad/arg.h, shared with the optimizers' options):
//
//   struct FlattenOptions {
//     MG_ARG(std::int64_t, start_dim) = 1;
//   };
//   FlattenOptions().start_dim(2).start_dim()  // 2
#include "minigrad/arg.h"
