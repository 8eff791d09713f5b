// emergent: nobody tells the adjective where to look.
//
//   emergent [--seed 0] [--steps 100] [--lr 0.05] [--dim 8] [--value-dim 3]
//            [--picture emergent_attention.png]
//
// The main example trains W_q and W_k towards a table written by hand. Here the table is not
// given. A small generated language has adjectives that fit only some nouns ("woolen" fits jacket,
// coat and scarf; "hot" fits soup and tea). Every phrase holds one noun its adjective fits (the
// noun it describes) and distractors: a noun it does not fit, and words with nothing to describe
// ("the", "for", "winter"):
//
//   the woolen coat with the soup        -> woolen describes coat
//   bread for lunch with fresh pie       -> fresh describes pie
//
// The task: from the adjective's attention output alone, predict the noun it describes. The
// words are one-hot features without positions, so the only way to succeed is for W_q and W_k to
// learn which nouns each adjective fits (so that it attends to them) and for W_v to carry the
// noun's identity to the readout. The lesson's pattern, adjective attends to noun, has to emerge.
#include <cairo.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <minigrad/data.h>
#include <minigrad/minigrad.h>

namespace mg = minigrad;
namespace nn = minigrad::nn;

namespace {

/// The knobs (main, at the bottom, reads them from the command line).
struct EmergentOptions {
  std::uint64_t seed = 0;
  int steps = 100;
  double lr = 0.05;
  std::int64_t dim = 8;                            // d_k
  std::int64_t value_dim = 3;                      // d_v
  std::string picture = "emergent_attention.png";  // adjectives' attention in held-out phrases
};

// ---------------------------------------------------------------- the language

/// Each adjective and the nouns it fits.
const std::vector<std::pair<std::string, std::vector<std::string>>> kAdjectives = {
    {"warm", {"jacket", "coat", "scarf", "soup", "tea"}},
    {"woolen", {"jacket", "coat", "scarf"}},
    {"leather", {"jacket", "boots"}},
    {"hot", {"soup", "tea"}},
    {"cold", {"soup", "tea", "pie"}},
    {"fresh", {"bread", "pie", "tea"}},
    {"sweet", {"tea", "pie", "bread"}},
};
/// The nouns an adjective can describe: the classes the readout predicts.
const std::vector<std::string> kNouns = {"jacket", "coat", "scarf", "boots",
                                         "soup",   "tea",  "bread", "pie"};
/// Nouns no adjective describes here, and words with nothing to look for.
const std::vector<std::string> kTimes = {"winter", "lunch", "school", "work"};
const std::vector<std::string> kOther = {"the", "a", "for", "with", "and"};
const std::string kPad = "<pad>";

/// Phrase templates: A is an adjective and N the noun it describes; B and M a second adjective
/// and its noun (B does not fit N and A does not fit M); D a noun A does not fit; T a time word.
/// With two adjectives in a phrase, uniform attention would give both the same output: each has
/// to look at its own noun.
const std::vector<std::string> kTemplates = {
    "A N for T",       "the A N for T",      "a A N with the D",
    "the D and a A N", "D for T with A N",   "A N and D for T",
    "A N and B M",     "the A N with a B M", "A N for T and B M",
};
constexpr std::int64_t kMaxLen = 7;

/// One prediction: a phrase, one of its adjectives, and the noun that adjective describes.
struct Phrase {
  std::vector<std::int64_t> tokens;  // padded to kMaxLen
  std::int64_t length = 0;
  std::int64_t adjective_pos = 0, noun_pos = 0;
  std::int64_t noun_class = 0;  // index into kNouns
  bool two_adjectives = false;
};

struct Corpus {
  std::vector<std::string> vocab;
  std::map<std::string, std::int64_t> id;
  std::size_t phrases = 0;
  std::vector<Phrase> train, held_out;

