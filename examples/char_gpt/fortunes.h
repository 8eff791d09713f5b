#pragma once
// The English text char_gpt learns: the fortune cookies of Debian's `fortunes` package
// (/usr/share/games/fortunes), read as characters.
//
// A fortune file holds fortunes separated by lines of a single "%". Every fortune keeps its text
// and is followed by "%\n" in the training text, so the model learns where a fortune ends and a
// sample can be cut into fortunes. The characters are a fixed vocabulary: tab, newline and the 95
// printable ASCII characters; anything else (a few UTF-8 letters, the backspaces of overstruck
// text, bells) is dropped when reading and counted.
#include <cstdint>
#include <string>
#include <vector>

namespace char_gpt {

/// Where Debian's fortunes package puts its text files, and the line that installs it.
inline constexpr const char* kFortuneDir = "/usr/share/games/fortunes";
inline constexpr const char* kInstallLine = "sudo apt-get install -y fortunes";

struct Corpus {
  std::vector<std::string> fortunes;  // in file-name order, then file order; each ends in '\n'
  std::vector<std::string> files;     // the file names read
  std::int64_t dropped_chars = 0;     // bytes outside the vocabulary
};

/// Reads every fortune file of dir: regular files only (the .u8 symlinks duplicate them), not the
/// .dat indexes, in name order. Throws minigrad::Error naming the directory and the apt line that
/// installs the package when dir does not exist or holds no fortune.
Corpus read_fortunes(const std::string& dir = kFortuneDir);

/// The text of fortunes i with i % every == every - 1 (validation: 1 in `every`, spread over
/// every file) or all the others (train), each followed by "%\n". Deterministic.
struct Split {
  std::string train, validation;
  std::size_t train_fortunes = 0, validation_fortunes = 0;
};
Split split_fortunes(const Corpus& corpus, int every = 10);

/// The fixed character vocabulary: id 0 is '\t', 1 is '\n', 2.. are ' ' to '~'.
struct Vocabulary {
  static constexpr std::int64_t kSize = 97;
  /// Whether c is in the vocabulary.
  static bool contains(char c);
  static std::int64_t id(char c);  // throws minigrad::Error for a character outside it
  static char character(std::int64_t id);
  static std::vector<std::int64_t> encode(const std::string& text);
  static std::string decode(const std::vector<std::int64_t>& ids);
};

}  // namespace char_gpt
