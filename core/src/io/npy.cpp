// NumPy's .npy format (numpy/lib/format.py): "\x93NUMPY", major and minor version bytes, the header
// length (2 bytes little-endian in 1.0, 4 bytes in 2.0 and 3.0), the header (a Python dict literal
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded with spaces and a newline so
// the data starts 64-byte aligned), then the raw data.
#include <algorithm>
#include <cctype>

#include "io/file_io.h"
#include "minigrad/io.h"
#include "tensor_impl.h"

namespace minigrad {
namespace {

constexpr const char* kSave = "save_npy";
constexpr const char* kLoad = "load_npy";
constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicLen = 6;
// numpy.load refuses headers over 10000 bytes by default (max_header_size); so do we: a bound
// before allocating, and on the header text quoted in error messages. np.save never writes a
// larger header for the dtypes read here.
constexpr std::uint64_t kMaxHeader = 10'000;
// NumPy's NPY_MAXDIMS: more dims make a tensor that printing and indexing recurse over.
constexpr std::size_t kMaxDims = 64;

const char* npy_descr(Dtype dtype) {
  switch (dtype) {
    case kBool:
      return "|b1";
    case kInt64:
      return "<i8";
    case kFloat32:
      return "<f4";
    case kFloat64:
      return "<f8";
  }
  return "?";
}

// A reader for the header's Python literal: a dict of str keys whose values are str, bool or a
// tuple of ints. Errors name the file.
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& path) : s_(text), path_(path) {}

  struct Header {
    std::string descr;
    bool fortran_order = false;
    Shape shape;
  };

  Header parse() {
    Header h;
    bool has_descr = false, has_order = false, has_shape = false;
    expect('{');
    while (true) {
      skip_ws();
      if (peek() == '}') break;
      const std::string key = string_literal();
      expect(':');
      if (key == "descr") {
        h.descr = string_literal();
        has_descr = true;
      } else if (key == "fortran_order") {
        h.fortran_order = bool_literal();
        has_order = true;
      } else if (key == "shape") {
        h.shape = int_tuple();
        has_shape = true;
      } else {
        fail("unknown header key '" + key + "'");
      }
      skip_ws();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      skip_ws();
      if (peek() != '}') fail("expected ',' or '}'");
    }
    ++i_;
    skip_ws();
    if (i_ != s_.size()) fail("unexpected text after the header dict");
    if (!has_descr || !has_order || !has_shape)
      fail("the header must have 'descr', 'fortran_order' and 'shape'");
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    MG_ERROR(kLoad, path_, ": invalid header: ", what, " at character ", i_, " of \"", s_, "\"");
  }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void skip_ws() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  void expect(char c) {
    skip_ws();
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++i_;
  }
  std::string string_literal() {
    skip_ws();
    const char q = peek();
    if (q != '\'' && q != '"') fail("expected a string");
    const std::size_t end = s_.find(q, i_ + 1);
    if (end == std::string::npos) fail("unterminated string");
    std::string out = s_.substr(i_ + 1, end - i_ - 1);
    i_ = end + 1;
    return out;
  }
  bool bool_literal() {
    skip_ws();
    if (s_.compare(i_, 4, "True") == 0) {
      i_ += 4;
      return true;
    }
    if (s_.compare(i_, 5, "False") == 0) {
      i_ += 5;
      return false;
    }
    fail("expected True or False");
  }
  Shape int_tuple() {
    Shape out;
    expect('(');
    while (true) {
      skip_ws();
      if (peek() == ')') break;
      if (!std::isdigit(static_cast<unsigned char>(peek()))) fail("expected a non-negative size");
      std::int64_t v = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, s_[i_] - '0', &v))
          fail("size too large");
        ++i_;
      }
      MG_CHECK(out.size() < kMaxDims, kLoad, path_, ": the shape has more than the limit of ",
               kMaxDims, " dims");
      out.push_back(v);
      skip_ws();
      if (peek() == ',') {
        ++i_;
      } else if (peek() != ')') {
        fail("expected ',' or ')'");
      }
    }
    ++i_;
    return out;
  }

  const std::string& s_;
  const std::string& path_;
  std::size_t i_ = 0;
};

}  // namespace

