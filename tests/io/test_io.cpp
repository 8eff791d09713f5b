// Checkpoints: safetensors and .npy files, Module and optimizer state_dicts, atomic writes, bad
// files, bit-identical resume, and interop with real PyTorch (tests/io/torch_interop.py).
//
// The expected bytes in the layout tests are written by hand from the formats' specifications and
// agree with numpy 1.24's np.save and the reference safetensors writer (json.dumps with compact
// separators, padded with spaces to a multiple of 8).
#include <gtest/gtest.h>
#include <minigrad/io.h>
#include <minigrad/minigrad.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include <vector>
#include "io/python_runner.h"

#include "io/torch_files.h"

namespace mg = minigrad;
namespace nn = minigrad::nn;
namespace optim = minigrad::optim;
namespace fs = std::filesystem;

namespace {

// ---- helpers ----

std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string u64le(std::uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[static_cast<std::size_t>(i)] = static_cast<char>(v >> (8 * i));
  return s;
}

template <typename T>
std::string raw_of(std::initializer_list<T> values) {
  std::string s;
  for (T v : values) s.append(reinterpret_cast<const char*>(&v), sizeof(T));
  return s;
}

// A safetensors file from a header text and a data section (the header is padded to 8 bytes).
std::string safetensors_bytes(std::string header, const std::string& data) {
  header.append((8 - header.size() % 8) % 8, ' ');
  return u64le(header.size()) + header + data;
}

// A .npy file (format 1.0) from its header dict and data, padded as numpy pads.
std::string npy_bytes(const std::string& dict, const std::string& data) {
  std::string h = dict;
  h.append(64 - (10 + h.size() + 1) % 64, ' ');
  h += '\n';
  std::string out = std::string("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(h.size() & 0xff);
  out += static_cast<char>(h.size() >> 8);
  return out + h + data;
}

// The raw bytes of t's elements in C order.
std::string bytes_of(const mg::Tensor& t) {
  mg::Tensor c = t.contiguous();
  const auto n = static_cast<std::size_t>(c.numel());
  switch (c.dtype()) {
    case mg::kFloat32:
      return {reinterpret_cast<const char*>(c.data_ptr<float>()), n * 4};
    case mg::kFloat64:
      return {reinterpret_cast<const char*>(c.data_ptr<double>()), n * 8};
    case mg::kInt64:
      return {reinterpret_cast<const char*>(c.data_ptr<std::int64_t>()), n * 8};
    case mg::kBool:
      return {reinterpret_cast<const char*>(c.data_ptr<bool>()), n};
  }
  return {};
}

// Same dtype, shape and bits (NaN payloads and -0.0 included).
::testing::AssertionResult same_bits(const mg::Tensor& a, const mg::Tensor& b) {
  if (a.dtype() != b.dtype())
    return ::testing::AssertionFailure()
           << "dtypes " << mg::dtype_name(a.dtype()) << " vs " << mg::dtype_name(b.dtype());
  if (a.shape() != b.shape())
    return ::testing::AssertionFailure() << "shapes " << mg::detail::shape_str(a.shape()) << " vs "
                                         << mg::detail::shape_str(b.shape());
  if (bytes_of(a) != bytes_of(b)) return ::testing::AssertionFailure() << a << " vs " << b;
  return ::testing::AssertionSuccess();
}

// The message of the minigrad::Error stmt throws, or "<no error>".
template <typename F>
std::string error_of(F&& stmt) {
  try {
    stmt();
  } catch (const mg::Error& e) {
    return e.what();
  }
  return "<no error>";
}

#define EXPECT_ERROR_HAS(stmt, text)                                                  \
  do {                                                                                \
    const std::string msg_ = error_of([&] { stmt; });                                 \
    EXPECT_NE(msg_.find(text), std::string::npos) << "message: " << msg_ << "\n"      \
                                                  << "expected to contain: " << text; \
  } while (0)

class Io : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("minigrad_io_" + std::to_string(::getpid()) + "_" +
                                        info->test_suite_name() + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  // Files in the directory other than the ones named (a leftover temporary file shows up here).
  std::vector<std::string> listing() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
  fs::path dir_;
};

// The module the PyTorch side builds as `Net` in torch_interop.py, registered in the same order:
// a child, a buffer, a child, then an own parameter. PyTorch's state_dict puts a module's own
// parameters first, then its own buffers, then its children.
struct Net : nn::Module {
  nn::Linear fc1{4, 3};
  nn::Linear fc2{3, 2};
  mg::Tensor scale;
  mg::Tensor alpha;
  Net() : nn::Module("Net") {
    register_module("fc1", fc1);
    scale = register_buffer("scale", mg::tensor({1.0, -0.5, 2.0}));
    register_module("fc2", fc2);
    alpha = register_parameter("alpha", mg::scalar_tensor(1.5));
  }
  mg::Tensor forward(const mg::Tensor& x) const { return fc2(mg::tanh(fc1(x) * scale)) * alpha; }
};

const std::vector<std::string> kNetKeys = {"alpha",    "scale",      "fc1.weight",
                                           "fc1.bias", "fc2.weight", "fc2.bias"};

std::vector<std::string> keys_of(const mg::NamedTensors& d) {
  std::vector<std::string> out;
  for (const auto& [k, v] : d) out.push_back(k);
  return out;
}

// Copies of every state tensor, to check that a failed load changed nothing.
std::vector<std::string> snapshot(const nn::Module& m) {
  std::vector<std::string> out;
  for (const auto& [k, v] : m.state_dict()) out.push_back(k + ":" + bytes_of(v));
  return out;
}

// ================================ safetensors ================================

TEST_F(Io, SafetensorsRoundTripsEveryDtypeShapeAndLayout) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  mg::Tensor base = mg::arange(0.0, 12.0, 1.0, mg::kFloat32).reshape({3, 4});
  const mg::NamedTensors tensors = {
      {"f32", mg::tensor({1.5, -0.0, 1e30, nan, -std::numeric_limits<double>::infinity()}, {5})},
      {"f64", mg::tensor({0.1, 1e-300, -2.5}, {3}, mg::kFloat64)},
      {"i64", mg::tensor({-9.0e18, 0, 7, 4.0e18}, {2, 2}, mg::kInt64)},
      {"bool", mg::tensor({1, 0, 0, 1, 1, 0}, {2, 3}, mg::kBool)},
      {"scalar", mg::scalar_tensor(3.25, mg::kFloat64)},
      {"scalar_bool", mg::scalar_tensor(true, mg::kBool)},
      {"empty", mg::zeros({0, 3})},
      {"empty_i64", mg::zeros({2, 0, 5}, mg::kInt64)},
      {"transposed", base.t()},                                          // strides (1, 4)
      {"narrowed", base.narrow(1, 1, 2)},                                // offset 1, not contiguous
      {"expanded", mg::tensor({1.0, 2.0}).unsqueeze(0).expand({3, 2})},  // stride 0
  };
  mg::save_safetensors(path("t.safetensors"), tensors, {{"epoch", "3"}, {"note", "é ✓"}});
  const mg::SafetensorsFile f = mg::load_safetensors(path("t.safetensors"));
  ASSERT_EQ(keys_of(f.tensors), keys_of(tensors));  // header order is kept
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    EXPECT_TRUE(same_bits(f.tensors[i].second, tensors[i].second)) << tensors[i].first;
    // (Tensor::is_contiguous() says false for some empty shapes such as (2, 0, 5); PyTorch says
    // true for every empty tensor.)
    if (tensors[i].second.numel() > 0) {
      EXPECT_TRUE(f.tensors[i].second.is_contiguous()) << tensors[i].first;
    }
  }
  EXPECT_EQ(f.metadata, (mg::Metadata{{"epoch", "3"}, {"note", "é ✓"}}));
  EXPECT_TRUE(f.contains("narrowed"));
  EXPECT_FALSE(f.contains("nope"));
  EXPECT_TRUE(same_bits(f.at("transposed"), base.t()));
  EXPECT_ERROR_HAS(f.at("nope"), "[SafetensorsFile.at] no tensor named \"nope\"");
  EXPECT_EQ(listing(), std::vector<std::string>{"t.safetensors"});  // no temporary file left
  // The loaded tensors own their data.
  mg::Tensor loaded = f.at("f64");
  mg::NoGradGuard no_grad;
  loaded.fill_(0.0);
  EXPECT_TRUE(same_bits(mg::load_safetensors(path("t.safetensors")).at("f64"), tensors[1].second));
}

TEST_F(Io, SafetensorsEmptyFileHasNoTensors) {
  mg::save_safetensors(path("e.safetensors"), {});
  EXPECT_EQ(read_bytes(path("e.safetensors")), u64le(8) + "{}      ");
  const mg::SafetensorsFile f = mg::load_safetensors(path("e.safetensors"));
  EXPECT_TRUE(f.tensors.empty());
  EXPECT_TRUE(f.metadata.empty());
}

// The exact bytes, written by hand from the specification.
TEST_F(Io, SafetensorsByteLayout) {
  const std::string header =
      R"({"__metadata__":{"k":"v"},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
      R"("b":{"dtype":"I64","shape":[],"data_offsets":[8,16]}})"
      "    ";  // 132 + 4 spaces = 136 = 0x88
  const std::string expected = std::string("\x88\0\0\0\0\0\0\0", 8) + header +
                               std::string("\x00\x00\x80\x3f\x00\x00\x00\x40", 8) +  // 1.f, 2.f
                               std::string("\x07\0\0\0\0\0\0\0", 8);                 // 7
  mg::save_safetensors(path("a.safetensors"),
                       {{"a", mg::tensor({1.0, 2.0})}, {"b", mg::scalar_tensor(7, mg::kInt64)}},
                       {{"k", "v"}});
  EXPECT_EQ(read_bytes(path("a.safetensors")), expected);

  // A file whose header lists the tensors in another order than their data, with extra
  // whitespace, as other writers may produce.
  write_bytes(path("b.safetensors"),
              safetensors_bytes(R"({ "y" : {"shape":[1,2],"dtype":"F64","data_offsets":[2,18]},)"
                                R"( "x": {"dtype":"BOOL","shape":[2],"data_offsets":[0,2]} } )",
                                std::string("\x01\x00", 2) + raw_of<double>({0.5, -4.0})));
  const mg::SafetensorsFile f = mg::load_safetensors(path("b.safetensors"));
  ASSERT_EQ(keys_of(f.tensors), (std::vector<std::string>{"y", "x"}));
  EXPECT_TRUE(same_bits(f.at("y"), mg::tensor({0.5, -4.0}, {1, 2}, mg::kFloat64)));
  EXPECT_TRUE(same_bits(f.at("x"), mg::tensor({1, 0}, {2}, mg::kBool)));
}

