// The helpers for user scripts: plot_curves and attention_heatmap (PNG files that cairo reads
// back), the progress bar's text, the model summary, and their errors (docs/errors.md).
#include <cairo.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "documented_errors.h"
#include "minigrad/minigrad.h"
#include "minigrad/utils.h"
#include "minigrad/viz.h"

namespace mg = minigrad;
namespace nn = minigrad::nn;

namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("minigrad_utils_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

struct PngSize {
  int width = -1, height = -1;
};
/// Decodes the PNG with cairo: its size, or -1 if it does not decode.
PngSize decode_png(const std::string& path) {
  cairo_surface_t* s = cairo_image_surface_create_from_png(path.c_str());
  PngSize size;
  if (cairo_surface_status(s) == CAIRO_STATUS_SUCCESS)
    size = {cairo_image_surface_get_width(s), cairo_image_surface_get_height(s)};
  cairo_surface_destroy(s);
  return size;
}

/// A clock that returns the given seconds one call after another.
std::function<double()> scripted_clock(std::vector<double> times) {
  auto next = std::make_shared<std::size_t>(0);
  return [times, next] { return times.at((*next)++); };
}

}  // namespace

TEST(PlotCurves, WritesADecodablePngOfTheRequestedSize) {
  const std::string path = temp_path("curves.png");
  std::vector<double> steps, loss;
  for (int i = 0; i <= 200; ++i) {
    steps.push_back(i);
    loss.push_back(4.0 * std::exp(-i / 50.0) + 1.0);
  }
  mg::viz::plot_curves({{"train", steps, loss},
                        {"validation", {0, 100, 200}, {5.0, 1.6, 1.1}},
                        {"bigram", {0, 200}, {2.0, 2.0}, std::nullopt, true}},
                       path, {.title = "loss", .caption = "lr 0.1", .width = 640, .height = 400});
  const PngSize size = decode_png(path);
  EXPECT_EQ(size.width, 640);
  EXPECT_EQ(size.height, 400);
  std::filesystem::remove(path);
}

TEST(PlotCurves, OnePointOfOneValueGetsTheDefaultSize) {
  const std::string path = temp_path("point.png");
  mg::viz::plot_curves({{"validation", {5}, {2.0}}}, path);
  const PngSize size = decode_png(path);
  EXPECT_EQ(size.width, 960);
  EXPECT_EQ(size.height, 600);
  std::filesystem::remove(path);
}

TEST(AttentionHeatmap, OneHeadAndAGridOfHeadsDecode) {
  const std::string one = temp_path("one.png"), grid = temp_path("grid.png");
  mg::Tensor w = mg::tensor({{1.0, 0.0, 0.0}, {0.5, 0.5, 0.0}, {0.2, 0.3, 0.5}});
  const std::vector<std::string> words = {"the", "warm", "jacket"};
  mg::viz::attention_heatmap(w, words, words, one, "one head");
  const PngSize a = decode_png(one);
  EXPECT_GT(a.width, 3 * 72);  // three cells of the largest size, labels and a colour bar
  EXPECT_GT(a.height, 3 * 72);
  mg::viz::attention_heatmap(mg::stack({w, w, w, w}, 0), words, words, grid, "four heads");
  const PngSize b = decode_png(grid);
  EXPECT_GT(b.width, a.width);  // 2 x 2 panels
  EXPECT_GT(b.height, a.height);
  for (const auto& p : {one, grid}) std::filesystem::remove(p);
}

/// The pixels of the PNG at path (ARGB32), row by row.
std::vector<std::uint32_t> png_pixels(const std::string& path) {
  cairo_surface_t* s = cairo_image_surface_create_from_png(path.c_str());
  std::vector<std::uint32_t> out;
  if (cairo_surface_status(s) == CAIRO_STATUS_SUCCESS) {
    cairo_surface_flush(s);
    const unsigned char* data = cairo_image_surface_get_data(s);
    const int w = cairo_image_surface_get_width(s), h = cairo_image_surface_get_height(s);
    const int stride = cairo_image_surface_get_stride(s);
    out.resize(static_cast<std::size_t>(w) * static_cast<std::size_t>(h));
    for (int y = 0; y < h; ++y)
      std::memcpy(&out[static_cast<std::size_t>(y) * static_cast<std::size_t>(w)],
                  data + y * stride, 4 * static_cast<std::size_t>(w));
  }
  cairo_surface_destroy(s);
  return out;
}

