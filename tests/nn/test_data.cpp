// minigrad::data against PyTorch 1.13: torch.utils.data.DataLoader's batches (Python) and
// torch::data::make_data_loader's (libtorch, from a C++ program built against libtorch-dev), for
// the same seeds. The expected lists are what those programs printed.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "minigrad/data.h"
#include "minigrad/minigrad.h"

namespace mg = minigrad;
namespace data = minigrad::data;

namespace {

template <typename Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const mg::Error& e) {
    return e.what();
  }
  return "(no error)";
}

std::vector<std::int64_t> ints(const mg::Tensor& t) {
  return t.reshape({-1}).to_vector<std::int64_t>();
}

// ds = TensorDataset(torch.arange(10), torch.arange(10) * 10)
data::TensorDataset arange_dataset() {
  mg::Tensor x = mg::arange(0, 10, 1, mg::kInt64);
  return data::TensorDataset({x, x * 10});
}

// class DS : public torch::data::datasets::Dataset<DS> {  // the libtorch program's dataset
//   torch::data::Example<> get(size_t i) override { return {torch::tensor(i), torch::tensor(10 *
//   i)}; } torch::optional<size_t> size() const override { return 10; } };
struct Ten : data::datasets::Dataset<Ten> {
  data::Example<> get(std::size_t i) override {
    auto v = static_cast<std::int64_t>(i);
    return {mg::tensor(v), mg::tensor(10 * v)};
  }
  std::optional<std::size_t> size() const override { return 10; }
};

// Ten examples; example 7 asks a 5-example TensorDataset for its index (a library error). Counts
// the examples loaded, from whichever thread.
struct BrokenAtSeven : data::datasets::Dataset<BrokenAtSeven> {
  data::Example<> get(std::size_t i) override {
    ++*loaded;
    if (i == 7) data::TensorDataset({mg::zeros({5})}).get(i);
    auto v = static_cast<std::int64_t>(i);
    return {mg::tensor(v), mg::tensor(10 * v)};
  }
  std::optional<std::size_t> size() const override { return 10; }
  std::shared_ptr<std::atomic<int>> loaded = std::make_shared<std::atomic<int>>(0);
};

}  // namespace

TEST(DataLoader, ShuffledBatchesAreTorchUtilsData) {
  // torch.manual_seed(0); dl = DataLoader(ds, batch_size=3, shuffle=True)
  // [b[0].tolist() for b in dl]; [b[1].tolist() for b in dl]; torch.randn(2).tolist()
  // Workers change nothing (Note [DataLoader workers]): the same with num_workers=3.
  for (std::size_t workers : {0, 3}) {
    SCOPED_TRACE("workers " + std::to_string(workers));
    mg::manual_seed(0);
    data::DataLoader loader(arange_dataset(),
                            data::DataLoaderOptions(3).shuffle(true).workers(workers));
    EXPECT_EQ(loader.size(), 4u);
    EXPECT_EQ(loader.options().max_jobs(), 2 * workers);
    std::vector<std::vector<std::int64_t>> first, second;
    for (const std::vector<mg::Tensor>& batch : loader) {
      ASSERT_EQ(batch.size(), 2u);
      first.push_back(ints(batch[0]));
    }
    for (const auto& batch : loader) second.push_back(ints(batch[1]));
    using V = std::vector<std::vector<std::int64_t>>;
    EXPECT_EQ(first, (V{{6, 7, 1}, {4, 2, 0}, {9, 8, 3}, {5}}));
    EXPECT_EQ(second, (V{{20, 40, 70}, {0, 80, 90}, {50, 30, 60}, {10}}));
    // The generator is where PyTorch's is after two epochs.
    std::vector<float> next = mg::randn({2}).to_vector<float>();
    EXPECT_FLOAT_EQ(next[0], -1.0845223665237427f);
    EXPECT_FLOAT_EQ(next[1], -1.3985954523086548f);
  }
}

