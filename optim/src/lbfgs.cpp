#include "minigrad/optim/lbfgs.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "minigrad/ops/creation.h"
#include "minigrad/ops/elementwise.h"
#include "minigrad/ops/shape.h"

namespace minigrad::optim {

template class OptimizerWithOptions<LBFGSOptions>;

namespace {

double dot(const Tensor& a, const Tensor& b) { return (a * b).sum().item<double>(); }
double abs_max(const Tensor& a) { return a.abs().max().item<double>(); }

// torch/optim/lbfgs.py, _cubic_interpolate: the minimiser of the cubic through (x1, f1, g1) and
// (x2, f2, g2), clamped to the bounds (default: [min(x1, x2), max(x1, x2)]).
double cubic_interpolate(double x1, double f1, double g1, double x2, double f2, double g2,
                         const double* bounds = nullptr) {
  double xmin_bound, xmax_bound;
  if (bounds) {
    xmin_bound = bounds[0];
    xmax_bound = bounds[1];
  } else {
    xmin_bound = x1 <= x2 ? x1 : x2;
    xmax_bound = x1 <= x2 ? x2 : x1;
  }
  const double d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2);
  const double d2_square = d1 * d1 - g1 * g2;
  if (d2_square >= 0) {
    const double d2 = std::sqrt(d2_square);
    const double min_pos = x1 <= x2 ? x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
                                    : x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2));
    return std::min(std::max(min_pos, xmin_bound), xmax_bound);
  }
  return (xmin_bound + xmax_bound) / 2.;
}

}  // namespace

namespace {
// PyTorch's `max_eval = max_iter * 5 // 4` when max_eval is None (0 here).
LBFGSOptions with_max_eval(LBFGSOptions o) {
  if (o.max_eval() == 0) o.max_eval(o.max_iter() * 5 / 4);
  return o;
}
}  // namespace

LBFGS::LBFGS(std::vector<Tensor> params, const LBFGSOptions& defaults)
    : OptimizerWithOptions("LBFGS", with_max_eval(defaults)) {
  init(std::move(params));
}

void LBFGS::check_options(const LBFGSOptions& o) const {
  MG_CHECK(o.lr() >= 0, "LBFGS", "Invalid learning rate: ", o.lr(), " (must be >= 0)");
  MG_CHECK(o.max_iter() > 0, "LBFGS", "invalid max_iter value: ", o.max_iter(), " (must be > 0)");
  MG_CHECK(o.max_eval() > 0, "LBFGS", "invalid max_eval value: ", o.max_eval(), " (must be > 0)");
  MG_CHECK(o.history_size() > 0, "LBFGS", "invalid history_size value: ", o.history_size(),
           " (must be > 0)");
  MG_CHECK(o.line_search_fn().empty() || o.line_search_fn() == "strong_wolfe", "LBFGS",
           "only 'strong_wolfe' is supported as line_search_fn, got \"", o.line_search_fn(), "\"");
}

Tensor LBFGS::gather_flat_grad() const {
  std::vector<Tensor> views;
  for (const Tensor& p : param_groups()[0].params()) {
    const Tensor g = p.grad();
    views.push_back(g.defined() ? g.reshape({-1}) : zeros({p.numel()}, p.dtype()));
  }
  return cat(views, 0);
}

void LBFGS::add_grad(double step_size, const Tensor& update) {
  std::int64_t offset = 0;
  for (Tensor& p : param_groups()[0].params()) {
    const std::int64_t numel = p.numel();
    p.copy_(p + update.narrow(0, offset, numel).reshape(p.shape()) * step_size);
    offset += numel;
  }
}

std::pair<double, Tensor> LBFGS::directional_evaluate(const LossClosure& closure,
                                                      const std::vector<Tensor>& x, double t,
                                                      const Tensor& d) {
  add_grad(t, d);
  const double loss = evaluate_closure(closure).item<double>();
  Tensor flat_grad = gather_flat_grad();
  std::vector<Tensor>& params = param_groups()[0].params();
  for (std::size_t i = 0; i < params.size(); ++i) params[i].copy_(x[i]);
  return {loss, flat_grad};
}

