#pragma once
// The entry points of a plugin (a shared library loaded with --plugin, --plugin-dir or
// HARNESS_PLUGIN_PATH; docs/plugins.md).
//
//   static void register_all(harness::Registry& registry) {
//     registry.add_problem(std::make_unique<MyProblem>());
//     registry.add_variant(harness::make_variant("mine", "cpu", harness::Backend::cpu, launch_cpu)
//                              .description("..."));
//   }
//   HARNESS_PLUGIN(register_all)
//
// The harness reads harness_plugin_abi_version() first (a library without it is "not a
// harness plugin"; another version is refused), then harness_plugin_layout(): the size and
// alignment of the public structs as the plugin's compiler saw them, compared with the
// harness's own (another layout is refused), and only then calls harness_plugin_register.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "harness/registry.hpp"

// Bump when Problem, Instance, Variant, Registry or anything they expose changes layout
// or virtual functions (docs/plugins.md, "The ABI promise"). The CMake package passes the
// same number on the command line (-DHARNESS_PLUGIN_ABI_VERSION=N): headers and package
// from two different installations are caught here, at compile time.
// 5: Instance::reseed (issue 33).
#ifndef HARNESS_PLUGIN_ABI_VERSION
#define HARNESS_PLUGIN_ABI_VERSION 5
#elif HARNESS_PLUGIN_ABI_VERSION != 5
#error "HARNESS_PLUGIN_ABI_VERSION on the command line differs from these headers (5): mixed installations"
#endif

namespace harness::detail {

// One public type's size and alignment at the compile time of whoever includes this.
struct TypeLayout {
  const char* name;
  std::uint32_t size;
  std::uint32_t align;
};

#define HARNESS_LAYOUT_OF(T) ::harness::detail::TypeLayout{#T, sizeof(T), alignof(T)}

// The structs a plugin builds, fills or reads directly (classes used only through virtual
// functions are covered by the ABI version). std::string and std::function are listed
// because their layout differs between standard-library ABIs (_GLIBCXX_USE_CXX11_ABI).
inline constexpr TypeLayout kPluginLayout[] = {
    HARNESS_LAYOUT_OF(::harness::Variant),    HARNESS_LAYOUT_OF(::harness::OperandSpec),
    HARNESS_LAYOUT_OF(::harness::LaunchContext), HARNESS_LAYOUT_OF(::harness::Params),
    HARNESS_LAYOUT_OF(::harness::ParamSpec),  HARNESS_LAYOUT_OF(::harness::Tolerance),
    HARNESS_LAYOUT_OF(::harness::Fill),       HARNESS_LAYOUT_OF(::harness::Output),
    HARNESS_LAYOUT_OF(::harness::Work),       HARNESS_LAYOUT_OF(std::string),
    HARNESS_LAYOUT_OF(std::function<void()>),
};
inline constexpr int kPluginLayoutCount = static_cast<int>(sizeof(kPluginLayout) / sizeof(kPluginLayout[0]));

#undef HARNESS_LAYOUT_OF

}  // namespace harness::detail

#define HARNESS_PLUGIN(register_fn)                                                           \
  extern "C" __attribute__((visibility("default"))) int harness_plugin_abi_version() {         \
    return HARNESS_PLUGIN_ABI_VERSION;                                                        \
  }                                                                                           \
  extern "C" __attribute__((visibility("default"))) int harness_plugin_layout(                \
      const ::harness::detail::TypeLayout** table) {                                          \
    *table = ::harness::detail::kPluginLayout;                                                \
    return ::harness::detail::kPluginLayoutCount;                                             \
  }                                                                                           \
  extern "C" __attribute__((visibility("default"))) void harness_plugin_register(             \
      ::harness::Registry* registry) {                                                        \
    register_fn(*registry);                                                                   \
  }
