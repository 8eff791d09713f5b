// A libtorch training program, unchanged: built against libtorch it is libtorch code; built with
// PORT_MINIGRAD, the three lines below rename torch:: (and c10::, TORCH_MODULE) to minigrad's,
// which is all a port takes. tests/port/run_port.sh checks that the minigrad build prints
// libtorch's numbers (expected_libtorch.txt, printed by the libtorch build), and, where
// libtorch-dev is installed, that the libtorch build still prints them.
#ifdef PORT_MINIGRAD
#include <minigrad/data.h>
#include <minigrad/minigrad.h>
namespace torch = minigrad;
namespace c10 = minigrad;
#define TORCH_MODULE MG_MODULE
#else
#include <torch/torch.h>
#endif

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

using torch::indexing::Slice;

// ---- from here on: libtorch code as it is written for libtorch ----

struct NetImpl : torch::nn::Module {
  NetImpl() {
    fc1 = register_module("fc1", torch::nn::Linear(4, 16));
    fc2 = register_module("fc2", torch::nn::Linear(16, 2));
  }
  torch::Tensor forward(torch::Tensor x) { return fc2(torch::relu(fc1(x))); }
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
};
TORCH_MODULE(Net);

// Points in 4-D; the label says whether the first coordinate is positive.
struct Blobs : torch::data::datasets::Dataset<Blobs> {
  explicit Blobs(torch::Tensor points)
      : x(points), y(points.index({Slice(), 0}).gt(0).to(torch::kLong)) {}
  torch::data::Example<> get(size_t i) override {
    return {x[static_cast<int64_t>(i)], y[static_cast<int64_t>(i)]};
  }
  torch::optional<size_t> size() const override { return static_cast<size_t>(x.size(0)); }
  torch::Tensor x, y;
};

int main() {
  torch::manual_seed(0);
  Net net;
  auto params = net->named_parameters();
  std::printf("parameters: %d, fc1.weight sum %.4f, has fc2.bias %d\n",
              static_cast<int>(params.size()), params["fc1.weight"].sum().item<float>(),
              static_cast<int>(params.contains("fc2.bias")));

  torch::Tensor points = torch::randn({96, 4});
  auto loader = torch::data::make_data_loader(Blobs(points).map(torch::data::transforms::Stack<>()),
                                              torch::data::DataLoaderOptions().batch_size(32));
  torch::optim::SGD optimizer(net->parameters(), torch::optim::SGDOptions(0.1));

  for (int epoch = 0; epoch < 5; ++epoch) {
    double total = 0;
    int batches = 0;
    for (auto& batch : *loader) {
      // step(closure), as LBFGS needs it; SGD calls it once and returns its loss.
      torch::Tensor loss = optimizer.step([&] {
        optimizer.zero_grad();
        torch::Tensor l =
            torch::nn::functional::cross_entropy(net->forward(batch.data), batch.target);
        l.backward();
        return l;
      });
      total += loss.item<float>();
      ++batches;
    }
    std::printf("epoch %d: mean loss %.4f over %d batches\n", epoch, total / batches, batches);
  }

  c10::InferenceMode guard;
  torch::Tensor test = torch::randn({200, 4});
  torch::Tensor labels = test.index({Slice(), 0}).gt(0).to(torch::kLong);
  torch::Tensor predicted = net->forward(test).argmax(1);
  std::printf("accuracy %.3f, first logit %.4f\n",
              predicted.eq(labels).sum().item<int64_t>() / 200.0,
              net->forward(test.index({Slice(0, 1)})).index({0, 1}).item<float>());

  // The loss modules with their options and reduction tags.
  torch::Tensor logits = net->forward(test);
  torch::Tensor z = logits.index({Slice(), 1});
  torch::Tensor y = labels.to(torch::kFloat);
  torch::nn::CrossEntropyLoss ce(torch::nn::CrossEntropyLossOptions()
                                     .weight(torch::tensor({1.0f, 2.0f}))
                                     .label_smoothing(0.1)
                                     .reduction(torch::kMean));
  torch::nn::NLLLoss nll(torch::nn::NLLLossOptions().ignore_index(1));
  torch::nn::MSELoss mse_sum(torch::kSum);
  torch::nn::L1Loss l1;
  torch::nn::SmoothL1Loss smooth_l1(torch::nn::SmoothL1LossOptions().beta(0.5));
  torch::nn::HuberLoss huber(torch::nn::HuberLossOptions(torch::kMean).delta(0.5));
  torch::nn::BCEWithLogitsLoss bce_logits(
      torch::nn::BCEWithLogitsLossOptions().pos_weight(torch::tensor({2.0f})));
  torch::nn::BCELoss bce;
  torch::nn::AnyModule any_mse(torch::nn::MSELoss{});
  std::printf("losses: ce %.4f nll %.4f mse(sum of 4) %.4f mse %.4f l1 %.4f\n",
              ce(logits, labels).item<float>(),
              nll(torch::log_softmax(logits, 1), labels).item<float>(),
              mse_sum(z.index({Slice(0, 4)}), y.index({Slice(0, 4)})).item<float>(),
              any_mse.forward(z, y).item<float>(), l1(z, y).item<float>());
  std::printf("losses: smooth_l1 %.4f huber %.4f bce_with_logits %.4f bce %.4f\n",
              smooth_l1(z, y).item<float>(), huber(z, y).item<float>(),
              bce_logits(z, y).item<float>(), bce(torch::sigmoid(z), y).item<float>());
  return 0;
}
