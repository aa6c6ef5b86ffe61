#pragma once
// --plugin LIB: loads variants (and problems) from a shared library through the versioned
// C entry point of harness/plugin.hpp.
#include <string>

#include "harness/registry.hpp"

namespace harness {

// Throws InputError for a missing file, a library that is not a harness plugin, or an ABI
// version mismatch; the library stays loaded for the life of the process.
void load_plugin(const std::string& path, Registry& registry);

}  // namespace harness
