// Finding and loading plugins (issue 21): --plugin-dir / HARNESS_PLUGIN_PATH with a file
// that is not a plugin (warning), two files registering one name, a throwing
// registration, a clash with a built-in problem, another struct layout; `harness list`
// naming the file of each problem and variant. Fixtures: tests/plugin_fixtures/.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "harness/error.hpp"
#include "harness/plugin.hpp"
#include "harness/registry.hpp"
#include "plugin/plugin_loader.hpp"
#include "test_support.hpp"

namespace harness {
namespace {

namespace fs = std::filesystem;
using test::run_command;

const std::string kFixtures = HARNESS_BINARY_DIR "/tests/fixtures/";
const std::string kNotAPlugin = HARNESS_BINARY_DIR "/plugins/not_a_plugin.so";
const std::string kExe = HARNESS_EXE;

// The refusal of layout.so, whose Variant is 8 bytes larger than ours.
std::string layout_message(const std::string& path) {
  const auto& v = detail::kPluginLayout[0];
  const std::string ours = std::string(v.name) + " " + std::to_string(v.size) + "/" + std::to_string(v.align);
  const std::string theirs = std::string(v.name) + " " + std::to_string(v.size + 8) + "/" + std::to_string(v.align);
  return path + ": plugin ABI version 5 (this harness 5) but its public structs have another layout (plugin " + theirs +
         " vs harness " + ours + "); rebuild the plugin against this harness's headers";
}

std::string load_error(const std::string& path) {
  try {
    load_plugin(path, Registry::instance());
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

// A fresh directory holding copies of `files` plus a README (not a .so: ignored).
std::string plugin_dir(const std::string& name, const std::vector<std::string>& files) {
  const fs::path dir = test::temp_path(name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto& f : files) fs::copy_file(f, dir / fs::path(f).filename());
  std::ofstream(dir / "README.txt") << "not a library\n";
  return dir.string();
}

TEST(PluginDir, LoadsEveryPluginAndWarnsAboutAFileThatIsNotOne) {
  const std::string dir = plugin_dir("plugdir", {kFixtures + "dir_probe.so", kNotAPlugin, kFixtures + "layout.so"});
  Registry& reg = Registry::instance();
  const auto r = load_plugin_dir(dir, reg);
  ASSERT_EQ(r.loaded.size(), 1u);
  EXPECT_EQ(r.loaded[0], dir + "/dir_probe.so");
  ASSERT_EQ(r.warnings.size(), 2u);  // sorted: layout.so, not_a_plugin.so
  EXPECT_EQ(r.warnings[0], layout_message(dir + "/layout.so") + " (skipped)");
  EXPECT_EQ(r.warnings[1], dir + "/not_a_plugin.so: not a harness plugin (no harness_plugin_abi_version / "
                                 "harness_plugin_register entry point) (skipped)");
  ASSERT_NE(reg.find_problem("dir_probe"), nullptr);
  EXPECT_EQ(reg.problem_origin("dir_probe"), dir + "/dir_probe.so");
  EXPECT_EQ(reg.find_variant("dir_probe", "cpu")->origin, dir + "/dir_probe.so");
  EXPECT_EQ(reg.problem_origin("stream"), "built-in");
  // Loading the same directory again loads nothing twice (no clash with itself).
  EXPECT_EQ(load_plugin_dir(dir, reg).warnings.size(), 2u);
  // A missing directory: an error on the command line, a warning from HARNESS_PLUGIN_PATH.
  EXPECT_THROW(load_plugin_dir(dir + "/nope", reg, true), InputError);
  EXPECT_EQ(load_plugin_dir(dir + "/nope", reg, false).warnings.size(), 1u);
  // Named explicitly, the file that is not a plugin stays an error.
  EXPECT_NE(load_error(dir + "/not_a_plugin.so").find("not a harness plugin"), std::string::npos);
}

TEST(PluginClash, TwoFilesRegisteringOneNameIsAnErrorNamingBoth) {
  EXPECT_EQ(load_error(kFixtures + "twin_a.so"), "(no error)");
  EXPECT_EQ(load_error(kFixtures + "twin_b.so"),
            kFixtures + "twin_b.so: problem 'twin' is already registered by " + kFixtures + "twin_a.so");
  EXPECT_EQ(load_error(kFixtures + "twin_var.so"),
            kFixtures + "twin_var.so: variant 'twin/cpu' is already registered by " + kFixtures + "twin_a.so");
  EXPECT_EQ(Registry::instance().problem_origin("twin"), kFixtures + "twin_a.so");
  EXPECT_EQ(Registry::instance().variants("twin").size(), 1u);
}

TEST(PluginClash, ABuiltInProblemNameIsAnErrorNamingTheFile) {
  EXPECT_EQ(load_error(kFixtures + "clash.so"), kFixtures + "clash.so: problem 'stream' is already built in");
  EXPECT_EQ(Registry::instance().problem_origin("stream"), "built-in");
}

TEST(PluginFailure, AThrowingRegistrationIsOneLineAndRolledBack) {
  const auto before = Registry::instance().mark();
  EXPECT_EQ(load_error(kFixtures + "throws.so"),
            kFixtures + "throws.so: cannot open my_config.yaml; (the fixture always throws)");
  EXPECT_EQ(Registry::instance().find_problem("half"), nullptr);
  const auto after = Registry::instance().mark();
  EXPECT_EQ(after.problems, before.problems);
  EXPECT_EQ(after.variants, before.variants);
  EXPECT_EQ(after.pending, before.pending);
}

TEST(PluginLayout, AnotherStructLayoutIsRefusedWithBothSides) {
  EXPECT_EQ(load_error(kFixtures + "layout.so"), layout_message(kFixtures + "layout.so"));
  EXPECT_EQ(Registry::instance().find_problem("skewed"), nullptr);
}

TEST(PluginCli, ListNamesTheFileOfEachProblemAndVariant) {
  const std::string dir = plugin_dir("clidir", {kFixtures + "dir_probe.so", kNotAPlugin});
  auto r = run_command(kExe + " list --plugin-dir " + dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // The default listing: the problem's line names its file too.
  EXPECT_NE(r.output.find("\ndir_probe "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" cpu  [from " + dir + "/dir_probe.so]\n"), std::string::npos) << r.output;
  r = run_command(kExe + " list --verbose --plugin-dir " + dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("harness: warning: " + dir + "/not_a_plugin.so: not a harness plugin"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("dir_probe: a loader test fixture: out = x\n  from: " + dir + "/dir_probe.so\n"),
            std::string::npos) << r.output;
  EXPECT_NE(r.output.find("cpu   memcpy  [from " + dir + "/dir_probe.so]"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("stream: STREAM copy/scale/add/triad over n floats (memory bound)\n  from: built-in\n"),
            std::string::npos) << r.output;
  // HARNESS_PLUGIN_PATH: colon-separated, a missing directory is a warning.
  r = run_command("HARNESS_PLUGIN_PATH=" + dir + "/missing:" + dir + " " + kExe + " list variants");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("dir_probe/cpu"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(dir + "/missing: plugin directory not found (HARNESS_PLUGIN_PATH)"), std::string::npos);
  // JSON: problems and variants carry their origin.
  r = run_command(kExe + " list --json --plugin " + dir + "/dir_probe.so 2>/dev/null");
  EXPECT_NE(r.output.find("\"origin\": \"" + dir + "/dir_probe.so\""), std::string::npos) << r.output;
  // Errors are one line and exit 2.
  r = run_command(kExe + " list --plugin " + kFixtures + "twin_a.so --plugin " + kFixtures + "twin_b.so");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.output, "harness: error: " + kFixtures + "twin_b.so: problem 'twin' is already registered by " +
                          kFixtures + "twin_a.so\n");
  r = run_command(kExe + " list --plugin " + kFixtures + "throws.so");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.output, "harness: error: " + kFixtures + "throws.so: cannot open my_config.yaml; (the fixture always throws)\n");
  r = run_command(kExe + " run tests/data/suites/tiny.yaml --dry-run --plugin " + kFixtures + "clash.so");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.output, "harness: error: " + kFixtures + "clash.so: problem 'stream' is already built in\n");
  // --plugin-dir on run: the directory's plugin is usable by a suite.
  const std::string out = test::temp_path("dir_probe.json");
  r = run_command(kExe + " run --plugin-dir " + dir + " tests/data/suites/dir_probe.yaml --no-profile --out " + out);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("2 results: 2 passed, 0 failed, 0 skipped, 0 errors"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace harness
