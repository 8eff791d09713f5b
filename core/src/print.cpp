// operator<< for Tensor, following PyTorch's torch/_tensor_str.py: the same fixed / integer /
// scientific mode choice, column width, line wrapping at linewidth, summarisation with "..."
// above threshold elements, and the dtype / grad_fn / requires_grad suffixes.
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>

#include "minigrad/autograd.h"
#include "minigrad/ops.h"
#include "tensor_impl.h"

namespace minigrad {

namespace {
PrintOptions print_options;

std::string format_double(const char* fmt, int precision, double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, precision, v);
  return buf;
}

/// The element formatter of _tensor_str.py: picks a mode from the values and pads to max_width.
struct Formatter {
  bool floating = false;
  bool int_mode = true;
  bool sci_mode = false;
  std::size_t max_width = 1;
  int precision = 4;

  Formatter(const std::vector<double>& values, Dtype dtype, int prec) : precision(prec) {
    floating = is_floating_point(dtype);
    if (!floating) {
      for (double v : values) max_width = std::max(max_width, raw(v, dtype).size());
      return;
    }
    std::vector<double> nz;
    for (double v : values)
      if (std::isfinite(v) && v != 0) nz.push_back(v);
    if (nz.empty()) return;
    double mn = INFINITY, mx = 0;
    for (double v : nz) {
      mn = std::min(mn, std::fabs(v));
      mx = std::max(mx, std::fabs(v));
      if (v != std::ceil(v)) int_mode = false;
    }
    if (int_mode) {
      if (mx / mn > 1000. || mx > 1.e8) {
        sci_mode = true;
        for (double v : nz) max_width = std::max(max_width, format_double("%.*e", precision, v).size());
      } else {
        for (double v : nz) max_width = std::max(max_width, format_double("%.*f", 0, v).size() + 1);
      }
    } else if (mx / mn > 1000. || mx > 1.e8 || mn < 1.e-4) {
      sci_mode = true;
      for (double v : nz) max_width = std::max(max_width, format_double("%.*e", precision, v).size());
    } else {
      for (double v : nz) max_width = std::max(max_width, format_double("%.*f", precision, v).size());
    }
  }

  static std::string raw(double v, Dtype dtype) {
    if (dtype == kBool) return v != 0 ? "True" : "False";
    return std::to_string(static_cast<std::int64_t>(v));
  }

