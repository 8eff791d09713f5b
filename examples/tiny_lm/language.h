#pragma once
// The tiny language tiny_lm learns: a grammar of short phrases ("the warm soup is for lunch .")
// whose adjectives agree with the nouns they describe. Some adjectives fit only some nouns, and in
// "the soup is hot ." the adjective comes three words after its noun, so predicting it well needs
// attention back to the noun, not just the previous word.
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace tiny_lm {

class Language {
 public:
  Language();

  /// Word-level tokenizer: every word of the grammar has an id; "." ends a phrase.
  std::int64_t id(const std::string& word) const;
  const std::string& word(std::int64_t id) const { return words_[static_cast<std::size_t>(id)]; }
  std::int64_t vocab_size() const { return static_cast<std::int64_t>(words_.size()); }
  std::vector<std::int64_t> encode(const std::string& text) const;
  std::string decode(const std::vector<std::int64_t>& ids) const;

  /// One phrase from the grammar, as words (ending with ".").
  std::vector<std::string> phrase(std::mt19937_64& rng) const;
  /// `phrases` phrases drawn with this seed, as one token stream.
  std::vector<std::int64_t> stream(std::size_t phrases, std::uint64_t seed) const;

  bool is_adjective(std::int64_t id) const;
  bool is_noun(std::int64_t id) const;
  /// Whether adjective `a` may describe noun `n`.
  bool fits(std::int64_t a, std::int64_t n) const;
  /// The share of (adjective, noun) pairs that agree: what a model ignoring agreement reaches.
  double chance_agreement() const;

  /// Adjective-noun pairs in a token stream ("warm soup", and "soup is hot" / "soup for lunch is
  /// hot"): how many there are and how many agree.
  struct Agreement {
    std::int64_t pairs = 0, agreeing = 0;
    double rate() const { return pairs ? static_cast<double>(agreeing) / pairs : 0.0; }
  };
  Agreement agreement(const std::vector<std::int64_t>& tokens) const;

 private:
  std::vector<std::string> words_;
  std::map<std::string, std::int64_t> ids_;
  std::vector<std::int64_t> adjectives_, nouns_, times_;
  std::map<std::int64_t, std::vector<std::int64_t>> fits_;                // adjective -> nouns
  std::map<std::int64_t, std::vector<std::int64_t>> fitting_adjectives_;  // noun -> adjectives
};

/// Cross-entropy (nats per token) of an add-alpha smoothed bigram model counted on `train`,
/// measured on every next-token prediction of `validation`: the baseline a model must beat.
double bigram_loss(const std::vector<std::int64_t>& train,
                   const std::vector<std::int64_t>& validation, std::int64_t vocab_size,
                   double alpha = 0.1);

}  // namespace tiny_lm
