# cuDNN, optional, for the families that use it as their vendor reference (softmax,
# conv2d); found as cmake/HarnessVendorLibrary.cmake says (HARNESS_CUDNN_ROOT, the CUDA
# toolkit, the nvidia-cudnn Python wheels).
#
#   include(${CMAKE_SOURCE_DIR}/cmake/HarnessCudnn.cmake)
#   harness_use_cudnn(kernels_softmax KERNELS_SOFTMAX_HAVE_CUDNN)
#
# links the target with cuDNN and defines the macro where cuDNN was found; otherwise it says
# so and the target's cuDNN code compiles to a stub (its variant skips with the reason).
include_guard(GLOBAL)
include(${CMAKE_CURRENT_LIST_DIR}/HarnessVendorLibrary.cmake)

harness_find_vendor_library(CUDNN cudnn.h cudnn cudnn libcudnn.so.9 libcudnn.so.8)

function(harness_use_cudnn target define)
  if(CUDNN_INCLUDE_DIR AND CUDNN_LIBRARY)
    message(STATUS "${target}: cuDNN found: ${CUDNN_LIBRARY} (headers ${CUDNN_INCLUDE_DIR})")
    harness_link_vendor_library(${target} CUDNN ${define})
  else()
    message(STATUS "${target}: cuDNN not found (set HARNESS_CUDNN_ROOT); its cudnn variant will be skipped")
  endif()
endfunction()
