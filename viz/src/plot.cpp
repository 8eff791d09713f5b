// viz::plot_curves and viz::attention_heatmap: PNG pictures for a projector, drawn with cairo.
#include <cairo.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "minigrad/error.h"
#include "minigrad/viz.h"

namespace minigrad::viz {
namespace {

struct Rgb {
  double r, g, b;
};
// matplotlib's tab10, the colours learners know from their Python plots.
const Rgb kPalette[] = {{0.12, 0.47, 0.71}, {1.00, 0.50, 0.05}, {0.17, 0.63, 0.17},
                        {0.84, 0.15, 0.16}, {0.58, 0.40, 0.74}, {0.55, 0.34, 0.29},
                        {0.89, 0.47, 0.76}, {0.50, 0.50, 0.50}, {0.74, 0.74, 0.13},
                        {0.09, 0.75, 0.81}};
// matplotlib's Blues, white to dark blue.
const Rgb kBlues[] = {{1.00, 1.00, 1.00},
                      {0.78, 0.86, 0.94},
                      {0.42, 0.68, 0.84},
                      {0.13, 0.44, 0.71},
                      {0.03, 0.19, 0.42}};

// matplotlib's RdBu_r (ColorBrewer's RdBu, reversed): dark blue, white in the middle, dark red.
const Rgb kRdBuR[] = {{0.020, 0.188, 0.380}, {0.129, 0.400, 0.675}, {0.263, 0.576, 0.765},
                      {0.573, 0.773, 0.871}, {0.820, 0.898, 0.941}, {0.969, 0.969, 0.969},
                      {0.992, 0.859, 0.780}, {0.957, 0.647, 0.510}, {0.839, 0.376, 0.302},
                      {0.698, 0.094, 0.169}, {0.404, 0.000, 0.122}};

/// The colour at t in [0, 1] of a map given by evenly spaced stops.
template <std::size_t N>
Rgb interpolate(const Rgb (&stops)[N], double t) {
  t = std::clamp(t, 0.0, 1.0) * static_cast<double>(N - 1);
  const std::size_t i = std::min(N - 2, static_cast<std::size_t>(t));
  const double f = t - static_cast<double>(i);
  const Rgb& a = stops[i];
  const Rgb& b = stops[i + 1];
  return {a.r + (b.r - a.r) * f, a.g + (b.g - a.g) * f, a.b + (b.b - a.b) * f};
}

Rgb blues(double t) { return interpolate(kBlues, t); }
Rgb rdbu_r(double t) { return interpolate(kRdBuR, t); }

using Surface = std::unique_ptr<cairo_surface_t, decltype(&cairo_surface_destroy)>;
using Context = std::unique_ptr<cairo_t, decltype(&cairo_destroy)>;

void check_png_path(const char* op, const std::string& path) {
  const auto dot = path.find_last_of('.');
  const std::string ext = dot == std::string::npos ? "" : path.substr(dot + 1);
  MG_CHECK(ext == "png", op, path, ": the file name must end in .png");
}

void write_png(const char* op, cairo_surface_t* surface, const std::string& path) {
  cairo_status_t status = cairo_surface_write_to_png(surface, path.c_str());
  MG_CHECK(status == CAIRO_STATUS_SUCCESS, op, path,
           ": cannot write the PNG (cairo: ", cairo_status_to_string(status), ")");
}

void set_font(cairo_t* cr, double size, bool bold = false) {
  cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
                         bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, size);
}

double text_width(cairo_t* cr, const std::string& s) {
  cairo_text_extents_t ext;
  cairo_text_extents(cr, s.c_str(), &ext);
  return ext.x_advance;
}

enum class Align { left, center, right };

/// Text whose baseline starts (left), is centred (center) or ends (right) at (x, y).
void text(cairo_t* cr, double x, double y, const std::string& s, Align align = Align::left) {
  const double w = text_width(cr, s);
  cairo_move_to(cr, align == Align::left ? x : align == Align::center ? x - w / 2 : x - w, y);
  cairo_show_text(cr, s.c_str());
}

/// Ticks at 1, 2 or 5 times a power of ten covering [lo, hi], about `count` of them.
struct Ticks {
  double first, step;
  int n, decimals;
  double at(int i) const { return first + i * step; }
  std::string label(int i) const {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, at(i) == 0 ? 0.0 : at(i));
    return buf;
  }
};