TEST_F(Io, SafetensorsRejectsBadFiles) {
  const std::string p = path("bad.safetensors");
  const std::string ok_header = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  const std::string ok_data = raw_of<float>({1.f, 2.f});
  struct Case {
    const char* what;
    std::string bytes;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"empty file", "", "file has 0 bytes, too short for the 8-byte header length"},
      {"5 bytes", "abcde", "file has 5 bytes, too short"},
      {"huge header length", u64le(4294967296) + std::string(92, ' '),
       ": header length 4294967296 exceeds file size 100"},
      {"truncated header", u64le(200) + ok_header,
       "header length 200 exceeds file size " + std::to_string(8 + ok_header.size())},
      {"not JSON", safetensors_bytes(R"({"a": nope})", ""), "invalid JSON header"},
      {"unterminated JSON", safetensors_bytes(R"({"a": {"dtype": "F32")", ""),
       "invalid JSON header"},
      {"not an object", safetensors_bytes("[1, 2]", ""), "the header does not start with '{'"},
      {"tensor not an object", safetensors_bytes(R"({"a": 3})", ""),
       "tensor \"a\" must be an object, got 3"},
      {"unknown dtype",
       safetensors_bytes(R"({"a":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}})",
                         std::string(4, '\0')),
       "tensor \"a\": unsupported dtype \"F16\" (minigrad reads F32, F64, I64 and BOOL)"},
      {"dtype not a string",
       safetensors_bytes(R"({"a":{"dtype":4,"shape":[2],"data_offsets":[0,8]}})", ok_data),
       "dtype must be a string, got 4"},
      {"missing field", safetensors_bytes(R"({"a":{"dtype":"F32","shape":[2]}})", ok_data),
       "tensor \"a\" has no \"data_offsets\""},
      {"unknown field",
       safetensors_bytes(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"x":1}})",
                         ok_data),
       "tensor \"a\" has an unknown field \"x\""},
      {"negative dim",
       safetensors_bytes(R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", ok_data),
       "shape [-2] must hold non-negative integers"},
      {"fractional dim",
       safetensors_bytes(R"({"a":{"dtype":"F32","shape":[2.5],"data_offsets":[0,8]}})", ok_data),
       "must hold non-negative integers"},
      {"offsets out of range",
       safetensors_bytes(R"({"a":{"dtype":"F32","shape":[100],"data_offsets":[0,400]}})", ok_data),
       "tensor \"a\": data_offsets [0, 400] lie outside the data section (8 bytes)"},
      {"offsets reversed",
       safetensors_bytes(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", ok_data),
       "data_offsets [8, 0] end before they begin"},
      {"offsets malformed",
       safetensors_bytes(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0]}})", ok_data),
       "data_offsets must be two non-negative integers, got [0]"},
      {"shape/size mismatch",
       safetensors_bytes(R"({"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,8]}})", ok_data),
       "tensor \"a\": shape (2, 3) F32 needs 24 bytes but data_offsets [0, 8] hold 8"},
      {"shape overflow",
       safetensors_bytes(
           R"({"a":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,8]}})",
           ok_data),
       "is too large"},
      {"overlap",
       safetensors_bytes(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                         R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                         ok_data),
       "tensors \"a\" [0, 8] and \"b\" [4, 8] overlap"},
      {"gap",
       safetensors_bytes(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", ok_data),
       "bytes [0, 4) of the data section belong to no tensor"},
      {"trailing bytes", safetensors_bytes(ok_header, ok_data + "xyz"),
       "the data section has 11 bytes but the tensors cover 8"},
      {"truncated data", safetensors_bytes(ok_header, ok_data.substr(0, 5)),
       "data_offsets [0, 8] lie outside the data section (5 bytes)"},
      {"duplicate key",
       safetensors_bytes(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                         R"("a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                         ok_data),
       "the header names \"a\" twice"},
      {"metadata not strings", safetensors_bytes(R"({"__metadata__":{"epoch":3}})", ""),
       "metadata \"epoch\" must be a string, got 3"},
      {"metadata not an object", safetensors_bytes(R"({"__metadata__":[1]})", ""),
       "\"__metadata__\" must be an object of strings"},
      {"bool byte 2",
       safetensors_bytes(R"({"a":{"dtype":"BOOL","shape":[2],"data_offsets":[0,2]}})",
                         std::string("\x01\x02", 2)),
       "tensor \"a\": bool element 1 has the byte 2 (must be 0 or 1)"},
  };
  for (const Case& c : cases) {
    write_bytes(p, c.bytes);
    const std::string msg = error_of([&] { mg::load_safetensors(p); });
    EXPECT_EQ(msg.rfind("[load_safetensors] " + p + ": ", 0), 0u) << c.what << ": " << msg;
    EXPECT_NE(msg.find(c.message), std::string::npos)
        << c.what << ": " << msg << "\nexpected to contain: " << c.message;
  }
  // A header length over the reference implementation's 100 MB limit, in a (sparse) file that
  // is long enough to hold it.
  write_bytes(p, u64le(200'000'000) + "{}");
  fs::resize_file(p, 8 + 200'000'000);
  EXPECT_ERROR_HAS(mg::load_safetensors(p), "[load_safetensors] " + p +
                                                ": header length 200000000 exceeds the limit of "
                                                "100000000 bytes");
  EXPECT_ERROR_HAS(mg::load_safetensors(path("missing.safetensors")),
                   "[load_safetensors] " + path("missing.safetensors") +
                       ": cannot open for reading: No such file or directory");
  EXPECT_ERROR_HAS(mg::load_safetensors(dir_.string()), "not a regular file");
}

