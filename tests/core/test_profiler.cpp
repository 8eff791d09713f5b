// The profiler (Note [Profiler], minigrad/profiler.h): names and call counts of a known program,
// FLOPs and bytes of a known matmul, self <= total, nesting, the Chrome trace, the table, threads
// and errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <minigrad/minigrad.h>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "documented_errors.h"

namespace mg = minigrad;
namespace prof = minigrad::profiler;

namespace {

std::map<std::string, std::int64_t> counts(const prof::Profile& p) {
  std::map<std::string, std::int64_t> out;
  for (const auto& r : p.key_averages()) out[r.key] = r.count;
  return out;
}

using Counts = std::map<std::string, std::int64_t>;

/// Calls of each backward node (and AccumulateGrad) the engine ran.
Counts node_counts(const prof::Profile& p) {
  Counts out;
  for (const auto& e : p.events())
    if (e.name.find("Backward") != std::string::npos || e.name == "AccumulateGrad")
      out[e.name] += 1;
  return out;
}

std::map<std::string, std::int64_t> top_level_counts(const prof::Profile& p) {
  std::map<std::string, std::int64_t> out;
  for (const auto& e : p.events())
    if (e.depth == 0) out[e.name] += 1;
  return out;
}

const prof::FunctionEventAvg& row(const std::vector<prof::FunctionEventAvg>& rows,
                                  const std::string& key) {
  auto it = std::find_if(rows.begin(), rows.end(), [&](const auto& r) { return r.key == key; });
  if (it == rows.end()) throw std::runtime_error("no row " + key);
  return *it;
}

}  // namespace

// relu(x @ w1 + b1) @ w2, (y * y).sum(), backward: PyTorch 1.13's profiler of the same program
// (torch.matmul, torch.relu) shows 2 aten::matmul and the backward nodes MmBackward0 x2,
// AddBackward0, ReluBackward0, MulBackward0, SumBackward0 and AccumulateGrad x3.
TEST(Profiler, CountsOpsAndBackwardNodesOfAKnownProgram) {
  mg::manual_seed(0);
  mg::Tensor x = mg::randn({4, 3});
  mg::Tensor w1 = mg::randn({3, 5}).requires_grad_();
  mg::Tensor b1 = mg::randn({5}).requires_grad_();
  mg::Tensor w2 = mg::randn({5, 2}).requires_grad_();
  mg::Tensor loss;
  {
    prof::Profile forward;
    mg::Tensor h = mg::relu(mg::matmul(x, w1) + b1);
    mg::Tensor y = mg::matmul(h, w2);
    loss = (y * y).sum();
    forward.stop();
    const auto top = top_level_counts(forward);
    EXPECT_EQ(top, (std::map<std::string, std::int64_t>{
                       {"matmul", 2}, {"add", 1}, {"relu", 1}, {"mul", 1}, {"sum", 1}}));
  }
  prof::Profile p;
  loss.backward();
  p.stop();
  EXPECT_EQ(node_counts(p), (Counts{{"MmBackward0", 2},
                                    {"AddBackward0", 1},
                                    {"ReluBackward0", 1},
                                    {"MulBackward0", 1},
                                    {"SumBackward0", 1},
                                    {"AccumulateGrad", 3}}));
  // Backward nodes run at the top of the engine's loop, never inside a forward op.
  for (const auto& e : p.events())
    if (e.name.find("Backward") != std::string::npos) {
      EXPECT_EQ(e.depth, 0) << e.name;
    }
}

