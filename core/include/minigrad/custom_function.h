#pragma once
// Custom differentiable functions, as libtorch's torch::autograd::Function<T>: an op with a
// forward and a backward you write yourself (Note [Custom Functions], custom_function.cpp).
//
//   struct MyExp : mg::autograd::Function<MyExp> {
//     static Tensor forward(AutogradContext* ctx, const Tensor& x) {
//       Tensor y = x.exp();
//       ctx->save_for_backward({y});
//       return y;
//     }
//     static std::vector<Tensor> backward(AutogradContext* ctx, std::vector<Tensor> grads) {
//       return {grads[0] * ctx->get_saved_variables()[0]};
//     }
//   };
//   Tensor y = MyExp::apply(x);
//
// forward runs without recording history and returns a Tensor or a std::vector<Tensor>; it may
// take any arguments (the Tensor ones are the inputs autograd differentiates). backward receives
// one gradient per output and returns one per forward argument (Tensor() for the non-tensor ones
// and for inputs that need none). It is written with minigrad ops, so create_graph differentiates
// it again; saved tensors are version-checked like the built-in ops' (Note [Saved tensors]).
#include <any>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "minigrad/autograd.h"

namespace minigrad::autograd {

/// A value in AutogradContext::saved_data (libtorch's IValue, for what a backward needs besides
/// tensors: a dim, a scale, a flag, a shape).
class IValue {
 public:
  IValue() = default;
  IValue(bool v) : v_(v) {}                                     // NOLINT
  IValue(int v) : v_(static_cast<std::int64_t>(v)) {}           // NOLINT
  IValue(long v) : v_(static_cast<std::int64_t>(v)) {}          // NOLINT
  IValue(long long v) : v_(static_cast<std::int64_t>(v)) {}     // NOLINT
  IValue(double v) : v_(v) {}                                   // NOLINT
  IValue(std::string v) : v_(std::move(v)) {}                   // NOLINT
  IValue(const char* v) : v_(std::string(v)) {}                 // NOLINT
  IValue(Tensor v) : v_(std::move(v)) {}                        // NOLINT
  IValue(std::vector<std::int64_t> v) : v_(std::move(v)) {}     // NOLINT
  IValue(const Shape& v) : v_(std::vector<std::int64_t>(v)) {}  // NOLINT
  /// Any other C++ value (a struct of a backward's parameters): IValue::of(layout), read back
  /// with to<Layout>(). A minigrad extension: libtorch keeps custom classes as intrusive_ptrs.
  template <typename T>
  static IValue of(T value) {
    IValue v;
    v.v_ = std::any(std::move(value));
    return v;
  }
  template <typename T>
  const T& to() const {
    const std::any* a = std::get_if<std::any>(&v_);
    const T* p = a ? std::any_cast<T>(a) : nullptr;
    if (!p) throw_wrong_kind("to<T>");
    return *p;
  }

  bool isNone() const { return v_.index() == 0; }
  bool isBool() const { return std::holds_alternative<bool>(v_); }
  bool isInt() const { return std::holds_alternative<std::int64_t>(v_); }
  bool isDouble() const { return std::holds_alternative<double>(v_); }
  bool isString() const { return std::holds_alternative<std::string>(v_); }
  bool isTensor() const { return std::holds_alternative<Tensor>(v_); }
  bool isIntList() const { return std::holds_alternative<std::vector<std::int64_t>>(v_); }
  /// Each throws "[IValue] expected an int but it holds a double" on the wrong kind.
  bool toBool() const;
  std::int64_t toInt() const;
  /// A double, or an int converted (as libtorch's toScalar().to<double>()).
  double toDouble() const;
  const std::string& toStringRef() const;
  Tensor toTensor() const;
  std::vector<std::int64_t> toIntVector() const;

 private:
  const char* kind() const;
  [[noreturn]] void throw_wrong_kind(const char* method) const;
  std::variant<std::monostate, bool, std::int64_t, double, std::string, Tensor,
               std::vector<std::int64_t>, std::any>
      v_;
};

namespace detail {
struct CustomState;
struct CustomFunctionCore;
}  // namespace detail

/// What forward leaves for backward (libtorch's AutogradContext).
class AutogradContext {
 public:
  AutogradContext();
  ~AutogradContext();
  AutogradContext(const AutogradContext&) = delete;
  AutogradContext& operator=(const AutogradContext&) = delete;

  /// Keeps tensors for backward (inputs or outputs of forward); call it in forward.
  void save_for_backward(std::vector<Tensor> to_save);
  /// The saved tensors, in order. Throws if one was modified in place since forward, or after a
  /// backward without retain_graph freed them. Saved outputs come back attached to this node.
  std::vector<Tensor> get_saved_variables() const;
  /// Non-tensor values for backward (tensors kept here are not version-checked).
  std::unordered_map<std::string, IValue> saved_data;
  /// Declares inputs that forward modified in place (and returned): they take this node as
  /// their history, as an in-place op's output does.
  void mark_dirty(const std::vector<Tensor>& inputs);
  /// Declares outputs that are not differentiable (indices, masks): they do not require grad,
  /// and backward receives zeros (or undefined tensors, see set_materialize_grads) for them.
  void mark_non_differentiable(const std::vector<Tensor>& outputs);
  /// Whether backward gets zeros for the outputs no gradient reached (true, the default) or
  /// undefined tensors.
  void set_materialize_grads(bool value);
  /// Whether tensor input i (counting only the Tensor arguments of forward) needs a gradient.
  bool needs_input_grad(std::size_t i) const;

