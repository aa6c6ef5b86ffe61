#include <gtest/gtest.h>

#include "harness/error.hpp"
#include "harness/registry.hpp"
#include "plugin/plugin_loader.hpp"
#include "core/suggest.hpp"

namespace harness {
namespace {

TEST(Registry, BuiltInStreamFamilyIsRegistered) {
  const Registry& reg = Registry::instance();
  const Problem* stream = reg.find_problem("stream");
  ASSERT_NE(stream, nullptr);
  EXPECT_NE(reg.find_variant("stream", "cpu"), nullptr);
  EXPECT_NE(reg.find_variant("stream", "cuda"), nullptr);
  EXPECT_EQ(reg.find_variant("stream", "nope"), nullptr);
  EXPECT_EQ(reg.pending_variants(), 0u);
}

TEST(Registry, DuplicatesAreRejected) {
  const Variant v = make_variant("stream", "cpu", Backend::cpu, [](Instance&, LaunchContext&) {}).description("dup");
  EXPECT_THROW(Registry::instance().add_variant(v), InputError);
}

TEST(Registry, VariantBuilderFillsFieldsByName) {
  const Variant v = make_variant("p", "v", Backend::cpu, [](LaunchContext&) {})
                        .description("d")
                        .constraint([](const Params&) { return std::optional<std::string>("no"); })
                        .config([](const Params&) { return std::string("cfg"); })
                        .reference_only();
  EXPECT_EQ(v.full_name(), "p/v");
  EXPECT_EQ(v.backend, Backend::cpu);
  EXPECT_EQ(v.description, "d");
  EXPECT_TRUE(v.launch);
  const Params none;
  EXPECT_EQ(v.constraint(none).value_or(""), "no");
  EXPECT_EQ(v.config(none), "cfg");
  EXPECT_FALSE(v.workspace_bytes);
  EXPECT_TRUE(v.reference_only);
  EXPECT_EQ(v.origin, "built-in");
}

TEST(Plugin, ExampleLoadsAndRegistersItsProblemAndVariants) {
  Registry& reg = Registry::instance();
  load_plugin(HARNESS_BINARY_DIR "/plugins/example_plugin.so", reg);
  ASSERT_NE(reg.find_problem("saxpy"), nullptr);
  const Variant* v = reg.find_variant("saxpy", "unfused");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->origin, HARNESS_BINARY_DIR "/plugins/example_plugin.so");
}

std::string load_error(const std::string& path) {
  try {
    load_plugin(path, Registry::instance());
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Plugin, MissingFileNotAPluginAndWrongVersionAreClearErrors) {
  EXPECT_EQ(load_error("/nonexistent/p.so"), "/nonexistent/p.so: plugin library not found");
  const std::string bin = HARNESS_BINARY_DIR "/plugins/";
  EXPECT_EQ(load_error(bin + "not_a_plugin.so"),
            bin + "not_a_plugin.so: not a harness plugin (no harness_plugin_abi_version / harness_plugin_register entry point)");
  EXPECT_EQ(load_error(bin + "wrong_abi_plugin.so"),
            bin + "wrong_abi_plugin.so: plugin ABI version 999 does not match this harness (5); rebuild the plugin against this harness");
  EXPECT_NE(load_error(HARNESS_SOURCE_DIR "/CMakeLists.txt").find("cannot load plugin"), std::string::npos);
}

TEST(Suggest, EditDistanceAndSuggestions) {
  EXPECT_EQ(edit_distance("tild", "tiled"), 1u);
  EXPECT_EQ(did_you_mean("tild", {"naive", "tiled", "cublas"}), "; did you mean 'tiled'?");
  EXPECT_EQ(did_you_mean("zzzzzz", {"naive", "tiled"}), "");
}

}  // namespace
}  // namespace harness
