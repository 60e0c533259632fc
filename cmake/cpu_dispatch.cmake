# Run-time CPU dispatch for the hot CPU kernels (hearth/core/cpu_level.h).
#
# The library itself is compiled for the distribution's baseline, so one build
# runs on every x86-64 CPU. The files of HEARTH_CPU_LEVEL_SOURCES are compiled
# once for each level, baseline included, into object libraries of their own
# (the library's own sources leave them out); each copy registers its kernels
# only when its level is the one in use.
#
# Why the level copies are linked after the library's own objects: code the
# copies share with the rest of the library (inline functions and templates of
# the headers) is emitted in every object that uses it, and the linker keeps the
# first definition it sees. With the baseline objects first, the kept copy is
# always one the baseline CPU can run; the wider copies then call it when they
# do not inline it, which costs a call and never a crash.
#
# Call hearth_cpu_dispatch(<library>) after the library target exists. Sets
# HEARTH_CPU_DISPATCH_STATUS for the configure summary.
set(HEARTH_CPU_LEVEL_SOURCES
  # elementwise
  hearth/backends/cpu/unary.cpp hearth/backends/cpu/activation.cpp hearth/backends/cpu/binary.cpp
  hearth/backends/cpu/clamp.cpp hearth/backends/cpu/where.cpp hearth/backends/cpu/optim.cpp
  # reductions and the normalisations built on them
  hearth/backends/cpu/reduce_sum.cpp hearth/backends/cpu/reduce_minmax.cpp hearth/backends/cpu/reduce_norm.cpp
  hearth/backends/cpu/reduce_var.cpp hearth/backends/cpu/softmax.cpp hearth/backends/cpu/batch_norm.cpp
  hearth/backends/cpu/layer_norm.cpp hearth/backends/cpu/dropout_add_layer_norm.cpp
  # im2col (conv2d; its oneDNN path is compiled once: cmake/onednn.cmake) and pooling
  hearth/backends/cpu/conv2d.cpp hearth/backends/cpu/pooling.cpp
  # image resizing in the data pipeline
  hearth/data/image_resize_passes.cpp)
list(TRANSFORM HEARTH_CPU_LEVEL_SOURCES PREPEND ${CMAKE_SOURCE_DIR}/)

if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  set(_hearth_cpu_dispatch_default ON)
else()
  set(_hearth_cpu_dispatch_default OFF)
endif()
option(HEARTH_CPU_DISPATCH "Also compile the hot CPU kernels for AVX2 and AVX-512 and choose at run time (x86-64)"
       ${_hearth_cpu_dispatch_default})

function(hearth_cpu_dispatch library)
  # Level names as hearth/core/cpu_level.h spells them, with the -march of each
  # (none for the baseline: the compiler's default, which is the distribution's).
  set(_levels baseline)
  if(HEARTH_CPU_DISPATCH)
    list(APPEND _levels avx2 avx512)
  endif()
  set(_march_avx2 -march=x86-64-v3)
  # 256-bit vectors still, as compilers tune for AVX-512 server CPUs: its
  # masks, extra registers and instructions without the 512-bit operations
  # that lower the clock of many Intel CPUs.
  set(_march_avx512 -march=x86-64-v4 -mprefer-vector-width=256)
  foreach(_level ${_levels})
    set(_copy ${library}_cpu_${_level})
    add_library(${_copy} OBJECT ${HEARTH_CPU_LEVEL_SOURCES})
    set_target_properties(${_copy} PROPERTIES POSITION_INDEPENDENT_CODE ON)
    # Everything the library's own objects are compiled with, then the level.
    target_include_directories(${_copy} PRIVATE $<TARGET_PROPERTY:${library},INCLUDE_DIRECTORIES>)
    target_compile_definitions(${_copy} PRIVATE $<TARGET_PROPERTY:${library},COMPILE_DEFINITIONS>
                               HEARTH_CPU_KERNEL_LEVEL=${_level})
    target_compile_options(${_copy} PRIVATE $<TARGET_PROPERTY:${library},COMPILE_OPTIONS> ${_march_${_level}})
    target_link_libraries(${_copy} PRIVATE OpenMP::OpenMP_CXX nlohmann_json::nlohmann_json)
    target_sources(${library} PRIVATE $<TARGET_OBJECTS:${_copy}>)
  endforeach()
  # cpu_level.cpp caps the level at the highest one built.
  list(LENGTH _levels _count)
  math(EXPR _highest "${_count} - 1")
  set_property(SOURCE ${CMAKE_SOURCE_DIR}/hearth/core/cpu_level.cpp APPEND PROPERTY COMPILE_DEFINITIONS
               HEARTH_CPU_LEVELS_BUILT=${_highest})
  string(REPLACE ";" ", " _names "${_levels}")
  if(HEARTH_CPU_DISPATCH)
    set(HEARTH_CPU_DISPATCH_STATUS "${_names}, chosen at run time" PARENT_SCOPE)
  else()
    set(HEARTH_CPU_DISPATCH_STATUS "baseline only" PARENT_SCOPE)
  endif()
endfunction()