// torch/optim/lbfgs.py, _strong_wolfe (c1 = 1e-4, c2 = 0.9, max_ls = 25), line for line.
LBFGS::LineSearchResult LBFGS::strong_wolfe(const LossClosure& closure,
                                            const std::vector<Tensor>& x, double t, const Tensor& d,
                                            double f, const Tensor& g_in, double gtd,
                                            double tolerance_change) {
  constexpr double c1 = 1e-4, c2 = 0.9;
  constexpr std::int64_t max_ls = 25;
  const double d_norm = abs_max(d);
  const Tensor g = g_in.clone();
  auto [f_new, g_new] = directional_evaluate(closure, x, t, d);
  std::int64_t ls_func_evals = 1;
  double gtd_new = dot(g_new, d);

  double t_prev = 0, f_prev = f, gtd_prev = gtd;
  Tensor g_prev = g;
  bool done = false;
  std::int64_t ls_iter = 0;
  std::vector<double> bracket, bracket_f, bracket_gtd;
  std::vector<Tensor> bracket_g;
  while (ls_iter < max_ls) {
    if (f_new > (f + c1 * t * gtd) || (ls_iter > 1 && f_new >= f_prev)) {
      bracket = {t_prev, t};
      bracket_f = {f_prev, f_new};
      bracket_g = {g_prev, g_new.clone()};
      bracket_gtd = {gtd_prev, gtd_new};
      break;
    }
    if (std::abs(gtd_new) <= -c2 * gtd) {
      bracket = {t};
      bracket_f = {f_new};
      bracket_g = {g_new};
      done = true;
      break;
    }
    if (gtd_new >= 0) {
      bracket = {t_prev, t};
      bracket_f = {f_prev, f_new};
      bracket_g = {g_prev, g_new.clone()};
      bracket_gtd = {gtd_prev, gtd_new};
      break;
    }
    // interpolate
    const double bounds[2] = {t + 0.01 * (t - t_prev), t * 10};
    const double tmp = t;
    t = cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds);
    // next step
    t_prev = tmp;
    f_prev = f_new;
    g_prev = g_new.clone();
    gtd_prev = gtd_new;
    std::tie(f_new, g_new) = directional_evaluate(closure, x, t, d);
    ++ls_func_evals;
    gtd_new = dot(g_new, d);
    ++ls_iter;
  }
  // reached max number of iterations?
  if (ls_iter == max_ls) {
    bracket = {0, t};
    bracket_f = {f, f_new};
    bracket_g = {g, g_new};
  }

  // zoom phase: refine the bracket until a point satisfies the criteria.
  bool insuf_progress = false;
  std::size_t low_pos = bracket_f[0] <= bracket_f.back() ? 0 : 1;
  std::size_t high_pos = 1 - low_pos;
  while (!done && ls_iter < max_ls) {
    // line-search bracket is so small
    if (std::abs(bracket[1] - bracket[0]) * d_norm < tolerance_change) break;
    // compute new trial value
    t = cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1],
                          bracket_gtd[1]);
    // test that we are making sufficient progress
    const double hi = std::max(bracket[0], bracket[1]), lo = std::min(bracket[0], bracket[1]);
    const double eps = 0.1 * (hi - lo);
    if (std::min(hi - t, t - lo) < eps) {
      // interpolation close to boundary
      if (insuf_progress || t >= hi || t <= lo) {
        // evaluate at 0.1 away from boundary
        t = std::abs(t - hi) < std::abs(t - lo) ? hi - eps : lo + eps;
        insuf_progress = false;
      } else {
        insuf_progress = true;
      }
    } else {
      insuf_progress = false;
    }
    // Evaluate new point
    std::tie(f_new, g_new) = directional_evaluate(closure, x, t, d);
    ++ls_func_evals;
    gtd_new = dot(g_new, d);
    ++ls_iter;

    if (f_new > (f + c1 * t * gtd) || f_new >= bracket_f[low_pos]) {
      // Armijo condition not satisfied or not lower than lowest point
      bracket[high_pos] = t;
      bracket_f[high_pos] = f_new;
      bracket_g[high_pos] = g_new.clone();
      bracket_gtd[high_pos] = gtd_new;
      low_pos = bracket_f[0] <= bracket_f[1] ? 0 : 1;
      high_pos = 1 - low_pos;
    } else {
      if (std::abs(gtd_new) <= -c2 * gtd) {
        done = true;  // Wolfe conditions satisfied
      } else if (gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0) {
        // old high becomes new low
        bracket[high_pos] = bracket[low_pos];
        bracket_f[high_pos] = bracket_f[low_pos];
        bracket_g[high_pos] = bracket_g[low_pos];
        bracket_gtd[high_pos] = bracket_gtd[low_pos];
      }
      // new point becomes new low
      bracket[low_pos] = t;
      bracket_f[low_pos] = f_new;
      bracket_g[low_pos] = g_new.clone();
      bracket_gtd[low_pos] = gtd_new;
    }
  }
  return {bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals};
}