// Creation ops, Tensor methods outside ops/*.cpp and in-place ops. PyTorch 1.13's profiler of the
// same program (torch.zeros(2, 3), torch.ones, torch.full, torch.arange(6), torch.randn, r.t(),
// torch.ones(3, 1).expand(3, 4), e.clone(), w.contiguous(), x.to(torch.float64), r.select(0, 1),
// r.narrow(1, 0, 2), r.view(6), x.add_(y), x.mul_(2.0), x.zero_(), x.fill_(1.0), x.copy_(y))
// has these top-level events (cpu_parent None), each once but aten::ones twice.
TEST(Profiler, RecordsCreationOpsMethodsAndInPlaceOpsAsTorchProfiler) {
  mg::manual_seed(0);
  prof::Profile p;
  mg::Tensor x = mg::zeros({2, 3});
  mg::Tensor y = mg::ones({2, 3});
  mg::Tensor z = mg::full({2, 3}, 2.0);
  mg::Tensor a = mg::arange(6);
  mg::Tensor r = mg::randn({2, 3});
  mg::Tensor w = r.t();
  mg::Tensor e = mg::ones({3, 1}).expand({3, 4});
  mg::Tensor c = e.clone();
  mg::Tensor d = w.contiguous();
  mg::Tensor f = x.to(mg::kFloat64);
  mg::Tensor s = r.select(0, 1);
  mg::Tensor n = r.narrow(1, 0, 2);
  mg::Tensor v = r.view({6});
  x.add_(y);
  x.mul_(2.0);
  x.zero_();
  x.fill_(1.0);
  x.copy_(y);
  p.stop();
  EXPECT_EQ(top_level_counts(p), (Counts{{"add_", 1},
                                         {"arange", 1},
                                         {"clone", 1},
                                         {"contiguous", 1},
                                         {"copy_", 1},
                                         {"expand", 1},
                                         {"fill_", 1},
                                         {"full", 1},
                                         {"mul_", 1},
                                         {"narrow", 1},
                                         {"ones", 2},
                                         {"randn", 1},
                                         {"select", 1},
                                         {"t", 1},
                                         {"to", 1},
                                         {"view", 1},
                                         {"zero_", 1},
                                         {"zeros", 1}}));
  const auto all = counts(p);
  // arange(6) runs three overloads of arange: one event. add_ and mul_ compute with add and mul,
  // which they hide, as aten::add_ has no aten::add inside.
  EXPECT_EQ(all.at("arange"), 1);
  EXPECT_EQ(all.count("add"), 0u);
  EXPECT_EQ(all.count("mul"), 0u);
  // contiguous of a transposed tensor copies it: its clone is its child.
  EXPECT_EQ(all.at("clone"), 2);
}

// One training step of Sequential(Linear(4, 8), ReLU, Linear(8, 2)) with mse_loss: Linear is
// addmm(b, x, W^T) (as PyTorch's: aten::linear runs aten::t and aten::addmm), mse_loss is
// ((input - target)^2).mean().
TEST(Profiler, CountsATwoLayerMlpStep) {
  mg::manual_seed(0);
  mg::nn::Sequential model{mg::nn::Linear(4, 8), mg::nn::ReLU(), mg::nn::Linear(8, 2)};
  mg::Tensor x = mg::randn({3, 4}), target = mg::randn({3, 2});
  prof::Profile p;
  mg::Tensor loss = mg::nn::functional::mse_loss(model->forward(x), target);
  loss.backward();
  p.stop();
  const auto all = counts(p);
  for (const auto& [op, n] : Counts{{"linear", 2}, {"addmm", 2}, {"relu", 1}, {"mse_loss", 1}})
    EXPECT_EQ(all.at(op), n) << op;
  // weight.t() in each linear gives a TransposeBackward0.
  EXPECT_EQ(node_counts(p), (Counts{{"AddmmBackward0", 2},
                                    {"TransposeBackward0", 2},
                                    {"ReluBackward0", 1},
                                    {"SubBackward0", 1},
                                    {"MulBackward0", 1},
                                    {"MeanBackward0", 1},
                                    {"AccumulateGrad", 4}}));
  const auto rows = p.key_averages();
  // linear's FLOPs are its addmm's: 2 * 3 * 8 * 4 + 2 * 3 * 2 * 8.
  EXPECT_EQ(row(rows, "linear").flops, 2 * 3 * 8 * 4 + 2 * 3 * 2 * 8);
  EXPECT_EQ(row(rows, "linear").self_flops, 0);
}

