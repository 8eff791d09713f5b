// Graph nodes: FunctionNode (an op's backward), AccumulateGrad (a leaf's sink), and record().
#include <dlfcn.h>
#include <execinfo.h>
#ifdef MINIGRAD_HAVE_LIBBACKTRACE
#include <backtrace.h>  // GCC's libbacktrace (Note [Anomaly mode]), a copy in the build tree
#include <cxxabi.h>
#endif

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "autograd/function.h"
#include "live_count.h"
#include "minigrad/ops/elementwise.h"

namespace minigrad {

namespace {
// Per thread, as PyTorch's sequence numbers: the engine only compares nodes of one graph, and a
// graph's ops run in one thread's order (a shared atomic counter showed in the per-op profile).
thread_local std::uint64_t next_sequence_nr = 0;
// The innermost module call on this thread (Note [Module scopes], nn/module.h): null unless
// nn::RecordModuleScopes is alive, so a node then pays one thread-local load.
thread_local std::shared_ptr<const autograd::ModuleScope> current_module_scope;
}  // namespace

namespace autograd {
std::int64_t live_node_count() { return detail::live_total(detail::LiveKind::kNode); }
}  // namespace autograd

Node::Node() : sequence_nr_(next_sequence_nr++) {
  detail::live_add(detail::LiveKind::kNode, 1);
  if (current_module_scope) module_scope_ = current_module_scope;
}

namespace autograd {
ModuleScopeGuard::ModuleScopeGuard(const void* module, std::string name, std::string type_name) {
  const std::shared_ptr<const ModuleScope>& top = current_module_scope;
  if (top && top->module == module) return;
  const int depth = top ? top->depth + 1 : 1;
  current_module_scope = std::make_shared<const ModuleScope>(
      ModuleScope{std::move(name), std::move(type_name), module, top, depth});
  pushed_ = true;
}

ModuleScopeGuard::~ModuleScopeGuard() {
  if (!pushed_) return;
  std::shared_ptr<const ModuleScope> parent = current_module_scope->parent;
  current_module_scope = std::move(parent);
}
}  // namespace autograd

std::size_t Node::register_prehook(TensorHook hook, std::uint32_t output_nr) {
  MG_CHECK(output_nr < num_outputs_, "register_prehook", "output ", output_nr, " of ", name(),
           ", which has ", num_outputs_, " outputs");
  std::vector<PreHook>& hooks = extras().pre_hooks;
  hooks.push_back(PreHook{output_nr, std::move(hook), detail::hook_trace()});
  return hooks.size() - 1;
}

// Note [Node extras]
// A node of a long graph is mostly an edge list and its output's shape. What only some nodes
// use (the second and later outputs of a multi-output op, hooks, retain_grad's tensors, anomaly
// mode's creation stack) sits in Node::Extras, allocated the first time one of them is set:
// 96 bytes of empty vectors per node less (bench/graph_memory: a chain of y * 0.5 holds one node
// per op), as PyTorch keeps its hooks and anomaly metadata outside the node's own fields.
Node::Extras& Node::extras() {
  if (!extras_) extras_ = std::make_unique<Extras>();
  return *extras_;
}

const Shape& Node::output_shape(std::size_t i) const {
  return i == 0 ? output_shape_ : extras_->more_outputs[i - 1].first;
}

Dtype Node::output_dtype(std::size_t i) const {
  return i == 0 ? output_dtype_ : extras_->more_outputs[i - 1].second;
}

const std::vector<void*>& Node::creation_trace() const {
  static const std::vector<void*> none;
  return extras_ ? extras_->creation_trace : none;
}

void Node::set_outputs_meta(const std::vector<std::pair<Shape, Dtype>>& outputs) {
  MG_CHECK(!outputs.empty(), "Node", "a node needs at least one output");
  num_outputs_ = static_cast<std::uint32_t>(outputs.size());
  output_shape_ = outputs[0].first;
  output_dtype_ = outputs[0].second;
  if (outputs.size() > 1 || extras_)
    extras().more_outputs.assign(outputs.begin() + 1, outputs.end());
}

// Note [Iterative graph destruction]
// Dropping the last handle to a long graph (a 100,000-op chain) would destroy node after node
// recursively and overflow the stack. Instead a dying node hands its edges to a thread-local
// list, and only the outermost destructor on the stack drains that list, one node at a time.
namespace {
thread_local std::vector<std::shared_ptr<Node>> pending_destruction;
thread_local bool draining = false;
}  // namespace

Node::~Node() {
  detail::live_add(detail::LiveKind::kNode, -1);
  for (auto& e : next_edges_)
    if (e.fn) pending_destruction.push_back(std::move(e.fn));
  if (draining) return;
  draining = true;
  while (!pending_destruction.empty()) {
    std::shared_ptr<Node> n = std::move(pending_destruction.back());
    pending_destruction.pop_back();
    n.reset();
  }
  draining = false;
}

// ---------------------------------------------------------------- anomaly mode

namespace {
std::atomic<bool> anomaly_enabled{false};
}  // namespace

namespace autograd {
void set_detect_anomaly(bool enabled) { anomaly_enabled.store(enabled, std::memory_order_relaxed); }
bool is_anomaly_enabled() { return anomaly_enabled.load(std::memory_order_relaxed); }
DetectAnomalyGuard::DetectAnomalyGuard(bool enabled) : previous_(is_anomaly_enabled()) {
  set_detect_anomaly(enabled);
}
DetectAnomalyGuard::~DetectAnomalyGuard() { set_detect_anomaly(previous_); }
}  // namespace autograd

namespace detail {
namespace {

/// Whether t holds a nan or an inf (floating tensors only).
void scan(const Tensor& t, bool& nan, bool& inf) {
  if (!t.defined() || !t.is_floating_point() || t.numel() == 0) return;
  for (double v : t.detach().to_vector<double>()) {
    nan |= std::isnan(v);
    inf |= std::isinf(v);
  }
}

/// "ExpBackward0" -> "exp", "LogSoftmaxBackward0" -> "log_softmax".
std::string op_of(const std::string& node_name) {
  std::string base = node_name.substr(0, node_name.find("Backward"));
  std::string out;
  for (char c : base) {
    if (std::isupper(static_cast<unsigned char>(c))) {
      if (!out.empty()) out += '_';
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      out += c;
    }
  }
  return out.empty() ? node_name : out;
}

}  // namespace

std::vector<void*> capture_trace() {
  std::vector<void*> frames(48);
  int n = ::backtrace(frames.data(), static_cast<int>(frames.size()));
  frames.resize(static_cast<std::size_t>(std::max(n, 0)));
  return frames;
}

namespace {

bool is_library_name(const std::string& function) {
  return function.rfind("minigrad::", 0) == 0 || function.rfind("std::", 0) == 0 ||
         function.rfind("__", 0) == 0 || function == "??";
}

bool is_library_file(const std::string& file) {
  // compiler-rt's sanitizer runtime, linked into the executable by clang: /sanitizer_common/.
  for (const char* dir :
       {"/include/minigrad/", "/core/src/", "/nn/src/", "/optim/src/", "/distributed/src/",
        "/viz/src/", "/usr/include/", "/sanitizer_common/", "/asan/", "/tsan/", "/ubsan/"})
    if (file.find(dir) != std::string::npos) return true;
  return false;
}

/// The C and C++ runtimes and the sanitizers' (whose interceptor of backtrace() is the first
/// frame under ASan): their frames (start_thread, execute_native_thread_routine,
/// __libc_start_main) are never the user's.
bool is_runtime_object(const std::string& object) {
  std::string name = object.substr(object.rfind('/') + 1);
  for (const char* lib : {"libc.so", "libstdc++.so", "libgcc_s.so", "libpthread.so", "ld-linux",
                          "libasan.so", "libubsan.so", "libtsan.so", "liblsan.so"})
    if (name.rfind(lib, 0) == 0) return true;
  return false;
}

#ifdef MINIGRAD_HAVE_LIBBACKTRACE
/// C++ names demangled, as addr2line -C printed them. Only mangled names ("_Z..."): DWARF also
/// gives plain names ("f", "main"), which __cxa_demangle would read as types ("f" is float).
std::string demangled(const char* name) {
  if (!name) return "";
  if (name[0] != '_' || name[1] != 'Z') return name;
  int status = 0;
  char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string r = status == 0 && d ? d : name;
  std::free(d);
  return r;
}

/// One libbacktrace state for the process (it caches the debug information it reads); every
/// query holds the mutex, so the state is used as single-threaded. nullptr when it cannot be made.
std::mutex backtrace_mutex;
backtrace_state* symbolizer() {
  static backtrace_state* const state = backtrace_create_state(
      nullptr, /*threaded=*/0, [](void*, const char*, int) {}, nullptr);
  return state;
}

using Frames = std::vector<std::pair<std::string, std::string>>;
#endif

/// (function, file:line) pairs for the code at pc, the innermost inlined function first, so a
/// lambda inlined into std::thread's runner is still found; read in-process by GCC's libbacktrace
/// (no shell, no addr2line). Without debug information: the symbol table's name, no file. Empty
/// when nothing is known (or minigrad was built without libbacktrace).
std::vector<std::pair<std::string, std::string>> symbolize(std::uintptr_t pc) {
  std::vector<std::pair<std::string, std::string>> frames;
#ifdef MINIGRAD_HAVE_LIBBACKTRACE
  std::lock_guard<std::mutex> lock(backtrace_mutex);
  backtrace_state* state = symbolizer();
  if (!state) return frames;
  auto on_line = [](void* data, std::uintptr_t, const char* file, int line,
                    const char* function) -> int {
    if (!file && !function) return 0;
    static_cast<Frames*>(data)->emplace_back(
        demangled(function), file ? std::string(file) + ":" + std::to_string(line) : "");
    return 0;
  };
  auto on_error = [](void*, const char*, int) {};
  backtrace_pcinfo(state, pc, on_line, on_error, &frames);
  bool has_file = false;
  for (const auto& f : frames) has_file |= !f.second.empty();
  if (!has_file) {
    // No line table for pc: the symbol table's name (a static function included, which dladdr
    // cannot see).
    auto on_symbol = [](void* data, std::uintptr_t, const char* symbol, std::uintptr_t,
                        std::uintptr_t) {
      if (symbol) static_cast<Frames*>(data)->emplace_back(demangled(symbol), "");
    };
    backtrace_syminfo(state, pc, on_symbol, on_error, &frames);
  }
#else
  (void)pc;
#endif
  return frames;
}

}  // namespace

/// "train.cpp:42, in main": the first frame outside minigrad (Note [Anomaly mode]).
std::string creation_site(const std::vector<void*>& trace) {
  if (trace.empty()) return "creation site not recorded: anomaly mode was off when the op ran";
  std::string fallback;
  for (void* address : trace) {
    Dl_info info{};
    if (!dladdr(address, &info) || !info.dli_fname) continue;
    std::string object = info.dli_fname[0] ? info.dli_fname : "/proc/self/exe";
    if (is_runtime_object(object)) continue;
    // A return address points after the call: step back into the call instruction.
    auto frames = symbolize(reinterpret_cast<std::uintptr_t>(address) - 1);
    if (frames.empty() && info.dli_sname) frames.emplace_back(info.dli_sname, "");
    for (auto& [function, file] : frames) {
      // Without -g there is no file (libbacktrace gives the symbol table's name only).
      bool has_line = !file.empty() && file.find('/') != std::string::npos;
      if (has_line && !is_library_file(file)) {
        // The user's line. Code inlined into a library function (a lambda run by std::thread)
        // is named after that function: then the line alone.
        std::size_t slash = file.rfind('/');
        std::string site = file.substr(slash == std::string::npos ? 0 : slash + 1);
        return is_library_name(function) || function.empty() ? site : site + ", in " + function;
      }
      if (has_line || function.empty() || is_library_name(function)) continue;
      if (fallback.empty()) fallback = "in " + function + "; build with -g for the file and line";
    }
  }
  return fallback.empty() ? "creation site unknown" : fallback;
}

namespace {

const char* what_of(bool nan) { return nan ? "nan" : "inf"; }

}  // namespace

void check_backward_anomaly(const Node& n, const Tensor& grad, const std::vector<Tensor>& grads) {
  bool in_nan = false, in_inf = false;
  scan(grad, in_nan, in_inf);
  if (in_nan || in_inf) return;  // reported where it first appeared
  for (std::size_t i = 0; i < grads.size(); ++i) {
    bool nan = false, inf = false;
    scan(grads[i], nan, inf);
    MG_CHECK(!nan && !inf, op_of(n.name()), "produced ", what_of(nan), " in backward: ", n.name(),
             "'s gradient for input ", i, " (created at ", creation_site(n.creation_trace()), ")");
  }
}

std::vector<void*> hook_trace() {
  return autograd::is_anomaly_enabled() ? capture_trace() : std::vector<void*>{};
}

void check_hook_anomaly(const Node& n, const PreHook& hook, const Tensor& grad,
                        const Tensor& result) {
  bool in_nan = false, in_inf = false, nan = false, inf = false;
  scan(grad, in_nan, in_inf);
  scan(result, nan, inf);
  bool bad_nan = nan && !in_nan, bad_inf = inf && !in_inf;
  if (!bad_nan && !bad_inf) return;
  std::string of = dynamic_cast<const AccumulateGrad*>(&n)
                       ? std::string("a leaf tensor")
                       : n.name() + "'s output " + std::to_string(hook.output_nr);
  MG_ERROR("hook", "a hook on the gradient of ", of, " returned ", what_of(bad_nan),
           " in backward (",
           hook.trace.empty() ? std::string("registered while anomaly mode was off: its site was "
                                            "not recorded")
                              : "registered at " + creation_site(hook.trace),
           ")");
}

namespace {
/// Anomaly mode's forward check of a freshly recorded op.
void check_forward_anomaly(const char* name, const Tensor& out, bool in_nan, bool in_inf) {
  NodeAccess::set_creation_trace(*out.impl()->grad_fn, capture_trace());
  bool nan = false, inf = false;
  scan(out, nan, inf);
  // masked_fill's fill value is deliberate (-inf masks attention scores).
  if (std::string(name) == "MaskedFillBackward0") inf = false;
  bool bad_nan = nan && !in_nan, bad_inf = inf && !in_inf;
  MG_CHECK(!bad_nan && !bad_inf, op_of(name), "produced ", what_of(bad_nan),
           " in forward (created at ", creation_site(out.impl()->grad_fn->creation_trace()), ")");
}
}  // namespace

}  // namespace detail

namespace detail {

SavedTensor SavedTensor::of(const Tensor& t) {
  SavedTensor s;
  if (!t.defined()) return s;
  MG_CHECK(!t.impl()->is_inference, "save_for_backward",
           "inference tensors cannot be saved for backward; clone() the tensor outside "
           "InferenceMode to get a normal tensor and use that in autograd");
  const TensorImpl& impl = *t.impl();
  if (impl.requires_grad && !impl.grad_fn && !impl.view_base) {
    // A leaf that requires grad is kept itself: its AccumulateGrad is found through it, and no
    // in-place op may give it a history in grad mode (check_writable).
    s.impl_ = t.impl_ptr();
    s.leaf_storage_ = impl.storage;
    s.is_leaf_ = true;
  } else {
    // Note [Saved inputs are snapshots]
    // Anything else can gain a new grad_fn after it was saved: an in-place op (or a custom
    // Function's mark_dirty) on it, or on a view of it, gives it one that may lead back to this
    // node (b = a * x saves a; a *= b: a -> MulBackward0 -> b's MulBackward0 -> a), and a view
    // keeps its base, whose history an in-place op on the view rewrites. Holding the tensor
    // itself would then be a reference cycle that nothing frees (fuzz finding F8; PyTorch 1.13
    // leaks there). What backward reads is the tensor as it was when saved: its data, dtype,
    // geometry and grad_fn. So keep a new handle with exactly that (no base, gradient or hooks).
    // A write after the save bumps the shared version counter, so backward still refuses it.
    // make_view: the same storage and geometry, dtype and inference flag, nothing else.
    std::shared_ptr<TensorImpl> copy =
        make_view(t, impl.shape, impl.strides, impl.offset).impl_ptr();
    copy->requires_grad = impl.requires_grad;
    copy->grad_fn = impl.grad_fn;
    copy->output_nr = impl.output_nr;
    // A view that is a leaf requiring grad (a transposed input): its gradient still goes to its
    // own AccumulateGrad, which the node's edge keeps alive.
    if (impl.requires_grad && !impl.grad_fn && impl.meta)
      copy->autograd_meta().grad_accumulator = impl.meta->grad_accumulator;
    copy->view_creation = impl.view_creation;
    s.impl_ = std::move(copy);
  }
  s.version_ = impl.storage->version;
  return s;
}

SavedTensor SavedTensor::of_output(const Tensor& out) {
  SavedTensor s;
  s.impl_ = out.detach().impl_ptr();
  s.version_ = out.impl()->storage->version;
  s.is_output_ = true;
  return s;
}

void SavedTensor::check_version(const char* node_name) const {
  if (!impl_) return;
  // A saved leaf given new data (set_data, Module::to) would silently differentiate the new
  // values: PyTorch's `p.data = x` does; minigrad refuses.
  MG_CHECK(!is_leaf_ || leaf_storage_.lock() == impl_->storage, node_name,
           "a leaf saved for backward (shape ", impl_->shape, ", ", dtype_name(impl_->dtype),
           ") was given new data with set_data (or Module::to) after it was saved; run backward "
           "first, or the forward again after set_data");
  std::uint32_t now = impl_->storage->version;
  MG_CHECK(now == version_, node_name, is_output_ ? "its output" : "a tensor",
           " saved for backward (shape ", impl_->shape, ", ", dtype_name(impl_->dtype),
           ") was modified in place: it is at version ", now, ", expected version ", version_,
           ". Use clone() before the in-place op, or do it after backward.");
}

Tensor SavedTensor::unpack(const std::shared_ptr<Node>& node) const {
  if (!impl_) return Tensor();
  if (!is_output_) return Tensor(impl_);
  // Re-attach the saved data to its node, so that create_graph differentiates through it.
  MG_CHECK(node != nullptr, "backward", "internal error: the node is being destroyed");
  std::shared_ptr<TensorImpl> impl =
      make_view(Tensor(impl_), impl_->shape, impl_->strides, impl_->offset).impl_ptr();
  impl->requires_grad = true;
  impl->grad_fn = node;
  impl->output_nr = output_nr_;
  return Tensor(std::move(impl));
}

std::vector<Tensor> FunctionNode::apply(const Tensor& grad) {
  MG_CHECK(!released_, "backward",
           "trying to backward through the graph a second time (or to use saved tensors after "
           "they were freed) at ",
           name_,
           ": the saved tensors were freed by the first backward; call backward(gradient, "
           "/*retain_graph=*/true) the first time if you need to backward twice");
  for (std::size_t i = 0; i < saved_count_; ++i) saved_[i].check_version(name_);
  return call_backward(grad);
}

Tensor FunctionNode::saved(std::size_t i) const {
  MG_CHECK(i < saved_count_, name_, "internal error: saved tensor ", i, " of ", saved_count_);
  if (!saved_[i].is_output()) return saved_[i].unpack(nullptr);
  return saved_[i].unpack(output_history_ ? (*output_history_)()
                                          : std::shared_ptr<Node>(self_.lock()));
}

void FunctionNode::save(const Save* saves, std::size_t n, const Tensor& out,
                        const std::shared_ptr<FunctionNode>& self) {
  for (std::size_t i = 0; i < n; ++i) {
    if (saves[i].output) {
      saved_[i] = SavedTensor::of_output(out);
      self_ = self;
    } else if (saves[i].tensor != nullptr) {
      saved_[i] = SavedTensor::of(*saves[i].tensor);
    }
  }
}

void FunctionNode::clone_saved_sharing(const Storage* storage) {
  for (std::size_t i = 0; i < saved_count_; ++i)
    if (saved_[i].shares(storage)) saved_[i] = SavedTensor::of(saved_[i].unpack(nullptr).clone());
}

void FunctionNode::rebind_saved_output(const Tensor& self) {
  for (std::size_t i = 0; i < saved_count_; ++i)
    if (saved_[i].is_output()) saved_[i] = SavedTensor::of_output(self);
}

void FunctionNode::release() {
  bool any = false;
  for (std::size_t i = 0; i < saved_count_; ++i) {
    any |= saved_[i].defined();
    saved_[i].reset();
  }
  if (!any) return;
  destroy_backward();
  released_ = true;
}

AccumulateGrad::AccumulateGrad(std::shared_ptr<TensorImpl> leaf) : leaf_(std::move(leaf)) {
  NodeAccess::mark_accumulate_grad(*this);
}

namespace {
/// Two backward passes on two threads may meet at one leaf (a shared parameter): its gradient is
/// updated under a lock, as PyTorch's AccumulateGrad does. Striped by the leaf's address, so
/// leaves cost no mutex each and different leaves rarely wait for each other.
std::mutex& grad_lock(const TensorImpl* leaf) {
  static std::mutex stripes[64];
  return stripes[(reinterpret_cast<std::uintptr_t>(leaf) >> 6) % 64];
}
}  // namespace

std::vector<Tensor> AccumulateGrad::apply(const Tensor& grad) {
  accumulate(grad);
  // Outside the lock: a hook may read the gradient or start communication. Indexed, as a hook
  // may register another hook (the list can grow while it runs).
  // accumulate() made the leaf's AutogradMeta (it set the gradient).
  for (std::size_t i = 0; i < leaf_->meta->post_accumulate_hooks.size(); ++i) {
    PostAccumulateGradHook hook = leaf_->meta->post_accumulate_hooks[i];
    hook(Tensor(leaf_));
  }
  return {};
}

void AccumulateGrad::accumulate(const Tensor& grad) {
  std::lock_guard<std::mutex> lock(grad_lock(leaf_.get()));
  Tensor& g = leaf_->autograd_meta().grad;
  if (!g.defined()) {
    // Take the incoming gradient when nothing else can see it (the engine's buffer was its only
    // owner); otherwise copy it: it may alias another leaf's gradient or the user's tensor. A
    // sole view (the transposed GEMM result of Note [Gradients in the operand's layout]) is taken
    // as a plain tensor over the same storage: copying it was most of GPT-2 small's
    // AccumulateGrad time. Under create_graph the gradient is a differentiable clone, as PyTorch:
    // never the caller's tensor or another leaf's gradient.
    if (is_grad_enabled()) {
      g = grad.clone();
    } else if (sole_owner(grad)) {
      g = grad;
    } else if (sole_view(grad)) {
      g = make_tensor_on(grad.impl()->storage, grad.shape(), grad.strides(), grad.dtype());
    } else {
      g = grad.detach().clone();
    }
  } else if (is_grad_enabled()) {
    g = g + grad;  // create_graph: a new, differentiable sum
  } else if (g.requires_grad()) {
    // .grad has history from an earlier create_graph backward (it holds the graph that saved this
    // leaf: the cycle PyTorch warns about). Unlike PyTorch, the sum is a new detached tensor,
    // which lets that graph go (the fuzzer's LeakSanitizer run found the leak).
    g = (g + grad).detach();
  } else {
    // In place, as PyTorch's `variable_grad += new_grad` outside grad mode: whoever holds .grad
    // (gradient accumulation over micro-batches) sees the sum, and no buffer is made per call.
    g.add_(grad);
  }
}

Edge gradient_edge(const Tensor& t) {
  TensorImpl* impl = t.impl();
  if (impl == nullptr) return Edge{nullptr};
  refresh_view(impl);
  if (!impl->requires_grad) return Edge{nullptr};
  if (impl->grad_fn) return Edge{impl->grad_fn, impl->output_nr};
  // A view made under NoGradGuard or InferenceMode of a tensor that requires grad requires grad
  // but has no accumulator, as in PyTorch: gradients through it reach neither it nor its base.
  if (impl->view_creation != TensorImpl::ViewCreation::kNormal) return Edge{nullptr};
  // Two threads may use one leaf at once (a shared parameter): its accumulator is made once,
  // under the leaf's lock (as PyTorch's grad_accumulator()).
  std::lock_guard<std::mutex> lock(grad_lock(impl));
  AutogradMeta& meta = impl->autograd_meta();
  std::shared_ptr<Node> acc = meta.grad_accumulator.lock();
  if (!acc) {
    acc = std::allocate_shared<AccumulateGrad>(CachingAllocator<AccumulateGrad>{}, t.impl_ptr());
    for (const PreHook& h : meta.leaf_hooks) NodeAccess::pre_hooks(*acc).push_back(h);
    meta.grad_accumulator = acc;
  }
  return Edge{std::move(acc)};
}

namespace {
void attach(Tensor& out, std::shared_ptr<FunctionNode> node) {
  NodeAccess::set_output_meta(*node, out.shape(), out.dtype());
  TensorImpl* impl = out.impl();
  impl->requires_grad = true;
  impl->grad_fn = std::move(node);
}
}  // namespace

void finish_record(const char* name, Tensor& out, std::shared_ptr<FunctionNode> node,
                   std::initializer_list<const Tensor*> inputs) {
  attach(out, std::move(node));
  if (autograd::is_anomaly_enabled()) {
    bool nan = false, inf = false;
    for (const Tensor* t : inputs) scan(*t, nan, inf);
    check_forward_anomaly(name, out, nan, inf);
  }
}

void finish_record(const char* name, Tensor& out, std::shared_ptr<FunctionNode> node,
                   const std::vector<Tensor>& inputs) {
  attach(out, std::move(node));
  if (autograd::is_anomaly_enabled()) {
    bool nan = false, inf = false;
    for (const auto& t : inputs) scan(t, nan, inf);
    check_forward_anomaly(name, out, nan, inf);
  }
}

}  // namespace detail
}  // namespace minigrad
