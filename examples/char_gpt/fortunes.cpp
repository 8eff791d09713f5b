#include "fortunes.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <minigrad/error.h>

namespace char_gpt {

namespace fs = std::filesystem;

namespace {
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
}  // namespace

Corpus read_fortunes(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw minigrad::Error("[char_gpt] " + dir +
                          " does not exist: it is the text of Debian's fortunes package; install "
                          "it with: " +
                          kInstallLine);
  std::vector<fs::path> paths;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_symlink() || !entry.is_regular_file() || ends_with(name, ".dat") ||
        ends_with(name, ".u8") || name.starts_with("."))
      continue;
    paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  Corpus corpus;
  for (const fs::path& path : paths) {
    std::ifstream in(path, std::ios::binary);
    if (!in) continue;
    corpus.files.push_back(path.filename().string());
    std::string fortune, line;
    auto finish = [&] {
      if (fortune.find_first_not_of(" \t\n") != std::string::npos)
        corpus.fortunes.push_back(fortune);
      fortune.clear();
    };
    while (std::getline(in, line)) {
      if (line == "%") {
        finish();
        continue;
      }
      for (char c : line) {
        if (Vocabulary::contains(c))
          fortune += c;
        else
          ++corpus.dropped_chars;
      }
      fortune += '\n';
    }
    finish();
  }
  if (corpus.fortunes.empty())
    throw minigrad::Error(
        "[char_gpt] no fortune files in " + dir +
        ": they come with Debian's fortunes package; install it with: " + kInstallLine);
  return corpus;
}

Split split_fortunes(const Corpus& corpus, int every) {
  MG_CHECK(every >= 2, "char_gpt", "the validation share must be 1 in every >= 2 fortunes, got ",
           every);
  Split s;
  for (std::size_t i = 0; i < corpus.fortunes.size(); ++i) {
    const bool validation =
        i % static_cast<std::size_t>(every) == static_cast<std::size_t>(every - 1);
    (validation ? s.validation : s.train) += corpus.fortunes[i] + "%\n";
    ++(validation ? s.validation_fortunes : s.train_fortunes);
  }
  return s;
}

bool Vocabulary::contains(char c) { return c == '\t' || c == '\n' || (c >= ' ' && c <= '~'); }

std::int64_t Vocabulary::id(char c) {
  if (c == '\t') return 0;
  if (c == '\n') return 1;
  MG_CHECK(c >= ' ' && c <= '~', "char_gpt", "character code ", static_cast<int>(c),
           " is not in the vocabulary (tab, newline and printable ASCII)");
  return c - ' ' + 2;
}

char Vocabulary::character(std::int64_t id) {
  MG_CHECK(id >= 0 && id < kSize, "char_gpt", "token id ", id, " is outside [0, ", kSize, ")");
  if (id == 0) return '\t';
  if (id == 1) return '\n';
  return static_cast<char>(' ' + id - 2);
}

std::vector<std::int64_t> Vocabulary::encode(const std::string& text) {
  std::vector<std::int64_t> ids;
  ids.reserve(text.size());
  for (char c : text) ids.push_back(id(c));
  return ids;
}

std::string Vocabulary::decode(const std::vector<std::int64_t>& ids) {
  std::string s;
  s.reserve(ids.size());
  for (std::int64_t i : ids) s += character(i);
  return s;
}

}  // namespace char_gpt
