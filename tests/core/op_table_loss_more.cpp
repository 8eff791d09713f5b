// The op table's family of nn/loss_more.h (op_table.h): pairwise_distance and the margin,
// ranking, embedding, multi-label, Poisson and CTC losses. Reference values printed by PyTorch 1.13
// from the expression each carries (make and idx as in tests/parity/compare.py).
#include <vector>

#include "core/op_table.h"
#include "core/op_table_builders.h"
#include "minigrad/nn/loss_more.h"

namespace minigrad::testing {

namespace {

namespace F = nn::functional;

/// sign(make(shape, seed)): a target of 1 and -1 (no grad).
Tensor signs(const Shape& shape, std::int64_t seed) { return sign(make(shape, seed)); }

}  // namespace

void add_loss_more(std::vector<OpInfo>& t) {
  t.push_back(
      entry("pairwise_distance", [](const V& v) { return F::pairwise_distance(v[0], v[1]); },
            {s("p 2", {arg({3, 4}, 1), arg({3, 4}, 2)}),
             s("p 1, keepdim, 1-D", {arg({4}, 3), arg({4}, 4)},
               [](const V& v) { return F::pairwise_distance(v[0], v[1], 1.0, 1e-6, true); }),
             s("p 3, broadcast", {arg({2, 3}, 5), arg({3}, 6)},
               [](const V& v) { return F::pairwise_distance(v[0], v[1], 3.0); })},
            {e("pairwise_distance", "negative p", "p must be non-negative, got -1",
               [] { F::pairwise_distance(make({2}, 1), make({2}, 2), -1.0); })})
          .py("F.pairwise_distance(x[0], x[1])",
              {{"p 1, keepdim, 1-D", "F.pairwise_distance(x[0], x[1], p=1.0, keepdim=True)"},
               {"p 3, broadcast", "F.pairwise_distance(x[0], x[1], p=3.0)"}})
          .ref("F.pairwise_distance(make((3, 4), 1), make((3, 4), 2))",
               [] {
                 return F::pairwise_distance(make({3, 4}, 1), make({3, 4}, 2));
               },
               {3}, {4.288190176607744, 3.95864267732449, 4.739117258985054})
          .ref("F.pairwise_distance(make((4,), 3), make((4,), 4), p=1.0, keepdim=True)",
               [] { return F::pairwise_distance(make({4}, 3), make({4}, 4), 1.0, 1e-6, true); },
               {1}, {8.8}));

  t.push_back(
      entry("soft_margin_loss", [](const V& v) { return F::soft_margin_loss(v[0], v[1]); },
            {s("mean", {arg({2, 3}, 1), signs({2, 3}, 2)}),
             s("target broadcast, none", {arg({2, 3}, 3), signs({3}, 4)},
               [](const V& v) { return F::soft_margin_loss(v[0], v[1], "none"); })},
            {e("soft_margin_loss", "target with grad",
               "is not differentiable with respect to argument 'target'",
               [] { F::soft_margin_loss(make({2}, 1), arg({2}, 2)); }),
             e("soft_margin_loss", "target larger than input",
               "does not broadcast to the input's shape (3,)",
               [] {
                 F::soft_margin_loss(make({3}, 1), make({2, 3}, 2));
               })})
          .py("F.soft_margin_loss(x[0], x[1])",
              {{"target broadcast, none", "F.soft_margin_loss(x[0], x[1], reduction='none')"}})
          .ref("F.soft_margin_loss(make((2, 3), 1), make((2, 3), 2).sign())",
               [] {
                 return F::soft_margin_loss(make({2, 3}, 1), signs({2, 3}, 2));
               },
               {}, {1.1213446142399006}));

  t.push_back(
      entry("multilabel_soft_margin_loss",
            [](const V& v) { return F::multilabel_soft_margin_loss(v[0], v[1]); },
            {s("mean", {arg({2, 3}, 1), abs(make({2, 3}, 2))}),
             s("weight, target with grad, none",
               {arg({2, 3}, 3), arg_pos({2, 3}, 4), arg_pos({3}, 5)},
               [](const V& v) { return F::multilabel_soft_margin_loss(v[0], v[1], v[2], "none"); }),
             s("1-D, sum", {arg({4}, 6), abs(make({4}, 7))},
               [](const V& v) { return F::multilabel_soft_margin_loss(v[0], v[1], {}, "sum"); })},
            {e("multilabel_soft_margin_loss", "0-dim input",
               "input must have a class dim, got a 0-dim tensor",
               [] { F::multilabel_soft_margin_loss(make({}, 1), make({}, 2)); })})
          .py("F.multilabel_soft_margin_loss(x[0], x[1])",
              {{"weight, target with grad, none",
                "F.multilabel_soft_margin_loss(x[0], x[1], weight=x[2], reduction='none')"},
               {"1-D, sum", "F.multilabel_soft_margin_loss(x[0], x[1], reduction='sum')"}})
          .ref("F.multilabel_soft_margin_loss(make((2, 3), 3), make((2, 3), 4).abs(), "
               "weight=make((3,), 5).abs(), reduction='none')",
               [] {
                 return F::multilabel_soft_margin_loss(make({2, 3}, 3), abs(make({2, 3}, 4)),
                                                       abs(make({3}, 5)), "none");
               },
               {2}, {0.6853572164677534, 0.7287284290205568}));

  t.push_back(
      entry("margin_ranking_loss",
            [](const V& v) { return F::margin_ranking_loss(v[0], v[1], v[2]); },
            {s("mean", {arg({4}, 1), arg({4}, 2), signs({4}, 3)}),
             s("margin, target with grad, none", {arg({2, 3}, 4), arg({2, 3}, 5), arg({2, 3}, 6)},
               [](const V& v) { return F::margin_ranking_loss(v[0], v[1], v[2], 0.5, "none"); })},
            {e("margin_ranking_loss", "different dims",
               "All input tensors should have same dimension but got sizes: input1: (3,), "
               "input2: (3,), target: (1, 3)",
               [] {
                 F::margin_ranking_loss(make({3}, 1), make({3}, 2), make({1, 3}, 3));
               })})
          .py("F.margin_ranking_loss(x[0], x[1], x[2])",
              {{"margin, target with grad, none",
                "F.margin_ranking_loss(x[0], x[1], x[2], margin=0.5, reduction='none')"}})
          .ref(
              "F.margin_ranking_loss(make((4,), 1), make((4,), 2), make((4,), 3).sign(), "
              "margin=0.5)",
              [] { return F::margin_ranking_loss(make({4}, 1), make({4}, 2), signs({4}, 3), 0.5); },
              {}, {1.25}));

  t.push_back(
      entry("hinge_embedding_loss", [](const V& v) { return F::hinge_embedding_loss(v[0], v[1]); },
            {s("mean", {arg({2, 3}, 1), signs({2, 3}, 2)}),
             s("margin, target broadcast, none", {arg({2, 3}, 3), signs({3}, 4)},
               [](const V& v) { return F::hinge_embedding_loss(v[0], v[1], 1.5, "none"); })},
            {e("hinge_embedding_loss", "integer target", "target must be floating point, got int64",
               [] {
                 F::hinge_embedding_loss(make({2}, 1), indices({1, -1}, {2}));
               })})
          .py("F.hinge_embedding_loss(x[0], x[1])",
              {{"margin, target broadcast, none",
                "F.hinge_embedding_loss(x[0], x[1], margin=1.5, reduction='none')"}})
          .ref("F.hinge_embedding_loss(make((2, 3), 1), make((2, 3), 2).sign(), margin=1.5, "
               "reduction='sum')",
               [] {
                 return F::hinge_embedding_loss(make({2, 3}, 1), signs({2, 3}, 2), 1.5, "sum");
               },
               {}, {1.7653147790389785}));

  t.push_back(
      entry(
          "cosine_embedding_loss",
          [](const V& v) { return F::cosine_embedding_loss(v[0], v[1], v[2]); },
          {s("mean", {arg({3, 4}, 1), arg({3, 4}, 2), signs({3}, 3)}),
           s("margin, none", {arg({3, 4}, 4), arg({3, 4}, 5), signs({3}, 6)},
             [](const V& v) { return F::cosine_embedding_loss(v[0], v[1], v[2], -0.5, "none"); }),
           s("1-D inputs, 0-dim target", {arg({4}, 7), arg({4}, 8), signs({}, 9)})},
          {e("cosine_embedding_loss", "2-D target",
             "0D or 1D target tensor expected, multi-target not supported",
             [] {
               F::cosine_embedding_loss(make({3, 2}, 1), make({3, 2}, 2), make({3, 1}, 3));
             }),
           e("cosine_embedding_loss", "1-D inputs with a 1-D target",
             "1D target tensor expects 2D input tensors, but found inputs with sizes (3,) and (3,)",
             [] { F::cosine_embedding_loss(make({3}, 1), make({3}, 2), make({3}, 3)); })})
          .py("F.cosine_embedding_loss(x[0], x[1], x[2])",
              {{"margin, none",
                "F.cosine_embedding_loss(x[0], x[1], x[2], margin=-0.5, reduction='none')"}})
          .ref("F.cosine_embedding_loss(make((3, 4), 1), make((3, 4), 2), make((3,), 3).sign(), "
               "margin=0.2, reduction='none')",
               [] {
                 return F::cosine_embedding_loss(make({3, 4}, 1), make({3, 4}, 2), signs({3}, 3),
                                                 0.2, "none");
               },
               {3}, {1.4770127884394955, 0.0, 0.0}));

  t.push_back(
      entry("triplet_margin_loss",
            [](const V& v) { return F::triplet_margin_loss(v[0], v[1], v[2]); },
            {s("mean", {arg({3, 4}, 1), arg({3, 4}, 2), arg({3, 4}, 3)}),
             s("swap, p 1, margin 3, none", {arg({3, 4}, 4), arg({3, 4}, 5), arg({3, 4}, 6)},
               [](const V& v) {
                 return F::triplet_margin_loss(v[0], v[1], v[2], 3.0, 1.0, 1e-6, true, "none");
               })},
            {e("triplet_margin_loss", "different dims",
               "All inputs should have same dimension but got 2D, 2D and 1D inputs.",
               [] {
                 F::triplet_margin_loss(make({2, 3}, 1), make({2, 3}, 2), make({3}, 3));
               })})
          .py("F.triplet_margin_loss(x[0], x[1], x[2])",
              {{"swap, p 1, margin 3, none",
                "F.triplet_margin_loss(x[0], x[1], x[2], margin=3.0, p=1.0, swap=True, "
                "reduction='none')"}})
          .ref("F.triplet_margin_loss(make((3, 4), 1), make((3, 4), 2), make((3, 4), 3), "
               "margin=2.0, swap=True, reduction='none')",
               [] {
                 return F::triplet_margin_loss(make({3, 4}, 1), make({3, 4}, 2), make({3, 4}, 3),
                                               2.0, 2.0, 1e-6, true, "none");
               },
               {3}, {2.6496663092036714, 2.3201188099204173, 5.262579842940747}));

  t.push_back(
      entry("multi_margin_loss", [](const V& v) { return F::multi_margin_loss(v[0], v[1]); },
            {s("mean", {arg({3, 4}, 1), indices({0, 3, 1}, {3})}),
             s("p 2, margin, weight, none", {arg({3, 4}, 2), indices({2, 2, 0}, {3})},
               [](const V& v) {
                 return F::multi_margin_loss(v[0], v[1], 2, 0.7, abs(make({4}, 3)), "none");
               }),
             s("1-D input, 0-dim target", {arg({4}, 4), indices({2}, {})})},
            {e("multi_margin_loss", "p 3", "only p == 1 and p == 2 supported, got p = 3",
               [] {
                 F::multi_margin_loss(make({2, 3}, 1), indices({0, 1}, {2}), 3);
               }),
             e("multi_margin_loss", "class out of range", "target out of range: class 4 for 4",
               [] {
                 F::multi_margin_loss(make({2, 4}, 1), indices({0, 4}, {2}));
               }),
             e("multi_margin_loss", "target per sample",
               "inconsistent target size, expected 2 class indices",
               [] {
                 F::multi_margin_loss(make({2, 4}, 1), indices({0, 1, 2}, {3}));
               })})
          .py("F.multi_margin_loss(x[0], x[1])",
              {{"p 2, margin, weight, none",
                "F.multi_margin_loss(x[0], x[1], p=2, margin=0.7, weight=weights((4,), 3), "
                "reduction='none')"}})
          .ref("F.multi_margin_loss(make((3, 4), 1), idx([0, 3, 1], (3,)), p=2, margin=0.7, "
               "weight=make((4,), 2).abs(), reduction='none')",
               [] {
                 return F::multi_margin_loss(make({3, 4}, 1), indices({0, 3, 1}, {3}), 2, 0.7,
                                             abs(make({4}, 2)), "none");
               },
               {3}, {3.032522944017553, 2.0120569499401157, 2.964615083541348})
          .ref("F.multi_margin_loss(make((4,), 3), idx([2], ()))",
               [] { return F::multi_margin_loss(make({4}, 3), indices({2}, {})); }, {},
               {2.537538820250189}));

  t.push_back(
      entry("multilabel_margin_loss",
            [](const V& v) { return F::multilabel_margin_loss(v[0], v[1]); },
            {s("mean", {arg({2, 4}, 1), indices({3, 0, -1, 1, 1, -1, 0, 0}, {2, 4})}),
             s("repeated class, none",
               {arg({3, 3}, 2), indices({2, 2, -1, 0, 1, 2, -1, 0, 0}, {3, 3})},
               [](const V& v) { return F::multilabel_margin_loss(v[0], v[1], "none"); }),
             s("1-D, sum", {arg({4}, 3), indices({1, -1, 2, 2}, {4})},
               [](const V& v) { return F::multilabel_margin_loss(v[0], v[1], "sum"); })},
            {e("multilabel_margin_loss", "target shape",
               "inconsistent size (1, 4) for argument #2 'target'",
               [] {
                 F::multilabel_margin_loss(make({2, 4}, 1), indices({0, 1, -1, 2}, {1, 4}));
               }),
             e("multilabel_margin_loss", "class out of range",
               "argument #2 'target' is out of range: 4 for 4 classes",
               [] {
                 F::multilabel_margin_loss(make({4}, 1), indices({0, 4, -1, 2}, {4}));
               })})
          .py("F.multilabel_margin_loss(x[0], x[1])",
              {{"repeated class, none", "F.multilabel_margin_loss(x[0], x[1], reduction='none')"},
               {"1-D, sum", "F.multilabel_margin_loss(x[0], x[1], reduction='sum')"}})
          .ref("F.multilabel_margin_loss(make((2, 4), 1), idx([3, 0, -1, 1, 1, -1, 0, 0], (2, 4)), "
               "reduction='none')",
               [] {
                 return F::multilabel_margin_loss(
                     make({2, 4}, 1), indices({3, 0, -1, 1, 1, -1, 0, 0}, {2, 4}), "none");
               },
               {2}, {1.4062305898749055, 2.062461179749811}));

  t.push_back(
      entry(
          "poisson_nll_loss", [](const V& v) { return F::poisson_nll_loss(v[0], v[1]); },
          {s("log input, target with grad", {arg({2, 3}, 1), arg_pos({2, 3}, 2)}),
           s("full, none", {arg({2, 3}, 3), abs(make({2, 3}, 4)) * 2.0},
             [](const V& v) { return F::poisson_nll_loss(v[0], v[1], true, true, 1e-8, "none"); }),
           s("rates, sum", {arg_pos({2, 3}, 5), arg_pos({3}, 6)},
             [](const V& v) {
               return F::poisson_nll_loss(v[0], v[1], false, false, 1e-8, "sum");
             })},
          {e("poisson_nll_loss", "bad reduction",
             "reduction must be \"mean\", \"sum\" or \"none\", got \"avg\"",
             [] { F::poisson_nll_loss(make({2}, 1), make({2}, 2), true, false, 1e-8, "avg"); })})
          .py("F.poisson_nll_loss(x[0], x[1])",
              {{"full, none", "F.poisson_nll_loss(x[0], x[1], full=True, reduction='none')"},
               {"rates, sum", "F.poisson_nll_loss(x[0], x[1], log_input=False, reduction='sum')"}})
          .ref(
              "F.poisson_nll_loss(make((2, 3), 1), make((2, 3), 2).abs() * 2, full=True)",
              [] {
                return F::poisson_nll_loss(make({2, 3}, 1), abs(make({2, 3}, 2)) * 2.0, true, true);
              },
              {}, {2.110936701212872})
          .ref("F.poisson_nll_loss(make((2, 3), 3).abs(), make((2, 3), 4).abs(), "
               "log_input=False, reduction='none')",
               [] {
                 return F::poisson_nll_loss(abs(make({2, 3}, 3)), abs(make({2, 3}, 4)), false,
                                            false, 1e-8, "none");
               },
               {2, 3},
               {1.0898048265428562, 2.351317337285481, 1.5315692160553822, 1.0149189048590481,
                1.0423899361057636, 1.4112194386103527}));

  // The samples give ctc_loss log_softmax's output, as a program does: PyTorch's gradient with
  // respect to log_probs is exp(log_probs) - gamma (the one with respect to the logits, which
  // log_softmax's backward then leaves unchanged), minigrad's is the derivative, -gamma; through
  // log_softmax both are the same.
  t.push_back(
      entry("ctc_loss",
            [](const V& v) { return F::ctc_loss(log_softmax(v[0], 2), v[1], v[2], v[3]); },
            {s("mean, padded targets", {arg({6, 2, 5}, 1), indices({1, 2, 3, 3}, {2, 2}),
                                        indices({6, 5}, {2}), indices({2, 2}, {2})}),
             s("concatenated targets, an empty one, blank 3, none",
               {arg({5, 3, 4}, 2), indices({1, 1, 2, 0}, {4}), indices({5, 4, 3}, {3}),
                indices({2, 0, 2}, {3})},
               [](const V& v) {
                 return F::ctc_loss(log_softmax(v[0], 2), v[1], v[2], v[3], 3, "none");
               }),
             s("one sample (T, C), sum",
               {arg({4, 3}, 3), indices({1, 2}, {2}), indices({4}, {}), indices({2}, {})},
               [](const V& v) {
                 return F::ctc_loss(log_softmax(v[0], 1), v[1], v[2], v[3], 0, "sum");
               })},
            {e("ctc_loss", "input length beyond T",
               "Expected input_lengths to have value at most 3, but got value 4",
               [] {
                 F::ctc_loss(make({3, 1, 4}, 1), indices({1}, {1, 1}), indices({4}, {1}),
                             indices({1}, {1}));
               }),
             e("ctc_loss", "blank outside the classes", "blank must be in label range",
               [] {
                 F::ctc_loss(make({3, 1, 4}, 1), indices({1}, {1, 1}), indices({3}, {1}),
                             indices({1}, {1}), 4);
               }),
             e("ctc_loss", "label out of range", "target label 7 (sample 0) is out of range",
               [] {
                 F::ctc_loss(make({3, 1, 4}, 1), indices({7}, {1, 1}), indices({3}, {1}),
                             indices({1}, {1}));
               }),
             e("ctc_loss", "padded targets too short",
               "Expected tensor to have size at least 2 at dimension 1, but got size 1",
               [] {
                 F::ctc_loss(make({3, 1, 4}, 1), indices({1}, {1, 1}), indices({3}, {1}),
                             indices({2}, {1}));
               })})
          .py("F.ctc_loss(x[0].log_softmax(2), x[1], x[2], x[3])",
              {{"concatenated targets, an empty one, blank 3, none",
                "F.ctc_loss(x[0].log_softmax(2), x[1], x[2], x[3], blank=3, reduction='none')"},
               {"one sample (T, C), sum",
                "F.ctc_loss(x[0].log_softmax(1), x[1], x[2], x[3], reduction='sum')"}})
          .ref("F.ctc_loss(make((6, 2, 5), 1).log_softmax(2), idx([1, 2, 3, 3], (2, 2)), "
               "idx([6, 5], (2,)), idx([2, 2], (2,)))",
               [] {
                 return F::ctc_loss(log_softmax(make({6, 2, 5}, 1), 2),
                                    indices({1, 2, 3, 3}, {2, 2}), indices({6, 5}, {2}),
                                    indices({2, 2}, {2}));
               },
               {}, {2.836196070491127})
          .ref("F.ctc_loss(make((5, 3, 4), 2).log_softmax(2), idx([1, 1, 2, 3], (4,)), "
               "idx([5, 4, 3], (3,)), idx([2, 0, 2], (3,)), blank=0, reduction='none')",
               [] {
                 return F::ctc_loss(log_softmax(make({5, 3, 4}, 2), 2), indices({1, 1, 2, 3}, {4}),
                                    indices({5, 4, 3}, {3}), indices({2, 0, 2}, {3}), 0, "none");
               },
               {3}, {4.989222273205631, 7.859909428248077, 3.4415973670379447})
          .ref("F.ctc_loss(make((2, 1, 3), 2).log_softmax(2), idx([1, 1, 1], (1, 3)), "
               "idx([2], (1,)), idx([3], (1,)), reduction='sum', zero_infinity=True)",
               [] {
                 return F::ctc_loss(log_softmax(make({2, 1, 3}, 2), 2), indices({1, 1, 1}, {1, 3}),
                                    indices({2}, {1}), indices({3}, {1}), 0, "sum", true);
               },
               {}, {0.0}));
}

}  // namespace minigrad::testing