TEST(DataLoader, InOrderDropLastAndAGenerator) {
  // torch.manual_seed(0); dl = DataLoader(ds, batch_size=3); [x for x in dl]; torch.randn(2)
  mg::manual_seed(0);
  data::DataLoader in_order(arange_dataset(), data::DataLoaderOptions(3));
  std::vector<std::vector<std::int64_t>> got;
  for (const auto& batch : in_order) got.push_back(ints(batch[0]));
  using V = std::vector<std::vector<std::int64_t>>;
  EXPECT_EQ(got, (V{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {9}}));
  EXPECT_FLOAT_EQ(mg::randn({2}).to_vector<float>()[0], -0.29050925374031067f);
  // torch.manual_seed(0); dl = DataLoader(ds, batch_size=4, shuffle=True, drop_last=True)
  mg::manual_seed(0);
  data::DataLoader dropped(
      arange_dataset(),
      data::DataLoaderOptions(4).shuffle(true).drop_last(true).num_workers(2).max_jobs(1));
  got.clear();
  for (const auto& batch : dropped) got.push_back(ints(batch[0]));
  EXPECT_EQ(got, (V{{6, 7, 1, 4}, {2, 0, 9, 8}}));
  EXPECT_EQ(dropped.size(), 2u);
  // g = torch.Generator(); g.manual_seed(42); DataLoader(ds, batch_size=4, shuffle=True,
  // generator=g)
  mg::Generator g;
  g.manual_seed(42);
  data::DataLoader seeded(arange_dataset(), data::DataLoaderOptions(4).shuffle(true).generator(g));
  got.clear();
  for (const auto& batch : seeded) got.push_back(ints(batch[0]));
  EXPECT_EQ(got, (V{{6, 5, 4, 0}, {8, 9, 2, 1}, {3, 7}}));
  EXPECT_EQ(seeded.size(), 3u);
}

TEST(DataLoader, MakeDataLoaderIsLibtorchs) {
  // torch::manual_seed(0);
  // auto loader = torch::data::make_data_loader(DS().map(torch::data::transforms::Stack<>()),
  //                                             torch::data::DataLoaderOptions().batch_size(3));
  // two epochs of batch.data, then torch::randn({2})
  // The same with .workers(2) (Note [DataLoader workers]).
  for (std::size_t workers : {0, 2}) {
    SCOPED_TRACE("workers " + std::to_string(workers));
    mg::manual_seed(0);
    auto loader = data::make_data_loader(Ten().map(data::transforms::Stack<>()),
                                         data::DataLoaderOptions().batch_size(3).workers(workers));
    std::vector<std::int64_t> epochs;
    for (int epoch = 0; epoch < 2; ++epoch)
      for (auto& batch : *loader) {
        EXPECT_EQ(ints(batch.target), ints(batch.data * 10));
        for (std::int64_t v : ints(batch.data)) epochs.push_back(v);
      }
    EXPECT_EQ(epochs, (std::vector<std::int64_t>{3, 9, 4, 2, 7, 8, 6, 0, 5, 1,  //
                                                 4, 0, 8, 5, 9, 1, 6, 3, 7, 2}));
    std::vector<float> next = mg::randn({2}).to_vector<float>();
    EXPECT_NEAR(next[0], -0.7229f, 1e-4);
    EXPECT_NEAR(next[1], 2.8663f, 1e-4);
  }
  // torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
  //     DS().map(Stack<>()), torch::data::DataLoaderOptions(4).drop_last(true)): draws nothing
  mg::manual_seed(0);
  auto seq = data::make_data_loader<data::samplers::SequentialSampler>(
      Ten().map(data::transforms::Stack<>()), data::DataLoaderOptions(4).drop_last(true));
  std::vector<std::vector<std::int64_t>> got;
  for (auto& batch : *seq) got.push_back(ints(batch.target));
  EXPECT_EQ(got, (std::vector<std::vector<std::int64_t>>{{0, 10, 20, 30}, {40, 50, 60, 70}}));
  EXPECT_FLOAT_EQ(mg::randn({2}).to_vector<float>()[0], 1.5409960746765137f);
  // Without a transform a batch is the std::vector of examples.
  auto raw =
      data::make_data_loader<data::samplers::SequentialSampler>(Ten(), data::DataLoaderOptions(4));
  std::size_t n = 0;
  for (std::vector<data::Example<>>& batch : *raw) n += batch.size();
  EXPECT_EQ(n, 10u);
}

