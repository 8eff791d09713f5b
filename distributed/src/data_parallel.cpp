// DistributedDataParallel's reducer: Note [DDP buckets and overlap] in
// minigrad/nn/parallel/distributed.h.
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "minigrad/autograd.h"
#include "minigrad/distributed.h"
#include "minigrad/error.h"
#include "minigrad/nn/parallel/distributed.h"
#include "minigrad/ops.h"

namespace minigrad::nn::parallel::detail {
namespace dist = minigrad::distributed;

namespace {
constexpr const char* kOp = "DistributedDataParallel";

struct Param {
  std::string name;
  Tensor tensor;
  std::shared_ptr<Node> accumulator;  // its AccumulateGrad node (find_unused_parameters only)
  std::size_t bucket = 0;
  std::int64_t offset = 0;  // in the bucket's flat buffer
  bool ready = false;
};

struct Bucket {
  Tensor flat;  // 1-D, the bucket's dtype
  std::vector<std::size_t> params;
  std::size_t pending = 0;
  dist::Work work;
};
}  // namespace

struct ReducerState {
  std::vector<Param> params;
  std::vector<Bucket> buckets;
  Dtype dtype = kFloat32;     // the first bucket's
  std::int64_t elements = 0;  // in all buckets
  std::vector<Tensor> buffers;
  DistributedDataParallelOptions options;
  bool sync = true;      // false under no_sync()
  bool armed = false;    // a forward prepared the coming backward
  bool started = false;  // a gradient of the armed backward has arrived
  std::size_t next_launch = 0;

  void reset() {
    for (Param& p : params) p.ready = false;
    for (Bucket& b : buckets) b.pending = b.params.size();
    next_launch = 0;
    started = false;
  }

  /// Copies the parameter's gradient (zeros if it has none) into its slot of the bucket, and starts
  /// every bucket that is complete and whose predecessors have started.
  void mark_ready(std::size_t i, bool unused) {
    Param& p = params[i];
    MG_CHECK(!p.ready, kOp, "parameter '", p.name,
             "' received its gradient twice in one iteration (a second backward through the same "
             "forward?): call forward() again before each backward");
    p.ready = true;
    started = true;
    Bucket& b = buckets[p.bucket];
    {
      NoGradGuard no_grad;
      Tensor slot = b.flat.narrow(0, p.offset, p.tensor.numel());
      const Tensor grad = p.tensor.grad();
      if (unused || !grad.defined()) {
        slot.zero_();
      } else {
        slot.copy_(grad.reshape({-1}));
      }
    }
    --b.pending;
    while (next_launch < buckets.size() && buckets[next_launch].pending == 0) {
      // Once per backward, before the first bucket: every rank is in the same backward (a rank
      // that ran out of batches is elsewhere, and all of them throw here rather than mix it up).
      if (next_launch == 0) dist::detail::check_ddp_gradients(dtype, elements, buckets.size());
      Bucket& ready = buckets[next_launch++];
      ready.work = dist::detail::all_reduce_flat_async(ready.flat, dist::ReduceOp::kAvg);
    }
    if (next_launch == buckets.size()) {
      finish();
    } else {
      // Open MPI advances a transfer only inside MPI calls: give the started ones a push.
      for (std::size_t k = 0; k < next_launch; ++k) buckets[k].work.is_completed();
    }
  }

