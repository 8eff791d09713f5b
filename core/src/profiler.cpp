// The profiler (Note [Profiler] in minigrad/profiler.h).
#include "minigrad/profiler.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iomanip>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_map>

#include "minigrad/error.h"

namespace minigrad::profiler {
namespace detail {

std::atomic<bool> g_profiler_on{false};

namespace {

using Clock = std::chrono::steady_clock;

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

/// This thread's CPU time (Note [Profiler]): what the thread ran, not the time it waited for a
/// core.
std::int64_t thread_cpu_ns() {
  timespec ts{};
  if (::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

/// One thread's finished events for one Profile; the thread appends, the Profile reads.
struct ThreadBuffer {
  std::mutex mutex;
  std::vector<Event> events;
};

}  // namespace

struct Session {
  std::uint64_t generation = 0;
  std::int64_t start_ns = 0;
  std::mutex mutex;  // guards buffers
  std::vector<std::shared_ptr<ThreadBuffer>> buffers;
};

namespace {

std::mutex g_session_mutex;                  // guards g_session
std::shared_ptr<Session> g_session;          // the recording Profile's, or null
std::atomic<std::uint64_t> g_generation{0};  // of the last Profile started

struct OpenScope {
  const char* static_name;  // or null, then name
  std::string name;
  std::int64_t start_ns;
  std::int64_t start_cpu_ns;
  std::int64_t child_ns = 0;
  std::int64_t child_cpu_ns = 0;
  std::int64_t self_flops = 0, child_flops = 0;
  std::int64_t self_bytes = 0, child_bytes = 0;
  std::uint64_t generation;
  bool opaque = false;  // no scope opens inside it (begin_opaque)
};

struct ThreadState {
  std::vector<OpenScope> stack;
  std::shared_ptr<ThreadBuffer> buffer;  // for Profile `generation`
  std::shared_ptr<Session> session;
  std::uint64_t generation = 0;
  std::int64_t tid = 0;
};
thread_local ThreadState t_state;

/// The buffer of the recording Profile for this thread, registering one on first use; false
/// when no Profile records.
bool attach(ThreadState& st) {
  const std::uint64_t gen = g_generation.load(std::memory_order_acquire);
  if (st.buffer && st.generation == gen) return true;
  std::shared_ptr<Session> session;
  {
    std::lock_guard<std::mutex> lock(g_session_mutex);
    session = g_session;
  }
  if (!session) return false;
  auto buffer = std::make_shared<ThreadBuffer>();
  {
    std::lock_guard<std::mutex> lock(session->mutex);
    session->buffers.push_back(buffer);
  }
  st.buffer = std::move(buffer);
  st.session = session;
  st.generation = session->generation;
  if (st.tid == 0) st.tid = static_cast<std::int64_t>(::gettid());
  return true;
}

bool push(ThreadState& st, const char* static_name, std::string name, bool opaque = false) {
  if (!st.stack.empty()) {
    // Inside an in-place op, or an overload inside its own op: nothing new to record.
    const OpenScope& top = st.stack.back();
    if (top.opaque ||
        (static_name && top.static_name && std::strcmp(static_name, top.static_name) == 0))
      return false;
  }
  if (!attach(st)) return false;
  st.stack.push_back(OpenScope{static_name, std::move(name), now_ns(), thread_cpu_ns(), 0, 0, 0, 0,
                               0, 0, st.generation, opaque});
  return true;
}

}  // namespace

bool begin(const char* static_name) { return push(t_state, static_name, std::string()); }
bool begin(std::string name) { return push(t_state, nullptr, std::move(name)); }
bool begin_opaque(const char* static_name) {
  return push(t_state, static_name, std::string(), true);
}

void end() noexcept {
  ThreadState& st = t_state;
  if (st.stack.empty()) return;
  const std::int64_t stop_cpu = thread_cpu_ns();
  const std::int64_t stop = now_ns();
  OpenScope s = std::move(st.stack.back());
  st.stack.pop_back();
  const std::int64_t duration = stop - s.start_ns;
  const std::int64_t cpu = std::max<std::int64_t>(0, stop_cpu - s.start_cpu_ns);
  const std::int64_t flops = s.self_flops + s.child_flops;
  const std::int64_t bytes = s.self_bytes + s.child_bytes;
  if (!st.stack.empty()) {
    OpenScope& parent = st.stack.back();
    parent.child_ns += duration;
    parent.child_cpu_ns += cpu;
    parent.child_flops += flops;
    parent.child_bytes += bytes;
  }
  if (s.generation != st.generation || !st.buffer || !st.session) return;
  try {
    Event e;
    e.name = s.static_name != nullptr ? std::string(s.static_name) : std::move(s.name);
    e.thread_id = st.tid;
    e.start_ns = s.start_ns - st.session->start_ns;
    e.duration_ns = duration;
    e.self_ns = std::max<std::int64_t>(0, duration - s.child_ns);
    e.thread_cpu_ns = cpu;
    e.self_thread_cpu_ns = std::max<std::int64_t>(0, cpu - s.child_cpu_ns);
    e.flops = flops;
    e.self_flops = s.self_flops;
    e.bytes = bytes;
    e.self_bytes = s.self_bytes;
    e.depth = static_cast<int>(st.stack.size());
    std::lock_guard<std::mutex> lock(st.buffer->mutex);
    st.buffer->events.push_back(std::move(e));
  } catch (...) {
    // Out of memory while profiling: the event is lost, the op goes on.
  }
}

void add_flops(std::int64_t flops) noexcept {
  ThreadState& st = t_state;
  if (!st.stack.empty()) st.stack.back().self_flops += flops;
}

void add_bytes(std::int64_t bytes) noexcept {
  ThreadState& st = t_state;
  if (!st.stack.empty()) st.stack.back().self_bytes += bytes;
}

}  // namespace detail

// ---------------------------------------------------------------- Profile

Schedule schedule(int wait, int warmup, int active, int repeat, int skip_first) {
  MG_CHECK(wait >= 0 && warmup >= 0 && repeat >= 0 && skip_first >= 0, "profiler.schedule",
           "wait, warmup, repeat and skip_first must be >= 0, got wait=", wait, ", warmup=", warmup,
           ", repeat=", repeat, ", skip_first=", skip_first);
  MG_CHECK(active >= 1, "profiler.schedule",
           "active must be >= 1 (the steps recorded in each cycle), got ", active);
  return Schedule{wait, warmup, active, repeat, skip_first};
}

namespace {

/// Makes session the recording one; throws when another Profile is alive.
void start_session(const std::shared_ptr<detail::Session>& session, bool on) {
  std::lock_guard<std::mutex> lock(detail::g_session_mutex);
  MG_CHECK(detail::g_session == nullptr, "Profile",
           "a profiler is already recording: only one Profile may be active at a time (stop() or "
           "destroy the first one)");
  session->generation = detail::g_generation.load(std::memory_order_relaxed) + 1;
  session->start_ns = detail::now_ns();
  detail::g_session = session;
  detail::g_generation.store(session->generation, std::memory_order_release);
  detail::g_profiler_on.store(on, std::memory_order_relaxed);
}

}  // namespace

Profile::Profile() : session_(std::make_shared<detail::Session>()) {
  start_session(session_, true);
}

Profile::Profile(Schedule s, std::function<void(Profile&)> on_trace_ready)
    : session_(std::make_shared<detail::Session>()),
      scheduled_(true),
      schedule_(schedule(s.wait, s.warmup, s.active, s.repeat, s.skip_first)),
      on_trace_ready_(std::move(on_trace_ready)) {
  start_session(session_, action(0) != 0);
}

Profile::~Profile() { stop(); }

void Profile::stop() {
  std::lock_guard<std::mutex> lock(detail::g_session_mutex);
  stopped_ = true;
  if (detail::g_session != session_) return;
  detail::g_session = nullptr;
  detail::g_profiler_on.store(false, std::memory_order_relaxed);
}

bool Profile::is_recording() const {
  std::lock_guard<std::mutex> lock(detail::g_session_mutex);
  return detail::g_session == session_ && detail::g_profiler_on.load(std::memory_order_relaxed);
}

int Profile::action(int k) const {
  const Schedule& s = schedule_;
  if (k < s.skip_first) return 0;
  const int cycle = s.wait + s.warmup + s.active;
  const int n = k - s.skip_first;
  if (s.repeat > 0 && n / cycle >= s.repeat) return 0;
  const int pos = n % cycle;
  return pos < s.wait ? 0 : pos < s.wait + s.warmup ? 1 : 2;
}

void Profile::step() {
  MG_CHECK(!stopped_, "Profile.step",
           "the profiler was stopped: step() counts the steps of a recording Profile");
  const int ended = step_num_++;
  if (!scheduled_) return;
  const Schedule& s = schedule_;
  const int cycle = s.wait + s.warmup + s.active;
  const bool cycle_done = action(ended) == 2 && (ended - s.skip_first) % cycle == cycle - 1;
  if (cycle_done) {
    detail::g_profiler_on.store(false, std::memory_order_relaxed);
    if (on_trace_ready_) on_trace_ready_(*this);
  }
  const int next = action(step_num_);
  // A cycle's first active step starts its recording afresh: the warmup steps and the cycles
  // before are dropped (torch.profiler keeps the last cycle too).
  if (next == 2 && (step_num_ - s.skip_first) % cycle == s.wait + s.warmup) {
    std::vector<std::shared_ptr<detail::ThreadBuffer>> buffers;
    {
      std::lock_guard<std::mutex> lock(session_->mutex);
      buffers = session_->buffers;
    }
    for (const auto& b : buffers) {
      std::lock_guard<std::mutex> lock(b->mutex);
      b->events.clear();
    }
  }
  detail::g_profiler_on.store(next != 0, std::memory_order_relaxed);
}

std::vector<Event> Profile::events() const {
  std::vector<std::shared_ptr<detail::ThreadBuffer>> buffers;
  {
    std::lock_guard<std::mutex> lock(session_->mutex);
    buffers = session_->buffers;
  }
  std::vector<Event> out;
  for (const auto& b : buffers) {
    std::lock_guard<std::mutex> lock(b->mutex);
    out.insert(out.end(), b->events.begin(), b->events.end());
  }
  return out;
}

std::vector<FunctionEventAvg> Profile::key_averages() const {
  std::vector<FunctionEventAvg> rows;
  std::unordered_map<std::string, std::size_t> index;
  for (const Event& e : events()) {
    auto [it, added] = index.emplace(e.name, rows.size());
    if (added) {
      rows.emplace_back();
      rows.back().key = e.name;
    }
    FunctionEventAvg& r = rows[it->second];
    r.count += 1;
    r.self_cpu_time_total_ns += e.self_ns;
    r.cpu_time_total_ns += e.duration_ns;
    r.self_thread_cpu_time_total_ns += e.self_thread_cpu_ns;
    r.thread_cpu_time_total_ns += e.thread_cpu_ns;
    r.flops += e.flops;
    r.self_flops += e.self_flops;
    r.cpu_memory_usage += e.bytes;
    r.self_cpu_memory_usage += e.self_bytes;
  }
  return rows;
}

namespace {

/// A time as torch.profiler prints it: three decimals, then us, ms or s (no space).
std::string format_time(double ns) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(3);
  const double us = ns / 1e3;
  if (us >= 1e6)
    os << us / 1e6 << "s";
  else if (us >= 1e3)
    os << us / 1e3 << "ms";
  else
    os << us << "us";
  return os.str();
}

std::string format_percent(std::int64_t part, std::int64_t whole) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(2)
     << (whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole)) << "%";
  return os.str();
}

/// Bytes as torch.profiler prints memory: 112 b, 1.50 Kb, 2.00 Mb, 1.00 Gb.
std::string format_bytes(std::int64_t b) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(2);
  const double d = static_cast<double>(b);
  if (b >= (std::int64_t{1} << 30))
    os << d / (1 << 30) << " Gb";
  else if (b >= (1 << 20))
    os << d / (1 << 20) << " Mb";
  else if (b >= 1024)
    os << d / 1024 << " Kb";
  else
    os << b << " b";
  return os.str();
}

