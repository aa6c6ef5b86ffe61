#pragma once
// ReLU and GeLU (tanh approximation) and their derivatives as device functors, shared by
// the activation kernels (elementwise.cu) and the fused bias + activation (fused_bias_act.cu).
// (Internal to kernels/nn; the formulas are nn.hpp's.)
#include <cmath>

namespace kernels::nn::detail {

template <class T>
struct ReluF {
  __device__ T operator()(T x) const { return x > T(0) ? x : T(0); }
};
template <class T>
struct ReluGradF {
  __device__ T operator()(T x, T dy) const { return x > T(0) ? dy : T(0); }
};

// GeLU, tanh approximation: u = sqrt(2/pi) (x + 0.044715 x^3), y = 0.5 x (1 + tanh u).
constexpr double kGeluBeta = 0.7978845608028654;  // sqrt(2 / pi)
constexpr double kGeluKappa = 0.044715;

template <class T>
struct GeluF {
  __device__ T operator()(T x) const {
    const T u = T(kGeluBeta) * (x + T(kGeluKappa) * x * x * x);
    return T(0.5) * x * (T(1) + tanh(u));
  }
};
// dy/dx = 0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) sqrt(2/pi) (1 + 3 kappa x^2)
template <class T>
struct GeluGradF {
  __device__ T operator()(T x, T dy) const {
    const T x2 = x * x;
    const T th = tanh(T(kGeluBeta) * (x + T(kGeluKappa) * x2 * x));
    const T du = T(kGeluBeta) * (T(1) + T(3 * kGeluKappa) * x2);
    return dy * (T(0.5) * (T(1) + th) + T(0.5) * x * (T(1) - th * th) * du);
  }
};

}  // namespace kernels::nn::detail