Ticks nice_ticks(double lo, double hi, int count, bool outward) {
  if (hi <= lo) hi = lo + (lo == 0 ? 1 : std::fabs(lo) * 0.1);
  const double raw = (hi - lo) / count;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / mag;
  const double step = (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
  const double eps = step * 1e-9;
  const double first =
      outward ? std::floor(lo / step + 1e-9) * step : std::ceil(lo / step - 1e-9) * step;
  const double last =
      outward ? std::ceil(hi / step - 1e-9) * step : std::floor(hi / step + 1e-9) * step;
  const int n = static_cast<int>(std::lround((last - first) / step)) + 1;
  const int decimals = std::max(0, static_cast<int>(-std::floor(std::log10(step) + eps)));
  return {first, step, n, decimals};
}

std::string format_value(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

void check_finite(const char* op, const std::vector<double>& v, const std::string& what) {
  for (std::size_t i = 0; i < v.size(); ++i)
    MG_CHECK(std::isfinite(v[i]), op, what, "[", i, "] is ", v[i], ": values must be finite");
}

}  // namespace

// ---------------------------------------------------------------- plot_curves

void plot_curves(const std::vector<Series>& series, const std::string& path,
                 const PlotOptions& options) {
  constexpr const char* kOp = "plot_curves";
  MG_CHECK(!series.empty(), kOp, path, ": no series to plot");
  check_png_path(kOp, path);
  MG_CHECK(options.width >= 200 && options.height >= 150, kOp, path, ": the picture (",
           options.width, " x ", options.height, ") must be at least 200 x 150");
  double x_lo = INFINITY, x_hi = -INFINITY, y_lo = INFINITY, y_hi = -INFINITY;
  for (const Series& s : series) {
    MG_CHECK(!s.x.empty() && s.x.size() == s.y.size(), kOp, "series \"", s.label, "\" has ",
             s.x.size(), " x values and ", s.y.size(),
             " y values: both must be the same, non-zero");
    check_finite(kOp, s.x, "series \"" + s.label + "\": x");
    check_finite(kOp, s.y, "series \"" + s.label + "\": y");
    x_lo = std::min(x_lo, *std::min_element(s.x.begin(), s.x.end()));
    x_hi = std::max(x_hi, *std::max_element(s.x.begin(), s.x.end()));
    y_lo = std::min(y_lo, *std::min_element(s.y.begin(), s.y.end()));
    y_hi = std::max(y_hi, *std::max_element(s.y.begin(), s.y.end()));
  }
  if (options.y_min) y_lo = *options.y_min;
  if (options.y_max) y_hi = *options.y_max;
  MG_CHECK(y_lo < y_hi || !(options.y_min && options.y_max), kOp, path, ": y_min (", y_lo,
           ") must be less than y_max (", y_hi, ")");
  static const char* const kLegendPlaces[] = {
      "best",        "upper right",  "upper left",   "lower left",   "lower right", "right",
      "center left", "center right", "lower center", "upper center", "center",      "none"};
  MG_CHECK(
      std::find(std::begin(kLegendPlaces), std::end(kLegendPlaces), options.legend) !=
          std::end(kLegendPlaces),
      kOp, path, ": unknown legend place \"", options.legend,
      "\"; expected matplotlib's loc: \"best\", \"upper right\", \"upper left\", \"lower left\", "
      "\"lower right\", \"right\", \"center left\", \"center right\", \"lower center\", "
      "\"upper center\", \"center\" or \"none\"");
  const double x0 = x_lo, x1 = x_hi > x_lo ? x_hi : x_lo + 1;  // one x value: a unit-wide axis
  const Ticks xt = nice_ticks(x0, x1, 6, false);
  Ticks yt = nice_ticks(y_lo, y_hi, 6, true);
  const double y0 = options.y_min ? *options.y_min : yt.first;
  const double y1 = options.y_max ? *options.y_max : yt.at(yt.n - 1);
  if (options.y_min || options.y_max) yt = nice_ticks(y0, y1, 6, false);

  const double W = options.width, H = options.height;
  const double left = 90, right = 30, top = options.title.empty() ? 30 : 64;
  const double bottom = 70 + (options.caption.empty() ? 0 : 26);
  const double pw = W - left - right, ph = H - top - bottom;
  auto X = [&](double x) { return left + pw * (x - x0) / (x1 - x0); };
  auto Y = [&](double y) { return top + ph * (1 - (y - y0) / (y1 - y0)); };

  Surface surface(cairo_image_surface_create(CAIRO_FORMAT_ARGB32, options.width, options.height),
                  cairo_surface_destroy);
  Context ctx(cairo_create(surface.get()), cairo_destroy);
  cairo_t* cr = ctx.get();
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);

  // Grid and ticks.
  set_font(cr, 15);
  cairo_set_line_width(cr, 1);
  for (int i = 0; i < yt.n; ++i) {
    const double y = Y(yt.at(i));
    if (yt.at(i) < y0 - 1e-12 || yt.at(i) > y1 + 1e-12) continue;
    cairo_set_source_rgb(cr, 0.9, 0.9, 0.9);
    cairo_move_to(cr, left, y);
    cairo_line_to(cr, left + pw, y);
    cairo_stroke(cr);
    cairo_set_source_rgb(cr, 0.15, 0.15, 0.15);
    text(cr, left - 8, y + 5, yt.label(i), Align::right);
  }
  for (int i = 0; i < xt.n; ++i) {
    const double x = X(xt.at(i));
    cairo_set_source_rgb(cr, 0.9, 0.9, 0.9);
    cairo_move_to(cr, x, top);
    cairo_line_to(cr, x, top + ph);
    cairo_stroke(cr);
    cairo_set_source_rgb(cr, 0.15, 0.15, 0.15);
    text(cr, x, top + ph + 22, xt.label(i), Align::center);
  }
  cairo_set_source_rgb(cr, 0.15, 0.15, 0.15);
  cairo_set_line_width(cr, 1.5);
  cairo_rectangle(cr, left, top, pw, ph);
  cairo_stroke(cr);
  set_font(cr, 17);
  text(cr, left + pw / 2, top + ph + 50, options.x_label, Align::center);
  if (!options.y_label.empty()) {
    cairo_save(cr);
    cairo_translate(cr, 26, top + ph / 2);
    cairo_rotate(cr, -M_PI / 2);
    text(cr, 0, 0, options.y_label, Align::center);
    cairo_restore(cr);
  }
  if (!options.title.empty()) {
    set_font(cr, 22, true);
    text(cr, W / 2, 40, options.title, Align::center);
  }
  if (!options.caption.empty()) {
    set_font(cr, 14);
    cairo_set_source_rgb(cr, 0.35, 0.35, 0.35);
    text(cr, W / 2, H - 14, options.caption, Align::center);
  }

  // The curves, clipped to the plot area (a fixed y range may cut them).
  auto marked = [](const Series& s) { return s.markers.value_or(s.x.size() <= 50); };
  auto draw_style = [&](const Series& s, std::size_t k) {
    const Rgb c = kPalette[k % std::size(kPalette)];
    cairo_set_source_rgb(cr, c.r, c.g, c.b);
    const double dash[] = {9, 6};
    cairo_set_dash(cr, dash, s.dashed ? 2 : 0, 0);
    cairo_set_line_width(cr, s.dashed ? 2 : 2.5);
    return c;
  };
  auto marker = [&](double x, double y, const Rgb& c) {
    cairo_set_dash(cr, nullptr, 0, 0);
    cairo_arc(cr, x, y, 5, 0, 2 * M_PI);
    cairo_set_source_rgb(cr, c.r, c.g, c.b);
    cairo_fill_preserve(cr);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_set_line_width(cr, 1.5);
    cairo_stroke(cr);
  };
  cairo_save(cr);
  cairo_rectangle(cr, left, top, pw, ph);
  cairo_clip(cr);
  cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
  for (std::size_t k = 0; k < series.size(); ++k) {
    const Series& s = series[k];
    draw_style(s, k);
    for (std::size_t i = 0; i < s.x.size(); ++i)
      (i ? cairo_line_to : cairo_move_to)(cr, X(s.x[i]), Y(s.y[i]));
    cairo_stroke(cr);
  }
  cairo_restore(cr);
  // Markers unclipped, so a point on the frame (the first step, the last) stays a whole dot.
  for (std::size_t k = 0; k < series.size(); ++k) {
    const Series& s = series[k];
    if (!marked(s)) continue;
    const Rgb c = kPalette[k % std::size(kPalette)];
    for (std::size_t i = 0; i < s.x.size(); ++i)
      if (s.y[i] >= y0 && s.y[i] <= y1) marker(X(s.x[i]), Y(s.y[i]), c);
  }

  // The legend, inside the plot on a white box, where options.legend says (matplotlib's loc).
  set_font(cr, 16);
  double legend_w = 0;
  int rows = 0;
  for (const Series& s : series)
    if (!s.label.empty()) {
      legend_w = std::max(legend_w, text_width(cr, s.label));
      ++rows;
    }
  if (rows > 0 && options.legend != "none") {
    const double row_h = 26, box_w = legend_w + 68, box_h = rows * row_h + 10, pad = 10;
    // matplotlib's locations, in its order (which "best" prefers on a tie); "right" and
    // "center right" are the same place.
    const double l = left + pad, r = left + pw - box_w - pad, mid_x = left + (pw - box_w) / 2;
    const double u = top + pad, d = top + ph - box_h - pad, mid_y = top + (ph - box_h) / 2;
    const std::vector<std::pair<std::string, std::pair<double, double>>> places = {
        {"upper right", {r, u}},      {"upper left", {l, u}},       {"lower left", {l, d}},
        {"lower right", {r, d}},      {"right", {r, mid_y}},        {"center left", {l, mid_y}},
        {"center right", {r, mid_y}}, {"lower center", {mid_x, d}}, {"upper center", {mid_x, u}},
        {"center", {mid_x, mid_y}}};
    // "best": the place that covers the fewest points of the lines, sampled every 3 pixels along
    // each drawn segment (clipped to the plot, as the lines are).
    auto covered = [&](double bx, double by) {
      int n = 0;
      for (const Series& s : series)
        for (std::size_t i = 0; i < s.x.size(); ++i) {
          const double xa = X(s.x[i]), ya = std::clamp(Y(s.y[i]), top, top + ph);
          const double xb = i + 1 < s.x.size() ? X(s.x[i + 1]) : xa;
          const double yb = i + 1 < s.x.size() ? std::clamp(Y(s.y[i + 1]), top, top + ph) : ya;
          const int steps = 1 + static_cast<int>(std::hypot(xb - xa, yb - ya) / 3);
          for (int k = 0; k < steps; ++k) {
            const double f = static_cast<double>(k) / steps;
            const double x = xa + (xb - xa) * f, y = ya + (yb - ya) * f;
            n += x >= bx && x <= bx + box_w && y >= by && y <= by + box_h;
          }
        }
      return n;
    };
    std::pair<double, double> at{r, u};
    if (options.legend == "best") {
      int fewest = -1;
      for (const auto& [name, xy] : places) {
        const int n = covered(xy.first, xy.second);
        if (fewest < 0 || n < fewest) {
          fewest = n;
          at = xy;
        }
      }
    } else {
      at = std::find_if(places.begin(), places.end(), [&](const auto& p) {
             return p.first == options.legend;
           })->second;
    }
    const double bx = at.first, by = at.second;
    cairo_set_source_rgba(cr, 1, 1, 1, 0.9);
    cairo_rectangle(cr, bx, by, box_w, box_h);
    cairo_fill_preserve(cr);
    cairo_set_source_rgb(cr, 0.8, 0.8, 0.8);
    cairo_set_line_width(cr, 1);
    cairo_stroke(cr);
    int row = 0;
    for (std::size_t k = 0; k < series.size(); ++k) {
      const Series& s = series[k];
      if (s.label.empty()) continue;
      const double y = by + 5 + row_h * row + row_h / 2;
      const Rgb c = draw_style(s, k);
      cairo_move_to(cr, bx + 10, y);
      cairo_line_to(cr, bx + 50, y);
      cairo_stroke(cr);
      if (marked(s)) marker(bx + 30, y, c);
      cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
      text(cr, bx + 58, y + 6, s.label);
      ++row;
    }
  }
  write_png(kOp, surface.get(), path);
}

