// tiny_lm: a short deterministic training run must learn the generated language: validation loss
// below half the uniform guess (log V) and below a bigram model counted here, and generated
// phrases whose adjectives agree with their nouns far more often than chance.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "gpt.h"
#include "language.h"

namespace {

using namespace tiny_lm;

/// The bigram baseline, counted independently of the example's own helper: add-0.1 smoothing.
double bigram_nll(const std::vector<std::int64_t>& train, const std::vector<std::int64_t>& val,
                  std::size_t V) {
  std::vector<std::vector<double>> count(V, std::vector<double>(V, 0.1));
  for (std::size_t i = 0; i + 1 < train.size(); ++i)
    count[static_cast<std::size_t>(train[i])][static_cast<std::size_t>(train[i + 1])] += 1;
  double nll = 0;
  for (std::size_t i = 0; i + 1 < val.size(); ++i) {
    const auto& row = count[static_cast<std::size_t>(val[i])];
    double total = 0;
    for (double c : row) total += c;
    nll -= std::log(row[static_cast<std::size_t>(val[i + 1])] / total);
  }
  return nll / static_cast<double>(val.size() - 1);
}

struct RunResult {
  std::vector<double> losses;
  double val_loss = 0;
};

RunResult train_run(GPT& model, const std::vector<std::int64_t>& train,
                    const std::vector<std::int64_t>& val, int steps) {
  TrainOptions o;
  o.steps = steps;
  o.batch = 16;
  o.eval_every = steps;
  Trainer trainer(model, o);
  RunResult r;
  trainer.run(train, val, [&](const Progress& p) {
    r.losses.push_back(p.loss);
    if (p.val_loss >= 0) r.val_loss = p.val_loss;
  });
  return r;
}

Config small_config(const Language& lang) {
  Config c;
  c.vocab_size = lang.vocab_size();
  c.block_size = 16;
  c.d_model = 32;
  c.heads = 4;
  c.layers = 2;
  c.dropout = 0.0;
  return c;
}

TEST(TinyLM, LearnsTheLanguage) {
  Language lang;
  std::vector<std::int64_t> train = lang.stream(5000, 1000), val = lang.stream(500, 2000);
  const double uniform = std::log(static_cast<double>(lang.vocab_size()));
  const double bigram = bigram_nll(train, val, static_cast<std::size_t>(lang.vocab_size()));
  mg::manual_seed(0);
  GPT model(small_config(lang));
  RunResult r = train_run(model, train, val, 300);
  std::printf("tiny_lm, 300 steps: validation loss %.3f; uniform guess %.3f, bigram %.3f\n",
              r.val_loss, uniform, bigram);
  EXPECT_LT(r.val_loss, uniform / 2);
  EXPECT_LT(r.val_loss, bigram);

  std::mt19937_64 rng(5);
  auto text = generate(model, lang.encode("."), 1500, 0.8, 5, rng);
  Language::Agreement a = lang.agreement(text);
  std::printf("generated: %lld of %lld adjective-noun pairs agree (%.3f; chance %.3f)\n",
              static_cast<long long>(a.agreeing), static_cast<long long>(a.pairs), a.rate(),
              lang.chance_agreement());
  EXPECT_GE(a.pairs, 50);
  EXPECT_GT(a.rate(), lang.chance_agreement() + 0.15);
}

TEST(TinyLM, TrainingIsDeterministic) {
  Language lang;
  std::vector<std::int64_t> train = lang.stream(500, 1000), val = lang.stream(100, 2000);
  Config c = small_config(lang);
  c.dropout = 0.1;  // dropout draws from the default generator, seeded below
  std::vector<double> first, second;
  for (auto* out : {&first, &second}) {
    mg::manual_seed(3);
    GPT model(c);
    *out = train_run(model, train, val, 15).losses;
  }
  EXPECT_EQ(first, second);
}

// A run interrupted at step 12, saved, and resumed in fresh objects continues with exactly the
// losses of an uninterrupted run (weights, AdamW state, schedule, data order and dropout RNG).
TEST(TinyLM, ResumingFromACheckpointContinuesExactly) {
  Language lang;
  std::vector<std::int64_t> train = lang.stream(500, 1000), val = lang.stream(100, 2000);
  Config c = small_config(lang);
  c.dropout = 0.1;
  TrainOptions o;
  o.steps = 30;
  o.batch = 8;
  o.warmup = 5;
  o.eval_every = 1000;
  const std::string path = ::testing::TempDir() + "tiny_lm_resume.safetensors";

  std::vector<double> straight;
  {
    mg::manual_seed(11);
    GPT model(c);
    Trainer t(model, o);
    t.run(train, val, [&](const Progress& p) { straight.push_back(p.loss); });
  }
  std::vector<double> resumed;
  {
    mg::manual_seed(11);
    GPT model(c);
    Trainer t(model, o);
    t.run(
        train, val, [&](const Progress& p) { resumed.push_back(p.loss); }, /*until=*/12);
    save_checkpoint(t, path);
  }
  {
    mg::manual_seed(999);  // a different start: everything must come from the checkpoint
    GPT model(c);
    Trainer t(model, o);
    load_checkpoint(t, path);
    EXPECT_EQ(t.step, 12);
    t.run(train, val, [&](const Progress& p) { resumed.push_back(p.loss); });
  }
  ASSERT_EQ(resumed.size(), straight.size());
  EXPECT_EQ(resumed, straight);  // bit for bit

  // A checkpoint of another model is refused with the reason.
  Config other = c;
  other.d_model = 16;
  mg::manual_seed(0);
  GPT small(other);
  Trainer t(small, o);
  try {
    load_checkpoint(t, path);
    ADD_FAILURE() << "no error";
  } catch (const mg::Error& e) {
    EXPECT_NE(std::string(e.what()).find("made for the model"), std::string::npos) << e.what();
  }
}

TEST(TinyLM, GrammarAndTokenizer) {
  Language lang;
  EXPECT_EQ(lang.decode(lang.encode("the warm soup is for lunch .")),
            "the warm soup is for lunch .");
  EXPECT_TRUE(lang.fits(lang.id("hot"), lang.id("soup")));
  EXPECT_FALSE(lang.fits(lang.id("hot"), lang.id("boots")));
  // Every generated phrase agrees: 100% of its pairs.
  Language::Agreement a = lang.agreement(lang.stream(1000, 7));
  EXPECT_GT(a.pairs, 1000);
  EXPECT_EQ(a.agreeing, a.pairs);
  Language::Agreement bad = lang.agreement(lang.encode("the boots is hot . hot boots ."));
  EXPECT_EQ(bad.pairs, 2);
  EXPECT_EQ(bad.agreeing, 0);
}

}  // namespace