  std::string text(const Phrase& p) const {
    std::string s;
    for (std::int64_t i = 0; i < p.length; ++i)
      s += (i ? " " : "") + vocab[static_cast<std::size_t>(p.tokens[static_cast<std::size_t>(i)])];
    return s;
  }
  const std::string& word(const Phrase& p, std::int64_t i) const {
    return vocab[static_cast<std::size_t>(p.tokens[static_cast<std::size_t>(i)])];
  }
};

bool fits(const std::vector<std::string>& nouns, const std::string& n) {
  return std::find(nouns.begin(), nouns.end(), n) != nouns.end();
}

const std::vector<std::string>& nouns_of(const std::string& adjective) {
  for (const auto& [a, nouns] : kAdjectives)
    if (a == adjective) return nouns;
  throw std::logic_error("unknown adjective " + adjective);
}

std::vector<std::string> split_words(const std::string& s) {
  std::istringstream is(s);
  std::vector<std::string> words;
  for (std::string w; is >> w;) words.push_back(w);
  return words;
}

/// Every phrase the templates make, shuffled with a fixed seed and split 80/20 into training and
/// held-out phrases: a held-out phrase is a combination of adjectives, nouns, distractors and
/// template never seen in training. A phrase with two adjectives gives two predictions, both on
/// the same side of the split.
Corpus make_corpus() {
  Corpus c;
  auto add_word = [&c](const std::string& w) {
    if (!c.id.count(w)) {
      c.id[w] = static_cast<std::int64_t>(c.vocab.size());
      c.vocab.push_back(w);
    }
  };
  add_word(kPad);
  for (const auto& [a, _] : kAdjectives) add_word(a);
  for (const auto& n : kNouns) add_word(n);
  for (const auto& t : kTimes) add_word(t);
  for (const auto& o : kOther) add_word(o);

  std::vector<std::pair<std::string, std::string>> pairs;  // (adjective, a noun it fits)
  for (const auto& [a, nouns] : kAdjectives)
    for (const auto& n : nouns) pairs.emplace_back(a, n);
  auto noun_class = [](const std::string& n) {
    return static_cast<std::int64_t>(std::find(kNouns.begin(), kNouns.end(), n) - kNouns.begin());
  };

  std::vector<std::vector<Phrase>> all;  // the predictions of each phrase
  for (const std::string& tmpl : kTemplates) {
    std::vector<std::string> slots = split_words(tmpl);
    bool has_b = fits(slots, "B"), has_d = fits(slots, "D"), has_t = fits(slots, "T");
    for (const auto& [a, n] : pairs) {
      std::vector<std::pair<std::string, std::string>> seconds = {{"", ""}};
      if (has_b) {
        seconds.clear();
        for (const auto& [b, m] : pairs)
          if (b != a && !fits(nouns_of(a), m) && !fits(nouns_of(b), n)) seconds.emplace_back(b, m);
      }
      std::vector<std::string> distractors = {""};
      if (has_d) {
        distractors.clear();
        for (const auto& d : kNouns)
          if (!fits(nouns_of(a), d)) distractors.push_back(d);
      }
      std::vector<std::string> times = has_t ? kTimes : std::vector<std::string>{""};
      for (const auto& [b, m] : seconds)
        for (const auto& d : distractors)
          for (const auto& t : times) {
            Phrase first, second;
            std::vector<std::int64_t> tokens;
            for (const std::string& slot : slots) {
              auto pos = static_cast<std::int64_t>(tokens.size());
              if (slot == "A") first.adjective_pos = pos;
              if (slot == "N") first.noun_pos = pos;
              if (slot == "B") second.adjective_pos = pos;
              if (slot == "M") second.noun_pos = pos;
              const std::string& w = slot == "A"   ? a
                                     : slot == "N" ? n
                                     : slot == "B" ? b
                                     : slot == "M" ? m
                                     : slot == "D" ? d
                                     : slot == "T" ? t
                                                   : slot;
              tokens.push_back(c.id.at(w));
            }
            std::int64_t length = static_cast<std::int64_t>(tokens.size());
            tokens.resize(kMaxLen, c.id.at(kPad));
            first.tokens = second.tokens = tokens;
            first.length = second.length = length;
            first.two_adjectives = second.two_adjectives = has_b;
            first.noun_class = noun_class(n);
            std::vector<Phrase> predictions = {first};
            if (has_b) {
              second.noun_class = noun_class(m);
              predictions.push_back(second);
            }
            all.push_back(std::move(predictions));
          }
    }
  }
  // The split is the same for every --seed (which only changes the initial weights).
  std::mt19937_64 rng(2024);
  std::shuffle(all.begin(), all.end(), rng);
  c.phrases = all.size();
  std::size_t n_train = all.size() * 4 / 5;
  for (std::size_t i = 0; i < all.size(); ++i)
    for (Phrase& p : all[i]) (i < n_train ? c.train : c.held_out).push_back(std::move(p));
  return c;
}

/// A set of phrases as tensors.
struct Batch {
  mg::Tensor X;        // [B, T, V] one-hot word features
  mg::Tensor pad;      // [B, 1, T] true where the key is padding
  mg::Tensor rows;     // [B] the adjective's row in the flattened [B * T] positions
  mg::Tensor targets;  // [B] the described noun's class
};

Batch make_batch(const std::vector<Phrase>& phrases, std::int64_t vocab_size) {
  const auto B = static_cast<std::int64_t>(phrases.size());
  std::vector<double> tokens, pad, rows, targets;
  for (std::int64_t b = 0; b < B; ++b) {
    const Phrase& p = phrases[static_cast<std::size_t>(b)];
    for (std::int64_t t = 0; t < kMaxLen; ++t) {
      tokens.push_back(static_cast<double>(p.tokens[static_cast<std::size_t>(t)]));
      pad.push_back(t >= p.length ? 1 : 0);
    }
    rows.push_back(static_cast<double>(b * kMaxLen + p.adjective_pos));
    targets.push_back(static_cast<double>(p.noun_class));
  }
  Batch batch;
  mg::Tensor ids = mg::tensor(tokens, {B * kMaxLen}, mg::kInt64);
  batch.X = mg::eye(vocab_size).index_select(0, ids).reshape({B, kMaxLen, vocab_size});
  batch.pad = mg::tensor(pad, {B, 1, kMaxLen}, mg::kBool);
  batch.rows = mg::tensor(rows, {B}, mg::kInt64);
  batch.targets = mg::tensor(targets, {B}, mg::kInt64);
  return batch;
}

/// The phrases as a dataset (torch.utils.data's map-style Dataset): the batch of some indices is
/// those phrases as one Batch of tensors.
struct PhraseDataset {
  const std::vector<Phrase>* phrases;
  std::int64_t vocab_size;
  Batch get_batch(const std::vector<std::size_t>& indices) const {
    std::vector<Phrase> chosen;
    for (std::size_t i : indices) chosen.push_back((*phrases)[i]);
    return make_batch(chosen, vocab_size);
  }
  std::optional<std::size_t> size() const { return phrases->size(); }
};

/// Every training phrase in one batch, in order, each epoch (full-batch training, as the lesson).
std::unique_ptr<mg::data::DataLoader<PhraseDataset>> full_batches(
    const std::vector<Phrase>& phrases, std::int64_t vocab_size) {
  return mg::data::make_data_loader<mg::data::samplers::SequentialSampler>(
      PhraseDataset{&phrases, vocab_size}, mg::data::DataLoaderOptions(phrases.size()));
}

// ---------------------------------------------------------------- the model

/// One attention layer, as in the lesson but with values and the 1/sqrt(d_k) scale, and a readout
/// that turns the adjective's output into a guess of its noun.
struct EmergentAttention : nn::Module {
  nn::Linear W_q, W_k, W_v, readout;
  std::int64_t d_k, d_v;
  EmergentAttention(std::int64_t vocab_size, std::int64_t dim, std::int64_t value_dim,
                    std::int64_t classes)
      : nn::Module("EmergentAttention"),
        W_q(vocab_size, dim, /*bias=*/false),
        W_k(vocab_size, dim, /*bias=*/false),
        W_v(vocab_size, value_dim, /*bias=*/false),
        readout(value_dim, classes),
        d_k(dim),
        d_v(value_dim) {
    register_module("W_q", W_q);
    register_module("W_k", W_k);
    register_module("W_v", W_v);
    register_module("readout", readout);
  }

