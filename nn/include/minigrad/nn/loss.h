#pragma once
// minigrad::nn (in progress).
#include "minigrad/nn/module.h"
