// Every switch of the layers above the backends, declared once: type, allowed
// values, default, one line on what it does, and who reads it. README.md's
// environment table lists the same switches (a unit test compares the two).
#include "hearth/core/switch_list.h"

#include <string>

namespace {

// HEARTH_STORE_TOKEN: 16 to 256 printable characters without spaces, so the
// same secret reaches every rank intact through shells and launchers.
std::string store_token_problem(const std::string& token) {
  constexpr size_t kMin = 16, kMax = 256;
  if (token.size() < kMin || token.size() > kMax)
    return "must have 16 to 256 characters, it has " + std::to_string(token.size()) +
           " (generate one with: openssl rand -hex 32)";
  for (char ch : token)
    if (ch <= ' ' || ch >= 127)
      return "must be printable characters without spaces (generate one with: openssl rand -hex 32)";
  return "";
}

}  // namespace

using hearth::SwitchReading;

// ---- dispatch ------------------------------------------------------------------
HEARTH_DECLARE_SWITCH(
    FlagSwitch, enable_cpu_fallback,
    {.name = "HEARTH_ENABLE_CPU_FALLBACK",
     .default_value = "0",
     .description = "run an op a device has no kernel for on the CPU, copying its tensors there and back",
     .reader = "hearth/dispatch/dispatch.cpp (at every dispatch miss)",
     .reading = SwitchReading::each_use})
HEARTH_DECLARE_SWITCH(FlagSwitch, log_dispatch,
                      {.name = "HEARTH_LOG_DISPATCH",
                       .default_value = "0",
                       .description = "print every dispatch decision (op, device, dtype, fallback) to stderr",
                       .reader = "hearth/dispatch/dispatch.cpp"})
HEARTH_DECLARE_SWITCH(FlagSwitch, cpu_reference,
                      {.name = "HEARTH_CPU_REFERENCE",
                       .default_value = "0",
                       .description = "run every CPU op on hearth's own kernels, never an optional library's",
                       .reader = "hearth/dispatch/cpu_reference.cpp (at every call)",
                       .reading = SwitchReading::each_use})
HEARTH_DECLARE_SWITCH(WordsSwitch, profile_ops,
                      {.name = "HEARTH_PROFILE_OPS",
                       .default_value = "0",
                       .description = "time every dispatched kernel and print a table at exit (1: synchronised, host, "
                                      "events)",
                       .reader = "hearth/dispatch/op_profiler.cpp",
                       .words = {"0", "1", "off", "on", "false", "true", "no", "yes", "host", "events"}})
HEARTH_DECLARE_SWITCH(IntegerSwitch, profile_ops_rows,
                      {.name = "HEARTH_PROFILE_OPS_ROWS",
                       .default_value = "40",
                       .description = "how many of the op profile's longest rows to print",
                       .reader = "hearth/dispatch/op_profiler.cpp",
                       .min = 1,
                       .max = 1000000})

// ---- the CPU runtime -------------------------------------------------------------
HEARTH_DECLARE_SWITCH(WordsSwitch, cpu_level,
                      {.name = "HEARTH_CPU_LEVEL",
                       .default_value = "",
                       .description = "the instruction set of the hot CPU kernels (unset: the best this CPU and build "
                                      "support)",
                       .reader = "hearth/core/cpu_level.cpp",
                       .words = {"baseline", "avx2", "avx512"}})
HEARTH_DECLARE_SWITCH(BytesSwitch, cpu_memory_limit,
                      {.name = "HEARTH_CPU_MEMORY_LIMIT",
                       .default_value = "",
                       .description = "the most host memory live CPU tensors may hold (unset or 0: no limit)",
                       .reader = "hearth/core/cpu_runtime.cpp (at the first allocation)",
                       .min = 0,
                       .max = 1125899906842624.0})  // 1 PiB

// ---- the backend options' starting values ------------------------------------------
HEARTH_DECLARE_SWITCH(FlagSwitch, allow_tf32,
                      {.name = "HEARTH_ALLOW_TF32",
                       .default_value = "1",
                       .description = "float32 products and convolutions may use reduced-precision (TF32-class) "
                                      "products where a backend has them (0: float32 matmul precision 'highest')",
                       .reader = "hearth/core/backend_options.cpp (once, at the first use of the options)"})
HEARTH_DECLARE_SWITCH(FlagSwitch, convolution_benchmark,
                      {.name = "HEARTH_CUDNN_BENCHMARK",
                       .default_value = "0",
                       .description = "time a backend's candidate convolution algorithms at each plan's first use and "
                                      "keep the fastest",
                       .reader = "hearth/core/backend_options.cpp (once, at the first use of the options)"})

