// The operations of the elementwise kernel (elementwise.comp), one number
// each: included by the shader (GLSL's preprocessor) and by elementwise.h, so
// the two never disagree. Also the dtype codes, hearth's DType values.
#ifndef HEARTH_VULKAN_ELEMENTWISE_OPS_H
#define HEARTH_VULKAN_ELEMENTWISE_OPS_H

#define EW_COPY 0          // out = a (any dtypes: the conversion)
#define EW_FILL 1          // out = scalar 0
#define EW_NEG 2
#define EW_ABS 3
#define EW_EXP 4
#define EW_LOG 5
#define EW_SQRT 6
#define EW_RSQRT 7
#define EW_SIGN 8
#define EW_SQUARE 9
#define EW_ISNAN 10
#define EW_ISFINITE 11
#define EW_LOGICAL_NOT 12
#define EW_RELU 13
#define EW_RELU_BACKWARD 14  // a = grad, b = y: y > 0 ? grad : 0
#define EW_SIGMOID 15
#define EW_TANH 16
#define EW_SILU 17
#define EW_GELU 18           // scalar flag 0: tanh approximation when != 0
#define EW_GELU_BACKWARD 19  // a = grad, b = x
#define EW_ADD 20            // a + scalar 0 * b
#define EW_SUB 21            // a - scalar 0 * b
#define EW_MUL 22
#define EW_DIV 23
#define EW_MAXIMUM 24        // NaN-propagating
#define EW_MINIMUM 25
#define EW_EQ 26
#define EW_NE 27
#define EW_LT 28
#define EW_LE 29
#define EW_GT 30
#define EW_GE 31
#define EW_LOGICAL_AND 32
#define EW_LOGICAL_OR 33
#define EW_LOGICAL_XOR 34
#define EW_WHERE 35          // c ? a : b
#define EW_CLAMP 36          // min(max(a, scalar 0), scalar 1); flags say which bounds are present
#define EW_POW 37

#define DT_FLOAT32 0
#define DT_FLOAT64 1
#define DT_BFLOAT16 2
#define DT_FLOAT16 3
#define DT_INT64 4
#define DT_INT32 5
#define DT_UINT8 6
#define DT_BOOL 7

#define EW_MAX_DIMS 8

#endif
