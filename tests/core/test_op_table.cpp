// Tests driven by the op table (core/op_table.h): gradcheck of every sample, gradgradcheck of the
// entries marked gradgrad, the error inputs, and forward values against PyTorch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <iostream>
#include <set>
#include <string>

#include "core/op_table.h"

namespace minigrad::testing {
namespace {

using V = std::vector<Tensor>;
namespace F = nn::functional;

std::vector<const OpInfo*> entries(bool (*keep)(const OpInfo&)) {
  std::vector<const OpInfo*> r;
  for (const OpInfo& op : op_table())
    if (keep(op)) r.push_back(&op);
  return r;
}

std::string entry_name(const ::testing::TestParamInfo<const OpInfo*>& info) {
  return info.param->name;
}

Tensor run(const OpInfo& op, const Sample& smp, const V& inputs) {
  return smp.fn ? smp.fn(inputs) : op.fn(inputs);
}

bool has_grad_input(const Sample& smp) {
  return std::any_of(smp.inputs.begin(), smp.inputs.end(),
                     [](const Tensor& t) { return t.requires_grad(); });
}

// ---------------------------------------------------------------- gradcheck

class OpGradcheck : public ::testing::TestWithParam<const OpInfo*> {};

TEST_P(OpGradcheck, Float64) {
  const OpInfo& op = *GetParam();
  ASSERT_FALSE(op.samples.empty()) << op.name << " has no samples";
  for (const Sample& smp : op.samples) {
    SCOPED_TRACE(op.name + ": " + smp.desc);
    ASSERT_TRUE(has_grad_input(smp)) << "no input requires grad";
    auto fn = [&](const V& in) { return run(op, smp, in); };
    autograd::GradcheckResult r = autograd::gradcheck_report(fn, smp.inputs, op.tolerances);
    EXPECT_TRUE(r.ok) << r.message;
    // Only a sample with an empty input or output may compare nothing.
    Tensor out = fn(smp.inputs);
    bool empty = out.numel() == 0;
    for (const Tensor& t : smp.inputs) empty |= t.requires_grad() && t.numel() == 0;
    if (!empty) {
      EXPECT_GT(r.checked, 0);
      // Every sample's output must depend on its inputs through the graph.
      EXPECT_TRUE(out.requires_grad()) << "the output has no grad_fn";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(OpTable, OpGradcheck,
                         ::testing::ValuesIn(entries([](const OpInfo&) { return true; })),
                         entry_name);

// ---------------------------------------------------------------- gradgradcheck

class OpGradgradcheck : public ::testing::TestWithParam<const OpInfo*> {};

TEST_P(OpGradgradcheck, Float64) {
  const OpInfo& op = *GetParam();
  for (const Sample& smp : op.samples) {
    SCOPED_TRACE(op.name + ": " + smp.desc);
    auto fn = [&](const V& in) { return run(op, smp, in); };
    autograd::GradcheckResult r = autograd::gradgradcheck_report(fn, smp.inputs, op.tolerances);
    EXPECT_TRUE(r.ok) << r.message;
  }
}

INSTANTIATE_TEST_SUITE_P(OpTable, OpGradgradcheck,
                         ::testing::ValuesIn(entries([](const OpInfo& op) { return op.gradgrad; })),
                         entry_name);

// ---------------------------------------------------------------- error inputs

class OpErrors : public ::testing::TestWithParam<const OpInfo*> {};

TEST_P(OpErrors, ThrowErrorNamingTheOp) {
  const OpInfo& op = *GetParam();
  for (const ErrorInput& err : op.error_inputs) {
    SCOPED_TRACE(op.name + ": " + err.desc);
    std::string prefix = "[" + err.op + "]";
    try {
      err.call();
      ADD_FAILURE() << "no exception; expected minigrad::Error starting with " << prefix;
    } catch (const Error& ex) {
      std::string what = ex.what();
      EXPECT_EQ(what.rfind(prefix, 0), 0u) << "message: " << what;
      EXPECT_GT(what.size(), prefix.size() + 1) << "the message says nothing after the op name";
    } catch (const std::exception& ex) {
      ADD_FAILURE() << "threw a std::exception that is not minigrad::Error: " << ex.what();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(OpTable, OpErrors, ::testing::ValuesIn(entries([](const OpInfo& op) {
                           return !op.error_inputs.empty();
                         })),
                         entry_name);

// ---------------------------------------------------------------- forward values

// Expected values are PyTorch 1.13's, from /usr/bin/python3 with torch.set_default_dtype(
// torch.float64), F = torch.nn.functional, cond = torch.tensor([[1, 0, 0], [1, 1, 0]],
// dtype=torch.bool) and make() as documented in op_table.h:
//   def make(shape, seed):
//       vals = []
//       for i in range(math.prod(shape)):
//           t = (i + 1) * 0.6180339887498949 + seed * 0.4142135623730951
//           t = t - math.floor(t)
//           vals.append(3.6 * t - 2.0 if t < 0.5 else 3.6 * t - 1.6)
//       return torch.tensor(vals, dtype=torch.float64).reshape(shape)
// Each case's comment is the Python expression; the numbers are its result.flatten().tolist().
struct ForwardCase {
  const char* op;
  std::function<Tensor()> fn;
  Shape shape;
  std::vector<double> expected;
};

Tensor cond() { return mask({1, 0, 0, 1, 1, 0}, {2, 3}); }

const std::vector<ForwardCase>& forward_cases() {
  static const std::vector<ForwardCase> cases = {
      // torch.add(make((2, 3), 1), make((3,), 2))
      {"add",
       [] {
         return add(make({2, 3}, 1), make({3}, 2));
       },
       {2, 3},
       {-2.276648807371329, -1.0268040883720857, -0.1769593693728433, 1.198118271127535,
        -1.5520370098732217, -0.7021922908739784}},
      // torch.sub(make((2, 1), 1), make((1, 3), 2))
      {"sub",
       [] {
         return sub(make({2, 1}, 1), make({1, 3}, 2));
       },
       {2, 3},
       {-1.4911688245431427, -0.1160911840427643, -2.741013543542386, 1.1337535349564791,
        2.5088311754568577, -0.11609118404276408}},
      // torch.mul(make((3, 2), 1).t(), make((2, 3), 2))
      {"mul",
       [] {
         return mul(make({3, 2}, 1).t(), make({2, 3}, 2));
       },
       {2, 3},
       {0.7398863322039794, 1.8280367431320563, 0.18494659127281973, -0.6802303610752394,
        2.715514630839642, -0.517486717737448}},
      // torch.div(make((2, 3), 1), make((2, 1), 2))
      {"div",
       [] {
         return div(make({2, 3}, 1), make({2, 1}, 2));
       },
       {2, 3},
       {4.796834692525364, -1.886778937062927, 2.6329483107507308, -0.8998995336520069,
        -0.12206045360435094, 0.8820463097036065}},
      // make((2, 3), 1) + 2.5
      {"add_scalar",
       [] {
         return add(make({2, 3}, 1), 2.5);
       },
       {2, 3},
       {0.6160911840427641, 3.241013543542386, 1.4659359030420067, 4.090858262541628,
        2.71578062204125, 0.9407029815408716}},
      // make((2, 3), 1) - 3
      {"sub_scalar",
       [] {
         return sub(make({2, 3}, 1), 3);
       },
       {2, 3},
       {-4.883908815957236, -2.258986456457614, -4.0340640969579935, -1.4091417374583717,
        -2.78421937795875, -4.559297018459128}},
      // make((2, 3), 1) * -3
      {"mul_scalar",
       [] {
         return mul(make({2, 3}, 1), -3);
       },
       {2, 3},
       {5.651726447871708, -2.2230406306271577, 3.1021922908739796, -4.772574787624885,
        -0.6473418661237498, 4.677891055377385}},
      // make((2, 3), 1) / 2.5
      {"div_scalar",
       [] {
         return div(make({2, 3}, 1), 2.5);
       },
       {2, 3},
       {-0.7535635263828944, 0.29640541741695436, -0.4136256387831973, 0.6363433050166514,
        0.08631224881649997, -0.6237188073836514}},
      // 2.5 - make((2, 3), 1)
      {"rsub_scalar",
       [] {
         return 2.5 - make({2, 3}, 1);
       },
       {2, 3},
       {4.383908815957236, 1.758986456457614, 3.5340640969579935, 0.9091417374583717,
        2.28421937795875, 4.059297018459128}},
      // 2.5 / make((2, 3), 1)
      {"rdiv_scalar",
       [] {
         return 2.5 / make({2, 3}, 1);
       },
       {2, 3},
       {-1.3270281336465435, 3.373757499827667, -2.417645102807933, 1.5714787790119562,
        11.58584110264584, -1.6032865903062257}},
      // torch.neg(make((2, 3), 1))
      {"neg",
       [] {
         return neg(make({2, 3}, 1));
       },
       {2, 3},
       {1.883908815957236, -0.7410135435423859, 1.0340640969579933, -1.5908582625416283,
        -0.21578062204124993, 1.5592970184591284}},
      // torch.exp(make((2, 3), 1))
      {"exp",
       [] {
         return exp(make({2, 3}, 1));
       },
       {2, 3},
       {0.15199482329930503, 2.0980609133105137, 0.35555899399797525, 4.9079594389486685,
        1.2408301383570568, 0.21028384491490118}},
      // torch.log(make((2, 3), 1).abs())
      {"log",
       [] {
         return log(abs(make({2, 3}, 1)));
       },
       {2, 3},
       {0.6333487758094518, -0.2997363764679433, 0.0334967634860555, 0.46427365836116147,
        -1.5334930261063555, 0.44423509050473164}},
      // torch.sqrt(make((2, 3), 1).abs())
      {"sqrt",
       [] {
         return sqrt(abs(make({2, 3}, 1)));
       },
       {2, 3},
       {1.3725555784583865, 0.8608214353409108, 1.016889422188073, 1.2612922986134611,
        0.46452192848266044, 1.2487181501280136}},
      // torch.rsqrt(make((2, 3), 1).abs())
      {"rsqrt",
       [] {
         return rsqrt(abs(make({2, 3}, 1)));
       },
       {2, 3},
       {0.7285679470431137, 1.1616811093975261, 0.9833910926600735, 0.7928376325609061,
        2.1527509008378876, 0.8008212260688964}},
      // torch.pow(make((2, 3), 1), 3)
      {"pow_scalar",
       [] {
         return pow(make({2, 3}, 1), 3);
       },
       {2, 3},
       {-6.686204189749884, 0.40689133091315227, -1.105712905686243, 4.026191834878277,
        0.010047021281406068, -3.791285984795662}},
      // torch.pow(make((2, 3), 1).abs(), -1.5)
      {"pow_scalar",
       [] {
         return pow(abs(make({2, 3}, 1)), -1.5);
       },
       {2, 3},
       {0.3867320651997267, 1.5676921420952112, 0.9509962637258275, 0.4983710059086171,
        9.97657194827418, 0.5135783731955408}},
      // torch.pow(make((2, 3), 1).abs(), make((3,), 2))
      {"pow_tensor",
       [] {
         return pow(abs(make({2, 3}, 1)), make({3}, 2));
       },
       {2, 3},
       {0.7797816044699326, 1.6987271770444077, 1.0291263457940711, 0.833318936953857,
        15.043349652318508, 1.463390489047525}},
      // torch.pow(2.5, make((2, 3), 1))
      {"pow_scalar_base",
       [] {
         return pow(2.5, make({2, 3}, 1));
       },
       {2, 3},
       {0.17795791526182642, 1.971872979605434, 0.3877077874587247, 4.29601857803096,
        1.2186184317838855, 0.239603595581441}},
      // torch.abs(make((2, 3), 1))
      {"abs",
       [] {
         return abs(make({2, 3}, 1));
       },
       {2, 3},
       {1.883908815957236, 0.7410135435423859, 1.0340640969579933, 1.5908582625416283,
        0.21578062204124993, 1.5592970184591284}},
      // torch.sign(make((2, 3), 1))
      {"sign",
       [] {
         return sign(make({2, 3}, 1));
       },
       {2, 3},
       {-1.0, 1.0, -1.0, 1.0, 1.0, -1.0}},
      // torch.tanh(make((2, 3), 1))
      {"tanh",
       [] {
         return tanh(make({2, 3}, 1));
       },
       {2, 3},
       {-0.9548384878860765, 0.629757130026985, -0.7755331909945846, 0.9202808215025472,
        0.21249283482706205, -0.915306496201275}},
      // torch.sigmoid(make((2, 3), 1))
      {"sigmoid",
       [] {
         return sigmoid(make({2, 3}, 1));
       },
       {2, 3},
       {0.1319405436770913, 0.6772174505337845, 0.2622969531922167, 0.8307368203296346,
        0.5537368125844715, 0.17374754343654558}},
      // torch.relu(make((2, 3), 1))
      {"relu",
       [] {
         return relu(make({2, 3}, 1));
       },
       {2, 3},
       {0.0, 0.7410135435423859, 0.0, 1.5908582625416283, 0.21578062204124993, 0.0}},
      // torch.erf(make((2, 3), 1))
      {"erf",
       [] {
         return erf(make({2, 3}, 1));
       },
       {2, 3},
       {-0.9922839666417647, 0.7053390025409855, -0.8563649389980791, 0.9755392025639702,
        0.23975561463135647, -0.9725584631903764}},
      // F.gelu(make((2, 3), 1))
      {"gelu",
       [] {
         return gelu(make({2, 3}, 1));
       },
       {2, 3},
       {-0.05611911027825145, 0.5710675602684112, -0.15568155503418157, 1.5020553791546478,
        0.126322426201005, -0.09272055430811586}},
      // F.gelu(make((2, 3), 1), approximate='tanh')
      {"gelu_tanh",
       [] {
         return gelu(make({2, 3}, 1), "tanh");
       },
       {2, 3},
       {-0.05611965015940681, 0.5710011895056336, -0.15584614925882304, 1.5018673849721556,
        0.12632173548777562, -0.09292057393785781}},
      // torch.clamp(make((2, 3), 1), -0.5, 0.7)
      {"clamp",
       [] {
         return clamp(make({2, 3}, 1), -0.5, 0.7);
       },
       {2, 3},
       {-0.5, 0.7, -0.5, 0.7, 0.21578062204124993, -0.5}},
      // torch.maximum(make((2, 3), 1), make((3,), 2))
      {"maximum",
       [] {
         return maximum(make({2, 3}, 1), make({3}, 2));
       },
       {2, 3},
       {-0.3927399914140932, 0.7410135435423859, 0.85710472758515, 1.5908582625416283,
        0.21578062204124993, 0.85710472758515}},
      // torch.minimum(make((2, 3), 1), make((3,), 2))
      {"minimum",
       [] {
         return minimum(make({2, 3}, 1), make({3}, 2));
       },
       {2, 3},
       {-1.883908815957236, -1.7678176319144716, -1.0340640969579933, -0.3927399914140932,
        -1.7678176319144716, -1.5592970184591284}},
      // torch.where(cond, make((2, 3), 1), make((2, 1), 2))
      {"where",
       [] {
         return where(cond(), make({2, 3}, 1), make({2, 1}, 2));
       },
       {2, 3},
       {-1.883908815957236, -0.3927399914140932, -0.3927399914140932, 1.5908582625416283,
        0.21578062204124993, -1.7678176319144716}},
      // make((2, 3), 1).masked_fill(cond, -2.5)
      {"masked_fill",
       [] {
         return masked_fill(make({2, 3}, 1), cond(), -2.5);
       },
       {2, 3},
       {-2.5, 0.7410135435423859, -1.0340640969579933, -2.5, -2.5, -1.5592970184591284}},
      // torch.sum(make((2, 3, 4), 1), (0, 2))
      {"sum",
       [] {
         return sum(make({2, 3, 4}, 1), {0, 2});
       },
       {3},
       {-2.7759289576805797, 0.821586546307312, -0.3808979497047953}},
      // torch.mean(make((2, 3), 1), 0, keepdim=True)
      {"mean",
       [] {
         return mean(make({2, 3}, 1), {0}, true);
       },
       {1, 3},
       {-0.1465252767078038, 0.4783970827918179, -1.296680557708561}},
      // torch.max(make((4, 3), 1))
      {"max",
       [] {
         return max(make({4, 3}, 1));
       },
       {},
       {1.9154700600397367}},
      // torch.min(make((4, 3), 1))
      {"min",
       [] {
         return min(make({4, 3}, 1));
       },
       {},
       {-1.883908815957236}},
      // torch.max(make((3, 4), 1), 1).values
      {"max_dim",
       [] {
         return std::get<0>(max(make({3, 4}, 1), 1));
       },
       {3},
       {1.5908582625416283, 1.0656253410404934, 1.9154700600397367}},
      // torch.min(make((3, 4), 1), 0).values
      {"min_dim",
       [] {
         return std::get<0>(min(make({3, 4}, 1), 0));
       },
       {4},
       {-1.883908815957236, -1.5592970184591284, -1.23468522096102, -0.7094522994598851}},
      // torch.amax(make((2, 3, 4), 1), (0, 2))
      {"amax",
       [] {
         return amax(make({2, 3, 4}, 1), {0, 2});
       },
       {3},
       {1.5908582625416283, 1.714848936036713, 1.9154700600397367}},
      // torch.amin(make((2, 3, 4), 1), -1)
      {"amin",
       [] {
         return amin(make({2, 3, 4}, 1), {-1});
       },
       {2, 3},
       {-1.883908815957236, -1.5592970184591284, -1.23468522096102, -1.759918142462152,
        -1.4353063449640437, -1.9605392664651788}},
      // torch.var(make((3, 4), 1), 1)
      {"var",
       [] {
         return var(make({3, 4}, 1), {1});
       },
       {3},
       {2.5374844799373206, 1.291045558738431, 1.904461708605501}},
      // torch.var(make((3, 4), 1), 0, correction=0)
      {"var",
       [] {
         return var(make({3, 4}, 1), {0}, 0);
       },
       {4},
       {2.4147688627842254, 1.0822636947882625, 1.082263694788262, 1.0822636947882618}},
      // torch.std(make((3, 4), 1))
      {"std",
       [] {
         return std(make({3, 4}, 1));
       },
       {},
       {1.3192165403371665}},
      // torch.logsumexp(make((2, 3), 1) * 300, 1)
      {"logsumexp",
       [] {
         return logsumexp(make({2, 3}, 1) * 300, {1});
       },
       {2},
       {222.30406306271578, 477.2574787624885}},
      // torch.norm(make((2, 3), 1), p=1)
      {"norm",
       [] {
         return norm(make({2, 3}, 1), 1);
       },
       {},
       {7.024922359499622}},
      // torch.norm(make((2, 3), 1), p=2, dim=1)
      {"norm",
       [] {
         return norm(make({2, 3}, 1), 2, {1});
       },
       {2},
       {2.273214036374971, 2.238034512718918}},
      // torch.norm(make((2, 3), 1), p=3, dim=0)
      {"norm",
       [] {
         return norm(make({2, 3}, 1), 3, {0});
       },
       {3},
       {2.204426077332023, 0.7470630935303605, 1.6981524207252487}},
      // torch.norm(make((2, 3), 1), p=float('inf'), dim=1)
      {"norm",
       [] { return norm(make({2, 3}, 1), INFINITY, {1}); },
       {2},
       {1.883908815957236, 1.5908582625416283}},
      // torch.matmul(make((3,), 1), make((3,), 2))
      {"matmul", [] { return matmul(make({3}, 1), make({3}, 2)); }, {}, {-1.4563917016864374}},
      // torch.matmul(make((2, 3), 1), make((3,), 2))
      {"matmul",
       [] { return matmul(make({2, 3}, 1), make({3}, 2)); },
       {2},
       {-1.4563917016864374, -2.3427352948723805}},
      // torch.matmul(make((3,), 1), make((3, 2), 2))
      {"matmul",
       [] { return matmul(make({3}, 1), make({3, 2}, 2)); },
       {2},
       {-0.39008259445645427, 2.3070001412289938}},
      // torch.matmul(make((2, 1, 2, 3), 1), make((3, 3, 2), 2))
      {"matmul",
       [] { return matmul(make({2, 1, 2, 3}, 1), make({3, 3, 2}, 2)); },
       {2, 3, 2, 2},
       {-0.3900825944564543, 2.3070001412289938,  -3.1014882518183224, -3.5279147703012264,
        1.6003334472565292,  -2.5281880246868162, -3.447624682542262,  3.1994129053414957,
        -3.2348547186592835, -0.6600052528364173, 3.279702993100463,   -3.0708201672541087,
        2.2430219517796965,  -0.5968827646714177, 1.102576260074202,   0.6394728514562464,
        0.14051938581973977, 0.5131470897307535,  0.865384593686407,   1.5138819194260373,
        1.2505492402219116,  2.524684509890055,   1.7397936616561969,  1.188866867148418}},
      // torch.matmul(make((3, 2), 1).t(), make((4, 3), 2).t())
      {"matmul",
       [] { return matmul(make({3, 2}, 1).t(), make({4, 3}, 2).t()); },
       {2, 4},
       {2.7528696666088552, 0.035893630170466984, 1.368861732747557, 2.7881420841411417,
        -4.439853785357223, 1.5177975520269547, 1.7357346466282644, 1.3299529338459268}},
      // torch.matmul(make((2, 3, 4), 1), make((2, 3, 4), 2).transpose(-2, -1))
      {"matmul",
       [] { return matmul(make({2, 3, 4}, 1), make({2, 3, 4}, 2).transpose(-2, -1)); },
       {2, 3, 3},
       {-2.916756494987035, 0.4024952280154086, -2.799172232155138, 4.236417594525847,
        -2.5254483198821305, 4.434499528150221, -4.042051518020976, 6.873722682154568,
        -4.5659564096162395, -2.4215054489188996, -1.3218425865136334, -1.9821797241083674,
        6.018334281731316, -2.9631204932738395, 5.655424731721006, -2.536831989931149,
        -1.3566714567334073, -1.936510923535665}},
      // torch.mm(make((2, 3), 1), make((3, 4), 2))
      {"mm",
       [] { return mm(make({2, 3}, 1), make({3, 4}, 2)); },
       {2, 4},
       {2.618332416248989, 5.611820569351388, -3.3629883466240815, 3.7617431458139547,
        0.66875917114481, 0.32864490147840325, 0.028463359325496092, 0.5388470801910896}},
      // torch.bmm(make((2, 2, 3), 1), make((2, 3, 2), 2))
      {"bmm",
       [] { return bmm(make({2, 2, 3}, 1), make({2, 3, 2}, 2)); },
       {2, 2, 2},
       {-0.3900825944564543, 2.3070001412289938, -3.1014882518183224, -3.5279147703012264,
        0.14051938581973977, 0.5131470897307535, 0.865384593686407, 1.5138819194260373}},
      // torch.softmax(make((2, 3), 1), 1)
      {"softmax",
       [] { return softmax(make({2, 3}, 1), 1); },
       {2, 3},
       {0.058333575380060204, 0.8052076497207679, 0.13645877489917185, 0.7718041785456818,
        0.1951275061585547, 0.03306831529576345}},
      // torch.softmax(make((2, 3), 1) * 1000, 1)
      {"softmax",
       [] { return softmax(make({2, 3}, 1) * 1000, 1); },
       {2, 3},
       {0.0, 1.0, 0.0, 1.0, 0.0, 0.0}},
      // torch.log_softmax(make((2, 3, 2), 1), 1)
      {"log_softmax",
       [] { return log_softmax(make({2, 3, 2}, 1), 1); },
       {2, 3, 2},
       {-2.4426007233346088, -1.2353293942570729, -1.592756004335366, -0.3854846752578304,
        -0.34291128533612275, -3.535639956258587, -1.2353293942570733, -2.537928737189889,
        -0.38548467525783014, -1.2880840181906457, -3.5356399562585867, -0.4382392991914024}},
      // make((2, 3, 2), 1).transpose(0, 2)
      {"transpose",
       [] { return transpose(make({2, 3, 2}, 1), 0, 2); },
       {2, 3, 2},
       {-1.883908815957236, 1.0656253410404934, -1.0340640969579933, 1.9154700600397367,
        0.21578062204124993, -1.23468522096102, 0.7410135435423859, -0.7094522994598851,
        1.5908582625416283, 0.5403924195393581, -1.5592970184591284, 1.3902371385386014}},
      // make((2, 3), 1).t()
      {"t",
       [] { return make({2, 3}, 1).t(); },
       {3, 2},
       {-1.883908815957236, 1.5908582625416283, 0.7410135435423859, 0.21578062204124993,
        -1.0340640969579933, -1.5592970184591284}},
      // make((2, 3, 2), 1).permute(2, 0, 1)
      {"permute",
       [] { return permute(make({2, 3, 2}, 1), {2, 0, 1}); },
       {2, 2, 3},
       {-1.883908815957236, -1.0340640969579933, 0.21578062204124993, 1.0656253410404934,
        1.9154700600397367, -1.23468522096102, 0.7410135435423859, 1.5908582625416283,
        -1.5592970184591284, -0.7094522994598851, 0.5403924195393581, 1.3902371385386014}},
      // make((3, 1), 1).expand(3, 2)
      {"expand",
       [] { return make({3, 1}, 1).expand({3, 2}); },
       {3, 2},
       {-1.883908815957236, -1.883908815957236, 0.7410135435423859, 0.7410135435423859,
        -1.0340640969579933, -1.0340640969579933}},
      // make((2, 3), 1).unsqueeze(1)
      {"unsqueeze",
       [] { return unsqueeze(make({2, 3}, 1), 1); },
       {2, 1, 3},
       {-1.883908815957236, 0.7410135435423859, -1.0340640969579933, 1.5908582625416283,
        0.21578062204124993, -1.5592970184591284}},
      // make((1, 3, 1), 1).squeeze()
      {"squeeze",
       [] { return squeeze(make({1, 3, 1}, 1)); },
       {3},
       {-1.883908815957236, 0.7410135435423859, -1.0340640969579933}},
      // make((3, 4), 1).select(1, -1)
      {"select",
       [] { return make({3, 4}, 1).select(1, -1); },
       {3},
       {1.5908582625416283, -0.7094522994598851, 1.3902371385386014}},
      // make((3, 4), 1).t().narrow(0, 1, 2)
      {"narrow",
       [] { return make({3, 4}, 1).t().narrow(0, 1, 2); },
       {2, 3},
       {0.7410135435423859, -1.5592970184591284, 0.5403924195393581, -1.0340640969579933,
        1.0656253410404934, -1.23468522096102}},
      // make((3, 2), 1).t().reshape(6)
      {"reshape",
       [] { return reshape(make({3, 2}, 1).t(), {6}); },
       {6},
       {-1.883908815957236, -1.0340640969579933, 0.21578062204124993, 0.7410135435423859,
        1.5908582625416283, -1.5592970184591284}},
      // make((4, 3), 1).view(2, 2, 3)
      {"view",
       [] { return make({4, 3}, 1).view({2, 2, 3}); },
       {2, 2, 3},
       {-1.883908815957236, 0.7410135435423859, -1.0340640969579933, 1.5908582625416283,
        0.21578062204124993, -1.5592970184591284, 1.0656253410404934, -0.7094522994598851,
        1.9154700600397367, 0.5403924195393581, -1.23468522096102, 1.3902371385386014}},
      // make((2, 3, 2), 1).flatten(1)
      {"flatten",
       [] { return flatten(make({2, 3, 2}, 1), 1); },
       {2, 6},
       {-1.883908815957236, 0.7410135435423859, -1.0340640969579933, 1.5908582625416283,
        0.21578062204124993, -1.5592970184591284, 1.0656253410404934, -0.7094522994598851,
        1.9154700600397367, 0.5403924195393581, -1.23468522096102, 1.3902371385386014}},
      // make((3, 2), 1).t().contiguous()
      {"contiguous",
       [] { return make({3, 2}, 1).t().contiguous(); },
       {2, 3},
       {-1.883908815957236, -1.0340640969579933, 0.21578062204124993, 0.7410135435423859,
        1.5908582625416283, -1.5592970184591284}},
      // make((3, 2), 1).t().clone()
      {"clone",
       [] { return make({3, 2}, 1).t().clone(); },
       {2, 3},
       {-1.883908815957236, -1.0340640969579933, 0.21578062204124993, 0.7410135435423859,
        1.5908582625416283, -1.5592970184591284}},
      // make((2, 3), 1).to(torch.float32).to(torch.float64)
      {"to",
       [] { return make({2, 3}, 1).to(kFloat32).to(kFloat64); },
       {2, 3},
       {-1.8839088678359985, 0.7410135269165039, -1.0340640544891357, 1.5908582210540771,
        0.2157806158065796, -1.55929696559906}},
      // torch.cat([make((2, 3), 1), make((2, 1), 2)], 1)
      {"cat",
       [] { return cat({make({2, 3}, 1), make({2, 1}, 2)}, 1); },
       {2, 4},
       {-1.883908815957236, 0.7410135435423859, -1.0340640969579933, -0.3927399914140932,
        1.5908582625416283, 0.21578062204124993, -1.5592970184591284, -1.7678176319144716}},
      // torch.stack([make((2, 3), 1), make((2, 3), 2)], 1)
      {"stack",
       [] { return stack({make({2, 3}, 1), make({2, 3}, 2)}, 1); },
       {2, 2, 3},
       {-1.883908815957236, 0.7410135435423859, -1.0340640969579933, -0.3927399914140932,
        -1.7678176319144716, 0.85710472758515, 1.5908582625416283, 0.21578062204124993,
        -1.5592970184591284, -0.9179729129152283, 1.7069494465843933, 0.33187180608401334}},
      // torch.split(make((2, 5), 1), 2, 1)[2]
      {"split",
       [] { return split(make({2, 5}, 1), 2, 1)[2]; },
       {2, 1},
       {0.21578062204124993, 0.5403924195393581}},
      // torch.chunk(make((2, 5), 1), 3, 1)[1]
      {"chunk",
       [] { return chunk(make({2, 5}, 1), 3, 1)[1]; },
       {2, 2},
       {-1.0340640969579933, 1.5908582625416283, -0.7094522994598851, 1.9154700600397367}},
      // torch.index_select(make((3, 4), 1), 1, torch.tensor([3, 0, 3]))
      {"index_select",
       [] { return index_select(make({3, 4}, 1), 1, indices({3, 0, 3}, {3})); },
       {3, 3},
       {1.5908582625416283, -1.883908815957236, 1.5908582625416283, -0.7094522994598851,
        0.21578062204124993, -0.7094522994598851, 1.3902371385386014, 1.9154700600397367,
        1.3902371385386014}},
      // torch.gather(make((2, 3), 1), 1, torch.tensor([[0, 0, 2], [1, 2, 2]]))
      {"gather",
       [] { return gather(make({2, 3}, 1), 1, indices({0, 0, 2, 1, 2, 2}, {2, 3})); },
       {2, 3},
       {-1.883908815957236, -1.883908815957236, -1.0340640969579933, 0.21578062204124993,
        -1.5592970184591284, -1.5592970184591284}},
      // torch.scatter_add(make((2, 3), 1), 1, torch.tensor([[0, 0], [2, 1]]), make((2, 2), 2))
      {"scatter_add",
       [] { return scatter_add(make({2, 3}, 1), 1, indices({0, 0, 2, 1}, {2, 2}), make({2, 2}, 2)); },
       {2, 3},
       {-4.0444664392858005, 0.7410135435423859, -1.0340640969579933, 1.5908582625416283,
        -0.7021922908739784, -0.7021922908739784}},
      // torch.index_add(make((3, 2), 1), 0, torch.tensor([2, 0, 2]), make((3, 2), 2))
      {"index_add",
       [] { return index_add(make({3, 2}, 1), 0, indices({2, 0, 2}, {3}), make({3, 2}, 2)); },
       {3, 2},
       {-1.026804088372086, -0.1769593693728424, -1.0340640969579933, 1.5908582625416283,
        1.52999007721155, -2.995242844289587}},
      // torch.tril(make((3, 4), 1), 1)
      {"tril",
       [] { return tril(make({3, 4}, 1), 1); },
       {3, 4},
       {-1.883908815957236, 0.7410135435423859, 0.0, 0.0, 0.21578062204124993, -1.5592970184591284,
        1.0656253410404934, 0.0, 1.9154700600397367, 0.5403924195393581, -1.23468522096102,
        1.3902371385386014}},
      // torch.triu(make((2, 3, 3), 1), -1)
      {"triu",
       [] { return triu(make({2, 3, 3}, 1), -1); },
       {2, 3, 3},
       {-1.883908815957236, 0.7410135435423859, -1.0340640969579933, 1.5908582625416283,
        0.21578062204124993, -1.5592970184591284, 0.0, -0.7094522994598851, 1.9154700600397367,
        0.5403924195393581, -1.23468522096102, 1.3902371385386014, -0.38484050196177355,
        -1.759918142462152, 0.8650042170374697, 0.0, 1.714848936036713, 0.33977129553633456}},
      // ---- nn::functional (sdpa is PyTorch 2's; with 1.13 the reference is
      // softmax(q @ k.transpose(-2, -1) * scale + mask) @ v, the bool mask applied with
      // masked_fill(~mask, -inf) and is_causal as a tril mask)
      // F.linear(make((2, 2, 3), 4), make((4, 3), 5), make((4,), 6))
      {"linear", [] { return F::linear(make({2, 2, 3}, 4), make({4, 3}, 5), make({4}, 6)); }, {2, 2, 4}, {-3.5474948174340115, -1.3656379682534925, -3.17962018214185, 5.3645397850573495, -5.141599165333481, -1.9220402820666558, -2.488227293268253, 5.362796190613166, -2.520393103885788, -0.57415704113765, -3.80357370425748, 0.8832884417011647, -3.064528507985412, -0.08059041115096477, -2.062211871584031, 0.17151379105682585}},
      // F.linear(make((3,), 7), make((2, 3), 8))
      {"linear", [] { return F::linear(make({3}, 7), make({2, 3}, 8)); }, {2}, {-1.6653224384371763, -0.9891430989563001}},
      // F.mse_loss(make((2, 3), 1), make((2, 3), 2), reduction='sum')
      {"mse_loss", [] { return F::mse_loss(make({2, 3}, 1), make({2, 3}, 2), "sum"); }, {}, {24.188675706315017}},
      // F.mse_loss(make((2, 3), 1), make((2, 3), 2))
      {"mse_loss", [] { return F::mse_loss(make({2, 3}, 1), make({2, 3}, 2)); }, {}, {4.031445951052503}},
      // sdpa(make((1, 4, 3), 4), make((1, 4, 3), 5), make((1, 4, 2), 6), causal=True)
      {"scaled_dot_product_attention", [] { return F::scaled_dot_product_attention(make({1, 4, 3}, 4), make({1, 4, 3}, 5), make({1, 4, 2}, 6), {}, true); }, {1, 4, 2}, {-1.6280646932415248, 0.996857666258097, -1.1309096115874329, 1.494012747912189, -1.0247419607979742, 0.9475513072669198, -0.21918557265318167, 0.3458364887610842}},
      // sdpa(make((2, 3, 4), 7), make((2, 3, 4), 8), make((2, 3, 2), 9), mask=torch.tensor([[1, 0, 1], [1, 1, 0], [0, 1, 1]], dtype=torch.bool))
      {"scaled_dot_product_attention", [] { return F::scaled_dot_product_attention(make({2, 3, 4}, 7), make({2, 3, 4}, 8), make({2, 3, 2}, 9), mask({1, 0, 1, 1, 1, 0, 0, 1, 1}, {3, 3})); }, {2, 3, 2}, {0.49363002724834076, 0.5029140038539793, -0.7509093933552908, 1.8611675019951412, 0.5145323415928724, -1.2605452989075063, -0.8600454694112536, -0.21537110985261565, -1.4432444996236233, 1.1816778598759983, -0.9457550094442192, 1.6459895722709792}},
      // sdpa(make((3, 2), 10), make((4, 2), 11), make((4, 3), 12), mask=make((3, 4), 13), scale=0.5)
      {"scaled_dot_product_attention", [] { return F::scaled_dot_product_attention(make({3, 2}, 10), make({4, 2}, 11), make({4, 3}, 12), make({3, 4}, 13), false, 0.5); }, {3, 3}, {-1.223127669754949, 0.6225774386963038, -0.2766162344735049, -1.0459205810210064, 1.350229613542186, 0.04794930567168281, 0.4110092564352991, -1.145122257698024, 1.2675212926852393}},
      // F.cross_entropy(make((3, 4), 5), idx([3, 0, 1], (3,)), weight=make((4,), 6).abs(), label_smoothing=0.2)
      {"cross_entropy", [] { return F::cross_entropy(make({3, 4}, 5), indices({3, 0, 1}, {3}), abs(make({4}, 6)), -100, "mean", 0.2); }, {}, {2.397313418491433}},
      // F.cross_entropy(make((3, 4), 7), make((3, 4), 8))
      {"cross_entropy", [] { return F::cross_entropy(make({3, 4}, 7), make({3, 4}, 8)); }, {}, {2.132893385945918}},
      // F.cross_entropy(make((3, 4), 4), idx([1, -100, 3], (3,)))
      {"cross_entropy", [] { return F::cross_entropy(make({3, 4}, 4), indices({1, -100, 3}, {3})); }, {}, {1.8570794643563857}},
      // F.cross_entropy(make((2, 3, 2), 9), idx([0, 2, 1, 1], (2, 2)), reduction='none')
      {"cross_entropy", [] { return F::cross_entropy(make({2, 3, 2}, 9), indices({0, 2, 1, 1}, {2, 2}), {}, -100, "none"); }, {2, 2}, {2.5379287371898895, 2.4340309738392567, 1.592756004335366, 0.38548467525783014}},
      // F.cross_entropy(make((3, 4), 2), idx([2, 2, 0], (3,)), weight=make((4,), 3).abs(), reduction='sum')
      {"cross_entropy", [] { return F::cross_entropy(make({3, 4}, 2), indices({2, 2, 0}, {3}), abs(make({4}, 3)), -100, "sum"); }, {}, {9.461395036887641}},
      // F.nll_loss(make((3, 4), 2), idx([2, 1, 0], (3,)), weight=make((4,), 3).abs(), ignore_index=1)
      {"nll_loss", [] { return F::nll_loss(make({3, 4}, 2), indices({2, 1, 0}, {3}), abs(make({4}, 3)), 1); }, {}, {-0.16716418600874458}},
      // F.nll_loss(make((2, 3, 2), 5), idx([0, 2, 1, 1], (2, 2)), reduction='sum')
      {"nll_loss", [] { return F::nll_loss(make({2, 3, 2}, 5), indices({0, 2, 1, 1}, {2, 2}), {}, -100, "sum"); }, {}, {-1.67135783785301}},
      // F.kl_div(make((2, 3), 3), make((2, 3), 4).abs(), reduction='batchmean')
      {"kl_div", [] { return F::kl_div(make({2, 3}, 3), abs(make({2, 3}, 4)), "batchmean"); }, {}, {-0.8041451576186667}},
      // F.kl_div(make((2, 3), 5), make((2, 3), 6), reduction='sum', log_target=True)
      {"kl_div", [] { return F::kl_div(make({2, 3}, 5), make({2, 3}, 6), "sum", true); }, {}, {15.281725493371308}},
      // F.kl_div(make((4,), 7), make((4,), 8).abs(), reduction='none')
      {"kl_div", [] { return F::kl_div(make({4}, 7), abs(make({4}, 8)), "none"); }, {4}, {0.52444054854432, 0.2056261095954695, -1.0879815943858642, 1.0672519019449118}},
      // F.binary_cross_entropy_with_logits(make((2, 3), 3), make((2, 3), 4).abs(), weight=make((3,), 5).abs(), reduction='sum', pos_weight=make((3,), 6).abs())
      {"binary_cross_entropy_with_logits", [] { return F::binary_cross_entropy_with_logits(make({2, 3}, 3), abs(make({2, 3}, 4)), abs(make({3}, 5)), "sum", abs(make({3}, 6))); }, {}, {4.412552623337318}},
      // F.binary_cross_entropy_with_logits(make((2, 3), 7), make((2, 3), 8), reduction='none')
      {"binary_cross_entropy_with_logits", [] { return F::binary_cross_entropy_with_logits(make({2, 3}, 7), make({2, 3}, 8), {}, "none"); }, {2, 3}, {0.37177091368260873, 0.7725729400046826, 2.9506116342930513, 1.2296946326713272, 3.165989159349871, 2.1586439760672813}},
      // F.layer_norm(make((2, 2, 3), 5), (2, 3), make((2, 3), 6), make((2, 3), 7))
      {"layer_norm", [] { return F::layer_norm(make({2, 2, 3}, 5), {2, 3}, make({2, 3}, 6), make({2, 3}, 7)); }, {2, 2, 3}, {-0.5635038009490507, -2.579180559594265, 0.12977954188525112, -0.5869351184668978, 1.2376339312298337, -0.45028893003188886, 0.6874714796868341, -2.980373080725198, 0.4582335045320056, -1.998664820361473, 2.7129527698558142, 0.5544200462625458}},
      // F.layer_norm(make((4, 2), 8).t(), (4,), make((4,), 9), make((4,), 10), eps=0.1)
      {"layer_norm", [] { return F::layer_norm(make({4, 2}, 8).t(), {4}, make({4}, 9), make({4}, 10), 0.1); }, {2, 4}, {0.14782999610369355, -2.938136799115592, 1.716866558883743, 0.018285009294398087, 0.7044480507610072, 1.6880433871577667, 1.370377856186759, 1.3443599689214225}},
      // F.embedding(idx([0, 2, 2, 1], (2, 2)), make((3, 3), 2))
      {"embedding", [] { return F::embedding(indices({0, 2, 2, 1}, {2, 2}), make({3, 3}, 2)); }, {2, 2, 3}, {-0.3927399914140932, -1.7678176319144716, 0.85710472758515, -1.443205834416365, 1.1817165250832566, -0.5933611154171217, -1.443205834416365, 1.1817165250832566, -0.5933611154171217, -0.9179729129152283, 1.7069494465843933, 0.33187180608401334}},
      // F.dropout(make((2, 3), 5), 0.5, training=False)
      {"dropout", [] { return F::dropout(make({2, 3}, 5), 0.5, false); }, {2, 3}, {0.8807664822153334, -0.8943111582850449, 1.7306112012145767, 0.3555335607141983, -1.41954407978618, 1.2053782797134418}},

  };
  return cases;
}

TEST(OpTable, ForwardMatchesPyTorch) {
  std::set<std::string> table_names;
  for (const OpInfo& op : op_table()) table_names.insert(op.name);
  std::set<std::string> covered;
  for (const ForwardCase& c : forward_cases()) {
    SCOPED_TRACE(c.op);
    EXPECT_TRUE(table_names.count(c.op)) << "no table entry named " << c.op;
    covered.insert(c.op);
    Tensor out = c.fn();
    ASSERT_EQ(out.dtype(), kFloat64);
    ASSERT_EQ(out.shape(), c.shape);
    std::vector<double> got = out.to_vector<double>();
    ASSERT_EQ(got.size(), c.expected.size());
    for (std::size_t i = 0; i < got.size(); ++i)
      EXPECT_NEAR(got[i], c.expected[i], 1e-12 + 1e-10 * std::fabs(c.expected[i]))
          << "element " << i;
  }
  // Every table entry has at least one forward check.
  for (const std::string& n : table_names)
    EXPECT_TRUE(covered.count(n)) << n << " has no forward value from PyTorch";
}

// ---------------------------------------------------------------- coverage

TEST(OpTable, CoversEveryDifferentiableOp) {
  const std::vector<std::string> required = {"add",
                                             "sub",
                                             "mul",
                                             "div",
                                             "add_scalar",
                                             "sub_scalar",
                                             "mul_scalar",
                                             "div_scalar",
                                             "rsub_scalar",
                                             "rdiv_scalar",
                                             "neg",
                                             "exp",
                                             "log",
                                             "sqrt",
                                             "rsqrt",
                                             "pow_scalar",
                                             "pow_tensor",
                                             "pow_scalar_base",
                                             "abs",
                                             "sign",
                                             "tanh",
                                             "sigmoid",
                                             "relu",
                                             "erf",
                                             "gelu",
                                             "gelu_tanh",
                                             "clamp",
                                             "maximum",
                                             "minimum",
                                             "where",
                                             "masked_fill",
                                             "sum",
                                             "mean",
                                             "max",
                                             "min",
                                             "max_dim",
                                             "min_dim",
                                             "amax",
                                             "amin",
                                             "var",
                                             "std",
                                             "logsumexp",
                                             "norm",
                                             "matmul",
                                             "mm",
                                             "bmm",
                                             "softmax",
                                             "log_softmax",
                                             "transpose",
                                             "t",
                                             "permute",
                                             "expand",
                                             "unsqueeze",
                                             "squeeze",
                                             "select",
                                             "narrow",
                                             "reshape",
                                             "view",
                                             "flatten",
                                             "contiguous",
                                             "clone",
                                             "to",
                                             "cat",
                                             "stack",
                                             "split",
                                             "chunk",
                                             "index_select",
                                             "gather",
                                             "scatter_add",
                                             "index_add",
                                             "tril",
                                             "triu",
                                             "linear",
                                             "mse_loss",
                                             "scaled_dot_product_attention",
                                             "cross_entropy",
                                             "nll_loss",
                                             "kl_div",
                                             "binary_cross_entropy_with_logits",
                                             "layer_norm",
                                             "embedding",
                                             "dropout"};
  const std::vector<std::string> required_gradgrad = {
      "matmul",        "mm",
      "bmm",           "softmax",
      "log_softmax",   "add",
      "sub",           "mul",
      "div",           "add_scalar",
      "sub_scalar",    "mul_scalar",
      "div_scalar",    "exp",
      "log",           "tanh",
      "sum",           "mean",
      "transpose",     "reshape",
      "linear",        "scaled_dot_product_attention",
      "cross_entropy", "layer_norm"};

  std::set<std::string> names, gradgrad;
  std::size_t samples = 0, gradgrad_samples = 0, errors = 0, non_contiguous = 0, empty = 0;
  for (const OpInfo& op : op_table()) {
    EXPECT_TRUE(names.insert(op.name).second) << "duplicate entry " << op.name;
    samples += op.samples.size();
    for (const Sample& smp : op.samples) {
      bool nc = false, em = false;
      for (const Tensor& t : smp.inputs) {
        nc |= t.requires_grad() && !t.is_contiguous();
        em |= t.numel() == 0;
      }
      non_contiguous += nc;
      empty += em;
    }
    errors += op.error_inputs.size();
    if (op.gradgrad) {
      gradgrad.insert(op.name);
      gradgrad_samples += op.samples.size();
    }
  }
  for (const std::string& n : required) EXPECT_TRUE(names.count(n)) << "no entry for " << n;
  for (const std::string& n : required_gradgrad)
    EXPECT_TRUE(gradgrad.count(n)) << n << " is not gradgradchecked";
  EXPECT_GE(non_contiguous, 40u) << "too few samples with a non-contiguous leaf";
  EXPECT_GE(empty, 20u) << "too few samples with an empty input";
  std::cout << "gradchecked " << names.size() << " ops, " << samples << " samples ("
            << non_contiguous << " with a non-contiguous leaf, " << empty << " with an empty "
            << "input); gradgradchecked " << gradgrad.size() << " ops, " << gradgrad_samples
            << " samples; " << errors << " error inputs\n";
}

}  // namespace
}  // namespace minigrad::testing
