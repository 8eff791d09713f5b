#pragma once
// Threads: how many cores minigrad's ops use (torch::set_num_threads).
// See docs/architecture.md, Note [Intra-op parallelism].

namespace minigrad {

/// Sets the number of threads large ops use: elementwise ops, reductions, softmax and matmul (a
/// batch split by matrices, a large product by blocks; OpenBLAS itself is kept on one thread, so
/// that one set of threads serves everything). n >= 1; 1 runs everything on the calling thread. The
/// default is MINIGRAD_NUM_THREADS, else OMP_NUM_THREADS, else the number of cores. Small ops never
/// leave the calling thread, whatever n is.
void set_num_threads(int n);
/// The current number of threads (torch::get_num_threads).
int get_num_threads();

}  // namespace minigrad
