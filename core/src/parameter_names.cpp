// Parameter names (minigrad/parameter_names.h).
#include "minigrad/parameter_names.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "tensor_impl.h"

namespace minigrad {

namespace {

// Note [Parameter names for optimizers]
// parameters() returns plain tensors, so `SGD opt(model.parameters(), ...)` cannot hand the
// names to the optimizer. Instead every parameters()/named_parameters() call records each
// parameter's dotted name here, keyed by its TensorImpl, and the optimizer copies the names when
// it is given the parameters. A record holds a weak pointer, so it never keeps a tensor alive, and
// a dead tensor's record is never returned for a new tensor at the same address. Records of dead
// tensors are dropped whenever the table has doubled since the last sweep.
struct NameRecord {
  std::weak_ptr<TensorImpl> impl;
  std::string name;
};
struct NameTable {
  std::mutex mutex;
  std::unordered_map<const TensorImpl*, NameRecord> records;
  std::size_t sweep_at = 1024;
};
NameTable& name_table() {
  static NameTable table;
  return table;
}

}  // namespace

void record_parameter_names(const std::vector<std::pair<std::string, Tensor>>& params) {
  NameTable& table = name_table();
  std::lock_guard<std::mutex> lock(table.mutex);
  for (const auto& [name, t] : params) {
    NameRecord& rec = table.records[t.impl()];
    // A call on a submodule ("weight") keeps the fuller name a call on its parent recorded
    // ("W_k.weight"); any other name replaces the record.
    if (rec.impl.lock().get() == t.impl() && rec.name.size() > name.size() &&
        rec.name.ends_with("." + name))
      continue;
    rec.impl = t.impl_ptr();
    rec.name = name;
  }
  if (table.records.size() >= table.sweep_at) {
    std::erase_if(table.records, [](const auto& kv) { return kv.second.impl.expired(); });
    table.sweep_at = std::max<std::size_t>(1024, 2 * table.records.size());
  }
}

std::string parameter_name(const Tensor& p) {
  if (!p.defined()) return "";
  NameTable& table = name_table();
  std::lock_guard<std::mutex> lock(table.mutex);
  auto it = table.records.find(p.impl());
  if (it == table.records.end() || it->second.impl.lock().get() != p.impl()) return "";
  return it->second.name;
}

}  // namespace minigrad