// The legend goes where it hides no line (matplotlib's loc="best"): a line rising to the upper
// right and a flat one near the top leave only the lower right free, and "best" draws exactly
// what "lower right" draws; the old fixed place, "upper right", draws something else.
TEST(PlotCurves, TheLegendGoesWhereItHidesNoLine) {
  const std::string best = temp_path("best.png"), placed = temp_path("placed.png");
  const std::vector<mg::viz::Series> series = {{"rising", {0, 5, 10}, {0, 5, 10}},
                                               {"flat", {0, 10}, {9.5, 9.5}}};
  mg::viz::plot_curves(series, best);
  mg::viz::plot_curves(series, placed, {.legend = "lower right"});
  const auto pixels = png_pixels(best);
  ASSERT_FALSE(pixels.empty());
  EXPECT_TRUE(pixels == png_pixels(placed));
  mg::viz::plot_curves(series, placed, {.legend = "upper right"});
  EXPECT_FALSE(pixels == png_pixels(placed));
  for (const auto& p : {best, placed}) std::filesystem::remove(p);
}

/// How many pixels of the PNG at path are strongly red and strongly blue.
std::pair<int, int> red_and_blue_pixels(const std::string& path) {
  cairo_surface_t* s = cairo_image_surface_create_from_png(path.c_str());
  int red = 0, blue = 0;
  if (cairo_surface_status(s) == CAIRO_STATUS_SUCCESS) {
    cairo_surface_flush(s);
    const unsigned char* data = cairo_image_surface_get_data(s);
    const int w = cairo_image_surface_get_width(s), h = cairo_image_surface_get_height(s);
    const int stride = cairo_image_surface_get_stride(s);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        std::uint32_t px;
        std::memcpy(&px, data + y * stride + 4 * x, 4);  // ARGB32, native endian
        const int r = (px >> 16) & 0xff, g = (px >> 8) & 0xff, b = px & 0xff;
        red += r > 150 && g < 90 && b < 90;
        blue += b > 120 && r < 60 && g < 120;
      }
  }
  cairo_surface_destroy(s);
  return {red, blue};
}

// Signed data (W_q^T W_k) gets the diverging map by default: red above 0, blue below, white at
// 0; weights >= 0 keep Blues (no red anywhere); cmap picks either.
TEST(AttentionHeatmap, SignedDataGetsADivergingMap) {
  const std::string path = temp_path("signed.png");
  const std::vector<std::string> words = {"warm", "jacket", "for"};
  mg::Tensor m = mg::tensor({{-2.0, 2.1, -0.3}, {0.1, 0.0, -0.1}, {0.2, -0.2, 0.0}});
  mg::viz::attention_heatmap(m, words, words, path, "W_q^T W_k");
  auto [red, blue] = red_and_blue_pixels(path);
  EXPECT_GT(red, 500);
  EXPECT_GT(blue, 500);
  mg::viz::attention_heatmap(m.abs(), words, words, path, "|M|");
  std::tie(red, blue) = red_and_blue_pixels(path);
  EXPECT_EQ(red, 0);
  EXPECT_GT(blue, 500);
  mg::viz::attention_heatmap(m.abs(), words, words, path, "|M|", {.cmap = "RdBu_r"});
  std::tie(red, blue) = red_and_blue_pixels(path);
  EXPECT_GT(red, 500);
  std::filesystem::remove(path);
}

