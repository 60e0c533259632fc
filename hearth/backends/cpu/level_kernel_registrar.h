// Registration for the CPU kernel files that are compiled once per CPU level
// (HEARTH_CPU_LEVEL_SOURCES in cmake/cpu_dispatch.cmake; hearth/core/cpu_level.h
// says why). Every copy of such a file holds the same kernels built for one
// level; only the copy built for the level in use registers them, so each op
// still has exactly one CPU kernel.
#pragma once

#include "hearth/core/cpu_level.h"
#include "hearth/dispatch/registry.h"

#ifndef HEARTH_CPU_KERNEL_LEVEL
#error "this file is compiled once per CPU level: list it in HEARTH_CPU_LEVEL_SOURCES (cmake/cpu_dispatch.cmake)"
#endif

namespace hearth::cpu {

struct LevelKernelRegistrar {
  LevelKernelRegistrar(CpuLevel built_for, OpId op, KernelFn fn, DTypeSet dtypes, const char* file) {
    if (built_for == cpu_level()) register_kernel(op, kCpu, fn, dtypes, file);
  }
};

}  // namespace hearth::cpu

// As HEARTH_REGISTER_KERNEL(op, kCpu, kernel, dtypes), for this file's level.
#define HEARTH_REGISTER_CPU_KERNEL(op, ...)                                                   \
  const ::hearth::cpu::LevelKernelRegistrar hearth_cpu_kernel_registrar_##op(                 \
      ::hearth::CpuLevel::HEARTH_CPU_KERNEL_LEVEL, ::hearth::OpId::op, __VA_ARGS__, __FILE__)
