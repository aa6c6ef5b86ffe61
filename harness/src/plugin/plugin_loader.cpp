#include "plugin/plugin_loader.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "harness/error.hpp"
#include "harness/plugin.hpp"

namespace harness {

namespace {

namespace fs = std::filesystem;

// A file this harness cannot use: not a loadable harness plugin at all, or one built for
// another ABI version or struct layout. A directory scan skips those with a warning (a
// stale plugin on HARNESS_PLUGIN_PATH must not block every command); named with --plugin
// they are errors. Plugins that load but fail (a clash, a throwing registration) are
// errors either way.
class NotAPlugin : public InputError {
 public:
  using InputError::InputError;
};

// Messages of plugin code may span lines; the harness prints one line per error.
std::string one_line(std::string s) {
  for (std::size_t i = 0; (i = s.find('\n', i)) != std::string::npos;) s.replace(i, 1, "; ");
  while (!s.empty() && (s.back() == ' ' || s.back() == ';')) s.pop_back();
  return s;
}

std::string describe(const detail::TypeLayout& t) { return fmt::format("{} {}/{}", t.name, t.size, t.align); }

// Empty when the plugin's struct layouts equal ours, else what differs (sizes/alignments
// of both sides).
std::string layout_difference(const detail::TypeLayout* theirs, int count) {
  std::vector<std::string> diffs;
  if (count != detail::kPluginLayoutCount)
    diffs.push_back(fmt::format("{} layout entries, this harness has {}", count, detail::kPluginLayoutCount));
  for (int i = 0; i < std::min(count, detail::kPluginLayoutCount); ++i) {
    const auto& ours = detail::kPluginLayout[i];
    const auto& t = theirs[i];
    if (std::string_view(t.name) != ours.name || t.size != ours.size || t.align != ours.align)
      diffs.push_back(fmt::format("plugin {} vs harness {}", describe(t), describe(ours)));
  }
  return fmt::format("{}", fmt::join(diffs, ", "));
}

std::set<std::string>& loaded_plugins() {
  static std::set<std::string> loaded;  // canonical paths
  return loaded;
}

void load_plugin_impl(const std::string& path, Registry& registry) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw NotAPlugin(fmt::format("{}: plugin library not found", path));
  const std::string canonical = fs::weakly_canonical(path, ec).string();
  if (loaded_plugins().count(canonical)) return;  // the same file through two routes
  // dlopen searches the library path for names without a slash; a path is meant here.
  const std::string resolved = path.find('/') == std::string::npos ? "./" + path : path;
  // Lazy binding first: a plugin built against another harness may miss functions of this
  // one, and its version must still be readable to say so. Its static initializers run
  // here; HARNESS_PLUGIN plugins register nothing before harness_plugin_register.
  void* handle = dlopen(resolved.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (!handle) throw NotAPlugin(fmt::format("{}: cannot load plugin: {}", path, one_line(dlerror())));
  using VersionFn = int (*)();
  using LayoutFn = int (*)(const detail::TypeLayout**);
  using RegisterFn = void (*)(Registry*);
  auto version = reinterpret_cast<VersionFn>(dlsym(handle, "harness_plugin_abi_version"));
  auto layout = reinterpret_cast<LayoutFn>(dlsym(handle, "harness_plugin_layout"));
  auto reg = reinterpret_cast<RegisterFn>(dlsym(handle, "harness_plugin_register"));
  if (!version || !reg) {
    dlclose(handle);
    throw NotAPlugin(fmt::format(
        "{}: not a harness plugin (no harness_plugin_abi_version / harness_plugin_register entry point)", path));
  }
  const int v = version();
  if (v != HARNESS_PLUGIN_ABI_VERSION) {
    dlclose(handle);
    throw NotAPlugin(fmt::format("{}: plugin ABI version {} does not match this harness ({}); rebuild the plugin against this harness",
                                 path, v, HARNESS_PLUGIN_ABI_VERSION));
  }
  if (!layout) {
    dlclose(handle);
    throw NotAPlugin(fmt::format("{}: plugin ABI version {} but no harness_plugin_layout entry point (built with older "
                                 "headers of ABI {}); rebuild the plugin against this harness",
                                 path, v, HARNESS_PLUGIN_ABI_VERSION));
  }
  const detail::TypeLayout* table = nullptr;
  const int count = layout(&table);
  if (const std::string diff = table ? layout_difference(table, count) : "no layout table"; !diff.empty()) {
    dlclose(handle);
    throw NotAPlugin(fmt::format("{}: plugin ABI version {} (this harness {}) but its public structs have another layout "
                                 "({}); rebuild the plugin against this harness's headers",
                                 path, v, HARNESS_PLUGIN_ABI_VERSION, diff));
  }
  // Everything resolved now (the same handle, bound immediately), before any plugin code
  // that could reach an unresolved function runs.
  if (void* now = dlopen(resolved.c_str(), RTLD_NOW | RTLD_LOCAL); !now) {
    throw InputError(fmt::format("{}: cannot load plugin: {}", path, one_line(dlerror())));
  }

  const Registry::Mark mark = registry.mark();
  registry.set_origin(path);
  std::string failure;
  try {
    reg(&registry);
    if (registry.pending_variants() > mark.pending)
      failure = "registered variants of a problem that does not exist";
  } catch (const std::exception& e) {
    failure = one_line(e.what());
  } catch (...) {
    failure = "registration threw an exception that is not a std::exception";
  }
  registry.set_origin({});
  if (!failure.empty()) {
    // The library stays loaded: the objects it registered are destroyed by its own code.
    registry.rollback(mark);
    throw InputError(fmt::format("{}: {}", path, failure));
  }
  loaded_plugins().insert(canonical);
}

bool is_shared_library(const fs::path& p) { return p.extension() == ".so"; }

}  // namespace

void load_plugin(const std::string& path, Registry& registry) { load_plugin_impl(path, registry); }

PluginLoadResult load_plugin_dir(const std::string& dir, Registry& registry, bool required) {
  PluginLoadResult result;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    const std::string why = fmt::format("{}: plugin directory not found", dir);
    if (required) throw InputError(why);
    result.warnings.push_back(why + " (HARNESS_PLUGIN_PATH)");
    return result;
  }
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::error_code e2;
    if (entry.is_regular_file(e2) && is_shared_library(entry.path())) files.push_back(entry.path());
  }
  if (ec) throw InputError(fmt::format("{}: cannot read plugin directory: {}", dir, ec.message()));
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    try {
      load_plugin_impl(f.string(), registry);
      result.loaded.push_back(f.string());
    } catch (const NotAPlugin& e) {
      result.warnings.push_back(fmt::format("{} (skipped)", e.what()));
    }
  }
  return result;
}

std::vector<std::string> plugin_path_from_env() {
  std::vector<std::string> dirs;
  const char* env = std::getenv("HARNESS_PLUGIN_PATH");
  if (!env) return dirs;
  std::string_view rest(env);
  while (!rest.empty()) {
    const auto colon = rest.find(':');
    const std::string_view d = rest.substr(0, colon);
    if (!d.empty()) dirs.emplace_back(d);
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return dirs;
}

void load_plugins(const std::vector<std::string>& files, const std::vector<std::string>& dirs, Registry& registry) {
  auto warn = [](const PluginLoadResult& r) {
    for (const auto& w : r.warnings) std::fprintf(stderr, "harness: warning: %s\n", w.c_str());
  };
  for (const auto& d : plugin_path_from_env()) warn(load_plugin_dir(d, registry, false));
  for (const auto& d : dirs) warn(load_plugin_dir(d, registry, true));
  for (const auto& f : files) load_plugin(f, registry);
}

}  // namespace harness
