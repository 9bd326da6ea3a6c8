// attention.h: umbrella header for the attention family (simple, scaled dot-product, multi-head,
// additive, kernel regression). Layer: attention (composes ops/; never includes the kernels layer).
#pragma once

#include "attention/additive.h"
#include "attention/attention_output.h"
#include "attention/kernel_regression.h"
#include "attention/multi_head.h"
#include "attention/scaled_dot_product.h"
#include "attention/simple.h"
