// Every switch of the CPU backend, declared once (see hearth/core/switches.h).
// Declared whether or not oneDNN is built in, so `hearth env` and the README's
// table list the same switches in every build.
#include "hearth/backends/cpu/cpu_switches.h"

using hearth::SwitchReading;

HEARTH_DECLARE_SWITCH(WordsSwitch, onednn_layout,
                      {.name = "HEARTH_ONEDNN_LAYOUT",
                       .default_value = "auto",
                       .description = "oneDNN builds: compute convolutions on the tensors' own layouts (plain), on "
                                      "oneDNN's blocked ones (blocked), or choose per convolution (auto)",
                       .reader = "hearth/backends/cpu/onednn/convolution.cpp",
                       .words = {"auto", "plain", "blocked"}})
HEARTH_DECLARE_SWITCH(FlagSwitch, onednn_always,
                      {.name = "HEARTH_ONEDNN_ALWAYS",
                       .default_value = "0",
                       .description = "oneDNN builds: give oneDNN every convolution it can compute, also those it "
                                      "measured slower on",
                       .reader = "hearth/backends/cpu/onednn/size_rule.cpp (at every convolution)",
                       .reading = SwitchReading::each_use})