TEST(Profiler, MatmulFlopsAndBytes) {
  mg::Tensor a = mg::ones({2, 3}), b = mg::ones({3, 4});
  prof::Profile p;
  mg::Tensor c = mg::matmul(a, b);
  mg::Tensor d = mg::bmm(mg::ones({5, 2, 3}), mg::ones({5, 3, 7}));
  p.stop();
  const auto rows = p.key_averages();
  const auto& mm = row(rows, "matmul");
  EXPECT_EQ(mm.count, 1);
  EXPECT_EQ(mm.flops, 2 * 2 * 4 * 3);  // 2*M*N*K
  EXPECT_EQ(mm.self_flops, 2 * 2 * 4 * 3);
  EXPECT_EQ(mm.self_cpu_memory_usage, 2 * 4 * 4);  // the (2, 4) float32 result
  const auto& bm = row(rows, "bmm");
  EXPECT_EQ(bm.flops, 2 * 5 * 2 * 7 * 3);
  EXPECT_EQ(bm.self_cpu_memory_usage, 5 * 2 * 7 * 4);
  // The two ones() inside the profile are recorded too, with the bytes they allocate.
  EXPECT_EQ(rows.size(), 3u);
  const auto& ones = row(rows, "ones");
  EXPECT_EQ(ones.count, 2);
  EXPECT_EQ(ones.self_cpu_memory_usage, (5 * 2 * 3 + 5 * 3 * 7) * 4);
}

TEST(Profiler, RecordFunctionNestsAndSelfIsAtMostTotal) {
  mg::Tensor a = mg::ones({8, 8});
  prof::Profile p;
  {
    prof::RecordFunction outer("outer");
    {
      prof::RecordFunction inner("inner");
      mg::Tensor c = mg::matmul(a, a);
    }
    mg::Tensor e = mg::exp(a);
  }
  p.stop();
  std::map<std::string, prof::Event> by_name;
  for (const auto& e : p.events()) {
    by_name[e.name] = e;
    EXPECT_LE(e.self_ns, e.duration_ns) << e.name;
    EXPECT_GE(e.self_ns, 0) << e.name;
    EXPECT_LE(e.self_flops, e.flops) << e.name;
    EXPECT_LE(e.self_bytes, e.bytes) << e.name;
  }
  ASSERT_EQ(by_name.size(), 4u);
  const auto &outer = by_name.at("outer"), &inner = by_name.at("inner"), &mm = by_name.at("matmul"),
             &ex = by_name.at("exp");
  EXPECT_EQ(outer.depth, 0);
  EXPECT_EQ(inner.depth, 1);
  EXPECT_EQ(mm.depth, 2);
  EXPECT_EQ(ex.depth, 1);
  EXPECT_GE(outer.duration_ns, inner.duration_ns + ex.duration_ns);
  EXPECT_EQ(outer.self_ns, outer.duration_ns - inner.duration_ns - ex.duration_ns);
  EXPECT_EQ(inner.self_ns, inner.duration_ns - mm.duration_ns);
  EXPECT_LE(outer.start_ns, inner.start_ns);
  EXPECT_LE(inner.start_ns + inner.duration_ns, outer.start_ns + outer.duration_ns);
  EXPECT_EQ(outer.flops, 2 * 8 * 8 * 8);
  EXPECT_EQ(outer.self_flops, 0);
  EXPECT_EQ(outer.bytes, 2 * 8 * 8 * 4);  // matmul's and exp's results
  EXPECT_EQ(outer.self_bytes, 0);
}

