#pragma once
// char_gpt: nanoGPT's character-level GPT and training loop, in minigrad, on Debian's fortunes.
//
// The model, its AdamW parameter groups, the random-window batches and the checkpoints are
// tiny_lm's (examples/tiny_lm/gpt.h); what char_gpt adds is nanoGPT's loop around them:
//   warm-up + cosine learning rate   SequentialLR(LinearLR, CosineAnnealingLR), one step a batch
//   clip_grad_norm_                  before every optimizer step
//   estimate_loss                    validation windows under InferenceMode, every eval_every
//   generate                         temperature, top-k (topk + masked_fill), multinomial
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <minigrad/minigrad.h>

#include "gpt.h"

namespace char_gpt {

namespace mg = minigrad;

/// The default model and run: about 3 minutes on 2 cores (docs/char_gpt.md has the timings).
tiny_lm::Config default_config();
tiny_lm::TrainOptions default_train_options();

/// nanoGPT's learning rate as minigrad's schedulers: linear warm-up from lr / warmup to lr over
/// `warmup` steps, then a cosine decay to min_lr at `steps` (a plain cosine when warmup is 0).
/// The optimizer's groups are first set to lr, then the schedule is stepped `done` times, so a
/// resumed run continues the same sequence of learning rates.
std::unique_ptr<mg::optim::lr_scheduler::LRScheduler> make_schedule(mg::optim::Optimizer& optimizer,
                                                                    const tiny_lm::TrainOptions& o,
                                                                    int done = 0);

/// Mean cross-entropy (nats per character) of `windows` windows of the model's context, spread
/// evenly over `stream` (all of them when it holds fewer), under InferenceMode and in eval mode.
double estimate_loss(tiny_lm::GPT& model, const std::vector<std::int64_t>& stream,
                     std::int64_t windows);

/// nanoGPT's training loop from trainer.step to `until` (-1: trainer.options.steps; the schedule
/// always spans options.steps): a batch of random windows, forward, cross-entropy, zero_grad,
/// backward, clip_grad_norm_, AdamW step, scheduler step. Validates every eval_every steps and at
/// the last step, then calls on_step.
void train(tiny_lm::Trainer& trainer, const std::vector<std::int64_t>& train_stream,
           const std::vector<std::int64_t>& validation_stream,
           const std::function<void(const tiny_lm::Progress&)>& on_step, int until = -1);

/// Continues `prompt` (token ids, not empty) by n characters: each drawn from the softmax of the
/// last logits divided by temperature, keeping only the top_k largest (0: all), with
/// multinomial from `generator`. The same generator state gives the same text.
std::vector<std::int64_t> generate(tiny_lm::GPT& model, std::vector<std::int64_t> prompt, int n,
                                   double temperature, int top_k, mg::Generator& generator);

}  // namespace char_gpt