// ---- ops and models ------------------------------------------------------------------
HEARTH_DECLARE_SWITCH(FlagSwitch, fused_attention,
                      {.name = "HEARTH_FUSED_ATTENTION",
                       .default_value = "1",
                       .description = "run scaled_dot_product_attention as one fused kernel where the backend has one",
                       .reader = "hearth/ops/fused_attention.cpp"})
HEARTH_DECLARE_SWITCH(FlagSwitch, fold_batch_norm,
                      {.name = "HEARTH_FOLD_BATCH_NORM",
                       .default_value = "1",
                       .description = "fold inference batch norms into the convolution before them",
                       .reader = "hearth/nn/conv_batchnorm.cpp"})
HEARTH_DECLARE_SWITCH(FlagSwitch, check_indices,
                      {.name = "HEARTH_CHECK_INDICES",
                       .default_value = "0",
                       .description = "check index tensors on the host before indexing ops on any device",
                       .reader = "hearth/ops/index.cpp (at every call)",
                       .reading = SwitchReading::each_use})

// ---- data ----------------------------------------------------------------------------
HEARTH_DECLARE_SWITCH(FlagSwitch, image_fast_decode,
                      {.name = "HEARTH_IMAGE_FAST_DECODE",
                       .default_value = "1",
                       .description = "decode only the region of a JPEG a crop needs, at a reduced scale where it may",
                       .reader = "hearth/data/encoded_image.cpp (at every image)",
                       .reading = SwitchReading::each_use})
HEARTH_DECLARE_SWITCH(WordsSwitch, image_decoder,
                      {.name = "HEARTH_IMAGE_DECODER",
                       .default_value = "auto",
                       .description = "where images are decoded for an accelerator's batches",
                       .reader = "hearth/data/image_decoder_choice.cpp (when a data loader is made)",
                       .reading = SwitchReading::each_use,
                       .words = {"auto", "cpu", "gpu"}})

// ---- data parallelism ------------------------------------------------------------------
HEARTH_DECLARE_SWITCH(NumberSwitch, dist_timeout,
                      {.name = "HEARTH_DIST_TIMEOUT",
                       .default_value = "",
                       .description = "seconds a collective or the rendezvous store waits for the other processes "
                                      "(unset: --ddp_timeout)",
                       .reader = "hearth/distributed/rendezvous.cpp (when a process group is made)",
                       .reading = SwitchReading::each_use,
                       .min = 0.001,
                       .max = 604800})  // a week
HEARTH_DECLARE_SWITCH(TextSwitch, store_token,
                      {.name = "HEARTH_STORE_TOKEN",
                       .default_value = "",
                       .description = "the secret every rank presents to rank 0's rendezvous store (unset: none)",
                       .reader = "hearth/distributed/rendezvous.cpp (when a process group is made)",
                       .reading = SwitchReading::each_use,
                       .check = store_token_problem,
                       .allowed = "16 to 256 printable characters without spaces",
                       .secret = true})

// ---- programs ----------------------------------------------------------------------------
HEARTH_DECLARE_SWITCH(TextSwitch, config_file,
                      {.name = "HEARTH_CONFIG_FILE",
                       .default_value = "",
                       .description = "the config file to read instead of $XDG_CONFIG_HOME/hearth/config.json",
                       .reader = "apps/common/user_config.cpp",
                       .reading = SwitchReading::each_use,
                       .allowed = "a file's path"})

// ---- test hooks --------------------------------------------------------------------------
HEARTH_DECLARE_SWITCH(IntegerSwitch, test_fail_write,
                      {.name = "HEARTH_TEST_FAIL_WRITE",
                       .default_value = "",
                       .description = "test hook: atomic file writes fail as on a full disk after this many bytes",
                       .reader = "hearth/io/atomic_file.cpp (at every write)",
                       .reading = SwitchReading::each_use,
                       .min = 0,
                       .max = 9007199254740992.0})  // 2^53
HEARTH_DECLARE_SWITCH(
    FlagSwitch, test_fail_remove,
    {.name = "HEARTH_TEST_FAIL_REMOVE",
     .default_value = "0",
     .description = "test hook: removing a rotated checkpoint stops with an error after its first file",
     .reader = "hearth/train/checkpoint.cpp (at every removal)",
     .reading = SwitchReading::each_use})
HEARTH_DECLARE_SWITCH(IntegerSwitch, test_pause_write_ms,
                      {.name = "HEARTH_TEST_PAUSE_WRITE_MS",
                       .default_value = "0",
                       .description = "test hook: milliseconds to sleep before each atomic file is renamed into place",
                       .reader = "hearth/io/atomic_file.cpp (at every write)",
                       .reading = SwitchReading::each_use,
                       .min = 0,
                       .max = 3600000})
