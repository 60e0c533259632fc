// Everything a model definition needs from hearth::nn: Module, the layers,
// containers and init.
#pragma once

#include "hearth/nn/activation.h"
#include "hearth/nn/batchnorm.h"
#include "hearth/nn/container.h"
#include "hearth/nn/conv.h"
#include "hearth/nn/dropout.h"
#include "hearth/nn/embedding.h"
#include "hearth/nn/flatten.h"
#include "hearth/nn/init.h"
#include "hearth/nn/layer_norm.h"
#include "hearth/nn/linear.h"
#include "hearth/nn/module.h"
#include "hearth/nn/pooling.h"
#include "hearth/nn/pretrained.h"
