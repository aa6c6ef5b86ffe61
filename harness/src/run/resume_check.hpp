#pragma once
// --resume completes the run that wrote the journal, and only that one: the journal's
// header (report/journal_header.hpp) names its suites, seed, --filter and --variants, and a
// run that differs in any of them is refused before any work, rather than reporting a mix
// of two runs' results. Also the command line that completes an unfinished run.
#include <optional>
#include <string>

#include "report/journal_header.hpp"
#include "run/session.hpp"

namespace harness {

// The header of the journal this run writes.
JournalHeader run_header(const SessionOptions& args);

// Throws InputError when the journal was written by a run other than `args`; returns a
// warning for a journal written before headers existed (it cannot be checked).
std::optional<std::string> check_resume(const SessionOptions& args, const std::string& journal);

// `harness run SUITES [--seed N] [--filter F] [--variants V] [--devices D] [--isolate]
// --resume JOURNAL`: what completes this run (options left at their defaults are omitted).
std::string resume_command(const SessionOptions& args, const std::string& journal);

}  // namespace harness
