// The Module API the libtorch way: holders (MG_MODULE), OrderedDict lookups, the module tree
// (children, modules, named_modules), as<T>(), apply, replace_module, unregister_module, clone().
// Expected names are PyTorch 1.13's (the Python lines are in the comments).
#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "minigrad/minigrad.h"
#include "minigrad/nn/nn.h"

namespace mg = minigrad;
namespace nn = minigrad::nn;

namespace {

template <typename Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const mg::Error& e) {
    return e.what();
  }
  return "(no error)";
}

// The libtorch style: a NetImpl with holder members, made by register_module, and its holder.
// class Net(nn.Module):
//     def __init__(s):
//         super().__init__()
//         s.fc1 = nn.Linear(3, 4); s.seq = nn.Sequential(nn.ReLU(), nn.Linear(4, 2))
//         s.register_buffer('scale', torch.ones(2))
struct NetImpl : nn::Cloneable<NetImpl> {
  NetImpl() : Cloneable("Net") {
    fc1 = register_module("fc1", nn::Linear(3, 4));
    seq = register_module("seq", nn::Sequential{nn::ReLU(), nn::Linear(4, 2)});
    scale = register_buffer("scale", mg::ones({2}));
  }
  mg::Tensor forward(const mg::Tensor& x) const { return seq(fc1(x)) * scale; }
  nn::Linear fc1{nullptr};
  nn::Sequential seq{nullptr};
  mg::Tensor scale;
};
MG_MODULE(Net);

// A module with neither Cloneable nor a clone() override.
struct PlainImpl : nn::Module {
  PlainImpl() : nn::Module("Plain") { register_module("fc", fc); }
  nn::Linear fc{2, 2};
};

std::vector<std::string> keys_of(const auto& dict) { return dict.keys(); }

}  // namespace

TEST(ModuleHolder, EmptyHolderIsAnErrorUntilAssigned) {
  nn::Linear fc{nullptr};
  EXPECT_TRUE(fc.is_empty());
  EXPECT_FALSE(static_cast<bool>(fc));
  EXPECT_EQ(error_of([&] {
              fc->forward(mg::ones({1, 3}));
            }),
            "[ModuleHolder] accessing an empty module holder: it was made with nullptr and never "
            "assigned (assign one, e.g. fc = register_module(\"fc\", nn::Linear(3, 4)))");
  fc = nn::Linear(3, 4);
  EXPECT_FALSE(fc.is_empty());
  EXPECT_EQ(fc->weight.shape(), (mg::Shape{4, 3}));
  // Copies share the module, as libtorch's holders do.
  nn::Linear alias = fc;
  EXPECT_EQ(alias.get(), fc.get());
  EXPECT_TRUE(alias->weight.is_same(fc->weight));
}

TEST(ModuleHolder, UserModuleHolderForwardsAndPrints) {
  mg::manual_seed(0);
  Net net;
  mg::Tensor y = net(mg::ones({5, 3}));
  EXPECT_EQ(y.shape(), (mg::Shape{5, 2}));
  EXPECT_TRUE(mg::equal(net->forward(mg::ones({5, 3})), y));
  std::ostringstream os;
  os << net;
  EXPECT_EQ(os.str(),
            "Net(\n"
            "  (fc1): Linear(in_features=3, out_features=4, bias=True)\n"
            "  (seq): Sequential(\n"
            "    (0): ReLU()\n"
            "    (1): Linear(in_features=4, out_features=2, bias=True)\n"
            "  )\n"
            ")");
}