 private:
  friend struct detail::CustomFunctionCore;
  std::unique_ptr<detail::CustomState> state_;
};

namespace detail {

/// The non-template half of Function<T> (custom_function.cpp).
struct CustomFunctionCore {
  /// Before forward: the node's edges (so needs_input_grad works in forward too).
  static void begin(Node& node, const std::shared_ptr<Node>& self, AutogradContext& ctx,
                    const std::vector<Tensor>& inputs, const std::string* name);
  /// After forward: attaches the outputs to the node, keeps what was saved.
  static void finish(Node& node, AutogradContext& ctx, const std::vector<Tensor>& inputs,
                     std::vector<Tensor>& outputs);
  /// Before backward: version checks and freed-graph check; materializes missing gradients.
  static std::vector<Tensor> before_backward(const Node& node, AutogradContext& ctx,
                                             std::vector<Tensor> grads);
  /// After backward: checks the count and keeps the gradients of the tensor arguments.
  static std::vector<Tensor> after_backward(const Node& node, AutogradContext& ctx,
                                            std::vector<Tensor> grads);
  static void release(AutogradContext& ctx);
  static CustomState& state(AutogradContext& ctx);
  /// The node's name: T::node_name when T defines it, else "MyExpBackward" (T's name plus
  /// "Backward", as PyTorch names a Python custom Function's node).
  static const std::string& name(const AutogradContext& ctx);
  static std::string default_name(const char* mangled);
};

/// The node of one call of T::apply.
template <class T>
class CustomFunctionNode final : public Node {
 public:
  std::string name() const override { return CustomFunctionCore::name(ctx); }
  std::vector<Tensor> apply(const Tensor& grad) override { return apply_outputs({grad}); }
  std::vector<Tensor> apply_outputs(std::vector<Tensor> grads) override {
    grads = CustomFunctionCore::before_backward(*this, ctx, std::move(grads));
    std::vector<Tensor> r = T::backward(&ctx, std::move(grads));
    return CustomFunctionCore::after_backward(*this, ctx, std::move(r));
  }
  void release() override { CustomFunctionCore::release(ctx); }

  AutogradContext ctx;
};

inline void collect_input(std::vector<Tensor>& inputs, std::vector<bool>& is_tensor,
                          const Tensor& t) {
  inputs.push_back(t);
  is_tensor.push_back(true);
}
template <typename A>
void collect_input(std::vector<Tensor>&, std::vector<bool>& is_tensor, const A&) {
  is_tensor.push_back(false);
}
void set_tensor_args(AutogradContext& ctx, std::vector<bool> is_tensor);

inline std::vector<Tensor> as_list(const Tensor& t) { return {t}; }
inline std::vector<Tensor> as_list(std::vector<Tensor> ts) { return ts; }

}  // namespace detail

/// Derive your op from Function<YourOp> and give it static forward and backward functions (see
/// the top of this file); call it with YourOp::apply(args...). Optionally
/// `static constexpr const char* node_name = "MyOpBackward0";` names its node.
template <class T>
struct Function {
  template <typename... Args>
  static auto apply(Args&&... args) {
    using Out = decltype(T::forward(std::declval<AutogradContext*>(), std::forward<Args>(args)...));
    static_assert(std::is_same_v<Out, Tensor> || std::is_same_v<Out, std::vector<Tensor>>,
                  "forward must return a Tensor or a std::vector<Tensor>");
    auto node = std::make_shared<detail::CustomFunctionNode<T>>();
    std::vector<Tensor> inputs;
    std::vector<bool> is_tensor;
    (detail::collect_input(inputs, is_tensor, args), ...);
    detail::set_tensor_args(node->ctx, std::move(is_tensor));
    static const std::string name = [] {
      if constexpr (requires { T::node_name; })
        return std::string(T::node_name);
      else
        return detail::CustomFunctionCore::default_name(typeid(T).name());
    }();
    detail::CustomFunctionCore::begin(*node, node, node->ctx, inputs, &name);
    Out out;
    {
      GradModeGuard no_grad(false);
      out = T::forward(&node->ctx, std::forward<Args>(args)...);
    }
    std::vector<Tensor> outputs = detail::as_list(std::move(out));
    detail::CustomFunctionCore::finish(*node, node->ctx, inputs, outputs);
    if constexpr (std::is_same_v<Out, Tensor>) {
      return outputs[0];
    } else {
      return outputs;
    }
  }
};

}  // namespace minigrad::autograd