TEST(ProgressBar, LogLinesAtTheIntervalAndAlwaysTheLast) {
  std::ostringstream out;
  // Clock calls: the start, then one per update().
  mg::utils::ProgressBar bar(100, "train",
                             {.out = &out,
                              .terminal = false,
                              .log_seconds = 5,
                              .unit = "step",
                              .clock = scripted_clock({0, 1, 3, 7, 8})});
  bar.update();  // t=1: the first update always prints
  bar.set_postfix("loss", 0.123456);
  bar.update(49);  // t=3: 2 s after the last line, not printed
  bar.update(10);  // t=7: 6 s, printed
  bar.update(40);  // t=8: the last, printed
  bar.close();     // already printed: nothing more
  EXPECT_EQ(out.str(),
            "train   1%|....................| 1/100 [00:01<01:39, 1.00step/s]\n"
            "train  60%|############........| 60/100 [00:07<00:04, 8.57step/s, loss=0.1235]\n"
            "train 100%|####################| 100/100 [00:08<00:00, 12.50step/s, loss=0.1235]\n");
}

TEST(ProgressBar, CloseprintsTheStateNotYetShownAndATerminalRedrawsOneLine) {
  std::ostringstream log;
  {
    mg::utils::ProgressBar bar(
        1000, "", {.out = &log, .terminal = false, .clock = scripted_clock({0, 1, 2, 4})});
    bar.update(2);  // t=1: printed
    bar.update(2);  // t=2: within 5 s
  }                 // the destructor closes at t=4 and prints the unprinted state
  EXPECT_EQ(log.str(),
            "  0%|....................| 2/1000 [00:01<08:19, 2.00it/s]\n"
            "  0%|....................| 4/1000 [00:04<16:36, 1.00it/s] stopped early\n");

  std::ostringstream tty;
  mg::utils::ProgressBar bar(
      4, "eval",
      {.out = &tty, .terminal = true, .initial = 2, .clock = scripted_clock({10, 14, 14.5})});
  bar.set_postfix("acc", "high");
  bar.update();  // t=14: 1 step in 4 s
  bar.set_postfix("acc", "low");
  bar.update();  // t=14.5: the last step always draws
  bar.close();
  EXPECT_EQ(tty.str(),
            "\reval  75%|###############.....| 3/4 [00:04<00:04, 4.00s/it, acc=high]"
            "\reval 100%|####################| 4/4 [00:04<00:00, 2.25s/it, acc=low] \n");
}

TEST(ProgressBar, WritePrintsALineAboveTheBarAsTqdmWrite) {
  // On a terminal: the bar is wiped, the line printed, and the bar drawn again below it.
  std::ostringstream tty;
  {
    mg::utils::ProgressBar bar(
        4, "train", {.out = &tty, .terminal = true, .clock = scripted_clock({0, 1, 2, 4})});
    bar.update();               // t=1
    bar.write("a checkpoint");  // t=2: the bar is drawn again
    bar.update(3);              // t=4: the last step
  }
  const std::string first = "train  25%|#####...............| 1/4 [00:01<00:03, 1.00it/s]";
  EXPECT_EQ(tty.str(), "\r" + first + "\r" + std::string(first.size(), ' ') +
                           "\ra checkpoint\n"
                           "\rtrain  25%|#####...............| 1/4 [00:02<00:06, 2.00s/it]"
                           "\rtrain 100%|####################| 4/4 [00:04<00:00, 1.00it/s]\n");
  // Into a log: the line stands between the bar's lines; after close() it is a plain line.
  std::ostringstream log;
  mg::utils::ProgressBar bar(2, "",
                             {.out = &log, .terminal = false, .clock = scripted_clock({0, 1, 2})});
  bar.update();
  bar.write("a checkpoint");
  bar.update();
  bar.close();
  bar.write("done");
  EXPECT_EQ(log.str(),
            " 50%|##########..........| 1/2 [00:01<00:01, 1.00it/s]\n"
            "a checkpoint\n"
            "100%|####################| 2/2 [00:02<00:00, 1.00it/s]\n"
            "done\n");
}