TEST(ModuleApi, NamedParametersIsAnOrderedDictWithLookup) {
  Net net;
  auto params = net->named_parameters();
  // [k for k, _ in n.named_parameters()]
  EXPECT_EQ(keys_of(params),
            (std::vector<std::string>{"fc1.weight", "fc1.bias", "seq.1.weight", "seq.1.bias"}));
  EXPECT_EQ(params.size(), 4u);
  EXPECT_TRUE(params["fc1.weight"].is_same(net->fc1->weight));
  EXPECT_TRUE(params.contains("seq.1.bias"));
  EXPECT_FALSE(params.contains("fc2.weight"));
  EXPECT_EQ(params.find("fc2.weight"), nullptr);
  ASSERT_NE(params.find("fc1.bias"), nullptr);
  EXPECT_TRUE(params.find("fc1.bias")->is_same(net->fc1->bias));
  EXPECT_EQ(params[std::size_t{2}].key(), "seq.1.weight");
  EXPECT_EQ(params.values().size(), 4u);
  std::vector<std::string> seen;
  for (const auto& [name, p] : params) seen.push_back(name + ":" + std::to_string(p.numel()));
  EXPECT_EQ(seen, (std::vector<std::string>{"fc1.weight:12", "fc1.bias:4", "seq.1.weight:8",
                                            "seq.1.bias:2"}));
  EXPECT_EQ(error_of([&] { params["fc2.weight"]; }),
            "[OrderedDict] parameter 'fc2.weight' is not defined; there are: fc1.weight, fc1.bias, "
            "seq.1.weight, seq.1.bias");
  EXPECT_EQ(keys_of(net->named_buffers()), (std::vector<std::string>{"scale"}));
  EXPECT_TRUE(net->named_buffers()["scale"].is_same(net->scale));
  // Non-recursive: only the module's own.
  EXPECT_TRUE(net->named_parameters(/*recurse=*/false).is_empty());
}

TEST(ModuleApi, ChildrenAndModulesInPyTorchsOrder) {
  Net net;
  // [k for k, _ in n.named_children()]
  EXPECT_EQ(keys_of(net->named_children()), (std::vector<std::string>{"fc1", "seq"}));
  EXPECT_EQ(net->children().size(), 2u);
  EXPECT_EQ(net->children()[0].get(), net->fc1.get());
  // [k for k, _ in n.named_modules()]
  EXPECT_EQ(keys_of(net->named_modules()),
            (std::vector<std::string>{"", "fc1", "seq", "seq.0", "seq.1"}));
  // [k for k, _ in n.named_modules(prefix='net')]
  EXPECT_EQ(keys_of(net->named_modules("net")),
            (std::vector<std::string>{"net", "net.fc1", "net.seq", "net.seq.0", "net.seq.1"}));
  // len(list(n.modules()))
  EXPECT_EQ(net->modules().size(), 5u);
  EXPECT_EQ(net->modules(/*include_self=*/false).size(), 4u);
  EXPECT_EQ(net->modules()[0].get(), net.get());
  EXPECT_EQ(net->named_modules()["seq.1"]->type_name(), "Linear");
  // A module registered by reference (a member) is listed too.
  PlainImpl plain;
  EXPECT_EQ(keys_of(plain.named_modules()), (std::vector<std::string>{"", "fc"}));
  EXPECT_EQ(plain.children()[0].get(), plain.fc.get());
}

TEST(ModuleApi, AsGivesTheModuleOfAType) {
  Net net;
  std::shared_ptr<nn::Module> first = net->named_modules()["seq.1"];
  ASSERT_NE(first->as<nn::Linear>(), nullptr);  // the holder's type
  EXPECT_EQ(first->as<nn::LinearImpl>()->out_features, 2);
  EXPECT_EQ(first->as<nn::ReLU>(), nullptr);
  const nn::Module& base = *net;
  EXPECT_NE(base.as<NetImpl>(), nullptr);
  EXPECT_NE(base.as<Net>(), nullptr);
}

TEST(ModuleApi, ApplyVisitsEveryModuleWithItsName) {
  Net net;
  std::vector<std::string> names;
  net->apply(
      [&](const std::string& name, nn::Module& m) { names.push_back(name + "=" + m.type_name()); });
  // Children first, as PyTorch's apply (libtorch's visits the module first).
  EXPECT_EQ(names, (std::vector<std::string>{"fc1=Linear", "seq.0=ReLU", "seq.1=Linear",
                                             "seq=Sequential", "=Net"}));
  std::vector<std::string> types;
  net->apply([&](nn::Module& m) { types.push_back(m.type_name()); });
  // PyTorch's apply: children first, then the module.
  EXPECT_EQ(types, (std::vector<std::string>{"Linear", "ReLU", "Linear", "Sequential", "Net"}));
}

