// Anomaly detection, after torch.autograd.detect_anomaly: while a guard is
// alive, every op's floating outputs, forward and backward, are checked for
// NaN and infinity, and the first op that produced one throws NonFiniteError
// naming itself, its input and output shapes, and, in a backward pass, the
// graph node whose gradient formula ran it:
//
//   {
//     hearth::autograd::DetectAnomalyGuard anomaly;
//     Tensor loss = cross_entropy(model.forward(x), y);
//     loss.backward();
//   }
//
// Every output is scanned (and copied to the host when on a device), so this
// is for finding the step that goes bad, not for production runs. The switch
// is process-wide; guards nest and restore what they found. `hearth train
// --detect_anomaly` holds one for the whole run.
#pragma once

#include "hearth/dispatch/anomaly_check.h"

namespace hearth::autograd {

class DetectAnomalyGuard {
 public:
  explicit DetectAnomalyGuard(bool enabled = true) : prev_(anomaly_detection_enabled()) {
    set_anomaly_detection_enabled(enabled);
  }
  ~DetectAnomalyGuard() { set_anomaly_detection_enabled(prev_); }
  DetectAnomalyGuard(const DetectAnomalyGuard&) = delete;
  DetectAnomalyGuard& operator=(const DetectAnomalyGuard&) = delete;

 private:
  bool prev_;
};

inline bool is_anomaly_enabled() { return anomaly_detection_enabled(); }

}  // namespace hearth::autograd
