// minigrad::nn (in progress).
#include "minigrad/nn/loss.h"