// Hostile headers (issue 18): each is a clear minigrad::Error, not a crash, another exception or
// a long wait.
TEST_F(Io, SafetensorsRejectsDeeplyNestedHeaders) {
  const std::string p = path("deep.safetensors");
  // 100,000 nested arrays in a 200 KB header: the error path used to dump() the value recursively
  // and overflow the stack.
  write_bytes(p, safetensors_bytes(
                     R"({"a":)" + std::string(100'000, '[') + std::string(100'000, ']') + "}", ""));
  EXPECT_EQ(error_of([&] { mg::load_safetensors(p); }),
            "[load_safetensors] " + p +
                ": the header nests JSON arrays and objects deeper than the limit of 64 levels");
  // Objects count too; 64 levels are allowed (then the value is rejected as a tensor).
  std::string deep_objects = "{";
  for (int i = 0; i < 64; ++i) deep_objects += R"("k":{)";
  deep_objects += std::string(65, '}');
  write_bytes(p, safetensors_bytes(deep_objects, ""));
  EXPECT_ERROR_HAS(mg::load_safetensors(p), "deeper than the limit of 64 levels");
  write_bytes(
      p, safetensors_bytes(R"({"a":)" + std::string(63, '[') + std::string(63, ']') + "}", ""));
  EXPECT_ERROR_HAS(mg::load_safetensors(p), "[load_safetensors] " + p +
                                                ": tensor \"a\" must be an "
                                                "object, got [[[");
  // Brackets inside strings (escaped quotes included) are text, not nesting.
  const std::string brackets = std::string(1000, '[') + "\\\"" + std::string(1000, '{');
  write_bytes(p, safetensors_bytes(R"({"__metadata__":{"m":")" + brackets + R"("}})", ""));
  EXPECT_EQ(mg::load_safetensors(p).metadata.at("m"),
            std::string(1000, '[') + "\"" + std::string(1000, '{'));
}

TEST_F(Io, SafetensorsNumberOverflowIsAMinigradError) {
  const std::string p = path("big.safetensors");
  // nlohmann's out_of_range (number overflow) used to escape instead of minigrad::Error.
  write_bytes(p, safetensors_bytes(R"({"a":{"dtype":"F32","shape":[1e400],"data_offsets":[0,4]}})",
                                   std::string(4, '\0')));
  EXPECT_EQ(error_of([&] { mg::load_safetensors(p); }),
            "[load_safetensors] " + p +
                ": invalid JSON header: [json.exception.out_of_range.406] number overflow parsing "
                "'1e400'");
  write_bytes(p, safetensors_bytes(R"({"__metadata__":{"m":"x"},"b":-1e999})", ""));
  EXPECT_ERROR_HAS(mg::load_safetensors(p), "number overflow parsing '-1e999'");
}

// Saving is linear in the number of tensors too (the header used to be an ordered_json, whose
// operator[] searches its members: 200,000 tensors took minutes). The header text is the one the
// reference writer makes: compact JSON in the tensors' order.
TEST_F(Io, SafetensorsManyTensorsSaveInLinearTime) {
  const std::string p = path("many_saved.safetensors");
  constexpr int kTensors = 200'000;
  mg::NamedTensors tensors;
  const mg::Tensor empty = mg::zeros({0});
  for (int i = 0; i < kTensors; ++i)
    tensors.emplace_back(std::string("t").append(std::to_string(i)), empty);
  const auto start = std::chrono::steady_clock::now();
  mg::save_safetensors(p, tensors);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("[          ] save_safetensors of %d zero-size tensors: %.3f s\n", kTensors, seconds);
  const mg::SafetensorsFile f = mg::load_safetensors(p);
  ASSERT_EQ(f.tensors.size(), static_cast<std::size_t>(kTensors));
  EXPECT_EQ(f.tensors.back().first, std::string("t").append(std::to_string(kTensors - 1)));
  // The exact header of a small file, with metadata and a name that needs escaping.
  const std::string small = path("small.safetensors");
  mg::save_safetensors(small, {{"a\"b", mg::zeros({2, 3})}, {"c", mg::zeros({1}, mg::kInt64)}},
                       {{"format", "pt"}});
  std::ifstream in(small, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string expected =
      R"({"__metadata__":{"format":"pt"},"a\"b":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
      R"("c":{"dtype":"I64","shape":[1],"data_offsets":[24,32]}})";
  ASSERT_GE(bytes.size(), 8 + expected.size());
  EXPECT_EQ(bytes.substr(8, expected.size()), expected);
}

// Parsing is linear in the number of tensors: 200,000 zero-size tensors used to take minutes
// (nlohmann's parse callback rescans the header object at the end of every tensor object).
TEST_F(Io, SafetensorsManyTensorsLoadInLinearTime) {
  const std::string p = path("many.safetensors");
  constexpr int kTensors = 200'000;
  std::string header = "{";
  for (int i = 0; i < kTensors; ++i)
    header += (i ? ",\"t" : "\"t") + std::to_string(i) +
              R"(":{"dtype":"F32","shape":[0],"data_offsets":[0,0]})";
  header += "}";
  write_bytes(p, safetensors_bytes(header, ""));
  const auto start = std::chrono::steady_clock::now();
  const mg::SafetensorsFile f = mg::load_safetensors(p);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("[          ] load_safetensors of %d zero-size tensors (%zu-byte header): %.3f s\n",
              kTensors, header.size(), seconds);
  ASSERT_EQ(f.tensors.size(), static_cast<std::size_t>(kTensors));
  EXPECT_EQ(f.tensors.front().first, "t0");  // header order is kept
  EXPECT_EQ(f.tensors.back().first, "t" + std::to_string(kTensors - 1));
  EXPECT_EQ(f.tensors.back().second.shape(), (mg::Shape{0}));
  // Duplicates are still found, however far apart.
  write_bytes(p, safetensors_bytes(header.substr(0, header.size() - 1) +
                                       R"(,"t0":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}})",
                                   ""));
  EXPECT_ERROR_HAS(mg::load_safetensors(p), "the header names \"t0\" twice");
}

TEST_F(Io, SafetensorsCapsTensorsAndDims) {
  const std::string p = path("caps.safetensors");
  // One tensor more than the limit, counted before the header is parsed (the values would be
  // rejected while parsing) ...
  std::string header = R"({"__metadata__":{})";
  for (int i = 0; i <= 1'000'000; ++i) header += ",\"" + std::to_string(i) + "\":0";
  header += "}";
  write_bytes(p, safetensors_bytes(header, ""));
  EXPECT_EQ(
      error_of([&] { mg::load_safetensors(p); }),
      "[load_safetensors] " + p + ": the header lists more than the limit of 1000000 tensors");
  // ... and while parsing: 1,000,001 valid zero-size tensors and no metadata.
  header = "{";
  for (int i = 0; i <= 1'000'000; ++i)
    header += (i ? ",\"" : "\"") + std::to_string(i) +
              R"(":{"dtype":"F32","shape":[0],"data_offsets":[0,0]})";
  header += "}";
  write_bytes(p, safetensors_bytes(header, ""));
  EXPECT_EQ(
      error_of([&] { mg::load_safetensors(p); }),
      "[load_safetensors] " + p + ": the header lists more than the limit of 1000000 tensors");
  // A shape of 100,000 dims of size 1 holds one element: it used to load (printing it then
  // recursed once per dim).
  auto with_dims = [](std::size_t dims) {
    std::string shape = "[1";
    for (std::size_t i = 1; i < dims; ++i) shape += ",1";
    return safetensors_bytes(
        R"({"a":{"dtype":"F32","shape":)" + shape + R"(],"data_offsets":[0,4]}})",
        std::string(4, '\0'));
  };
  write_bytes(p, with_dims(100'000));
  EXPECT_EQ(error_of([&] { mg::load_safetensors(p); }),
            "[load_safetensors] " + p +
                ": tensor \"a\": shape has 100000 dims, more than the limit of 64");
  write_bytes(p, with_dims(65));
  EXPECT_ERROR_HAS(mg::load_safetensors(p), "shape has 65 dims, more than the limit of 64");
  write_bytes(p, with_dims(64));
  EXPECT_EQ(mg::load_safetensors(p).at("a").dim(), 64);
}

// Every prefix of a valid file is a truncated file: each one must throw minigrad::Error.
TEST_F(Io, SafetensorsEveryTruncationThrows) {
  mg::save_safetensors(path("full.safetensors"),
                       {{"w", mg::randn({3, 2})}, {"n", mg::scalar_tensor(4, mg::kInt64)}},
                       {{"m", "x"}});
  const std::string full = read_bytes(path("full.safetensors"));
  int errors = 0;
  for (std::size_t n = 0; n < full.size(); ++n) {
    write_bytes(path("cut.safetensors"), full.substr(0, n));
    const std::string msg = error_of([&] { mg::load_safetensors(path("cut.safetensors")); });
    errors += msg.rfind("[load_safetensors] ", 0) == 0;
  }
  EXPECT_EQ(errors, static_cast<int>(full.size()));
}

TEST_F(Io, SafetensorsSaveRejectsBadInputAndLeavesTheOldFile) {
  const std::string p = path("m.safetensors");
  mg::save_safetensors(p, {{"a", mg::ones({2})}});
  const std::string before = read_bytes(p);
  EXPECT_ERROR_HAS(mg::save_safetensors(p, {{"a", mg::ones({1})}, {"b", mg::Tensor()}}),
                   "[save_safetensors] " + p + ": tensor \"b\" is undefined");
  EXPECT_ERROR_HAS(mg::save_safetensors(p, {{"a", mg::ones({1})}, {"a", mg::ones({1})}}),
                   "the name \"a\" appears more than once");
  EXPECT_ERROR_HAS(mg::save_safetensors(p, {{"__metadata__", mg::ones({1})}}),
                   "\"__metadata__\" is reserved");
  EXPECT_ERROR_HAS(mg::save_safetensors(p, {{"", mg::ones({1})}}), "a tensor has an empty name");
  EXPECT_ERROR_HAS(mg::save_safetensors(p, {{"a", mg::ones({1})}}, {{"k", "\xff\xfe"}}),
                   "is not valid UTF-8");
  EXPECT_EQ(read_bytes(p), before);
  EXPECT_EQ(listing(), std::vector<std::string>{"m.safetensors"});
  EXPECT_ERROR_HAS(mg::save_safetensors(path("no/such/dir/x.safetensors"), {}),
                   "[save_safetensors] " + path("no/such/dir/x.safetensors") + ": cannot create");
}

// Saving replaces the file through a rename: a reader holding the old file keeps seeing it whole.
TEST_F(Io, SafetensorsSaveReplacesAtomically) {
  const std::string p = path("m.safetensors");
  mg::save_safetensors(p, {{"a", mg::ones({4})}});
  const std::string before = read_bytes(p);
  std::ifstream old_reader(p, std::ios::binary);
  mg::save_safetensors(p, {{"a", mg::zeros({1000})}});
  const std::string old_bytes{std::istreambuf_iterator<char>(old_reader),
                              std::istreambuf_iterator<char>()};
  EXPECT_EQ(old_bytes, before);  // the old file, whole, not a mix
  EXPECT_TRUE(same_bits(mg::load_safetensors(p).at("a"), mg::zeros({1000})));
  EXPECT_EQ(listing(), std::vector<std::string>{"m.safetensors"});
}

// A symlink planted at the temporary name the writer used to use (path.tmp.<pid>, opened with
// O_CREAT | O_TRUNC) made a save truncate and overwrite the link's target.
TEST_F(Io, SaveDoesNotFollowASymlinkAtATemporaryName) {
  const std::string p = path("m.safetensors");
  const std::string victim = path("victim.txt");
  write_bytes(victim, "precious");
  const std::string link = p + ".tmp." + std::to_string(::getpid());
  fs::create_symlink(victim, link);
  mg::save_safetensors(p, {{"a", mg::ones({3})}});
  mg::save_npy(path("x.npy"), mg::ones({3}));
  fs::create_symlink(victim, path("x.npy") + ".tmp." + std::to_string(::getpid()));
  mg::save_npy(path("x.npy"), mg::ones({4}));
  EXPECT_EQ(read_bytes(victim), "precious");
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_TRUE(same_bits(mg::load_safetensors(p).at("a"), mg::ones({3})));
  EXPECT_TRUE(same_bits(mg::load_npy(path("x.npy")), mg::ones({4})));
  EXPECT_EQ(listing().size(), 5u);  // the two files, the victim, the two links: no temporary
}

// Two threads saving to one path used to share the temporary name (same pid) and write into one
// file: a torn checkpoint, or a failed rename. Each save must leave one whole file.
TEST_F(Io, ConcurrentSavesToOnePathLeaveOneWholeFile) {
  const std::string p = path("m.safetensors");
  const mg::NamedTensors first = {{"a", mg::full({1000}, 1.0)}};
  const mg::NamedTensors second = {{"b", mg::full({3000}, 2.0, mg::kFloat64)},
                                   {"c", mg::ones({7}, mg::kInt64)}};
  const std::string first_bytes = [&] {
    mg::save_safetensors(path("first.safetensors"), first);
    return read_bytes(path("first.safetensors"));
  }();
  const std::string second_bytes = [&] {
    mg::save_safetensors(path("second.safetensors"), second);
    return read_bytes(path("second.safetensors"));
  }();
  std::atomic<int> errors{0};
  int torn = 0, seen_first = 0, seen_second = 0;
  for (int round = 0; round < 100; ++round) {
    auto saver = [&](const mg::NamedTensors& tensors) {
      for (int i = 0; i < 3; ++i) {
        try {
          mg::save_safetensors(p, tensors);
        } catch (const mg::Error& e) {
          if (errors++ == 0) ADD_FAILURE() << e.what();
        }
      }
    };
    std::thread t1(saver, std::cref(first)), t2(saver, std::cref(second));
    t1.join();
    t2.join();
    const std::string bytes = read_bytes(p);
    seen_first += bytes == first_bytes;
    seen_second += bytes == second_bytes;
    torn += bytes != first_bytes && bytes != second_bytes;
    EXPECT_NO_THROW(mg::load_safetensors(p));
  }
  std::printf("[          ] 100 rounds: last writer first %d, second %d, torn %d, errors %d\n",
              seen_first, seen_second, torn, errors.load());
  EXPECT_EQ(torn, 0);
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(listing(),
            (std::vector<std::string>{"first.safetensors", "m.safetensors", "second.safetensors"}));
}

// What already held: a save that fails while writing (here the file size limit, EFBIG) or cannot
// create its temporary leaves the old checkpoint whole and no temporary file behind.
TEST_F(Io, FailedSaveKeepsTheOldFileAndLeavesNoTemporary) {
  const std::string p = path("m.safetensors");
  mg::save_safetensors(p, {{"a", mg::ones({4})}});
  const std::string before = read_bytes(p);
  {
    struct rlimit old_limit {};
    ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
    void (*old_handler)(int) = std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit small = old_limit;
    small.rlim_cur = 4096;
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
    const std::string msg = error_of([&] {
      mg::save_safetensors(p, {{"a", mg::zeros({100'000})}});
    });
    ::setrlimit(RLIMIT_FSIZE, &old_limit);
    std::signal(SIGXFSZ, old_handler);
    EXPECT_EQ(msg, "[save_safetensors] " + p + ": write error: File too large");
  }
  EXPECT_EQ(read_bytes(p), before);
  EXPECT_EQ(listing(), std::vector<std::string>{"m.safetensors"});
  if (::geteuid() != 0) {  // root writes into a read-only directory anyway
    fs::permissions(dir_, fs::perms::owner_read | fs::perms::owner_exec);
    EXPECT_ERROR_HAS(mg::save_safetensors(p, {{"a", mg::zeros({8})}}),
                     "cannot create " + path(".mg-"));
    fs::permissions(dir_, fs::perms::owner_all);
    EXPECT_EQ(read_bytes(p), before);
    EXPECT_EQ(listing(), std::vector<std::string>{"m.safetensors"});
  }
}

// Issue 36: a legal file name of NAME_MAX bytes saves (the temporary's name is short whatever the
// target's: Note [Temporary files of a save]), as torch.save writes it.
TEST_F(Io, SaveToTheLongestLegalNameWorks) {
  const std::string base =
      std::string(255 - std::string(".safetensors").size(), 'm') + ".safetensors";
  ASSERT_EQ(base.size(), 255u);
  const std::string p = path(base);
  mg::save_safetensors(p, {{"a", mg::ones({3})}});
  EXPECT_TRUE(same_bits(mg::load_safetensors(p).at("a"), mg::ones({3})));
  mg::save_npy(path(std::string(251, 'n') + ".npy"), mg::ones({2}));
  EXPECT_EQ(listing().size(), 2u);
}

// Issue 36: a save killed with kill -9 leaves its temporary; the next save of the same target
// removes it (and leaves another target's alone until that one is saved).
TEST_F(Io, KilledSaveLeavesATemporaryTheNextSaveRemoves) {
  const std::string p = path("big.safetensors");
  const std::string other = path("other.safetensors");
  auto stray = [&] {
    std::vector<std::string> out;
    for (const std::string& name : listing())
      if (name.rfind(".mg-", 0) == 0) out.push_back(name);
    return out;
  };
  // Kills a process saving target in a loop once its temporary exists (again if the kill landed
  // between a rename and the next save's temporary).
  auto kill_during_save = [&](const std::string& target) {
    const mg::Tensor big = mg::ones({8 << 20});  // 32 MB: a save takes a while
    const std::size_t start = stray().size();
    for (int attempt = 0; attempt < 5 && stray().size() == start; ++attempt) {
      const pid_t child = ::fork();
      ASSERT_GE(child, 0);
      if (child == 0) {
        for (;;) mg::save_safetensors(target, {{"a", big}});
      }
      const std::size_t before = stray().size();
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (stray().size() == before && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      ::kill(child, SIGKILL);
      int status = 0;
      ::waitpid(child, &status, 0);
    }
  };
  kill_during_save(p);
  ASSERT_EQ(stray().size(), 1u) << "the killed save left no temporary (it was too fast?)";
  kill_during_save(other);
  ASSERT_EQ(stray().size(), 2u);
  mg::save_safetensors(p, {{"a", mg::ones({3})}});
  EXPECT_EQ(stray().size(), 1u);  // other's temporary stays until other is saved
  mg::save_safetensors(other, {{"a", mg::ones({3})}});
  EXPECT_TRUE(stray().empty());
  EXPECT_TRUE(same_bits(mg::load_safetensors(p).at("a"), mg::ones({3})));
}

// Issue 36: every reader refuses a FIFO nobody writes at once (it used to block in open()).
TEST_F(Io, ReadersRefuseAFifoWithoutBlocking) {
  const std::string fifo = path("pipe.safetensors");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_ERROR_HAS(mg::load_safetensors(fifo), fifo + ": not a regular file");
  EXPECT_ERROR_HAS(mg::load_npy(fifo), fifo + ": not a regular file");
  EXPECT_ERROR_HAS(mg::load_optimizer_state(fifo), fifo + ": not a regular file");
  nn::Linear fc(2, 2);
  EXPECT_ERROR_HAS(nn::load(*fc, fifo), fifo + ": not a regular file");
  EXPECT_ERROR_HAS(mg::load_safetensors(dir_.string()), ": not a regular file");
}

// ================================ .npy ================================

TEST_F(Io, NpyRoundTripsEveryDtypeShapeAndLayout) {
  mg::Tensor base = mg::arange(0.0, 24.0, 1.0, mg::kFloat64).reshape({2, 3, 4});
  const std::vector<mg::Tensor> tensors = {
      mg::tensor({1.5, -0.0, 3e38}),
      base,
      base.permute({2, 0, 1}),
      base.select(1, 2),
      mg::tensor({-9.0e18, 1, 2}, {3}, mg::kInt64),
      mg::tensor({1, 0, 1, 1}, {2, 2}, mg::kBool),
      mg::scalar_tensor(2.5),
      mg::scalar_tensor(false, mg::kBool),
      mg::zeros({0}),
      mg::zeros({3, 0, 2}, mg::kInt64),
      mg::tensor({1.0, 2.0}).unsqueeze(1).expand({2, 3}),
  };
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const std::string p = path(std::to_string(i) + ".npy");
    mg::save_npy(p, tensors[i]);
    EXPECT_TRUE(same_bits(mg::load_npy(p), tensors[i])) << i;
    EXPECT_EQ((read_bytes(p).find('\n', 10) + 1) % 64, 0u) << "data 64-byte aligned, " << i;
  }
  EXPECT_EQ(listing().size(), tensors.size());  // no temporary files
}

// The exact bytes of numpy's np.save for the same arrays, written by hand.
TEST_F(Io, NpyByteLayout) {
  mg::save_npy(path("a.npy"), mg::tensor({1.0, 2.0}));
  EXPECT_EQ(read_bytes(path("a.npy")),
            std::string("\x93NUMPY\x01\x00\x76\x00", 10) +
                "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }" + std::string(60, ' ') +
                "\n" + std::string("\x00\x00\x80\x3f\x00\x00\x00\x40", 8));
  mg::save_npy(path("b.npy"), mg::scalar_tensor(7, mg::kInt64));
  EXPECT_EQ(read_bytes(path("b.npy")),
            std::string("\x93NUMPY\x01\x00\x76\x00", 10) +
                "{'descr': '<i8', 'fortran_order': False, 'shape': (), }" + std::string(62, ' ') +
                "\n" + std::string("\x07\0\0\0\0\0\0\0", 8));
}

TEST_F(Io, NpyReadsFortranOrderAndOtherVersions) {
  // np.save(f, np.asfortranarray(np.arange(6.).reshape(2, 3))): data in column order 0 3 1 4 2 5.
  write_bytes(path("f.npy"), npy_bytes("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }",
                                       raw_of<double>({0, 3, 1, 4, 2, 5})));
  EXPECT_TRUE(same_bits(mg::load_npy(path("f.npy")),
                        mg::arange(0.0, 6.0, 1.0, mg::kFloat64).reshape({2, 3})));
  // Format 2.0 (4-byte header length), double quotes, keys in another order.
  std::string dict = R"({"shape": (3,), "descr": "<i8", "fortran_order": False})";
  dict.append(64 - (12 + dict.size() + 1) % 64, ' ');
  dict += '\n';
  write_bytes(path("v2.npy"), std::string("\x93NUMPY\x02\x00", 8) +
                                  raw_of<std::uint32_t>({static_cast<std::uint32_t>(dict.size())}) +
                                  dict + raw_of<std::int64_t>({5, -6, 7}));
  EXPECT_TRUE(same_bits(mg::load_npy(path("v2.npy")), mg::tensor({5, -6, 7}, {3}, mg::kInt64)));
}

TEST_F(Io, NpyRejectsBadFiles) {
  const std::string p = path("bad.npy");
  const std::string f4 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  const std::string data = raw_of<float>({1.f, 2.f});
  struct Case {
    const char* what;
    std::string bytes;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"empty", "", "file has 0 bytes, too short for a .npy header"},
      {"no magic", std::string(100, 'x'), "not a .npy file"},
      {"version 4", std::string("\x93NUMPY\x04\x00", 8) + std::string(92, ' '),
       "unsupported format version 4.0"},
      // xtensor's load_npy allocated 4 GB for this 100-byte file.
      {"huge header length",
       std::string("\x93NUMPY\x02\x00\xff\xff\xff\xff", 12) + std::string(88, ' '),
       "header length 4294967295 exceeds file size 100"},
      {"truncated header", npy_bytes(f4, data).substr(0, 40), "exceeds file size 40"},
      {"truncated data", npy_bytes(f4, data.substr(0, 6)),
       "shape (2,) '<f4' needs 8 bytes of data but the file has 6"},
      {"extra data", npy_bytes(f4, data + "zz"), "needs 8 bytes of data but the file has 10"},
      {"big-endian", npy_bytes("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", data),
       "unsupported dtype '>f4' (minigrad reads '<f4', '<f8', '<i8' and '|b1')"},
      {"float16", npy_bytes("{'descr': '<f2', 'fortran_order': False, 'shape': (4,), }", data),
       "unsupported dtype '<f2'"},
      {"bad syntax", npy_bytes("{'descr': '<f4' 'fortran_order': False}", data),
       "invalid header: expected ',' or '}'"},
      {"unknown key", npy_bytes("{'descr': '<f4', 'x': False, 'shape': (2,), }", data),
       "invalid header: unknown header key 'x'"},
      {"missing key", npy_bytes("{'descr': '<f4', 'shape': (2,), }", data),
       "the header must have 'descr', 'fortran_order' and 'shape'"},
      {"negative dim",
       npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", data),
       "expected a non-negative size"},
      {"huge dims",
       npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 8), }",
                 data),
       "is too large"},
      {"dim overflow",
       npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }",
                 data),
       "size too large"},
      {"bool byte 7",
       npy_bytes("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", "\x01\x07"),
       "bool element 1 has the byte 7"},
  };
  for (const Case& c : cases) {
    write_bytes(p, c.bytes);
    const std::string msg = error_of([&] { mg::load_npy(p); });
    EXPECT_EQ(msg.rfind("[load_npy] " + p + ": ", 0), 0u) << c.what << ": " << msg;
    EXPECT_NE(msg.find(c.message), std::string::npos)
        << c.what << ": " << msg << "\nexpected to contain: " << c.message;
  }
  // Every truncation of a valid file throws.
  mg::save_npy(path("ok.npy"), mg::randn({2, 3}));
  const std::string full = read_bytes(path("ok.npy"));
  for (std::size_t n = 0; n < full.size(); ++n) {
    write_bytes(p, full.substr(0, n));
    EXPECT_EQ(error_of([&] { mg::load_npy(p); }).rfind("[load_npy] ", 0), 0u) << n;
  }
  EXPECT_ERROR_HAS(mg::save_npy(p, mg::Tensor()), "[save_npy] " + p + ": the tensor is undefined");
}

// Hostile .npy headers (issue 18): a shape of more dims than NumPy allows, and headers over
// numpy.load's size limit, are refused before anything is built from them.
TEST_F(Io, NpyCapsDimsAndHeaderSize) {
  const std::string p = path("dims.npy");
  auto with_dims = [](std::size_t dims) {
    std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
    for (std::size_t i = 0; i < dims; ++i) dict += "1, ";
    return dict + "), }";
  };
  auto v2 = [](std::string dict, const std::string& data) {  // format 2.0: 4-byte header length
    dict.append(64 - (12 + dict.size() + 1) % 64, ' ');
    dict += '\n';
    return std::string("\x93NUMPY\x02\x00", 8) +
           raw_of<std::uint32_t>({static_cast<std::uint32_t>(dict.size())}) + dict + data;
  };
  const std::string one = raw_of<float>({1.f});
  // 65 dims of size 1: one element, and it used to load.
  write_bytes(p, npy_bytes(with_dims(65), one));
  EXPECT_EQ(error_of([&] { mg::load_npy(p); }),
            "[load_npy] " + p + ": the shape has more than the limit of 64 dims");
  write_bytes(p, npy_bytes(with_dims(64), one));
  EXPECT_EQ(mg::load_npy(p).dim(), 64);
  // 100,000 dims need a 300 KB header: refused by its length, before it is parsed.
  const std::string huge = v2(with_dims(100'000), one);
  write_bytes(p, huge);
  EXPECT_EQ(error_of([&] { mg::load_npy(p); }), "[load_npy] " + p + ": header length " +
                                                    std::to_string(huge.size() - 12 - 4) +
                                                    " exceeds the limit of 10000 bytes");
  // A header of exactly 10000 bytes is allowed, one more byte is not.
  for (std::uint32_t hlen : {10'000u, 10'001u}) {
    std::string h = "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }";
    h.append(hlen - h.size() - 1, ' ');
    h += '\n';
    write_bytes(p, std::string("\x93NUMPY\x02\x00", 8) + raw_of<std::uint32_t>({hlen}) + h + one);
    if (hlen == 10'000u)
      EXPECT_EQ(mg::load_npy(p).numel(), 1);
    else
      EXPECT_ERROR_HAS(mg::load_npy(p), "header length 10001 exceeds the limit of 10000 bytes");
  }
}

// ================================ Module state_dict ================================

TEST_F(Io, StateDictHasPyTorchsNamesAndOrder) {
  mg::manual_seed(0);
  Net net;
  const nn::StateDict sd = net.state_dict();
  EXPECT_EQ(keys_of(sd), kNetKeys);
  // Aliases of the module's tensors, cut from the graph, as PyTorch's (detached) state_dict.
  EXPECT_EQ(sd[2].second.data_ptr<float>(), net.fc1->weight.data_ptr<float>());
  EXPECT_FALSE(sd[2].second.requires_grad());
  // named_parameters keeps its own order (children's parameters after the own ones).
  std::vector<std::string> names;
  for (const auto& [n, p] : net.named_parameters()) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"alpha", "fc1.weight", "fc1.bias", "fc2.weight",
                                             "fc2.bias"}));
}

TEST_F(Io, LoadStateDictCopiesInPlace) {
  mg::manual_seed(0);
  Net a;
  mg::manual_seed(1);
  Net b;
  const float* weight_data = b.fc1->weight.data_ptr<float>();
  const mg::Tensor weight_handle = b.fc1->weight;
  const nn::LoadStateDictResult r = b.load_state_dict(a.state_dict());
  EXPECT_TRUE(r.missing_keys.empty());
  EXPECT_TRUE(r.unexpected_keys.empty());
  for (std::size_t i = 0; i < kNetKeys.size(); ++i)
    EXPECT_TRUE(same_bits(b.state_dict()[i].second, a.state_dict()[i].second)) << kNetKeys[i];
  // Same storage, same handles, still trainable leaves.
  EXPECT_EQ(b.fc1->weight.data_ptr<float>(), weight_data);
  EXPECT_TRUE(weight_handle.is_same(b.fc1->weight));
  EXPECT_TRUE(b.fc1->weight.requires_grad());
  EXPECT_TRUE(b.fc1->weight.is_leaf());
  // Copies, not aliases: changing a does not change b.
  {
    mg::NoGradGuard no_grad;
    a.fc1->weight.fill_(0.0);
  }
  EXPECT_NE(b.fc1->weight.to_vector<float>()[0], 0.0f);
  // Loading a module's own state_dict (sources alias the destinations) is a no-op.
  const auto before = snapshot(b);
  b.load_state_dict(b.state_dict());
  EXPECT_EQ(snapshot(b), before);
  // Non-contiguous sources are fine.
  nn::StateDict t = b.state_dict();
  t[2].second = b.fc1->weight.detach().t().contiguous().t();
  b.load_state_dict(t);
  EXPECT_EQ(snapshot(b), before);
}

TEST_F(Io, LoadStateDictChecksEverythingBeforeChangingAnything) {
  mg::manual_seed(0);
  Net net;
  const auto before = snapshot(net);
  auto with = [&](const std::string& key, mg::Tensor t) {
    nn::StateDict sd;
    for (const auto& [k, v] : net.state_dict()) sd.emplace_back(k, (k == key ? t : v * 2.0));
    return sd;
  };
  // Wrong shape (the last key, so the others would have been copied by a naive loader).
  EXPECT_ERROR_HAS(net.load_state_dict(with("fc2.bias", mg::zeros({3}))),
                   "[load_state_dict] Net: size mismatch for fc2.bias: the checkpoint has shape "
                   "(3,), the module has (2,); nothing was loaded");
  EXPECT_EQ(snapshot(net), before);
  EXPECT_ERROR_HAS(net.load_state_dict(with("fc1.weight", mg::zeros({3, 5}))),
                   "size mismatch for fc1.weight: the checkpoint has shape (3, 5), the module has "
                   "(3, 4)");
  EXPECT_ERROR_HAS(net.load_state_dict(with("fc2.bias", mg::zeros({2}, mg::kFloat64))),
                   "dtype mismatch for fc2.bias: the checkpoint has float64, the module has "
                   "float32");
  EXPECT_ERROR_HAS(net.load_state_dict(with("fc2.bias", mg::Tensor())),
                   "\"fc2.bias\" is an undefined tensor");
  EXPECT_EQ(snapshot(net), before);

  // Missing and unexpected keys: errors when strict, reported otherwise.
  nn::StateDict partial = with("", mg::Tensor());
  partial.erase(partial.begin() + 1);  // scale
  partial.emplace_back("fc3.weight", mg::ones({1}));
  EXPECT_ERROR_HAS(net.load_state_dict(partial),
                   "[load_state_dict] Net: missing key(s) \"scale\"; unexpected key(s) "
                   "\"fc3.weight\"; nothing was loaded");
  EXPECT_EQ(snapshot(net), before);
  const nn::LoadStateDictResult r = net.load_state_dict(partial, /*strict=*/false);
  EXPECT_EQ(r.missing_keys, std::vector<std::string>{"scale"});
  EXPECT_EQ(r.unexpected_keys, std::vector<std::string>{"fc3.weight"});
  EXPECT_EQ(net.alpha.item<float>(), 3.0f);          // loaded (doubled)
  EXPECT_EQ(net.scale.to_vector<float>()[2], 2.0f);  // kept
  // A shape mismatch is an error even when not strict, as in PyTorch.
  EXPECT_ERROR_HAS(net.load_state_dict(with("alpha", mg::zeros({1})), false),
                   "size mismatch for alpha: the checkpoint has shape (1,), the module has ()");
  // A key given twice.
  nn::StateDict twice = net.state_dict();
  twice.push_back(twice[0]);
  EXPECT_ERROR_HAS(net.load_state_dict(twice), "\"alpha\" appears twice");
}

TEST_F(Io, ModuleSaveAndLoadFiles) {
  mg::manual_seed(0);
  Net a;
  nn::save(a, path("net.safetensors"), {{"step", "10"}});
  EXPECT_EQ(mg::load_safetensors(path("net.safetensors")).metadata.at("step"), "10");
  mg::manual_seed(5);
  Net b;
  nn::load(b, path("net.safetensors"));
  EXPECT_EQ(snapshot(b), snapshot(a));

  // A checkpoint of another architecture: an error naming the key, the shapes and the file; the
  // module is unchanged.
  nn::Linear other(5, 3);
  nn::save(other, path("other.safetensors"));
  mg::manual_seed(6);
  Net c;
  const auto before = snapshot(c);
  EXPECT_ERROR_HAS(nn::load(c.fc1, path("other.safetensors")),
                   "[load_state_dict] Linear: size mismatch for weight: the checkpoint has shape "
                   "(3, 5), the module has (3, 4); nothing was loaded (loading " +
                       path("other.safetensors") + ")");
  EXPECT_ERROR_HAS(nn::load(c, path("other.safetensors")),
                   "missing key(s) \"alpha\", \"scale\", \"fc1.weight\"");
  // A corrupt file changes nothing either.
  std::string bytes = read_bytes(path("net.safetensors"));
  write_bytes(path("cut.safetensors"), bytes.substr(0, bytes.size() - 1));
  EXPECT_ERROR_HAS(nn::load(c, path("cut.safetensors")), "[load_safetensors]");
  EXPECT_EQ(snapshot(c), before);
}

// ================================ optimizer state_dict ================================

mg::Tensor loss_of(const Net& net) {
  static const mg::Tensor x = [] {
    mg::manual_seed(42);
    return mg::randn({8, 4});
  }();
  static const mg::Tensor y = mg::tensor({0.5, -1.0}).unsqueeze(0).expand({8, 2});
  return (net.forward(x) - y).pow(2).mean();
}

void train(Net& net, optim::Optimizer& opt, int steps) {
  for (int i = 0; i < steps; ++i) {
    opt.zero_grad();
    loss_of(net).backward();
    opt.step();
  }
}

using MakeOptimizer = std::function<std::unique_ptr<optim::Optimizer>(Net&, double lr_scale)>;

// 10 steps in one go, against 4 steps, a save of the module and the optimizer, fresh objects
// (another seed, other learning rates), a load, and 6 more steps: the parameters and the
// optimizer state must agree bit for bit.
// ext: ".safetensors" or ".pt" (PyTorch's torch.save format).
void expect_bit_identical_resume(const MakeOptimizer& make, const std::string& dir,
                                 const std::string& ext = ".safetensors") {
  mg::manual_seed(0);
  Net a;
  auto opt_a = make(a, 1.0);
  train(a, *opt_a, 10);

  mg::manual_seed(0);
  Net b;
  auto opt_b = make(b, 1.0);
  train(b, *opt_b, 4);
  nn::save(b, dir + "/model" + ext);
  optim::save(*opt_b, dir + "/optim" + ext);

  mg::manual_seed(99);
  Net c;
  auto opt_c = make(c, 7.0);
  nn::load(c, dir + "/model" + ext);
  optim::load(*opt_c, dir + "/optim" + ext);
  train(c, *opt_c, 6);

  EXPECT_EQ(snapshot(c), snapshot(a));
  const mg::OptimizerStateDict sa = opt_a->state_dict(), sc = opt_c->state_dict();
  ASSERT_EQ(sa.state.size(), sc.state.size());
  for (const auto& [pos, st] : sa.state) {
    ASSERT_EQ(sc.state.at(pos).size(), st.size());
    for (const auto& [k, t] : st) EXPECT_TRUE(same_bits(sc.state.at(pos).at(k), t)) << pos << k;
  }
  ASSERT_EQ(sa.param_groups.size(), sc.param_groups.size());
  for (std::size_t g = 0; g < sa.param_groups.size(); ++g) {
    EXPECT_EQ(sa.param_groups[g].options, sc.param_groups[g].options);
    EXPECT_EQ(sa.param_groups[g].params, sc.param_groups[g].params);
  }
}

std::unique_ptr<optim::Optimizer> make_sgd(Net& n, double s) {
  return std::make_unique<optim::SGD>(
      std::vector<optim::OptimizerParamGroup>{
          {{n.fc1->weight, n.fc1->bias, n.alpha},
           optim::SGDOptions(0.1 * s).momentum(0.9).nesterov(true)},
          {{n.fc2->weight, n.fc2->bias},
           optim::SGDOptions(0.05 * s).momentum(0.5).dampening(0.1).weight_decay(0.01)}},
      optim::SGDOptions(1));
}

std::unique_ptr<optim::Optimizer> make_adam(Net& n, double s) {
  return std::make_unique<optim::Adam>(std::vector<optim::OptimizerParamGroup>{
      {{n.fc1->weight, n.fc1->bias, n.alpha}, optim::AdamOptions(0.01 * s).amsgrad(true)},
      {{n.fc2->weight, n.fc2->bias},
       optim::AdamOptions(0.02 * s).betas({0.8, 0.99}).weight_decay(0.1)}});
}

// The same resumes through PyTorch's torch.save format (.pt files).
TEST_F(Io, SgdAndAdamResumeBitIdenticallyFromPtFiles) {
  expect_bit_identical_resume(make_sgd, dir_.string(), ".pt");
  expect_bit_identical_resume(make_adam, dir_.string(), ".pth");
}

TEST_F(Io, SgdResumesBitIdentically) { expect_bit_identical_resume(make_sgd, dir_.string()); }

TEST_F(Io, AdamResumesBitIdentically) { expect_bit_identical_resume(make_adam, dir_.string()); }

TEST_F(Io, AdamWResumesBitIdentically) {
  expect_bit_identical_resume(
      [](Net& n, double s) {
        return std::make_unique<optim::AdamW>(std::vector<optim::OptimizerParamGroup>{
            {{n.fc1->weight, n.fc1->bias, n.alpha}, optim::AdamWOptions(0.01 * s)},
            {{n.fc2->weight, n.fc2->bias}, optim::AdamWOptions(0.03 * s).eps(1e-6).amsgrad(true)}});
      },
      dir_.string());
}

TEST_F(Io, OptimizerStateDictLayout) {
  mg::manual_seed(0);
  Net net;
  optim::Adam opt({net.fc1->weight, net.fc1->bias, net.fc2->weight},
                  optim::AdamOptions(0.5).amsgrad(true));
  mg::OptimizerStateDict sd = opt.state_dict();
  EXPECT_EQ(sd.optimizer, "Adam");
  EXPECT_TRUE(sd.state.empty());  // no step yet
  opt.zero_grad();
  loss_of(net).backward();
  net.fc1->bias.set_grad(mg::Tensor());  // a parameter without a gradient gets no state
  opt.step();
  sd = opt.state_dict();
  ASSERT_EQ(sd.param_groups.size(), 1u);
  std::vector<std::string> names;
  for (const auto& [n, v] : sd.param_groups[0].options) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"lr", "betas", "eps", "weight_decay", "amsgrad",
                                             "maximize"}));
  EXPECT_EQ(sd.param_groups[0].options[0].second, mg::OptionValue(0.5));
  EXPECT_EQ(sd.param_groups[0].options[1].second, mg::OptionValue(std::vector<double>{0.9, 0.999}));
  EXPECT_EQ(sd.param_groups[0].options[4].second, mg::OptionValue(true));
  EXPECT_EQ(sd.param_groups[0].params, (std::vector<std::int64_t>{0, 1, 2}));
  ASSERT_EQ(sd.state.size(), 2u);
  EXPECT_TRUE(sd.state.contains(0));
  EXPECT_TRUE(sd.state.contains(2));
  std::vector<std::string> keys;
  for (const auto& [k, v] : sd.state.at(0)) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"exp_avg", "exp_avg_sq", "max_exp_avg_sq", "step"}));
  EXPECT_EQ(sd.state.at(0).at("step").item<float>(), 1.0f);
  EXPECT_EQ(sd.state.at(0).at("step").dim(), 0);

  // The file: tensors "state.<position>.<name>", the groups as JSON in the metadata.
  optim::save(opt, path("opt.safetensors"));
  const mg::SafetensorsFile f = mg::load_safetensors(path("opt.safetensors"));
  EXPECT_EQ(
      keys_of(f.tensors),
      (std::vector<std::string>{"state.0.exp_avg", "state.0.exp_avg_sq", "state.0.max_exp_avg_sq",
                                "state.0.step", "state.2.exp_avg", "state.2.exp_avg_sq",
                                "state.2.max_exp_avg_sq", "state.2.step"}));
  EXPECT_EQ(f.metadata,
            (mg::Metadata{
                {"format", "minigrad.optimizer"},
                {"optimizer", "Adam"},
                {"param_groups", R"([{"lr":0.5,"betas":[0.9,0.999],"eps":1e-08,"weight_decay":0.0,)"
                                 R"("amsgrad":true,"maximize":false,"params":[0,1,2]}])"},
            }));
}

