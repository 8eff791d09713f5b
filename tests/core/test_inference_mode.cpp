// InferenceMode as libtorch's c10::InferenceMode (Note [Inference mode], core/src/tensor.cpp).
// The behaviour and the messages follow PyTorch 1.13 (the Python lines are in the comments).
#include <gtest/gtest.h>
#include <minigrad/minigrad.h>

#include "core/test_util.h"

namespace mg = minigrad;
using minigrad::testing::error_of;

// w = torch.ones(2, requires_grad=True)
// with torch.inference_mode():
//     t = torch.ones(2) * 3   # is_inference_mode_enabled() True, is_grad_enabled() False
//     y = w * 2               # y.requires_grad False, y.is_inference() True
//     t.add_(1)               # allowed inside
// t.is_inference() True; (t + w) is allowed (nothing saved); t.clone().is_inference() False
TEST(InferenceMode, TensorsMadeInsideAreInferenceTensors) {
  mg::Tensor w = mg::ones({2}).requires_grad_();
  mg::Tensor t, y;
  EXPECT_FALSE(mg::InferenceMode::is_enabled());
  {
    mg::InferenceMode guard;
    EXPECT_TRUE(mg::InferenceMode::is_enabled());
    EXPECT_FALSE(mg::is_grad_enabled());
    t = mg::ones({2}) * 3.0;
    y = w * 2.0;
    t.add_(1);
    {
      mg::InferenceMode off(false);
      EXPECT_FALSE(mg::InferenceMode::is_enabled());
      EXPECT_TRUE(mg::is_grad_enabled());
      EXPECT_FALSE(mg::ones({1}).is_inference());
    }
    EXPECT_TRUE(mg::InferenceMode::is_enabled());
  }
  EXPECT_FALSE(mg::InferenceMode::is_enabled());
  EXPECT_TRUE(mg::is_grad_enabled());
  EXPECT_TRUE(t.is_inference());
  EXPECT_FALSE(w.is_inference());
  EXPECT_TRUE(y.is_inference());
  EXPECT_FALSE(y.requires_grad());
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{4, 4}));
  EXPECT_TRUE(t.narrow(0, 0, 1).is_inference());
  mg::Tensor s = t + w;  // reads t, saves nothing
  EXPECT_EQ(s.grad_fn()->name(), "AddBackward0");
  EXPECT_FALSE(s.is_inference());
  EXPECT_FALSE(t.clone().is_inference());
  // A clone is a normal tensor: it may be saved.
  (t.clone() * w).sum().backward();
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{4, 4}));
}

// Outside inference mode (PyTorch's messages):
//   (t * w).sum().backward() -> "Inference tensors cannot be saved for backward. ..."
//   t.add_(1)                -> "Inplace update to inference tensor outside InferenceMode is not
//                                allowed. ..."
//   t.requires_grad_()       -> "Setting requires_grad=True on inference tensor outside
//                                InferenceMode is not allowed."
//   t._version               -> "Inference tensors do not track version counter."
//   v = w[:1] made inside; v.add_(1) outside -> "A view was created in inference mode and is
//                                being modified inplace in normal mode. ..."
TEST(InferenceMode, PyTorchsErrorsOutside) {
  mg::Tensor w = mg::ones({2}).requires_grad_();
  mg::Tensor t, v;
  {
    mg::InferenceMode guard;
    t = mg::ones({2});
    v = w.narrow(0, 0, 1);
  }
  EXPECT_EQ(error_of([&] { t* w; }),
            "[save_for_backward] inference tensors cannot be saved for backward; clone() the "
            "tensor outside InferenceMode to get a normal tensor and use that in autograd");
  EXPECT_EQ(error_of([&] { t.add_(1); }),
            "[add_] in-place update to an inference tensor outside InferenceMode is not allowed; "
            "clone() it to get a normal tensor first");
  EXPECT_EQ(error_of([&] {
              mg::NoGradGuard no_grad;
              t.zero_();
            }),
            "[zero_] in-place update to an inference tensor outside InferenceMode is not allowed; "
            "clone() it to get a normal tensor first");
  EXPECT_EQ(error_of([&] { t.uniform_(0, 1); }),
            "[uniform_] in-place update to an inference tensor outside InferenceMode is not "
            "allowed; clone() it to get a normal tensor first");
  EXPECT_EQ(error_of([&] { t.requires_grad_(); }),
            "[requires_grad_] setting requires_grad=true on an inference tensor outside "
            "InferenceMode is not allowed; clone() it outside InferenceMode first");
  EXPECT_EQ(error_of([&] { t._version(); }),
            "[_version] inference tensors do not track version counter");
  // The view of a normal tensor made inside: a normal tensor that requires grad as a leaf.
  EXPECT_FALSE(v.is_inference());
  EXPECT_TRUE(v.requires_grad());
  EXPECT_EQ(error_of([&] { v.add_(1); }),
            "[add_] a view was created in inference mode and is being modified in place in normal "
            "mode; do both inside InferenceMode (not tracked) or both outside it (tracked)");
  // Inside InferenceMode again, all of it is allowed.
  mg::InferenceMode guard;
  t.add_(1);
  t.requires_grad_();
  v.add_(1);
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{2, 1}));
}