TEST(ModuleApi, ReplaceAndUnregisterModule) {
  Net net;
  net->fc1 = net->replace_module("fc1", nn::Linear(3, 4, /*bias=*/false));
  EXPECT_EQ(keys_of(net->named_parameters()),
            (std::vector<std::string>{"fc1.weight", "seq.1.weight", "seq.1.bias"}));
  EXPECT_TRUE(net->named_parameters()["fc1.weight"].is_same(net->fc1->weight));
  EXPECT_EQ(keys_of(net->named_children()), (std::vector<std::string>{"fc1", "seq"}));
  net->unregister_module("seq");
  EXPECT_EQ(keys_of(net->named_children()), (std::vector<std::string>{"fc1"}));
  EXPECT_EQ(error_of([&] { net->unregister_module("seq"); }),
            "[unregister_module] Net has no module \"seq\"");
  EXPECT_EQ(error_of([&] { net->replace_module("fc9", nn::Linear(1, 1)); }),
            "[replace_module] Net has no module \"fc9\"");
}

TEST(ModuleClone, DeepCopiesParametersBuffersGradientsAndMode) {
  mg::manual_seed(0);
  Net net;
  net->seq->eval();
  net->fc1->bias.requires_grad_(false);
  net(mg::ones({2, 3})).sum().backward();
  // Cloning draws no random numbers: the next randn is the one it would have been.
  mg::manual_seed(7);
  mg::Tensor expected_next = mg::randn({3});
  mg::manual_seed(7);
  std::shared_ptr<nn::Module> copy_base = net->clone();
  EXPECT_TRUE(mg::equal(mg::randn({3}), expected_next));
  auto copy = std::dynamic_pointer_cast<NetImpl>(copy_base);
  ASSERT_NE(copy, nullptr);
  auto a = net->named_parameters(), b = copy->named_parameters();
  ASSERT_EQ(keys_of(a), keys_of(b));
  for (std::size_t i = 0; i < a.size(); ++i) {
    const mg::Tensor& p = a[i].value();
    const mg::Tensor& q = b[i].value();
    EXPECT_TRUE(mg::equal(p, q)) << a[i].key();
    EXPECT_FALSE(p.is_same(q));
    EXPECT_EQ(p.requires_grad(), q.requires_grad()) << a[i].key();
    EXPECT_EQ(p.grad().defined(), q.grad().defined()) << a[i].key();
    if (p.grad().defined()) {
      EXPECT_TRUE(mg::equal(p.grad(), q.grad()));
    }
  }
  EXPECT_FALSE(copy->fc1->bias.requires_grad());
  EXPECT_TRUE(copy->is_training());
  EXPECT_FALSE(copy->seq->is_training());
  EXPECT_TRUE(mg::equal(copy->named_buffers()["scale"], net->scale));
  // The members of the copy are its own modules, and changing them leaves the original alone.
  EXPECT_TRUE(copy->named_parameters()["fc1.weight"].is_same(copy->fc1->weight));
  {
    mg::NoGradGuard no_grad;
    copy->fc1->weight.fill_(0.0);
  }
  EXPECT_FALSE(mg::equal(net->fc1->weight, copy->fc1->weight));
}

