#include "profile/nvtx.hpp"

#include <atomic>
#include <mutex>
#include <string>
#include <unordered_map>

#include <nvtx3/nvToolsExt.h>

#include "profile/timeline.hpp"

namespace harness {

namespace {

constexpr NvtxPhase kAllPhases[] = {NvtxPhase::suite,   NvtxPhase::case_,    NvtxPhase::variant,  NvtxPhase::check,
                                    NvtxPhase::warmup,  NvtxPhase::timed,    NvtxPhase::profile,  NvtxPhase::step,
                                    NvtxPhase::layer,   NvtxPhase::forward,  NvtxPhase::backward, NvtxPhase::optimizer,
                                    NvtxPhase::other};

std::uint32_t category_of(NvtxPhase phase) { return static_cast<std::uint32_t>(phase) + 1; }

// Above this many distinct names, further names are pushed as plain ASCII messages
// rather than registered (a sweep of millions of cases must not grow without bound).
constexpr std::size_t kMaxRegistered = 1 << 16;

struct Domain {
  nvtxDomainHandle_t handle = nullptr;  // null: no tool attached (NVTX is a no-op)
  std::mutex mutex;
  std::unordered_map<std::string, nvtxStringHandle_t> strings;

  Domain() {
    handle = nvtxDomainCreateA(kNvtxDomain);
    if (!handle) return;
    for (NvtxPhase p : kAllPhases) {
      const std::string name(to_string(p));
      nvtxDomainNameCategoryA(handle, category_of(p), name.c_str());
    }
  }
};

Domain& domain() {
  static Domain d;  // thread-safe; initializes NVTX (and its injection) on first use
  return d;
}

// Cached after the first query so that a range costs a load and a branch without a tool.
std::atomic<int> g_enabled{-1};

bool enabled_fast() {
  int e = g_enabled.load(std::memory_order_relaxed);
  if (e < 0) {
    e = domain().handle != nullptr ? 1 : 0;
    g_enabled.store(e, std::memory_order_relaxed);
  }
  return e == 1;
}

}  // namespace

std::string_view to_string(NvtxPhase phase) {
  switch (phase) {
    case NvtxPhase::suite: return "suite";
    case NvtxPhase::case_: return "case";
    case NvtxPhase::variant: return "variant";
    case NvtxPhase::check: return "check";
    case NvtxPhase::warmup: return "warmup";
    case NvtxPhase::timed: return "timed";
    case NvtxPhase::profile: return "profile";
    case NvtxPhase::step: return "step";
    case NvtxPhase::layer: return "layer";
    case NvtxPhase::forward: return "forward";
    case NvtxPhase::backward: return "backward";
    case NvtxPhase::optimizer: return "optimizer";
    case NvtxPhase::other: return "other";
  }
  return "other";
}

std::uint32_t nvtx_color(NvtxPhase phase) {
  switch (phase) {
    case NvtxPhase::suite: return 0xFF6E6E6E;      // grey
    case NvtxPhase::case_: return 0xFF3C78D8;      // blue
    case NvtxPhase::variant: return 0xFF6AA84F;    // green
    case NvtxPhase::check: return 0xFFF1C232;      // yellow
    case NvtxPhase::warmup: return 0xFFE69138;     // orange
    case NvtxPhase::timed: return 0xFFCC0000;      // red
    case NvtxPhase::profile: return 0xFF674EA7;    // purple
    case NvtxPhase::step: return 0xFF45818E;       // teal
    case NvtxPhase::layer: return 0xFF76A5AF;      // light teal
    case NvtxPhase::forward: return 0xFF93C47D;    // light green
    case NvtxPhase::backward: return 0xFFE06666;   // light red
    case NvtxPhase::optimizer: return 0xFF8E7CC3;  // light purple
    case NvtxPhase::other: return 0xFFB7B7B7;
  }
  return 0xFFB7B7B7;
}

bool nvtx_enabled() { return enabled_fast(); }

std::string nvtx_safe_name(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  bool blank = false;
  for (char ch : name) {
    const auto u = static_cast<unsigned char>(ch);
    char c = ch;
    if (u < 0x20 || u == 0x7F) c = ' ';
    switch (c) {
      case '/': c = '.'; break;
      case '@': c = '_'; break;
      case '[': c = '('; break;
      case ']': c = ')'; break;
      case '*': c = '_'; break;
      default: break;
    }
    if (c == ' ') {
      if (blank || out.empty()) continue;  // fold runs, drop leading blanks
      blank = true;
    } else {
      blank = false;
    }
    out.push_back(c);
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string nvtx_case_name(std::string_view case_name, std::string_view problem, const Params& params) {
  std::string s(case_name);
  s += ": ";
  s += problem;
  const std::string p = params.describe(' ');
  if (!p.empty()) s += " " + p;
  return nvtx_safe_name(s);
}

std::string nvtx_variant_name(std::string_view problem, std::string_view variant, const Params& params) {
  std::string s(problem);
  s += ".";
  s += variant;
  const std::string p = params.describe(' ');
  if (!p.empty()) s += " " + p;
  return nvtx_safe_name(s);
}

NvtxRange::NvtxRange(std::string_view name, NvtxPhase phase) {
  // `harness run --trace`: the same range on the timeline's host track.
  if (Timeline::global().enabled()) {
    Timeline::global().begin(nvtx_safe_name(name), to_string(phase));
    recorded_ = true;
  }
  if (!enabled_fast()) return;
  Domain& d = domain();
  const std::string safe = nvtx_safe_name(name);

  nvtxEventAttributes_t attr{};
  attr.version = NVTX_VERSION;
  attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attr.category = category_of(phase);
  attr.colorType = NVTX_COLOR_ARGB;
  attr.color = nvtx_color(phase);

  nvtxStringHandle_t handle = nullptr;
  {
    std::lock_guard<std::mutex> lock(d.mutex);
    auto it = d.strings.find(safe);
    if (it != d.strings.end()) {
      handle = it->second;
    } else if (d.strings.size() < kMaxRegistered) {
      handle = nvtxDomainRegisterStringA(d.handle, safe.c_str());
      if (handle) d.strings.emplace(safe, handle);
    }
  }
  if (handle) {
    attr.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    attr.message.registered = handle;
  } else {
    attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attr.message.ascii = safe.c_str();  // copied by the tool during the call
  }
  nvtxDomainRangePushEx(d.handle, &attr);
  active_ = true;
}

NvtxRange::~NvtxRange() { end(); }

NvtxRange::NvtxRange(NvtxRange&& other) noexcept : active_(other.active_), recorded_(other.recorded_) {
  other.active_ = false;
  other.recorded_ = false;
}

NvtxRange& NvtxRange::operator=(NvtxRange&& other) noexcept {
  if (this != &other) {
    end();
    active_ = other.active_;
    recorded_ = other.recorded_;
    other.active_ = false;
    other.recorded_ = false;
  }
  return *this;
}

void NvtxRange::end() noexcept {
  if (recorded_) {
    recorded_ = false;
    try {
      Timeline::global().end();
    } catch (...) {  // a lock failure must not escape a destructor; the range stays open
    }
  }
  if (!active_) return;
  active_ = false;
  nvtxDomainRangePop(domain().handle);
}

}  // namespace harness
