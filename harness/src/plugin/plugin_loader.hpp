#pragma once
// Plugins: shared libraries that register problems and variants through the versioned C
// entry points of harness/plugin.hpp. Found three ways (docs/plugins.md):
//   --plugin LIB           one library; anything wrong with it is an error
//   --plugin-dir DIR       every *.so in DIR (a file there that is not a plugin: a warning)
//   HARNESS_PLUGIN_PATH    colon-separated directories, loaded like --plugin-dir
#include <string>
#include <vector>

#include "harness/registry.hpp"

namespace harness {

// Loads one plugin. Throws InputError, one line naming the file, for: a missing file, a
// library that is not a harness plugin, another ABI version or struct layout (both sides
// given), a registration that throws or clashes with a name already registered (built in
// or from another file, which is named too). A failed registration is rolled back. A
// library already loaded (same canonical path) is not loaded again. Libraries stay loaded
// for the life of the process.
void load_plugin(const std::string& path, Registry& registry);

struct PluginLoadResult {
  std::vector<std::string> loaded;    // paths of the plugins loaded
  std::vector<std::string> warnings;  // one line each: files skipped and why
};

// Loads every *.so of `dir` (sorted by name, so the order is reproducible; other files are
// ignored). A file that is not a harness plugin, or one built for another ABI version or
// struct layout, is skipped with a warning; a plugin that clashes or whose registration
// throws is an error (InputError). A directory that
// does not exist is an error when named on the command line (`required`), a warning when
// it comes from HARNESS_PLUGIN_PATH.
PluginLoadResult load_plugin_dir(const std::string& dir, Registry& registry, bool required = true);

// The directories of HARNESS_PLUGIN_PATH (empty entries ignored).
std::vector<std::string> plugin_path_from_env();

// What the commands do: HARNESS_PLUGIN_PATH's directories, then `dirs`, then `files`;
// warnings are printed to stderr ("harness: warning: ...").
void load_plugins(const std::vector<std::string>& files, const std::vector<std::string>& dirs, Registry& registry);

}  // namespace harness
