// tiny_lm_ddp: tiny_lm's model trained data-parallel on MPI ranks (docs/distributed.md).
//
//   mpirun -np 2 build/examples/tiny_lm/tiny_lm_ddp [--steps 300] [--batch 32] [--threads 1]
//          [--save tiny_lm_ddp.safetensors]
//   mpirun -np 2 build/examples/tiny_lm/tiny_lm_ddp --check-equivalence [--steps 20]
//
// Every rank builds the same model; DistributedDataParallel copies rank 0's weights to the others
// and averages the gradients in backward, so all ranks take the same optimizer steps. Each rank
// trains on --batch windows of its own per step (its own data stream, seeded by its rank): the
// global batch is --batch times the number of ranks. Only rank 0 prints, evaluates and saves.
// Built only with MINIGRAD_BUILD_DISTRIBUTED (Open MPI); without it, tiny_lm trains on one process.
//
// --check-equivalence shows that data parallelism changes nothing but the speed: every step, all
// ranks draw the same global batch of --batch x ranks windows and each trains on its own slice of
// it (rank r: rows r * batch ..); rank 0 also trains a second copy of the model, in this one
// process, on the whole global batch. Averaging the ranks' gradients of their slices' mean losses
// is the gradient of the global batch's mean loss, so both copies take the same steps, up to
// float rounding: rank 0 prints the largest difference between their parameters and exits 1 when
// it exceeds --tolerance. Dropout is off in this mode (each rank draws its own masks).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
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
  bool check_equivalence = false;
  double tolerance = 1e-4;
  app.add_option("--steps", opt.steps, "training steps")->check(CLI::PositiveNumber);
  app.add_option("--batch", opt.batch, "windows per step on each rank")->check(CLI::PositiveNumber);
  app.add_option("--block", config.block_size, "context length")->check(CLI::Range(2, 256));
  app.add_option("--layers", config.layers, "transformer blocks")->check(CLI::PositiveNumber);
  app.add_option("--heads", config.heads, "attention heads")->check(CLI::PositiveNumber);
  app.add_option("--dim", config.d_model, "model width")->check(CLI::PositiveNumber);
  app.add_option("--lr", opt.lr, "peak learning rate");
  app.add_option("--threads", threads, "minigrad threads per rank")->check(CLI::PositiveNumber);
  app.add_option("--save", save_path, "checkpoint written by rank 0 at the end");
  app.add_flag("--check-equivalence", check_equivalence,
               "train N ranks on slices of one global batch and one process on all of it; print "
               "the largest parameter difference (exit 1 above --tolerance)");
  app.add_option("--tolerance", tolerance,
                 "largest parameter difference --check-equivalence accepts")
      ->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  opt.min_lr = opt.lr / 10;
  if (check_equivalence) {
    if (app.count("--steps") == 0) opt.steps = 20;
    config.dropout = 0;  // each rank would draw its own masks
  }

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
  // Each rank its own windows; with --check-equivalence, every rank the same global batch.
  trainer.rng.seed(opt.data_seed + (check_equivalence ? 0 : static_cast<std::uint64_t>(rank)));
  // The single-process copy (rank 0, --check-equivalence): the same initial weights.
  std::unique_ptr<GPT> single;
  std::unique_ptr<Trainer> single_trainer;
  if (check_equivalence && rank == 0) {
    mg::manual_seed(0);
    single = std::make_unique<GPT>(config);
    single_trainer = std::make_unique<Trainer>(*single, opt);
    single->train();
  }
  if (check_equivalence && rank == 0)
    std::printf(
        "tiny_lm_ddp --check-equivalence: %d steps, global batch %lld windows: %d ranks x %lld "
        "vs 1 process x %lld\n",
        opt.steps, static_cast<long long>(opt.batch * world), world,
        static_cast<long long>(opt.batch), static_cast<long long>(opt.batch * world));
  else if (rank == 0)
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
    Batch b = random_batch(train, check_equivalence ? opt.batch * world : opt.batch,
                           config.block_size, trainer.rng);
    Batch global = b;
    if (check_equivalence) {  // this rank's slice of the global batch
      b.x = b.x.slice(0, rank * opt.batch, (rank + 1) * opt.batch);
      b.y = b.y.slice(0, rank * opt.batch, (rank + 1) * opt.batch);
    }
    mg::Tensor logits = ddp.forward(b.x);
    mg::Tensor loss =
        nn::functional::cross_entropy(logits.reshape({-1, config.vocab_size}), b.y.reshape({-1}));
    trainer.optimizer.zero_grad();
    loss.backward();  // the gradients are averaged over the ranks when it returns
    nn::utils::clip_grad_norm_(model.parameters(), opt.clip);
    trainer.optimizer.step();
    loss_value = loss.item<double>();
    if (single) {  // the same step on the whole global batch, in this process
      for (std::size_t g = 0; g < single_trainer->optimizer.num_param_groups(); ++g)
        single_trainer->optimizer.set_lr(g, lr);
      mg::Tensor single_logits = single->forward(global.x);
      mg::Tensor single_loss = nn::functional::cross_entropy(
          single_logits.reshape({-1, config.vocab_size}), global.y.reshape({-1}));
      single_trainer->optimizer.zero_grad();
      single_loss.backward();
      nn::utils::clip_grad_norm_(single->parameters(), opt.clip);
      single_trainer->optimizer.step();
    }
    if (!check_equivalence && rank == 0 && (trainer.step + 1) % 50 == 0)
      std::printf("step %4d  loss %.3f (rank 0's batch)\n", trainer.step + 1, loss_value);
  }
  if (check_equivalence) {
    if (rank != 0) return 0;
    const std::vector<mg::Tensor> a = model.parameters(), b = single->parameters();
    double largest = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
      largest = std::max(largest, (a[i] - b[i]).abs().max().item<double>());
    const bool ok = largest <= tolerance;
    std::printf("largest parameter difference: %.3g (tolerance %.3g): %s\n", largest, tolerance,
                ok ? "equivalent" : "NOT equivalent");
    return ok ? 0 : 1;
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
