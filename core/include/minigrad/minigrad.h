#pragma once
// The umbrella header: everything a training script needs (like <torch/torch.h>).
#include "minigrad/autograd.h"
#include "minigrad/backward_steps.h"
#include "minigrad/custom_function.h"
#include "minigrad/dtype.h"
#include "minigrad/error.h"
#include "minigrad/generator.h"
#include "minigrad/indexing.h"
#include "minigrad/ops.h"
#include "minigrad/parallel.h"
#include "minigrad/parameter_names.h"
#include "minigrad/profiler.h"
#include "minigrad/string_util.h"
#include "minigrad/tensor.h"

// nn, optim and data, when the target links minigrad::nn / minigrad::optim (minigrad::minigrad
// does; data is in the nn library).
#if __has_include("minigrad/nn/nn.h")
#include "minigrad/nn/nn.h"
#endif
#if __has_include("minigrad/optim/optim.h")
#include "minigrad/optim/optim.h"
#endif
#if __has_include("minigrad/data.h")
#include "minigrad/data.h"
#endif
