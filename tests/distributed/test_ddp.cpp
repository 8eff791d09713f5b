// DistributedDataParallel on 2 ranks against single-process training with the same global batch:
// the definition of data parallelism. Each rank also trains the reference model on the whole
// batch itself, so the comparison needs no communication of its own.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <minigrad/distributed.h>
#include <minigrad/minigrad.h>
#include <minigrad/nn/parallel/distributed.h>

namespace mg = minigrad;
namespace dist = minigrad::distributed;
namespace nn = minigrad::nn;
using nn::parallel::DistributedDataParallel;
using nn::parallel::DistributedDataParallelOptions;

namespace {

struct Mlp : nn::Module {
  nn::Linear fc1;
  nn::Linear fc2;
  nn::Linear unused;  // used only when use_all
  bool use_all = true;
  explicit Mlp(mg::Dtype dt)
      : nn::Module("Mlp"), fc1(4, 8, true, dt), fc2(8, 3, true, dt), unused(3, 3, true, dt) {
    register_module("fc1", fc1);
    register_module("fc2", fc2);
    register_module("unused", unused);
  }
  mg::Tensor forward(const mg::Tensor& x) const {
    mg::Tensor h = fc2(fc1(x).tanh());
    return use_all ? unused(h) : h;
  }
};

// The global batch: 8 rows; rank r takes rows [4r, 4r + 4).
mg::Tensor inputs(mg::Dtype dt) {
  return (mg::arange(0, 32, 1, mg::kFloat64).reshape({8, 4}) * 0.1).tanh().to(dt);
}
mg::Tensor targets(mg::Dtype dt) {
  return (mg::arange(0, 24, 1, mg::kFloat64).reshape({8, 3}) * 0.3 - 3.0).tanh().to(dt);
}
mg::Tensor shard(const mg::Tensor& t) { return t.narrow(0, 4 * dist::rank(), 4); }

void sgd_step(nn::Module& m, double lr) {
  mg::NoGradGuard no_grad;
  for (mg::Tensor& p : m.parameters())
    if (p.grad().defined()) p.sub_(p.grad() * lr);
}

double max_diff_tensors(const mg::Tensor& a, const mg::Tensor& b) {
  return (a - b).abs().max().to(mg::kFloat64).item<double>();
}

/// The largest |a - b| over the two modules' parameters.
double max_diff(const nn::Module& a, const nn::Module& b) {
  const auto pa = a.parameters();
  const auto pb = b.parameters();
  double worst = 0;
  for (std::size_t i = 0; i < pa.size(); ++i)
    worst = std::max(worst, (pa[i] - pb[i]).abs().max().to(mg::kFloat64).item<double>());
  return worst;
}

double max_grad_diff(const nn::Module& a, const nn::Module& b) {
  const auto pa = a.parameters();
  const auto pb = b.parameters();
  double worst = 0;
  for (std::size_t i = 0; i < pa.size(); ++i) {
    if (!pa[i].grad().defined() && !pb[i].grad().defined()) continue;
    worst =
        std::max(worst, (pa[i].grad() - pb[i].grad()).abs().max().to(mg::kFloat64).item<double>());
  }
  return worst;
}

struct Case {
  mg::Dtype dtype;
  double bucket_cap_mb;  // tiny: every parameter its own bucket
  double tolerance;
};

class DdpTraining : public ::testing::TestWithParam<Case> {};

TEST_P(DdpTraining, EqualsSingleProcessWithTheGlobalBatch) {
  const Case c = GetParam();
  mg::manual_seed(static_cast<std::uint64_t>(1 + dist::rank()));  // different inits per rank
  Mlp model(c.dtype);
  DistributedDataParallelOptions opts;
  opts.bucket_cap_mb = c.bucket_cap_mb;
  DistributedDataParallel ddp(model, opts);
  Mlp reference(c.dtype);
  reference.load_state_dict(model.state_dict());  // rank 0's weights, after the broadcast
  // The broadcast made the ranks' models equal: rank 1's first weight is rank 0's.
  mg::Tensor w = model.fc1->parameters()[0].detach().clone();
  mg::Tensor w0 = w.clone();
  dist::broadcast(w0, 0);
  EXPECT_EQ(max_diff_tensors(w, w0), 0.0);

  const mg::Tensor x = inputs(c.dtype);
  const mg::Tensor y = targets(c.dtype);
  for (int step = 0; step < 5; ++step) {
    model.zero_grad();
    nn::functional::mse_loss(ddp.forward(shard(x)), shard(y)).backward();
    sgd_step(model, 0.5);
    reference.zero_grad();
    nn::functional::mse_loss(reference.forward(x), y).backward();
    sgd_step(reference, 0.5);
    EXPECT_LE(max_diff(model, reference), c.tolerance) << "step " << step;
  }
  // Training moved the weights (the comparison is not between two untouched models).
  EXPECT_GT((model.fc1->parameters()[0] - w).abs().max().to(mg::kFloat64).item<double>(), 1e-3);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, DdpTraining,
                         ::testing::Values(Case{mg::kFloat64, 25.0, 1e-12},
                                           Case{mg::kFloat64, 1e-4, 1e-12},
                                           Case{mg::kFloat32, 25.0, 1e-6},
                                           Case{mg::kFloat32, 1e-4, 1e-6}));

TEST(Ddp, BucketsInReverseParameterOrder) {
  Mlp model(mg::kFloat32);
  DistributedDataParallel one(model);
  EXPECT_EQ(one.bucket_parameter_names(),
            (std::vector<std::vector<std::string>>{{"unused.bias", "unused.weight", "fc2.bias",
                                                    "fc2.weight", "fc1.bias", "fc1.weight"}}));
  // 100 bytes: a bucket closes as soon as it holds 100 bytes (25 float32 values).
  DistributedDataParallelOptions opts;
  opts.bucket_cap_mb = 100.0 / (1024 * 1024);
  DistributedDataParallel small(model, opts);
  // unused->bias (3) + unused->weight (9) = 48 bytes < 100, + fc2->bias (3): 60, + fc2->weight
  // (24): 156 >= 100 closes; fc1->bias (8): 32, + fc1->weight (32): 160.
  EXPECT_EQ(
      small.bucket_parameter_names(),
      (std::vector<std::vector<std::string>>{
          {"unused.bias", "unused.weight", "fc2.bias", "fc2.weight"}, {"fc1.bias", "fc1.weight"}}));
}

TEST(Ddp, NoSyncAccumulationEqualsTheLargerBatch) {
  Mlp model(mg::kFloat64);
  DistributedDataParallel ddp(model);
  Mlp reference(mg::kFloat64);
  reference.load_state_dict(model.state_dict());
  const mg::Tensor x = shard(inputs(mg::kFloat64));
  const mg::Tensor y = shard(targets(mg::kFloat64));
  model.zero_grad();
  {
    auto no_sync = ddp.no_sync();
    nn::functional::mse_loss(ddp.forward(x.narrow(0, 0, 2)), y.narrow(0, 0, 2)).backward();
  }
  nn::functional::mse_loss(ddp.forward(x.narrow(0, 2, 2)), y.narrow(0, 2, 2)).backward();
  // Two micro-batches of 2 rows per rank, each loss a mean over 2 rows, summed, then averaged
  // over 2 ranks: the gradient of 2 * mse over all 8 rows.
  reference.zero_grad();
  (nn::functional::mse_loss(reference.forward(inputs(mg::kFloat64)), targets(mg::kFloat64)) * 2.0)
      .backward();
  EXPECT_LE(max_grad_diff(model, reference), 1e-12);
}

TEST(Ddp, UnusedParameterIsNamed) {
  Mlp model(mg::kFloat32);
  model.use_all = false;
  DistributedDataParallelOptions opts;
  opts.bucket_cap_mb = 1e-4;
  DistributedDataParallel ddp(model, opts);
  const mg::Tensor x = shard(inputs(mg::kFloat32));
  ddp.forward(x).sum().backward();
  try {
    ddp.forward(x);
    FAIL() << "expected an error";
  } catch (const mg::Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "[DistributedDataParallel] the previous backward gave no gradient to the "
              "parameters 'unused.weight', 'unused.bias' (rank " +
                  std::to_string(dist::rank()) +
                  "): DDP waits for every parameter's gradient before it averages them. Pass "
                  "find_unused_parameters = true if the forward does not use every parameter");
  }
}

