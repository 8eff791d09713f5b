#pragma once
// minigrad::data: datasets, samplers and the DataLoader (torch::data / torch.utils.data).
#include "minigrad/data/dataloader.h"
#include "minigrad/data/dataset.h"
#include "minigrad/data/sampler.h"
