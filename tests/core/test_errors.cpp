// The error audit: every row of docs/errors.md, with the exact message minigrad gives. Each call
// must throw minigrad::Error with that message, and docs/errors.md must quote it verbatim, so the
// document and the library cannot drift apart. (The op table adds its own error inputs, checked
// for the "[op]" prefix: tests/core/op_table.cpp.)
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "documented_errors.h"
#include "io/torch_files.h"
#include "minigrad/data.h"
#include "minigrad/minigrad.h"

namespace mg = minigrad;

namespace {

// The file rows run inside a fresh temporary directory (made current for the call), so the
// messages name short relative paths ("model.safetensors") that this page can quote, and two test
// runs never share a file.
class InTempDir {
 public:
  InTempDir() : old_(std::filesystem::current_path()) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "minigrad_errors_XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
    std::filesystem::current_path(dir_);
  }
  ~InTempDir() {
    std::error_code ec;
    std::filesystem::current_path(old_, ec);
    std::filesystem::remove_all(dir_, ec);
  }
  InTempDir(const InTempDir&) = delete;
  InTempDir& operator=(const InTempDir&) = delete;

 private:
  std::filesystem::path old_, dir_;
};

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// 8 bytes, little-endian: a safetensors header length.
std::string u64le(std::uint64_t n) {
  std::string out;
  for (int i = 0; i < 8; ++i) out += static_cast<char>((n >> (8 * i)) & 0xff);
  return out;
}

// A safetensors file by hand: the header length, the header, the data.
std::string safetensors_bytes(const std::string& header, const std::string& data) {
  return u64le(header.size()) + header + data;
}

// Restores the default gradient checks (warn, not strict) when a row ends.
struct StrictGradients {
  StrictGradients() { mg::optim::set_strict_gradients(true); }
  ~StrictGradients() { mg::optim::set_strict_gradients(false); }
  StrictGradients(const StrictGradients&) = delete;
  StrictGradients& operator=(const StrictGradients&) = delete;
};

using minigrad_test::BadInput;

// Custom Functions whose backward breaks the rules (docs/errors.md, Autograd).
struct TooFewGradients : mg::autograd::Function<TooFewGradients> {
  static mg::Tensor forward(mg::autograd::AutogradContext*, const mg::Tensor& x, double) {
    return x * 2;
  }
  static std::vector<mg::Tensor> backward(mg::autograd::AutogradContext*,
                                          std::vector<mg::Tensor> grads) {
    return {grads[0] * 2};
  }
};
struct GradientForANumber : mg::autograd::Function<GradientForANumber> {
  static mg::Tensor forward(mg::autograd::AutogradContext*, const mg::Tensor& x, double) {
    return x * 2;
  }
  static std::vector<mg::Tensor> backward(mg::autograd::AutogradContext*,
                                          std::vector<mg::Tensor> grads) {
    return {grads[0] * 2, grads[0]};
  }
};
struct DirtyLeaf : mg::autograd::Function<DirtyLeaf> {
  static mg::Tensor forward(mg::autograd::AutogradContext* ctx, mg::Tensor x) {
    x.mul_(2);
    ctx->mark_dirty({x});
    return x;
  }
  static std::vector<mg::Tensor> backward(mg::autograd::AutogradContext*,
                                          std::vector<mg::Tensor> grads) {
    return {grads[0] * 2};
  }
};