  /// The attention weights [B, T, T]: softmax(q k^T / sqrt(d_k)), padding keys masked out.
  mg::Tensor weights(const Batch& batch) const {
    mg::Tensor scores =
        mg::matmul(W_q(batch.X), W_k(batch.X).transpose(-2, -1)) / std::sqrt(double(d_k));
    scores = mg::masked_fill(scores, batch.pad, -std::numeric_limits<double>::infinity());
    return mg::softmax(scores, -1);
  }

  /// The readout's logits [B, classes] from the adjectives' attention outputs.
  mg::Tensor logits(const Batch& batch, const mg::Tensor& w) const {
    mg::Tensor out = mg::matmul(w, W_v(batch.X));  // [B, T, d]: every word's mix of values
    mg::Tensor adjectives = out.reshape({-1, d_v}).index_select(0, batch.rows);  // [B, d]
    return readout(adjectives);
  }
};

struct Report {
  double accuracy = 0;
  double accuracy_two = 0;  // over the predictions in phrases with two adjectives
  double on_noun = 0, on_distractors = 0, on_other = 0;  // the adjective's mean attention
};

/// Accuracy and where the adjectives look, over a set of phrases.
Report evaluate(const EmergentAttention& model, const Batch& batch,
                const std::vector<Phrase>& phrases, const Corpus& c) {
  mg::NoGradGuard no_grad;
  mg::Tensor w = model.weights(batch);
  mg::Tensor predicted = mg::argmax(model.logits(batch, w), 1);
  auto pred = predicted.to_vector<std::int64_t>();
  auto wv = w.to_vector<double>();
  Report r;
  double two = 0;
  for (std::size_t b = 0; b < phrases.size(); ++b) {
    const Phrase& p = phrases[b];
    r.accuracy += pred[b] == p.noun_class;
    if (p.two_adjectives) {
      r.accuracy_two += pred[b] == p.noun_class;
      two += 1;
    }
    for (std::int64_t j = 0; j < p.length; ++j) {
      double a = wv[(b * kMaxLen + static_cast<std::size_t>(p.adjective_pos)) * kMaxLen +
                    static_cast<std::size_t>(j)];
      const std::string& word =
          c.vocab[static_cast<std::size_t>(p.tokens[static_cast<std::size_t>(j)])];
      if (j == p.noun_pos)
        r.on_noun += a;
      else if (fits(kNouns, word))
        r.on_distractors += a;
      else
        r.on_other += a;
    }
  }
  double n = static_cast<double>(phrases.size());
  r.accuracy /= n;
  r.accuracy_two /= two;
  r.on_noun /= n;
  r.on_distractors /= n;
  r.on_other /= n;
  return r;
}

void print_report(const char* title, const Report& train, const Report& held_out) {
  std::printf("%s\n", title);
  std::printf(
      "  accuracy: train %.3f, held-out %.3f, held-out with two adjectives %.3f (chance %.3f)\n",
      train.accuracy, held_out.accuracy, held_out.accuracy_two,
      1.0 / static_cast<double>(kNouns.size()));
  std::printf(
      "  the adjective's attention (held-out mean): its noun %.2f, other nouns %.2f, other "
      "words %.2f\n",
      held_out.on_noun, held_out.on_distractors, held_out.on_other);
}

// ---------------------------------------------------------------- output

/// Draws the adjective's attention over the words of each phrase, one phrase per row.
bool write_picture(const std::string& path, const std::vector<std::string>& texts,
                   const std::vector<std::vector<std::string>>& words,
                   const std::vector<std::vector<double>>& weights,
                   const std::vector<std::int64_t>& adjective_pos) {
  const double cell_w = 105, cell_h = 46, left = 30, top = 80;
  const int width = static_cast<int>(left * 2 + cell_w * kMaxLen);
  const int height = static_cast<int>(top + cell_h * 1.6 * static_cast<double>(texts.size()) + 40);
  cairo_surface_t* surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height);
  cairo_t* cr = cairo_create(surface);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  cairo_set_source_rgb(cr, 0, 0, 0);
  cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
  cairo_set_font_size(cr, 18);
  cairo_move_to(cr, left, 32);
  cairo_show_text(cr, "Where the adjective looks, after training (held-out phrases)");
  cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, 13);
  cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
  cairo_move_to(cr, left, 56);
  cairo_show_text(cr, "each cell: the attention weight from the adjective (boxed) to that word");
  for (std::size_t r = 0; r < texts.size(); ++r) {
    double y = top + static_cast<double>(r) * cell_h * 1.6;
    for (std::size_t j = 0; j < words[r].size(); ++j) {
      double x = left + static_cast<double>(j) * cell_w;
      double a = std::min(1.0, weights[r][j]);
      cairo_set_source_rgb(cr, 1 - 0.85 * a, 1 - 0.55 * a, 1 - 0.2 * a);
      cairo_rectangle(cr, x, y, cell_w - 4, cell_h);
      cairo_fill(cr);
      if (static_cast<std::int64_t>(j) == adjective_pos[r]) {
        cairo_set_source_rgb(cr, 0.8, 0.2, 0.1);
        cairo_set_line_width(cr, 3);
        cairo_rectangle(cr, x + 1.5, y + 1.5, cell_w - 7, cell_h - 3);
        cairo_stroke(cr);
      }
      double ink = a > 0.6 ? 1 : 0;
      cairo_set_source_rgb(cr, ink, ink, ink);
      cairo_set_font_size(cr, 15);
      cairo_text_extents_t ext;
      cairo_text_extents(cr, words[r][j].c_str(), &ext);
      cairo_move_to(cr, x + (cell_w - 4 - ext.width) / 2, y + 20);
      cairo_show_text(cr, words[r][j].c_str());
      char num[16];
      std::snprintf(num, sizeof num, "%.2f", weights[r][j]);
      cairo_set_font_size(cr, 12);
      cairo_text_extents(cr, num, &ext);
      cairo_move_to(cr, x + (cell_w - 4 - ext.width) / 2, y + 38);
      cairo_show_text(cr, num);
    }
  }
  cairo_status_t status = cairo_surface_write_to_png(surface, path.c_str());
  cairo_destroy(cr);
  cairo_surface_destroy(surface);
  return status == CAIRO_STATUS_SUCCESS;
}