TEST(DataLoaderWorkers, AWorkersErrorSurfacesAtItsBatch) {
  const std::string error_message = "[TensorDataset] index 7 is out of range for 5 examples";
  for (std::size_t workers : {0, 1, 3}) {
    SCOPED_TRACE("workers " + std::to_string(workers));
    // From a worker, libtorch's WorkerException (a minigrad::Error) carries the message.
    const std::string expected =
        workers == 0
            ? error_message
            : "Caught exception in DataLoader worker thread. Original message: " + error_message;
    auto loader = data::make_data_loader<data::samplers::SequentialSampler>(
        BrokenAtSeven(), data::DataLoaderOptions(2).workers(workers));
    std::vector<std::size_t> sizes;
    const std::string error = error_of([&] {
      for (auto& batch : *loader) sizes.push_back(batch.size());
    });
    EXPECT_EQ(error, expected);
    EXPECT_EQ(sizes, (std::vector<std::size_t>{2, 2, 2}));  // examples 0-5, then 6-7 throws
    // The loader still works: the next epoch fails at the same place.
    EXPECT_EQ(error_of([&] {
                for (auto& batch : *loader) (void)batch;
              }),
              expected);
  }
}

TEST(DataLoaderWorkers, BreakingOutEarlyStopsCleanly) {
  BrokenAtSeven counted;  // breaks before reaching example 7
  std::shared_ptr<std::atomic<int>> loaded = counted.loaded;
  {
    auto loader = data::make_data_loader<data::samplers::SequentialSampler>(
        std::move(counted), data::DataLoaderOptions(1).workers(2).max_jobs(2));
    for (int epoch = 0; epoch < 3; ++epoch) {
      std::vector<std::int64_t> got;
      for (auto& batch : *loader) {
        got.push_back(batch[0].data.item<std::int64_t>());
        if (got.size() == 2) break;
      }
      EXPECT_EQ(got, (std::vector<std::int64_t>{0, 1}));
    }
    // At most max_jobs batches are requested ahead: examples 0-3 of each epoch.
    EXPECT_LE(loaded->load(), 3 * 4);
  }  // the loader's destruction joins its threads while they are idle
  EXPECT_GE(loaded->load(), 3 * 2);
  // A loader destroyed in the middle of an epoch with batches still loading.
  mg::manual_seed(0);
  {
    data::DataLoader big(data::TensorDataset({mg::arange(0, 1000, 1, mg::kInt64)}),
                         data::DataLoaderOptions(1).shuffle(true).workers(4));
    auto it = big.begin();
    EXPECT_EQ((*it)[0].numel(), 1);
  }
}

TEST(DataLoader, TensorDatasetBatchesEqualStackedExamples) {
  mg::manual_seed(1);
  mg::Tensor x = mg::randn({7, 2, 3});
  mg::Tensor y = mg::randint(0, 5, {7});
  data::TensorDataset ds({x, y});
  EXPECT_EQ(*ds.size(), 7u);
  std::vector<mg::Tensor> batch = ds.get_batch({5, 0, 3});
  EXPECT_TRUE(mg::equal(batch[0], mg::stack({x[5], x[0], x[3]}, 0)));
  EXPECT_TRUE(mg::equal(batch[1], mg::stack({y[5], y[0], y[3]}, 0)));
  EXPECT_TRUE(mg::equal(ds.get(6)[0], x[6]));
}

TEST(DataLoader, Errors) {
  mg::Tensor x = mg::zeros({10, 2});
  EXPECT_EQ(error_of([&] {
              data::TensorDataset({x, mg::zeros({9})});
            }),
            "[TensorDataset] size mismatch between tensors: tensor 1 has shape (9,) but tensor 0 "
            "has shape (10, 2) (their first dims must match)");
  EXPECT_EQ(error_of([&] { data::TensorDataset(std::vector<mg::Tensor>{}); }),
            "[TensorDataset] needs at least one tensor");
  EXPECT_EQ(error_of([&] { data::TensorDataset({x}).get(10); }),
            "[TensorDataset] index 10 is out of range for 10 examples");
  EXPECT_EQ(
      error_of([&] { data::DataLoader(data::TensorDataset({x}), data::DataLoaderOptions(0)); }),
      "[DataLoader] batch_size must be positive, got 0");
  EXPECT_EQ(error_of([&] {
              data::DataLoader(data::TensorDataset({x}), data::DataLoaderOptions(2).shuffle(true),
                               std::make_unique<data::samplers::SequentialSampler>(10));
            }),
            "[DataLoader] shuffle(true) and a sampler are mutually exclusive (as in PyTorch): pass "
            "samplers::RandomSampler to shuffle");
}
