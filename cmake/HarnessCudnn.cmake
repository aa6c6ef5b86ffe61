# cuDNN, optional, for the families that use it as their vendor reference (softmax,
# conv2d). Looked for in HARNESS_CUDNN_ROOT, the CUDA toolkit, and the nvidia-cudnn Python
# wheels (where the GPU machine may have it only inside PyTorch's environment). The search
# runs once per configure (include_guard); CUDNN_INCLUDE_DIR and CUDNN_LIBRARY are cached.
#
#   include(${CMAKE_SOURCE_DIR}/cmake/HarnessCudnn.cmake)
#   harness_use_cudnn(kernels_softmax KERNELS_SOFTMAX_HAVE_CUDNN)
#
# links the target with cuDNN and defines the macro where cuDNN was found; otherwise it says
# so and the target's cuDNN code compiles to a stub (its variant skips with the reason).
include_guard(GLOBAL)

set(HARNESS_CUDNN_ROOT "" CACHE PATH "cuDNN installation (include/cudnn.h, lib/libcudnn.so); empty: search")
file(GLOB _cudnn_wheels
     /opt/torch/.venv/lib/python3*/site-packages/nvidia/cudnn
     /usr/local/lib/python3*/dist-packages/nvidia/cudnn
     /usr/lib/python3/dist-packages/nvidia/cudnn
     $ENV{HOME}/.local/lib/python3*/site-packages/nvidia/cudnn)
find_path(CUDNN_INCLUDE_DIR cudnn.h
          HINTS ${HARNESS_CUDNN_ROOT} ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_LIBRARY_ROOT} ${_cudnn_wheels}
          PATH_SUFFIXES include)
# The library next to the header first (a header and library of one installation).
if(CUDNN_INCLUDE_DIR)
  get_filename_component(_cudnn_root "${CUDNN_INCLUDE_DIR}" DIRECTORY)
endif()
find_library(CUDNN_LIBRARY NAMES cudnn libcudnn.so.9 libcudnn.so.8
             HINTS ${_cudnn_root} ${HARNESS_CUDNN_ROOT} ${CUDAToolkit_LIBRARY_DIR} ${_cudnn_wheels}
             PATH_SUFFIXES lib64 lib)

function(harness_use_cudnn target define)
  if(CUDNN_INCLUDE_DIR AND CUDNN_LIBRARY)
    message(STATUS "${target}: cuDNN found: ${CUDNN_LIBRARY} (headers ${CUDNN_INCLUDE_DIR})")
    target_include_directories(${target} PRIVATE ${CUDNN_INCLUDE_DIR})
    target_link_libraries(${target} PRIVATE ${CUDNN_LIBRARY})
    target_compile_definitions(${target} PRIVATE ${define}=1)
    # cuDNN 9 loads its sub-libraries (libcudnn_ops.so.9, ...) from its own folder; the
    # folder on the run path lets a wheel's copy be found without LD_LIBRARY_PATH.
    get_filename_component(_cudnn_libdir "${CUDNN_LIBRARY}" DIRECTORY)
    target_link_options(${target} INTERFACE "LINKER:-rpath,${_cudnn_libdir}")
  else()
    message(STATUS "${target}: cuDNN not found (set HARNESS_CUDNN_ROOT); its cudnn variant will be skipped")
  endif()
endfunction()
