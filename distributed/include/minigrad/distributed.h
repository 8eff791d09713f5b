#pragma once
// minigrad::distributed: collectives on tensors across processes, on Open MPI (torch.distributed's
// core, docs/distributed.md). Every process of an `mpirun -np N` job calls the same collectives in
// the same order:
//
//   mg::distributed::InitGuard dist;                      // MPI_Init ... MPI_Finalize
//   mg::Tensor g = ...;
//   mg::distributed::all_reduce(g, mg::distributed::ReduceOp::kAvg);   // in place on every rank
//
// Tensors of every dtype (float32, float64, int64, bool), contiguous or not (a non-contiguous one
// goes through a contiguous copy). Collectives write into the tensor's storage directly, as
// torch.distributed does: call them under NoGradGuard on a tensor that requires grad.
//
// Before the data, the blocking and the async collectives exchange a small header (the op, dtype,
// element count, root), so that a mismatch between ranks throws the same minigrad::Error on every
// rank instead of corrupting memory or hanging: `[all_reduce] rank 1 has a float64 tensor of 6
// elements, rank 0 a float32 tensor of 6 elements`. send/recv check on the receiving side only.
//
// No wait blocks forever: every wait polls with a deadline, MINIGRAD_DIST_TIMEOUT seconds (default
// 300), and then throws `[all_reduce] timed out after 300 s ...`. MPI errors come back as
// minigrad::Error (the communicator uses MPI_ERRORS_RETURN). An exception that ends one rank ends
// the job: mpirun kills the other ranks when one exits with an error.
#include <cstdint>
#include <functional>
#include <memory>

#include "minigrad/tensor.h"

namespace minigrad::distributed {

/// How all_reduce and reduce_scatter combine the ranks' values (torch.distributed.ReduceOp).
/// kAvg is for floating-point tensors only; on bool tensors kSum and kMax are a logical or, kMin a
/// logical and.
enum class ReduceOp : std::int8_t { kSum, kAvg, kMax, kMin };

/// Initialises MPI (MPI_Init_thread, or adopts an MPI that the program initialised itself) and
/// this library's communicator, a duplicate of MPI_COMM_WORLD. Calling it twice is a no-op.
void init();
/// Frees the communicator and finalises MPI if init() initialised it. Every rank must call it.
void finalize();
/// Whether init() was called and finalize() was not.
bool is_initialized();
/// init() in the constructor, finalize() in the destructor.
class InitGuard {
 public:
  InitGuard() { init(); }
  ~InitGuard() { finalize(); }
  InitGuard(const InitGuard&) = delete;
  InitGuard& operator=(const InitGuard&) = delete;
};

/// This process's rank in [0, world_size()) and the number of processes.
int rank();
int world_size();
/// Returns when every rank has called it.
void barrier();
/// Ends the whole job (MPI_Abort) with this exit code; for a rank that cannot go on.
[[noreturn]] void abort(int exit_code = 1);
/// The wait deadline in seconds (MINIGRAD_DIST_TIMEOUT, 300 by default).
double timeout_seconds();

/// A collective or a message in flight (torch.distributed's Work). wait() returns once the
/// operation finished and its result is in the tensor; it throws on timeout or MPI error. A Work
/// that is destroyed unwaited is waited in its destructor, which never throws (an error there is
/// printed and ends the job), as the tensors must not be freed under MPI.
class Work {
 public:
  Work();
  ~Work();
  Work(Work&&) noexcept;
  Work& operator=(Work&&) noexcept;
  /// Blocks until done. Calling it again is a no-op.
  void wait();
  /// Whether the operation finished (it may make progress), without blocking.
  bool is_completed();

  struct State;
  explicit Work(std::unique_ptr<State> state);

 private:
  std::unique_ptr<State> state_;
};

/// Combines `tensor` over all ranks with `op`, in place, on every rank.
void all_reduce(Tensor& tensor, ReduceOp op = ReduceOp::kSum);
Work all_reduce_async(Tensor& tensor, ReduceOp op = ReduceOp::kSum);
/// Copies rank `src`'s tensor into `tensor` on every rank.
void broadcast(Tensor& tensor, int src = 0);
Work broadcast_async(Tensor& tensor, int src = 0);
/// Every rank's `tensor` stacked along a new first dim: shape (world_size, *tensor.shape), rank r's
/// at index r (torch.distributed.all_gather_into_tensor, stacked).
Tensor all_gather(const Tensor& tensor);
Work all_gather_async(const Tensor& tensor, Tensor& output);
/// `input` has shape (world_size, *rest); rank r gets the reduction over ranks of input[r], shape
/// rest (torch.distributed.reduce_scatter_tensor).
Tensor reduce_scatter(const Tensor& input, ReduceOp op = ReduceOp::kSum);
Work reduce_scatter_async(const Tensor& input, Tensor& output, ReduceOp op = ReduceOp::kSum);
/// Point to point: send `tensor` to rank `dst`; recv fills `tensor` (same dtype and numel as the
/// one sent, checked) from rank `src`. `tag` tells apart several messages between two ranks.
void send(const Tensor& tensor, int dst, int tag = 0);
void recv(Tensor& tensor, int src, int tag = 0);
Work isend(const Tensor& tensor, int dst, int tag = 0);
Work irecv(Tensor& tensor, int src, int tag = 0);

namespace detail {
/// All-reduce of a contiguous flat buffer without the header exchange, for
/// DistributedDataParallel's buckets: check_ddp_gradients checks one iteration's buckets at once.
Work all_reduce_flat_async(Tensor& flat, ReduceOp op);
/// DistributedDataParallel's checks that every rank makes the same call (a header exchange, as
/// every collective's): at construction, the model's size; once per backward, before the first
/// bucket, the gradients'. A mismatch throws "[DistributedDataParallel] the ranks disagree: ..."
/// on every rank.
void check_ddp_model(std::int64_t parameters, std::int64_t parameter_elements, std::int64_t buffers,
                     std::int64_t buffer_elements);
void check_ddp_gradients(Dtype dtype, std::int64_t elements, std::int64_t buckets);
/// Lets MPI progress outstanding non-blocking operations (Open MPI progresses only inside calls).
void progress();
}  // namespace detail

}  // namespace minigrad::distributed
