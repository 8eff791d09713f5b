// Custom Functions (minigrad/custom_function.h): the non-template half of Function<T>.
//
// Note [Custom Functions]
// T::apply(args...) makes one CustomFunctionNode<T> (its name is T's, plus "Backward"), sets its
// edges from the Tensor arguments, runs T::forward without recording history, then attaches each
// output to the node as output i (TensorImpl::output_nr), so one node may have several outputs
// and receive one gradient for each (Note [The engine]). What forward saved with
// save_for_backward is kept as the built-in ops keep theirs (Note [Saved tensors]): an input as
// it is, an output as its data without grad_fn (re-attached when read), each with its version,
// checked when backward reads it. An output forward returned unchanged from its inputs (or any
// tensor that already has history) is attached through a new handle sharing its data, never by
// rewriting that tensor's history; an input forward wrote in place and declared with mark_dirty
// takes the node as its history, as an in-place op's result does (Note [In-place ops]).
#include <cxxabi.h>

#include <cstdlib>

#include "autograd/function.h"
#include "minigrad/custom_function.h"
#include "minigrad/ops/creation.h"
#include "minigrad/ops/elementwise.h"

namespace minigrad::autograd {

// ---------------------------------------------------------------- IValue

const char* IValue::kind() const {
  static const char* const kKinds[] = {"None",     "a bool",   "an int",      "a double",
                                       "a string", "a tensor", "an int list", "a C++ value"};
  return kKinds[v_.index()];
}

void IValue::throw_wrong_kind(const char* method) const {
  MG_ERROR("IValue", "expected a C++ value of the requested type but it holds ", kind(), " (",
           method, ")");
}

#define MG_IVALUE_GET(method, type, what)                                                         \
  MG_CHECK(std::holds_alternative<type>(v_), "IValue", "expected " what " but it holds ", kind(), \
           " (" method ")")

bool IValue::toBool() const {
  MG_IVALUE_GET("toBool", bool, "a bool");
  return std::get<bool>(v_);
}
std::int64_t IValue::toInt() const {
  MG_IVALUE_GET("toInt", std::int64_t, "an int");
  return std::get<std::int64_t>(v_);
}
double IValue::toDouble() const {
  if (isInt()) return static_cast<double>(std::get<std::int64_t>(v_));
  MG_IVALUE_GET("toDouble", double, "a double");
  return std::get<double>(v_);
}
const std::string& IValue::toStringRef() const {
  MG_IVALUE_GET("toStringRef", std::string, "a string");
  return std::get<std::string>(v_);
}
Tensor IValue::toTensor() const {
  MG_IVALUE_GET("toTensor", Tensor, "a tensor");
  return std::get<Tensor>(v_);
}
std::vector<std::int64_t> IValue::toIntVector() const {
  MG_IVALUE_GET("toIntVector", std::vector<std::int64_t>, "an int list");
  return std::get<std::vector<std::int64_t>>(v_);
}
#undef MG_IVALUE_GET

// ---------------------------------------------------------------- AutogradContext

namespace detail {

struct CustomState {
  const std::string* name = nullptr;
  std::weak_ptr<Node> node;
  bool requires_grad = false;
  bool materialize_grads = true;
  bool released = false;
  std::vector<bool> is_tensor_arg;
  std::vector<Tensor> to_save;
  std::vector<minigrad::detail::SavedTensor> saved;
  std::vector<const TensorImpl*> dirty;
  std::vector<const TensorImpl*> non_differentiable;
  std::vector<std::pair<Shape, Dtype>> outputs;
};

void set_tensor_args(AutogradContext& ctx, std::vector<bool> is_tensor) {
  CustomFunctionCore::state(ctx).is_tensor_arg = std::move(is_tensor);
}

}  // namespace detail

AutogradContext::AutogradContext() : state_(std::make_unique<detail::CustomState>()) {}
AutogradContext::~AutogradContext() = default;

void AutogradContext::save_for_backward(std::vector<Tensor> to_save) {
  state_->to_save = std::move(to_save);
}

std::vector<Tensor> AutogradContext::get_saved_variables() const {
  const detail::CustomState& s = *state_;
  MG_CHECK(!s.released, *s.name,
           "the saved tensors were freed by a backward without retain_graph; call "
           "backward(gradient, /*retain_graph=*/true) the first time if you need them again");
  std::shared_ptr<Node> node = s.node.lock();
  std::vector<Tensor> out;
  out.reserve(s.saved.size());
  for (const auto& t : s.saved) {
    t.check_version(s.name->c_str());
    out.push_back(t.unpack(t.is_output() ? node : nullptr));
  }
  return out;
}

void AutogradContext::mark_dirty(const std::vector<Tensor>& inputs) {
  for (const Tensor& t : inputs) {
    MG_CHECK(t.defined(), *state_->name, "mark_dirty got an undefined tensor");
    state_->dirty.push_back(t.impl());
  }
}

void AutogradContext::mark_non_differentiable(const std::vector<Tensor>& outputs) {
  for (const Tensor& t : outputs)
    if (t.defined()) state_->non_differentiable.push_back(t.impl());
}

void AutogradContext::set_materialize_grads(bool value) { state_->materialize_grads = value; }

bool AutogradContext::needs_input_grad(std::size_t i) const {
  std::shared_ptr<Node> node = state_->node.lock();
  return node && node->needs_input_grad(i);
}

// ---------------------------------------------------------------- Function<T>'s steps

namespace detail {

std::string CustomFunctionCore::default_name(const char* mangled) {
  int status = 0;
  char* name = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string out = status == 0 && name ? name : mangled;
  std::free(name);
  // "ns::MyExp" -> "MyExp"; template arguments are kept.
  std::size_t angle = out.find('<');
  std::size_t colon = out.rfind("::", angle);
  if (colon != std::string::npos) out = out.substr(colon + 2);
  return out + "Backward";
}

namespace {

bool contains(const std::vector<const TensorImpl*>& v, const TensorImpl* p) {
  for (const TensorImpl* q : v)
    if (q == p) return true;
  return false;
}
}  // namespace

CustomState& CustomFunctionCore::state(AutogradContext& ctx) { return *ctx.state_; }

void CustomFunctionCore::begin(Node& node, const std::shared_ptr<Node>& self, AutogradContext& ctx,
                               const std::vector<Tensor>& inputs, const std::string* name) {
  CustomState& s = *ctx.state_;
  s.name = name;
  s.node = self;
  s.requires_grad = false;
  if (is_grad_enabled())
    for (const Tensor& t : inputs) s.requires_grad |= t.defined() && t.requires_grad();
  if (!s.requires_grad) return;
  std::vector<Edge>& edges = minigrad::detail::NodeAccess::edges(node);
  for (const Tensor& t : inputs) edges.push_back(minigrad::detail::gradient_edge(t));
}

void CustomFunctionCore::finish(Node& node, AutogradContext& ctx, const std::vector<Tensor>& inputs,
                                std::vector<Tensor>& outputs) {
  CustomState& s = *ctx.state_;
  MG_CHECK(!outputs.empty(), *s.name, "forward returned no tensor");
  std::vector<Tensor> to_save = std::move(s.to_save);
  // A tensor forward declared written is one in-place write, with or without a graph (libtorch's
  // get_and_bump_dirty): whatever saved it earlier must refuse it in backward.
  for (std::size_t i = 0; i < s.dirty.size(); ++i) {
    bool first = true;
    for (std::size_t j = 0; j < i; ++j) first &= s.dirty[j] != s.dirty[i];
    if (first) ++s.dirty[i]->storage->version;
  }
  if (!s.requires_grad) {
    s.dirty.clear();
    return;
  }
  std::vector<const TensorImpl*> original(outputs.size());
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    original[i] = outputs[i].impl();
    s.outputs.emplace_back(outputs[i].defined() ? outputs[i].shape() : Shape{},
                           outputs[i].defined() ? outputs[i].dtype() : kFloat32);
  }
  minigrad::detail::NodeAccess::set_outputs_meta(node, s.outputs);
  std::shared_ptr<Node> self = s.node.lock();
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    Tensor& out = outputs[i];
    if (!out.defined()) continue;
    TensorImpl* impl = out.impl();
    bool is_input = false;
    for (const Tensor& t : inputs) is_input |= t.defined() && t.impl() == impl;
    if (contains(s.non_differentiable, impl)) {
      if (is_input || impl->grad_fn || impl->requires_grad) out = out.detach();
      continue;
    }
    if (contains(s.dirty, impl)) {
      MG_CHECK(is_input, *s.name, "mark_dirty: output ", i,
               " was marked dirty but is not an input");
      MG_CHECK(!(impl->requires_grad && impl->grad_fn == nullptr), *s.name,
               "a leaf tensor that requires grad cannot be modified in place (output ", i,
               " was marked dirty); use it under NoGradGuard");
      MG_CHECK(!impl->view_base, *s.name, "mark_dirty on a view (output ", i,
               ") is not supported; write the base tensor instead");
      ++impl->history;
    } else if (is_input || impl->grad_fn || impl->requires_grad) {
      // Never rewrite the history of a tensor the caller holds: attach a new handle.
      out = out.detach();
      impl = out.impl();
    }
    impl->grad_fn = self;
    impl->output_nr = static_cast<std::uint32_t>(i);
    impl->requires_grad = true;
  }
  for (const Tensor& t : to_save) {
    std::size_t k = 0;
    while (k < original.size() && (!t.defined() || original[k] != t.impl())) ++k;
    if (k < original.size()) {  // an output (dirty ones too): kept without its grad_fn
      minigrad::detail::SavedTensor saved = minigrad::detail::SavedTensor::of_output(outputs[k]);
      saved.set_output_nr(static_cast<std::uint32_t>(k));
      s.saved.push_back(std::move(saved));
    } else {
      s.saved.push_back(minigrad::detail::SavedTensor::of(t));
    }
  }
}

