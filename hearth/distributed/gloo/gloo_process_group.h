// The Gloo backend: collectives over TCP between CPU processes (Debian's
// libgloo-dev). Each rank connects to every other through Gloo's TCP
// transport; the addresses are exchanged through the rendezvous store.
// Collectives run one at a time, in call order, on a thread of the group, so
// gradient all-reduces proceed while backward goes on computing; Gloo's
// per-operation timeout bounds each one.
#pragma once

#include <memory>
#include <string>

#include "hearth/distributed/process_group.h"

namespace hearth::distributed {

class TcpStore;

// Connects all ranks (blocks until every rank has joined, or the timeout).
ProcessGroupPtr new_gloo_process_group(const std::shared_ptr<TcpStore>& store, const ProcessGroupOptions& options);

// The address this rank's Gloo transport listens on: GLOO_SOCKET_IFNAME's
// interface when set, the loopback address when rank 0 is on loopback (a
// single machine), else this host's name.
std::string gloo_hostname(const std::string& master_addr);

}  // namespace hearth::distributed
