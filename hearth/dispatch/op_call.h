// One invocation of an op as a backend sees it: input tensors, output tensors
// already allocated (shapes and dtypes decided by hearth/ops), and the op's
// attributes as a typed struct. Backends never validate; the ops layer has.
#pragma once

#include <typeinfo>
#include <vector>

#include "hearth/core/errors.h"
#include "hearth/core/tensor.h"

namespace hearth {

struct OpCall {
  std::vector<Tensor> inputs;   // an undefined Tensor marks an absent optional input
  std::vector<Tensor> outputs;  // written by the kernel
  const void* attrs_ptr = nullptr;
  const std::type_info* attrs_type = nullptr;

  template <typename A>
  void set_attrs(const A& a) {
    attrs_ptr = &a;
    attrs_type = &typeid(A);
  }
  template <typename A>
  const A& attrs() const {
    HEARTH_CHECK(attrs_type && *attrs_type == typeid(A), TypeError, "[dispatch] kernel expected attributes of type ",
                 typeid(A).name(), " but the call carries ", attrs_type ? attrs_type->name() : "none");
    return *static_cast<const A*>(attrs_ptr);
  }
  const Tensor& in(size_t i) const { return inputs[i]; }
  const Tensor& out(size_t i) const { return outputs[i]; }
};

using KernelFn = void (*)(OpCall&);

}  // namespace hearth
