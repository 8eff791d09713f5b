#include <gtest/gtest.h>
#include <minigrad/minigrad.h>
namespace mg = minigrad;
TEST(Tensor, Smoke) { EXPECT_EQ(mg::tensor({1.0, 2.0}).numel(), 2); }
