// Ctrl-C during a run (see interrupt.hpp). The handler only sets a flag and writes with
// write(2): everything else waits for the session to see the flag between results.
#include "run/interrupt.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>

namespace harness {
namespace {

std::atomic<int> g_count{0};
char g_again[1024];  // the second interrupt's message, composed before any signal comes
struct sigaction g_old_int, g_old_term;

void write_text(const char* text) {
  ssize_t ignored = ::write(STDERR_FILENO, text, std::strlen(text));
  (void)ignored;
}

extern "C" void on_interrupt(int) {
  if (g_count.fetch_add(1) == 0) {
    write_text("\nharness: interrupted: stopping after the current result (interrupt again to stop at once)\n");
    return;
  }
  write_text(g_again);
  ::_exit(kExitInterrupted);
}

}  // namespace

InterruptHandlers::InterruptHandlers(const char* journal) {
  g_count = 0;
  std::snprintf(g_again, sizeof g_again,
                "\nharness: interrupted again: stopped at once; no report written; the finished results are in %s "
                "(complete the run with --resume)\n", journal);
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // reads and waits in progress go on; the flag is checked between results
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
}

InterruptHandlers::~InterruptHandlers() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
}

bool interrupt_requested() { return g_count.load() > 0; }

}  // namespace harness
