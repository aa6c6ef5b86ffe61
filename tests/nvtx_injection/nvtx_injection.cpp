// An NVTX injection library for tests: loaded by NVTX when NVTX_INJECTION64_PATH names it,
// it records every push and pop to the file named by HARNESS_NVTX_LOG, one line each:
//
//   push<TAB>pid<TAB>tid<TAB>domain<TAB>category<TAB>color (hex ARGB)<TAB>message
//   pop<TAB>pid<TAB>tid<TAB>domain
//
// The default (unnamed) domain is written as "-". Lines are appended with one write()
// each (O_APPEND), so several processes may share a log.
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <string>

#include <nvtx3/nvToolsExt.h>

namespace {

std::mutex g_mutex;
int g_fd = -1;
std::deque<std::string> g_domains;  // stable addresses: a handle points at its name
std::deque<std::string> g_strings;  // registered strings, likewise

void emit(std::string line) {
  if (g_fd < 0) return;
  line += '\n';
  const char* p = line.data();
  std::size_t left = line.size();
  while (left > 0) {
    const ssize_t n = ::write(g_fd, p, left);
    if (n <= 0) return;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

std::string who() { return std::to_string(::getpid()) + "\t" + std::to_string(::syscall(SYS_gettid)); }

std::string domain_name(nvtxDomainHandle_t d) {
  return d ? *reinterpret_cast<const std::string*>(d) : std::string("-");
}

std::string message_of(const nvtxEventAttributes_t* a) {
  if (!a) return "";
  switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII: return a->message.ascii ? a->message.ascii : "";
    case NVTX_MESSAGE_TYPE_REGISTERED:
      return a->message.registered ? *reinterpret_cast<const std::string*>(a->message.registered) : "";
    case NVTX_MESSAGE_TYPE_UNICODE: return "<unicode>";
    default: return "";
  }
}

void push_line(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  char color[16];
  std::snprintf(color, sizeof color, "%08X", a && a->colorType == NVTX_COLOR_ARGB ? a->color : 0u);
  std::lock_guard<std::mutex> lock(g_mutex);
  emit("push\t" + who() + "\t" + domain_name(d) + "\t" + std::to_string(a ? a->category : 0) + "\t" + color + "\t" + message_of(a));
}

void pop_line(nvtxDomainHandle_t d) {
  std::lock_guard<std::mutex> lock(g_mutex);
  emit("pop\t" + who() + "\t" + domain_name(d));
}

nvtxDomainHandle_t NVTX_API domain_create_a(const char* name) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_domains.emplace_back(name ? name : "");
  return reinterpret_cast<nvtxDomainHandle_t>(&g_domains.back());
}

void NVTX_API domain_destroy(nvtxDomainHandle_t) {}

nvtxStringHandle_t NVTX_API domain_register_string_a(nvtxDomainHandle_t, const char* s) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_strings.emplace_back(s ? s : "");
  return reinterpret_cast<nvtxStringHandle_t>(&g_strings.back());
}

void NVTX_API domain_name_category_a(nvtxDomainHandle_t, uint32_t, const char*) {}

int NVTX_API domain_range_push_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  push_line(d, a);
  return 0;
}

int NVTX_API domain_range_pop(nvtxDomainHandle_t d) {
  pop_line(d);
  return 0;
}

int NVTX_API range_push_a(const char* message) {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = message;
  push_line(nullptr, &a);
  return 0;
}

int NVTX_API range_push_ex(const nvtxEventAttributes_t* a) {
  push_line(nullptr, a);
  return 0;
}

int NVTX_API range_pop() {
  pop_line(nullptr);
  return 0;
}

template <class Fn>
void install(NvtxFunctionTable table, unsigned size, unsigned id, Fn fn) {
  if (table && id <= size && table[id]) *table[id] = reinterpret_cast<NvtxFunctionPointer>(fn);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table) {
  if (!get_table) return 0;
  const auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get_table(NVTX_ETID_CALLBACKS));
  if (!callbacks || !callbacks->GetModuleFunctionTable) return 0;

  if (const char* path = std::getenv("HARNESS_NVTX_LOG"); path && *path)
    g_fd = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

  NvtxFunctionTable core = nullptr;
  unsigned core_size = 0;
  if (callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &core_size)) {
    install(core, core_size, NVTX_CBID_CORE_RangePushA, &range_push_a);
    install(core, core_size, NVTX_CBID_CORE_RangePushEx, &range_push_ex);
    install(core, core_size, NVTX_CBID_CORE_RangePop, &range_pop);
  }
  NvtxFunctionTable core2 = nullptr;
  unsigned core2_size = 0;
  if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &core2_size)) return 0;
  install(core2, core2_size, NVTX_CBID_CORE2_DomainCreateA, &domain_create_a);
  install(core2, core2_size, NVTX_CBID_CORE2_DomainDestroy, &domain_destroy);
  install(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringA, &domain_register_string_a);
  install(core2, core2_size, NVTX_CBID_CORE2_DomainNameCategoryA, &domain_name_category_a);
  install(core2, core2_size, NVTX_CBID_CORE2_DomainRangePushEx, &domain_range_push_ex);
  install(core2, core2_size, NVTX_CBID_CORE2_DomainRangePop, &domain_range_pop);
  return 1;
}