TEST_F(Io, OptimizerLoadStateDictChecksEverythingFirst) {
  mg::manual_seed(0);
  Net net;
  optim::SGD opt({{{net.fc1->weight, net.fc1->bias}, optim::SGDOptions(0.1).momentum(0.9)},
                  {{net.fc2->weight}, optim::SGDOptions(0.2)}},
                 optim::SGDOptions(1));
  train(net, opt, 2);
  const mg::OptimizerStateDict good = opt.state_dict();
  auto unchanged = [&] {
    const mg::OptimizerStateDict now = opt.state_dict();
    EXPECT_EQ(opt.param_groups()[0].options().get_lr(), 0.1);
    EXPECT_EQ(opt.param_groups()[1].options().get_lr(), 0.2);
    ASSERT_EQ(now.state.size(), 2u);
    EXPECT_TRUE(
        same_bits(now.state.at(0).at("momentum_buffer"), good.state.at(0).at("momentum_buffer")));
  };
  auto edited = [&](const std::function<void(mg::OptimizerStateDict&)>& edit) {
    mg::OptimizerStateDict d = good;
    for (auto& [pos, st] : d.state)
      for (auto& [k, t] : st) t = t.clone();
    d.param_groups[0].options[0].second = 0.5;  // valid edits that must not be applied
    d.state.at(0).at("momentum_buffer") = mg::zeros_like(d.state.at(0).at("momentum_buffer"));
    edit(d);
    return d;
  };
  struct Case {
    const char* what;
    std::function<void(mg::OptimizerStateDict&)> edit;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"other optimizer", [](auto& d) { d.optimizer = "Adam"; },
       "[load_state_dict] SGD: the state_dict is Adam's, not SGD's"},
      {"group count", [](auto& d) { d.param_groups.pop_back(); },
       "the state_dict has 1 parameter groups, the optimizer has 2"},
      {"group size", [](auto& d) { d.param_groups[1].params.push_back(3); },
       "parameter group 1 of the state_dict has 2 parameters, the optimizer's has 1"},
      {"repeated position", [](auto& d) { d.param_groups[1].params[0] = 0; },
       "parameter position 0 appears twice in param_groups"},
      {"unknown option", [](auto& d) { d.param_groups[0].options.emplace_back("betas", 0.5); },
       "unknown option \"betas\" in parameter group 0"},
      {"option type", [](auto& d) { d.param_groups[1].options[4].second = 1.0; },
       "option \"nesterov\" of parameter group 1 must be true or false"},
      {"invalid option", [](auto& d) { d.param_groups[1].options[0].second = -1.0; },
       "[SGD] Invalid learning rate: -1 (must be >= 0)"},
      {"state shape", [](auto& d) { d.state.at(1).at("momentum_buffer") = mg::zeros({4}); },
       "state \"momentum_buffer\" of parameter 1 has shape (4,) float32, the parameter has "
       "(3,) float32"},
      {"integer state",
       [](auto& d) { d.state.at(1).at("momentum_buffer") = mg::zeros({3}, mg::kInt64); },
       "has shape (3,) int64, the parameter has (3,) float32"},
      {"unknown state", [](auto& d) { d.state.at(1)["exp_avg"] = mg::zeros({3}); },
       "unknown state \"exp_avg\" for parameter 1"},
      {"missing state",
       [](auto& d) {
         d.state.at(1) = {{"other", mg::zeros({3})}};
       },
       "the state of parameter 1 has no \"momentum_buffer\""},
      {"stray position", [](auto& d) { d.state[7] = {}; },
       "state for parameter position 7, which no parameter group lists"},
  };
  for (const Case& c : cases) {
    const mg::OptimizerStateDict d = edited(c.edit);
    const std::string msg = error_of([&] { opt.load_state_dict(d); });
    EXPECT_NE(msg.find(c.message), std::string::npos)
        << c.what << ": " << msg << "\nexpected to contain: " << c.message;
    unchanged();
  }
  // The valid edits alone load, as copies.
  const mg::OptimizerStateDict ok = edited([](auto&) {});
  opt.load_state_dict(ok);
  EXPECT_EQ(opt.param_groups()[0].options().get_lr(), 0.5);
  EXPECT_EQ(opt.state_dict().state.at(0).at("momentum_buffer").sum().item<float>(), 0.0f);
  EXPECT_FALSE(opt.state_dict()
                   .state.at(0)
                   .at("momentum_buffer")
                   .is_same(ok.state.at(0).at("momentum_buffer")));
}

