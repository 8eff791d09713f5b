#pragma once
// data::transforms, as torch::data::transforms: what dataset.map(...) applies to each batch.
//
//   auto ds = MyDataset()
//                 .map(mg::data::transforms::Normalize<>(0.5, 0.25))    // each example's data
//                 .map(mg::data::transforms::Stack<>());                // the batch into one
//
// A BatchTransform<In, Out> turns a whole batch In into Out (apply_batch); a Transform<In, Out>
// turns each example of a std::vector<In> batch into an Out (apply). Lambda, BatchLambda, Collate
// and TensorLambda wrap a function; Normalize and Stack are the usual ones. A DataLoader with
// workers calls apply_batch from several threads at once, so a transform must not change its own
// state there (these do not).
#include <functional>
#include <utility>
#include <vector>

#include "minigrad/data/example.h"
#include "minigrad/ops/elementwise.h"
#include "minigrad/ops/shape.h"
#include "minigrad/tensor.h"

namespace minigrad::data::transforms {

/// Turns a batch InputBatch into an OutputBatch (torch::data::transforms::BatchTransform).
template <typename InputBatch, typename OutputBatch>
class BatchTransform {
 public:
  using InputBatchType = InputBatch;
  using OutputBatchType = OutputBatch;
  virtual ~BatchTransform() = default;
  virtual OutputBatch apply_batch(InputBatch input_batch) = 0;
};

/// Turns each example of a batch (a std::vector<Input>) into an Output (Transform).
template <typename Input, typename Output>
class Transform : public BatchTransform<std::vector<Input>, std::vector<Output>> {
 public:
  using InputType = Input;
  using OutputType = Output;
  virtual OutputType apply(InputType input) = 0;
  /// apply() on each example, in order.
  std::vector<Output> apply_batch(std::vector<Input> input_batch) override {
    std::vector<Output> output_batch;
    output_batch.reserve(input_batch.size());
    for (auto&& input : input_batch) output_batch.push_back(apply(std::move(input)));
    return output_batch;
  }
};

/// A BatchTransform that calls a function on the batch (BatchLambda<Input, Output = Input>).
template <typename Input, typename Output = Input>
class BatchLambda : public BatchTransform<Input, Output> {
 public:
  using typename BatchTransform<Input, Output>::InputBatchType;
  using typename BatchTransform<Input, Output>::OutputBatchType;
  using FunctionType = std::function<OutputBatchType(InputBatchType)>;
  explicit BatchLambda(FunctionType function) : function_(std::move(function)) {}
  OutputBatchType apply_batch(InputBatchType input_batch) override {
    return function_(std::move(input_batch));
  }

 private:
  FunctionType function_;
};

/// A Transform that calls a function on each example (Lambda<Input, Output = Input>).
template <typename Input, typename Output = Input>
class Lambda : public Transform<Input, Output> {
 public:
  using typename Transform<Input, Output>::InputType;
  using typename Transform<Input, Output>::OutputType;
  using FunctionType = std::function<Output(Input)>;
  explicit Lambda(FunctionType function) : function_(std::move(function)) {}
  OutputType apply(InputType input) override { return function_(std::move(input)); }

 private:
  FunctionType function_;
};

/// A transform that reduces a batch of T to one T (torch::data::transforms::Collation).
template <typename T, typename BatchType = std::vector<T>>
using Collation = BatchTransform<BatchType, T>;

/// A Collation made of a function: Collate<int>([](std::vector<int> v) { return sum(v); }).
template <typename T, typename BatchType = std::vector<T>>
using Collate = BatchLambda<BatchType, T>;

/// A Transform of each example's data tensor; the target passes through (TensorTransform).
template <typename Target = Tensor>
class TensorTransform : public Transform<Example<Tensor, Target>, Example<Tensor, Target>> {
 public:
  using E = Example<Tensor, Target>;
  using typename Transform<E, E>::InputType;
  using typename Transform<E, E>::OutputType;
  /// The new data tensor.
  virtual Tensor operator()(Tensor input) = 0;
  OutputType apply(InputType input) override {
    input.data = (*this)(std::move(input.data));
    return input;
  }
};

/// A TensorTransform made of a function: TensorLambda<>([](mg::Tensor t) { return t * 2; }).
template <typename Target = Tensor>
class TensorLambda : public TensorTransform<Target> {
 public:
  using FunctionType = std::function<Tensor(Tensor)>;
  explicit TensorLambda(FunctionType function) : function_(std::move(function)) {}
  Tensor operator()(Tensor input) override { return function_(std::move(input)); }

 private:
  FunctionType function_;
};

namespace detail {
/// values as a float32 tensor [C, 1, 1] (Normalize's mean and stddev); throws when empty, when
/// stddev has a zero, or when the two lists differ in length.
Tensor normalize_moments(const std::vector<double>& values);
void check_normalize(const std::vector<double>& mean, const std::vector<double>& stddev);
}  // namespace detail

/// (data - mean) / stddev per channel, for data [C, H, W] (torch::data::transforms::Normalize):
/// mean and stddev are one value for every channel or one per channel; the result is float32
/// [C, H, W] ([1, H, W] for data [H, W], as libtorch's).
template <typename Target = Tensor>
struct Normalize : public TensorTransform<Target> {
  /// One mean and one stddev for every channel.
  Normalize(double mean_, double stddev_)
      : Normalize(std::vector<double>{mean_}, std::vector<double>{stddev_}) {}
  /// A mean and a stddev per channel: Normalize<>({0.5, 1.5}, {0.1, 0.2}).
  Normalize(const std::vector<double>& mean_, const std::vector<double>& stddev_)
      : mean((detail::check_normalize(mean_, stddev_), detail::normalize_moments(mean_))),
        stddev(detail::normalize_moments(stddev_)) {}
  Tensor operator()(Tensor input) override { return (input - mean) / stddev; }
  Tensor mean, stddev;
};

/// Stacks a batch of examples into one example of batched tensors (torch::data::transforms::
/// Stack): data [B, ...] and target [B, ...]. Stack<TensorExample> stacks data only, and
/// Stack<Tensor> a batch of plain tensors.
template <typename ExampleT = Example<>>
struct Stack : public Collation<ExampleT> {
  ExampleT apply_batch(std::vector<ExampleT> batch) override {
    std::vector<Tensor> data, target;
    data.reserve(batch.size());
    target.reserve(batch.size());
    for (ExampleT& e : batch) {
      data.push_back(std::move(e.data));
      target.push_back(std::move(e.target));
    }
    return {stack(data, 0), stack(target, 0)};
  }
};

template <>
struct Stack<TensorExample> : public Collation<TensorExample> {
  TensorExample apply_batch(std::vector<TensorExample> batch) override {
    std::vector<Tensor> data;
    data.reserve(batch.size());
    for (TensorExample& e : batch) data.push_back(std::move(e.data));
    return stack(data, 0);
  }
};

template <>
struct Stack<Tensor> : public Collation<Tensor> {
  Tensor apply_batch(std::vector<Tensor> batch) override { return stack(batch, 0); }
};

}  // namespace minigrad::data::transforms