TEST(ProgressBar, ABarClosedBeforeItsTotalSaysItStoppedEarly) {
  std::ostringstream log;
  {
    mg::utils::ProgressBar bar(
        10, "train", {.out = &log, .terminal = false, .clock = scripted_clock({0, 1, 3})});
    bar.update(3);  // t=1: printed
  }                 // closed at 3 of 10, t=3: the last line says so
  EXPECT_EQ(log.str(),
            "train  30%|######..............| 3/10 [00:01<00:02, 3.00it/s]\n"
            "train  30%|######..............| 3/10 [00:03<00:07, 1.00it/s] stopped early\n");
  std::ostringstream tty;
  mg::utils::ProgressBar bar(
      10, "", {.out = &tty, .terminal = true, .clock = scripted_clock({0, 1, 2, 2})});
  bar.update(5);
  bar.close();
  EXPECT_EQ(tty.str(),
            "\r 50%|##########..........| 5/10 [00:01<00:01, 5.00it/s]"
            "\r 50%|##########..........| 5/10 [00:02<00:02, 2.50it/s] stopped early\n");
  EXPECT_EQ(bar.line(), " 50%|##########..........| 5/10 [00:02<00:02, 2.50it/s] stopped early");
}

TEST(Summary, AKnownModelAgainstPyTorchsParameterCounts) {
  // PyTorch: nn.Sequential(nn.Embedding(100, 16), nn.Linear(16, 32), nn.ReLU(), nn.LayerNorm(32),
  // nn.Linear(32, 100, bias=False)) with the first Linear's bias frozen:
  // sum(p.numel() for p in m.parameters()) == 5408, of which 5376 require grad.
  mg::manual_seed(0);
  nn::Sequential model{nn::Embedding(100, 16), nn::Linear(16, 32), nn::ReLU(), nn::LayerNorm(32),
                       nn::Linear(32, 100, false)};
  model->named_parameters()["1.bias"].requires_grad_(false);
  EXPECT_EQ(model->num_parameters(), 5408);
  EXPECT_EQ(model->num_parameters(true), 5376);
  mg::Tensor x = mg::zeros({2, 5}, mg::kInt64);
  // As torchinfo.summary: the call prints the table and returns it.
  ::testing::internal::CaptureStdout();
  const std::string table = mg::utils::summary(model, x);
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), table);
  EXPECT_EQ(table,
            "=============================================\n"
            "Layer (type)      Output Shape        Param #\n"
            "=============================================\n"
            "(Sequential)      (2, 5, 100)           5,408\n"
            "  0 (Embedding)   (2, 5, 16)            1,600\n"
            "  1 (Linear)      (2, 5, 32)              544\n"
            "  2 (ReLU)        --                       --\n"
            "  3 (LayerNorm)   (2, 5, 32)               64\n"
            "  4 (Linear)      (2, 5, 100)           3,200\n"
            "=============================================\n"
            "Total params: 5,408\n"
            "Trainable params: 5,376\n"
            "Non-trainable params: 32\n"
            "=============================================\n"
            "Input size (MB): 0.00\n"
            "Params size (MB): 0.02\n"
            "=============================================\n");
}

TEST(Summary, VerboseZeroOnlyReturnsTheTableAndOutChoosesTheStream) {
  nn::Linear model(3, 2);
  mg::Tensor x = mg::zeros({4, 3});
  ::testing::internal::CaptureStdout();
  const std::string quiet = mg::utils::summary(model, x, {.verbose = 0});
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "");
  EXPECT_NE(quiet.find("Total params: 8\n"), std::string::npos) << quiet;
  std::ostringstream os;
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(mg::utils::summary(model, x, {.out = &os}), quiet);
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "");
  EXPECT_EQ(os.str(), quiet);
}

TEST(Summary, TiedWeightsCountOnce) {
  nn::Linear a(4, 4, false);
  nn::Sequential model(a, a);  // one layer used twice, as a tied embedding and head
  EXPECT_EQ(model->num_parameters(), 16);
}

// ---------------------------------------------------------------- errors