TEST_F(Io, OptimizerFilesAreValidated) {
  mg::manual_seed(0);
  Net net;
  optim::AdamW opt(net.parameters());
  train(net, opt, 1);
  // Not an optimizer checkpoint.
  nn::save(net, path("model.safetensors"));
  EXPECT_ERROR_HAS(optim::load(opt, path("model.safetensors")),
                   "[load_optimizer_state] " + path("model.safetensors") +
                       ": metadata \"format\" is missing (not an optimizer checkpoint?)");
  // Another optimizer's checkpoint: an error naming the file.
  optim::SGD sgd(net.parameters(), optim::SGDOptions(0.1).momentum(0.9));
  train(net, sgd, 1);
  optim::save(sgd, path("sgd.safetensors"));
  EXPECT_ERROR_HAS(optim::load(opt, path("sgd.safetensors")),
                   "[load_state_dict] AdamW: the state_dict is SGD's, not AdamW's (loading " +
                       path("sgd.safetensors") + ")");
  // Malformed layouts.
  auto write = [&](const mg::NamedTensors& t, const std::string& groups) {
    mg::save_safetensors(
        path("x.safetensors"), t,
        {{"format", "minigrad.optimizer"}, {"optimizer", "AdamW"}, {"param_groups", groups}});
    return error_of([&] { optim::load(opt, path("x.safetensors")); });
  };
  EXPECT_NE(write({{"exp_avg", mg::zeros({1})}}, "[]")
                .find("tensor \"exp_avg\" is not named state.<position>.<name>"),
            std::string::npos);
  EXPECT_NE(write({{"state.x.exp_avg", mg::zeros({1})}}, "[]").find("is not named state."),
            std::string::npos);
  EXPECT_NE(write({}, "[{\"lr\": 0.1").find("metadata \"param_groups\" is not valid JSON"),
            std::string::npos);
  EXPECT_NE(write({}, "{}").find("param_groups must be a JSON list"), std::string::npos);
  EXPECT_NE(write({}, "[{\"lr\": 0.1}]").find("a param group has no \"params\""),
            std::string::npos);
  EXPECT_NE(write({}, "[{\"lr\": \"fast\", \"params\": []}]")
                .find("option \"lr\" must be a number, a bool or a list of numbers"),
            std::string::npos);
  // Options JSON cannot hold inf.
  optim::SGD inf_sgd(net.parameters(),
                     optim::SGDOptions(0.1).weight_decay(std::numeric_limits<double>::infinity()));
  EXPECT_ERROR_HAS(optim::save(inf_sgd, path("inf.safetensors")),
                   "option \"weight_decay\" is inf, which JSON cannot store");
}