// ---------------------------------------------------------------- attention_heatmap

void attention_heatmap(const Tensor& weights, const std::vector<std::string>& row_labels,
                       const std::vector<std::string>& col_labels, const std::string& path,
                       const std::string& title, const HeatmapOptions& options) {
  constexpr const char* kOp = "attention_heatmap";
  MG_CHECK(weights.defined(), kOp, path, ": weights is an undefined tensor");
  MG_CHECK(weights.dim() == 2 || weights.dim() == 3, kOp, path,
           ": weights must be (T_q, T_k) or (heads, T_q, T_k), got shape ", weights.shape());
  check_png_path(kOp, path);
  const std::int64_t heads = weights.dim() == 3 ? weights.size(0) : 1;
  const std::int64_t tq = weights.size(-2), tk = weights.size(-1);
  MG_CHECK(heads > 0 && tq > 0 && tk > 0, kOp, path, ": weights of shape ", weights.shape(),
           " is empty");
  MG_CHECK(static_cast<std::int64_t>(row_labels.size()) == tq &&
               static_cast<std::int64_t>(col_labels.size()) == tk,
           kOp, path, ": weights of shape ", weights.shape(), " needs ", tq, " row labels and ", tk,
           " column labels, got ", row_labels.size(), " and ", col_labels.size());
  MG_CHECK(options.panel_titles.empty() ||
               static_cast<std::int64_t>(options.panel_titles.size()) == heads,
           kOp, path, ": ", options.panel_titles.size(), " panel titles for ", heads, " heads");
  const std::vector<double> v = weights.detach().contiguous().to_vector<double>();
  check_finite(kOp, v, "weights");
  const double data_lo = *std::min_element(v.begin(), v.end());
  const double data_hi = *std::max_element(v.begin(), v.end());
  MG_CHECK(options.cmap.empty() || options.cmap == "Blues" || options.cmap == "RdBu_r", kOp, path,
           ": unknown cmap \"", options.cmap,
           "\"; expected \"Blues\", \"RdBu_r\" or \"\" (RdBu_r for "
           "signed data, else Blues)");
  // A diverging map for signed data: white at 0, the scale symmetric about it.
  const bool diverging = options.cmap == "RdBu_r" || (options.cmap.empty() && data_lo < 0);
  const double reach = std::max({std::abs(data_lo), std::abs(data_hi), 1e-300});
  const double lo = options.vmin.value_or(diverging ? -reach : std::min(0.0, data_lo));
  double hi = options.vmax.value_or(diverging ? reach : data_hi);
  if (!options.vmax && hi <= lo) hi = lo + 1;  // all equal: any scale shows them
  auto colour = [diverging](double t) { return diverging ? rdbu_r(t) : blues(t); };
  MG_CHECK(lo < hi, kOp, path, ": vmin (", lo, ") must be less than vmax (", hi, ")");
  const bool clipped_hi = data_hi > hi, clipped_lo = data_lo < lo;

  // Layout: panels in a grid, a colour bar on the right, the caption under everything.
  Surface scratch(cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 1, 1), cairo_surface_destroy);
  Context measure(cairo_create(scratch.get()), cairo_destroy);
  const double cell = std::clamp(560.0 / static_cast<double>(std::max(tq, tk)), 26.0, 72.0);
  const double label_font = cell >= 40 ? 16 : 13;
  set_font(measure.get(), label_font);
  double row_w = 0, col_w = 0;
  for (const auto& s : row_labels) row_w = std::max(row_w, text_width(measure.get(), s));
  for (const auto& s : col_labels) col_w = std::max(col_w, text_width(measure.get(), s));
  const bool rotate = col_w > cell - 6;
  const double col_h = rotate ? col_w * 0.71 + 18 : 24;
  const int grid_cols = static_cast<int>(std::ceil(std::sqrt(static_cast<double>(heads))));
  const int grid_rows = static_cast<int>((heads + grid_cols - 1) / grid_cols);
  const double panel_title_h = heads > 1 || !options.panel_titles.empty() ? 28 : 0;
  const double panel_w = 34 + row_w + 10 + cell * static_cast<double>(tk) + 30;
  const double panel_h = panel_title_h + 24 + col_h + cell * static_cast<double>(tq) + 20;
  const double top = title.empty() ? 16 : 56;
  const double bar_x = 20 + panel_w * grid_cols + 10;
  const double W = bar_x + 130;
  const double grid_h = panel_h * grid_rows;
  const double H = top + grid_h + (options.caption.empty() ? 16 : 44);

  Surface surface(
      cairo_image_surface_create(CAIRO_FORMAT_ARGB32, static_cast<int>(W), static_cast<int>(H)),
      cairo_surface_destroy);
  Context ctx(cairo_create(surface.get()), cairo_destroy);
  cairo_t* cr = ctx.get();
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  if (!title.empty()) {
    cairo_set_source_rgb(cr, 0, 0, 0);
    set_font(cr, 22, true);
    text(cr, W / 2, 38, title, Align::center);
  }
  auto scaled = [&](double a) { return (std::clamp(a, lo, hi) - lo) / (hi - lo); };
  for (std::int64_t h = 0; h < heads; ++h) {
    const double px = 20 + panel_w * static_cast<double>(h % grid_cols);
    const double py = top + panel_h * static_cast<double>(h / grid_cols);
    cairo_set_source_rgb(cr, 0, 0, 0);
    const double gx = px + 34 + row_w + 10, gy = py + panel_title_h + 24 + col_h;
    if (panel_title_h > 0) {
      set_font(cr, 18, true);
      const std::string t = options.panel_titles.empty()
                                ? "head " + std::to_string(h)
                                : options.panel_titles[static_cast<std::size_t>(h)];
      text(cr, gx + cell * static_cast<double>(tk) / 2, py + 20, t, Align::center);
    }
    set_font(cr, 14);
    cairo_set_source_rgb(cr, 0.35, 0.35, 0.35);
    text(cr, gx + cell * static_cast<double>(tk) / 2, py + panel_title_h + 16, options.x_label,
         Align::center);
    cairo_save(cr);
    cairo_translate(cr, px + 16, gy + cell * static_cast<double>(tq) / 2);
    cairo_rotate(cr, -M_PI / 2);
    text(cr, 0, 0, options.y_label, Align::center);
    cairo_restore(cr);
    set_font(cr, label_font);
    cairo_set_source_rgb(cr, 0, 0, 0);
    for (std::int64_t j = 0; j < tk; ++j) {
      const std::string& s = col_labels[static_cast<std::size_t>(j)];
      const double cx = gx + cell * (static_cast<double>(j) + 0.5);
      if (rotate) {
        cairo_save(cr);
        cairo_translate(cr, cx - 4, gy - 8);
        cairo_rotate(cr, -M_PI / 4);
        text(cr, 0, 0, s);
        cairo_restore(cr);
      } else {
        text(cr, cx, gy - 8, s, Align::center);
      }
    }
    for (std::int64_t i = 0; i < tq; ++i)
      text(cr, gx - 8, gy + cell * (static_cast<double>(i) + 0.5) + label_font / 3,
           row_labels[static_cast<std::size_t>(i)], Align::right);
    const double value_font = cell >= 60 ? 15 : cell >= 44 ? 13 : 11;
    set_font(cr, value_font);
    for (std::int64_t i = 0; i < tq; ++i)
      for (std::int64_t j = 0; j < tk; ++j) {
        const double a = v[static_cast<std::size_t>((h * tq + i) * tk + j)];
        const double t = scaled(a);
        const Rgb c = colour(t);
        const double x = gx + cell * static_cast<double>(j), y = gy + cell * static_cast<double>(i);
        cairo_set_source_rgb(cr, c.r, c.g, c.b);
        cairo_rectangle(cr, x, y, cell - 2, cell - 2);
        cairo_fill(cr);
        if (options.values && a != 0 && cell >= 30) {
          char num[16];
          std::snprintf(num, sizeof num, "%.2f", a);
          // White ink on the dark end(s) of the map, black elsewhere.
          const double ink = (diverging ? std::abs(t - 0.5) > 0.3 : t > 0.55) ? 1 : 0;
          cairo_set_source_rgb(cr, ink, ink, ink);
          text(cr, x + (cell - 2) / 2, y + (cell - 2) / 2 + value_font / 3, num, Align::center);
        }
      }
  }

  // The colour bar: the scale's whole range, with nice ticks and its two ends labelled.
  const double bar_top = top + panel_title_h + 24 + col_h;
  const double bar_h = std::max(120.0, grid_h - (panel_title_h + 24 + col_h) - 20);
  const double bar_w = 24;
  for (int k = 0; k < static_cast<int>(bar_h); ++k) {
    const Rgb c = colour(1 - k / bar_h);
    cairo_set_source_rgb(cr, c.r, c.g, c.b);
    cairo_rectangle(cr, bar_x, bar_top + k, bar_w, 1.5);
    cairo_fill(cr);
  }
  cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
  cairo_set_line_width(cr, 1);
  cairo_rectangle(cr, bar_x, bar_top, bar_w, bar_h);
  cairo_stroke(cr);
  auto bar_y = [&](double a) { return bar_top + bar_h * (1 - (a - lo) / (hi - lo)); };
  set_font(cr, 14);
  auto tick = [&](double a, const std::string& label) {
    cairo_move_to(cr, bar_x + bar_w, bar_y(a));
    cairo_line_to(cr, bar_x + bar_w + 5, bar_y(a));
    cairo_stroke(cr);
    text(cr, bar_x + bar_w + 8, bar_y(a) + 5, label);
  };
  const Ticks bt = nice_ticks(lo, hi, 5, false);
  const double near = (hi - lo) * 0.08;
  for (int i = 0; i < bt.n; ++i)
    if (bt.at(i) - lo > near && hi - bt.at(i) > near) tick(bt.at(i), bt.label(i));
  tick(hi, (clipped_hi ? "≥ " : "") + format_value(hi));
  tick(lo, (clipped_lo ? "≤ " : "") + format_value(lo));
  set_font(cr, 12);
  if (clipped_hi) text(cr, bar_x, bar_top - 10, "max " + format_value(data_hi));
  if (clipped_lo) text(cr, bar_x, bar_top + bar_h + 18, "min " + format_value(data_lo));

  if (!options.caption.empty()) {
    set_font(cr, 14);
    cairo_set_source_rgb(cr, 0.35, 0.35, 0.35);
    text(cr, W / 2, H - 16, options.caption, Align::center);
  }
  write_png(kOp, surface.get(), path);
}

}  // namespace minigrad::viz
