// The collectives on Open MPI. Every operation is non-blocking underneath (MPI_I*): the blocking
// calls are the async ones plus wait(), and wait() polls MPI_Testall until a deadline, so that no
// call can block forever on a rank that died or went another way (Note [Timeouts]).
#include "minigrad/distributed.h"

#include <mpi.h>

#include <array>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "minigrad/autograd.h"
#include "minigrad/error.h"
#include "minigrad/ops.h"

namespace minigrad::distributed {
namespace {

// Note [Timeouts]
// Open MPI's own waits never time out, and a rank that throws past its collectives leaves the
// others inside one. mpirun ends the job when a rank exits with an error, which covers a rank that
// dies; the deadline covers a rank that is alive but stuck elsewhere (a different collective, a
// deadlock in user code). After a timeout the communicator is unusable: the error is meant to end
// the program, and the buffers of the abandoned operation are kept alive (never freed under MPI).
// finalize() after a timeout ends the job (MPI_Abort): MPI_Finalize would wait for the stuck rank.
//
// Note [A rank that has left]
// A rank that returns from main normally (or whose InitGuard ends while an exception unwinds)
// calls finalize(), and Open MPI's MPI_Finalize waits there for every other rank: mpirun sees no
// failure, and a rank still waiting in a collective would wait the whole timeout. So finalize()
// first sends every other rank a goodbye on a second communicator of its own (`control`), and a
// wait polls for goodbyes: once a rank it needs has left, the wait gives the operation a grace
// period (kGoneGrace: MPI orders messages only within one communicator, so the goodbye may
// overtake the last data of a collective that rank finished) and then throws, naming the rank.
// A collective needs every rank; a send or receive needs only its peer.

constexpr double kGoneGrace = 2.0;  // seconds
constexpr int kGoodbyeTag = 1;

struct Context {
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm control = MPI_COMM_NULL;  // goodbyes only (Note [A rank that has left])
  std::vector<char> gone;            // gone[r]: rank r has called finalize()
  bool timed_out = false;            // MPI's state is undefined since (Note [Timeouts])
  bool we_initialized_mpi = false;
  int rank = 0;
  int size = 1;
  double timeout = 300.0;
};
Context& ctx() {
  static Context c;
  return c;
}

/// Buffers of operations abandoned after a timeout: MPI may still write into them.
std::vector<Tensor>& abandoned() {
  static std::vector<Tensor> tensors;
  return tensors;
}

void check_init(const char* op) {
  MG_CHECK(ctx().comm != MPI_COMM_NULL, op,
           "minigrad::distributed is not initialised: call minigrad::distributed::init() (or "
           "make an InitGuard) first, in a program started by mpirun");
}

void check_mpi(int rc, const char* op) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  MG_ERROR(op, "MPI error on rank ", ctx().rank, ": ", std::string(text, len));
}

MPI_Datatype mpi_type(Dtype dtype) {
  switch (dtype) {
    case kFloat32:
      return MPI_FLOAT;
    case kFloat64:
      return MPI_DOUBLE;
    case kInt64:
      return MPI_INT64_T;
    case kBool:
      return MPI_C_BOOL;
  }
  return MPI_BYTE;
}

const char* op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return "sum";
    case ReduceOp::kAvg:
      return "avg";
    case ReduceOp::kMax:
      return "max";
    case ReduceOp::kMin:
      return "min";
  }
  return "?";
}

MPI_Op mpi_op(ReduceOp op, Dtype dtype, const char* name) {
  if (dtype == kBool) {
    MG_CHECK(op != ReduceOp::kAvg, name, "ReduceOp::kAvg needs a floating-point tensor, got bool");
    return op == ReduceOp::kMin ? MPI_LAND : MPI_LOR;
  }
  MG_CHECK(op != ReduceOp::kAvg || is_floating_point(dtype), name,
           "ReduceOp::kAvg needs a floating-point tensor, got ", dtype_name(dtype));
  switch (op) {
    case ReduceOp::kMax:
      return MPI_MAX;
    case ReduceOp::kMin:
      return MPI_MIN;
    default:
      return MPI_SUM;
  }
}

