#pragma once
// The umbrella header: everything a training script needs.
#include "minigrad/autograd.h"
#include "minigrad/dtype.h"
#include "minigrad/error.h"
#include "minigrad/ops.h"
#include "minigrad/tensor.h"