/// Trains W_q, W_k, W_v and a readout; returns 0 when the held-out accuracy is at least 0.9.
int run_emergent(const EmergentOptions& options) {
  Corpus c = make_corpus();
  const auto V = static_cast<std::int64_t>(c.vocab.size());
  std::printf("A generated language: %zu adjectives, each fitting only some of %zu nouns.\n",
              kAdjectives.size(), kNouns.size());
  std::printf(
      "%zu phrases, %zu predictions (%zu for training, %zu held out), %lld words, for example:\n",
      c.phrases, c.train.size() + c.held_out.size(), c.train.size(), c.held_out.size(),
      static_cast<long long>(V - 1));
  for (std::size_t i = 0; i < 5; ++i) {
    const Phrase& p = c.train[i];
    std::printf("  %-34s %s describes %s\n", c.text(p).c_str(), c.word(p, p.adjective_pos).c_str(),
                kNouns[static_cast<std::size_t>(p.noun_class)].c_str());
  }
  std::printf("Task: predict the described noun from the adjective's attention output alone.\n\n");

  mg::manual_seed(options.seed);
  EmergentAttention model(V, options.dim, options.value_dim,
                          static_cast<std::int64_t>(kNouns.size()));
  std::cout << model << "\n\n";
  Batch train = make_batch(c.train, V), held_out = make_batch(c.held_out, V);
  print_report("before training:", evaluate(model, train, c.train, c),
               evaluate(model, held_out, c.held_out, c));

  mg::optim::Adam opt(model.parameters(), mg::optim::AdamOptions(options.lr));
  auto loader = full_batches(c.train, V);
  const bool tty = ::isatty(STDOUT_FILENO) == 1;
  for (int step = 0; step <= options.steps; ++step) {
    auto epoch = loader->begin();  // one batch per epoch: an epoch is a step
    const Batch& batch = *epoch;
    mg::Tensor loss =
        nn::functional::cross_entropy(model.logits(batch, model.weights(batch)), batch.targets);
    if (step % 10 == 0 || step == options.steps) {
      // On a terminal one line redrawn; into a file or a pipe, plain lines.
      std::printf(tty ? "\rstep %4d  loss %.4f" : "step %4d  loss %.4f\n", step,
                  loss.item<double>());
      std::fflush(stdout);
    }
    if (step == options.steps) break;
    opt.zero_grad();
    loss.backward();
    opt.step();
  }
  std::printf(tty ? "\n\n" : "\n");
  Report train_r = evaluate(model, train, c.train, c);
  Report held_r = evaluate(model, held_out, c.held_out, c);
  print_report("after training:", train_r, held_r);

  // A few held-out phrases: the adjective's attention row, and the readout's guess.
  std::printf("\nthe adjective's attention in held-out phrases:\n");
  std::vector<std::string> texts;
  std::vector<std::vector<std::string>> words;
  std::vector<std::vector<double>> rows;
  std::vector<std::int64_t> adjective_pos;
  {
    mg::NoGradGuard no_grad;
    mg::Tensor w = model.weights(held_out);
    auto pred = mg::argmax(model.logits(held_out, w), 1).to_vector<std::int64_t>();
    auto wv = w.to_vector<double>();
    // The first three held-out predictions with one adjective, and four with two.
    std::vector<std::size_t> shown;
    for (std::size_t b = 0, one = 0, two = 0; b < c.held_out.size(); ++b) {
      std::size_t& count = c.held_out[b].two_adjectives ? two : one;
      if (count < (c.held_out[b].two_adjectives ? 4u : 3u)) {
        shown.push_back(b);
        ++count;
      }
    }
    for (std::size_t b : shown) {
      const Phrase& p = c.held_out[b];
      std::printf("  %-8s in %-32s ->", c.word(p, p.adjective_pos).c_str(), c.text(p).c_str());
      std::vector<std::string> ws;
      std::vector<double> row;
      for (std::int64_t j = 0; j < p.length; ++j) {
        const std::string& word =
            c.vocab[static_cast<std::size_t>(p.tokens[static_cast<std::size_t>(j)])];
        double a = wv[(b * kMaxLen + static_cast<std::size_t>(p.adjective_pos)) * kMaxLen +
                      static_cast<std::size_t>(j)];
        std::printf(" %s %.2f", word.c_str(), a);
        ws.push_back(word);
        row.push_back(a);
      }
      std::printf("   guess: %s\n", kNouns[static_cast<std::size_t>(pred[b])].c_str());
      texts.push_back(c.text(p));
      words.push_back(ws);
      rows.push_back(row);
      adjective_pos.push_back(p.adjective_pos);
    }
  }

  // What W_q and W_k learned: score(adjective a, word w) = (W_q x_a) . (W_k x_w) / sqrt(d_k).
  mg::Tensor M =
      (mg::matmul(model.W_q->weight.t(), model.W_k->weight) / std::sqrt(double(options.dim)))
          .detach();
  auto m = M.to_vector<double>();
  std::printf(
      "\nW_q^T W_k / sqrt(d_k), adjective rows and noun columns (+ marks a noun it fits):\n%9s",
      "");
  for (const auto& n : kNouns) std::printf("%8s", n.c_str());
  std::printf("\n");
  for (const auto& [adj, nouns] : kAdjectives) {
    std::printf("%9s", adj.c_str());
    for (const auto& n : kNouns) {
      double v = m[static_cast<std::size_t>(c.id.at(adj) * V + c.id.at(n))];
      std::printf("%7.1f%s", v, fits(nouns, n) ? "+" : " ");
    }
    std::printf("\n");
  }
  std::printf(
      "Each adjective's row scores the nouns it fits above the others: the pattern that\n"
      "the main example was given as a target emerged here from the prediction task.\n");

  // The control: the same model with W_q = W_k = 0, so every word attends evenly to the phrase
  // and only W_v and the readout learn. Whatever it reaches is what attention did not have to do.
  mg::manual_seed(options.seed);
  EmergentAttention uniform(V, options.dim, options.value_dim,
                            static_cast<std::int64_t>(kNouns.size()));
  nn::init::zeros_(uniform.W_q->weight);
  nn::init::zeros_(uniform.W_k->weight);
  std::vector<mg::Tensor> trained = uniform.W_v->parameters();
  for (const mg::Tensor& p : uniform.readout->parameters()) trained.push_back(p);
  mg::optim::Adam control_opt(trained, mg::optim::AdamOptions(options.lr));
  for (int step = 0; step < options.steps; ++step) {
    auto epoch = loader->begin();
    const Batch& batch = *epoch;
    mg::Tensor loss =
        nn::functional::cross_entropy(uniform.logits(batch, uniform.weights(batch)), batch.targets);
    control_opt.zero_grad();
    loss.backward();
    control_opt.step();
  }
  Report control = evaluate(uniform, held_out, c.held_out, c);
  std::printf(
      "\nthe control, attention frozen uniform (W_q = W_k = 0), same training: held-out "
      "accuracy %.3f, with two adjectives %.3f\n",
      control.accuracy, control.accuracy_two);

  bool ok = held_r.accuracy >= 0.9;
  std::printf("\n%s: held-out accuracy %.3f after %d steps (adam, lr %g, seed %llu, d_k %lld)\n",
              ok ? "learned" : "NOT learned", held_r.accuracy, options.steps, options.lr,
              static_cast<unsigned long long>(options.seed), static_cast<long long>(options.dim));
  if (!options.picture.empty()) {
    if (!write_picture(options.picture, texts, words, rows, adjective_pos)) {
      std::fprintf(stderr, "could not write %s\n", options.picture.c_str());
      return 2;
    }
    std::printf("picture: %s\n", options.picture.c_str());
  }
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "No target table: W_q, W_k, W_v learn where adjectives look from a prediction task over a "
      "generated corpus."};
  EmergentOptions o;
  app.add_option("--seed", o.seed, "random seed for the initial weights")->capture_default_str();
  app.add_option("--steps", o.steps, "training steps (full batches)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--lr", o.lr, "Adam's learning rate")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--dim", o.dim, "d_k")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--value-dim", o.value_dim, "d_v")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--picture", o.picture, "PNG of the adjectives' attention ('' for none)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  return run_emergent(o);
}