TEST(Profiler, ChromeTraceIsJsonWithCompleteEvents) {
  mg::Tensor w = mg::ones({3, 3}).requires_grad_();
  prof::Profile p;
  { mg::matmul(w, w).sum().backward(); }
  p.stop();
  const std::string path =
      ::testing::TempDir() + "minigrad_trace_" + std::to_string(::getpid()) + ".json";
  p.export_chrome_trace(path);
  std::ifstream in(path);
  nlohmann::json trace = nlohmann::json::parse(in);
  std::remove(path.c_str());
  ASSERT_TRUE(trace.contains("traceEvents"));
  const auto& evs = trace["traceEvents"];
  ASSERT_EQ(evs.size(), p.events().size());
  std::multiset<std::string> names;
  for (const auto& e : evs) {
    EXPECT_EQ(e["ph"], "X");
    EXPECT_EQ(e["pid"].get<std::int64_t>(), static_cast<std::int64_t>(::getpid()));
    EXPECT_GT(e["tid"].get<std::int64_t>(), 0);
    EXPECT_GE(e["ts"].get<double>(), 0.0);
    EXPECT_GE(e["dur"].get<double>(), 0.0);
    names.insert(e["name"].get<std::string>());
  }
  EXPECT_EQ(names.count("matmul"), 1u);
  EXPECT_EQ(names.count("sum"), 1u);
  EXPECT_EQ(names.count("MmBackward0"), 1u);
  EXPECT_EQ(names.count("SumBackward0"), 1u);
  EXPECT_EQ(names.count("AccumulateGrad"), 1u);
  for (const auto& e : evs)
    if (e["name"] == "matmul") {
      EXPECT_EQ(e["args"]["FLOPs"].get<std::int64_t>(), 2 * 3 * 3 * 3);
    }
}

TEST(Profiler, TableIsSortedAndLaidOutAsTorchProfiler) {
  mg::Tensor a = mg::ones({64, 64});
  prof::Profile p;
  for (int i = 0; i < 3; ++i) mg::Tensor c = mg::matmul(a, a);
  for (int i = 0; i < 5; ++i) mg::Tensor c = a + a;
  mg::Tensor e = mg::exp(a);
  p.stop();
  const std::string t = p.table();
  std::istringstream is(t);
  std::vector<std::string> lines;
  for (std::string l; std::getline(is, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 3u + 3u + 3u);  // rule, header, rule, 3 rows, rule, two totals
  EXPECT_EQ(lines[1],
            "  Name    Self CPU %      Self CPU  Self thr CPU   CPU total %     CPU total  "
            "CPU time avg     Allocated    Self Alloc    # of Calls  Total MFLOPs  ");
  EXPECT_EQ(lines[0], lines[2]);
  EXPECT_EQ(lines[0].substr(0, 8), "------  ");
  EXPECT_EQ(lines[7].rfind("Self CPU time total: ", 0), 0u);
  EXPECT_EQ(lines[8].rfind("Self thread CPU time total: ", 0), 0u);
  EXPECT_NE(lines[8].find(" of the wall time)"), std::string::npos) << lines[8];
  // Rows come in descending self CPU time.
  auto rows = p.key_averages();
  std::stable_sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) {
    return x.self_cpu_time_total_ns > y.self_cpu_time_total_ns;
  });
  for (std::size_t i = 0; i < 3; ++i) {
    std::istringstream ls(lines[3 + i]);
    std::string name;
    ls >> name;
    EXPECT_EQ(name, rows[i].key) << t;
  }
  // By count: add (5), matmul (3), exp (1); the count column says so.
  const std::string by_count = p.table("count");
  std::istringstream cs(by_count);
  std::vector<std::string> cl;
  for (std::string l; std::getline(cs, l);) cl.push_back(l);
  EXPECT_EQ(cl[3].substr(0, 6), "   add");
  EXPECT_EQ(cl[4].substr(0, 6), "matmul");
  EXPECT_EQ(cl[5].substr(0, 6), "   exp");
  EXPECT_NE(cl[3].find("   5  "), std::string::npos) << cl[3];
  // 3 * 2 * 64^3 = 1572864 FLOPs, in the MFLOPs the header names (torch's auto_scale_flops)
  EXPECT_NE(cl[4].find("       1.573  "), std::string::npos) << cl[4];
  EXPECT_NE(cl[4].find("  48.00 Kb  "), std::string::npos) << cl[4];  // 3 * 64 * 64 * 4 bytes
  EXPECT_EQ(p.table("count", 1).find("matmul"), std::string::npos);
}