void save_npy(const std::string& path, const Tensor& tensor) {
  MG_CHECK(tensor.defined(), kSave, path, ": the tensor is undefined");
  // numpy's _write_array_header: keys sorted, repr of the values, spare spaces so the first
  // dimension can grow in place, then spaces and '\n' up to a multiple of 64 bytes.
  const Shape& shape = tensor.shape();
  std::string dict = std::string("{'descr': '") + npy_descr(tensor.dtype()) +
                     "', 'fortran_order': False, 'shape': (";
  for (std::size_t i = 0; i < shape.size(); ++i) dict += (i ? ", " : "") + std::to_string(shape[i]);
  dict += shape.size() == 1 ? ",)" : ")";
  dict += ", }";
  if (!shape.empty()) dict.append(21 - std::to_string(shape[0]).size(), ' ');

  auto wrap = [&](std::size_t len_bytes) {
    const std::size_t hlen = dict.size() + 1;
    const std::size_t padlen = 64 - (8 + len_bytes + hlen) % 64;
    return std::pair{hlen + padlen, padlen};
  };
  int major = 1;
  std::size_t len_bytes = 2;
  if (wrap(2).first > 65535) {
    major = 2;
    len_bytes = 4;
  }
  const auto [total, padlen] = wrap(len_bytes);
  std::string prefix(kMagic, kMagicLen);
  prefix += static_cast<char>(major);
  prefix += '\0';
  for (std::size_t i = 0; i < len_bytes; ++i)
    prefix += static_cast<char>((total >> (8 * i)) & 0xff);
  std::string text = prefix + dict + std::string(padlen, ' ') + "\n";

  detail::AtomicOutputFile file(path, kSave);
  file.write(text.data(), text.size());
  detail::write_tensor_data(file, tensor);
  file.commit();
}

Tensor load_npy(const std::string& path) {
  detail::InputFile file(path, kLoad);
  const std::uint64_t size = file.size();
  MG_CHECK(size >= 10, kLoad, path, ": file has ", size, " bytes, too short for a .npy header");
  unsigned char pre[12] = {};
  file.read(0, pre, 8);
  MG_CHECK(std::equal(pre, pre + kMagicLen, reinterpret_cast<const unsigned char*>(kMagic)), kLoad,
           path, ": not a .npy file (the magic string \\x93NUMPY is missing)");
  const int major = pre[6], minor = pre[7];
  MG_CHECK((major == 1 || major == 2 || major == 3) && minor == 0, kLoad, path,
           ": unsupported format version ", major, ".", minor, " (minigrad reads 1.0, 2.0, 3.0)");
  const std::uint64_t len_bytes = major == 1 ? 2 : 4;
  MG_CHECK(size >= 8 + len_bytes, kLoad, path, ": file has ", size,
           " bytes, too short for a .npy header");
  file.read(8, pre + 8, len_bytes);
  std::uint64_t hlen = 0;
  for (std::uint64_t i = 0; i < len_bytes; ++i)
    hlen |= static_cast<std::uint64_t>(pre[8 + i]) << (8 * i);
  const std::uint64_t data_start = 8 + len_bytes + hlen;
  MG_CHECK(hlen <= size - 8 - len_bytes, kLoad, path, ": header length ", hlen,
           " exceeds file size ", size);
  MG_CHECK(hlen <= kMaxHeader, kLoad, path, ": header length ", hlen, " exceeds the limit of ",
           kMaxHeader, " bytes");
  std::string text(hlen, '\0');
  file.read(8 + len_bytes, text.data(), hlen);
  const HeaderParser::Header h = HeaderParser(text, path).parse();

  Dtype dtype;
  if (h.descr == "<f4")
    dtype = kFloat32;
  else if (h.descr == "<f8")
    dtype = kFloat64;
  else if (h.descr == "<i8")
    dtype = kInt64;
  else if (h.descr == "|b1")
    dtype = kBool;
  else
    MG_ERROR(kLoad, path, ": unsupported dtype '", h.descr,
             "' (minigrad reads '<f4', '<f8', '<i8' and '|b1')");
  std::uint64_t nbytes = 0;
  MG_CHECK(detail::checked_nbytes(h.shape, dtype, nbytes), kLoad, path, ": shape ", h.shape,
           " is too large");
  MG_CHECK(nbytes == size - data_start, kLoad, path, ": shape ", h.shape, " '", h.descr, "' needs ",
           nbytes, " bytes of data but the file has ", size - data_start);
  if (!h.fortran_order)
    return detail::read_tensor_data(file, data_start, h.shape, dtype, "data", path, kLoad);
  // Fortran order is C order of the reversed shape: read that and reverse the dims back.
  const Shape reversed(h.shape.rbegin(), h.shape.rend());
  Shape dims;
  for (std::int64_t d = static_cast<std::int64_t>(h.shape.size()) - 1; d >= 0; --d)
    dims.push_back(d);
  Tensor t = detail::read_tensor_data(file, data_start, reversed, dtype, "data", path, kLoad);
  return t.permute(dims).contiguous();
}

}  // namespace minigrad
