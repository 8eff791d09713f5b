#pragma once
// minigrad::viz: pictures of what a script computes (library minigrad::viz, on Graphviz).
//
//   mg::Tensor loss = ...;
//   mg::viz::draw_graph(loss, "graph.png");   // the autograd graph, as torchviz's make_dot
//   mg::viz::plot_curves({{"train", steps, losses}, {"validation", val_steps, val_losses}},
//                        "loss.png", {.title = "loss", .caption = "lr 3e-3, batch 32"});
//   mg::viz::attention_heatmap(weights, words, words, "attention.png", "layer 0, head 1");
#include <optional>
#include <string>
#include <vector>

#include "minigrad/autograd.h"
#include "minigrad/tensor.h"

namespace minigrad::viz {

/// Renders autograd::to_dot(output, options) with Graphviz's dot layout into path; the format
/// comes from the extension: .png, .svg, .pdf or .dot (the DOT text itself). Throws
/// minigrad::Error for another extension or when Graphviz cannot write the file.
void draw_graph(const Tensor& output, const std::string& path,
                const autograd::DotOptions& options = {});
/// Renders DOT text (from to_dot, or your own) into path, as draw_graph does.
void render_dot(const std::string& dot, const std::string& path);

/// One line of plot_curves: y against x (each series has its own x values).
struct Series {
  std::string label{};  // in the legend ("" for none)
  std::vector<double> x{}, y{};
  /// A dot at each point; unset: on when the series has at most 50 points (sparse points such as
  /// validation losses stay visible).
  std::optional<bool> markers{};
  bool dashed = false;  // a reference line, e.g. a baseline: {"bigram", {0, 1000}, {2.1, 2.1}}
};

struct PlotOptions {
  std::string title{};
  std::string x_label = "step";
  std::string y_label{};
  std::string caption{};  // a smaller line under the plot: the run's settings
  int width = 960, height = 600;
  /// The y range; unset: the data's, widened to nice tick values.
  std::optional<double> y_min{}, y_max{};
  /// Where the legend goes, as matplotlib's loc: "best" (the place among the others, in
  /// matplotlib's order, that covers the fewest points of the lines), "upper right",
  /// "upper left", "lower left", "lower right", "right", "center left", "center right",
  /// "lower center", "upper center", "center", or "none".
  std::string legend = "best";
};

/// Writes a PNG line plot (cairo) of the series to path: axes with ticks at nice numbers (1, 2 or
/// 5 times a power of ten), a light grid, a legend, the title and the caption. Throws
/// minigrad::Error when there is no series, a series is empty, its x and y differ in length, a
/// value is not finite, the legend's place is unknown, the path does not end in .png, or the file
/// cannot be written.
void plot_curves(const std::vector<Series>& series, const std::string& path,
                 const PlotOptions& options = {});

struct HeatmapOptions {
  std::string caption{};  // a smaller line under the picture: the run's settings
  /// Above the columns and beside the rows.
  std::string x_label = "key: the token attended to";
  std::string y_label = "query: the token that looks";
  /// 3-D weights: one title per panel (default "head 0", "head 1", ...).
  std::vector<std::string> panel_titles{};
  /// The colour scale. Unset: from 0 (or the minimum, if negative) to the maximum of weights.
  /// The colour bar always shows the scale's range; values outside it are drawn in the end
  /// colour, and the bar's end label says so ("≥ 0.5", with the true maximum).
  std::optional<double> vmin{}, vmax{};
  /// Each cell's value printed in it (cells exactly 0, such as masked future tokens, stay blank).
  bool values = true;
  /// The colour map, by matplotlib's name: "Blues" (white to dark blue, for weights >= 0) or
  /// "RdBu_r" (diverging: blue below 0, white at 0, red above, on a scale symmetric about 0 unless
  /// vmin/vmax say otherwise; for signed data such as W_q^T W_k). Empty (the default): RdBu_r when
  /// the data holds a negative value, else Blues.
  std::string cmap{};
};

/// Writes attention weights as a labelled heatmap PNG with a colour bar: weights (T_q, T_k) for
/// one head, or (H, T_q, T_k) for a grid of heads on one shared scale. row_labels name the T_q
/// queries, col_labels the T_k keys. Throws minigrad::Error for another rank, label counts that
/// differ from the sizes, empty or non-finite weights, vmin >= vmax, an unknown cmap, a path not
/// ending in .png, or a file that cannot be written.
void attention_heatmap(const Tensor& weights, const std::vector<std::string>& row_labels,
                       const std::vector<std::string>& col_labels, const std::string& path,
                       const std::string& title = "", const HeatmapOptions& options = {});

}  // namespace minigrad::viz