TEST(Profiler, RecordsUserThreadsWithTheirIds) {
  mg::Tensor a = mg::ones({4, 4});
  std::set<std::int64_t> tids;
  {
    prof::Profile p;
    auto work = [&a] {
      for (int i = 0; i < 10; ++i) mg::Tensor c = a + a;
    };
    std::thread t1(work), t2(work);
    t1.join();
    t2.join();
    p.stop();
    for (const auto& e : p.events()) tids.insert(e.thread_id);
    EXPECT_EQ(counts(p).at("add"), 20);
    EXPECT_EQ(p.events().size(), 20u);
  }
  EXPECT_EQ(tids.size(), 2u);
  EXPECT_EQ(tids.count(static_cast<std::int64_t>(::gettid())), 0u);
}

TEST(Profiler, RecordsNothingWhenStoppedAndStartsAgain) {
  mg::Tensor a = mg::ones({2, 2});
  {
    prof::Profile p;
    mg::Tensor c = a + a;
    p.stop();
    EXPECT_FALSE(p.is_recording());
    mg::Tensor d = a * a;
    EXPECT_EQ(p.events().size(), 1u);
  }
  prof::Profile q;  // the first is gone: a new one may start
  EXPECT_TRUE(q.is_recording());
  mg::Tensor e = a - a;
  ASSERT_EQ(q.events().size(), 1u);
  EXPECT_EQ(q.events()[0].name, "sub");
}

TEST(Profiler, DocumentedErrors) {
  prof::Profile p;
  p.stop();
  using minigrad_test::BadInput;
  minigrad_test::expect_documented_messages({
      BadInput{"profiler", "a second Profile while one records",
               [] {
                 prof::Profile first;
                 prof::Profile second;
               },
               "[Profile] a profiler is already recording: only one Profile may be active at a "
               "time (stop() or destroy the first one)"},
      BadInput{"profiler", "export to a directory that does not exist",
               [&] { p.export_chrome_trace("/nonexistent-dir/trace.json"); },
               "[export_chrome_trace] cannot open /nonexistent-dir/trace.json for writing: No "
               "such file or directory"},
      BadInput{"profiler", "an unknown sort key", [&] { (void)p.table("cuda_time_total"); },
               "[Profile.table] unknown sort_by \"cuda_time_total\"; expected one of "
               "self_cpu_time_total, cpu_time_total, self_thread_cpu_time_total, count, flops, "
               "cpu_memory_usage, self_cpu_memory_usage"},
      BadInput{"profiler", "a schedule with no active step", [] { (void)prof::schedule(1, 1, 0); },
               "[profiler.schedule] active must be >= 1 (the steps recorded in each cycle), got 0"},
      BadInput{"profiler", "a schedule with a negative count",
               [] { (void)prof::schedule(-1, 0, 2, 0, 3); },
               "[profiler.schedule] wait, warmup, repeat and skip_first must be >= 0, got "
               "wait=-1, warmup=0, repeat=0, skip_first=3"},
      BadInput{"profiler", "step() after stop()", [&] { p.step(); },
               "[Profile.step] the profiler was stopped: step() counts the steps of a recording "
               "Profile"},
  });
  // The refused second Profile changed nothing: once the first is gone, a new one records.
  prof::Profile again;
  EXPECT_TRUE(again.is_recording());
}

