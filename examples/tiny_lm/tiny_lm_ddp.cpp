// tiny_lm_ddp: tiny_lm's model trained data-parallel on MPI ranks (docs/distributed.md).
//
//   mpirun -np 2 build/examples/tiny_lm/tiny_lm_ddp [--steps 300] [--batch 32] [--threads 1]
//          [--save tiny_lm_ddp.safetensors]
//
// Every rank builds the same model; DistributedDataParallel copies rank 0's weights to the others
// and averages the gradients in backward, so all ranks take the same optimizer steps. Each rank
// trains on --batch windows of its own per step (its own data stream, seeded by its rank): the
// global batch is --batch times the number of ranks. Only rank 0 prints, evaluates and saves.
// Built only with MINIGRAD_BUILD_DISTRIBUTED (Open MPI); without it, tiny_lm trains on one process.
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <minigrad/distributed.h>
#include <minigrad/nn/parallel/distributed.h>

#include "gpt.h"
#include "language.h"

using namespace tiny_lm;
namespace dist = minigrad::distributed;

int main(int argc, char** argv) {
  CLI::App app{"Train tiny_lm data-parallel on MPI ranks (start with mpirun)."};
  Config config;
  TrainOptions opt;
  opt.steps = 300;
  int threads = 1;
  std::string save_path;
  app.add_option("--steps", opt.steps, "training steps")->check(CLI::PositiveNumber);
  app.add_option("--batch", opt.batch, "windows per step on each rank")->check(CLI::PositiveNumber);
  app.add_option("--block", config.block_size, "context length")->check(CLI::Range(2, 256));
  app.add_option("--layers", config.layers, "transformer blocks")->check(CLI::PositiveNumber);
  app.add_option("--heads", config.heads, "attention heads")->check(CLI::PositiveNumber);
  app.add_option("--dim", config.d_model, "model width")->check(CLI::PositiveNumber);
  app.add_option("--lr", opt.lr, "peak learning rate");
  app.add_option("--threads", threads, "minigrad threads per rank")->check(CLI::PositiveNumber);
  app.add_option("--save", save_path, "checkpoint written by rank 0 at the end");
  CLI11_PARSE(app, argc, argv);
  opt.min_lr = opt.lr / 10;

  dist::InitGuard guard;
  const int rank = dist::rank();
  const int world = dist::world_size();
  mg::set_num_threads(threads);

  Language lang;
  const std::vector<std::int64_t> train = lang.stream(20000, 1000);
  const std::vector<std::int64_t> validation = lang.stream(2000, 2000);
  config.vocab_size = lang.vocab_size();
  mg::manual_seed(0);
  GPT model(config);
  mg::nn::parallel::DistributedDataParallel ddp(model);
  Trainer trainer(model, opt);
  trainer.rng.seed(opt.data_seed + static_cast<std::uint64_t>(rank));  // each rank its own windows
  if (rank == 0)
    std::printf(
        "tiny_lm_ddp: %d ranks x %d thread(s), %lld windows per rank per step, %lld "
        "parameters\n",
        world, threads, static_cast<long long>(opt.batch),
        static_cast<long long>(model.num_parameters()));

  model.train();
  const auto t0 = std::chrono::steady_clock::now();
  double loss_value = 0;
  for (; trainer.step < opt.steps; ++trainer.step) {
    const double lr = learning_rate(opt, trainer.step);
    for (std::size_t g = 0; g < trainer.optimizer.num_param_groups(); ++g)
      trainer.optimizer.set_lr(g, lr);
    Batch b = random_batch(train, opt.batch, config.block_size, trainer.rng);
    mg::Tensor logits = ddp.forward(b.x);
    mg::Tensor loss =
        nn::functional::cross_entropy(logits.reshape({-1, config.vocab_size}), b.y.reshape({-1}));
    trainer.optimizer.zero_grad();
    loss.backward();  // the gradients are averaged over the ranks when it returns
    nn::utils::clip_grad_norm_(model.parameters(), opt.clip);
    trainer.optimizer.step();
    loss_value = loss.item<double>();
    if (rank == 0 && (trainer.step + 1) % 50 == 0)
      std::printf("step %4d  loss %.3f (rank 0's batch)\n", trainer.step + 1, loss_value);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double tokens = static_cast<double>(opt.steps) * static_cast<double>(opt.batch) *
                        static_cast<double>(config.block_size) * world;
  if (rank == 0) {
    std::printf("validation loss %.3f; %.0f tokens/s over %d ranks (%.1f s)\n",
                evaluate(model, validation, opt.eval_windows), tokens / seconds, world, seconds);
    // A checkpoint from rank 0 only: every rank holds the same weights.
    if (!save_path.empty()) {
      try {
        save_checkpoint(trainer, save_path);
      } catch (const mg::Error& e) {
        std::fprintf(stderr, "tiny_lm_ddp: %s\n", e.what());
        return 2;
      }
      std::printf("checkpoint: %s\n", save_path.c_str());
    }
  }
  return 0;
}
