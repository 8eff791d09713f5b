#pragma once
// The public ops. Every differentiable op here has an entry in tests/core/op_table.cpp.
// Dims may be negative (counted from the end). Every op throws minigrad::Error on bad input.
// The families live in minigrad/ops/*.h; this header includes them all.
#include "minigrad/ops/backward.h"
#include "minigrad/ops/creation.h"
#include "minigrad/ops/elementwise.h"
#include "minigrad/ops/index.h"
#include "minigrad/ops/linalg.h"
#include "minigrad/ops/math.h"
#include "minigrad/ops/matrix.h"
#include "minigrad/ops/nn.h"
#include "minigrad/ops/out.h"
#include "minigrad/ops/random.h"
#include "minigrad/ops/reduce.h"
#include "minigrad/ops/reduce_more.h"
#include "minigrad/ops/shape.h"
