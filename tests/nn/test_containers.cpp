// Containers the libtorch way: AnyModule (any forward signature), Sequential, ModuleList,
// ModuleDict, ParameterList, ParameterDict and Functional. Expected names, reprs and values are
// PyTorch 1.13's (the Python is in the comments).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "minigrad/minigrad.h"
#include "minigrad/nn/nn.h"
#include "module_test_helpers.h"

namespace mg = minigrad;
namespace nn = minigrad::nn;
using minigrad::testing::error_of;
using minigrad::testing::expect_near_all;
using minigrad::testing::repr;

namespace {

std::vector<std::string> keys_of(const auto& dict) { return dict.keys(); }

// A forward with three arguments of two types: a * s + b.
struct ScaleAddImpl : nn::Module {
  ScaleAddImpl() : nn::Module("ScaleAdd") {}
  mg::Tensor forward(const mg::Tensor& a, const mg::Tensor& b, double s) { return a * s + b; }
};
MG_MODULE(ScaleAdd);

// A forward returning two tensors.
struct SplitImpl : nn::Cloneable<SplitImpl> {
  SplitImpl() : Cloneable("Split") {}
  std::pair<mg::Tensor, mg::Tensor> forward(const mg::Tensor& x) const { return {x, x * 2}; }
};
MG_MODULE(Split);

// A forward taking what Split returns.
struct AddPairImpl : nn::Module {
  AddPairImpl() : nn::Module("AddPair") {}
  mg::Tensor forward(std::pair<mg::Tensor, mg::Tensor> p) { return p.first + p.second; }
};
MG_MODULE(AddPair);

}  // namespace

// ---------------------------------------------------------------- AnyModule

TEST(AnyModule, ForwardsAnySignatureWithTypeCheckedArguments) {
  mg::manual_seed(0);
  nn::Linear fc(3, 2);
  nn::AnyModule any(fc);
  mg::Tensor x = mg::ones({4, 3});
  EXPECT_TRUE(mg::equal(any.forward(x), fc(x)));
  EXPECT_TRUE(mg::equal(any.any_forward(x).get<mg::Tensor>(), fc(x)));
  EXPECT_EQ(any.ptr().get(), fc.get());
  EXPECT_EQ(any.ptr<nn::Linear>()->out_features, 2);
  EXPECT_EQ(&any.get<nn::LinearImpl>(), fc.get());
  EXPECT_EQ(any.get<nn::Linear>().get(), fc.get());
  EXPECT_TRUE(any.type_info() == typeid(nn::LinearImpl));
  EXPECT_FALSE(any.is_empty());

  nn::AnyModule three(std::make_shared<ScaleAddImpl>());
  mg::Tensor a = mg::tensor({1.0, 2.0}), b = mg::tensor({0.5, -0.5});
  EXPECT_EQ(three.forward(a, b, 3.0).to_vector<float>(), (std::vector<float>{3.5f, 5.5f}));
  nn::AnyModule pair_out{Split()};
  auto [first, second] = pair_out.forward<std::pair<mg::Tensor, mg::Tensor>>(a);
  EXPECT_EQ(second.to_vector<float>(), (std::vector<float>{2.0f, 4.0f}));
}

TEST(AnyModule, WrongArgumentsGiveAClearError) {
  nn::AnyModule any(nn::Linear(3, 2));
  mg::Tensor x = mg::ones({1, 3});
  EXPECT_EQ(error_of([&] { any.forward(x, x); }),
            "[AnyModule] Linear's forward() takes 1 argument, but 2 were given");
  EXPECT_EQ(error_of([&] { any.forward(1.5); }),
            "[AnyModule] Linear's forward() expects argument 0 to be of type minigrad::Tensor, "
            "but got double");
  EXPECT_EQ(error_of([&] { any.forward<double>(x); }),
            "[AnyModule] Linear's forward() returned minigrad::Tensor, not the requested double");
  nn::AnyModule three(ScaleAdd{});
  EXPECT_EQ(
      error_of([&] { three.forward(x, x, 2); }),
      "[AnyModule] ScaleAdd's forward() expects argument 2 to be of type double, but got int");
  EXPECT_EQ(error_of([&] { three.forward(x); }),
            "[AnyModule] ScaleAdd's forward() takes 3 arguments, but 1 was given");
  EXPECT_EQ(error_of([] { nn::AnyModule().forward(mg::ones({1})); }),
            "[AnyModule] cannot call forward() on an empty AnyModule");
  EXPECT_EQ(error_of([&] { any.ptr<nn::ReLU>(); }),
            "[AnyModule] module of type Linear is not of the requested type");
}

