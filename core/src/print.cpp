// operator<< for Tensor, a port of PyTorch 1.13's torch/_tensor_str.py: the same fixed / integer /
// scientific mode choice, column width, line wrapping at linewidth, summarisation with "..."
// above threshold elements, and the dtype / grad_fn / requires_grad suffixes.
//
// NOTE: PyTorch formats every element as a Python float (a double), so float32 elements are
// widened to double before formatting. printf's %.*f / %.*e round the exact binary value
// correctly, as Python's format() does, so the digits agree.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include "minigrad/autograd.h"
#include "minigrad/ops/creation.h"
#include "minigrad/ops/elementwise.h"
#include "tensor_impl.h"

namespace minigrad {

namespace {

PrintOptions print_options;

/// printf-style formatting of a finite or non-finite double, spelled as Python spells it
/// ("nan", "inf", "-inf": never "-nan").
std::string format_double(const char* fmt, int precision, double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  int n = std::snprintf(nullptr, 0, fmt, precision, v);
  std::string s(static_cast<std::size_t>(n) + 1, '\0');
  std::snprintf(s.data(), s.size(), fmt, precision, v);
  s.resize(static_cast<std::size_t>(n));
  return s;
}

/// Reads elements of a strided tensor by storage offset (in elements), whatever its dtype.
struct Reader {
  const TensorImpl* impl;

  double as_double(std::int64_t off) const {
    const auto* base = static_cast<const char*>(impl->storage->data);
    switch (impl->dtype) {
      case Dtype::Float32:
        return static_cast<double>(reinterpret_cast<const float*>(base)[off]);
      case Dtype::Float64:
        return reinterpret_cast<const double*>(base)[off];
      case Dtype::Int64:
        return static_cast<double>(reinterpret_cast<const std::int64_t*>(base)[off]);
      case Dtype::Bool:
        return reinterpret_cast<const bool*>(base)[off] ? 1.0 : 0.0;
    }
    return 0.0;
  }
  /// Python's "{}".format(value) for an int64 or bool element.
  std::string as_python_str(std::int64_t off) const {
    const auto* base = static_cast<const char*>(impl->storage->data);
    if (impl->dtype == Dtype::Bool)
      return reinterpret_cast<const bool*>(base)[off] ? "True" : "False";
    return std::to_string(reinterpret_cast<const std::int64_t*>(base)[off]);
  }
};

/// n > 2 * edge, without computing 2 * edge (edgeitems may be as large as INT64_MAX).
bool more_than_twice(std::int64_t n, std::int64_t edge) { return edge < n && n - edge > edge; }

/// The indices printed along a dim of size n: all of them, or the edge items when summarising.
/// NOTE: with edgeitems == 0 PyTorch's self[-0:] selects the whole last dim, and its stack() of
/// no rows fails for the outer dims; we keep the first and print "[...]" for the second.
std::vector<std::int64_t> shown_indices(std::int64_t n, bool summarize, bool last_dim) {
  const std::int64_t edge = print_options.edgeitems;
  std::vector<std::int64_t> idx;
  if (summarize && more_than_twice(n, edge)) {
    if (edge == 0 && last_dim) {
      for (std::int64_t i = 0; i < n; ++i) idx.push_back(i);
      return idx;
    }
    for (std::int64_t i = 0; i < edge; ++i) idx.push_back(i);
    for (std::int64_t i = n - edge; i < n; ++i) idx.push_back(i);
  } else {
    for (std::int64_t i = 0; i < n; ++i) idx.push_back(i);
  }
  return idx;
}

/// Offsets of the elements the formatter looks at (get_summarized_data in _tensor_str.py).
void collect(const TensorImpl& t, std::size_t d, std::int64_t off, bool summarize,
             std::vector<std::int64_t>& out) {
  if (d == t.shape.size()) {
    out.push_back(off);
    return;
  }
  for (std::int64_t i : shown_indices(t.shape[d], summarize, d + 1 == t.shape.size()))
    collect(t, d + 1, off + i * t.strides[d], summarize, out);
}

/// _Formatter of _tensor_str.py: picks a mode from the shown values and pads to max_width.
class Formatter {
 public:
  Formatter(const TensorImpl& t, const std::vector<std::int64_t>& offsets)
      : reader_{&t}, floating_(is_floating_point(t.dtype)), precision_(print_options.precision) {
    if (!floating_) {
      for (auto off : offsets) max_width_ = std::max(max_width_, reader_.as_python_str(off).size());
      return;
    }
    std::vector<double> nz;
    for (auto off : offsets) {
      double v = reader_.as_double(off);
      if (std::isfinite(v) && v != 0) nz.push_back(v);
    }
    if (nz.empty()) return;
    double mn = INFINITY, mx = 0;
    for (double v : nz) {
      mn = std::min(mn, std::fabs(v));
      mx = std::max(mx, std::fabs(v));
      if (v != std::ceil(v)) int_mode_ = false;
    }
    const char* fmt = "%.*f";
    int prec = precision_;
    std::size_t extra = 0;
    if (int_mode_) {
      // Integral floats print as "3." (hence the + 1) unless the range calls for exponents.
      if (mx / mn > 1000. || mx > 1.e8) {
        sci_mode_ = true;
        fmt = "%.*e";
      } else {
        prec = 0;
        extra = 1;
      }
    } else if (mx / mn > 1000. || mx > 1.e8 || mn < 1.e-4) {
      sci_mode_ = true;
      fmt = "%.*e";
    }
    for (double v : nz)
      max_width_ = std::max(max_width_, format_double(fmt, prec, v).size() + extra);
  }