TEST(Ddp, FindUnusedParameters) {
  Mlp model(mg::kFloat64);
  model.use_all = false;
  DistributedDataParallelOptions opts;
  opts.find_unused_parameters = true;
  opts.bucket_cap_mb = 1e-4;
  DistributedDataParallel ddp(model, opts);
  Mlp reference(mg::kFloat64);
  reference.use_all = false;
  reference.load_state_dict(model.state_dict());
  for (int step = 0; step < 3; ++step) {
    model.zero_grad();
    nn::functional::mse_loss(ddp.forward(shard(inputs(mg::kFloat64))), shard(targets(mg::kFloat64)))
        .backward();
    reference.zero_grad();
    nn::functional::mse_loss(reference.forward(inputs(mg::kFloat64)), targets(mg::kFloat64))
        .backward();
    EXPECT_LE(max_diff(model, reference), 1e-12);
    // The unused parameters' gradients are the average of zeros.
    EXPECT_EQ(model.unused->parameters()[0].grad().abs().max().item<double>(), 0.0);
    EXPECT_LE(std::abs(max_grad_diff(*model.fc1, *reference.fc1)), 1e-12);
    sgd_step(model, 0.5);
    sgd_step(reference, 0.5);
  }
}

TEST(Ddp, EvalForwardUnderNoGradDoesNotArm) {
  Mlp model(mg::kFloat32);
  DistributedDataParallel ddp(model);
  const mg::Tensor x = shard(inputs(mg::kFloat32));
  {
    mg::NoGradGuard no_grad;
    ddp.forward(x);
  }
  // A plain backward after it is local: nothing waits for the other rank.
  model.zero_grad();
  ddp.module().forward(x).sum().backward();
  mg::Tensor local = model.fc1->parameters()[0].grad().clone();
  model.zero_grad();
  ddp.forward(x).sum().backward();  // synchronised: the average of both ranks' gradients
  mg::Tensor avg = local.clone();
  dist::all_reduce(avg, dist::ReduceOp::kAvg);
  EXPECT_LE(max_diff_tensors(model.fc1->parameters()[0].grad(), avg), 1e-6);
}

TEST(Ddp, BadBucketSize) {
  Mlp model(mg::kFloat32);
  DistributedDataParallelOptions opts;
  opts.bucket_cap_mb = 0;
  try {
    DistributedDataParallel ddp(model, opts);
    FAIL() << "expected an error";
  } catch (const mg::Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "[DistributedDataParallel] bucket_cap_mb must be positive, got 0");
  }
}

}  // namespace