TEST(AnyModule, CloneCopiesTheModule) {
  mg::manual_seed(0);
  nn::AnyModule any(nn::Linear(2, 2));
  nn::AnyModule copy = any.clone();
  EXPECT_NE(copy.ptr().get(), any.ptr().get());
  EXPECT_TRUE(mg::equal(copy.ptr<nn::Linear>()->weight, any.ptr<nn::Linear>()->weight));
}

// ---------------------------------------------------------------- Sequential

TEST(SequentialAny, ChainsModulesOfAnySignature) {
  // torch.manual_seed(0)
  // seq = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
  // seq(torch.tensor([[1.0, -2.0, 0.5], [0.3, 0.8, -1.2]])).flatten().tolist()
  mg::manual_seed(0);
  // Braces: their elements are made left to right, as Python's arguments (a parenthesised
  // argument list may be evaluated in any order, and the Linears draw their weights).
  nn::Sequential seq{nn::Linear(3, 4), nn::ReLU(), nn::Linear(4, 2)};
  mg::Tensor x = mg::tensor({1.0, -2.0, 0.5, 0.3, 0.8, -1.2}).reshape({2, 3});
  std::vector<double> expected = {-0.18213798105716705, 0.22740711271762848, -0.10522128641605377,
                                  0.10576654970645905};
  expect_near_all(seq->forward(x), expected, 1e-6);
  expect_near_all(seq(x), expected, 1e-6);

  // The first module takes three arguments, the next ones what the one before returns.
  nn::Sequential multi{ScaleAdd(), Split(), AddPair()};
  mg::Tensor a = mg::tensor({1.0, 2.0}), b = mg::tensor({0.5, -0.5});
  EXPECT_EQ(multi->forward(a, b, 2.0).to_vector<float>(), (std::vector<float>{7.5f, 10.5f}));
  nn::Sequential to_pair{nn::Identity(), Split()};
  auto out = to_pair->forward<std::pair<mg::Tensor, mg::Tensor>>(a);
  EXPECT_EQ(out.second.to_vector<float>(), (std::vector<float>{2.0f, 4.0f}));
  EXPECT_EQ(error_of([&] { multi->forward(a); }),
            "[AnyModule] ScaleAdd's forward() takes 3 arguments, but 1 was given");
  // A Sequential inside a Sequential.
  nn::Sequential outer{nn::Identity(), seq};
  expect_near_all(outer(x), expected, 1e-6);
}

TEST(SequentialAny, NamedPushBackExtendAndAccess) {
  nn::Sequential seq({{"fc", nn::Linear(3, 4)}, {"act", nn::ReLU()}});
  seq->push_back("out", nn::Linear(4, 2));
  seq->push_back(nn::Sigmoid());
  nn::Sequential more{nn::Tanh()};
  seq->extend(*more);
  seq->extend(std::vector<std::shared_ptr<nn::LinearImpl>>{std::make_shared<nn::LinearImpl>(2, 2)});
  // nn.Sequential(OrderedDict(fc=..., act=..., out=...)) then append(Sigmoid()): the key is '3'
  EXPECT_EQ(keys_of(seq->named_children()),
            (std::vector<std::string>{"fc", "act", "out", "3", "4", "5"}));
  EXPECT_EQ(keys_of(seq->named_parameters()),
            (std::vector<std::string>{"fc.weight", "fc.bias", "out.weight", "out.bias", "5.weight",
                                      "5.bias"}));
  EXPECT_EQ(seq->size(), 6u);
  EXPECT_EQ(seq->at<nn::LinearImpl>(2).out_features, 2);
  EXPECT_EQ(seq->ptr<nn::Linear>(0)->in_features, 3);
  EXPECT_EQ(seq->ptr(1)->type_name(), "ReLU");
  EXPECT_EQ((*seq)[-2]->type_name(), "Tanh");
  EXPECT_EQ(seq[4]->type_name(), "Tanh");
  std::size_t n = 0;
  for (const nn::AnyModule& m : *seq) n += m.ptr() != nullptr;
  EXPECT_EQ(n, 6u);
  EXPECT_EQ(error_of([&] { seq->ptr<nn::Linear>(1); }),
            "[Sequential] module of type ReLU is not of the requested type");
  EXPECT_EQ(error_of([&] { (*seq)[6]; }), "[Sequential] index 6 is out of range for 6 modules");
  EXPECT_EQ(error_of([&] { seq->extend(*seq); }),
            "[Sequential] cannot extend a Sequential with itself");
}

