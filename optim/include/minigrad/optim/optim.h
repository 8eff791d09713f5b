#pragma once
// minigrad::optim: optimizers (SGD, Adam, AdamW, RMSprop, Adagrad, LBFGS) and learning-rate
// schedulers (StepLR, CosineAnnealingLR, LambdaLR, LinearLR, OneCycleLR, SequentialLR,
// ReduceLROnPlateau), C++ readings of torch.optim (PyTorch 1.13).
//
//   mg::optim::SGD opt(params, mg::optim::SGDOptions(0.1).momentum(0.9));
//   mg::optim::lr_scheduler::StepLR sched(opt, /*step_size=*/30);
//   for (...) { opt.zero_grad(); loss.backward(); opt.step(); } sched.step();
#include "minigrad/optim/adagrad.h"
#include "minigrad/optim/adam.h"
#include "minigrad/optim/lbfgs.h"
#include "minigrad/optim/lr_scheduler.h"
#include "minigrad/optim/optimizer.h"
#include "minigrad/optim/rmsprop.h"
#include "minigrad/optim/sgd.h"
