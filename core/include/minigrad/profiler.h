#pragma once
// The profiler: what every op cost, as torch.profiler.
//
//   {
//     mg::profiler::Profile prof;            // records while it lives (or until stop())
//     loss = model(x); loss.backward();
//     std::cout << prof.table();             // key_averages().table(sort_by="self_cpu_time_total")
//     prof.export_chrome_trace("trace.json");  // open in Perfetto or chrome://tracing
//   }
//
//   // Several steps, as torch.profiler.profile(schedule=torch.profiler.schedule(...)):
//   mg::profiler::Profile prof(mg::profiler::schedule(/*wait=*/1, /*warmup=*/1, /*active=*/5));
//   for (int i = 0; i < 7; ++i) {
//     train_step();
//     prof.step();                           // the schedule's clock: one call per step
//   }
//   std::cout << prof.table();               // the 5 active steps added up
//
// Note [Profiler]
// Every public op opens a scope at its entry (MG_PROFILE_OP("matmul"), one line per op) and the
// autograd engine opens one around each backward node it runs (named as the node, "MmBackward0").
// Off (no Profile alive) a scope is one relaxed atomic load. On, a scope reads the steady clock at
// its start and end and keeps an event on a per-thread stack; nested scopes add their duration to
// their parent's child time, so an event's self time is its duration minus its children's, and
// FLOPs (counted by the GEMMs) and tensor bytes allocated (counted where a Storage is made) are
// kept both for the innermost scope (self) and for every enclosing one (total). A finished event
// goes into its thread's buffer (a mutex per thread, never contended while recording); the
// Profile collects every thread's buffer, so ops on the parallel_for pool or on user threads are
// recorded with their thread id. Each scope also reads its thread's CPU clock
// (CLOCK_THREAD_CPUTIME_ID: a system call at each end of a scope, paid only while
// recording): wall time counts the time the OS gave another process while the op waited for its
// core, thread CPU time does not, so an op that was preempted shows a wall time far above its CPU
// time instead of topping the table by chance. It is the calling thread's time only: the share of
// an op that parallel_for runs on the pool's other threads is not in it. Only one Profile records
// at a time in the process: a second one throws, as a nested torch.profiler.profile raises. Like
// torch.profiler, events are the ops the user called: an op opened directly inside one of the same
// name (an overload calling another, arange(end) -> arange(start, end, step)) is not recorded
// again, and an in-place op hides the ops it runs (y.add_(b) records "add_", not "add" inside it).
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace minigrad::profiler {

/// One finished scope: an op, a backward node or a RecordFunction.
struct Event {
  std::string name;
  std::int64_t thread_id = 0;           // the OS thread id (gettid)
  std::int64_t start_ns = 0;            // since the Profile started
  std::int64_t duration_ns = 0;         // total CPU time: children included
  std::int64_t self_ns = 0;             // duration minus the children's durations
  std::int64_t thread_cpu_ns = 0;       // this thread's CPU time in the scope, children included
  std::int64_t self_thread_cpu_ns = 0;  // thread_cpu_ns minus the children's
  std::int64_t flops = 0;               // FLOPs of this scope and its children
  std::int64_t self_flops = 0;          // FLOPs counted directly in this scope
  std::int64_t bytes = 0;               // tensor bytes allocated by this scope and its children
  std::int64_t self_bytes = 0;          // tensor bytes allocated directly in this scope
  int depth = 0;                        // 0 for a scope opened with no other open on its thread
};

/// The events of one name added up, as torch's FunctionEventAvg (key_averages()).
struct FunctionEventAvg {
  std::string key;
  std::int64_t count = 0;
  std::int64_t self_cpu_time_total_ns = 0;
  std::int64_t cpu_time_total_ns = 0;
  std::int64_t self_thread_cpu_time_total_ns = 0;  // the thread's CPU time, not wall time
  std::int64_t thread_cpu_time_total_ns = 0;
  std::int64_t flops = 0;  // children included
  std::int64_t self_flops = 0;
  std::int64_t cpu_memory_usage = 0;  // bytes allocated, children included
  std::int64_t self_cpu_memory_usage = 0;
  /// cpu_time_total_ns / count, in nanoseconds.
  double cpu_time_avg_ns() const {
    return count == 0 ? 0.0 : static_cast<double>(cpu_time_total_ns) / static_cast<double>(count);
  }
};

namespace detail {
struct Session;
}

/// When a Profile with a schedule records, as torch.profiler.schedule: steps are counted by
/// Profile::step(); the first skip_first steps are not recorded, then each cycle of
/// wait + warmup + active steps waits (records nothing) for `wait` steps, records `warmup` steps
/// and throws them away (the first steps after a pause pay for cold caches), and records `active`
/// steps; repeat cycles (0: until the Profile stops). A new cycle's warmup starts a new
/// recording: as torch's key_averages() after the profile, the Profile holds the last cycle's.
struct Schedule {
  int wait = 0;
  int warmup = 0;
  int active = 1;
  int repeat = 0;
  int skip_first = 0;
};

/// torch.profiler.schedule(wait=, warmup=, active=, repeat=, skip_first=). Throws for a negative
/// value or active < 1.
Schedule schedule(int wait, int warmup, int active, int repeat = 0, int skip_first = 0);

/// Records every op, backward node and RecordFunction while alive (until stop()). Only one may be
/// active in the process: constructing a second one throws minigrad::Error.
class Profile {
 public:
  /// Records from now until stop() or the end of its scope.
  Profile();
  /// Records the steps `s` makes active: call step() once at the end of every step, as
  /// torch.profiler's prof.step(). on_trace_ready, when given, is called at the end of each
  /// cycle's last active step with the Profile holding that cycle (torch's on_trace_ready), e.g.
  /// to print prof.table() or export a trace per cycle.
  explicit Profile(Schedule s, std::function<void(Profile&)> on_trace_ready = nullptr);
  ~Profile();
  Profile(const Profile&) = delete;
  Profile& operator=(const Profile&) = delete;

  /// Stops recording (the destructor does it too); the results stay readable.
  void stop();
  /// Whether ops are being recorded now (false in a schedule's wait steps and after stop()).
  bool is_recording() const;
  /// Ends a step of the schedule (torch's prof.step()): the next step records or not as the
  /// schedule says. Without a schedule it only counts. Throws after stop().
  void step();
  /// The steps ended by step() so far (torch's prof.step_num).
  int step_num() const { return step_num_; }

  /// Every finished event so far, thread by thread, each thread's in the order they finished.
  std::vector<Event> events() const;
  /// The events grouped by name, in the order each name first finished.
  std::vector<FunctionEventAvg> key_averages() const;
  /// The averages as torch.profiler's key_averages().table(): rows sorted by sort_by, descending
  /// ("self_cpu_time_total", "cpu_time_total", "self_thread_cpu_time_total", "count", "flops",
  /// "cpu_memory_usage", "self_cpu_memory_usage"), at most row_limit rows (-1: all). Next to
  /// torch's wall-time columns, "Self thr CPU" is the thread CPU time (Note [Profiler]). Throws
  /// for another sort_by.
  std::string table(const std::string& sort_by = "self_cpu_time_total", int row_limit = -1) const;
  /// Writes the events in Chrome's trace event format (complete events, "ph": "X", times in
  /// microseconds), for Perfetto or chrome://tracing. Throws when the file cannot be written.
  void export_chrome_trace(const std::string& path) const;

 private:
  /// What the schedule says for step k: 0 nothing, 1 warmup, 2 active.
  int action(int k) const;
  void apply(int previous_action, int k);

  std::shared_ptr<detail::Session> session_;
  bool scheduled_ = false;
  Schedule schedule_;
  std::function<void(Profile&)> on_trace_ready_;
  int step_num_ = 0;
  bool stopped_ = false;
};

namespace detail {
extern std::atomic<bool> g_profiler_on;
/// Whether a Profile is recording: one relaxed load, what every op pays when none is.
inline bool is_on() noexcept { return g_profiler_on.load(std::memory_order_relaxed); }
/// Opens a scope on this thread; false when no Profile is recording (then close nothing).
bool begin(const char* static_name);
bool begin(std::string name);
/// Closes this thread's innermost scope.
void end() noexcept;
/// Adds FLOPs / allocated bytes to this thread's innermost open scope (nothing when none).
void add_flops(std::int64_t flops) noexcept;
void add_bytes(std::int64_t bytes) noexcept;

/// Opens a scope in which no other scope opens: an in-place op records as "add_" alone, not
/// around the "add" it computes with (as torch.profiler's aten::add_).
bool begin_opaque(const char* static_name);

/// The scope MG_PROFILE_OP opens: nothing but a relaxed load when the profiler is off.
class OpScope {
 public:
  explicit OpScope(const char* static_name, bool opaque = false)
      : open_(is_on() && (opaque ? begin_opaque(static_name) : begin(static_name))) {}
  ~OpScope() {
    if (open_) end();
  }
  OpScope(const OpScope&) = delete;
  OpScope& operator=(const OpScope&) = delete;

 private:
  bool open_;
};
}  // namespace detail

/// Times a block of user code under a name of your choice while a Profile records
/// (torch.profiler.record_function): `{ mg::profiler::RecordFunction rf("data"); ... }`.
class RecordFunction {
 public:
  explicit RecordFunction(std::string name)
      : open_(detail::is_on() && detail::begin(std::move(name))) {}
  ~RecordFunction() {
    if (open_) detail::end();
  }
  RecordFunction(const RecordFunction&) = delete;
  RecordFunction& operator=(const RecordFunction&) = delete;

 private:
  bool open_;
};

}  // namespace minigrad::profiler

/// The first line of every public op: records it under its public name while a Profile is alive.
/// Defining MINIGRAD_NO_PROFILER when building minigrad compiles the scopes out.
/// MG_PROFILE_INPLACE_OP: the same for an in-place op, which hides the ops it runs inside.
#ifdef MINIGRAD_NO_PROFILER
#define MG_PROFILE_OP(name) ((void)0)
#define MG_PROFILE_INPLACE_OP(name) ((void)0)
#else
#define MG_PROFILE_OP(name) ::minigrad::profiler::detail::OpScope mg_profile_op_scope_(name)
#define MG_PROFILE_INPLACE_OP(name) \
  ::minigrad::profiler::detail::OpScope mg_profile_op_scope_(name, true)
#endif