TEST(SequentialAny, EmptySequentialReturnsItsInput) {
  nn::Sequential empty;
  mg::Tensor x = mg::ones({2});
  EXPECT_TRUE(empty(x).is_same(x));
  EXPECT_EQ(repr(empty), "Sequential()");
}

// ---------------------------------------------------------------- ModuleList, ModuleDict

TEST(ModuleListApi, InsertExtendAndAt) {
  // ml = nn.ModuleList([nn.Linear(2, 2), nn.ReLU()]); ml.insert(1, nn.Tanh());
  // ml.insert(3, nn.Sigmoid()); [(k, type(m).__name__) for k, m in ml.named_children()]
  nn::ModuleList list{nn::Linear(2, 2), nn::ReLU()};
  list->insert(1, nn::Tanh());
  list->insert(3, nn::Sigmoid());
  std::vector<std::string> children;
  for (const auto& [name, m] : list->named_children())
    children.push_back(name + "=" + m->type_name());
  EXPECT_EQ(children, (std::vector<std::string>{"0=Linear", "1=Tanh", "2=ReLU", "3=Sigmoid"}));
  // ml.extend([nn.Linear(2, 1)]); [k for k, _ in ml.named_parameters()]
  list->extend(std::vector<nn::Linear>{nn::Linear(2, 1)});
  EXPECT_EQ(keys_of(list->named_parameters()),
            (std::vector<std::string>{"0.weight", "0.bias", "4.weight", "4.bias"}));
  EXPECT_EQ(list->at<nn::Linear>(4).out_features, 1);
  EXPECT_EQ(list->at<nn::TanhImpl>(1).type_name(), "Tanh");
  EXPECT_EQ(error_of([&] { list->insert(7, nn::ReLU()); }),
            "[ModuleList] insert index 7 is out of range for a list of 5 modules");
}

TEST(ModuleDictApi, InsertLookupUpdatePop) {
  mg::manual_seed(0);
  nn::ModuleDict md({{"fc", nn::Linear(2, 3)}, {"act", nn::Tanh()}});
  EXPECT_EQ(md->size(), 2u);
  EXPECT_TRUE(md->contains("fc"));
  EXPECT_FALSE(md->contains("out"));
  EXPECT_EQ(md["act"]->type_name(), "Tanh");
  EXPECT_EQ(md->at<nn::Linear>("fc").out_features, 3);
  // md.update({'act': nn.ReLU(), 'out': nn.Linear(3, 1)}); print(list(md.keys()), md)
  md->update(std::vector<std::pair<std::string, std::shared_ptr<nn::Module>>>{
      {"act", std::make_shared<nn::ReLUImpl>()}, {"out", std::make_shared<nn::LinearImpl>(3, 1)}});
  EXPECT_EQ(md->keys(), (std::vector<std::string>{"fc", "act", "out"}));
  EXPECT_EQ(repr(md),
            "ModuleDict(\n"
            "  (fc): Linear(in_features=2, out_features=3, bias=True)\n"
            "  (act): ReLU()\n"
            "  (out): Linear(in_features=3, out_features=1, bias=True)\n"
            ")");
  // md.pop('fc'); list(md.keys()), [k for k, _ in md.named_parameters()]
  std::shared_ptr<nn::Module> fc = md->pop("fc");
  EXPECT_EQ(fc->type_name(), "Linear");
  EXPECT_EQ(md->keys(), (std::vector<std::string>{"act", "out"}));
  EXPECT_EQ(keys_of(md->named_parameters()), (std::vector<std::string>{"out.weight", "out.bias"}));
  EXPECT_EQ(md->values().size(), 2u);
  EXPECT_EQ(md->items()[1].first, "out");
  nn::ModuleDict copy;
  copy->update(*md);
  EXPECT_EQ(copy->keys(), md->keys());
  EXPECT_EQ(error_of([&] { md["fc"]; }),
            "[OrderedDict] module 'fc' is not defined; there are: act, out");
  md->clear();
  EXPECT_TRUE(md->empty());
  EXPECT_TRUE(md->named_children().is_empty());
}