std::vector<Tensor> CustomFunctionCore::before_backward(const Node& node, AutogradContext& ctx,
                                                        std::vector<Tensor> grads) {
  CustomState& s = *ctx.state_;
  MG_CHECK(!s.released, "backward",
           "trying to backward through the graph a second time (or to use saved tensors after "
           "they were freed) at ",
           *s.name,
           ": the saved tensors were freed by the first backward; call backward(gradient, "
           "/*retain_graph=*/true) the first time if you need to backward twice");
  for (const auto& t : s.saved) t.check_version(s.name->c_str());
  if (s.materialize_grads)
    for (std::size_t i = 0; i < grads.size(); ++i)
      if (!grads[i].defined()) grads[i] = zeros(node.output_shape(i), node.output_dtype(i));
  return grads;
}

std::vector<Tensor> CustomFunctionCore::after_backward(const Node& node, AutogradContext& ctx,
                                                       std::vector<Tensor> grads) {
  const CustomState& s = *ctx.state_;
  // As libtorch: extra gradients are accepted when they are all undefined.
  if (grads.size() > s.is_tensor_arg.size()) {
    bool extra_defined = false;
    for (std::size_t i = s.is_tensor_arg.size(); i < grads.size(); ++i)
      extra_defined |= grads[i].defined();
    if (!extra_defined) grads.resize(s.is_tensor_arg.size());
  }
  MG_CHECK(grads.size() == s.is_tensor_arg.size(), *s.name, "backward returned ", grads.size(),
           " gradients but forward took ", s.is_tensor_arg.size(),
           " arguments (return one per argument, Tensor() for the non-tensor ones)");
  std::vector<Tensor> out;
  out.reserve(node.next_edges().size());
  for (std::size_t i = 0; i < grads.size(); ++i) {
    if (s.is_tensor_arg[i]) {
      out.push_back(std::move(grads[i]));
    } else {
      MG_CHECK(!grads[i].defined(), *s.name, "backward returned a gradient at position ", i,
               ", but forward's argument ", i, " is not a tensor (return Tensor() there)");
    }
  }
  return out;
}

void CustomFunctionCore::release(AutogradContext& ctx) {
  CustomState& s = *ctx.state_;
  if (s.saved.empty()) return;
  for (auto& t : s.saved) t.reset();
  s.released = true;
}

const std::string& CustomFunctionCore::name(const AutogradContext& ctx) {
  static const std::string unnamed = "CustomFunctionBackward";
  return ctx.state_->name ? *ctx.state_->name : unnamed;
}

}  // namespace detail
}  // namespace minigrad::autograd
