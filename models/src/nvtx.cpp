#include "nvtx.hpp"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include <nvtx3/nvToolsExt.h>

namespace models::detail {

namespace {

constexpr const char* kDomain = "harness";

struct KindInfo {
  NvtxKind kind;
  const char* name;
  std::uint32_t category;  // the harness's NvtxPhase value + 1
  std::uint32_t color;     // ARGB
};
constexpr KindInfo kKinds[] = {
    {NvtxKind::step, "step", 8, 0xFF45818E},            // teal
    {NvtxKind::layer, "layer", 9, 0xFF76A5AF},          // light teal
    {NvtxKind::forward, "forward", 10, 0xFF93C47D},     // light green
    {NvtxKind::backward, "backward", 11, 0xFFE06666},   // light red
    {NvtxKind::optimizer, "optimizer", 12, 0xFF8E7CC3},  // light purple
};

const KindInfo& info(NvtxKind kind) {
  for (const auto& k : kKinds)
    if (k.kind == kind) return k;
  return kKinds[0];
}

struct Domain {
  nvtxDomainHandle_t handle = nullptr;  // null: no tool attached (NVTX is a no-op)
  std::mutex mutex;
  std::unordered_map<std::string, nvtxStringHandle_t> strings;  // a handful of fixed names

  Domain() {
    handle = nvtxDomainCreateA(kDomain);
    if (!handle) return;
    for (const auto& k : kKinds) nvtxDomainNameCategoryA(handle, k.category, k.name);
  }
};

Domain& domain() {
  static Domain d;  // thread-safe; initializes NVTX (and its injection) on first use
  return d;
}

std::atomic<int> g_enabled{-1};

bool enabled() {
  int e = g_enabled.load(std::memory_order_relaxed);
  if (e < 0) {
    e = domain().handle != nullptr ? 1 : 0;
    g_enabled.store(e, std::memory_order_relaxed);
  }
  return e == 1;
}

}  // namespace

NvtxRange::NvtxRange(bool on, const char* name, NvtxKind kind) {
  if (!on || !enabled()) return;
  Domain& d = domain();
  const KindInfo& k = info(kind);
  nvtxEventAttributes_t attr{};
  attr.version = NVTX_VERSION;
  attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attr.category = k.category;
  attr.colorType = NVTX_COLOR_ARGB;
  attr.color = k.color;
  nvtxStringHandle_t handle = nullptr;
  {
    std::lock_guard<std::mutex> lock(d.mutex);
    auto it = d.strings.find(name);
    if (it != d.strings.end()) {
      handle = it->second;
    } else {
      handle = nvtxDomainRegisterStringA(d.handle, name);
      if (handle) d.strings.emplace(name, handle);
    }
  }
  if (handle) {
    attr.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    attr.message.registered = handle;
  } else {
    attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attr.message.ascii = name;
  }
  nvtxDomainRangePushEx(d.handle, &attr);
  active_ = true;
}

NvtxRange::~NvtxRange() {
  if (active_) nvtxDomainRangePop(domain().handle);
}

}  // namespace models::detail
