#pragma once
// minigrad::nn: modules, layers, functional, init, utils, and every op (minigrad/ops.h): the
// headers of the pieces include only what their declarations need, this one is for scripts.
#include "minigrad/nn/activation.h"
#include "minigrad/nn/aten.h"
#include "minigrad/nn/attention.h"
#include "minigrad/nn/containers.h"
#include "minigrad/nn/functional.h"
#include "minigrad/nn/init.h"
#include "minigrad/nn/layers.h"
#include "minigrad/nn/linear.h"
#include "minigrad/nn/loss.h"
#include "minigrad/nn/loss_more.h"
#include "minigrad/nn/module.h"
#include "minigrad/nn/serialize.h"
#include "minigrad/nn/transformer.h"
#include "minigrad/nn/utils.h"
#include "minigrad/ops.h"