namespace {

using minigrad_test::BadInput;

std::vector<BadInput> bad_inputs() {
  const std::vector<std::string> ab = {"a", "b"};
  return {
      {"viz", "plot_curves without series", [] { mg::viz::plot_curves({}, "loss.png"); },
       "[plot_curves] loss.png: no series to plot"},
      {"viz", "plot_curves with 3 x and 2 y values",
       [] {
         mg::viz::plot_curves({{"train", {0, 1, 2}, {1, 2}}}, "loss.png");
       },
       "[plot_curves] series \"train\" has 3 x values and 2 y values: both must be the same, "
       "non-zero"},
      {"viz", "plot_curves of a nan loss",
       [] {
         mg::viz::plot_curves({{"train", {0, 1}, {1, NAN}}}, "loss.png");
       },
       "[plot_curves] series \"train\": y[1] is nan: values must be finite"},
      {"viz", "plot_curves to a .jpg",
       [] {
         mg::viz::plot_curves({{"train", {0, 1}, {1, 2}}}, "loss.jpg");
       },
       "[plot_curves] loss.jpg: the file name must end in .png"},
      {"viz", "attention_heatmap of a 1-D tensor",
       [=] { mg::viz::attention_heatmap(mg::ones({4}), ab, ab, "att.png"); },
       "[attention_heatmap] att.png: weights must be (T_q, T_k) or (heads, T_q, T_k), got shape "
       "(4,)"},
      {"viz", "attention_heatmap with 2 column labels for 3 columns",
       [=] {
         mg::viz::attention_heatmap(mg::ones({2, 3}), ab, ab, "att.png");
       },
       "[attention_heatmap] att.png: weights of shape (2, 3) needs 2 row labels and 3 column "
       "labels, got 2 and 2"},
      {"viz", "attention_heatmap with vmin above vmax",
       [=] {
         mg::viz::attention_heatmap(mg::ones({2, 2}), ab, ab, "att.png", "",
                                    {.vmin = 1, .vmax = 0.5});
       },
       "[attention_heatmap] att.png: vmin (1) must be less than vmax (0.5)"},
      {"viz", "attention_heatmap with 1 panel title for 2 heads",
       [=] {
         mg::viz::attention_heatmap(mg::ones({2, 2, 2}), ab, ab, "att.png", "",
                                    {.panel_titles = {"before"}});
       },
       "[attention_heatmap] att.png: 1 panel titles for 2 heads"},
      {"viz", "plot_curves with an unknown legend place",
       [] {
         mg::viz::plot_curves({{"train", {0, 1}, {1, 2}}}, "loss.png", {.legend = "top"});
       },
       "[plot_curves] loss.png: unknown legend place \"top\"; expected matplotlib's loc: \"best\", "
       "\"upper right\", \"upper left\", \"lower left\", \"lower right\", \"right\", \"center "
       "left\", \"center right\", \"lower center\", \"upper center\", \"center\" or \"none\""},
      {"viz", "attention_heatmap with an unknown colour map",
       [=] { mg::viz::attention_heatmap(mg::eye(2), ab, ab, "att.png", "", {.cmap = "jet"}); },
       "[attention_heatmap] att.png: unknown cmap \"jet\"; expected \"Blues\", \"RdBu_r\" or \"\" "
       "(RdBu_r for signed data, else Blues)"},
      {"viz", "attention_heatmap into a missing directory",
       [=] { mg::viz::attention_heatmap(mg::eye(2), ab, ab, "/nonexistent-dir/att.png"); },
       "[attention_heatmap] /nonexistent-dir/att.png: cannot write the PNG (cairo: error while "
       "writing to output stream)"},
      {"viz", "ProgressBar with a negative total", [] { mg::utils::ProgressBar bar(-1); },
       "[ProgressBar] total must be non-negative, got -1"},
      {"viz", "draw_graph with collapse_modules of a graph built without RecordModuleScopes",
       [] {
         mg::Tensor loss = (mg::ones({2}).requires_grad_() * 2.0).sum();
         mg::viz::draw_graph(loss, "graph.png", {.collapse_modules = true});
       },
       "[to_dot] collapse_modules: no node of the graph was recorded inside a module; build the "
       "graph (run the forward) while an nn::RecordModuleScopes of the model is alive"},
      {"viz", "to_dot with collapse_depth 0",
       [] {
         mg::Tensor loss = (mg::ones({2}).requires_grad_() * 2.0).sum();
         mg::autograd::to_dot(loss, {.collapse_modules = true, .collapse_depth = 0});
       },
       "[to_dot] collapse_depth must be at least 1, got 0"},
  };
}

}  // namespace

TEST(UtilsErrors, EveryBadInputGivesItsDocumentedMessage) {
  minigrad_test::expect_documented_messages(bad_inputs());
}