int mpi_count(const Tensor& t, const char* op) {
  MG_CHECK(t.defined(), op, "the tensor is undefined");
  MG_CHECK(t.numel() <= INT_MAX, op, "a tensor of ", t.numel(),
           " elements is larger than one MPI message (", INT_MAX, " elements)");
  return static_cast<int>(t.numel());
}

/// The first element, whatever the dtype.
void* data_of(const Tensor& t) {
  if (t.numel() == 0) return nullptr;
  switch (t.dtype()) {
    case kFloat32:
      return t.data_ptr<float>();
    case kFloat64:
      return t.data_ptr<double>();
    case kInt64:
      return t.data_ptr<std::int64_t>();
    case kBool:
      return t.data_ptr<bool>();
  }
  return nullptr;
}

/// A collective that writes its result into `t` needs every element of `t` to be its own memory
/// (PyTorch's has_internal_overlap); an expand()ed view repeats one element along a dim.
void check_distinct_elements(const Tensor& t, const char* op) {
  for (std::int64_t d = 0; d < t.dim(); ++d)
    MG_CHECK(t.size(d) <= 1 || t.stride(d) != 0, op, "the tensor is an expanded view (shape ",
             t.shape(), ", stride 0 in dim ", d, "): its elements share memory, so ", op,
             " cannot write a result into each of them. Pass a tensor of its own: "
             "Tensor c = t.contiguous(); ",
             op, "(c);");
}

/// The tensor MPI reads and writes: `t` itself when contiguous, else a contiguous copy.
Tensor contiguous_buffer(const Tensor& t) {
  NoGradGuard no_grad;
  return t.detach().contiguous();
}

// ---------------------------------------------------------------- the header check

enum OpCode : std::int64_t {
  kAllReduce,
  kBroadcast,
  kAllGather,
  kReduceScatter,
  kBarrier,
  kDdpModel,
  kDdpGradients
};
const char* code_name(std::int64_t code) {
  static const char* names[] = {"all_reduce", "broadcast", "all_gather", "reduce_scatter",
                                "barrier"};
  return code >= 0 && code < 5 ? names[code] : "?";
}

// Most headers: op code, dtype, numel, reduce op, root. kDdpModel: parameters, their elements,
// buffers, their elements. kDdpGradients: dtype, elements, buckets.
using Header = std::array<std::int64_t, 5>;
std::string describe(const Header& h) {
  if (h[0] == kBarrier) return "barrier";
  if (h[0] == kDdpModel)
    return "DistributedDataParallel on a model of " + std::to_string(h[1]) + " parameters (" +
           std::to_string(h[2]) + " elements) and " + std::to_string(h[3]) + " buffers (" +
           std::to_string(h[4]) + " elements)";
  if (h[0] == kDdpGradients)
    return "DistributedDataParallel's all_reduce of the gradients (" + std::to_string(h[3]) +
           (h[3] == 1 ? " bucket, " : " buckets, ") + std::to_string(h[2]) + " elements)";
  if (h[0] < 0 || h[0] > kBarrier || h[1] < 0 || h[1] > static_cast<std::int64_t>(kFloat64))
    return "an unknown operation";
  std::string s = std::string(code_name(h[0])) + " of a " +
                  std::string(dtype_name(static_cast<Dtype>(h[1]))) + " tensor of " +
                  std::to_string(h[2]) + " elements";
  if (h[0] == kAllReduce || h[0] == kReduceScatter)
    s += " with " + std::string(op_name(static_cast<ReduceOp>(h[3])));
  if (h[0] == kBroadcast) s += " from rank " + std::to_string(h[4]);
  return s;
}

void wait_requests(std::vector<MPI_Request>& requests, const char* op, int peer = -1);

