// minigrad::nn (in progress).
#include "minigrad/nn/attention.h"
