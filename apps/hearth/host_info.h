// What `hearth env` says of the machine, as `accelerate env` does: the
// operating system, the physical memory and the CPU model.
#pragma once

#include <string>

namespace hearth::cli {

// "Debian GNU/Linux 12 (bookworm), Linux 6.1.0 x86_64"; parts that cannot be read are left out.
std::string operating_system();
// "23.4 GiB"; "unknown" where the system does not say.
std::string physical_memory();
// "Intel(R) Xeon(R) Platinum 8480+, 16 processors"; "unknown" where /proc/cpuinfo has no model name.
std::string cpu_model();

}  // namespace hearth::cli
