# Install rules, the CMake package and the Debian packages (docs/plugins.md).
#
#   cmake --install build/release --prefix P     everything below, under P
#   cpack -G DEB  (in build/release)             harness_<v>_amd64.deb + harness-dev_<v>_amd64.deb
#
# Two components:
#   runtime  bin/harness, lib/libharness_core.so.<major>, share/harness/{suites,reports/schema.json},
#            share/doc/harness (README and docs/)
#   dev      include/harness (the public headers only), lib/libharness_core.so (link),
#            lib/cmake/harness (harnessConfig*.cmake, harnessTargets*.cmake, HarnessPlugin.cmake),
#            share/harness/templates/plugin (a plugin project to copy)
include(CMakePackageConfigHelpers)

set(HARNESS_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/harness)

install(TARGETS harness RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
install(TARGETS harness_core harness_plugin EXPORT harnessTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT dev)
install(DIRECTORY harness/include/harness DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev
        FILES_MATCHING PATTERN "*.hpp")
install(DIRECTORY suites/ DESTINATION ${CMAKE_INSTALL_DATADIR}/harness/suites COMPONENT runtime
        FILES_MATCHING PATTERN "*.yaml")
install(FILES reports/schema.json DESTINATION ${CMAKE_INSTALL_DATADIR}/harness/reports COMPONENT runtime)
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT runtime)
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs COMPONENT runtime)
install(DIRECTORY templates/plugin/ DESTINATION ${CMAKE_INSTALL_DATADIR}/harness/templates/plugin COMPONENT dev
        PATTERN "build" EXCLUDE)

# The package: harness::core (the shared library) and harness::plugin (what a plugin
# links), harness_add_plugin(). Compatibility: SameMinorVersion while the major version is
# 0 (0.x releases may change the plugin ABI), i.e. find_package(harness 0.1) accepts 0.1.*
# only. The load-time check (ABI version + struct layouts) is the real guard.
install(EXPORT harnessTargets NAMESPACE harness:: DESTINATION ${HARNESS_CMAKE_DIR} COMPONENT dev)
configure_package_config_file(cmake/harnessConfig.cmake.in ${CMAKE_BINARY_DIR}/cmake/harnessConfig.cmake
                              INSTALL_DESTINATION ${HARNESS_CMAKE_DIR} PATH_VARS CMAKE_INSTALL_BINDIR)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/cmake/harnessConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/cmake/harnessConfig.cmake ${CMAKE_BINARY_DIR}/cmake/harnessConfigVersion.cmake
              cmake/HarnessPlugin.cmake
        DESTINATION ${HARNESS_CMAKE_DIR} COMPONENT dev)

# Debian packages: cpack -G DEB in the build folder. Runtime dependencies come from
# dpkg-shlibdeps (libfmt9, libyaml-cpp0.7, libstdc++6, ... on Debian 12). The CUDA
# libraries (libcudart, libcupti) are NVIDIA's toolkit under /usr/local/cuda, no Debian
# package: dpkg-shlibdeps is run with --ignore-missing-info (CPack's default where
# supported), so they add no dependency, and the Description says so.
set(CPACK_PACKAGE_NAME harness)
set(CPACK_PACKAGE_VENDOR "harness developers")
set(CPACK_PACKAGE_CONTACT "harness developers <harness@localhost>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime dev)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME harness)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION
    "benchmarking and profiling harness for CUDA kernels
Checks every kernel variant against a reference, times it with statistics, profiles
it with CUPTI and writes JSON reports. Plugins are shared libraries (harness-dev).
.
Needs the NVIDIA CUDA toolkit's runtime libraries (libcudart, libcupti, version
${CUDAToolkit_VERSION_MAJOR}) under /usr/local/cuda, and an NVIDIA driver to run CUDA variants:
they are not Debian packages and are not declared as dependencies.")
set(CPACK_DEBIAN_DEV_PACKAGE_NAME harness-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "harness (= ${PROJECT_VERSION}), nlohmann-json3-dev (>= 3.10), cmake (>= 3.25)")
set(CPACK_DEBIAN_DEV_PACKAGE_SHLIBDEPS OFF)
set(CPACK_DEBIAN_DEV_DESCRIPTION
    "plugin development files for harness
The public headers, the CMake package (find_package(harness): harness::plugin,
harness_add_plugin) and a plugin project template in /usr/share/harness/templates/plugin.
Building CUDA plugins needs the NVIDIA CUDA toolkit (nvcc) under /usr/local/cuda.")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_GENERATE_SHLIBS ON)
include(CPack)
cpack_add_component(runtime DISPLAY_NAME "harness" REQUIRED)
cpack_add_component(dev DISPLAY_NAME "harness plugin development files" DEPENDS runtime)
