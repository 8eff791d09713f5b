// Serialization archives as libtorch's (minigrad/serialize.h): OutputArchive / InputArchive,
// files and streams, mg::save / mg::load of tensors, tensor vectors, modules and optimizers, the
// errors (libtorch's phrases), hostile bytes, and PyTorch reading and writing the same files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "documented_errors.h"
#include "io/python_runner.h"
#include "io/torch_files.h"
#include "minigrad/minigrad.h"
#include "nn/module_test_helpers.h"

namespace mg = minigrad;
namespace nn = minigrad::nn;
namespace fs = std::filesystem;
using mg::serialize::InputArchive;
using mg::serialize::OutputArchive;

namespace {

using minigrad::testing::error_of;

// Whether the error stmt throws contains text (the message shows on failure).
#define EXPECT_ERROR_HAS(stmt, text) \
  EXPECT_PRED_FORMAT2(::testing::IsSubstring, std::string(text), error_of([&] { stmt; }))

class Archive : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("minigrad_archive_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

mg::Tensor f32(std::vector<float> v, mg::Shape shape) {
  return mg::tensor(v, mg::kFloat32).reshape(shape);
}

// The bytes of a small archive, as save_to(std::ostream&) writes them.
std::string archive_bytes() {
  OutputArchive out;
  out.write("w", f32({1, 2, 3, 4, 5, 6}, {2, 3}));
  out.write("n", 7);
  return [&] {
    std::ostringstream s;
    out.save_to(s);
    return s.str();
  }();
}

TEST_F(Archive, TensorsScalarsAndNestedArchivesRoundTripThroughAFile) {
  OutputArchive out;
  out.write("w", f32({1, 2, 3, 4, 5, 6}, {2, 3}));
  out.write("idx", mg::tensor(std::vector<std::int64_t>{-3, 0, 1LL << 40}, mg::kInt64));
  out.write("mask", mg::tensor({true, false}), /*is_buffer=*/true);
  out.write("empty", mg::zeros({0, 4}));
  out.write("scalar", mg::tensor(std::vector<double>{2.5}, mg::kFloat64).reshape({}));
  out.write("epoch", 3);
  out.write("lr", 0.125);
  out.write("done", true);
  out.write("name", "résumé");
  OutputArchive sub, deep;
  deep.write("x", f32({9}, {1}));
  sub.write("b", f32({1, 2}, {2}));
  sub.write("deep", deep);
  out.write("sub", sub);
  out.save_to(path("a.pt"));

  InputArchive in;
  in.load_from(path("a.pt"));
  EXPECT_EQ(in.keys(), (std::vector<std::string>{"w", "idx", "mask", "empty", "scalar", "epoch",
                                                 "lr", "done", "name", "sub.b", "sub.deep.x"}));
  mg::Tensor w, idx, mask, empty, scalar;
  in.read("w", w);
  in.read("idx", idx);
  in.read("mask", mask, /*is_buffer=*/true);
  in.read("empty", empty);
  in.read("scalar", scalar);
  EXPECT_EQ(w.shape(), (mg::Shape{2, 3}));
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(idx.to_vector<std::int64_t>(), (std::vector<std::int64_t>{-3, 0, 1LL << 40}));
  EXPECT_EQ(mask.dtype(), mg::kBool);
  EXPECT_EQ(mask.to_vector<bool>(), (std::vector<bool>{true, false}));
  EXPECT_EQ(empty.shape(), (mg::Shape{0, 4}));
  EXPECT_EQ(scalar.dim(), 0);
  EXPECT_EQ(scalar.dtype(), mg::kFloat64);
  std::int64_t epoch = 0;
  double lr = 0;
  bool done = false;
  std::string name;
  in.read("epoch", epoch);
  in.read("lr", lr);
  in.read("done", done);
  in.read("name", name);
  EXPECT_EQ(epoch, 3);
  EXPECT_EQ(lr, 0.125);
  EXPECT_TRUE(done);
  EXPECT_EQ(name, "résumé");
  double epoch_as_double = 0;  // an int reads as a double
  in.read("epoch", epoch_as_double);
  EXPECT_EQ(epoch_as_double, 3.0);

  InputArchive in_sub, in_deep;
  in.read("sub", in_sub);
  EXPECT_EQ(in_sub.keys(), (std::vector<std::string>{"b", "deep.x"}));
  in_sub.read("deep", in_deep);
  mg::Tensor x;
  in_deep.read("x", x);
  EXPECT_EQ(x.to_vector<float>(), std::vector<float>{9});
  // The errors of a nested archive name the whole path (libtorch's hierarchy prefix).
  EXPECT_EQ(error_of([&] { in_deep.read("y", x); }),
            "[InputArchive.read] No such serialized tensor 'sub.deep.y'");
  EXPECT_EQ(error_of([&] { in_sub.read("nope", in_deep); }),
            "[InputArchive.read] No such serialized submodule: 'sub.nope'");
  EXPECT_EQ(error_of([&] { in.read("missing", epoch); }),
            "[InputArchive.read] No such serialized value 'missing' (to read as an int)");
  EXPECT_EQ(error_of([&] { in.read("w", epoch); }),
            "[InputArchive.read] 'w' is a tensor in the archive, not an int");
}

TEST_F(Archive, ReadCopiesIntoADefinedTensorAndChecksItsShape) {
  OutputArchive out;
  out.write("w", f32({1, 2, 3, 4}, {2, 2}));
  std::stringstream stream;
  out.save_to(stream);
  InputArchive in;
  in.load_from(stream);

  mg::Tensor target = mg::zeros({2, 2}).requires_grad_(true);
  const auto* impl = target.impl();
  in.read("w", target);
  EXPECT_EQ(target.impl(), impl);  // in place, as libtorch's (a module's handles stay valid)
  EXPECT_TRUE(target.requires_grad());
  EXPECT_EQ(target.to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(target.grad_fn(), nullptr);  // not recorded

  mg::Tensor wrong = mg::zeros({4});
  EXPECT_EQ(error_of([&] { in.read("w", wrong); }),
            "[InputArchive.read] tensor 'w' has shape (2, 2) in the archive, the tensor to read "
            "into has (4,)");
  // try_read: false for an absent key or another kind, and the tensor is untouched.
  mg::Tensor u;
  EXPECT_FALSE(in.try_read("v", u));
  EXPECT_FALSE(u.defined());
  InputArchive nested;
  EXPECT_FALSE(in.try_read("w", nested));
  std::int64_t i = 5;
  EXPECT_FALSE(in.try_read("w", i));
  EXPECT_EQ(i, 5);
  // None (an undefined tensor) reads into an undefined one only.
  OutputArchive with_none;
  with_none.write("none", mg::Tensor());
  std::stringstream none_stream;
  with_none.save_to(none_stream);
  InputArchive none_in;
  none_in.load_from(none_stream);
  mg::Tensor undefined;
  none_in.read("none", undefined);
  EXPECT_FALSE(undefined.defined());
  EXPECT_EQ(error_of([&] { none_in.read("none", target); }),
            "[InputArchive.read] tensor 'none' is None in the archive; the tensor to read into is "
            "defined");
  EXPECT_EQ(error_of([&] { in.read("v", u); }),
            "[InputArchive.read] No such serialized tensor 'v'");
}

TEST_F(Archive, WritingAKeyTwiceThrows) {
  OutputArchive out;
  out.write("w", mg::zeros({1}));
  EXPECT_EQ(error_of([&] { out.write("w", 1.0); }),
            "[OutputArchive.write] key 'w' is already written");
  OutputArchive sub;
  sub.write("b", mg::zeros({1}));
  out.write("sub.b", mg::zeros({1}));
  EXPECT_EQ(error_of([&] { out.write("sub", sub); }),
            "[OutputArchive.write] key 'sub.b' is already written");
}

TEST_F(Archive, StreamsWriterFunctionsAndMemory) {
  const std::string bytes = archive_bytes();
  // A writer function gets the same bytes.
  OutputArchive out;
  out.write("w", f32({1, 2, 3, 4, 5, 6}, {2, 3}));
  out.write("n", 7);
  std::string written;
  out.save_to([&](const void* p, std::size_t n) {
    written.append(static_cast<const char*>(p), n);
    return n;
  });
  EXPECT_EQ(written, bytes);
  // The writer gets the bytes in chunks; one that stops taking them is an error.
  int calls = 0;
  EXPECT_ERROR_HAS(out.save_to([&](const void*, std::size_t n) { return calls++ < 2 ? n : 0; }),
                   "[OutputArchive.save_to] the writer function took 0 of ");
  // And a file holds them too.
  out.save_to(path("a.pt"));
  EXPECT_EQ(fs::file_size(path("a.pt")), bytes.size());

  auto check = [](InputArchive& in) {
    mg::Tensor w;
    std::int64_t n = 0;
    in.read("w", w);
    in.read("n", n);
    EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
    EXPECT_EQ(n, 7);
  };
  InputArchive a, b, c;
  a.load_from(bytes.data(), bytes.size());
  check(a);
  b.load_from(
      [&](std::uint64_t pos, void* buf, std::size_t n) {
        std::memcpy(buf, bytes.data() + pos, n);
        return n;
      },
      [&] { return bytes.size(); });
  check(b);
  std::istringstream stream(bytes);
  c.load_from(stream);
  check(c);
  EXPECT_EQ(error_of([&] {
              InputArchive d;
              d.load_from([](std::uint64_t, void*, std::size_t) { return std::size_t{0}; },
                          [] { return std::size_t{1} << 40; });
            }),
            "[InputArchive.load_from] the reader function gave 0 of 1048576 bytes at offset 0 (of "
            "the 1099511627776 size_func announced)");
}

TEST_F(Archive, TruncatedCorruptAndForeignBytesThrow) {
  const std::string bytes = archive_bytes();
  auto load = [](const std::string& b) {
    std::istringstream s(b);
    InputArchive in;
    in.load_from(s);
  };
  EXPECT_ERROR_HAS(load(""), "too short for a zip archive");
  EXPECT_ERROR_HAS(load("not a checkpoint at all, but long enough to be looked at"),
                   "not a zip archive");
  // Every truncation, and a flipped byte at every 7th position: an Error, never a crash.
  for (std::size_t n = 0; n < bytes.size(); ++n)
    EXPECT_NE(error_of([&] { load(bytes.substr(0, n)); }), "(no error)") << "truncated at " << n;
  for (std::size_t k = 0; k < bytes.size(); k += 7) {
    std::string bad = bytes;
    bad[k] = static_cast<char>(bad[k] ^ 0x5A);
    try {
      load(bad);  // (a flip inside padding or a field nobody reads may load)
    } catch (const mg::Error&) {
    }
  }
  // A file: missing, or a directory.
  InputArchive in;
  EXPECT_ERROR_HAS(in.load_from(path("nope.pt")), "cannot open for reading");
  EXPECT_ERROR_HAS(in.load_from(dir_.string()), "not a regular file");
}

// Pickles a hostile torch.save file may hold: a list that contains itself, and a tuple of a tuple
// ... of (x, x), 28 levels deep (2^28 values counted with repeats): each a bounded error.
TEST_F(Archive, SelfContainingAndExponentiallySharedValuesThrow) {
  auto load = [](const std::string& pickle) {
    const std::string bytes = minigrad_test::pt_of(pickle, "");
    InputArchive in;
    in.load_from(bytes.data(), bytes.size());
  };
  // PROTO 2, EMPTY_LIST, BINPUT 0, BINGET 0, APPEND, STOP
  EXPECT_ERROR_HAS(load(std::string("\x80\x02]q\x00h\x00"
                                    "a.",
                                    10)),
                   "nests deeper than 32 levels (a container that contains itself?)");
  std::string shared = "\x80\x02K\x01";                                     // 1
  for (int k = 0; k < 28; ++k) shared += std::string("q\x00h\x00\x86", 5);  // (x, x)
  EXPECT_ERROR_HAS(load(shared + "."),
                   "the file's values, counted with repeats, are more than the limit of 2000000");
}

TEST_F(Archive, SaveAndLoadATensorAndAVectorOfTensors) {
  const mg::Tensor t = f32({1.5f, -2, 0, 4}, {2, 2});
  mg::save(t, path("t.pt"));
  mg::Tensor back;
  mg::load(back, path("t.pt"));
  EXPECT_TRUE(back.equal(t));

  std::stringstream stream;
  const std::vector<mg::Tensor> tensors = {t, mg::arange(3), mg::ones({2, 1, 2})};
  mg::save(tensors, stream);
  std::vector<mg::Tensor> loaded = {mg::zeros({1})};  // appended to, as libtorch's
  mg::load(loaded, stream);
  ASSERT_EQ(loaded.size(), 4u);
  for (std::size_t k = 0; k < 3; ++k) EXPECT_TRUE(loaded[k + 1].equal(tensors[k])) << k;

  // A file of one tensor read as a vector, and the reverse.
  std::vector<mg::Tensor> one;
  mg::load(one, path("t.pt"));
  ASSERT_EQ(one.size(), 1u);
  EXPECT_TRUE(one[0].equal(t));
  stream.seekg(0);
  mg::Tensor first;
  mg::load(first, stream);
  EXPECT_TRUE(first.equal(t));
}

struct NetImpl : nn::Module {
  NetImpl() : Module("Net") {
    seq = register_module("seq", nn::Sequential{nn::Linear(4, 3), nn::ReLU(), nn::Linear(3, 2)});
    head = register_module("head", nn::Linear(2, 1, /*bias=*/false));
    scale = register_buffer("scale", mg::full({2}, 0.5));
  }
  mg::Tensor forward(const mg::Tensor& x) { return head(seq(x) * scale); }
  nn::Sequential seq{nullptr};
  nn::Linear head{nullptr};
  mg::Tensor scale;
};
MG_MODULE(Net);

void expect_same_state(nn::Module& a, nn::Module& b) {
  const auto sa = a.state_dict(), sb = b.state_dict();
  ASSERT_EQ(sa.size(), sb.size());
  for (std::size_t k = 0; k < sa.size(); ++k) {
    EXPECT_EQ(sa[k].first, sb[k].first);
    EXPECT_TRUE(sa[k].second.equal(sb[k].second)) << sa[k].first;
  }
}

TEST_F(Archive, ModulesSaveAndLoadThroughArchivesAndFiles) {
  mg::manual_seed(1);
  Net saved;
  saved->scale.fill_(2.0);
  mg::manual_seed(2);
  Net loaded;
  // libtorch's layout, flattened to state_dict names (Note [Archive files]).
  OutputArchive out;
  saved->save(out);
  EXPECT_EQ(out.keys(), (std::vector<std::string>{"scale", "seq.0.weight", "seq.0.bias",
                                                  "seq.2.weight", "seq.2.bias", "head.weight"}));
  std::stringstream stream;
  out.save_to(stream);
  InputArchive in;
  in.load_from(stream);
  const auto* weight = loaded->head->weight.impl();
  loaded->load(in);
  expect_same_state(*saved, *loaded);
  EXPECT_EQ(loaded->head->weight.impl(), weight);  // in place

  // mg::save / mg::load of a holder, a Module&, a shared_ptr.
  mg::save(saved, path("net.pt"));
  mg::manual_seed(3);
  Net again;
  mg::load(again, path("net.pt"));
  expect_same_state(*saved, *again);
  Net third;
  mg::load(*third, path("net.pt"));
  expect_same_state(*saved, *third);
  mg::load(third.ptr(), path("net.pt"));
  mg::save(*saved, path("net2.pt"));
  EXPECT_EQ(fs::file_size(path("net.pt")), fs::file_size(path("net2.pt")));
}

// libtorch's SerializeTest.ErrorMessages (hierarchy in the messages), renamed; and a failed load
// leaves the module as it was.
struct CImpl : nn::Module {
  explicit CImpl(const std::string& x) : Module("C") { register_parameter(x, mg::ones({5})); }
};
struct BImpl : nn::Module {
  BImpl(const std::string& x, const std::string& y) : Module("B") {
    register_module(x, std::make_shared<CImpl>(y));
  }
};
struct AImpl : nn::Module {
  AImpl(const std::string& x, const std::string& y, const std::string& z) : Module("A") {
    register_module(x, std::make_shared<BImpl>(y, z));
  }
};

TEST_F(Archive, ErrorMessagesNameTheHierarchy) {
  auto model1 = std::make_shared<AImpl>("a", "b", "c");
  auto model2 = std::make_shared<AImpl>("a", "b", "x");
  auto model3 = std::make_shared<AImpl>("a", "x", "c");
  std::stringstream stream;
  mg::save(model1, stream);
  EXPECT_ERROR_HAS(mg::load(model2, stream), "No such serialized tensor 'a.b.x'");
  stream.seekg(0, std::stringstream::beg);
  EXPECT_ERROR_HAS(mg::load(model3, stream), "No such serialized submodule: 'a.x'");

  // A load that fails half way puts back what it had copied.
  mg::manual_seed(4);
  Net saved, target;
  mg::save(saved, path("net.pt"));
  InputArchive in;
  in.load_from(path("net.pt"));
  OutputArchive partial;  // every tensor but the last (head's only one)
  for (const std::string& key : in.keys()) {
    if (key == "head.weight") continue;
    mg::Tensor t;
    in.read(key, t);
    partial.write(key, t);
  }
  partial.save_to(path("partial.pt"));
  const mg::Tensor before = target->named_parameters()["seq.0.weight"].clone();
  EXPECT_EQ(error_of([&] { mg::load(target, path("partial.pt")); }),
            "[InputArchive.read] No such serialized submodule: 'head'");
  EXPECT_TRUE(target->named_parameters()["seq.0.weight"].equal(before));
}

TEST_F(Archive, OptimizerStateResumesTrainingBitForBit) {
  mg::manual_seed(5);
  const mg::Tensor x = mg::randn({8, 4}), y = mg::randn({8, 1});
  auto train = [&](Net& net, mg::optim::Optimizer& opt, int steps) {
    for (int s = 0; s < steps; ++s) {
      opt.zero_grad();
      mg::nn::functional::mse_loss(net(x), y).backward();
      opt.step();
    }
  };
  mg::manual_seed(7);
  Net straight;
  mg::optim::Adam straight_opt(straight->parameters(), mg::optim::AdamOptions(0.05));
  train(straight, straight_opt, 3);
  std::stringstream model_bytes, opt_bytes;
  mg::save(straight, model_bytes);
  mg::save(straight_opt, opt_bytes);
  train(straight, straight_opt, 2);

  mg::manual_seed(8);
  Net resumed;
  mg::optim::Adam resumed_opt(resumed->parameters(), mg::optim::AdamOptions(0.01));
  mg::load(resumed, model_bytes);
  mg::load(resumed_opt, opt_bytes);
  EXPECT_EQ(resumed_opt.lr(0), 0.05);
  train(resumed, resumed_opt, 2);
  expect_same_state(*straight, *resumed);  // bit for bit (equal(), not allclose)

  // The archive's layout, and a mismatched optimizer refused with nothing changed.
  opt_bytes.seekg(0);
  InputArchive in;
  in.load_from(opt_bytes);
  std::string name;
  in.read("optimizer", name);
  EXPECT_EQ(name, "Adam");
  mg::Tensor step;
  in.read("state.0.step", step);
  EXPECT_EQ(step.item<float>(), 3.0f);
  std::int64_t position = -1;
  in.read("param_groups.0.params.4", position);
  EXPECT_EQ(position, 4);
  mg::optim::SGD sgd(resumed->parameters(), mg::optim::SGDOptions(0.1));
  opt_bytes.seekg(0);
  EXPECT_ERROR_HAS(mg::load(sgd, opt_bytes), "the state_dict is Adam's");
  Net other;
  mg::optim::Adam two_groups(std::vector<mg::optim::OptimizerParamGroup>{
      mg::optim::OptimizerParamGroup(other->seq->parameters()),
      mg::optim::OptimizerParamGroup(other->head->parameters())});
  opt_bytes.seekg(0);
  EXPECT_ERROR_HAS(mg::load(two_groups, opt_bytes), "parameter groups");
  EXPECT_TRUE(two_groups.state().empty());
  OutputArchive not_an_optimizer;
  not_an_optimizer.write("w", mg::zeros({1}));
  std::stringstream s;
  not_an_optimizer.save_to(s);
  EXPECT_EQ(error_of([&] { mg::load(sgd, s); }),
            "[Optimizer.load] SGD: the archive has no param_groups (is it an optimizer's?)");
}

// libtorch 1.13's test/cpp/api/serialize.cpp, ported by renaming (torch:: -> mg::, a fixture's
// path for c10::make_tempfile, sizes() for sizes().vec(), ones({5}) for ones(5)); XOR (a training
// loop), the IValue test (c10::IValue), SerializationShouldPreserveIteration (iteration()) and the
// int32 buffers are left out.
mg::Tensor save_and_load(mg::Tensor input) {
  std::stringstream stream;
  mg::save(input, stream);
  mg::Tensor tensor;
  mg::load(tensor, stream);
  return tensor;
}

TEST(SerializeTest, Basic) {
  mg::manual_seed(0);
  auto x = mg::randn({5, 5});
  auto y = save_and_load(x);
  ASSERT_TRUE(y.defined());
  ASSERT_EQ(x.sizes(), y.sizes());
  ASSERT_TRUE(x.allclose(y));
}

TEST_F(Archive, SerializeTestBasicToFile) {
  mg::manual_seed(0);
  auto x = mg::randn({5, 5});
  mg::save(x, path("t.pt"));
  mg::Tensor y;
  mg::load(y, path("t.pt"));
  ASSERT_TRUE(y.defined());
  ASSERT_EQ(x.sizes(), y.sizes());
  ASSERT_TRUE(x.allclose(y));
}

TEST(SerializeTest, BasicViaFunc) {
  mg::manual_seed(0);
  auto x = mg::randn({5, 5});
  std::string serialized;
  mg::save(x, [&](const void* buf, size_t n) {
    serialized.append(reinterpret_cast<const char*>(buf), n);
    return n;
  });
  mg::Tensor y;
  mg::load(y, serialized.data(), serialized.size());
  ASSERT_TRUE(y.defined());
  ASSERT_EQ(x.sizes(), y.sizes());
  ASSERT_TRUE(x.allclose(y));
  mg::Tensor z;
  mg::load(
      z,
      [&](uint64_t pos, void* buf, size_t n) -> size_t {
        if (pos >= serialized.size()) return 0;
        size_t nbytes = std::min(static_cast<size_t>(pos) + n, serialized.size()) - pos;
        memcpy(buf, serialized.data() + pos, nbytes);
        return nbytes;
      },
      [&]() -> size_t { return serialized.size(); });
  ASSERT_TRUE(z.defined());
  ASSERT_EQ(x.sizes(), z.sizes());
  ASSERT_TRUE(x.allclose(z));
}

TEST(SerializeTest, Resized) {
  mg::manual_seed(0);
  auto x = mg::randn({11, 5});
  x.resize_({5, 5});
  auto y = save_and_load(x);
  ASSERT_TRUE(y.defined());
  ASSERT_EQ(x.sizes(), y.sizes());
  ASSERT_TRUE(x.allclose(y));
}

TEST(SerializeTest, Sliced) {
  mg::manual_seed(0);
  auto x = mg::randn({11, 5});
  x = x.slice(0, 1, 5);
  auto y = save_and_load(x);
  ASSERT_TRUE(y.defined());
  ASSERT_EQ(x.sizes(), y.sizes());
  ASSERT_TRUE(x.allclose(y));
}

TEST(SerializeTest, NonContiguous) {
  mg::manual_seed(0);
  auto x = mg::randn({11, 5});
  x = x.slice(1, 1, 4);
  auto y = save_and_load(x);
  ASSERT_TRUE(y.defined());
  ASSERT_EQ(x.sizes(), y.sizes());
  ASSERT_TRUE(x.allclose(y));
}

TEST(SerializeTest, ErrorOnMissingKey) {
  struct B : mg::nn::Module {
    B(const std::string& name_c) { register_buffer(name_c, mg::ones({5}, mg::kFloat)); }
  };
  struct A : mg::nn::Module {
    A(const std::string& name_b, const std::string& name_c) {
      register_module(name_b, std::make_shared<B>(name_c));
    }
  };
  struct M : mg::nn::Module {
    M(const std::string& name_a, const std::string& name_b, const std::string& name_c) {
      register_module(name_a, std::make_shared<A>(name_b, name_c));
    }
  };
  auto model1 = std::make_shared<M>("a", "b", "c");
  auto model2 = std::make_shared<M>("a", "b", "x");
  auto model3 = std::make_shared<M>("a", "x", "c");
  std::stringstream stream;
  mg::save(model1, stream);
  // (no seekg between the loads: as libtorch's, a stream is read from its beginning)
  EXPECT_ERROR_HAS(mg::load(model2, stream), "No such serialized tensor 'a.b.x'");
  EXPECT_ERROR_HAS(mg::load(model3, stream), "No such serialized submodule: 'a.x'");
}

// SerializeTest.Optim and Optim_Adagrad: model 3's optimizer saved and loaded between its two
// steps ends where model 1's, never saved, does; model 2's, replaced by a fresh one, does not.
template <typename Opt, typename Options>
void optim_round_trip(const std::string& model_file, const std::string& optim_file,
                      const Options& options) {
  auto model1 = nn::Linear(5, 2);
  auto model2 = nn::Linear(5, 2);
  auto model3 = nn::Linear(5, 2);
  mg::save(model1, model_file);
  mg::load(model2, model_file);
  mg::load(model3, model_file);
  auto param1 = model1->named_parameters();
  auto param2 = model2->named_parameters();
  auto param3 = model3->named_parameters();
  for (const auto& p : param1) {
    ASSERT_TRUE(p->allclose(param2[p.key()]));
    ASSERT_TRUE(param2[p.key()].allclose(param3[p.key()]));
  }
  auto optim1 = Opt(model1->parameters(), options);
  auto optim2 = Opt(model2->parameters(), options);
  auto optim2_2 = Opt(model2->parameters(), options);
  auto optim3 = Opt(model3->parameters(), options);
  auto optim3_2 = Opt(model3->parameters(), options);
  auto x = mg::ones({10, 5});
  auto step = [&x](mg::optim::Optimizer& optimizer, nn::Linear model) {
    optimizer.zero_grad();
    auto y = model->forward(x).sum();
    y.backward();
    optimizer.step();
  };
  step(optim1, model1);
  step(optim1, model1);
  step(optim2, model2);
  step(optim2_2, model2);
  step(optim3, model3);
  mg::save(optim3, optim_file);
  mg::load(optim3_2, optim_file);
  step(optim3_2, model3);
  param1 = model1->named_parameters();
  param2 = model2->named_parameters();
  param3 = model3->named_parameters();
  for (const auto& p : param1) {
    const auto& name = p.key();
    ASSERT_TRUE(param1[name].norm().item<float>() == param3[name].norm().item<float>());
    ASSERT_TRUE(param1[name].norm().item<float>() != param2[name].norm().item<float>());
  }
}

TEST_F(Archive, SerializeTestOptim) {
  optim_round_trip<mg::optim::SGD>(path("m.pt"), path("o.pt"),
                                   mg::optim::SGDOptions(1e-1).momentum(0.9));
}

TEST_F(Archive, SerializeTestOptimAdagrad) {
  optim_round_trip<mg::optim::Adagrad>(path("m.pt"), path("o.pt"), mg::optim::AdagradOptions(1e-1));
}

TEST(SerializeTest, VectorOfTensors) {
  mg::manual_seed(0);
  std::vector<mg::Tensor> x_vec = {mg::randn({1, 2}), mg::randn({3, 4})};
  std::stringstream stream;
  mg::save(x_vec, stream);
  std::vector<mg::Tensor> y_vec;
  mg::load(y_vec, stream);
  ASSERT_EQ(y_vec.size(), x_vec.size());
  for (std::size_t i = 0; i < x_vec.size(); i++) {
    auto& x = x_vec[i];
    auto& y = y_vec[i];
    ASSERT_TRUE(y.defined());
    ASSERT_EQ(x.sizes(), y.sizes());
    ASSERT_TRUE(x.allclose(y));
  }
}

TEST(SerializeTest, UnserializableSubmoduleIsSkippedWhenSavingModule) {
  struct A : mg::nn::Module {
    A() { register_module("relu", mg::nn::Functional(mg::relu)); }
  };
  auto out = std::make_shared<A>();
  std::stringstream ss;
  mg::save(out, ss);
  mg::serialize::InputArchive archive;
  archive.load_from(ss);
  mg::serialize::InputArchive relu_archive;
  ASSERT_FALSE(archive.try_read("relu", relu_archive));
}

// (kInt64 for libtorch's kInt32, which minigrad does not have)
TEST_F(Archive, SerializeTestUnserializableSubmoduleIsIgnoredWhenLoadingModule) {
  struct B : mg::nn::Module {
    B() {
      register_module("relu1", mg::nn::Functional(mg::relu));
      register_buffer("foo", mg::zeros({5}, mg::kInt64));
    }
  };
  struct A : mg::nn::Module {
    A() {
      register_module("b", std::make_shared<B>());
      register_module("relu2", mg::nn::Functional(mg::relu));
    }
  };
  auto out = std::make_shared<A>();
  out->named_buffers()["b.foo"].fill_(1);
  mg::save(out, path("a.pt"));
  mg::serialize::InputArchive archive;
  archive.load_from(path("a.pt"));
  mg::serialize::InputArchive archive_b;
  mg::serialize::InputArchive archive_relu;
  mg::Tensor tensor_foo;
  ASSERT_TRUE(archive.try_read("b", archive_b));
  ASSERT_TRUE(archive_b.try_read("foo", tensor_foo, /*is_buffer=*/true));
  ASSERT_FALSE(archive_b.try_read("relu1", archive_relu));
  ASSERT_FALSE(archive.try_read("relu2", archive_relu));
  auto in = std::make_shared<A>();
  mg::load(in, path("a.pt"));
  const int output = static_cast<int>(in->named_buffers()["b.foo"].sum().item<std::int64_t>());
  ASSERT_EQ(output, 5);
}

// docs/errors.md's rows for archives, run as written there.
TEST_F(Archive, DocumentedErrors) {
  struct FcImpl : nn::Module {
    FcImpl() : Module("Net") { register_module("fc", nn::Linear(2, 2)); }
  };
  auto net = std::make_shared<FcImpl>();
  std::stringstream bias_only;  // fc.bias, not fc.weight
  OutputArchive bias_archive;
  bias_archive.write("fc.bias", mg::zeros({2}));
  bias_archive.save_to(bias_only);
  OutputArchive with_w;
  with_w.write("w", f32({1, 2, 3, 4}, {2, 2}));
  std::stringstream w_stream;
  with_w.save_to(w_stream);
  InputArchive w_archive;
  w_archive.load_from(w_stream);
  mg::manual_seed(0);
  Net model;
  mg::optim::Adam adam(model->parameters());
  mg::optim::SGD sgd(model->parameters(), mg::optim::SGDOptions(0.1));
  std::stringstream adam_stream, model_stream;
  mg::save(adam, adam_stream);
  mg::save(model, model_stream);
  const std::string bytes = archive_bytes();
  minigrad_test::expect_documented_messages({
      {"archives", "mg::load of a module whose parameter the file lacks",
       [&] { mg::load(net, bias_only); },
       "[InputArchive.read] No such serialized tensor 'fc.weight'"},
      {"archives", "read of a nested archive that is not there",
       [&] {
         InputArchive nested;
         w_archive.read("fc", nested);
       },
       "[InputArchive.read] No such serialized submodule: 'fc'"},
      {"archives", "read into a defined tensor of another shape",
       [&] {
         mg::Tensor t = mg::zeros({4});
         w_archive.read("w", t);
       },
       "[InputArchive.read] tensor 'w' has shape (2, 2) in the archive, the tensor to read into "
       "has (4,)"},
      {"archives", "read of an int under a key that holds a tensor",
       [&] {
         std::int64_t i = 0;
         w_archive.read("w", i);
       },
       "[InputArchive.read] 'w' is a tensor in the archive, not an int"},
      {"archives", "write of a key already written", [&] { with_w.write("w", 1); },
       "[OutputArchive.write] key 'w' is already written"},
      {"archives", "an Adam's archive into an SGD", [&] { mg::load(sgd, adam_stream); },
       "[load_state_dict] SGD: the state_dict is Adam's, not SGD's"},
      {"archives", "a model's archive into an optimizer", [&] { mg::load(sgd, model_stream); },
       "[Optimizer.load] SGD: the archive has no param_groups (is it an optimizer's?)"},
      {"archives", "a truncated stream",
       [&] {
         std::istringstream cut(bytes.substr(0, bytes.size() / 2));
         mg::Tensor t;
         mg::load(t, cut);
       },
       "[load_torch] <stream>: not a zip archive (no end of central directory record; truncated, "
       "or not written by torch.save)"},
      {"archives", "a writer function that takes fewer bytes",
       [&] { OutputArchive{}.save_to([](const void*, std::size_t) { return std::size_t{0}; }); },
       "[OutputArchive.save_to] the writer function took 0 of 30 bytes at offset 0"},
  });
}

// ================================ PyTorch reads and writes the same files

TEST_F(Archive, PyTorchLoadsWhatMgSaveWritesAndBack) {
  if (const std::string why = minigrad_test::torch_missing(); !why.empty()) GTEST_SKIP() << why;
  mg::save(f32({1, 2, 3, 4, 5, 6}, {2, 3}), path("mg_tensor.pt"));
  mg::save(std::vector<mg::Tensor>{mg::arange(3), mg::tensor({true})}, path("mg_list.pt"));
  OutputArchive a, sub;
  sub.write("x", mg::full({1}, 0.25, mg::kFloat64));
  a.write("epoch", 3);
  a.write("lr", 0.5);
  a.write("done", true);
  a.write("name", "ckpt");
  a.write("sub", sub);
  a.save_to(path("mg_archive.pt"));
  mg::manual_seed(9);
  Net net;
  mg::save(net, path("mg_net.pt"));
  const mg::Tensor x = mg::randn({3, 4});
  mg::save(x, path("x.pt"));

  const std::string script = std::string(MINIGRAD_IO_TEST_DIR) + "/archive_interop.py";
  std::string out;
  ASSERT_EQ(minigrad_test::run(
                minigrad_test::python() + " '" + script + "' '" + dir_.string() + "'", out),
            0)
      << out;
  EXPECT_NE(out.find("ok"), std::string::npos) << out;

  // What torch.save wrote: a tensor (float64, a view), a list, a dict with an int key.
  // torch.save(torch.arange(12, dtype=torch.float64).reshape(3, 4)[:, 1], "py_tensor.pt")
  mg::Tensor t;
  mg::load(t, path("py_tensor.pt"));
  EXPECT_EQ(t.dtype(), mg::kFloat64);
  EXPECT_EQ(t.to_vector<double>(), (std::vector<double>{1, 5, 9}));
  // torch.save([torch.tensor([1, 2]), torch.tensor([[True], [False]])], "py_list.pt")
  std::vector<mg::Tensor> list;
  mg::load(list, path("py_list.pt"));
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].to_vector<std::int64_t>(), (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(list[1].shape(), (mg::Shape{2, 1}));
  // torch.save({"w": torch.ones(2), "step": 10, "nested": {7: torch.zeros(1)}}, "py_dict.pt")
  InputArchive in, nested;
  in.load_from(path("py_dict.pt"));
  std::int64_t step = 0;
  in.read("step", step);
  EXPECT_EQ(step, 10);
  in.read("nested", nested);
  mg::Tensor z;
  nested.read("7", z);
  EXPECT_EQ(z.to_vector<float>(), std::vector<float>{0});
  // The forward of PyTorch's copy of the net, loaded from mg_net.pt with load_state_dict.
  mg::Tensor torch_out;
  mg::load(torch_out, path("torch_net_out.pt"));
  EXPECT_TRUE(torch_out.allclose(net(x), 1e-5, 1e-6));
  // The net back from PyTorch's state_dict (torch.save(net.state_dict())), doubled there.
  Net doubled;
  mg::load(doubled, path("torch_net_doubled.pt"));
  const auto s = net->state_dict(), d = doubled->state_dict();
  for (std::size_t k = 0; k < s.size(); ++k)
    EXPECT_TRUE(d[k].second.equal(s[k].second * 2)) << s[k].first;

  // torch.save(optimizer.state_dict()) of a torch.optim.Adam(lr=0.02) after one step: loaded
  // (PyTorch's nested dicts, int keys, tuple betas, None and False switches), then the second
  // step taken here matches PyTorch's.
  Net adam_net, after;
  mg::load(adam_net, path("torch_adam_net.pt"));
  mg::load(after, path("torch_adam_net_after.pt"));
  mg::optim::Adam adam(adam_net->parameters(), mg::optim::AdamOptions(0.5));
  mg::load(adam, path("torch_adam.pt"));
  EXPECT_EQ(adam.lr(0), 0.02);
  adam.zero_grad();
  adam_net(x).pow(2).sum().backward();
  adam.step();
  const auto mine = adam_net->state_dict(), theirs = after->state_dict();
  for (std::size_t k = 0; k < mine.size(); ++k)
    EXPECT_TRUE(mine[k].second.allclose(theirs[k].second, 1e-5, 1e-6)) << mine[k].first;
}

}  // namespace
