#pragma once
// Private: serialize::OutputArchive / InputArchive's side of the torch.save format
// (torch_format.cpp): any tree of dicts, lists, tensors and scalars, through a byte sink or from
// bytes in a file or in memory.
#include <cstdint>
#include <functional>
#include <string>

#include "io/file_io.h"
#include "minigrad/serialize.h"

namespace minigrad::detail {

/// Takes the next n bytes of what is written.
using ByteSink = std::function<void(const void*, std::uint64_t)>;

/// Writes root as torch.save(obj) writes obj: a Dict as a dict, a List as a list, a Tensor as a
/// tensor (undefined: None), scalars as Python's int, float, bool and str. `name` stands for the
/// destination in errors.
void write_torch_object(const ByteSink& sink, const serialize::detail::Item& root,
                        const std::string& name);
/// Reads what torch.save wrote into a tree (the reverse of write_torch_object; a dict's int keys
/// become their decimal text, a tuple a List, None an undefined tensor). Bounded as load_torch.
serialize::detail::Item read_torch_object(const InputFile& file, const std::string& name);

}  // namespace minigrad::detail