// Issue 36: hostile optimizer metadata. 100,000 nested arrays (a stack overflow in the JSON
// library's recursive dump()), 1e400 (its out_of_range), a 10 MB value (pasted whole into the
// message), a NaN or negative step (accepted, failing at the next step()): each a clear
// minigrad::Error at load, quoting at most a few hundred bytes, the optimizer unchanged.
TEST_F(Io, HostileOptimizerFilesGiveClearErrors) {
  mg::manual_seed(0);
  Net net;
  optim::Adam opt(net.parameters());
  train(net, opt, 1);
  const std::string good = path("adam.safetensors");
  optim::save(opt, good);
  mg::SafetensorsFile file = mg::load_safetensors(good);
  const std::string groups = file.metadata.at("param_groups");
  auto write = [&](const mg::NamedTensors& tensors, const std::string& param_groups,
                   const std::string& format = "minigrad.optimizer") {
    mg::save_safetensors(
        path("x.safetensors"), tensors,
        {{"format", format}, {"optimizer", "Adam"}, {"param_groups", param_groups}});
    return error_of([&] { optim::load(opt, path("x.safetensors")); });
  };
  mg::NamedTensors tensors;
  for (const auto& [name, t] : file.tensors) tensors.emplace_back(name, t);
  const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
  std::string e = write(tensors, deep);
  EXPECT_NE(e.find("nests arrays and objects more than 3 levels deep"), std::string::npos) << e;
  std::string flipped = groups;
  const std::size_t eps = flipped.find("1e-08");
  ASSERT_NE(eps, std::string::npos) << groups;
  flipped.replace(eps, 5, "1e908");
  e = write(tensors, flipped);
  EXPECT_NE(e.find("metadata \"param_groups\" is not valid JSON"), std::string::npos) << e;
  e = write(tensors, groups, std::string(10'000'000, 'x'));
  EXPECT_NE(e.find("metadata \"format\" is \"xxx"), std::string::npos) << e.substr(0, 300);
  EXPECT_LT(e.size(), 1000u);
  e = write(tensors, "[{\"" + std::string(1'000'000, 'k') + "\": 1, \"params\": [0]}]");
  EXPECT_LT(e.size(), 1000u);
  EXPECT_NE(e.find("is longer than 64 bytes"), std::string::npos) << e.substr(0, 300);
  e = write(tensors, "[{\"lr\": [" + std::string(1'000'000, '1') + "], \"params\": [0]}]");
  EXPECT_LT(e.size(), 1000u);
  for (double step : {std::nan(""), -1.0}) {
    mg::NamedTensors bad = tensors;
    for (auto& [name, t] : bad)
      if (name.size() > 5 && name.compare(name.size() - 5, 5, ".step") == 0)
        t = mg::scalar_tensor(step, mg::kFloat32);
    e = write(bad, groups);
    EXPECT_NE(e.find("must be a finite number >= 0, got " + std::string(step < 0 ? "-1" : "nan")),
              std::string::npos)
        << e;
  }
  // Nothing changed: the optimizer still steps exactly as one loaded from the good file.
  optim::load(opt, good);
  train(net, opt, 1);
}