  /// Waits for every bucket and writes the averages back into the gradients.
  void finish() {
    NoGradGuard no_grad;
    for (Bucket& b : buckets) {
      b.work.wait();
      for (std::size_t i : b.params) {
        Param& p = params[i];
        Tensor avg = b.flat.narrow(0, p.offset, p.tensor.numel()).view(p.tensor.shape());
        Tensor grad = p.tensor.grad();
        if (grad.defined()) {
          grad.copy_(avg);
        } else {
          p.tensor.set_grad(avg.clone());
        }
      }
    }
    armed = false;
    reset();
  }
};

Reducer::Reducer(Module& module, const DistributedDataParallelOptions& options)
    : state_(std::make_shared<ReducerState>()) {
  MG_CHECK(dist::is_initialized(), kOp,
           "minigrad::distributed is not initialised: call minigrad::distributed::init() first");
  MG_CHECK(options.bucket_cap_mb > 0, kOp, "bucket_cap_mb must be positive, got ",
           options.bucket_cap_mb);
  ReducerState& s = *state_;
  s.options = options;
  // Every rank starts from rank 0's weights. Ranks with models of different sizes fail here, on
  // every rank, rather than in the first backward; the broadcasts check each tensor's dtype and
  // size.
  {
    std::int64_t params = 0, param_elements = 0, buffers = 0, buffer_elements = 0;
    for (auto& [name, t] : module.named_parameters()) ++params, param_elements += t.numel();
    for (auto& [name, t] : module.named_buffers()) ++buffers, buffer_elements += t.numel();
    dist::detail::check_ddp_model(params, param_elements, buffers, buffer_elements);
    NoGradGuard no_grad;
    for (auto& [name, t] : module.named_parameters()) dist::broadcast(t, 0);
    for (auto& [name, t] : module.named_buffers()) {
      dist::broadcast(t, 0);
      s.buffers.push_back(t);
    }
  }
  for (auto& [name, t] : module.named_parameters())
    if (t.requires_grad()) s.params.push_back({name, t, nullptr, 0, 0, false});

  // Buckets in reverse parameter order, one open bucket per dtype; a bucket closes once it
  // holds bucket_cap_mb.
  const auto cap = static_cast<std::int64_t>(options.bucket_cap_mb * 1024 * 1024);
  std::map<Dtype, std::size_t> open;
  std::map<std::size_t, std::int64_t> bytes;
  for (std::size_t k = s.params.size(); k-- > 0;) {
    Param& p = s.params[k];
    const Dtype dt = p.tensor.dtype();
    MG_CHECK(is_floating_point(dt), kOp, "parameter '", p.name, "' has dtype ", dtype_name(dt),
             ": only floating-point parameters can be averaged");
    auto it = open.find(dt);
    if (it == open.end() || bytes[it->second] >= cap) {
      s.buckets.emplace_back();
      it = open.insert_or_assign(dt, s.buckets.size() - 1).first;
    }
    Bucket& b = s.buckets[it->second];
    p.bucket = it->second;
    p.offset = 0;
    for (std::size_t j : b.params) p.offset += s.params[j].tensor.numel();
    b.params.push_back(k);
    bytes[it->second] += p.tensor.numel() * (dt == kFloat64 ? 8 : 4);
  }
  for (Bucket& b : s.buckets) {
    std::int64_t n = 0;
    for (std::size_t j : b.params) n += s.params[j].tensor.numel();
    b.flat = zeros({n}, s.params[b.params.front()].tensor.dtype());
    s.elements += n;
  }
  if (!s.buckets.empty()) s.dtype = s.buckets.front().flat.dtype();
  s.reset();

  // The hooks hold the state weakly: a parameter outlives its DDP wrapper (and its hooks cannot
  // be removed), so after the wrapper is gone they do nothing.
  std::weak_ptr<ReducerState> weak = state_;
  for (std::size_t i = 0; i < s.params.size(); ++i) {
    Param& p = s.params[i];
    p.tensor.register_post_accumulate_grad_hook([weak, i](const Tensor&) {
      std::shared_ptr<ReducerState> st = weak.lock();
      if (st && st->armed) st->mark_ready(i, false);
    });
    if (options.find_unused_parameters) {
      // A leaf's AccumulateGrad node, as PyTorch's DDP finds it: the one edge of expand_as's
      // backward. Holding it keeps the leaf on this node, so forward graphs lead to it.
      Tensor e = p.tensor.expand_as(p.tensor);
      p.accumulator = e.grad_fn()->next_edges().at(0).fn;
    }
  }
}

Reducer::~Reducer() = default;

void Reducer::prepare_forward() {
  ReducerState& s = *state_;
  if (s.armed && s.started) {
    std::string names;
    for (const Param& p : s.params)
      if (!p.ready) names += (names.empty() ? "'" : ", '") + p.name + "'";
    MG_ERROR(kOp, "the previous backward gave no gradient to the parameters ", names, " (rank ",
             dist::rank(),
             "): DDP waits for every parameter's gradient before it averages them. Pass "
             "find_unused_parameters = true if the forward does not use every parameter");
  }
  s.reset();
  s.armed = s.sync && is_grad_enabled();
  if (s.options.broadcast_buffers && !s.buffers.empty()) {
    NoGradGuard no_grad;
    for (Tensor& b : s.buffers) dist::broadcast(b, 0);
  }
}

void Reducer::prepare_for_backward(const std::vector<Tensor>& outputs) {
  ReducerState& s = *state_;
  if (!s.armed || !s.options.find_unused_parameters || outputs.empty()) return;
  // Every node the outputs' graph reaches, iteratively (graphs can be long).
  std::unordered_set<const Node*> seen;
  std::vector<const Node*> stack;
  for (const Tensor& out : outputs) {
    if (out.grad_fn()) stack.push_back(out.grad_fn().get());
  }
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (!seen.insert(n).second) continue;
    for (const Edge& e : n->next_edges())
      if (e.fn) stack.push_back(e.fn.get());
  }
  for (std::size_t i = 0; i < s.params.size(); ++i)
    if (!seen.count(s.params[i].accumulator.get())) s.mark_ready(i, true);
}

std::vector<std::vector<std::string>> Reducer::bucket_parameter_names() const {
  std::vector<std::vector<std::string>> out;
  for (const Bucket& b : state_->buckets) {
    out.emplace_back();
    for (std::size_t i : b.params) out.back().push_back(state_->params[i].name);
  }
  return out;
}

Reducer::NoSyncGuard::NoSyncGuard(Reducer& reducer)
    : reducer_(reducer), previous_(reducer.state_->sync) {
  reducer_.state_->sync = false;
}
Reducer::NoSyncGuard::~NoSyncGuard() { reducer_.state_->sync = previous_; }

}  // namespace minigrad::nn::parallel::detail