// ---------------------------------------------------------------- ParameterList, ParameterDict

// class N(nn.Module):
//     def __init__(s):
//         super().__init__()
//         s.layers = nn.ModuleList([nn.Linear(2, 2), nn.ReLU()])
//         s.md = nn.ModuleDict({'fc': nn.Linear(2, 3), 'act': nn.Tanh()})
//         s.params = nn.ParameterList([nn.Parameter(torch.ones(2)), nn.Parameter(torch.zeros(2,
//         3))]) s.pd = nn.ParameterDict({'alpha': nn.Parameter(torch.ones(2)),
//                                  'beta': nn.Parameter(torch.zeros(1))})
struct ContainersNetImpl : nn::Module {
  ContainersNetImpl() : nn::Module("N") {
    layers = register_module("layers", nn::ModuleList{nn::Linear(2, 2), nn::ReLU()});
    md = register_module("md", nn::ModuleDict({{"fc", nn::Linear(2, 3)}, {"act", nn::Tanh()}}));
    params = register_module("params", nn::ParameterList(mg::ones({2}), mg::zeros({2, 3})));
    pd = register_module("pd",
                         nn::ParameterDict({{"alpha", mg::ones({2})}, {"beta", mg::zeros({1})}}));
  }
  nn::ModuleList layers{nullptr};
  nn::ModuleDict md{nullptr};
  nn::ParameterList params{nullptr};
  nn::ParameterDict pd{nullptr};
};

TEST(ParameterContainers, NamesAndPrintingAsPyTorch) {
  ContainersNetImpl net;
  // [k for k, _ in n.named_parameters()]
  EXPECT_EQ(
      keys_of(net.named_parameters()),
      (std::vector<std::string>{"layers.0.weight", "layers.0.bias", "md.fc.weight", "md.fc.bias",
                                "params.0", "params.1", "pd.alpha", "pd.beta"}));
  EXPECT_TRUE(net.named_parameters()["pd.alpha"].is_same(net.pd["alpha"]));
  EXPECT_TRUE(net.named_parameters()["params.1"].is_same(net.params[1]));
  // print(n)
  EXPECT_EQ(repr(net),
            "N(\n"
            "  (layers): ModuleList(\n"
            "    (0): Linear(in_features=2, out_features=2, bias=True)\n"
            "    (1): ReLU()\n"
            "  )\n"
            "  (md): ModuleDict(\n"
            "    (fc): Linear(in_features=2, out_features=3, bias=True)\n"
            "    (act): Tanh()\n"
            "  )\n"
            "  (params): ParameterList(\n"
            "      (0): Parameter containing: [torch.float32 of size 2]\n"
            "      (1): Parameter containing: [torch.float32 of size 2x3]\n"
            "  )\n"
            "  (pd): ParameterDict(\n"
            "      (alpha): Parameter containing: [torch.FloatTensor of size 2]\n"
            "      (beta): Parameter containing: [torch.FloatTensor of size 1]\n"
            "  )\n"
            ")");
}

TEST(ParameterContainers, ParameterListAppendExtendAt) {
  // pl = nn.ParameterList([torch.ones(2)]); pl[0].requires_grad  -> True
  nn::ParameterList pl(std::vector<mg::Tensor>{mg::ones({2})});
  EXPECT_TRUE(pl[0].requires_grad());
  pl->append(mg::zeros({3}));
  pl->extend(std::vector<mg::Tensor>{mg::ones({1}), mg::ones({4})});
  EXPECT_EQ(pl->size(), 4u);
  EXPECT_EQ(keys_of(pl->named_parameters()), (std::vector<std::string>{"0", "1", "2", "3"}));
  EXPECT_EQ(pl->at(-1).numel(), 4);
  std::int64_t total = 0;
  for (const mg::Tensor& p : *pl) total += p.numel();
  EXPECT_EQ(total, 10);
  EXPECT_EQ(error_of([&] { pl->at(4); }), "[ParameterList] index 4 is out of range for 4 modules");
}