/// torch.profiler's auto_scale_flops: the column's unit (FLOPs, KFLOPs, MFLOPs, ...) is the
/// power of 1000 of its largest value, each value printed with three decimals in that unit.
int flops_unit(std::int64_t max_flops) {
  if (max_flops <= 0) return 0;
  const int u = static_cast<int>(std::log10(static_cast<double>(max_flops)) / 3);
  return std::clamp(u, 0, 5);
}

std::string format_flops(std::int64_t f, int unit) {
  if (f == 0) return "--";
  std::ostringstream os;
  os << std::fixed << std::setprecision(3) << static_cast<double>(f) / std::pow(1000.0, unit);
  return os.str();
}

}  // namespace

std::string Profile::table(const std::string& sort_by, int row_limit) const {
  using Key = std::int64_t (*)(const FunctionEventAvg&);
  static const std::vector<std::pair<std::string, Key>> keys = {
      {"self_cpu_time_total", [](const FunctionEventAvg& r) { return r.self_cpu_time_total_ns; }},
      {"cpu_time_total", [](const FunctionEventAvg& r) { return r.cpu_time_total_ns; }},
      {"self_thread_cpu_time_total",
       [](const FunctionEventAvg& r) { return r.self_thread_cpu_time_total_ns; }},
      {"count", [](const FunctionEventAvg& r) { return r.count; }},
      {"flops", [](const FunctionEventAvg& r) { return r.flops; }},
      {"cpu_memory_usage", [](const FunctionEventAvg& r) { return r.cpu_memory_usage; }},
      {"self_cpu_memory_usage", [](const FunctionEventAvg& r) { return r.self_cpu_memory_usage; }},
  };
  Key key = nullptr;
  std::string known;
  for (const auto& [name, k] : keys) {
    if (name == sort_by) key = k;
    known += (known.empty() ? "" : ", ") + name;
  }
  MG_CHECK(key != nullptr, "Profile.table", "unknown sort_by \"", sort_by, "\"; expected one of ",
           known);
  MG_CHECK(row_limit >= -1, "Profile.table", "row_limit must be -1 (all rows) or >= 0, got ",
           row_limit);

  std::vector<FunctionEventAvg> rows = key_averages();
  std::stable_sort(
      rows.begin(), rows.end(),
      [key](const FunctionEventAvg& a, const FunctionEventAvg& b) { return key(a) > key(b); });
  std::int64_t self_total = 0, self_cpu_total = 0;
  for (const auto& r : rows) {
    self_total += r.self_cpu_time_total_ns;
    self_cpu_total += r.self_thread_cpu_time_total_ns;
  }
  if (row_limit >= 0 && rows.size() > static_cast<std::size_t>(row_limit))
    rows.resize(static_cast<std::size_t>(row_limit));

  // torch.profiler's layout: the name column as wide as the longest name (at most 55, longer
  // names end in "..."), then right-aligned columns of 12, two spaces apart.
  constexpr std::size_t kMaxName = 55, kCol = 12;
  std::size_t name_w = 4;
  std::int64_t max_flops = 0;
  for (const auto& r : rows) {
    name_w = std::max(name_w, std::min(r.key.size(), kMaxName));
    max_flops = std::max(max_flops, r.flops);
  }
  const int unit = flops_unit(max_flops);
  static const char* const kFlopsUnits[] = {"FLOPs",  "KFLOPs", "MFLOPs",
                                            "GFLOPs", "TFLOPs", "PFLOPs"};
  const std::vector<std::string> heads = {
      "Self CPU %",   "Self CPU",
      "Self thr CPU", "CPU total %",
      "CPU total",    "CPU time avg",
      "Allocated",    "Self Alloc",
      "# of Calls",   std::string("Total ") + kFlopsUnits[unit]};
  std::ostringstream os;
  auto rule = [&] {
    os << std::string(name_w, '-') << "  ";
    for (std::size_t i = 0; i < heads.size(); ++i) os << std::string(kCol, '-') << "  ";
    os << "\n";
  };
  auto line = [&](const std::string& name, const std::vector<std::string>& cells) {
    os << std::setw(static_cast<int>(name_w)) << name << "  ";
    for (const auto& c : cells) os << std::setw(static_cast<int>(kCol)) << c << "  ";
    os << "\n";
  };
  rule();
  line("Name", heads);
  rule();
  for (const auto& r : rows) {
    std::string name = r.key.size() > kMaxName ? r.key.substr(0, kMaxName - 3) + "..." : r.key;
    line(name,
         {format_percent(r.self_cpu_time_total_ns, self_total),
          format_time(static_cast<double>(r.self_cpu_time_total_ns)),
          format_time(static_cast<double>(r.self_thread_cpu_time_total_ns)),
          format_percent(r.cpu_time_total_ns, self_total),
          format_time(static_cast<double>(r.cpu_time_total_ns)), format_time(r.cpu_time_avg_ns()),
          format_bytes(r.cpu_memory_usage), format_bytes(r.self_cpu_memory_usage),
          std::to_string(r.count), format_flops(r.flops, unit)});
  }
  rule();
  os << "Self CPU time total: " << format_time(static_cast<double>(self_total)) << "\n";
  // Wall time the threads did not run: another process had the core (Note [Profiler]).
  os << "Self thread CPU time total: " << format_time(static_cast<double>(self_cpu_total)) << " ("
     << format_percent(self_cpu_total, self_total) << " of the wall time)\n";
  return os.str();
}

