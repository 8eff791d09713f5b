#pragma once
// Hand-made files in PyTorch's torch.save format for the tests of its reader (tests/io/test_io.cpp
// and the documented errors of tests/core/test_errors.cpp): a zip archive of stored entries
// written from the zip specification, and protocol 2 pickles written opcode by opcode.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace minigrad_test {

// Little-endian bytes.
inline std::string le(std::uint64_t v, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  return s;
}

// A zip archive of stored entries written by hand from the zip specification (APPNOTE 6.3):
// local headers, the central directory and its end record (CRC-32 computed bit by bit). With
// zip64, as a writer does for entries past 4 GiB: every size and offset in the central directory
// is 0xFFFFFFFF with the values in a zip64 extra field, and the zip64 end records come first.
inline std::string zip_of(const std::vector<std::pair<std::string, std::string>>& entries,
                          bool zip64 = false) {
  auto crc_of = [](const std::string& s) {
    std::uint32_t c = 0xFFFFFFFFu;
    for (unsigned char b : s) {
      c ^= b;
      for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return ~c;
  };
  const std::uint64_t big = 0xFFFFFFFFu;
  std::string out, central;
  for (const auto& [name, data] : entries) {
    const std::string crc = le(crc_of(data), 4);
    const std::string sizes =
        zip64 ? le(big, 4) + le(big, 4) : le(data.size(), 4) + le(data.size(), 4);
    const std::string extra =
        zip64 ? le(1, 2) + le(24, 2) + le(data.size(), 8) + le(data.size(), 8) + le(out.size(), 8)
              : "";
    const std::string head = le(20, 2) + le(0, 2) + le(0, 2) + le(0, 4) + crc + sizes;
    central += le(0x02014b50, 4) + le(20, 2) + head + le(name.size(), 2) + le(extra.size(), 2) +
               le(0, 2) + le(0, 2) + le(0, 2) + le(0, 4) + le(zip64 ? big : out.size(), 4) + name +
               extra;
    out += le(0x04034b50, 4) + le(20, 2) + le(0, 2) + le(0, 2) + le(0, 4) + crc +
           le(data.size(), 4) + le(data.size(), 4) + le(name.size(), 2) + le(0, 2) + name + data;
  }
  const std::size_t cd = out.size();
  std::string tail;
  if (zip64) {
    const std::size_t end64 = cd + central.size();
    tail = le(0x06064b50, 4) + le(44, 8) + le(45, 2) + le(45, 2) + le(0, 4) + le(0, 4) +
           le(entries.size(), 8) + le(entries.size(), 8) + le(central.size(), 8) + le(cd, 8) +
           le(0x07064b50, 4) + le(0, 4) + le(end64, 8) + le(1, 4);
  }
  return out + central + tail + le(0x06054b50, 4) + le(0, 4) +
         le(zip64 ? 0xFFFF : entries.size(), 2) + le(zip64 ? 0xFFFF : entries.size(), 2) +
         le(zip64 ? big : central.size(), 4) + le(zip64 ? big : cd, 4) + le(0, 2);
}

// Pickle opcodes (protocol 2) for the hand-made data.pkl files.
// (appends, not "X" + ...: GCC 12 warns falsely, -Wrestrict, on a literal plus a string)
inline std::string pk_str(const std::string& s) {
  return std::string("X").append(le(s.size(), 4)) + s;
}
inline std::string pk_int(std::uint64_t v) {
  return v < 256 ? std::string("K").append(le(v, 1)) : std::string("\x8a\x08").append(le(v, 8));
}
inline const std::string kPkOrderedDict = "ccollections\nOrderedDict\n)R";

// torch.save's pickle of a float32 tensor of `size` and `stride` (pickled tuples) over the
// storage record "0" of storage_numel elements.
inline std::string pk_tensor(std::uint64_t storage_numel, const std::string& size,
                             const std::string& stride) {
  return "ctorch._utils\n_rebuild_tensor_v2\n((" + pk_str("storage") + "ctorch\nFloatStorage\n" +
         pk_str("0") + pk_str("cpu") + pk_int(storage_numel) + "tQ" + pk_int(0) + size + stride +
         "\x89" + kPkOrderedDict + "tR";
}

// ... and of the state_dict {"w": that tensor}.
inline std::string pk_state_dict(std::uint64_t storage_numel, const std::string& size,
                                 const std::string& stride) {
  return "\x80\x02" + kPkOrderedDict + "(" + pk_str("w") + pk_tensor(storage_numel, size, stride) +
         "u.";
}

inline std::string pt_of(const std::string& pickle, const std::string& storage,
                         bool zip64 = false) {
  return zip_of({{"m/data.pkl", pickle}, {"m/data/0", storage}, {"m/version", "3\n"}}, zip64);
}

}  // namespace minigrad_test
