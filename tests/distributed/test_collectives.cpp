// The collectives against their definitions, on every dtype, contiguous and not. Run by ctest on
// 2 ranks (mpiexec -np 2); rank r contributes values that depend on r, so each expected result is
// written from the definition (a sum over ranks, the max, rank src's values, ...).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <minigrad/distributed.h>
#include <minigrad/minigrad.h>

#include "test_util.h"

namespace mg = minigrad;
namespace dist = minigrad::distributed;

namespace {
using minigrad::testing_util::error_of;

// Rank r's tensor: r * 10 + [0, 1, 2, 3, 4, 5], shape (2, 3), in dtype.
mg::Tensor rank_values(mg::Dtype dtype, int r) {
  return (mg::arange(0, 6, 1, mg::kFloat64) + 10.0 * r).reshape({2, 3}).to(dtype);
}

std::vector<double> as_doubles(const mg::Tensor& t) {
  return t.to(mg::kFloat64).to_vector<double>();
}

class Collectives : public ::testing::TestWithParam<mg::Dtype> {};

TEST(Distributed, TwoRanks) {
  ASSERT_TRUE(dist::is_initialized());
  EXPECT_EQ(dist::world_size(), 2);
  EXPECT_TRUE(dist::rank() == 0 || dist::rank() == 1);
  dist::barrier();
}

TEST_P(Collectives, AllReduceSumMaxMin) {
  const mg::Dtype dt = GetParam();
  const int r = dist::rank();
  mg::Tensor sum = rank_values(dt, r);
  dist::all_reduce(sum, dist::ReduceOp::kSum);
  // (0 + i) + (10 + i) = 10 + 2i
  EXPECT_EQ(as_doubles(sum), (std::vector<double>{10, 12, 14, 16, 18, 20}));
  EXPECT_EQ(sum.dtype(), dt);
  mg::Tensor mx = rank_values(dt, r);
  dist::all_reduce(mx, dist::ReduceOp::kMax);
  EXPECT_EQ(as_doubles(mx), (std::vector<double>{10, 11, 12, 13, 14, 15}));
  mg::Tensor mn = rank_values(dt, r);
  dist::all_reduce(mn, dist::ReduceOp::kMin);
  EXPECT_EQ(as_doubles(mn), (std::vector<double>{0, 1, 2, 3, 4, 5}));
}

TEST_P(Collectives, AllReduceAverageOrError) {
  const mg::Dtype dt = GetParam();
  mg::Tensor t = rank_values(dt, dist::rank());
  if (mg::is_floating_point(dt)) {
    dist::all_reduce(t, dist::ReduceOp::kAvg);
    EXPECT_EQ(as_doubles(t), (std::vector<double>{5, 6, 7, 8, 9, 10}));
  } else {
    try {
      dist::all_reduce(t, dist::ReduceOp::kAvg);
      FAIL() << "expected an error";
    } catch (const mg::Error& e) {
      EXPECT_EQ(std::string(e.what()),
                "[all_reduce] ReduceOp::kAvg needs a floating-point tensor, got int64");
    }
  }
}

TEST_P(Collectives, AllReduceNonContiguous) {
  const mg::Dtype dt = GetParam();
  // A transposed (3, 2) view: its elements in row-major order are 0 3 1 4 2 5 (+ 10 r).
  mg::Tensor base = rank_values(dt, dist::rank());
  mg::Tensor t = base.t();
  ASSERT_FALSE(t.is_contiguous());
  dist::all_reduce(t, dist::ReduceOp::kSum);
  EXPECT_EQ(as_doubles(t), (std::vector<double>{10, 16, 12, 18, 14, 20}));
  // The result is written through the view into base.
  EXPECT_EQ(as_doubles(base), (std::vector<double>{10, 12, 14, 16, 18, 20}));
}

TEST_P(Collectives, Broadcast) {
  const mg::Dtype dt = GetParam();
  for (int src = 0; src < 2; ++src) {
    mg::Tensor t = rank_values(dt, dist::rank());
    dist::broadcast(t, src);
    EXPECT_EQ(as_doubles(t), as_doubles(rank_values(dt, src))) << "src " << src;
    mg::Tensor base = rank_values(dt, dist::rank());
    mg::Tensor view = base.t();
    dist::broadcast(view, src);
    EXPECT_EQ(as_doubles(base), as_doubles(rank_values(dt, src))) << "non-contiguous, src " << src;
  }
}

TEST_P(Collectives, AllGather) {
  const mg::Dtype dt = GetParam();
  const mg::Tensor out = dist::all_gather(rank_values(dt, dist::rank()).t());
  EXPECT_EQ(out.shape(), (mg::Shape{2, 3, 2}));
  EXPECT_EQ(out.dtype(), dt);
  // out[r] = rank r's transposed tensor.
  EXPECT_EQ(as_doubles(out), (std::vector<double>{0, 3, 1, 4, 2, 5, 10, 13, 11, 14, 12, 15}));
}

TEST_P(Collectives, ReduceScatter) {
  const mg::Dtype dt = GetParam();
  // input (2, 3) = rank_values; rank k gets sum over ranks of input[k] = row k + (row k + 10).
  mg::Tensor out = dist::reduce_scatter(rank_values(dt, dist::rank()), dist::ReduceOp::kSum);
  EXPECT_EQ(out.shape(), (mg::Shape{3}));
  if (dist::rank() == 0) {
    EXPECT_EQ(as_doubles(out), (std::vector<double>{10, 12, 14}));
  } else {
    EXPECT_EQ(as_doubles(out), (std::vector<double>{16, 18, 20}));
  }
  // Non-contiguous input: the transposed (3, 2) has no leading dim of 2.
  EXPECT_THROW(dist::reduce_scatter(rank_values(dt, dist::rank()).t()), mg::Error);
  mg::Tensor mx = dist::reduce_scatter(rank_values(dt, dist::rank()).t().t(), dist::ReduceOp::kMax);
  EXPECT_EQ(as_doubles(mx), dist::rank() == 0 ? (std::vector<double>{10, 11, 12})
                                              : (std::vector<double>{13, 14, 15}));
}

TEST_P(Collectives, SendRecv) {
  const mg::Dtype dt = GetParam();
  if (dist::rank() == 0) {
    dist::send(rank_values(dt, 7).t(), 1, 3);  // non-contiguous source
    mg::Tensor back = mg::zeros({2, 3}, dt);
    dist::recv(back, 1, 4);
    EXPECT_EQ(as_doubles(back), as_doubles(rank_values(dt, 8)));
  } else {
    mg::Tensor in = mg::zeros({3, 2}, dt);
    dist::recv(in, 0, 3);
    EXPECT_EQ(as_doubles(in), as_doubles(rank_values(dt, 7).t()));
    mg::Tensor base = mg::zeros({3, 2}, dt);
    dist::send(rank_values(dt, 8), 0, 4);
    EXPECT_EQ(as_doubles(base), (std::vector<double>(6, 0.0)));
  }
}

TEST_P(Collectives, AsyncOverlapping) {
  const mg::Dtype dt = GetParam();
  // Two collectives in flight at once, waited in reverse order.
  mg::Tensor a = rank_values(dt, dist::rank());
  mg::Tensor b = rank_values(dt, dist::rank());
  dist::Work wa = dist::all_reduce_async(a, dist::ReduceOp::kMax);
  dist::Work wb = dist::broadcast_async(b, 1);
  wb.wait();
  wa.wait();
  EXPECT_TRUE(wa.is_completed());
  EXPECT_EQ(as_doubles(a), (std::vector<double>{10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(as_doubles(b), as_doubles(rank_values(dt, 1)));
  // isend/irecv both ways at once (a blocking send first on both ranks could deadlock).
  const int peer = 1 - dist::rank();
  mg::Tensor got = mg::zeros({6}, dt);
  dist::Work s = dist::isend(rank_values(dt, dist::rank()).reshape({6}), peer, 1);
  dist::Work rcv = dist::irecv(got, peer, 1);
  rcv.wait();
  s.wait();
  EXPECT_EQ(as_doubles(got), as_doubles(rank_values(dt, peer).reshape({6})));
}

// A collective or a receive writes the tensor: one in-place write each (Note [Version counters]),
// so a tensor saved for backward and then all-reduced is refused in backward, as in PyTorch.
TEST(Distributed, CollectivesBumpTheVersion) {
  mg::Tensor t = mg::ones({3});
  dist::all_reduce(t, dist::ReduceOp::kSum);
  EXPECT_EQ(t._version(), 1);
  dist::broadcast(t, 0);
  EXPECT_EQ(t._version(), 2);
  const int peer = 1 - dist::rank();
  mg::Tensor got = mg::zeros({3});
  dist::Work s = dist::isend(mg::ones({3}), peer, 5);
  dist::Work rcv = dist::irecv(got, peer, 5);
  rcv.wait();
  s.wait();
  EXPECT_EQ(got._version(), 1);
  mg::Tensor w = mg::ones({3}).requires_grad_();
  mg::Tensor h = w * 2;
  mg::Tensor y = (h * h).sum();
  {
    mg::NoGradGuard no_grad;
    dist::all_reduce(h, dist::ReduceOp::kSum);
  }
  EXPECT_NE(error_of([&] { y.backward(); }).find("modified in place"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(AllDtypes, Collectives,
                         ::testing::Values(mg::kFloat32, mg::kFloat64, mg::kInt64),
                         [](const auto& param_info) {
                           return std::string(mg::dtype_name(param_info.param));
                         });

// bool: sum and max are a logical or, min a logical and.
TEST(CollectivesBool, AllReduceLogical) {
  const bool mine = dist::rank() == 0;
  const mg::Tensor v = mg::tensor({true, false, mine, !mine}).to(mg::kBool);
  mg::Tensor any = v.clone();
  dist::all_reduce(any, dist::ReduceOp::kSum);
  EXPECT_EQ(any.to_vector<bool>(), (std::vector<bool>{true, false, true, true}));
  mg::Tensor mx = v.clone();
  dist::all_reduce(mx, dist::ReduceOp::kMax);
  EXPECT_EQ(mx.to_vector<bool>(), (std::vector<bool>{true, false, true, true}));
  mg::Tensor all = v.clone();
  dist::all_reduce(all, dist::ReduceOp::kMin);
  EXPECT_EQ(all.to_vector<bool>(), (std::vector<bool>{true, false, false, false}));
  mg::Tensor b = v.clone();
  dist::broadcast(b, 1);
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{true, false, false, true}));
  const mg::Tensor g = dist::all_gather(v);
  EXPECT_EQ(g.to_vector<bool>(),
            (std::vector<bool>{true, false, true, false, true, false, false, true}));
}

// ---------------------------------------------------------------- errors

TEST(CollectiveErrors, DtypeMismatchBetweenRanks) {
  mg::Tensor t = mg::zeros({6}, dist::rank() == 0 ? mg::kFloat32 : mg::kFloat64);
  EXPECT_EQ(error_of([&] { dist::all_reduce(t); }),
            "[all_reduce] the ranks disagree: rank 0 called all_reduce of a float32 tensor of 6 "
            "elements with sum, rank 1 called all_reduce of a float64 tensor of 6 elements with "
            "sum");
  // The job goes on: the next collective works.
  mg::Tensor ok = mg::ones({2});
  dist::all_reduce(ok);
  EXPECT_EQ(ok.to_vector<float>(), (std::vector<float>{2, 2}));
}

TEST(CollectiveErrors, SizeAndOpMismatch) {
  mg::Tensor t = mg::zeros({dist::rank() == 0 ? 4 : 5});
  EXPECT_EQ(error_of([&] { dist::broadcast(t, 0); }),
            "[broadcast] the ranks disagree: rank 0 called broadcast of a float32 tensor of 4 "
            "elements from rank 0, rank 1 called broadcast of a float32 tensor of 5 elements "
            "from rank 0");
  mg::Tensor u = mg::zeros({3});
  EXPECT_EQ(error_of([&] {
              dist::all_reduce(u, dist::rank() == 0 ? dist::ReduceOp::kSum : dist::ReduceOp::kMax);
            }),
            "[all_reduce] the ranks disagree: rank 0 called all_reduce of a float32 tensor of 3 "
            "elements with sum, rank 1 called all_reduce of a float32 tensor of 3 elements with "
            "max");
}

TEST(CollectiveErrors, LocalChecks) {
  mg::Tensor t = mg::zeros({2});
  EXPECT_EQ(error_of([&] { dist::broadcast(t, 2); }),
            "[broadcast] src must be a rank in [0, 2), got 2");
  EXPECT_EQ(error_of([&] { dist::send(t, -1); }), "[send] dst must be a rank in [0, 2), got -1");
  EXPECT_EQ(error_of([&] { dist::send(t, 0, 20000); }),
            "[send] tag must be in [0, 16383], got 20000");
  EXPECT_EQ(error_of([&] {
              dist::reduce_scatter(mg::zeros({3, 2}));
            }),
            "[reduce_scatter] the input must have shape (world_size, ...) = (2, ...), got (3, 2)");
  mg::Tensor undefined;
  EXPECT_EQ(error_of([&] { dist::all_reduce(undefined); }), "[all_reduce] the tensor is undefined");
}

TEST(CollectiveErrors, RecvMismatch) {
  if (dist::rank() == 0) {
    dist::send(mg::ones({4}, mg::kFloat64), 1, 9);
  } else {
    mg::Tensor small = mg::zeros({3});
    EXPECT_EQ(error_of([&] { dist::recv(small, 0, 9); }),
              "[recv] rank 0 sent a float64 tensor of 4 elements, but the receiving tensor is "
              "float32 with 3 elements");
  }
  dist::barrier();
}

}  // namespace
