#pragma once
// The one place where LibTorch 1.13 (Debian) and 2.x (PyTorch wheels) differ.

#include <torch/version.h>

#define FOXHUNT_TORCH_AT_LEAST(major, minor) \
    (TORCH_VERSION_MAJOR > (major) || (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))
