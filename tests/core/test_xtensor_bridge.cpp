// The opt-in <minigrad/xtensor.h> bridge: copies both ways, shapes and dtypes kept.
#include <gtest/gtest.h>
#include <minigrad/minigrad.h>
#include <minigrad/xtensor.h>

namespace mg = minigrad;

TEST(XtensorBridge, RoundTripKeepsShapeValuesAndDtype) {
  mg::Tensor t = mg::tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}).transpose(0, 1);  // a strided view
  xt::xarray<float> a = mg::to_xarray<float>(t);
  ASSERT_EQ(a.shape().size(), 2u);
  EXPECT_EQ(a.shape()[0], 3u);
  EXPECT_EQ(a.shape()[1], 2u);
  EXPECT_EQ(a(0, 1), 4.0f);  // t[0][1] = original[1][0]
  EXPECT_EQ(a(2, 0), 3.0f);
  mg::Tensor back = mg::from_xarray(a);
  EXPECT_EQ(back.dtype(), mg::kFloat32);
  EXPECT_EQ(back.shape(), (mg::Shape{3, 2}));
  EXPECT_TRUE(mg::equal(back, t));
  xt::xarray<double> d = {1.5, -2.5};
  EXPECT_EQ(mg::from_xarray(d).dtype(), mg::kFloat64);
  EXPECT_EQ(mg::from_xarray(d).to_vector<double>(), (std::vector<double>{1.5, -2.5}));
}