TEST(ParameterContainers, ParameterDictInsertReplacePopUpdate) {
  // pd = nn.ParameterDict({'alpha': nn.Parameter(torch.ones(2))})
  // pd['beta'] = torch.zeros(3, dtype=torch.float64); pd['alpha'] = torch.ones(1)
  // list(pd.keys()), print(pd), pd['beta'].requires_grad
  nn::ParameterDict pd({{"alpha", mg::ones({2})}});
  pd->insert("beta", mg::zeros({3}, mg::kFloat64));
  mg::Tensor alpha = mg::ones({1});
  pd->insert("alpha", alpha);
  EXPECT_EQ(pd->keys(), (std::vector<std::string>{"alpha", "beta"}));
  EXPECT_EQ(repr(pd),
            "ParameterDict(\n"
            "    (alpha): Parameter containing: [torch.FloatTensor of size 1]\n"
            "    (beta): Parameter containing: [torch.DoubleTensor of size 3]\n"
            ")");
  EXPECT_TRUE(pd["beta"].requires_grad());
  EXPECT_TRUE(pd->get("alpha").is_same(alpha));
  EXPECT_TRUE(pd->named_parameters()["alpha"].is_same(alpha));
  EXPECT_TRUE(pd->contains("beta"));
  EXPECT_EQ(pd->values().size(), 2u);
  mg::Tensor beta = pd->pop("beta");
  EXPECT_EQ(beta.numel(), 3);
  EXPECT_EQ(keys_of(pd->named_parameters()), (std::vector<std::string>{"alpha"}));
  nn::ParameterDict other({{"gamma", mg::ones({2})}});
  pd->update(*other);
  EXPECT_EQ(keys_of(pd->named_parameters()), (std::vector<std::string>{"alpha", "gamma"}));
  EXPECT_EQ(error_of([&] { pd["delta"]; }),
            "[OrderedDict] parameter 'delta' is not defined; there are: alpha, gamma");
  pd->clear();
  EXPECT_TRUE(pd->empty());
  EXPECT_TRUE(pd->parameters().empty());
}

TEST(ParameterContainers, CloneCopiesParameters) {
  nn::ParameterDict pd({{"alpha", mg::tensor({1.0, 2.0})}});
  auto copy = std::dynamic_pointer_cast<nn::ParameterDictImpl>(pd->clone());
  ASSERT_NE(copy, nullptr);
  EXPECT_TRUE(mg::equal((*copy)["alpha"], pd["alpha"]));
  EXPECT_FALSE((*copy)["alpha"].is_same(pd["alpha"]));
  nn::ParameterList pl(mg::tensor({3.0}));
  auto pl2 = std::dynamic_pointer_cast<nn::ParameterListImpl>(pl->clone());
  ASSERT_NE(pl2, nullptr);
  EXPECT_EQ(pl2->at(0).to_vector<float>(), (std::vector<float>{3.0f}));
}

// ---------------------------------------------------------------- Functional

TEST(FunctionalModule, WrapsFunctionsAndLambdas) {
  mg::Tensor x = mg::tensor({-1.5, 0.25, 2.0, 0.5, -0.75, 3.0}).reshape({2, 3});
  nn::Functional relu(mg::relu);
  EXPECT_EQ(relu(x).to_vector<float>(), (std::vector<float>{0.0f, 0.25f, 2.0f, 0.5f, 0.0f, 3.0f}));
  // F.softmax(x, 1).flatten().tolist()
  nn::Functional softmax(mg::softmax, /*dim=*/1);
  expect_near_all(softmax(x),
                  {0.02508147992193699, 0.14433394372463226, 0.8305845260620117,
                   0.07424457371234894, 0.02127142623066902, 0.9044840335845947},
                  1e-6);
  nn::Functional twice([](const mg::Tensor& t) { return t * 2; });
  nn::Sequential seq(twice, nn::Functional(mg::relu));
  EXPECT_EQ(seq(x).to_vector<float>(), (std::vector<float>{0.0f, 0.5f, 4.0f, 1.0f, 0.0f, 6.0f}));
  EXPECT_EQ(repr(seq),
            "Sequential(\n"
            "  (0): Functional()\n"
            "  (1): Functional()\n"
            ")");
  EXPECT_EQ(error_of([] { auto f = nn::Functional(nn::FunctionalImpl::Function()); }),
            "[Functional] got an empty function");
}