// ================================ PyTorch interop ================================

const std::string& kPython = minigrad_test::python();
using minigrad_test::run;
using minigrad_test::torch_missing;

std::string script_command(const std::string& mode, const std::string& dir) {
  return kPython + " '" + MINIGRAD_IO_TEST_DIR + "/torch_interop.py' " + mode + " '" + dir + "'";
}

// minigrad -> PyTorch -> minigrad: the key names and order, the forward, values written back.
TEST_F(Io, TorchLoadsMinigradsCheckpointAndBack) {
  if (const std::string why = torch_missing(); !why.empty()) GTEST_SKIP() << why;
  mg::manual_seed(0);
  Net net;
  mg::Tensor x = mg::randn({5, 4});
  nn::save(net, path("minigrad_model.safetensors"), {{"written_by", "minigrad"}});
  mg::save_npy(path("input.npy"), x);
  std::string out;
  ASSERT_EQ(run(script_command("model", dir_.string()), out), 0) << out;
  EXPECT_EQ(out, "ok\n");

  mg::NoGradGuard no_grad;
  const mg::Tensor y = net.forward(x);
  const mg::Tensor y_torch = mg::load_npy(path("torch_output.npy"));
  ASSERT_EQ(y_torch.shape(), (mg::Shape{5, 2}));
  EXPECT_TRUE(mg::allclose(y, y_torch, 1e-5, 1e-6)) << y << "\n" << y_torch;

  // Round trip unchanged, bit for bit.
  mg::manual_seed(3);
  Net back;
  nn::load(back, path("torch_same.safetensors"));
  EXPECT_EQ(snapshot(back), snapshot(net));
  EXPECT_EQ(mg::load_safetensors(path("torch_same.safetensors"))
                .metadata.at("written_by")
                .rfind("torch ", 0),
            0u);

  // Modified in PyTorch (every tensor doubled): minigrad sees the new values and forward.
  Net doubled;
  nn::load(doubled, path("torch_doubled.safetensors"));
  const nn::StateDict want = net.state_dict(), got = doubled.state_dict();
  for (std::size_t i = 0; i < want.size(); ++i)
    EXPECT_TRUE(same_bits(got[i].second, want[i].second * 2.0)) << want[i].first;
  EXPECT_TRUE(
      mg::allclose(doubled.forward(x), mg::load_npy(path("torch_doubled_output.npy")), 1e-5, 1e-6));
}

TEST_F(Io, TorchReadsAndWritesEveryDtype) {
  if (const std::string why = torch_missing(); !why.empty()) GTEST_SKIP() << why;
  const mg::Tensor base = mg::arange(0.0, 6.0, 1.0, mg::kFloat32).reshape({2, 3});
  const mg::NamedTensors tensors = {
      {"f32", base / 4.0},
      {"f64", mg::tensor({0.1, -2.5, 1e300}, {3}, mg::kFloat64)},
      {"i64", mg::tensor({-4611686018427387904.0, 7}, {1, 2}, mg::kInt64)},
      {"bool", mg::tensor({1, 0, 1}, {3}, mg::kBool)},
      {"scalar", mg::scalar_tensor(3.5)},
      {"empty", mg::zeros({0, 4}, mg::kFloat64)},
      {"transposed", base.t()},
  };
  mg::save_safetensors(path("minigrad_dtypes.safetensors"), tensors);
  std::string out;
  ASSERT_EQ(run(script_command("dtypes", dir_.string()), out), 0) << out;
  const mg::SafetensorsFile f = mg::load_safetensors(path("torch_dtypes.safetensors"));
  ASSERT_EQ(f.tensors.size(), tensors.size());
  for (const auto& [name, t] : tensors) {
    const mg::Tensor want = t.dtype() == mg::kBool ? mg::logical_not(t) : t + 1;
    EXPECT_TRUE(same_bits(f.at(name), want)) << name;
  }
}

}  // namespace

// ================================ torch.save format (.pt) ================================

using namespace minigrad_test;  // the hand-made .pt files of io/torch_files.h

namespace {

// The tensors torch_interop.py's pt_layouts() saves: views of one storage, every dtype.
mg::NamedTensors pt_layouts() {
  const mg::Tensor base = mg::arange(0.0, 24.0, 1.0, mg::kFloat32).reshape({4, 6});
  return {
      {"base", base},
      {"narrowed", base.narrow(0, 1, 2).narrow(1, 2, 3)},
      {"transposed", base.t()},
      {"column", base.select(1, 3)},
      {"f64", mg::tensor({0.1, -2.5, 1e300}, {3}, mg::kFloat64)},
      {"i64", mg::tensor({-4611686018427387904.0, 7}, {1, 2}, mg::kInt64)},
      {"bool", mg::tensor({1, 0, 1}, {3}, mg::kBool)},
      {"scalar", mg::scalar_tensor(3.5)},
      {"empty", mg::zeros({0, 4}, mg::kFloat64)},
      {"param", mg::tensor({1.0, 2.0})},
  };
}

void expect_same_tensors(const mg::NamedTensors& got, const mg::NamedTensors& want) {
  ASSERT_EQ(keys_of(got), keys_of(want));
  for (std::size_t i = 0; i < want.size(); ++i)
    EXPECT_TRUE(same_bits(got[i].second, want[i].second)) << want[i].first;
}

}  // namespace