  std::string format(double v, Dtype dtype) const {
    std::string s;
    if (floating) {
      if (sci_mode) s = format_double("%.*e", precision, v);
      else if (int_mode) {
        s = format_double("%.*f", 0, v);
        if (std::isfinite(v)) s += '.';
      } else s = format_double("%.*f", precision, v);
    } else {
      s = raw(v, dtype);
    }
    if (s.size() < max_width) s = std::string(max_width - s.size(), ' ') + s;
    return s;
  }
};

/// Values that will be printed (all, or the edge items of each dim when summarising).
void collect(const Tensor& t, bool summarize, std::int64_t edge, std::vector<double>& out) {
  if (t.dim() == 0) {
    out.push_back(t.item<double>());
    return;
  }
  std::int64_t n = t.shape()[0];
  auto visit = [&](std::int64_t i) {
    if (t.dim() == 1) out.push_back(t.select(0, i).item<double>());
    else collect(t.select(0, i), summarize, edge, out);
  };
  if (summarize && n > 2 * edge) {
    for (std::int64_t i = 0; i < edge; ++i) visit(i);
    for (std::int64_t i = n - edge; i < n; ++i) visit(i);
  } else {
    for (std::int64_t i = 0; i < n; ++i) visit(i);
  }
}

std::string tensor_str(const Tensor& t, std::size_t indent, bool summarize, const Formatter& f) {
  const PrintOptions& o = print_options;
  if (t.dim() == 0) return f.format(t.item<double>(), t.dtype());
  std::int64_t n = t.shape()[0];
  if (t.dim() == 1) {
    std::size_t element_length = f.max_width + 2;
    auto avail = static_cast<double>(o.linewidth) - static_cast<double>(indent);
    auto per_line = static_cast<std::size_t>(
        std::max(1.0, std::floor(avail / static_cast<double>(element_length))));
    std::vector<std::string> data;
    auto add = [&](std::int64_t i) { data.push_back(f.format(t.select(0, i).item<double>(), t.dtype())); };
    if (summarize && o.edgeitems == 0) {
      data.push_back("...");
    } else if (summarize && n > 2 * o.edgeitems) {
      for (std::int64_t i = 0; i < o.edgeitems; ++i) add(i);
      data.push_back(" ...");
      for (std::int64_t i = n - o.edgeitems; i < n; ++i) add(i);
    } else {
      for (std::int64_t i = 0; i < n; ++i) add(i);
    }
    std::string s = "[";
    for (std::size_t i = 0; i < data.size(); ++i) {
      if (i > 0 && i % per_line == 0) {
        s += ",\n";
        s.append(indent + 1, ' ');
      } else if (i > 0) {
        s += ", ";
      }
      s += data[i];
    }
    return s + "]";
  }
  std::vector<std::string> slices;
  auto add = [&](std::int64_t i) {
    slices.push_back(tensor_str(t.select(0, i), indent + 1, summarize, f));
  };
  if (summarize && n > 2 * o.edgeitems) {
    for (std::int64_t i = 0; i < o.edgeitems; ++i) add(i);
    slices.push_back("...");
    for (std::int64_t i = n - o.edgeitems; i < n; ++i) add(i);
  } else {
    for (std::int64_t i = 0; i < n; ++i) add(i);
  }
  std::string sep = ",";
  sep.append(static_cast<std::size_t>(t.dim() - 1), '\n');
  sep.append(indent + 1, ' ');
  std::string s = "[";
  for (std::size_t i = 0; i < slices.size(); ++i) {
    if (i) s += sep;
    s += slices[i];
  }
  return s + "]";
}

}  // namespace

void set_printoptions(const PrintOptions& options) { print_options = options; }
const PrintOptions& get_printoptions() { return print_options; }

std::ostream& operator<<(std::ostream& os, const Tensor& t_in) {
  if (!t_in.defined()) return os << "[ Tensor (undefined) ]";
  NoGradGuard no_grad;
  Tensor t = t_in.detach();
  const std::size_t indent = 7;  // strlen("tensor(")
  std::vector<std::string> suffixes;
  std::string body;
  std::string dtype_suffix = std::string("dtype=torch.") + dtype_name(t.dtype());
  if (t.numel() == 0) {
    if (t.dim() != 1) {
      std::string size = "size=(";
      for (std::int64_t i = 0; i < t.dim(); ++i) {
        if (i) size += ", ";
        size += std::to_string(t.shape()[i]);
      }
      suffixes.push_back(size + (t.dim() == 1 ? ",)" : ")"));
    }
    if (t.dtype() != kFloat32) suffixes.push_back(dtype_suffix);
    body = "[]";
  } else {
    if (t.dtype() == kFloat64) suffixes.push_back(dtype_suffix);
    bool summarize = t.numel() > print_options.threshold;
    std::vector<double> values;
    collect(t, summarize, print_options.edgeitems, values);
    Formatter f(values, t.dtype(), print_options.precision);
    body = tensor_str(t, indent, summarize, f);
  }
  if (t_in.grad_fn()) suffixes.push_back("grad_fn=<" + t_in.grad_fn()->name() + ">");
  else if (t_in.requires_grad()) suffixes.push_back("requires_grad=True");

  std::string out = body;
  auto nl = body.rfind('\n');
  // As _add_suffixes: len(tensor_str) - rfind('\n') + 1, where rfind is -1 without a newline.
  std::size_t last_line_len = nl == std::string::npos ? body.size() + 2 : body.size() - nl + 1;
  for (const auto& s : suffixes) {
    if (last_line_len + s.size() + 2 > static_cast<std::size_t>(print_options.linewidth)) {
      out += ",\n";
      out.append(indent, ' ');
      out += s;
      last_line_len = indent + s.size();
    } else {
      out += ", " + s;
      last_line_len += s.size() + 2;
    }
  }
  return os << "tensor(" << out << ")";
}

}  // namespace minigrad