  std::size_t width() const { return max_width_; }

  std::string format(std::int64_t off) const {
    std::string s;
    if (!floating_) {
      s = reader_.as_python_str(off);
    } else {
      double v = reader_.as_double(off);
      if (sci_mode_) {
        s = format_double("%.*e", precision_, v);
      } else if (int_mode_) {
        s = format_double("%.*f", 0, v);
        if (std::isfinite(v)) s += '.';
      } else {
        s = format_double("%.*f", precision_, v);
      }
    }
    if (s.size() < max_width_) s.insert(0, max_width_ - s.size(), ' ');
    return s;
  }

 private:
  Reader reader_;
  bool floating_;
  bool int_mode_ = true;
  bool sci_mode_ = false;
  std::size_t max_width_ = 1;
  int precision_;
};

/// _vector_str: one row, wrapped every elements_per_line items.
std::string vector_str(const TensorImpl& t, std::size_t d, std::int64_t off, std::size_t indent,
                       bool summarize, const Formatter& f) {
  const std::int64_t n = t.shape[d];
  const std::int64_t stride = t.strides[d];
  const std::int64_t edge = print_options.edgeitems;
  const std::int64_t element_length = static_cast<std::int64_t>(f.width()) + 2;
  const std::int64_t avail = print_options.linewidth - static_cast<std::int64_t>(indent);
  // Python's floor division rounds towards -infinity.
  std::int64_t q = avail / element_length;
  if (avail % element_length != 0 && avail < 0) --q;
  const auto per_line = static_cast<std::size_t>(std::max<std::int64_t>(1, q));

  std::vector<std::string> data;
  if (summarize && more_than_twice(n, edge)) {
    for (std::int64_t i = 0; i < edge; ++i) data.push_back(f.format(off + i * stride));
    data.emplace_back(" ...");
    // self[-edge:] is the whole row when edge is 0.
    for (std::int64_t i = edge == 0 ? 0 : n - edge; i < n; ++i)
      data.push_back(f.format(off + i * stride));
  } else {
    for (std::int64_t i = 0; i < n; ++i) data.push_back(f.format(off + i * stride));
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

/// _tensor_str_with_formatter: nested brackets, one blank line per extra dim between slices.
std::string tensor_str(const TensorImpl& t, std::size_t d, std::int64_t off, std::size_t indent,
                       bool summarize, const Formatter& f) {
  const std::size_t ndim = t.shape.size();
  if (ndim == 0) return f.format(off);
  if (d + 1 == ndim) return vector_str(t, d, off, indent, summarize, f);
  const std::int64_t n = t.shape[d];
  const std::int64_t edge = print_options.edgeitems;
  std::vector<std::string> slices;
  auto add = [&](std::int64_t i) {
    slices.push_back(tensor_str(t, d + 1, off + i * t.strides[d], indent + 1, summarize, f));
  };
  if (summarize && more_than_twice(n, edge)) {
    for (std::int64_t i = 0; i < edge; ++i) add(i);
    slices.emplace_back("...");
    for (std::int64_t i = n - edge; i < n; ++i) add(i);
  } else {
    for (std::int64_t i = 0; i < n; ++i) add(i);
  }
  std::string sep = ",";
  sep.append(ndim - d - 1, '\n');
  sep.append(indent + 1, ' ');
  std::string s = "[";
  for (std::size_t i = 0; i < slices.size(); ++i) {
    if (i) s += sep;
    s += slices[i];
  }
  return s + "]";
}

}  // namespace

void set_printoptions(const PrintOptions& options) {
  MG_CHECK(options.precision >= 0, "set_printoptions", "precision must be non-negative, got ",
           options.precision);
  MG_CHECK(options.threshold >= 0, "set_printoptions", "threshold must be non-negative, got ",
           options.threshold);
  MG_CHECK(options.edgeitems >= 0, "set_printoptions", "edgeitems must be non-negative, got ",
           options.edgeitems);
  MG_CHECK(options.linewidth > 0, "set_printoptions", "linewidth must be positive, got ",
           options.linewidth);
  print_options = options;
}
const PrintOptions& get_printoptions() { return print_options; }

constexpr std::size_t kMaxPrintedDims = 64;

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "[ Tensor (undefined) ]";
  const TensorImpl& impl = *t.impl();
  const std::string prefix = "tensor(";
  const std::size_t indent = prefix.size();
  const std::string dtype_suffix = std::string("dtype=torch.") + dtype_name(impl.dtype);
  std::vector<std::string> suffixes;
  std::string body;
  if (impl.numel == 0) {
    // NumPy-style: the size is shown unless it is (0,), and the dtype unless it is the default.
    if (impl.shape.size() != 1) suffixes.push_back("size=" + detail::shape_str(impl.shape));
    if (impl.dtype != kFloat32) suffixes.push_back(dtype_suffix);
    body = "[]";
  } else if (impl.shape.size() > kMaxPrintedDims) {
    // The printer recurses once per dim: a tensor of 100,000 dims (a hostile .npy file) would
    // overflow the stack. No PyTorch op makes more than 64 dims.
    body = "[... " + std::to_string(impl.shape.size()) + " dims, more than the " +
           std::to_string(kMaxPrintedDims) + " the printer shows ...]";
  } else {
    // float32, int64 and bool are PyTorch's "default" dtypes, which go unnamed.
    if (impl.dtype == kFloat64) suffixes.push_back(dtype_suffix);
    const bool summarize = impl.numel > print_options.threshold;
    std::vector<std::int64_t> offsets;
    collect(impl, 0, impl.offset, summarize, offsets);
    Formatter f(impl, offsets);
    body = tensor_str(impl, 0, impl.offset, indent, summarize, f);
  }
  if (auto fn = t.grad_fn()) {
    suffixes.push_back("grad_fn=<" + fn->name() + ">");
  } else if (t.requires_grad()) {
    suffixes.push_back("requires_grad=True");
  }

  // _add_suffixes: the length of the last line counts "tensor(" when there is a single line;
  // like PyTorch, it is two more than the real length.
  std::string out = prefix + body;
  const auto nl = out.rfind('\n');
  std::size_t last_line_len = nl == std::string::npos ? out.size() + 2 : out.size() - nl + 1;
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
  return os << out << ")";
}

}  // namespace minigrad