/// Every rank sends its header to every rank, so all of them see the same mismatch and throw the
/// same error: the one way to fail without leaving a rank behind in the data transfer.
void check_headers(const char* op, const Header& mine) {
  Context& c = ctx();
  std::vector<std::int64_t> all(static_cast<std::size_t>(c.size) * mine.size());
  std::vector<MPI_Request> requests(1);
  check_mpi(MPI_Iallgather(mine.data(), static_cast<int>(mine.size()), MPI_INT64_T, all.data(),
                           static_cast<int>(mine.size()), MPI_INT64_T, c.comm, &requests[0]),
            op);
  wait_requests(requests, op);
  Header first;
  std::copy(all.begin(), all.begin() + 5, first.begin());
  for (int r = 1; r < c.size; ++r) {
    Header other;
    std::copy(all.begin() + 5 * r, all.begin() + 5 * (r + 1), other.begin());
    MG_CHECK(other == first, op, "the ranks disagree: rank 0 called ", describe(first), ", rank ",
             r, " called ", describe(other));
  }
}

// ---------------------------------------------------------------- waiting

std::string timeout_message(double seconds) {
  Context& c = ctx();
  return "timed out after " + std::to_string(static_cast<long long>(seconds)) +
         " s waiting for the other ranks (this is rank " + std::to_string(c.rank) + " of " +
         std::to_string(c.size) +
         "): a rank died, is stuck, or called a different operation; MINIGRAD_DIST_TIMEOUT "
         "sets the deadline in seconds";
}

/// Receives the goodbyes that have arrived (Note [A rank that has left]).
void receive_goodbyes() {
  Context& c = ctx();
  for (;;) {
    int flag = 0;
    MPI_Status status;
    if (MPI_Iprobe(MPI_ANY_SOURCE, kGoodbyeTag, c.control, &flag, &status) != MPI_SUCCESS || !flag)
      return;
    int unused = 0;
    MPI_Recv(&unused, 1, MPI_INT, status.MPI_SOURCE, kGoodbyeTag, c.control, MPI_STATUS_IGNORE);
    if (status.MPI_SOURCE >= 0 && status.MPI_SOURCE < c.size) c.gone[status.MPI_SOURCE] = 1;
  }
}

/// The first rank that has left among those the operation needs (peer, or all if peer < 0), or -1.
int gone_rank(int peer) {
  const Context& c = ctx();
  for (int r = 0; r < c.size; ++r)
    if (c.gone[r] && r != c.rank && (peer < 0 || r == peer)) return r;
  return -1;
}

/// Polls until the requests complete; throws on an MPI error, after the deadline
/// (Note [Timeouts]), or kGoneGrace after a rank the operation needs has left.
void wait_requests(std::vector<MPI_Request>& requests, const char* op, int peer) {
  Context& c = ctx();
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::chrono::duration<double>(c.timeout);
  auto gone_deadline = clock::time_point::max();
  for (;;) {
    int done = 0;
    check_mpi(
        MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE),
        op);
    if (done) return;
    const auto now = clock::now();
    if (now > deadline) {
      c.timed_out = true;
      MG_ERROR(op, timeout_message(c.timeout));
    }
    if (gone_deadline == clock::time_point::max()) {
      receive_goodbyes();
      if (gone_rank(peer) >= 0)
        gone_deadline = now + std::chrono::duration_cast<clock::duration>(
                                  std::chrono::duration<double>(std::min(kGoneGrace, c.timeout)));
    } else if (now > gone_deadline) {
      MG_ERROR(op, "rank ", gone_rank(peer),
               " has left (it called finalize(), or its InitGuard ended) while this rank (", c.rank,
               " of ", c.size, ") waits in ", op,
               ": every rank must make the same calls in the same order (did the ranks run "
               "different numbers of steps?)");
    }
    std::this_thread::yield();
  }
}

}  // namespace

// ---------------------------------------------------------------- Work

struct Work::State {
  const char* op = "";
  int peer = -1;  // the one rank a send or receive needs; -1: a collective needs all
  std::vector<MPI_Request> requests;
  std::vector<Tensor> buffers;  // kept alive while MPI uses them
  /// Runs once the requests completed: copies results back; may post more requests (a second
  /// stage) and return true.
  std::function<bool(State&)> then;
  bool done = false;
};

