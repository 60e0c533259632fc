#include "hearth/ops/attention.h"

#include <cmath>

#include "hearth/core/errors.h"
#include "hearth/ops/autocast_policy.h"
#include "hearth/ops/fused_attention_path.h"
#include "hearth/ops/linalg.h"
#include "hearth/ops/view.h"

namespace hearth {
namespace {

std::string describe(const Tensor& t) { return t.defined() ? t.shape_string() : std::string("undefined"); }

void check_operands(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, double dropout_p) {
  HEARTH_CHECK(q.defined() && k.defined() && v.defined(), ValueError,
               "[scaled_dot_product_attention] q, k and v must be defined");
  HEARTH_CHECK(q.dim() >= 2 && k.dim() >= 2 && v.dim() >= 2, ShapeError,
               "[scaled_dot_product_attention] expected q [..., L, D], k [..., S, D], v [..., S, Dv], got q ",
               describe(q), ", k ", describe(k), ", v ", describe(v));
  HEARTH_CHECK(q.is_floating_point() && k.dtype() == q.dtype() && v.dtype() == q.dtype(), TypeError,
               "[scaled_dot_product_attention] expected q, k and v of one floating dtype, got ", dtype_name(q.dtype()),
               ", ", dtype_name(k.dtype()), " and ", dtype_name(v.dtype()));
  HEARTH_CHECK(k.size(-1) == q.size(-1), ShapeError,
               "[scaled_dot_product_attention] q and k must share the last dim D, got q ", describe(q), " and k ",
               describe(k));
  HEARTH_CHECK(v.size(-2) == k.size(-2), ShapeError,
               "[scaled_dot_product_attention] k and v must share the sequence dim S, got k ", describe(k), " and v ",
               describe(v));
  HEARTH_CHECK(!mask.defined() || mask.is_floating_point(), TypeError,
               "[scaled_dot_product_attention] attn_mask must be an additive floating mask, got ",
               dtype_name(mask.dtype()));
  HEARTH_CHECK(dropout_p >= 0.0 && dropout_p < 1.0, ValueError,
               "[scaled_dot_product_attention] dropout_p must be in [0, 1), got ", dropout_p);
}

}  // namespace

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& attn_mask,
                                    double dropout_p, bool training, std::optional<double> scale) {
  // The mask follows q's dtype below, by the contract above.
  if (auto ac = detail::autocast("scaled_dot_product_attention", q, k, v))
    return scaled_dot_product_attention(ac[0], ac[1], ac[2], attn_mask, dropout_p, training, scale);
  check_operands(q, k, v, attn_mask, dropout_p);
  const double factor = scale.value_or(1.0 / std::sqrt(static_cast<double>(q.size(-1))));
  if (auto fused = detail::fused_attention_if_taken(q, k, v, attn_mask, training ? dropout_p : 0.0, factor))
    return *fused;
  Tensor scores = matmul(q, transpose(k, -2, -1));
  return matmul(attention_softmax(scores, attn_mask, factor, dropout_p, training), v);
}

}  // namespace hearth