void Profile::export_chrome_trace(const std::string& path) const {
  MG_CHECK(!path.empty(), "export_chrome_trace", "the path is empty");
  nlohmann::json trace_events = nlohmann::json::array();
  const auto pid = static_cast<std::int64_t>(::getpid());
  for (const Event& e : events()) {
    nlohmann::json args = {{"Self CPU (us)", static_cast<double>(e.self_ns) / 1e3},
                           {"Thread CPU (us)", static_cast<double>(e.thread_cpu_ns) / 1e3},
                           {"Depth", e.depth}};
    if (e.flops != 0) args["FLOPs"] = e.flops;
    if (e.bytes != 0) args["Allocated bytes"] = e.bytes;
    trace_events.push_back({{"name", e.name},
                            {"cat", "cpu_op"},
                            {"ph", "X"},
                            {"ts", static_cast<double>(e.start_ns) / 1e3},
                            {"dur", static_cast<double>(e.duration_ns) / 1e3},
                            {"pid", pid},
                            {"tid", e.thread_id},
                            {"args", std::move(args)}});
  }
  const std::string text =
      nlohmann::json{{"traceEvents", std::move(trace_events)}, {"displayTimeUnit", "ms"}}.dump(1) +
      "\n";
  std::FILE* f = std::fopen(path.c_str(), "w");
  MG_CHECK(f != nullptr, "export_chrome_trace", "cannot open ", path,
           " for writing: ", std::strerror(errno));
  const bool wrote = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const int err = errno;
  const bool closed = std::fclose(f) == 0;
  MG_CHECK(wrote && closed, "export_chrome_trace", "cannot write ", path, ": ",
           std::strerror(wrote ? errno : err));
}

}  // namespace minigrad::profiler