namespace {
/// A Work's state for op, keeping `buffers` alive, with `requests` MPI requests to fill.
std::unique_ptr<Work::State> new_state(const char* op, std::vector<Tensor> buffers,
                                       std::size_t requests) {
  auto s = std::make_unique<Work::State>();
  s->op = op;
  s->buffers = std::move(buffers);
  s->requests.resize(requests);
  return s;
}
}  // namespace

Work::Work() = default;
Work::Work(std::unique_ptr<State> state) : state_(std::move(state)) {}
Work::Work(Work&&) noexcept = default;
Work& Work::operator=(Work&& other) noexcept {
  if (this != &other) {
    try {
      wait();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s\n", e.what());
      abort(1);
    }
    state_ = std::move(other.state_);
  }
  return *this;
}
Work::~Work() {
  try {
    wait();
  } catch (const std::exception& e) {
    // A destructor cannot throw, and the buffers cannot be freed under MPI: end the job.
    std::fprintf(stderr, "%s\n", e.what());
    abort(1);
  }
}

void Work::wait() {
  if (!state_ || state_->done) return;
  State& s = *state_;
  try {
    for (;;) {
      wait_requests(s.requests, s.op, s.peer);
      s.requests.clear();
      if (!s.then || !s.then(s)) break;
    }
  } catch (...) {
    s.done = true;
    if (!s.requests.empty())
      for (Tensor& t : s.buffers) abandoned().push_back(t);
    throw;
  }
  s.done = true;
}

bool Work::is_completed() {
  if (!state_ || state_->done) return true;
  int done = 0;
  check_mpi(MPI_Testall(static_cast<int>(state_->requests.size()), state_->requests.data(), &done,
                        MPI_STATUSES_IGNORE),
            state_->op);
  if (done) wait();  // runs the completion (and a second stage, if any)
  return state_->done;
}

// ---------------------------------------------------------------- setup

void init() {
  Context& c = ctx();
  if (c.comm != MPI_COMM_NULL) return;
  if (const char* env = std::getenv("MINIGRAD_DIST_TIMEOUT")) {
    char* end = nullptr;
    const double t = std::strtod(env, &end);
    MG_CHECK(end != env && *end == '\0' && t > 0, "init",
             "MINIGRAD_DIST_TIMEOUT must be a positive number of seconds, got '", env, "'");
    c.timeout = t;
  }
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
#ifdef OPEN_MPI
    // Note [Non-blocking all-reduce algorithm]: Open MPI's non-blocking collectives (libnbc)
    // pick a binomial-tree all-reduce for large buffers, twice as slow as the blocking
    // MPI_Allreduce on 2 ranks (docs/performance.md); Rabenseifner's reduce-scatter + all-gather
    // matches it. A value the user set in the environment wins (setenv does not overwrite).
    setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "3", 0);
#endif
    int provided = 0;
    // Serialized: minigrad calls MPI from whichever thread runs backward, one call at a time.
    MG_CHECK(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) == MPI_SUCCESS,
             "init", "MPI_Init_thread failed");
    c.we_initialized_mpi = true;
  }
  // Errors come back as return codes, which check_mpi turns into minigrad::Error. Open MPI
  // reports an error completing a non-blocking collective on MPI_COMM_WORLD, whatever its
  // communicator: when minigrad started MPI, the world returns errors too.
  if (c.we_initialized_mpi)
    check_mpi(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "init");
  check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &c.comm), "init");
  check_mpi(MPI_Comm_set_errhandler(c.comm, MPI_ERRORS_RETURN), "init");
  check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &c.control), "init");
  check_mpi(MPI_Comm_set_errhandler(c.control, MPI_ERRORS_RETURN), "init");
  MPI_Comm_rank(c.comm, &c.rank);
  MPI_Comm_size(c.comm, &c.size);
  c.gone.assign(static_cast<std::size_t>(c.size), 0);
}

