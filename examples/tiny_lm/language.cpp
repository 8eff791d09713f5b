#include "language.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

namespace tiny_lm {

namespace {

/// Each adjective and the nouns it may describe.
const std::vector<std::pair<std::string, std::vector<std::string>>> kAdjectives = {
    {"warm", {"jacket", "coat", "scarf", "soup", "tea"}},
    {"woolen", {"jacket", "coat", "scarf"}},
    {"leather", {"jacket", "boots", "bag"}},
    {"heavy", {"coat", "boots", "bag"}},
    {"hot", {"soup", "tea"}},
    {"cold", {"soup", "tea", "juice"}},
    {"fresh", {"bread", "pie", "juice"}},
    {"sweet", {"pie", "tea", "juice"}},
};
const std::vector<std::string> kNouns = {"jacket", "coat", "scarf", "boots", "bag",
                                         "soup",   "tea",  "juice", "bread", "pie"};
const std::vector<std::string> kTimes = {"winter", "lunch", "school", "work", "breakfast"};
const std::vector<std::string> kOther = {".", "the", "a", "is", "for", "and", "with"};

/// Templates: A N is an adjective and a noun it fits; "N ... A" a noun and, later, an adjective
/// that fits it; T a time word.
const std::vector<std::string> kTemplates = {
    "the A N is for T .", "a A N for T .", "the N is A .",
    "the N for T is A .", "A N and A N .", "a A N with a A N .",
};

template <typename T>
const T& pick(const std::vector<T>& v, std::mt19937_64& rng) {
  return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng)];
}

}  // namespace

Language::Language() {
  auto add = [this](const std::string& w) {
    ids_[w] = static_cast<std::int64_t>(words_.size());
    words_.push_back(w);
    return ids_[w];
  };
  for (const auto& w : kOther) add(w);
  for (const auto& [a, _] : kAdjectives) adjectives_.push_back(add(a));
  for (const auto& n : kNouns) nouns_.push_back(add(n));
  for (const auto& t : kTimes) times_.push_back(add(t));
  for (const auto& [a, nouns] : kAdjectives)
    for (const auto& n : nouns) {
      fits_[ids_.at(a)].push_back(ids_.at(n));
      fitting_adjectives_[ids_.at(n)].push_back(ids_.at(a));
    }
}

std::int64_t Language::id(const std::string& word) const {
  auto it = ids_.find(word);
  if (it == ids_.end()) throw std::invalid_argument("unknown word \"" + word + "\"");
  return it->second;
}

std::vector<std::int64_t> Language::encode(const std::string& text) const {
  std::istringstream is(text);
  std::vector<std::int64_t> ids;
  for (std::string w; is >> w;) ids.push_back(id(w));
  return ids;
}

std::string Language::decode(const std::vector<std::int64_t>& ids) const {
  std::string s;
  for (std::size_t i = 0; i < ids.size(); ++i) s += (i ? " " : "") + word(ids[i]);
  return s;
}

std::vector<std::string> Language::phrase(std::mt19937_64& rng) const {
  std::istringstream is(pick(kTemplates, rng));
  std::vector<std::string> slots;
  for (std::string w; is >> w;) slots.push_back(w);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < slots.size(); ++i) {
    const std::string& s = slots[i];
    if (s == "A" && i + 1 < slots.size() && slots[i + 1] == "N") {  // "A N": adjective first
      std::int64_t a = pick(adjectives_, rng);
      out.push_back(word(a));
      out.push_back(word(pick(fits_.at(a), rng)));
      ++i;
    } else if (s == "N") {  // a noun whose adjective comes later ("the N ... is A")
      std::int64_t n = pick(nouns_, rng);
      out.push_back(word(n));
      for (++i; slots[i] != "A"; ++i)
        out.push_back(slots[i] == "T" ? word(pick(times_, rng)) : slots[i]);
      out.push_back(word(pick(fitting_adjectives_.at(n), rng)));
    } else if (s == "T") {
      out.push_back(word(pick(times_, rng)));
    } else {
      out.push_back(s);
    }
  }
  return out;
}

std::vector<std::int64_t> Language::stream(std::size_t phrases, std::uint64_t seed) const {
  std::mt19937_64 rng(seed);
  std::vector<std::int64_t> tokens;
  for (std::size_t p = 0; p < phrases; ++p)
    for (const std::string& w : phrase(rng)) tokens.push_back(id(w));
  return tokens;
}

bool Language::is_adjective(std::int64_t id) const { return fits_.count(id) > 0; }
bool Language::is_noun(std::int64_t id) const { return fitting_adjectives_.count(id) > 0; }

bool Language::fits(std::int64_t a, std::int64_t n) const {
  auto it = fits_.find(a);
  if (it == fits_.end()) return false;
  for (std::int64_t x : it->second)
    if (x == n) return true;
  return false;
}

double Language::chance_agreement() const {
  std::size_t fitting = 0;
  for (const auto& [a, nouns] : fits_) fitting += nouns.size();
  return static_cast<double>(fitting) / static_cast<double>(adjectives_.size() * nouns_.size());
}

Language::Agreement Language::agreement(const std::vector<std::int64_t>& t) const {
  Agreement r;
  const std::int64_t is = id("is"), dot = id(".");
  for (std::size_t i = 0; i + 1 < t.size(); ++i) {
    if (is_adjective(t[i]) && is_noun(t[i + 1])) {  // "warm soup"
      ++r.pairs;
      r.agreeing += fits(t[i], t[i + 1]);
    }
    if (is_noun(t[i]) && (i == 0 || !is_adjective(t[i - 1]))) {
      // "soup is hot", "soup for lunch is hot": the first adjective after "is" in the phrase.
      for (std::size_t j = i + 1; j + 1 < t.size() && t[j] != dot; ++j)
        if (t[j] == is && is_adjective(t[j + 1])) {
          ++r.pairs;
          r.agreeing += fits(t[j + 1], t[i]);
          break;
        }
    }
  }
  return r;
}

double bigram_loss(const std::vector<std::int64_t>& train,
                   const std::vector<std::int64_t>& validation, std::int64_t vocab_size,
                   double alpha) {
  const auto V = static_cast<std::size_t>(vocab_size);
  std::vector<double> counts(V * V, alpha), totals(V, alpha * static_cast<double>(V));
  for (std::size_t i = 0; i + 1 < train.size(); ++i) {
    counts[static_cast<std::size_t>(train[i]) * V + static_cast<std::size_t>(train[i + 1])] += 1;
    totals[static_cast<std::size_t>(train[i])] += 1;
  }
  double nll = 0;
  for (std::size_t i = 0; i + 1 < validation.size(); ++i) {
    auto a = static_cast<std::size_t>(validation[i]),
         b = static_cast<std::size_t>(validation[i + 1]);
    nll -= std::log(counts[a * V + b] / totals[a]);
  }
  return nll / static_cast<double>(validation.size() - 1);
}

}  // namespace tiny_lm
