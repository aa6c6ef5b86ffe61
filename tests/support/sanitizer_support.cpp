// Linked into the executables of sanitized builds only (HARNESS_SANITIZE / HARNESS_FUZZ;
// CMake: harness_sanitizer_support(target)).
#include <dlfcn.h>

// CUPTI's profiler host API (metric names and evaluation: cuptiProfilerHostInitialize)
// dlopens libnvperf_host.so with RTLD_DEEPBIND, which the AddressSanitizer runtimes refuse
// outright: the process dies with "You are trying to dlopen a libnvperf_host.so shared
// library with RTLD_DEEPBIND flag which is incompatible with sanitizer runtime"
// (google/sanitizers#611; neither GCC's nor clang's runtime has an option for it). A
// deep-bound library would call libc's malloc/free past the sanitizer's, so the flag is
// dropped here and the library binds to the same allocator as everything else.
//
// The executable's dlopen comes first in symbol lookup (the link exports it with
// --export-dynamic-symbol=dlopen); it passes on to the next one: GCC's libasan interceptor,
// or libc's where clang's static runtime had its own (weak) dlopen replaced by this one.
extern "C" __attribute__((visibility("default"))) void* dlopen(const char* file, int flags) {
  using Dlopen = void* (*)(const char*, int);
  static const Dlopen next = reinterpret_cast<Dlopen>(dlsym(RTLD_NEXT, "dlopen"));
  if (next == nullptr) return nullptr;
  return next(file, flags & ~RTLD_DEEPBIND);
}

// Defaults (ASAN_OPTIONS / UBSAN_OPTIONS in the environment override them one by one).
// protect_shadow_gap=0: the CUDA driver maps device-visible memory inside the range ASan
// reserves as its shadow gap; with the gap protected, CUDA initialization fails on a GPU
// machine. (Without a driver, cudaGetDeviceCount just reports "driver version is
// insufficient" and ASan is not involved.)
extern "C" __attribute__((visibility("default"))) const char* __asan_default_options() {
  return "protect_shadow_gap=0";
}
extern "C" __attribute__((visibility("default"))) const char* __ubsan_default_options() {
  return "print_stacktrace=1";
}
