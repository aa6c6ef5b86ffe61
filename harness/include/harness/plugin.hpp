#pragma once
// The entry point of an out-of-tree plugin (a shared library loaded with --plugin).
//
//   static void register_all(harness::Registry& registry) {
//     registry.add_variant({"stream", "mine", harness::Backend::cpu, "...", launch});
//   }
//   HARNESS_PLUGIN(register_all)
//
// The harness first reads harness_plugin_abi_version(); a library without it is "not a
// harness plugin", one with another version is refused before any of its code registers.
#include "harness/registry.hpp"

// Bump when Problem, Instance, Variant, Registry or anything they expose changes layout.
#define HARNESS_PLUGIN_ABI_VERSION 4

#define HARNESS_PLUGIN(register_fn)                                                  \
  extern "C" __attribute__((visibility("default"))) int harness_plugin_abi_version() { \
    return HARNESS_PLUGIN_ABI_VERSION;                                               \
  }                                                                                  \
  extern "C" __attribute__((visibility("default"))) void harness_plugin_register(    \
      ::harness::Registry* registry) {                                               \
    register_fn(*registry);                                                          \
  }
