// minigrad::nn (in progress).
#include "minigrad/nn/layers.h"
