#pragma once
// minigrad::data: datasets, transforms, samplers and the DataLoader (torch::data /
// torch.utils.data).
#include "minigrad/data/chunk.h"
#include "minigrad/data/dataloader.h"
#include "minigrad/data/dataset.h"
#include "minigrad/data/example.h"
#include "minigrad/data/sampler.h"
#include "minigrad/data/transforms.h"