// torch/optim/lbfgs.py, LBFGS.step.
Tensor LBFGS::step(LossClosure closure) {
  MG_CHECK(closure != nullptr, "LBFGS.step",
           "LBFGS needs a closure that re-evaluates the loss: opt.step([&] { opt.zero_grad(); "
           "Tensor loss = ...; loss.backward(); return loss; })");
  MG_CHECK(num_param_groups() == 1, "LBFGS.step",
           "LBFGS doesn't support per-parameter options (parameter groups), got ",
           num_param_groups(), " groups");
  NoGradGuard no_grad;
  const LBFGSOptions o = options_of(param_groups()[0]);
  const std::vector<Tensor>& params = param_groups()[0].params();

  // NOTE: as PyTorch, the counters are the first parameter's state.
  ParamState& state = this->state(params[0]);
  if (state.empty()) {
    state["func_evals"] = scalar_tensor(0, kInt64);
    state["n_iter"] = scalar_tensor(0, kInt64);
  }
  auto counter = [&](const char* key) { return state[key].item<std::int64_t>(); };
  auto add_to = [&](const char* key, std::int64_t n) { state[key].fill_(counter(key) + n); };

  // evaluate initial f(x) and df/dx
  const Tensor orig_loss = evaluate_closure(closure);
  double loss = orig_loss.item<double>();
  std::int64_t current_evals = 1;
  add_to("func_evals", 1);
  check_gradients();

  Tensor flat_grad = gather_flat_grad();
  bool opt_cond = abs_max(flat_grad) <= o.tolerance_grad();
  if (opt_cond) return orig_loss;  // optimal condition

  Tensor d = d_;
  double t = t_;
  std::vector<double> al(static_cast<std::size_t>(o.history_size()));
  std::int64_t n_iter = 0;
  while (n_iter < o.max_iter()) {
    ++n_iter;
    add_to("n_iter", 1);

    // compute gradient descent direction
    if (counter("n_iter") == 1 || !d.defined()) {
      d = -flat_grad;
      old_dirs_.clear();
      old_stps_.clear();
      ro_.clear();
      H_diag_ = 1;
    } else {
      // do lbfgs update (update memory)
      const Tensor y = flat_grad - prev_flat_grad_;
      const Tensor s = d * t;
      const double ys = dot(y, s);
      if (ys > 1e-10) {
        if (static_cast<std::int64_t>(old_dirs_.size()) == o.history_size()) {
          // shift history by one (limited-memory)
          old_dirs_.erase(old_dirs_.begin());
          old_stps_.erase(old_stps_.begin());
          ro_.erase(ro_.begin());
        }
        old_dirs_.push_back(y);
        old_stps_.push_back(s);
        ro_.push_back(1. / ys);
        H_diag_ = ys / dot(y, y);  // update scale of initial Hessian approximation
      }
      // the approximate (L-BFGS) inverse Hessian times the gradient, in one buffer
      const std::size_t num_old = old_dirs_.size();
      if (al.size() < num_old) al.resize(num_old);
      Tensor q = -flat_grad;
      for (std::size_t i = num_old; i-- > 0;) {
        al[i] = dot(old_stps_[i], q) * ro_[i];
        q = q + old_dirs_[i] * -al[i];
      }
      Tensor r = q * H_diag_;  // multiply by initial Hessian
      for (std::size_t i = 0; i < num_old; ++i) {
        const double be_i = dot(old_dirs_[i], r) * ro_[i];
        r = r + old_stps_[i] * (al[i] - be_i);
      }
      d = r;
    }
    prev_flat_grad_ = flat_grad.clone();
    prev_loss_ = loss;

    // compute step length: reset initial guess for step size
    if (counter("n_iter") == 1) {
      t = std::min(1., 1. / flat_grad.abs().sum().item<double>()) * o.lr();
    } else {
      t = o.lr();
    }
    // directional derivative
    const double gtd = dot(flat_grad, d);
    if (gtd > -o.tolerance_change()) break;  // directional derivative is below tolerance

    std::int64_t ls_func_evals = 0;
    if (o.line_search_fn() == "strong_wolfe") {
      std::vector<Tensor> x_init;
      for (const Tensor& p : params) x_init.push_back(p.clone());
      LineSearchResult ls =
          strong_wolfe(closure, x_init, t, d, loss, flat_grad, gtd, o.tolerance_change());
      loss = ls.loss;
      flat_grad = ls.flat_grad;
      t = ls.t;
      ls_func_evals = ls.func_evals;
      add_grad(t, d);
      opt_cond = abs_max(flat_grad) <= o.tolerance_grad();
    } else {
      // no line search, simply move with fixed-step
      add_grad(t, d);
      if (n_iter != o.max_iter()) {
        // re-evaluate function only if not in last iteration
        loss = evaluate_closure(closure).item<double>();
        flat_grad = gather_flat_grad();
        opt_cond = abs_max(flat_grad) <= o.tolerance_grad();
        ls_func_evals = 1;
      }
    }
    current_evals += ls_func_evals;
    add_to("func_evals", ls_func_evals);

    // check conditions
    if (n_iter == o.max_iter()) break;
    if (current_evals >= o.max_eval()) break;
    if (opt_cond) break;                                // optimal condition
    if (abs_max(d * t) <= o.tolerance_change()) break;  // lack of progress
    if (std::abs(loss - prev_loss_) < o.tolerance_change()) break;
  }
  d_ = d;
  t_ = t;
  return orig_loss;
}

}  // namespace minigrad::optim
