#pragma once
// Ctrl-C (SIGINT) or SIGTERM during `harness run`: the first asks the run to stop after
// the result it is measuring (the session then writes the report of everything finished,
// marked interrupted, and says how to complete it); the second ends the process at once,
// exit 130, the journal already holding every finished result. Pool children keep the
// default action: the terminal's Ctrl-C reaches their process group and ends them, and the
// parent decides what their deaths mean.

namespace harness {

// 128 + SIGINT, as shells report a run ended by Ctrl-C.
inline constexpr int kExitInterrupted = 130;

// Installs the handlers for its lifetime (restores the previous ones after).
class InterruptHandlers {
 public:
  // journal: named in the message of the second interrupt.
  explicit InterruptHandlers(const char* journal);
  ~InterruptHandlers();
  InterruptHandlers(const InterruptHandlers&) = delete;
  InterruptHandlers& operator=(const InterruptHandlers&) = delete;
};

// Whether a stop was asked for since the handlers were installed.
bool interrupt_requested();

}  // namespace harness