TEST(ModuleClone, BuiltInModulesCloneWithTheirConfiguration) {
  mg::manual_seed(0);
  nn::MultiheadAttention mha(8, 2, /*bias=*/true, /*batch_first=*/true);
  mha->to(mg::kFloat64);
  auto copy = std::dynamic_pointer_cast<nn::MultiheadAttentionImpl>(mha->clone());
  ASSERT_NE(copy, nullptr);
  EXPECT_TRUE(copy->batch_first);
  EXPECT_EQ(copy->in_proj_weight.dtype(), mg::kFloat64);
  mg::Tensor x = mg::randn({2, 3, 8}, mg::kFloat64);
  EXPECT_TRUE(mg::equal(copy->forward(x, x, x).first, mha->forward(x, x, x).first));
  nn::LayerNorm ln(mg::Shape{2, 3}, 1e-3, false);
  auto ln2 = std::dynamic_pointer_cast<nn::LayerNormImpl>(ln->clone());
  EXPECT_EQ(ln2->eps, 1e-3);
  EXPECT_FALSE(ln2->elementwise_affine);
  nn::ModuleList list{std::make_shared<nn::LinearImpl>(2, 2),
                      std::make_shared<nn::GELUImpl>("tanh")};
  auto list2 = std::dynamic_pointer_cast<nn::ModuleListImpl>(list->clone());
  ASSERT_EQ(list2->size(), 2u);
  EXPECT_EQ(list2->ptr<nn::GELU>(1)->approximate, "tanh");
  EXPECT_FALSE(list2->ptr<nn::Linear>(0)->weight.is_same(list->ptr<nn::Linear>(0)->weight));
  EXPECT_TRUE(mg::equal(list2->ptr<nn::Linear>(0)->weight, list->ptr<nn::Linear>(0)->weight));
  nn::Sequential seq({{"fc", nn::Linear(2, 2)}, {"act", nn::Tanh()}});
  auto seq2 = std::dynamic_pointer_cast<nn::SequentialImpl>(seq->clone());
  EXPECT_EQ(keys_of(seq2->named_children()), (std::vector<std::string>{"fc", "act"}));
  mg::Tensor z = mg::randn({4, 2});
  EXPECT_TRUE(mg::equal(seq2->forward(z), seq(z)));
}

TEST(ModuleClone, AModuleWithoutCloneSaysHowToGetOne) {
  PlainImpl plain;
  EXPECT_EQ(error_of([&] { plain.clone(); }),
            "[Module.clone] Plain does not implement clone(): derive it from "
            "nn::Cloneable<PlainImpl> (cloned through its default constructor) or override "
            "clone() with clone_with([&] { return std::make_shared<PlainImpl>(...); })");
}

TEST(ModuleContainers, BracedListsOfHolders) {
  mg::manual_seed(0);
  nn::ModuleList list{nn::Linear(2, 2), nn::ReLU()};
  EXPECT_EQ(list->size(), 2u);
  EXPECT_EQ(list->ptr<nn::Linear>(0)->out_features, 2);
  nn::Sequential seq{nn::Linear(3, 4), nn::ReLU()};
  EXPECT_EQ(keys_of(seq->named_parameters()), (std::vector<std::string>{"0.weight", "0.bias"}));
  nn::ModuleList empty{nullptr};
  EXPECT_TRUE(empty.is_empty());
  nn::Sequential empty_seq{nullptr};
  EXPECT_TRUE(empty_seq.is_empty());
}

// libtorch's messages for a bad or repeated name (test/cpp/api/module.cpp greps for them), with
// the op and the module in front.
TEST(ModuleApi, RegistrationErrorsContainLibtorchsWords) {
  struct Net : nn::Module {
    Net() : nn::Module("Net") {}
  };
  Net net;
  net.register_parameter("w", mg::zeros({2}));
  net.register_buffer("b", mg::zeros({2}));
  net.register_module("fc", nn::Linear(2, 2));
  EXPECT_EQ(error_of([&] { net.register_parameter("w", mg::zeros({2})); }),
            "[register_parameter] Net: Parameter 'w' already defined");
  EXPECT_EQ(error_of([&] { net.register_buffer("b", mg::zeros({2})); }),
            "[register_buffer] Net: Buffer 'b' already defined");
  EXPECT_EQ(error_of([&] { net.register_module("fc", nn::Linear(2, 2)); }),
            "[register_module] Net: Submodule 'fc' already defined");
  EXPECT_EQ(error_of([&] { net.register_parameter("", mg::zeros({2})); }),
            "[register_parameter] Net: Parameter name must not be empty");
  EXPECT_EQ(error_of([&] { net.register_buffer("a.b", mg::zeros({2})); }),
            "[register_buffer] Net: Buffer name must not contain a dot (got 'a.b')");
  EXPECT_EQ(error_of([&] { net.register_module("x.y", nn::Linear(2, 2)); }),
            "[register_module] Net: Submodule name must not contain a dot (got 'x.y')");
}