void finalize() {
  Context& c = ctx();
  if (c.comm == MPI_COMM_NULL) return;
  if (c.timed_out) {
    // MPI_Finalize would wait for the rank that is stuck: end the job instead.
    std::fprintf(stderr,
                 "[finalize] rank %d ends the job: an operation timed out, and MPI cannot "
                 "finalize while another rank is stuck\n",
                 c.rank);
    abort(1);
  }
  // Goodbyes (Note [A rank that has left]): 4 bytes each, sent eagerly, so MPI_Send returns at
  // once; an error (a rank already dead) is ignored, there is nobody left to tell.
  int one = 1;
  for (int r = 0; r < c.size; ++r)
    if (r != c.rank) MPI_Send(&one, 1, MPI_INT, r, kGoodbyeTag, c.control);
  MPI_Comm_free(&c.control);
  c.control = MPI_COMM_NULL;
  MPI_Comm_free(&c.comm);
  c.comm = MPI_COMM_NULL;
  if (c.we_initialized_mpi) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
    c.we_initialized_mpi = false;
  }
}

bool is_initialized() { return ctx().comm != MPI_COMM_NULL; }

int rank() {
  check_init("rank");
  return ctx().rank;
}

int world_size() {
  check_init("world_size");
  return ctx().size;
}

double timeout_seconds() { return ctx().timeout; }

void barrier() {
  check_init("barrier");
  // The header exchange is itself a barrier (an all-gather completes once every rank has called
  // it), and it tells a rank in barrier() from one in a collective.
  check_headers("barrier", {kBarrier, 0, 0, 0, 0});
}

void abort(int exit_code) {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);
}

// ---------------------------------------------------------------- collectives

namespace {

/// The in-place collectives (all_reduce, broadcast): MPI works on a contiguous buffer; a
/// non-contiguous tensor gets the result copied back, and kAvg divides after the sum.
Work in_place(Tensor& tensor, const char* op, Header header, bool check, ReduceOp reduce,
              const std::function<int(void*, int, MPI_Datatype, MPI_Request*)>& start) {
  check_init(op);
  const int count = mpi_count(tensor, op);
  check_distinct_elements(tensor, op);
  if (check) check_headers(op, header);
  Tensor buffer = contiguous_buffer(tensor);
  auto s = new_state(op, {buffer, tensor}, 1);
  check_mpi(start(data_of(buffer), count, mpi_type(tensor.dtype()), &s->requests[0]), op);
  const bool copy_back = !buffer.is_alias_of(tensor);
  const bool average = reduce == ReduceOp::kAvg;
  s->then = [copy_back, average](Work::State& st) {
    NoGradGuard no_grad;
    Tensor& buf = st.buffers[0];
    if (average) buf.div_(ctx().size);
    if (copy_back && buf.numel() > 0) st.buffers[1].detach().copy_(buf);
    // MPI wrote the tensor's own storage: one in-place write (Note [Version counters]), as
    // PyTorch's collectives bump it; div_ and copy_ above bump it themselves.
    if (!copy_back && !average) autograd::increment_version(st.buffers[1]);
    return false;
  };
  return Work(std::move(s));
}

Work all_reduce_impl(Tensor& tensor, ReduceOp op, bool check) {
  const char* name = "all_reduce";
  check_init(name);
  MG_CHECK(tensor.defined(), name, "the tensor is undefined");
  const MPI_Op mop = mpi_op(op, tensor.dtype(), name);
  const Header h{kAllReduce, static_cast<std::int64_t>(tensor.dtype()), tensor.numel(),
                 static_cast<std::int64_t>(op), 0};
  return in_place(tensor, name, h, check, op,
                  [mop](void* data, int count, MPI_Datatype type, MPI_Request* req) {
                    return MPI_Iallreduce(MPI_IN_PLACE, data, count, type, mop, ctx().comm, req);
                  });
}

void check_rank(int r, const char* op, const char* what) {
  MG_CHECK(r >= 0 && r < ctx().size, op, what, " must be a rank in [0, ", ctx().size, "), got ", r);
}

}  // namespace

Work all_reduce_async(Tensor& tensor, ReduceOp op) { return all_reduce_impl(tensor, op, true); }
void all_reduce(Tensor& tensor, ReduceOp op) { all_reduce_async(tensor, op).wait(); }

