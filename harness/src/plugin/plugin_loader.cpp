#include "plugin/plugin_loader.hpp"

#include <dlfcn.h>

#include <filesystem>

#include <fmt/format.h>

#include "harness/error.hpp"
#include "harness/plugin.hpp"

namespace harness {

void load_plugin(const std::string& path, Registry& registry) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(path, ec))
    throw InputError(fmt::format("{}: plugin library not found", path));
  // dlopen searches the library path for names without a slash; a path is meant here.
  const std::string resolved = path.find('/') == std::string::npos ? "./" + path : path;
  void* handle = dlopen(resolved.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) throw InputError(fmt::format("{}: cannot load plugin: {}", path, dlerror()));
  using VersionFn = int (*)();
  using RegisterFn = void (*)(Registry*);
  auto version = reinterpret_cast<VersionFn>(dlsym(handle, "harness_plugin_abi_version"));
  auto reg = reinterpret_cast<RegisterFn>(dlsym(handle, "harness_plugin_register"));
  if (!version || !reg) {
    dlclose(handle);
    throw InputError(fmt::format("{}: not a harness plugin (no harness_plugin_abi_version / harness_plugin_register entry point)", path));
  }
  const int v = version();
  if (v != HARNESS_PLUGIN_ABI_VERSION) {
    dlclose(handle);
    throw InputError(fmt::format("{}: plugin ABI version {} does not match this harness ({}); rebuild the plugin against this harness",
                                 path, v, HARNESS_PLUGIN_ABI_VERSION));
  }
  registry.set_origin(path);
  try {
    reg(&registry);
  } catch (...) {
    registry.set_origin({});
    throw;
  }
  registry.set_origin({});
  if (registry.pending_variants() > 0)
    throw InputError(fmt::format("{}: plugin registered variants of a problem that does not exist", path));
}

}  // namespace harness
