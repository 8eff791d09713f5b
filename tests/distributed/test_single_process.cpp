// What needs no second process: DistributedSampler against PyTorch's lists, and the errors of a
// call before init().
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <minigrad/data.h>
#include <minigrad/data/distributed_sampler.h>
#include <minigrad/distributed.h>
#include <minigrad/minigrad.h>

#include <minigrad/nn/parallel/distributed.h>
#include "test_util.h"

namespace mg = minigrad;
namespace dist = minigrad::distributed;
using mg::data::DistributedSampler;
using Indices = std::vector<std::int64_t>;

namespace {
using minigrad::testing_util::error_of;

// A DataLoader takes the sampler (shared, to call set_epoch): its batches are the sampler's
// indices, epoch by epoch (the lists of ShuffledShardsMatchTorch below).
TEST(DistributedSampler, FeedsADataLoader) {
  mg::Tensor x = mg::arange(0, 10, 1, mg::kInt64);
  auto sampler = std::make_shared<DistributedSampler>(10, 2, 1);
  mg::data::DataLoader loader(mg::data::TensorDataset({x}), mg::data::DataLoaderOptions(2),
                              sampler);
  Indices seen;
  for (const auto& batch : loader)
    for (std::int64_t v : batch[0].to_vector<std::int64_t>()) seen.push_back(v);
  EXPECT_EQ(seen, (Indices{1, 5, 9, 8, 2}));
  sampler->set_epoch(1);
  seen.clear();
  for (const auto& batch : loader)
    for (std::int64_t v : batch[0].to_vector<std::int64_t>()) seen.push_back(v);
  EXPECT_EQ(seen, (Indices{6, 2, 8, 3, 4}));
  EXPECT_EQ(loader.size(), 3u);  // len(DataLoader(ds, 2, sampler=...)): ceil(5 / 2)
}

// Every expected list below is list(DistributedSampler(range(n), num_replicas, rank, shuffle,
// seed, drop_last)) after set_epoch(epoch), printed by PyTorch 1.13.
TEST(DistributedSampler, ShuffledShardsMatchTorch) {
  DistributedSampler r0(10, 2, 0);
  DistributedSampler r1(10, 2, 1);
  EXPECT_EQ(r0.size(), 5);
  EXPECT_EQ(r0.indices(), (Indices{4, 7, 3, 0, 6}));
  EXPECT_EQ(r1.indices(), (Indices{1, 5, 9, 8, 2}));
  r0.set_epoch(1);
  r1.set_epoch(1);
  EXPECT_EQ(r0.indices(), (Indices{5, 1, 0, 9, 7}));
  EXPECT_EQ(r1.indices(), (Indices{6, 2, 8, 3, 4}));
  // 11 over 2 ranks: padded to 12 by repeating the first index of the shuffle.
  EXPECT_EQ(DistributedSampler(11, 2, 0, true, 5).indices(), (Indices{9, 0, 10, 3, 7, 4}));
  EXPECT_EQ(DistributedSampler(11, 2, 1, true, 5).indices(), (Indices{5, 8, 2, 6, 1, 9}));
  DistributedSampler big(1000, 2, 1, true, 42);
  big.set_epoch(3);
  const Indices v = big.indices();
  ASSERT_EQ(v.size(), 500u);
  EXPECT_EQ(Indices(v.begin(), v.begin() + 4), (Indices{330, 214, 864, 350}));
  EXPECT_EQ(Indices(v.end() - 4, v.end()), (Indices{877, 255, 644, 614}));
}

TEST(DistributedSampler, PaddingAndDropLast) {
  EXPECT_EQ(DistributedSampler(11, 3, 0, false).indices(), (Indices{0, 3, 6, 9}));
  EXPECT_EQ(DistributedSampler(11, 3, 2, false).indices(), (Indices{2, 5, 8, 0}));
  DistributedSampler dropped(11, 3, 1, true, 0, true);
  EXPECT_EQ(dropped.size(), 3);
  EXPECT_EQ(dropped.indices(), (Indices{0, 5, 1}));
  EXPECT_EQ(DistributedSampler(11, 3, 2, true, 0, true).indices(), (Indices{4, 8, 9}));
  // Fewer samples than ranks: every rank still gets one.
  EXPECT_EQ(DistributedSampler(2, 3, 2, false).indices(), (Indices{0}));
}

TEST(DistributedSampler, Iteration) {
  DistributedSampler s(10, 2, 1);
  Indices seen;
  for (std::int64_t i : s) seen.push_back(i);
  EXPECT_EQ(seen, (Indices{1, 5, 9, 8, 2}));
}

TEST(DistributedSampler, Errors) {
  EXPECT_EQ(error_of([] { DistributedSampler(10, 2, 2); }),
            "[DistributedSampler] invalid rank 2, rank should be in the interval [0, 1]");
  EXPECT_EQ(error_of([] { DistributedSampler(-1, 2, 0); }),
            "[DistributedSampler] dataset_size must be non-negative, got -1");
  EXPECT_EQ(error_of([] { DistributedSampler(4, 0, 0); }),
            "[DistributedSampler] num_replicas must be at least 1, got 0");
}

TEST(DistributedBeforeInit, EveryCallSaysSo) {
  ASSERT_FALSE(dist::is_initialized());
  const std::string hint =
      "minigrad::distributed is not initialised: call minigrad::distributed::init() (or make an "
      "InitGuard) first, in a program started by mpirun";
  mg::Tensor t = mg::zeros({2});
  EXPECT_EQ(error_of([&] { dist::all_reduce(t); }), "[all_reduce] " + hint);
  EXPECT_EQ(error_of([&] { dist::broadcast(t); }), "[broadcast] " + hint);
  EXPECT_EQ(error_of([&] { dist::all_gather(t); }), "[all_gather] " + hint);
  EXPECT_EQ(error_of([&] { dist::reduce_scatter(t); }), "[reduce_scatter] " + hint);
  EXPECT_EQ(error_of([&] { dist::send(t, 0); }), "[send] " + hint);
  EXPECT_EQ(error_of([&] { dist::recv(t, 0); }), "[recv] " + hint);
  EXPECT_EQ(error_of([] { dist::rank(); }), "[rank] " + hint);
  EXPECT_EQ(error_of([] { dist::world_size(); }), "[world_size] " + hint);
  EXPECT_EQ(error_of([] { dist::barrier(); }), "[barrier] " + hint);
  EXPECT_EQ(error_of([] { DistributedSampler s(4); }), "[world_size] " + hint);
  mg::nn::Linear model(2, 2);
  EXPECT_EQ(error_of([&] { mg::nn::parallel::DistributedDataParallel ddp(model); }),
            "[DistributedDataParallel] minigrad::distributed is not initialised: call "
            "minigrad::distributed::init() first");
}

// docs/errors.md quotes the messages these tests check (and test_collectives.cpp, test_ddp.cpp).
TEST(DistributedErrors, DocumentedInErrorsMd) {
  std::ifstream in(MINIGRAD_SOURCE_DIR "/docs/errors.md");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  ASSERT_FALSE(doc.empty());
  const std::vector<std::string> messages = {
      "[all_reduce] minigrad::distributed is not initialised: call minigrad::distributed::init() "
      "(or make an InitGuard) first, in a program started by mpirun",
      "[all_reduce] ReduceOp::kAvg needs a floating-point tensor, got int64",
      "[broadcast] src must be a rank in [0, 2), got 2",
      "[send] tag must be in [0, 16383], got 20000",
      "[reduce_scatter] the input must have shape (world_size, ...) = (2, ...), got (3, 2)",
      "[all_reduce] the tensor is undefined",
      "[recv] rank 0 sent a float64 tensor of 4 elements, but the receiving tensor is float32 "
      "with 3 elements",
      "[DistributedDataParallel] minigrad::distributed is not initialised: call "
      "minigrad::distributed::init() first",
      "[DistributedSampler] invalid rank 2, rank should be in the interval [0, 1]",
      "[DistributedSampler] dataset_size must be non-negative, got -1",
      "[DistributedSampler] num_replicas must be at least 1, got 0",
      "[DistributedDataParallel] bucket_cap_mb must be positive, got 0",
      // test_fail_fast.cpp's
      "[DistributedDataParallel] the ranks disagree: rank 0 called DistributedDataParallel's "
      "all_reduce of the gradients (1 bucket, 21 elements), rank 1 called barrier",
      "[DistributedDataParallel] the ranks disagree: rank 0 called DistributedDataParallel on a "
      "model of 4 parameters (21 elements) and 0 buffers (0 elements), rank 1 called "
      "DistributedDataParallel on a model of 6 parameters (23 elements) and 0 buffers (0 elements)",
      "[all_reduce] rank 1 has left (it called finalize(), or its InitGuard ended) while this rank "
      "(0 of 2) waits in all_reduce: every rank must make the same calls in the same order (did "
      "the ranks run different numbers of steps?)",
      "[all_reduce] the tensor is an expanded view (shape (4, 3), stride 0 in dim 0): its elements "
      "share memory, so all_reduce cannot write a result into each of them. Pass a tensor of its "
      "own: Tensor c = t.contiguous(); all_reduce(c);",
      "[finalize] rank 0 ends the job: an operation timed out, and MPI cannot finalize while "
      "another rank is stuck",
  };
  for (const std::string& m : messages) EXPECT_NE(doc.find(m), std::string::npos) << m;
}

TEST(DistributedErrors, RandpermOfANegativeSize) {
  EXPECT_EQ(error_of([] { mg::randperm(-1); }), "[randperm] n must be non-negative, got -1");
}

}  // namespace
