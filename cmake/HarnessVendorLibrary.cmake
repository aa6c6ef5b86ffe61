# Optional vendor libraries (cuDNN, NCCL): looked for in HARNESS_<PREFIX>_ROOT, the CUDA
# toolkit, and NVIDIA's Python wheels (site-packages/nvidia/<wheel>: the GPU machine may
# have them only inside PyTorch's environment). <PREFIX>_INCLUDE_DIR and <PREFIX>_LIBRARY
# are cached, so the search runs once per build folder.
#
#   harness_find_vendor_library(NCCL nccl.h nccl nccl libnccl.so.2)
#   if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
#     harness_link_vendor_library(kernels_nccl NCCL KERNELS_NCCL_HAVE_NCCL)
include_guard(GLOBAL)

# prefix: CUDNN, NCCL; header: the header to find; wheel: the folder under
# site-packages/nvidia; the remaining arguments: library names, preferred first.
function(harness_find_vendor_library prefix header wheel)
  set(HARNESS_${prefix}_ROOT "" CACHE PATH
      "${prefix} installation (include/${header}, lib/); empty: search the CUDA toolkit and Python wheels")
  file(GLOB wheels
       /opt/torch/.venv/lib/python3*/site-packages/nvidia/${wheel}
       /usr/local/lib/python3*/dist-packages/nvidia/${wheel}
       /usr/local/lib/python3*/site-packages/nvidia/${wheel}
       /usr/lib/python3/dist-packages/nvidia/${wheel}
       $ENV{HOME}/.local/lib/python3*/site-packages/nvidia/${wheel})
  find_path(${prefix}_INCLUDE_DIR ${header}
            HINTS ${HARNESS_${prefix}_ROOT} ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_LIBRARY_ROOT} ${wheels}
            PATH_SUFFIXES include)
  # The library next to the header first (a header and library of one installation).
  set(root "")
  if(${prefix}_INCLUDE_DIR)
    get_filename_component(root "${${prefix}_INCLUDE_DIR}" DIRECTORY)
  endif()
  find_library(${prefix}_LIBRARY NAMES ${ARGN}
               HINTS ${root} ${HARNESS_${prefix}_ROOT} ${CUDAToolkit_LIBRARY_DIR} ${wheels}
               PATH_SUFFIXES lib64 lib)
endfunction()

# Links `target` with the library found by harness_find_vendor_library and defines `define`.
# The library's folder goes on the run path of whatever links `target`: cuDNN 9 loads its
# sub-libraries from its own folder, and a wheel's copy is then found without LD_LIBRARY_PATH.
function(harness_link_vendor_library target prefix define)
  target_include_directories(${target} PRIVATE ${${prefix}_INCLUDE_DIR})
  target_link_libraries(${target} PRIVATE ${${prefix}_LIBRARY})
  target_compile_definitions(${target} PRIVATE ${define}=1)
  get_filename_component(libdir "${${prefix}_LIBRARY}" DIRECTORY)
  target_link_options(${target} INTERFACE "LINKER:-rpath,${libdir}")
endfunction()
