// The check behind anomaly detection (hearth/autograd/anomaly_mode.h holds the
// user's switch): while it is on, dispatch() looks at every floating output
// of every op, and at the inputs the op writes in place, and throws
// NonFiniteError at the first NaN or infinity, naming the op and the shapes,
// and, inside a backward pass, the graph node whose formula was running.
// Off, it costs one relaxed atomic load per op.
#pragma once

#include <string>
#include <vector>

#include "hearth/core/errors.h"
#include "hearth/dispatch/registry.h"

namespace hearth {

// A NaN or an infinity where anomaly detection looks: what an op, forward or
// backward, produced. A hearth::Error like those of hearth/core/errors.h.
class NonFiniteError : public Error {
 public:
  using Error::Error;
};

bool anomaly_detection_enabled();
void set_anomaly_detection_enabled(bool enabled);

// While alive, checks name `node` as the backward formula that is running
// (set by the autograd engine around each node's apply()).
class AnomalyBackwardScope {
 public:
  explicit AnomalyBackwardScope(const std::string& node);
  ~AnomalyBackwardScope();
  AnomalyBackwardScope(const AnomalyBackwardScope&) = delete;
  AnomalyBackwardScope& operator=(const AnomalyBackwardScope&) = delete;

 private:
  const std::string* prev_;
};

// Called by dispatch() after a kernel ran, when anomaly detection is on.
void check_op_outputs_finite(OpHandle op, const OpCall& call);
// Called by the autograd engine after a node's apply(): the gradients it
// returned for its inputs (some come from no op, e.g. a reshape's).
void check_gradients_finite(const std::string& node, const std::vector<Tensor>& grads);

}  // namespace hearth