Work detail::all_reduce_flat_async(Tensor& flat, ReduceOp op) {
  return all_reduce_impl(flat, op, false);
}

void detail::check_ddp_model(std::int64_t parameters, std::int64_t parameter_elements,
                             std::int64_t buffers, std::int64_t buffer_elements) {
  check_init("DistributedDataParallel");
  check_headers("DistributedDataParallel",
                {kDdpModel, parameters, parameter_elements, buffers, buffer_elements});
}

void detail::check_ddp_gradients(Dtype dtype, std::int64_t elements, std::int64_t buckets) {
  check_init("DistributedDataParallel");
  check_headers("DistributedDataParallel",
                {kDdpGradients, static_cast<std::int64_t>(dtype), elements, buckets, 0});
}

void detail::progress() {
  if (ctx().comm == MPI_COMM_NULL) return;
  int flag = 0;
  MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, ctx().comm, &flag, MPI_STATUS_IGNORE);
}

Work broadcast_async(Tensor& tensor, int src) {
  const char* name = "broadcast";
  check_init(name);
  check_rank(src, name, "src");
  MG_CHECK(tensor.defined(), name, "the tensor is undefined");
  const Header h{kBroadcast, static_cast<std::int64_t>(tensor.dtype()), tensor.numel(), 0, src};
  return in_place(tensor, name, h, true, ReduceOp::kSum,
                  [src](void* data, int count, MPI_Datatype type, MPI_Request* req) {
                    return MPI_Ibcast(data, count, type, src, ctx().comm, req);
                  });
}
void broadcast(Tensor& tensor, int src) { broadcast_async(tensor, src).wait(); }

Work all_gather_async(const Tensor& tensor, Tensor& output) {
  const char* name = "all_gather";
  check_init(name);
  const int count = mpi_count(tensor, name);
  check_headers(name,
                {kAllGather, static_cast<std::int64_t>(tensor.dtype()), tensor.numel(), 0, 0});
  Shape shape{ctx().size};
  for (std::int64_t d : tensor.shape()) shape.push_back(d);
  output = empty(shape, tensor.dtype());
  Tensor input = contiguous_buffer(tensor);
  auto s = new_state(name, {input, output}, 1);
  check_mpi(MPI_Iallgather(data_of(input), count, mpi_type(tensor.dtype()), data_of(output), count,
                           mpi_type(tensor.dtype()), ctx().comm, &s->requests[0]),
            name);
  return Work(std::move(s));
}
Tensor all_gather(const Tensor& tensor) {
  Tensor out;
  all_gather_async(tensor, out).wait();
  return out;
}

Work reduce_scatter_async(const Tensor& input, Tensor& output, ReduceOp op) {
  const char* name = "reduce_scatter";
  check_init(name);
  mpi_count(input, name);
  const MPI_Op mop = mpi_op(op, input.dtype(), name);
  MG_CHECK(input.dim() >= 1 && input.size(0) == ctx().size, name,
           "the input must have shape (world_size, ...) = (", ctx().size, ", ...), got ",
           input.shape());
  check_headers(name, {kReduceScatter, static_cast<std::int64_t>(input.dtype()), input.numel(),
                       static_cast<std::int64_t>(op), 0});
  Shape rest(input.shape().begin() + 1, input.shape().end());
  output = empty(rest, input.dtype());
  Tensor in = contiguous_buffer(input);
  auto s = new_state(name, {in, output}, 1);
  check_mpi(
      MPI_Ireduce_scatter_block(data_of(in), data_of(output), static_cast<int>(output.numel()),
                                mpi_type(input.dtype()), mop, ctx().comm, &s->requests[0]),
      name);
  if (op == ReduceOp::kAvg) {
    s->then = [](Work::State& st) {
      NoGradGuard no_grad;
      st.buffers[1].div_(ctx().size);
      return false;
    };
  }
  return Work(std::move(s));
}
Tensor reduce_scatter(const Tensor& input, ReduceOp op) {
  Tensor out;
  reduce_scatter_async(input, out, op).wait();
  return out;
}