// torch.profiler.schedule(wait=1, warmup=1, active=2, repeat=2, skip_first=1) over 9 steps, step i
// running i + 1 adds: torch's ProfilerAction for steps 0..8 is NONE (skip_first), NONE, WARMUP,
// RECORD, RECORD_AND_SAVE, NONE, WARMUP, RECORD, RECORD_AND_SAVE, then NONE. on_trace_ready runs
// after steps 4 and 8 with that cycle's two active steps (4 + 5 = 9 adds, then 8 + 9 = 17), and
// the Profile keeps the last cycle, as torch's key_averages() after the profile does.
TEST(Profiler, ScheduleRecordsTheActiveStepsOfEachCycle) {
  mg::Tensor a = mg::ones({2, 2});
  std::vector<std::pair<int, std::int64_t>> ready;  // (step_num, adds recorded)
  std::vector<bool> recording;
  {
    prof::Profile p(prof::schedule(/*wait=*/1, /*warmup=*/1, /*active=*/2, /*repeat=*/2,
                                   /*skip_first=*/1),
                    [&](prof::Profile& q) {
                      EXPECT_FALSE(q.is_recording());
                      ready.emplace_back(q.step_num(), counts(q)["add"]);
                    });
    for (int i = 0; i < 10; ++i) {
      recording.push_back(p.is_recording());
      for (int j = 0; j <= i; ++j) mg::Tensor c = a + a;
      p.step();
    }
    EXPECT_EQ(p.step_num(), 10);
    EXPECT_FALSE(p.is_recording());
    EXPECT_EQ(counts(p).at("add"), 17);
  }
  EXPECT_EQ(recording,
            (std::vector<bool>{false, false, true, true, true, false, true, true, true, false}));
  EXPECT_EQ(ready, (std::vector<std::pair<int, std::int64_t>>{{5, 9}, {9, 17}}));
  // The Profile is gone: a new one may start.
  prof::Profile q;
  EXPECT_TRUE(q.is_recording());
}

// Back-to-back cycles (no wait, no warmup, repeat 0: until the Profile stops): each cycle starts
// its recording afresh.
TEST(Profiler, ScheduleWithoutWaitStartsEachCycleAfresh) {
  mg::Tensor a = mg::ones({2, 2});
  int calls = 0;
  prof::Profile p(prof::schedule(0, 0, 3), [&](prof::Profile& q) {
    ++calls;
    EXPECT_EQ(counts(q).at("mul"), 3);
  });
  for (int i = 0; i < 7; ++i) {
    mg::Tensor c = a * a;
    p.step();
  }
  p.stop();
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(counts(p).at("mul"), 1);  // the third cycle's first step
}

// Thread CPU time (Note [Profiler]): never above the wall time of the same scope by more than the
// clocks' granularity, and far below it for a scope that sleeps.
TEST(Profiler, ThreadCpuTimeLeavesOutTimeNotRunning) {
  mg::Tensor a = mg::ones({128, 128});
  prof::Profile p;
  {
    prof::RecordFunction rf("sleeping");
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
  }
  for (int i = 0; i < 3; ++i) mg::Tensor c = mg::matmul(a, a);
  p.stop();
  for (const auto& e : p.events()) {
    EXPECT_GE(e.thread_cpu_ns, e.self_thread_cpu_ns) << e.name;
    EXPECT_LE(e.thread_cpu_ns, e.duration_ns + 1000000) << e.name;
  }
  const auto rows = p.key_averages();
  const auto& sleeping = row(rows, "sleeping");
  EXPECT_GE(sleeping.cpu_time_total_ns, 30000000);
  EXPECT_LT(sleeping.thread_cpu_time_total_ns, 10000000);
  EXPECT_GT(row(rows, "matmul").thread_cpu_time_total_ns, 0);
  // The table can be sorted by it.
  EXPECT_NE(p.table("self_thread_cpu_time_total").find("matmul"), std::string::npos);
}