const std::vector<BadInput>& bad_inputs() {
  static const std::vector<BadInput> rows = {
      {"shapes", "matmul of (2, 3) and (4, 5)",
       [] {
         mg::matmul(mg::zeros({2, 3}), mg::zeros({4, 5}));
       },
       "[matmul] a has shape (2, 3) and b has shape (4, 5): a.shape[-1] (3) must equal b.shape[-2] "
       "(4)"},
      {"shapes", "add of shapes that do not broadcast",
       [] {
         mg::zeros({2, 3}) + mg::zeros({4});
       },
       "[add] shapes (2, 3) and (4,) cannot be broadcast: size 3 and size 4 differ at dim 1 and "
       "neither is 1"},
      {"shapes", "allclose of shapes that do not broadcast",
       [] {
         (void)mg::allclose(mg::ones({2, 3}), mg::ones({4}));
       },
       "[allclose] shapes (2, 3) and (4,) cannot be broadcast: size 3 and size 4 differ at dim 1 "
       "and neither is 1"},
      {"shapes", "bmm of 2-D tensors",
       [] {
         mg::bmm(mg::zeros({2, 3}), mg::zeros({3, 2}));
       },
       "[bmm] expected 3-D tensors, got shapes (2, 3) and (3, 2)"},
      {"shapes", "cat of mismatched shapes",
       [] {
         mg::cat({mg::zeros({2, 3}), mg::zeros({2, 4})}, 0);
       },
       "[cat] sizes of tensors must match except in dim 0: tensor 0 has shape (2, 3) and tensor 1 "
       "has shape (2, 4)"},
      {"shapes", "reshape to a different number of elements",
       [] {
         mg::zeros({2, 3}).reshape({4, 2});
       },
       "[reshape] shape (4, 2) is invalid for input of size 6 (shape (2, 3))"},
      {"shapes", "reshape with two -1",
       [] {
         mg::zeros({2, 3}).reshape({-1, -1});
       },
       "[reshape] only one dimension can be inferred (-1), got shape (-1, -1)"},
      {"shapes", "view of a non-contiguous tensor",
       [] {
         mg::zeros({2, 3}).t().view({6});
       },
       "[view] view size is not compatible with the input's size and stride (shape (3, 2), strides "
       "(1, 3)): at least one dimension spans two contiguous subspaces; use reshape() instead"},
      {"shapes", "expand a size-2 dim to 3",
       [] {
         mg::zeros({2, 1}).expand({3, 4});
       },
       "[expand] the expanded size of the tensor (3) must match the existing size (2) at "
       "non-singleton dim 0: target sizes (3, 4), tensor sizes (2, 1)"},
      {"shapes", "expand to a negative size (`ones({1}).expand({-5})`)",
       [] { mg::ones({1}).expand({-5}); },
       "[expand] size -5 at dim 0 is invalid: sizes must be non-negative, or -1 to keep the e"
       "xisting size"},
      {"shapes", "Shape::at past the end",
       [] {
         mg::Shape{2, 3}.at(5);
       },
       "[Shape.at] index 5 is out of range for a shape of 2 dims"},
      {"shapes", "addmm of (2, 3) and (2, 4)",
       [] {
         mg::addmm(mg::zeros({2, 4}), mg::zeros({2, 3}), mg::zeros({2, 4}));
       },
       "[addmm] mat1 has shape (2, 3) and mat2 has shape (2, 4): mat1.shape[1] (3) must equal "
       "mat2.shape[0] (2)"},
      {"shapes", "repeat with fewer repeats than dims",
       [] {
         mg::zeros({2, 3}).repeat({2});
       },
       "[repeat] repeats (2,) must have at least as many entries as the tensor has dims (shape (2, "
       "3))"},
      {"shapes", "roll with 2 shifts for 1 dim",
       [] {
         mg::zeros({2, 3}).roll({1, 2}, {0});
       },
       "[roll] shifts (1, 2) and dims (0,) must have the same length"},
      {"shapes", "masked_scatter with too small a source",
       [] {
         mg::zeros({2, 3}).masked_scatter(mg::ones({3}, mg::kBool), mg::zeros({2}));
       },
       "[masked_scatter] source has 2 elements (shape (2,)) but the mask has 6 true entries"},
      {"shapes", "resize_ with a negative size",
       [] {
         mg::zeros({3}).resize_({2, -3});
       },
       "[resize_] sizes (2, -3) have a negative size -3"},
      {"shapes", "resize_ growing a tensor over from_blob memory",
       [] {
         static float buffer[4] = {0, 1, 2, 3};
         mg::from_blob(buffer, {4}).resize_({8});
       },
       "[resize_] cannot grow a tensor over external memory (from_blob) from 16 to 32 bytes: "
       "trying to resize storage that is not resizable"},
      {"shapes", "einsum with a size mismatch",
       [] {
         mg::einsum("ij,jk->ik", {mg::zeros({2, 3}), mg::zeros({4, 2})});
       },
       "[einsum] equation \"ij,jk->ik\": subscript 'j' has size 3 and size 4 (operand 1 has shape "
       "(4, 2))"},
      {"shapes", "einsum with a diagonal of unequal sizes",
       [] {
         mg::einsum("ii->i", {mg::zeros({2, 3})});
       },
       "[einsum] equation \"ii->i\": subscript 'i' repeats in operand 0 with sizes 2 and 3 (shape "
       "(2, 3))"},
      {"shapes", "einsum with more subscripts than dims",
       [] { mg::einsum("...ij->...ji", {mg::zeros({2})}); },
       "[einsum] equation \"...ij->...ji\": operand 0 has 1 dims (shape (2,)) but subscripts "
       "\"...ij\" name 2"},
      {"dims", "sum over dim 2 of a 2-D tensor",
       [] {
         mg::zeros({2, 3}).sum(2);
       },
       "[sum] dim 2 is out of range for a tensor with 2 dims (expected a dim in [-2, 1])"},
      {"dims", "softmax over dim -3 of a 2-D tensor",
       [] {
         mg::softmax(mg::zeros({2, 3}), -3);
       },
       "[softmax] dim -3 is out of range for a tensor with 2 dims (expected a dim in [-2, 1])"},
      {"dims", "transpose of dims 0 and 5",
       [] {
         mg::zeros({2, 3}).transpose(0, 5);
       },
       "[transpose] dim 5 is out of range for a tensor with 2 dims (expected a dim in [-2, 1])"},
      {"dims", "permute with a repeated dim",
       [] {
         mg::zeros({2, 3}).permute({0, 0});
       },
       "[permute] dim 0 repeats in (0, 0)"},
      {"dims", "cumsum over dim 2 of a 2-D tensor",
       [] {
         mg::zeros({2, 3}).cumsum(2);
       },
       "[cumsum] dim 2 is out of range for a tensor with 2 dims (expected a dim in [-2, 1])"},
      {"dims", "flip with a repeated dim",
       [] {
         mg::zeros({2, 3}).flip({0, -2});
       },
       "[flip] dim -2 appears multiple times in the list of dims (0, -2)"},
      {"dtypes", "bool - bool",
       [] {
         mg::tensor({1.0, 0.0}, mg::kBool) - mg::tensor({0.0, 1.0}, mg::kBool);
       },
       "[sub] subtraction of two bool tensors is not supported; use logical_xor or ~"},
      {"dtypes", "requires_grad on an int64 tensor",
       [] { mg::zeros({2}, mg::kInt64).requires_grad_(); },
       "[requires_grad_] only floating-point tensors can require gradients, but this tensor is "
       "int64"},
      {"dtypes", "matmul of float32 and float64",
       [] {
         mg::matmul(mg::zeros({2, 2}), mg::zeros({2, 2}, mg::kFloat64));
       },
       "[matmul] expected both operands to have the same dtype, but a is float32 and b is float64"},
      {"dtypes", "set_default_dtype with an integer dtype",
       [] { mg::set_default_dtype(mg::kInt64); },
       "[set_default_dtype] only floating-point types are supported as the default type, got "
       "int64"},
      {"dtypes", "index_select with float indices",
       [] {
         mg::index_select(mg::zeros({3, 2}), 0, mg::zeros({2}));
       },
       "[index_select] index must be an int64 tensor, got float32"},
      {"dtypes", "scatter of a float64 src into float32",
       [] {
         mg::zeros({2, 3}).scatter(1, mg::zeros({1, 1}, mg::kInt64),
                                   mg::zeros({1, 1}, mg::kFloat64));
       },
       "[scatter] self and src must have the same dtype, got float32 and float64"},
      {"dtypes", "scatter_reduce of a float64 src into float32",
       [] {
         mg::zeros({2, 3}).scatter_reduce(1, mg::zeros({1, 1}, mg::kInt64),
                                          mg::zeros({1, 1}, mg::kFloat64), "sum");
       },
       "[scatter_reduce] self and src must have the same dtype, got float32 and float64"},
      {"dtypes", "scatter_reduce of bool tensors",
       [] {
         mg::zeros({2, 3}, mg::kBool)
             .scatter_reduce(1, mg::zeros({1, 1}, mg::kInt64), mg::ones({1, 1}, mg::kBool), "amax");
       },
       "[scatter_reduce] self and src have dtype bool, which is not supported"},
      {"indices", "assigning to the copy advanced indexing returns (`x.index({mask}) = v`)",
       [] {
         auto x = mg::zeros({3});
         x.index({mg::tensor({true, false, true})}) = mg::ones({2});
       },
       "[Tensor::operator=] assigning a tensor to a temporary of shape (2,) that shares its "
       "storage with no other tensor would write nothing (advanced indexing, x.index({mask}) or "
       "x.index({idx_tensor}), returns a copy): write x.index_put_({...}, value) instead"},
      {"indices", "index_select index 3 of 3 rows",
       [] {
         mg::index_select(mg::zeros({3, 2}), 0, mg::tensor({0, 3}, mg::kInt64));
       },
       "[index_select] index 3 (at position 1) is out of range for a dim of size 3"},
      {"indices", "select index 5 of size 3",
       [] {
         mg::zeros({3, 2}).select(0, 5);
       },
       "[select] index 5 is out of range for dim 0 of size 3"},
      {"indices", "narrow with a length that overflows start + length",
       [] { mg::zeros({3}).narrow(0, 1, INT64_MAX); },
       "[narrow] start (1) + length (9223372036854775807) exceeds the size of dim 0 (3)"},
      {"indices", "narrow past the end",
       [] {
         mg::zeros({3, 2}).narrow(0, 2, 2);
       },
       "[narrow] start (2) + length (2) exceeds the size of dim 0 (3)"},
      {"indices", "an integer index out of range (`x.index({Slice(), 3})`, x of shape (2, 3))",
       [] {
         using namespace mg::indexing;
         mg::zeros({2, 3}).index({Slice(), 3});
       },
       "[index] index 3 is out of bounds for dimension 1 with size 3"},
      {"indices", "an index tensor with a value out of range (`x.index({tensor({5})})`)",
       [] {
         using namespace mg::indexing;
         mg::zeros({2, 3}).index({mg::tensor({5}, mg::kInt64)});
       },
       "[index] index 5 is out of bounds for dimension 0 with size 2"},
      {"indices", "too many indices (`x.index({0, 0, 0})`, x 2-D)",
       [] {
         using namespace mg::indexing;
         mg::zeros({2, 3}).index({0, 0, 0});
       },
       "[index] too many indices for tensor of dimension 2 (got 3)"},
      {"indices", "a bool mask of the wrong shape (`x.index({mask})`, mask (3,), x (2, 3))",
       [] {
         using namespace mg::indexing;
         mg::zeros({2, 3}).index({mg::tensor({1.0, 0.0, 1.0}, {3}, mg::kBool)});
       },
       "[index] the shape of the mask (3,) at index 0 does not match the shape of the indexed "
       "tensor (2, 3) at index 0"},
      {"indices", "a float tensor as an index",
       [] {
         using namespace mg::indexing;
         mg::zeros({2, 3}).index({mg::ones({1})});
       },
       "[index] tensors used as indices must be int64 or bool tensors, but got float32"},
      {"indices", "a negative slice step (`Slice(None, None, -1)`)",
       [] {
         using namespace mg::indexing;
         mg::zeros({2, 3}).index({Slice(None, None, -1)});
       },
       "[index] step must be greater than zero, got -1"},
      {"indices", "index_put_ with values that do not broadcast to the indexed shape",
       [] {
         using namespace mg::indexing;
         mg::zeros({2, 3}).index_put_({mg::tensor({0}, mg::kInt64)}, mg::ones({2, 3}));
       },
       "[index_put_] shape mismatch: value tensor of shape (2, 3) cannot be broadcast to indexing "
       "result of shape (1, 3)"},
      {"indices", "gather index out of range",
       [] {
         mg::gather(mg::zeros({2, 3}), 1, mg::tensor({{0.0, 7.0}}, mg::kInt64));
       },
       "[gather] index 7 is out of bounds for dim 1 with size 3"},
      {"indices", "topk with k larger than the dim",
       [] {
         mg::zeros({2, 3}).topk(4, 1);
       },
       "[topk] k (4) is out of range for dim 1 of size 3 (shape (2, 3))"},
      {"indices", "scatter index out of range",
       [] {
         mg::zeros({2, 3}).scatter(1, mg::tensor({{5}}), 1.0);
       },
       "[scatter] index 5 is out of bounds for dim 1 with size 3"},
      {"indices", "scatter_reduce index out of range",
       [] {
         mg::zeros({2, 3}).scatter_reduce(1, mg::tensor({{5}}), mg::ones({1, 1}), "prod");
       },
       "[scatter_reduce] index 5 is out of bounds for dim 1 with size 3"},
      {"indices", "scatter_reduce with an unknown reduce",
       [] {
         mg::zeros({2, 3}).scatter_reduce(1, mg::tensor({{0}}), mg::ones({1, 1}), "max");
       },
       "[scatter_reduce] reduce must be \"sum\", \"prod\", \"mean\", \"amax\" or \"amin\", got "
       "\"max\""},
      {"empty", "max of an empty tensor",
       [] {
         mg::zeros({0, 3}).max();
       },
       "[max] cannot reduce over a zero-size dimension (input shape (0, 3)): the operation has no "
       "identity"},
      {"empty", "item of a 2-element tensor", [] { mg::zeros({2}).item<float>(); },
       "[item] a Tensor with 2 elements (shape (2,)) cannot be converted to a scalar; only "
       "one-element tensors can"},
      {"empty", "item of an empty tensor", [] { mg::zeros({0}).item<float>(); },
       "[item] a Tensor with 0 elements (shape (0,)) cannot be converted to a scalar; only "
       "one-element tensors can"},
      {"autograd", "double backward of a scatter_reduce prod with two src zeros at one position",
       [] {
         mg::Tensor s = mg::zeros({2}, mg::kFloat64).requires_grad_();
         mg::Tensor out = mg::scatter_reduce(mg::ones({1}, mg::kFloat64), 0,
                                             mg::zeros({2}, mg::kInt64), s, "prod");
         mg::autograd::grad({out.sum()}, {s}, {}, true, true)[0].sum().backward();
       },
       "[scatter_reduce] double backward is unsupported for src when more than one zero in src "
       "is scattered to the same position (as PyTorch)"},
      {"autograd", "backward of a non-scalar without gradient",
       [] { (mg::ones({2}).requires_grad_() * 2.0).backward(); },
       "[backward] grad can be implicitly created only for scalar outputs, but output 0 has shape "
       "(2,); call backward(gradient) with a gradient of that shape"},
      {"autograd", "backward of a tensor that does not require grad",
       [] { mg::ones({1}).sum().backward(); },
       "[backward] element 0 of tensors does not require grad and does not have a grad_fn: nothing "
       "to differentiate (did you forget requires_grad_(), or run the forward under NoGradGuard?)"},
      {"autograd", "backward twice through a freed graph",
       [] {
         auto x = mg::ones({2}).requires_grad_();
         auto y = (x * x).sum();
         y.backward();
         y.backward();
       },
       "[backward] trying to backward through the graph a second time (or to use saved tensors "
       "after they were freed) at MulBackward0: the saved tensors were freed by the first "
       "backward; call backward(gradient, /*retain_graph=*/true) the first time if you need to "
       "backward twice"},
      {"autograd", "backward with a gradient of the wrong shape",
       [] { (mg::ones({2}).requires_grad_() * 2.0).backward(mg::ones({3})); },
       "[backward] gradient 0 has shape (3,) but the output has shape (2,)"},
      {"autograd", "grad with an unused input",
       [] {
         auto x = mg::ones({2}).requires_grad_();
         auto z = mg::ones({2}).requires_grad_();
         mg::autograd::grad({(x * 2.0).sum()}, {z});
       },
       "[grad] input 0 was not used in the graph of the outputs; pass allow_unused=true to get an "
       "undefined gradient for it"},
      {"autograd",
       "a tensor saved for backward written in place before backward (`y = (a * b).sum(); "
       "b.fill_(100.0); y.backward();`)",
       [] {
         auto a = mg::tensor({1.0, 2.0}).requires_grad_();
         auto b = mg::tensor({5.0, 7.0});
         auto y = (a * b).sum();
         b.fill_(100.0);
         y.backward();
       },
       "[MulBackward0] a tensor saved for backward (shape (2,), float32) was modified in place: it "
       "is at version 1, expected version 0. Use clone() before the in-place op, or do it after "
       "backward."},
      {"autograd",
       "an op's saved output written in place before backward (`y = x.exp(); y.zero_();` under "
       "NoGradGuard)",
       [] {
         auto x = mg::tensor({1.0, 2.0}).requires_grad_();
         auto y = x.exp();
         auto s = y.sum();
         {
           mg::NoGradGuard no_grad;
           y.zero_();
         }
         s.backward();
       },
       "[ExpBackward0] its output saved for backward (shape (2,), float32) was modified in place: "
       "it is at version 1, expected version 0. Use clone() before the in-place op, or do it after "
       "backward."},
      {"autograd",
       "an in-place op on a view of a leaf that requires grad (`x.select(0, 0).mul_(2)`)",
       [] {
         mg::tensor({1.0, 2.0}).requires_grad_().select(0, 0).mul_(2);
       },
       "[mul_] a view of a leaf tensor that requires grad cannot be modified in place; use it"
       " under NoGradGuard"},
      {"autograd",
       "writing into a leaf that requires grad and is a view (`x = arange(6.0).reshape({2, "
       "3}).requires_grad_(); x[0] = ones({3});`)",
       [] {
         auto x = mg::arange(6.0).reshape({2, 3}).requires_grad_();
         x[0] = mg::ones({3});
       },
       "[copy_] a view of a leaf tensor that requires grad cannot be modified in place; use it"
       " under NoGradGuard"},
      {"autograd",
       "a leaf saved for backward given new data (`y = (w * x).sum(); w.set_data(...); "
       "y.backward();`, x requires grad)",
       [] {
         auto w = mg::tensor({1.0, 2.0}).requires_grad_();
         auto y = (w * mg::tensor({3.0, 4.0}).requires_grad_()).sum();
         w.set_data(mg::tensor({5.0, 6.0}));
         y.backward();
       },
       "[MulBackward0] a leaf saved for backward (shape (2,), float32) was given new data with "
       "set_data (or Module::to) after it was saved; run backward first, or the forward again "
       "after set_data"},
      {"autograd",
       "an in-place op in grad mode on a view made under NoGradGuard of a tensor that requires "
       "grad",
       [] {
         auto x = mg::ones({3}).requires_grad_();
         mg::Tensor v;
         {
           mg::NoGradGuard no_grad;
           v = x.narrow(0, 0, 2);
         }
         v.mul_(2);
       },
       "[mul_] a view was created in no-grad mode and is being modified in place with grad mode "
       "enabled; do both under NoGradGuard (not tracked) or both outside it (tracked)"},
      {"autograd",
       "a tensor made under InferenceMode saved for backward (`t * w` outside it, w requires grad)",
       [] {
         mg::Tensor w = mg::ones({2}).requires_grad_();
         mg::Tensor t;
         {
           mg::InferenceMode guard;
           t = mg::ones({2});
         }
         t* w;
       },
       "[save_for_backward] inference tensors cannot be saved for backward; clone() the tensor "
       "outside InferenceMode to get a normal tensor and use that in autograd"},
      {"autograd", "an in-place op outside InferenceMode on a tensor made inside it",
       [] {
         mg::Tensor t;
         {
           mg::InferenceMode guard;
           t = mg::ones({2});
         }
         t.add_(1);
       },
       "[add_] in-place update to an inference tensor outside InferenceMode is not allowed; "
       "clone() it to get a normal tensor first"},
      {"autograd", "an in-place op on an expanded tensor (`zeros({1}).expand({3}).add_(1)`)",
       [] { mg::zeros({1}).expand({3}).add_(1); },
       "[add_] unsupported operation: more than one element of the written-to tensor refers t"
       "o a single memory location (dim 0 of shape (3,) has stride 0); clone() the tensor fir"
       "st"},
      {"autograd",
       "an in-place op whose result does not fit the dtype (`zeros({2}, kInt64).add_(1.5)`)",
       [] { mg::zeros({2}, mg::kInt64).add_(1.5); },
       "[add_] result type float32 can't be cast to the desired output type int64"},
      {"autograd",
       "an in-place op whose result would grow the tensor (`zeros({2}).add_(zeros({2, 2}))`)",
       [] {
         mg::zeros({2}).add_(mg::zeros({2, 2}));
       },
       "[add_] output with shape (2,) doesn't match the broadcast shape (2, 2)"},
      {"autograd", "a custom Function's backward returns too few gradients",
       [] { TooFewGradients::apply(mg::ones({2}).requires_grad_(), 1.0).sum().backward(); },
       "[TooFewGradientsBackward] backward returned 1 gradients but forward took 2 arguments "
       "(return one per argument, Tensor() for the non-tensor ones)"},
      {"autograd", "a custom Function's backward returns a gradient for a number argument",
       [] { GradientForANumber::apply(mg::ones({2}).requires_grad_(), 1.0).sum().backward(); },
       "[GradientForANumberBackward] backward returned a gradient at position 1, but forward'"
       "s argument 1 is not a tensor (return Tensor() there)"},
      {"autograd", "a custom Function marks a leaf that requires grad dirty",
       [] { DirtyLeaf::apply(mg::ones({2}).requires_grad_()); },
       "[DirtyLeafBackward] a leaf tensor that requires grad cannot be modified in place (out"
       "put 0 was marked dirty); use it under NoGradGuard"},
      {"autograd", "reading an IValue as the wrong kind (`IValue(2.5).toInt()`)",
       [] { mg::autograd::IValue(2.5).toInt(); },
       "[IValue] expected an int but it holds a double (toInt)"},
      {"autograd", "in-place fill_ of a leaf that requires grad",
       [] { mg::ones({2}).requires_grad_().fill_(0.0); },
       "[fill_] a leaf tensor that requires grad cannot be modified in place; use it under "
       "NoGradGuard"},
      {"autograd", "resize_ of a tensor that requires grad",
       [] { mg::ones({3}).requires_grad_().resize_({4}); },
       "[resize_] cannot resize variables that require grad (a tensor of shape (3,)); resize a "
       "detach()ed alias instead"},
      {"autograd", "copy_ into an expanded tensor",
       [] { mg::zeros({1}).expand({3}).copy_(mg::ones({3})); },
       "[copy_] unsupported operation: more than one element of the written-to tensor refers "
       "to a single memory location (dim 0 of shape (3,) has stride 0); clone() the tensor fi"
       "rst"},
      {"autograd", "a hook that returns a gradient of another shape",
       [] {
         auto x = mg::ones({2}).requires_grad_();
         auto y = x * 2;
         y.register_hook([](const mg::Tensor& g) { return g.sum(); });
         y.sum().backward();
       },
       "[hook] a hook changed the size of the gradient: it returned shape () for a gradient o"
       "f shape (2,) (at MulBackward0)"},
      {"autograd", "a hook that returns a gradient of another dtype",
       [] {
         auto x = mg::ones({2}).requires_grad_();
         auto y = x * 2;
         y.register_hook([](const mg::Tensor& g) { return g.to(mg::kFloat64); });
         y.sum().backward();
       },
       "[hook] a hook changed the type of the gradient: it returned float64 for a gradient of"
       " float32 (at MulBackward0)"},
      {"autograd", "anomaly mode: a hook that returns nan",
       [] {
         auto x = mg::tensor({1.0f, 2.0f}).requires_grad_();
         auto y = x * 2;
         y.register_hook([](const mg::Tensor& g) { return g * std::nanf(""); });
         mg::autograd::DetectAnomalyGuard anomaly;
         y.sum().backward();
       },
       "[hook] a hook on the gradient of MulBackward0's output 0 returned nan in backward "
       "(registered while anomaly mode was off: its site was not recorded)"},
      {"autograd", "item<int64_t>() of 1e30", [] { mg::tensor({1e30}).item<std::int64_t>(); },
       "[item] value 1e+30 cannot be converted to type int64_t without overflow"},
      {"autograd", "item<int64_t>() of NaN",
       [] { mg::tensor({std::nan("")}).item<std::int64_t>(); },
       "[item] value nan cannot be converted to type int64_t without overflow"},
      {"optim", "SGD with a negative lr",
       [] {
         auto p = mg::ones({2}).requires_grad_();
         mg::optim::SGD opt({p}, mg::optim::SGDOptions(-0.1));
       },
       "[SGD] Invalid learning rate: -0.1 (must be >= 0)"},
      {"optim", "SGD nesterov without momentum",
       [] {
         auto p = mg::ones({2}).requires_grad_();
         mg::optim::SGD opt({p}, mg::optim::SGDOptions(0.1).nesterov(true));
       },
       "[SGD] Nesterov momentum requires a momentum and zero dampening, got momentum = 0 and "
       "dampening = 0"},
      {"optim", "Adam with beta1 = 1",
       [] {
         auto p = mg::ones({2}).requires_grad_();
         mg::optim::Adam opt({p}, mg::optim::AdamOptions().betas({1.0, 0.999}));
       },
       "[Adam] Invalid beta parameter at index 0: 1 (must be in [0, 1))"},
      {"optim", "Adam with a negative eps",
       [] {
         auto p = mg::ones({2}).requires_grad_();
         mg::optim::Adam opt({p}, mg::optim::AdamOptions().eps(-1e-8));
       },
       "[Adam] Invalid epsilon value: -1e-08 (must be >= 0)"},
      {"optim", "an optimizer with no parameters",
       [] { mg::optim::Adam opt(std::vector<mg::Tensor>{}, {}); },
       "[Adam] optimizer got an empty parameter list"},
      {"optim", "an optimizer given a non-leaf",
       [] {
         auto p = mg::ones({2}).requires_grad_();
         mg::optim::Adam opt({p * 2.0}, {});
       },
       "[Adam] can't optimize a non-leaf Tensor"},
      {"optim", "RMSprop with a negative alpha",
       [] {
         auto p = mg::ones({2}).requires_grad_();
         mg::optim::RMSprop opt({p}, mg::optim::RMSpropOptions().alpha(-1));
       },
       "[RMSprop] Invalid alpha value: -1 (must be >= 0)"},
      {"optim", "Adagrad with a negative lr_decay",
       [] {
         auto p = mg::ones({2}).requires_grad_();
         mg::optim::Adagrad opt({p}, mg::optim::AdagradOptions().lr_decay(-0.1));
       },
       "[Adagrad] Invalid lr_decay value: -0.1 (must be >= 0)"},
      {"optim", "Adagrad with a negative initial_accumulator_value",
       [] {
         auto p = mg::ones({2}).requires_grad_();
         mg::optim::Adagrad opt({p}, mg::optim::AdagradOptions().initial_accumulator_value(-1));
       },
       "[Adagrad] Invalid initial_accumulator_value value: -1 (must be >= 0)"},
      {"optim", "LBFGS with a negative lr",
       [] {
         auto p = mg::ones({2}).requires_grad_();
         mg::optim::LBFGS opt({p}, mg::optim::LBFGSOptions(-1));
       },
       "[LBFGS] Invalid learning rate: -1 (must be >= 0)"},
      {"optim", "LBFGS with an unknown line search",
       [] {
         auto p = mg::ones({2}).requires_grad_();
         mg::optim::LBFGS opt({p}, mg::optim::LBFGSOptions().line_search_fn("backtracking"));
       },
       "[LBFGS] only 'strong_wolfe' is supported as line_search_fn, got \"backtracking\""},
      {"optim", "LBFGS step() without a closure",
       [] {
         auto p = mg::ones({2}).requires_grad_();
         mg::optim::LBFGS opt({p});
         opt.step();
       },
       "[LBFGS.step] LBFGS needs a closure that re-evaluates the loss: opt.step([&] { "
       "opt.zero_grad(); Tensor loss = ...; loss.backward(); return loss; })"},
      {"optim", "LBFGS with two parameter groups",
       [] {
         auto p = mg::ones({2}).requires_grad_();
         auto q = mg::ones({2}).requires_grad_();
         mg::optim::LBFGS opt({p});
         opt.add_param_group({{q}, opt.param_groups()[0].options().clone()});
         opt.step([&] { return (p * q).sum(); });
       },
       "[LBFGS.step] LBFGS doesn't support per-parameter options (parameter groups), got 2 groups"},
      {"optim", "a step() closure that returns no loss",
       [] {
         auto p = mg::ones({2}).requires_grad_();
         mg::optim::SGD opt({p}, mg::optim::SGDOptions(0.1));
         opt.step([] { return mg::Tensor(); });
       },
       "[SGD.step] the closure returned no loss (an undefined tensor): it must compute the loss, "
       "call loss.backward() and return the loss"},
      {"optim", "set_option of an option the optimizer does not have",
       [] {
         auto p = mg::ones({2}).requires_grad_();
         mg::optim::Adam opt({p});
         opt.set_option(0, "momentum", 0.9);
       },
       "[Adam] unknown option \"momentum\""},
      {"optim", "a parameter group with another optimizer's options",
       [] {
         auto p = mg::ones({2}).requires_grad_();
         mg::optim::SGD opt({p}, mg::optim::SGDOptions(0.1));
         opt.add_param_group({{mg::ones({2}).requires_grad_()}, mg::optim::AdamOptions(0.1)});
       },
       "[SGD] the parameter group's options are another optimizer's: give it this optimizer's "
       "options type (SGDOptions for SGD)"},
      {"optim", "options() of a group made without options and not added to an optimizer",
       [] {
         const mg::optim::OptimizerParamGroup group({mg::ones({2}).requires_grad_()});
         group.options();
       },
       "[OptimizerParamGroup] the group has no options: it gets a copy of the optimizer's defaults "
       "when it is added with add_param_group() or given to the optimizer's constructor"},
      {"optim", "set_option with a value of the wrong type",
       [] {
         auto p = mg::ones({2}).requires_grad_();
         mg::optim::Adam opt({p});
         opt.set_option(0, "lr", true);
       },
       "[Adam] option \"lr\" must be a number"},
      {"optim", "LambdaLR with one lambda for two groups",
       [] {
         auto p = mg::ones({2}).requires_grad_();
         auto q = mg::ones({2}).requires_grad_();
         mg::optim::SGD opt({{{p}, mg::optim::SGDOptions(0.1)}, {{q}, mg::optim::SGDOptions(0.2)}},
                            1.0);
         mg::optim::lr_scheduler::LambdaLR s(
             opt, std::vector<mg::optim::lr_scheduler::LrLambda>{[](std::int64_t) { return 1.0; }});
       },
       "[LambdaLR] expected 2 lr_lambdas (one per parameter group), but got 1"},
      {"optim", "LinearLR with start_factor 1.5",
       [] {
         auto p = mg::ones({2}).requires_grad_();
         mg::optim::SGD opt({p}, mg::optim::SGDOptions(0.1));
         mg::optim::lr_scheduler::LinearLR s(opt, 1.5);
       },
       "[LinearLR] start_factor expected to be between 0 and 1, got 1.5"},
      {"optim", "OneCycleLR without total_steps",
       [] {
         auto p = mg::ones({2}).requires_grad_();
         mg::optim::SGD opt({p}, mg::optim::SGDOptions(0.1));
         mg::optim::lr_scheduler::OneCycleLR s(opt, 0.1);
       },
       "[OneCycleLR] you must define either total_steps OR (epochs AND steps_per_epoch)"},
      {"optim", "OneCycleLR stepped past total_steps",
       [] {
         auto p = mg::ones({2}).requires_grad_();
         mg::optim::SGD opt({p}, mg::optim::SGDOptions(0.1));
         mg::optim::lr_scheduler::OneCycleLR s(
             opt, 0.1, mg::optim::lr_scheduler::OneCycleLROptions().total_steps(2));
         for (int i = 0; i < 3; ++i) s.step();
       },
       "[OneCycleLR] tried to step 4 times. The specified number of total steps is 2"},
      {"optim", "OneCycleLR cycling the momentum of Adagrad",
       [] {
         auto p = mg::ones({2}).requires_grad_();
         mg::optim::Adagrad opt({p});
         mg::optim::lr_scheduler::OneCycleLR s(
             opt, 0.1, mg::optim::lr_scheduler::OneCycleLROptions().total_steps(10));
       },
       "[OneCycleLR] optimizer must support momentum with cycle_momentum enabled (Adagrad has "
       "neither \"momentum\" nor \"betas\"; pass OneCycleLROptions().cycle_momentum(false))"},
      {"optim", "SequentialLR with as many milestones as schedulers",
       [] {
         auto p = mg::ones({2}).requires_grad_();
         mg::optim::SGD opt({p}, mg::optim::SGDOptions(0.1));
         auto warmup = std::make_shared<mg::optim::lr_scheduler::LinearLR>(opt);
         mg::optim::lr_scheduler::SequentialLR s(opt, {warmup}, {5});
       },
       "[SequentialLR] expects number of schedulers provided to be one more than the number of "
       "milestone points, but got number of schedulers 1 and the number of milestones to be equal "
       "to 1"},
      {"optim", "ReduceLROnPlateau with factor 1",
       [] {
         auto p = mg::ones({2}).requires_grad_();
         mg::optim::SGD opt({p}, mg::optim::SGDOptions(0.1));
         mg::optim::lr_scheduler::ReduceLROnPlateau s(
             opt, mg::optim::lr_scheduler::ReduceLROnPlateauOptions().factor(1.0));
       },
       "[ReduceLROnPlateau] factor should be < 1.0, got 1"},
      {"optim", "ReduceLROnPlateau with an unknown mode",
       [] {
         auto p = mg::ones({2}).requires_grad_();
         mg::optim::SGD opt({p}, mg::optim::SGDOptions(0.1));
         mg::optim::lr_scheduler::ReduceLROnPlateau s(
             opt, mg::optim::lr_scheduler::ReduceLROnPlateauOptions().mode("lowest"));
       },
       "[ReduceLROnPlateau] mode 'lowest' is unknown (expected 'min' or 'max')"},
      {"optim", "clip_grad_norm_ of an inf gradient with error_if_nonfinite",
       [] {
         auto p = mg::ones({2}).requires_grad_();
         p.set_grad(mg::tensor({INFINITY, 1.0}));
         mg::nn::utils::clip_grad_norm_({p}, 1.0, 2.0, /*error_if_nonfinite=*/true);
       },
       "[clip_grad_norm_] the total norm of order 2 for gradients from parameters is non-finite "
       "(inf), so it cannot be clipped. To disable this error and scale the gradients by the "
       "non-finite norm anyway, set error_if_nonfinite = false"},
      {"optim", "step() in strict mode with a parameter that received no gradient",
       [] {
         StrictGradients strict;
         mg::nn::Linear l(3, 2);
         mg::optim::SGD opt(l->parameters(), mg::optim::SGDOptions(0.1));
         mg::matmul(mg::ones({4, 3}), l->weight.t()).sum().backward();  // the bias is left out
         opt.step();
       },
       "[SGD.step] parameter bias (shape (2,)) received no gradient in backward while 1 of the 2 "
       "trainable parameters did, so step() does not train it: it did not take part in the loss, "
       "or the graph was cut on its way there (detach(), NoGradGuard, item()); use it in the loss, "
       "or freeze it with requires_grad_(false)"},
      {"optim", "step() in strict mode before any backward()",
       [] {
         StrictGradients strict;
         mg::nn::Linear l(3, 2);
         mg::optim::Adam opt(l->parameters(), {});
         opt.zero_grad();
         opt.step();
       },
       "[Adam.step] none of the 2 trainable parameters has a gradient, so step() changes nothing: "
       "call loss.backward() between zero_grad() and step(); if backward() did run, the loss does "
       "not depend on any of these parameters (was the optimizer given another model's "
       "parameters()?)"},
      {"modules", "Linear(3, 2) called on a (4, 5) input",
       [] {
         mg::nn::Linear l(3, 2);
         l(mg::zeros({4, 5}));
       },
       "[Linear] input of shape (4, 5) does not end in in_features = 3 (weight has shape (2, 3))"},
      {"modules", "Linear with in_features = -1", [] { mg::nn::Linear l(-1, 2); },
       "[Linear] in_features (-1) and out_features (2) must be non-negative"},
      {"modules", "Linear (float32 weights) called on a float64 input",
       [] {
         mg::nn::Linear l(3, 2);
         l->forward(mg::ones({4, 3}, mg::kFloat64));
       },
       "[Linear] input is float64 but the weight is float32; convert the module with .to(mg::"
       "kFloat64) or the input with .to(mg::kFloat32)"},
      {"modules", "parameters() of a module tree nested more than 1000 deep",
       [] {
         auto root = std::make_shared<mg::nn::SequentialImpl>();
         auto cur = root;
         for (int i = 0; i < 1001; ++i) {
           auto next = std::make_shared<mg::nn::SequentialImpl>();
           cur->push_back(mg::nn::AnyModule(next));
           cur = next;
         }
         root->parameters();
       },
       "[named_parameters] Sequential: modules are nested more than 1000 levels deep"},
      {"modules",
       "forward of a Sequential nested more than 1000 deep (clone() says [Module.clone])",
       [] {
         auto root = std::make_shared<mg::nn::SequentialImpl>();
         auto cur = root;
         for (int i = 0; i < 1001; ++i) {
           auto next = std::make_shared<mg::nn::SequentialImpl>();
           cur->push_back(mg::nn::AnyModule(next));
           cur = next;
         }
         cur->push_back(mg::nn::AnyModule(mg::nn::Identity()));
         root->forward(mg::ones({2}));
       },
       "[Sequential.forward] Sequential: modules are nested more than 1000 levels deep"},
      {"modules", "a buffer named like a parameter (`register_buffer(\"w\", ...)` after `w`)",
       [] {
         mg::nn::Linear fc(2, 2);
         fc->register_buffer("weight", mg::zeros({2}));
       },
       "[register_buffer] Linear already has a parameter \"weight\": parameters, buffers and "
       "submodules share one namespace (PyTorch: attribute 'weight' already exists)"},
      {"modules", "MultiheadAttention called on a 4-D query",
       [] {
         mg::nn::MultiheadAttention m(4, 2);
         auto q = mg::zeros({1, 2, 3, 4});
         m(q, q, q);
       },
       "[MultiheadAttention] query must be 2-D (unbatched) or 3-D (batched), got shape (1, 2, 3, "
       "4)"},
      {"modules", "MultiheadAttention with embed_dim not divisible by num_heads",
       [] { mg::nn::MultiheadAttention m(5, 2); },
       "[MultiheadAttention] embed_dim 5 must be divisible by num_heads 2"},
      {"modules", "LayerNorm(4) on a (2, 3) input",
       [] {
         mg::nn::LayerNorm ln(mg::Shape{4});
         ln(mg::zeros({2, 3}));
       },
       "[layer_norm] normalized_shape is (4,) but the input has shape (2, 3): its last 1 dims must "
       "equal it"},
      {"modules", "Embedding(4, 2) with index 4",
       [] {
         mg::nn::Embedding e(4, 2);
         e(mg::tensor({4}, mg::kInt64));
       },
       "[Embedding] index 4 is out of range for 4 embeddings"},
      {"modules", "ModuleList index out of range",
       [] {
         mg::nn::ModuleList l;
         l[0];
       },
       "[ModuleList] index 0 is out of range for 0 modules"},
      {"modules", "an empty holder (nn::Linear fc{nullptr}) used before it is assigned",
       [] {
         mg::nn::Linear fc{nullptr};
         fc(mg::zeros({1, 3}));
       },
       "[ModuleHolder] accessing an empty module holder: it was made with nullptr and never "
       "assigned (assign one, e.g. fc = register_module(\"fc\", nn::Linear(3, 4)))"},
      {"modules", "named_parameters()[key] with a key that is not a parameter",
       [] { mg::nn::Linear(3, 2)->named_parameters()["weights"]; },
       "[OrderedDict] parameter 'weights' is not defined; there are: weight, bias"},
      {"modules", "unregister_module of a name that is not a child",
       [] { mg::nn::Sequential(mg::nn::ReLU())->unregister_module("1"); },
       "[unregister_module] Sequential has no module \"1\""},
      {"modules", "replace_module of a name that is not a child",
       [] { mg::nn::Sequential(mg::nn::ReLU())->replace_module("fc", mg::nn::Linear(1, 1)); },
       "[replace_module] Sequential has no module \"fc\""},
      {"modules", "AnyModule of a Linear called with two tensors",
       [] {
         mg::nn::AnyModule any(mg::nn::Linear(3, 2));
         any.forward(mg::ones({1, 3}), mg::ones({1, 3}));
       },
       "[AnyModule] Linear's forward() takes 1 argument, but 2 were given"},
      {"modules", "AnyModule of a Linear called with a double",
       [] { mg::nn::AnyModule(mg::nn::Linear(3, 2)).forward(1.5); },
       "[AnyModule] Linear's forward() expects argument 0 to be of type minigrad::Tensor, but got "
       "double"},
      {"modules", "AnyModule of a TransformerEncoderLayer called with no tensor",
       [] { mg::nn::AnyModule(mg::nn::TransformerEncoderLayer(4, 2, 6)).forward(); },
       "[AnyModule] TransformerEncoderLayer's forward() takes at least 1 argument(s) (the last 2 "
       "have defaults), got 0"},
      {"modules", "AnyModule forward<double>() of a module that returns a Tensor",
       [] {
         mg::nn::AnyModule(mg::nn::Linear(3, 2)).forward<double>(mg::ones({1, 3}));
       },
       "[AnyModule] Linear's forward() returned minigrad::Tensor, not the requested double"},
      {"modules", "ModuleDict lookup of a key that is not there",
       [] {
         mg::nn::ModuleDict({{"fc", mg::nn::Linear(1, 1)}})["out"];
       },
       "[OrderedDict] module 'out' is not defined; there are: fc"},
      {"modules", "Embedding(4, 2) with padding_idx 4",
       [] { mg::nn::Embedding(mg::nn::EmbeddingOptions(4, 2).padding_idx(4)); },
       "[Embedding] padding_idx 4 is out of range for 4 embeddings (expected a value in [-4, 4))"},
      {"modules", "Unflatten(1, {4, 2}) of a (2, 6) input",
       [] {
         mg::nn::Unflatten(1, mg::Shape{4, 2})(mg::zeros({2, 6}));
       },
       "[Unflatten] sizes (4, 2) do not multiply to the size of dim 1 (6) of the input of shape "
       "(2, 6)"},
      {"modules", "RMSNorm(4) on a (2, 3) input",
       [] {
         mg::nn::RMSNorm(mg::Shape{4})(mg::zeros({2, 3}));
       },
       "[rms_norm] normalized_shape is (4,) but the input has shape (2, 3): its last 1 dims must "
       "equal it"},
      {"modules", "clone() of a module of yours that has no clone",
       [] {
         struct NetImpl : mg::nn::Module {
           NetImpl() : mg::nn::Module("Net") {}
         };
         NetImpl().clone();
       },
       "[Module.clone] Net does not implement clone(): derive it from nn::Cloneable<NetImpl> "
       "(cloned through its default constructor) or override clone() with clone_with([&] { "
       "return std::make_shared<NetImpl>(...); })"},
      {"modules", "Transformer with src and tgt of different batch sizes",
       [] {
         mg::nn::Transformer model(mg::nn::TransformerOptions(4, 2, 1, 1).dim_feedforward(6));
         model(mg::zeros({3, 2, 4}), mg::zeros({2, 3, 4}));
       },
       "[Transformer] src has shape (3, 2, 4) and tgt has shape (2, 3, 4): the batch number of "
       "src and tgt must be equal (dim 1)"},
      {"modules", "Transformer with tgt of 5 features and d_model 4",
       [] {
         mg::nn::Transformer model(mg::nn::TransformerOptions(4, 2, 1, 1).dim_feedforward(6));
         model(mg::zeros({3, 2, 4}), mg::zeros({2, 2, 5}));
       },
       "[Transformer] src has shape (3, 2, 4) and tgt has shape (2, 2, 5): the feature number of "
       "src and tgt must be equal to d_model (4)"},
      {"modules", "a Transformer activation other than relu, gelu or a function",
       [] { mg::nn::TransformerEncoderLayerOptions(4, 2).activation("tanh"); },
       "[Transformer] activation should be \"relu\" or \"gelu\" (or a function), not \"tanh\""},
      {"modules", "TransformerEncoder of 0 layers",
       [] { mg::nn::TransformerEncoder(mg::nn::TransformerEncoderLayer(4, 2, 6), 0); },
       "[TransformerEncoder] num_layers must be positive, got 0"},
      {"modules", "generate_square_subsequent_mask(-1)",
       [] { mg::nn::TransformerImpl::generate_square_subsequent_mask(-1); },
       "[generate_square_subsequent_mask] sz must be non-negative, got -1"},
      {"data", "TensorDataset of tensors with different first dims",
       [] {
         mg::data::TensorDataset({mg::zeros({10, 2}), mg::zeros({9})});
       },
       "[TensorDataset] size mismatch between tensors: tensor 1 has shape (9,) but tensor 0 has "
       "shape (10, 2) (their first dims must match)"},
      {"data", "TensorDataset index out of range",
       [] {
         mg::data::TensorDataset({mg::zeros({10, 2})}).get(10);
       },
       "[TensorDataset] index 10 is out of range for 10 examples"},
      {"data", "DataLoader with batch_size 0",
       [] {
         mg::data::DataLoader(mg::data::TensorDataset({mg::zeros({4})}),
                              mg::data::DataLoaderOptions(0));
       },
       "[DataLoader] batch_size must be positive, got 0"},
      {"data", "DataLoader given both shuffle(true) and a sampler",
       [] {
         mg::data::DataLoader(mg::data::TensorDataset({mg::zeros({4})}),
                              mg::data::DataLoaderOptions(2).shuffle(true),
                              std::make_unique<mg::data::samplers::SequentialSampler>(4));
       },
       "[DataLoader] shuffle(true) and a sampler are mutually exclusive (as in PyTorch): pass "
       "samplers::RandomSampler to shuffle"},
      {"losses", "cross_entropy target 7 with 5 classes",
       [] {
         mg::nn::functional::cross_entropy(mg::zeros({2, 5}), mg::tensor({0, 7}, mg::kInt64));
       },
       "[cross_entropy] target 7 is out of bounds for 5 classes"},
      {"losses", "cross_entropy with float32 class indices of the wrong shape",
       [] {
         mg::nn::functional::cross_entropy(mg::zeros({2, 5}), mg::zeros({3}));
       },
       "[cross_entropy] input has shape (2, 5): target must have shape (2,) (class indices) or (2, "
       "5) (class probabilities), got (3,)"},
      {"losses", "nll_loss target -1",
       [] {
         mg::nn::functional::nll_loss(mg::zeros({2, 3}), mg::tensor({0, -1}, mg::kInt64));
       },
       "[nll_loss] target -1 is out of bounds for 3 classes"},
      {"losses", "mse_loss of different shapes",
       [] {
         mg::nn::functional::mse_loss(mg::zeros({2, 3}), mg::zeros({3}));
       },
       "[mse_loss] input has shape (2, 3) but target has shape (3,); they must match"},
      {"losses", "a bad reduction name",
       [] { mg::nn::functional::mse_loss(mg::zeros({2}), mg::zeros({2}), "avg"); },
       "[mse_loss] reduction must be \"mean\", \"sum\" or \"none\", got \"avg\""},
      {"losses", "binary_cross_entropy of an input outside [0, 1]",
       [] { mg::nn::functional::binary_cross_entropy(mg::full({2}, 1.5), mg::ones({2})); },
       "[binary_cross_entropy] all elements of input should be between 0 and 1, got 1.5"},
      {"losses", "smooth_l1_loss with beta -1",
       [] { mg::nn::functional::smooth_l1_loss(mg::zeros({2}), mg::zeros({2}), "mean", -1.0); },
       "[smooth_l1_loss] beta must be non-negative, got -1"},
      {"losses", "huber_loss with delta 0",
       [] { mg::nn::functional::huber_loss(mg::zeros({2}), mg::zeros({2}), "mean", 0.0); },
       "[huber_loss] delta must be positive, got 0"},
      {"losses", "l1_loss of different shapes",
       [] {
         mg::nn::functional::l1_loss(mg::zeros({2, 3}), mg::zeros({3}));
       },
       "[l1_loss] target has shape (3,) but input has shape (2, 3); they must match"},
      {"losses", "multi_margin_loss with p 3",
       [] {
         mg::nn::functional::multi_margin_loss(mg::zeros({2, 3}), mg::tensor({0L, 1L}), 3);
       },
       "[multi_margin_loss] only p == 1 and p == 2 supported, got p = 3"},
      {"losses", "soft_margin_loss with a target that requires grad",
       [] { mg::nn::functional::soft_margin_loss(mg::zeros({2}), mg::ones({2}).requires_grad_()); },
       "[soft_margin_loss] the function 'soft_margin_loss' is not differentiable with respect to "
       "argument 'target'. This input cannot have requires_grad True (detach() it)."},
      {"losses", "ctc_loss with an input length longer than log_probs",
       [] {
         mg::nn::functional::ctc_loss(mg::zeros({3, 1, 4}), mg::tensor({{1L}}), mg::tensor({4L}),
                                      mg::tensor({1L}));
       },
       "[ctc_loss] Expected input_lengths to have value at most 3, but got value 4 (sample 0)"},
      {"creation", "a CUDA tensor (`zeros({2}, TensorOptions().device(kCUDA))`)",
       [] { mg::zeros({2}, mg::TensorOptions().device(mg::kCUDA)); },
       "[zeros] CUDA is not available: minigrad runs on the CPU (asked for cuda); pick the device "
       "with mg::cuda::is_available(), which is false"},
      {"creation", "from_blob of a null pointer", [] { mg::from_blob(nullptr, {2}, mg::kFloat32); },
       "[from_blob] data is null"},
      {"creation", "nested lists of unequal lengths (`tensor({{1.0, 2.0}, {3.0}})`)",
       [] {
         mg::tensor({{1.0, 2.0}, {3.0}});
       },
       "[tensor] nested lists must be rectangular: a list at depth 1 has 1 values, expected 2"},
      {"creation", "randn with a negative size",
       [] {
         mg::randn({2, -1});
       },
       "[randn] trying to create a tensor with negative dimension -1: (2, -1)"},
      {"creation", "arange with step 0", [] { mg::arange(0, 5, 0); },
       "[arange] step must be nonzero"},
      {"creation", "multinomial of 4 samples from 3 categories without replacement",
       [] { mg::multinomial(mg::ones({3}), 4); },
       "[multinomial] cannot draw 4 samples without replacement from 3 categories"},
      {"creation", "multinomial with a negative probability",
       [] {
         mg::multinomial(mg::tensor({1.0, -1.0}), 1);
       },
       "[multinomial] probabilities must be finite and non-negative, got -1 in row 0 at index 1"},
      {"creation", "tensor with 5 values for shape (2, 3)",
       [] {
         mg::tensor({1, 2, 3, 4, 5}, {2, 3});
       },
       "[tensor] shape (2, 3) has 6 elements but 5 values were given"},
      {"creation", "uniform_ with from > to", [] { mg::zeros({3}).uniform_(2, 1); },
       "[uniform_] expects to return a [from, to) range, but found from=2 > to=1"},
      {"creation", "normal_ with a negative std", [] { mg::zeros({3}).normal_(0, -1); },
       "[normal_] expects std >= 0.0, but found std -1"},
      {"creation", "random_ of a float32 tensor beyond 2^24",
       [] { mg::zeros({3}).random_(0, (1 << 24) + 2); },
       "[random_] from=0 and to - 1=16777217 must lie in [-16777216, 16777216] for float32: beyond "
       "it the integers are not all representable"},
      {"creation", "a random fill of an expanded tensor",
       [] { mg::zeros({1}).expand({3}).uniform_(); },
       "[uniform_] more than one element of the written-to tensor refers to a single memory "
       "location (dim 0 of shape (3,) has stride 0); clone() the tensor first"},
      {"creation", "a random fill of a parameter outside NoGradGuard",
       [] { mg::zeros({3}).requires_grad_().normal_(); },
       "[normal_] a tensor that requires grad cannot be filled in place (autograd would not "
       "record it); fill it under NoGradGuard"},
      {"creation", "set_num_threads(0)", [] { mg::set_num_threads(0); },
       "[set_num_threads] the number of threads must be at least 1, got 0"},
      {"files", "load_safetensors of a file that does not exist",
       [] {
         InTempDir tmp;
         mg::load_safetensors("missing.safetensors");
       },
       "[load_safetensors] missing.safetensors: cannot open for reading: No such file or "
       "directory"},
      {"files", "load_safetensors of a 5-byte file",
       [] {
         InTempDir tmp;
         write_bytes("model.safetensors", "abcde");
         mg::load_safetensors("model.safetensors");
       },
       "[load_safetensors] model.safetensors: file has 5 bytes, too short for the 8-byte header "
       "length"},
      {"files", "safetensors header length larger than the file",
       [] {
         InTempDir tmp;
         write_bytes("model.safetensors", u64le(1000) + "{}");
         mg::load_safetensors("model.safetensors");
       },
       "[load_safetensors] model.safetensors: header length 1000 exceeds file size 10"},
      {"files", "safetensors file cut short in its data (a truncated copy)",
       [] {
         InTempDir tmp;
         mg::save_safetensors("model.safetensors", {{"w", mg::zeros({2, 3})}});
         std::filesystem::resize_file("model.safetensors",
                                      std::filesystem::file_size("model.safetensors") - 8);
         mg::load_safetensors("model.safetensors");
       },
       "[load_safetensors] model.safetensors: tensor \"w\": data_offsets [0, 24] lie outside the "
       "data section (16 bytes)"},
      {"files", "corrupt safetensors header (not a JSON object)",
       [] {
         InTempDir tmp;
         write_bytes("model.safetensors", safetensors_bytes("garbage!", ""));
         mg::load_safetensors("model.safetensors");
       },
       "[load_safetensors] model.safetensors: the header does not start with '{'"},
      {"files", "safetensors header entry without data_offsets",
       [] {
         InTempDir tmp;
         write_bytes("model.safetensors", safetensors_bytes(R"({"w":{"dtype":"F32","shape":[2]}})",
                                                            std::string(8, '\0')));
         mg::load_safetensors("model.safetensors");
       },
       "[load_safetensors] model.safetensors: tensor \"w\" has no \"data_offsets\""},
      {"files", "safetensors tensor of dtype F16",
       [] {
         InTempDir tmp;
         write_bytes("model.safetensors",
                     safetensors_bytes(R"({"w":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}})",
                                       std::string(4, '\0')));
         mg::load_safetensors("model.safetensors");
       },
       "[load_safetensors] model.safetensors: tensor \"w\": unsupported dtype \"F16\" (minigrad "
       "reads F32, F64, I64 and BOOL)"},
      {"files", "load_npy of a file that is not .npy (wrong magic)",
       [] {
         InTempDir tmp;
         write_bytes("x.npy", "hello, world");
         mg::load_npy("x.npy");
       },
       "[load_npy] x.npy: not a .npy file (the magic string \\x93NUMPY is missing)"},
      {"files", ".npy file cut short in its data",
       [] {
         InTempDir tmp;
         mg::save_npy("x.npy", mg::zeros({2, 3}));
         std::filesystem::resize_file("x.npy", std::filesystem::file_size("x.npy") - 16);
         mg::load_npy("x.npy");
       },
       "[load_npy] x.npy: shape (2, 3) '<f4' needs 24 bytes of data but the file has 8"},
      {"files", "safetensors header nesting 100,000 JSON arrays",
       [] {
         InTempDir tmp;
         write_bytes("model.safetensors", safetensors_bytes(R"({"w":)" + std::string(100'000, '[') +
                                                                std::string(100'000, ']') + "}",
                                                            ""));
         mg::load_safetensors("model.safetensors");
       },
       "[load_safetensors] model.safetensors: the header nests JSON arrays and objects deeper than "
       "the limit of 64 levels"},
      {"files", "safetensors header holding the number 1e400",
       [] {
         InTempDir tmp;
         write_bytes(
             "model.safetensors",
             safetensors_bytes(R"({"w":{"dtype":"F32","shape":[1e400],"data_offsets":[0,4]}})",
                               std::string(4, '\0')));
         mg::load_safetensors("model.safetensors");
       },
       "[load_safetensors] model.safetensors: invalid JSON header: "
       "[json.exception.out_of_range.406] number overflow parsing '1e400'"},
      {"files", "safetensors header listing more than a million tensors",
       [] {
         InTempDir tmp;
         std::string header = "{";
         for (int i = 0; i <= 1'000'001; ++i)
           header += (i ? ",\"" : "\"") + std::to_string(i) + "\":0";
         write_bytes("model.safetensors", safetensors_bytes(header + "}", ""));
         mg::load_safetensors("model.safetensors");
       },
       "[load_safetensors] model.safetensors: the header lists more than the limit of 1000000 "
       "tensors"},
      {"files", "safetensors tensor of shape [1, 1, ...] with 100,000 dims",
       [] {
         InTempDir tmp;
         std::string shape = "[1";
         for (int i = 1; i < 100'000; ++i) shape += ",1";
         write_bytes("model.safetensors",
                     safetensors_bytes(
                         R"({"w":{"dtype":"F32","shape":)" + shape + R"(],"data_offsets":[0,4]}})",
                         std::string(4, '\0')));
         mg::load_safetensors("model.safetensors");
       },
       "[load_safetensors] model.safetensors: tensor \"w\": shape has 100000 dims, more than the "
       "limit of 64"},
      {"files", ".npy file of shape (1, 1, ...) with 65 dims",
       [] {
         InTempDir tmp;
         std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
         for (int i = 0; i < 65; ++i) header += "1, ";
         header += "), }\n";
         write_bytes("x.npy",
                     std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size() & 0xff) +
                         static_cast<char>(header.size() >> 8) + header + std::string(4, '\0'));
         mg::load_npy("x.npy");
       },
       "[load_npy] x.npy: the shape has more than the limit of 64 dims"},
      {"files", ".npy header over numpy.load's 10000-byte limit",
       [] {
         InTempDir tmp;
         // format 1.0, header length 0x2740 = 10048
         write_bytes("x.npy",
                     std::string("\x93NUMPY\x01\x00\x40\x27", 10) + std::string(10048, ' '));
         mg::load_npy("x.npy");
       },
       "[load_npy] x.npy: header length 10048 exceeds the limit of 10000 bytes"},
      {"files", "nn::load of a checkpoint with another shape",
       [] {
         InTempDir tmp;
         mg::nn::save(mg::nn::Linear(4, 3), "model.safetensors");
         mg::nn::Linear l(5, 3);
         mg::nn::load(l, "model.safetensors");
       },
       "[load_state_dict] Linear: size mismatch for weight: the checkpoint has shape (3, 4), the "
       "module has (3, 5); nothing was loaded (loading model.safetensors)"},
      {"files", "nn::load of a checkpoint missing a key",
       [] {
         InTempDir tmp;
         mg::save_safetensors("model.safetensors", {{"weight", mg::zeros({2, 2})}});
         mg::nn::Linear l(2, 2);
         mg::nn::load(l, "model.safetensors");
       },
       "[load_state_dict] Linear: missing key(s) \"bias\"; nothing was loaded (loading "
       "model.safetensors)"},
      {"files", "nn::load of a float32 checkpoint into a float64 module",
       [] {
         InTempDir tmp;
         mg::nn::save(mg::nn::Linear(2, 2, false), "model.safetensors");
         mg::nn::Linear l(2, 2, false);
         l->to(mg::kFloat64);
         mg::nn::load(l, "model.safetensors");
       },
       "[load_state_dict] Linear: dtype mismatch for weight: the checkpoint has float32, the "
       "module "
       "has float64 (convert one with .to(dtype)); nothing was loaded (loading model.safetensors)"},
      {"files", "optim::load of a model checkpoint",
       [] {
         InTempDir tmp;
         mg::nn::Linear l(2, 2);
         mg::nn::save(l, "model.safetensors");
         mg::optim::SGD opt(l->parameters(), mg::optim::SGDOptions(0.1));
         mg::optim::load(opt, "model.safetensors");
       },
       "[load_optimizer_state] model.safetensors: metadata \"format\" is missing (not an optimizer "
       "checkpoint?)"},
      {"files", "optim::load of another optimizer's state",
       [] {
         InTempDir tmp;
         auto w = mg::ones({3}).requires_grad_();
         mg::optim::SGD sgd({w}, mg::optim::SGDOptions(0.1));
         mg::optim::save(sgd, "optim.safetensors");
         mg::optim::Adam adam({w}, {});
         mg::optim::load(adam, "optim.safetensors");
       },
       "[load_state_dict] Adam: the state_dict is SGD's, not Adam's (loading optim.safetensors)"},
      {"files", "optim::load of param_groups nesting 100,000 JSON arrays",
       [] {
         InTempDir tmp;
         mg::save_safetensors(
             "optim.safetensors", {},
             {{"format", "minigrad.optimizer"},
              {"optimizer", "Adam"},
              {"param_groups", std::string(100'000, '[') + std::string(100'000, ']')}});
         auto w = mg::ones({3}).requires_grad_();
         mg::optim::Adam adam({w}, {});
         mg::optim::load(adam, "optim.safetensors");
       },
       "[load_optimizer_state] optim.safetensors: metadata \"param_groups\" nests arrays and "
       "objects more than 3 levels deep; PyTorch's layout has 3 ([{\"lr\": 0.001, \"betas\": "
       "[0.9, 0.999], \"params\": [0]}])"},
      {"files", "optim::load of param_groups holding 1e908 (one flipped byte of eps 1e-08)",
       [] {
         InTempDir tmp;
         mg::save_safetensors("optim.safetensors", {},
                              {{"format", "minigrad.optimizer"},
                               {"optimizer", "Adam"},
                               {"param_groups", "[{\"eps\": 1e908, \"params\": [0]}]"}});
         auto w = mg::ones({3}).requires_grad_();
         mg::optim::Adam adam({w}, {});
         mg::optim::load(adam, "optim.safetensors");
       },
       "[load_optimizer_state] optim.safetensors: metadata \"param_groups\" is not valid JSON: "
       "[json.exception.out_of_range.406] number overflow parsing '1e908'"},
      {"files", "optim::load of a NaN step",
       [] {
         InTempDir tmp;
         auto w = mg::ones({3}).requires_grad_();
         mg::optim::Adam saved({w}, {});
         (w * w).sum().backward();
         saved.step();
         mg::OptimizerStateDict dict = saved.state_dict();
         dict.state[0]["step"] = mg::scalar_tensor(std::nan(""), mg::kFloat32);
         mg::save_optimizer_state("optim.safetensors", dict);
         mg::optim::Adam adam({w}, {});
         mg::optim::load(adam, "optim.safetensors");
       },
       "[load_state_dict] Adam: state \"step\" of parameter 0 must be a finite number >= 0, got "
       "nan (loading optim.safetensors)"},
      {"files", "load_safetensors of a FIFO (a named pipe nobody writes: refused, not waited on)",
       [] {
         InTempDir tmp;
         ::mkfifo("pipe.safetensors", 0600);
         mg::load_safetensors("pipe.safetensors");
       },
       "[load_safetensors] pipe.safetensors: not a regular file"},
      {"files", "nn::save of metadata to a .pt path",
       [] {
         InTempDir tmp;
         mg::nn::Linear m(2, 1);
         mg::nn::save(m, "model.pt", {{"epoch", "3"}});
       },
       "[save] model.pt: torch.save's format has no place for metadata; save to a .safetensors "
       "path to keep it"},
      {"files", "nn::load of a .pt file whose pickle calls os.system",
       [] {
         InTempDir tmp;
         using namespace minigrad_test;
         write_bytes("model.pt", pt_of("\x80\x02"
                                       "cos\nsystem\n" +
                                           pk_str("ls") + "\x85R.",
                                       ""));
         mg::nn::Linear m(2, 1);
         mg::nn::load(m, "model.pt");
       },
       "[load_torch] model.pt: data.pkl: refused the global os.system (a state_dict needs only "
       "collections.OrderedDict, torch._utils._rebuild_tensor_v2, torch._utils._rebuild_parameter "
       "and torch's Float, Double, Long and Bool storages) (opcode at byte 2)"},
      {"files", ".pt pickle with an opcode a state_dict does not use (INST, protocol 0)",
       [] {
         InTempDir tmp;
         write_bytes("model.pt", minigrad_test::pt_of("\x80\x02(i__main__\nX\n.", ""));
         mg::load_torch("model.pt");
       },
       "[load_torch] model.pt: data.pkl: unsupported pickle opcode 0x69 (a state_dict needs only a "
       "few of protocol 2's) (opcode at byte 3)"},
      {"files", ".pt pickle nesting 100,000 tuples (limit: 32 levels)",
       [] {
         InTempDir tmp;
         using namespace minigrad_test;
         write_bytes("model.pt",
                     pt_of("\x80\x02" + pk_int(0) + std::string(100'000, '\x85') + ".", ""));
         mg::load_torch("model.pt");
       },
       "[load_torch] model.pt: data.pkl: the pickle nests tuples, lists and dicts deeper than the "
       "limit of 32 levels (opcode at byte 36)"},
      {"files", ".pt tensor of size (2^40,) over a storage of 1 element",
       [] {
         InTempDir tmp;
         using namespace minigrad_test;
         write_bytes("model.pt",
                     pt_of(pk_state_dict(1, pk_int(1ull << 40) + "\x85", pk_int(1) + "\x85"),
                           std::string(4, '\0')));
         mg::load_torch("model.pt");
       },
       "[load_torch] model.pt: data.pkl: a tensor of size (1099511627776,), stride (1,) and "
       "offset 0 does not fit in its storage \"0\" of 1 elements (opcode at byte 166)"},
      {"files", ".pt storage record shorter than its numel",
       [] {
         InTempDir tmp;
         using namespace minigrad_test;
         write_bytes("model.pt", pt_of(pk_state_dict(6, pk_int(6) + "\x85", pk_int(1) + "\x85"),
                                       std::string(4, '\0')));
         mg::load_torch("model.pt");
       },
       "[load_torch] model.pt: record m/data/0 has 4 bytes, but its storage holds 6 float32 "
       "elements (24 bytes)"},
      {"files", ".pt file with a flipped byte (CRC-32 checked on every record)",
       [] {
         InTempDir tmp;
         mg::save_torch("model.pt", {{"w", mg::zeros({2})}});
         std::string bytes;
         {
           std::ifstream in("model.pt", std::ios::binary);
           bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
         }
         bytes[bytes.find("OrderedDict")] = 'o';
         write_bytes("model.pt", bytes);
         mg::load_torch("model.pt");
       },
       "[load_torch] model.pt: zip entry \"archive/data.pkl\" fails its CRC-32 check (0x042a0d01 "
       "computed, 0xaed2158b recorded): the file is corrupt"},
      {"files", ".pt file cut in half (a truncated copy)",
       [] {
         InTempDir tmp;
         mg::save_torch("model.pt", {{"w", mg::zeros({2})}});
         std::filesystem::resize_file("model.pt", std::filesystem::file_size("model.pt") / 2);
         mg::load_torch("model.pt");
       },
       "[load_torch] model.pt: not a zip archive (no end of central directory record; truncated, "
       "or not written by torch.save)"},
      {"files", ".pt tensor of half precision (torch.HalfStorage)",
       [] {
         InTempDir tmp;
         using namespace minigrad_test;
         std::string pickle = pk_state_dict(1, pk_int(1) + "\x85", pk_int(1) + "\x85");
         pickle.replace(pickle.find("FloatStorage"), 12, "HalfStorage");
         write_bytes("model.pt", pt_of(pickle, std::string(2, '\0')));
         mg::load_torch("model.pt");
       },
       "[load_torch] model.pt: data.pkl: storage type torch.HalfStorage is not supported (minigrad "
       "reads float32, float64, int64 and bool tensors) (opcode at byte 83)"},
      {"files", "optim::load of a state for parameters of another shape",
       [] {
         InTempDir tmp;
         auto w3 = mg::ones({3}).requires_grad_();
         mg::optim::Adam saved({w3}, {});
         (w3 * w3).sum().backward();
         saved.step();
         mg::optim::save(saved, "optim.safetensors");
         auto w4 = mg::ones({4}).requires_grad_();
         mg::optim::Adam adam({w4}, {});
         mg::optim::load(adam, "optim.safetensors");
       },
       "[load_state_dict] Adam: state \"exp_avg\" of parameter 0 has shape (3,) float32, the "
       "parameter has (4,) float32 (loading optim.safetensors)"},
  };
  return rows;
}

TEST(Errors, EveryBadInputGivesItsDocumentedMessage) {
  minigrad_test::expect_documented_messages(bad_inputs());
  std::cout << bad_inputs().size() << " documented bad inputs checked\n";
}

}  // namespace