// ---------------------------------------------------------------- point to point
// Each message is two: a header (dtype, numel) on tag 2*tag, then the data on tag 2*tag+1, so the
// receiver can say what was sent instead of reading garbage or failing with MPI's truncation error.

namespace {
constexpr int kMaxTag = 16383;  // 2 * 16383 + 1 is below 32767, the least MPI_TAG_UB

void check_tag(int tag, const char* op) {
  MG_CHECK(tag >= 0 && tag <= kMaxTag, op, "tag must be in [0, ", kMaxTag, "], got ", tag);
}
}  // namespace

Work isend(const Tensor& tensor, int dst, int tag) {
  const char* name = "send";
  check_init(name);
  check_rank(dst, name, "dst");
  check_tag(tag, name);
  const int count = mpi_count(tensor, name);
  Tensor header = empty({2}, kInt64);
  header.data_ptr<std::int64_t>()[0] = static_cast<std::int64_t>(tensor.dtype());
  header.data_ptr<std::int64_t>()[1] = tensor.numel();
  Tensor data = contiguous_buffer(tensor);
  auto s = new_state(name, {header, data}, 2);
  s->peer = dst;
  check_mpi(MPI_Isend(data_of(header), 2, MPI_INT64_T, dst, 2 * tag, ctx().comm, &s->requests[0]),
            name);
  check_mpi(MPI_Isend(data_of(data), count, mpi_type(tensor.dtype()), dst, 2 * tag + 1, ctx().comm,
                      &s->requests[1]),
            name);
  return Work(std::move(s));
}
void send(const Tensor& tensor, int dst, int tag) { isend(tensor, dst, tag).wait(); }

Work irecv(Tensor& tensor, int src, int tag) {
  const char* name = "recv";
  check_init(name);
  check_rank(src, name, "src");
  check_tag(tag, name);
  mpi_count(tensor, name);
  check_distinct_elements(tensor, name);
  Tensor header = empty({2}, kInt64);
  auto s = new_state(name, {header, contiguous_buffer(tensor), tensor}, 1);
  s->peer = src;
  check_mpi(MPI_Irecv(data_of(header), 2, MPI_INT64_T, src, 2 * tag, ctx().comm, &s->requests[0]),
            name);
  // Stage 2: check the header, then receive the data (into a scratch buffer if it does not fit,
  // so that the sender completes, and then throw). Stage 3: copy back or throw.
  auto stage = std::make_shared<int>(0);
  auto mismatch = std::make_shared<std::string>();
  s->then = [stage, mismatch, src, tag](Work::State& st) {
    Tensor& buf = st.buffers[1];
    if (*stage == 0) {
      *stage = 1;
      const std::int64_t* h = st.buffers[0].data_ptr<std::int64_t>();
      const auto sent_dtype = static_cast<Dtype>(h[0]);
      Tensor target = buf;
      if (sent_dtype != buf.dtype() || h[1] != buf.numel()) {
        *mismatch = "rank " + std::to_string(src) + " sent a " +
                    std::string(dtype_name(sent_dtype)) + " tensor of " + std::to_string(h[1]) +
                    " elements, but the receiving tensor is " +
                    std::string(dtype_name(buf.dtype())) + " with " + std::to_string(buf.numel()) +
                    " elements";
        target = empty({h[1]}, sent_dtype);
        st.buffers.push_back(target);
      }
      st.requests.resize(1);
      check_mpi(MPI_Irecv(data_of(target), static_cast<int>(target.numel()),
                          mpi_type(target.dtype()), src, 2 * tag + 1, ctx().comm, &st.requests[0]),
                st.op);
      return true;
    }
    MG_CHECK(mismatch->empty(), st.op, *mismatch);
    if (!buf.is_alias_of(st.buffers[2]) && buf.numel() > 0) {
      NoGradGuard no_grad;
      st.buffers[2].detach().copy_(buf);
    } else {
      autograd::increment_version(st.buffers[2]);  // MPI received into its own storage
    }
    return false;
  };
  return Work(std::move(s));
}
void recv(Tensor& tensor, int src, int tag) { irecv(tensor, src, tag).wait(); }

}  // namespace minigrad::distributed
