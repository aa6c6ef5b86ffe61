#pragma once
// Parameters of the attention problems as the tests build them (the tests of the f32/bf16/f16
// plugin and of its fp8_e4m3 dtype, CPU and GPU).
#include <cstdint>
#include <string>

#include "harness/registry.hpp"

namespace harness::test {

// (b, h, hkv, n, d, causal) of `problem` with its defaults for the rest; `dtype` set when given.
inline Params attention_params(int b, int h, int hkv, int n, int d, bool causal, const char* dtype = nullptr,
                               const char* problem = "attention") {
  Params v;
  v.set("batch", std::int64_t{b});
  v.set("heads", std::int64_t{h});
  v.set("kv_heads", std::int64_t{hkv});
  v.set("seq_len", std::int64_t{n});
  v.set("head_dim", std::int64_t{d});
  v.set("causal", causal);
  if (dtype != nullptr) v.set("dtype", std::string(dtype));
  return with_defaults(Registry::instance().find_problem(problem)->params(), v);
}

}  // namespace harness::test