TEST_F(Io, TorchFormatRoundTripsInMinigrad) {
  const mg::NamedTensors tensors = pt_layouts();
  mg::save_torch(path("t.pt"), tensors);
  expect_same_tensors(mg::load_torch(path("t.pt")), tensors);
  // As torch.save writes it: a zip archive whose first entry is <name>/data.pkl, stored, its
  // data 64-byte aligned.
  const std::string bytes = read_bytes(path("t.pt"));
  ASSERT_GT(bytes.size(), 30u);
  EXPECT_EQ(bytes.substr(0, 4), "PK\x03\x04");
  const auto u16 = [&](std::size_t at) {
    return static_cast<unsigned char>(bytes[at]) + 256u * static_cast<unsigned char>(bytes[at + 1]);
  };
  EXPECT_EQ(u16(8), 0u);  // stored
  EXPECT_EQ(bytes.substr(30, u16(26)), "archive/data.pkl");
  EXPECT_EQ((30 + u16(26) + u16(28)) % 64, 0u);
  // A hand-made archive reads too (and is the control for the hostile files below).
  write_bytes(path("hand.pt"), pt_of(pk_state_dict(2, pk_int(2) + "\x85", pk_int(1) + "\x85"),
                                     raw_of<float>({1.5f, -2.0f})));
  expect_same_tensors(mg::load_torch(path("hand.pt")), {{"w", mg::tensor({1.5, -2.0})}});
  // The same with zip64 sizes and offsets, as a writer stores entries past 4 GiB.
  write_bytes(path("hand64.pt"), pt_of(pk_state_dict(2, pk_int(2) + "\x85", pk_int(1) + "\x85"),
                                       raw_of<float>({1.5f, -2.0f}), /*zip64=*/true));
  expect_same_tensors(mg::load_torch(path("hand64.pt")), {{"w", mg::tensor({1.5, -2.0})}});

  // nn::save and nn::load choose the format by the extension.
  mg::manual_seed(0);
  Net a;
  nn::save(a, path("m.pt"));
  mg::manual_seed(1);
  Net b;
  nn::load(b, path("m.pt"));
  EXPECT_EQ(snapshot(b), snapshot(a));
  EXPECT_ERROR_HAS(mg::load_safetensors(path("m.pt")), "[load_safetensors]");
  EXPECT_ERROR_HAS(nn::save(a, path("m2.pth"), {{"k", "v"}}), "no place for metadata");
  EXPECT_ERROR_HAS(mg::save_torch(path("u.pt"), {{"caf\xc3", mg::zeros({1})}}),
                   "is not valid UTF-8, which torch.load could not read");
  EXPECT_ERROR_HAS(mg::save_torch(path("u.pt"), {{"\xed\xa0\x80", mg::zeros({1})}}),  // surrogate
                   "is not valid UTF-8");
  mg::save_torch(path("u.pt"), {{"caf\xc3\xa9 \xf0\x9f\x98\x80", mg::zeros({1})}});
  EXPECT_EQ(mg::load_torch(path("u.pt")).at(0).first, "caf\xc3\xa9 \xf0\x9f\x98\x80");
}

TEST_F(Io, HostilePtFilesGiveClearErrorsAndChangeNothing) {
  mg::manual_seed(0);
  Net net;
  const auto before = snapshot(net);
  const std::string x = path("x.pt");
  auto load_error = [&](const std::string& bytes) {
    write_bytes(x, bytes);
    const std::string e = error_of([&] { nn::load(net, x); });
    EXPECT_EQ(snapshot(net), before) << e;
    return e;
  };
  const std::string one = pk_int(1) + "\x85";
  const std::string w = raw_of<float>({1.5f});
  // Code execution is refused by name; so is every opcode a state_dict does not need.
  EXPECT_NE(load_error(pt_of("\x80\x02"
                             "cos\nsystem\n" +
                                 pk_str("ls") + "\x85R.",
                             w))
                .find("data.pkl: refused the global os.system"),
            std::string::npos);
  EXPECT_NE(load_error(pt_of("\x80\x02"
                             "c__builtin__\neval\n.",
                             w))
                .find("__builtin__.eval"),
            std::string::npos);
  EXPECT_NE(load_error(pt_of("\x80\x02(i__main__\nX\n.", w)).find("unsupported pickle opcode 0x69"),
            std::string::npos);
  // Deep nesting, huge sizes, views outside their storage, short records.
  std::string deep = "\x80\x02" + pk_int(0);
  for (int i = 0; i < 100'000; ++i) deep += "\x85";
  EXPECT_NE(load_error(pt_of(deep + ".", w)).find("deeper than the limit of 32 levels"),
            std::string::npos);
  EXPECT_NE(load_error(pt_of(pk_state_dict(1, pk_int(1ull << 40) + "\x85", one), w))
                .find("does not fit in its storage \"0\" of 1 elements"),
            std::string::npos);
  EXPECT_NE(load_error(pt_of(pk_state_dict(1ull << 62, one, one), w))
                .find("storage \"0\" of 4611686018427387904 elements is too large"),
            std::string::npos);
  EXPECT_NE(load_error(pt_of(pk_state_dict(6, one, one), w))
                .find("record m/data/0 has 4 bytes, but its storage holds 6 float32 elements"),
            std::string::npos);
  EXPECT_NE(load_error(pt_of(pk_state_dict(1, "(" + pk_int(1) + pk_int(1) + "t", one), w))
                .find("size and stride"),
            std::string::npos);
  EXPECT_NE(load_error(pt_of("\x80\x02" + pk_str("x") + std::string("q\x00h\x01.", 5), w))
                .find("memo entry 1, which was never stored"),
            std::string::npos);
  EXPECT_NE(load_error(pt_of(std::string("\x80\x02]q\x00h\x00"
                                         "a.",
                                         9),
                             w))
                .find("not a state_dict"),
            std::string::npos);  // a list containing itself: refused, nothing leaks
  // Views repeating one storage (256 KiB) 40 times: more than 16 times the file.
  std::string repeated = "\x80\x02" + kPkOrderedDict + "(";
  for (int i = 0; i < 40; ++i)
    repeated.append(pk_str(std::string(1, 'a' + static_cast<char>(i))))
        .append(pk_tensor(65536, pk_int(65536) + "\x85", pk_int(1) + "\x85"));
  EXPECT_NE(load_error(pt_of(repeated + "u.", std::string(65536 * 4, '\0')))
                .find("more than 16 times the file's"),
            std::string::npos);
  // The zip container: a bad CRC, an entry running into the central directory, and every
  // truncation of a real checkpoint.
  nn::save(net, path("good.pt"));
  const std::string good = read_bytes(path("good.pt"));
  std::string flipped = good;
  flipped[flipped.find("OrderedDict")] = 'o';
  EXPECT_NE(load_error(flipped).find("zip entry \"archive/data.pkl\" fails its CRC-32 check"),
            std::string::npos);
  std::string compressed = pt_of(pk_state_dict(1, one, one), w);
  compressed[8] = 8;  // deflate, in the local header and the central directory
  compressed[compressed.find("PK\x01\x02") + 10] = 8;
  EXPECT_NE(load_error(compressed).find("is compressed (method 8)"), std::string::npos);
  for (std::size_t n = 0; n < good.size(); n += 7) {
    const std::string e = load_error(good.substr(0, n));
    EXPECT_EQ(e.rfind("[load_torch] " + x + ": ", 0), 0u) << n << ": " << e;
  }
  EXPECT_NE(load_error(good.substr(0, good.size() / 2)).find("not a zip archive"),
            std::string::npos);
}

// One run of torch_interop.py (importing torch takes seconds) checks both directions for a
// module (views, shared storages, every dtype) and for Adam.
TEST_F(Io, TorchOpensMinigradsPtFilesAndMinigradOpensTorchs) {
  if (const std::string why = torch_missing(); !why.empty()) GTEST_SKIP() << why;
  mg::manual_seed(0);
  Net net;
  const mg::Tensor x = mg::randn({5, 4});
  nn::save(net, path("minigrad_model.pt"));
  mg::save_npy(path("input.npy"), x);
  mg::save_torch(path("minigrad_dtypes.pt"), pt_layouts());
  // Adam with two groups after 2 steps, and loss_of's input.
  mg::manual_seed(0);
  Net trained;
  auto opt = make_adam(trained, 1.0);
  train(trained, *opt, 2);
  nn::save(trained, path("minigrad_trained.pt"));
  optim::save(*opt, path("minigrad_adam.pt"));
  mg::manual_seed(42);
  mg::save_npy(path("loss_input.npy"), mg::randn({8, 4}));
  {
    mg::manual_seed(0);
    Net n;
    auto sgd = make_sgd(n, 1.0);
    train(n, *sgd, 2);
    optim::save(*sgd, path("minigrad_sgd.pt"));
  }
  std::string out;
  ASSERT_EQ(run(script_command("pt", dir_.string()), out), 0) << out;
  EXPECT_EQ(out, "ok\n");

  {
    mg::NoGradGuard no_grad;
    EXPECT_TRUE(mg::allclose(net.forward(x), mg::load_npy(path("torch_output.npy")), 1e-5, 1e-6));
    Net doubled;
    nn::load(doubled, path("torch_doubled.pt"));
    const nn::StateDict want = net.state_dict(), got = doubled.state_dict();
    for (std::size_t i = 0; i < want.size(); ++i)
      EXPECT_TRUE(same_bits(got[i].second, want[i].second * 2.0)) << want[i].first;
    // torch.save's views (offsets, strides, one storage shared by four tensors), every dtype
    // and a Parameter, bit for bit.
    expect_same_tensors(mg::load_torch(path("torch_layouts.pt")), pt_layouts());
  }

  // Three more Adam steps here and in PyTorch agree (float32 rounding apart), parameters and
  // state, and torch's options load as ours.
  train(trained, *opt, 3);
  mg::manual_seed(7);
  Net from_torch;
  auto opt_torch = make_adam(from_torch, 5.0);
  nn::load(from_torch, path("torch_model_after.pt"));
  optim::load(*opt_torch, path("torch_adam_after.pt"));
  const nn::StateDict want = trained.state_dict(), got = from_torch.state_dict();
  for (std::size_t i = 0; i < want.size(); ++i)
    EXPECT_TRUE(mg::allclose(got[i].second, want[i].second, 1e-4, 1e-6)) << want[i].first;
  const mg::OptimizerStateDict sw = opt->state_dict(), sg = opt_torch->state_dict();
  ASSERT_EQ(sg.state.size(), sw.state.size());
  for (const auto& [pos, st] : sw.state) {
    ASSERT_EQ(sg.state.at(pos).size(), st.size()) << pos;
    for (const auto& [k, t] : st)
      EXPECT_TRUE(mg::allclose(sg.state.at(pos).at(k), t, 1e-4, 1e-9)) << pos << " " << k;
  }
  ASSERT_EQ(sg.param_groups.size(), sw.param_groups.size());
  for (std::size_t g = 0; g < sw.param_groups.size(); ++g)
    EXPECT_EQ(sg.param_groups[g].options, sw.param_groups[g].options) << g;

  // torch's SGD without momentum (its momentum_buffer is None) and AdamW load too.
  optim::SGD sgd(from_torch.parameters(), optim::SGDOptions(0.5).momentum(0.3));
  optim::load(sgd, path("torch_sgd.pt"));
  EXPECT_EQ(sgd.state_dict().state.size(), 0u);
  EXPECT_EQ(*sgd.option(0, "lr"), mg::OptionValue(0.125));
  EXPECT_EQ(*sgd.option(0, "momentum"), mg::OptionValue(0.0));
  optim::AdamW adamw(from_torch.parameters());
  optim::load(adamw, path("torch_adamw.pt"));
  EXPECT_EQ(*adamw.option(0, "lr"), mg::OptionValue(0.25));
  const mg::OptimizerStateDict sa = adamw.state_dict();
  ASSERT_EQ(sa.state.size(), 5u);
  EXPECT_EQ(sa.state.at(0).at("step").item<double>(), 1.0);
  EXPECT_EQ(sa.state.at(4).at("exp_avg").shape(), from_torch.parameters()[4].shape());
}
