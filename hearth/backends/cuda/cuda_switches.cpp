// Every switch of the CUDA backend, declared once (see hearth/core/switches.h).
#include "hearth/backends/cuda/cuda_switches.h"

#include <string>

using hearth::SwitchReading;

HEARTH_DECLARE_SWITCH(NumberSwitch, cuda_memory_fraction,
                      {.name = "HEARTH_CUDA_MEMORY_FRACTION",
                       .default_value = "",
                       .description = "CUDA builds: the fraction of device memory hearth's allocator may hold (unset: "
                                      "all)",
                       .reader = "hearth/backends/cuda/allocator.cu (when a device's pool is made)",
                       .reading = SwitchReading::each_use,
                       .min = 0.001,
                       .max = 1})
HEARTH_DECLARE_SWITCH(TextSwitch, cuda_driver_library,
                      {.name = "HEARTH_CUDA_DRIVER_LIBRARY",
                       .default_value = "libcuda.so.1",
                       .description = "CUDA builds: the driver library checked to load before CUDA is initialised",
                       .reader = "hearth/backends/cuda/runtime.cu (once, when the runtime starts)",
                       .allowed = "a library's file name or path"})
HEARTH_DECLARE_SWITCH(FlagSwitch, cudnn_fusion,
                      {.name = "HEARTH_CUDNN_FUSION",
                       .default_value = "1",
                       .description = "CUDA builds: compile a convolution's bias, residual add and ReLU into its "
                                      "epilogue where an engine takes it",
                       .reader = "hearth/backends/cuda/conv2d_plans.cu"})
HEARTH_DECLARE_SWITCH(FlagSwitch, cudnn_legacy,
                      {.name = "HEARTH_CUDNN_LEGACY",
                       .default_value = "0",
                       .description = "CUDA builds: keep every convolution on the vendor library's legacy entry points",
                       .reader = "hearth/backends/cuda/conv2d_plans.cu"})
HEARTH_DECLARE_SWITCH(FlagSwitch, cudnn_log,
                      {.name = "HEARTH_CUDNN_LOG",
                       .default_value = "0",
                       .description = "CUDA builds: print the engine and planning time of each convolution and "
                                      "attention plan",
                       .reader = "hearth/backends/cuda/cudnn_graph.cu, fused_attention_plans.cu",
                       .reading = SwitchReading::each_use})
HEARTH_DECLARE_SWITCH(TextSwitch, nvjpeg_library,
                      {.name = "HEARTH_NVJPEG_LIBRARY",
                       .default_value = "",
                       .description = "CUDA builds: the nvJPEG file to open (unset: the usual names on the library "
                                      "path and beside cuBLASLt)",
                       .reader = "hearth/backends/cuda/image/nvjpeg_library.cpp (when the decoder is made)",
                       .reading = SwitchReading::each_use,
                       .allowed = "a library's file name or path"})
HEARTH_DECLARE_SWITCH(WordsSwitch, nvjpeg_backend,
                      {.name = "HEARTH_NVJPEG_BACKEND",
                       .default_value = "auto",
                       .description = "CUDA builds: which nvJPEG decoders decode (the JPEG engines, the hybrid "
                                      "decoder, or both)",
                       .reader = "hearth/backends/cuda/image/nvjpeg_decoder.cpp (when the decoder is made)",
                       .reading = SwitchReading::each_use,
                       .words = {"auto", "hardware", "hybrid"}})
HEARTH_DECLARE_SWITCH(NumberSwitch, nvjpeg_hardware_share,
                      {.name = "HEARTH_NVJPEG_HARDWARE_SHARE",
                       .default_value = "1",
                       .description = "CUDA builds: the share of each batch the JPEG engines decode when both "
                                      "decoders are there",
                       .reader = "hearth/backends/cuda/image/nvjpeg_decoder.cpp (when the decoder is made)",
                       .reading = SwitchReading::each_use,
                       .min = 0,
                       .max = 1})
HEARTH_DECLARE_SWITCH(FlagSwitch, image_decode_report,
                      {.name = "HEARTH_IMAGE_DECODE_REPORT",
                       .default_value = "0",
                       .description = "CUDA builds: every 50 batches, one line on how many images the GPU and the "
                                      "host decoded",
                       .reader = "hearth/backends/cuda/image/cuda_image_decoder.cpp (when the decoder is made)",
                       .reading = SwitchReading::each_use})
