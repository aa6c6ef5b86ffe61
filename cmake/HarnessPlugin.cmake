# harness_add_plugin(NAME [SOURCES] src... [CUDA_ARCHITECTURES arch...])
#
# A harness plugin: a MODULE library NAME.so (no "lib" prefix) loaded with
# `harness run --plugin NAME.so`, --plugin-dir or HARNESS_PLUGIN_PATH. It gets:
#   - harness::plugin (public headers, -DHARNESS_PLUGIN_ABI_VERSION, the core, CUDA::cudart)
#   - C++20 for host code, C++17 for CUDA (what CMake 3.25 can ask nvcc 13 for)
#   - position-independent code
#   - hidden symbols (CXX and CUDA visibility presets, inline functions too): only the
#     entry points that HARNESS_PLUGIN marks default are exported
#   - the shared CUDA runtime (CUDA_RUNTIME_LIBRARY Shared): a plugin must use the
#     harness's runtime, or its kernels would run in another runtime than the stream it gets
#   - CUDA architectures like the harness's own build: CUDA_ARCHITECTURES if given, else
#     HARNESS_CUDA_ARCHITECTURES, else CMAKE_CUDA_ARCHITECTURES when the user set it (not
#     CMake's default), else the local GPU's (nvidia-smi), else 90 (H100/H200).
include_guard(GLOBAL)

function(_harness_default_cuda_architectures out)
  if(DEFINED HARNESS_CUDA_ARCHITECTURES)
    set(${out} "${HARNESS_CUDA_ARCHITECTURES}" PARENT_SCOPE)
    return()
  endif()
  if(DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT "${CMAKE_CUDA_ARCHITECTURES}" STREQUAL "${CMAKE_CUDA_ARCHITECTURES_DEFAULT}")
    set(${out} "${CMAKE_CUDA_ARCHITECTURES}" PARENT_SCOPE)
    return()
  endif()
  execute_process(COMMAND nvidia-smi --query-gpu=compute_cap --format=csv,noheader
                  OUTPUT_VARIABLE cc RESULT_VARIABLE rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(rc EQUAL 0 AND cc MATCHES "^([0-9]+)\\.([0-9]+)")
    set(arch "${CMAKE_MATCH_1}${CMAKE_MATCH_2}")
  else()
    set(arch 90)
  endif()
  set(HARNESS_CUDA_ARCHITECTURES "${arch}" CACHE STRING "CUDA architectures of harness plugins")
  set(${out} "${arch}" PARENT_SCOPE)
endfunction()

function(harness_add_plugin name)
  cmake_parse_arguments(P "" "" "SOURCES;CUDA_ARCHITECTURES" ${ARGN})
  set(sources ${P_SOURCES} ${P_UNPARSED_ARGUMENTS})
  if(NOT sources)
    message(FATAL_ERROR "harness_add_plugin(${name}): no sources")
  endif()
  add_library(${name} MODULE ${sources})
  target_link_libraries(${name} PRIVATE harness::plugin)
  set_target_properties(${name} PROPERTIES
    PREFIX ""
    POSITION_INDEPENDENT_CODE ON
    CXX_STANDARD 20 CXX_STANDARD_REQUIRED ON CXX_EXTENSIONS OFF
    CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON
    CXX_VISIBILITY_PRESET hidden CUDA_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON
    CUDA_RUNTIME_LIBRARY Shared)
  if(P_CUDA_ARCHITECTURES)
    set(archs ${P_CUDA_ARCHITECTURES})
  else()
    _harness_default_cuda_architectures(archs)
  endif()
  set_property(TARGET ${name} PROPERTY CUDA_ARCHITECTURES ${archs})
endfunction()
