// A libtorch training program, unchanged: built against libtorch it is libtorch code; built with
// PORT_MINIGRAD, the four lines below rename torch:: (and c10::, TORCH_MODULE,
// FORWARD_HAS_DEFAULT_ARGS) to minigrad's,
// which is all a port takes. tests/port/run_port.sh checks that the minigrad build prints
// libtorch's numbers (expected_libtorch.txt, printed by the libtorch build), and, where
// libtorch-dev is installed, that the libtorch build still prints them.
#ifdef PORT_MINIGRAD
#include <minigrad/data.h>
#include <minigrad/minigrad.h>
namespace torch = minigrad;
namespace c10 = minigrad;
#define TORCH_MODULE MG_MODULE
#define FORWARD_HAS_DEFAULT_ARGS MG_FORWARD_HAS_DEFAULT_ARGS
#else
#include <torch/torch.h>
#endif

#include <cstdint>
#include <cstdio>
#include <iostream>
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

// A module whose forward has a default argument, called through AnyModule and Sequential with
// fewer arguments (libtorch's FORWARD_HAS_DEFAULT_ARGS).
struct ScaleImpl : torch::nn::Module {
  torch::Tensor forward(torch::Tensor x, double factor = 2.0) { return x * factor; }

 protected:
  FORWARD_HAS_DEFAULT_ARGS({1, torch::nn::AnyValue(2.0)})
};
TORCH_MODULE(Scale);

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
  // The functional losses with libtorch's *FuncOptions.
  namespace F = torch::nn::functional;
  std::printf(
      "functional: ce %.4f mse %.4f bce %.4f nll %.4f\n",
      F::cross_entropy(logits, labels,
                       F::CrossEntropyFuncOptions().reduction(torch::kSum).label_smoothing(0.1))
          .item<float>(),
      F::mse_loss(z, y, F::MSELossFuncOptions(torch::kSum)).item<float>(),
      F::binary_cross_entropy_with_logits(
          z, y, F::BinaryCrossEntropyWithLogitsFuncOptions().pos_weight(torch::tensor({2.0f})))
          .item<float>(),
      F::nll_loss(torch::log_softmax(logits, 1), labels, F::NLLLossFuncOptions().ignore_index(0))
          .item<float>());

  // scatter_reduce: sums and maxima of src into three slots.
  torch::Tensor src = torch::tensor({1.0f, 5.0f, 3.0f, 4.0f, 2.0f});
  torch::Tensor slot = torch::tensor({0, 1, 0, 1, 2}, torch::kLong);
  torch::Tensor summed = torch::zeros({3}).scatter_reduce(0, slot, src, "sum");
  torch::Tensor maxima = torch::full({3}, 2.5f).scatter_reduce(0, slot, src, "amax", false);
  std::printf("scatter_reduce: sum %.1f %.1f %.1f, amax %.1f %.1f %.1f\n", summed[0].item<float>(),
              summed[1].item<float>(), summed[2].item<float>(), maxima[0].item<float>(),
              maxima[1].item<float>(), maxima[2].item<float>());

  // einsum with an ellipsis and a diagonal; resize_.
  torch::Tensor cube = torch::arange(18).to(torch::kFloat).reshape({2, 3, 3});
  torch::Tensor diagonals = torch::einsum("...ii->...i", {cube});
  torch::Tensor traces = torch::einsum("bii->b", {cube});
  std::printf("einsum: diagonal %.1f %.1f %.1f, traces %.1f %.1f, batched %.1f\n",
              diagonals[1][0].item<float>(), diagonals[1][1].item<float>(),
              diagonals[1][2].item<float>(), traces[0].item<float>(), traces[1].item<float>(),
              torch::einsum("...ij,...jk->...ik", {cube, cube}).sum().item<float>());
  torch::Tensor grown = torch::arange(6).to(torch::kFloat);
  grown.resize_({2, 2});
  std::printf("resize_: shape (%d, %d), sum %.1f\n", static_cast<int>(grown.size(0)),
              static_cast<int>(grown.size(1)), grown.sum().item<float>());

  // AnyModule and Sequential over a forward with a default argument.
  torch::nn::AnyModule scale(Scale{});
  torch::nn::Sequential chain{Scale{}, torch::nn::ReLU()};
  std::printf("default args: %.1f %.1f %.1f\n", scale.forward(torch::tensor({1.5f})).item<float>(),
              scale.forward(torch::tensor({1.5f}), 3.0).item<float>(),
              chain->forward(torch::tensor({-1.0f, 4.0f})).sum().item<float>());

  // Typed optimizer state after three steps of Adam, AdamW and SGD with momentum.
  {
    c10::InferenceMode off(false);
    torch::Tensor w = torch::tensor({0.5f, -1.0f, 2.0f}).requires_grad_();
    torch::Tensor v = torch::tensor({0.5f, -1.0f, 2.0f}).requires_grad_();
    torch::Tensor u = torch::tensor({0.5f, -1.0f, 2.0f}).requires_grad_();
    torch::optim::Adam adam(std::vector<torch::Tensor>{w},
                            torch::optim::AdamOptions(0.1).amsgrad(true));
    torch::optim::AdamW adamw(std::vector<torch::Tensor>{v},
                              torch::optim::AdamWOptions(0.1).weight_decay(0.1));
    torch::optim::SGD sgd(std::vector<torch::Tensor>{u},
                          torch::optim::SGDOptions(0.1).momentum(0.9));
    for (int i = 0; i < 3; ++i) {
      adam.zero_grad();
      adamw.zero_grad();
      sgd.zero_grad();
      (w * w * w).sum().backward();
      (v * v * v).sum().backward();
      (u * u * u).sum().backward();
      adam.step();
      adamw.step();
      sgd.step();
    }
    auto& a = static_cast<torch::optim::AdamParamState&>(
        *adam.state().at(c10::guts::to_string(w.unsafeGetTensorImpl())));
    auto& aw = static_cast<torch::optim::AdamWParamState&>(
        *adamw.state().at(c10::guts::to_string(v.unsafeGetTensorImpl())));
    auto& s = static_cast<torch::optim::SGDParamState&>(
        *sgd.state().at(c10::guts::to_string(u.unsafeGetTensorImpl())));
    std::printf("adam state: step %d exp_avg %.5f exp_avg_sq %.5f max_exp_avg_sq %.5f w %.5f\n",
                static_cast<int>(a.step()), a.exp_avg().sum().item<float>(),
                a.exp_avg_sq().sum().item<float>(), a.max_exp_avg_sq().sum().item<float>(),
                w.sum().item<float>());
    std::printf("adamw state: step %d exp_avg %.5f exp_avg_sq %.5f v %.5f\n",
                static_cast<int>(aw.step()), aw.exp_avg().sum().item<float>(),
                aw.exp_avg_sq().sum().item<float>(), v.sum().item<float>());
    std::printf("sgd state: momentum_buffer %.5f u %.5f\n", s.momentum_buffer().sum().item<float>(),
                u.sum().item<float>());
  }

  // Sizes, strides and dtypes printed with <<.
  std::cout << "sizes " << cube.sizes() << " strides " << cube.strides() << " 0-d "
            << cube.sum().sizes() << " empty " << torch::zeros({0}).sizes() << "\n";
  std::cout << "dtypes " << cube.dtype() << " " << cube.to(torch::kDouble).dtype() << " "
            << labels.dtype() << " " << labels.gt(0).dtype() << "\n";
  return 0;
}
