// Refusing to resume another run's journal (see resume_check.hpp).
#include "run/resume_check.hpp"

#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/error.hpp"

namespace harness {
namespace {

// A shell word: quoted when it holds anything a shell would read differently.
std::string shell_word(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=,+@") == std::string::npos)
    return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string paths_of(const std::vector<JournalHeader::SuiteFile>& files) {
  std::vector<std::string> paths;
  for (const auto& s : files) paths.push_back(s.path);
  return fmt::format("{}", fmt::join(paths, " "));
}
std::string suite_paths(const JournalHeader& h) { return paths_of(h.suites); }

bool same_files(const std::vector<JournalHeader::SuiteFile>& a, const std::vector<JournalHeader::SuiteFile>& b) {
  if (a.size() != b.size()) return false;
  // The same content under another spelling of its path is the same file.
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].hash != b[i].hash) return false;
  return true;
}
bool same_suites(const JournalHeader& a, const JournalHeader& b) { return same_files(a.suites, b.suites); }

std::string option_text(const std::string& option, const std::string& value) {
  return value.empty() ? "without " + option : fmt::format("with {} {}", option, shell_word(value));
}

// "suites/a.yaml with --seed 42": the suites, then each option in which the two differ.
std::string describe(const JournalHeader& h, const JournalHeader& other) {
  std::string out = suite_paths(h);
  if (h.seed != other.seed) out += fmt::format(" with --seed {}", h.seed);
  if (h.filter != other.filter) out += " " + option_text("--filter", h.filter);
  if (h.variants != other.variants) out += " " + option_text("--variants", h.variants);
  if (!same_files(h.python, other.python)) {
    if (h.python.empty()) out += " without --python";
    for (std::size_t i = 0; i < h.python.size(); ++i)
      out += fmt::format("{} --python {}", i == 0 ? " with" : "", shell_word(h.python[i].path));
  }
  return out;
}

}  // namespace

JournalHeader run_header(const SessionOptions& args) {
  JournalHeader h;
  for (const auto& path : args.suites) h.suites.push_back({path, file_content_hash(path)});
  h.seed = args.seed;
  h.filter = args.filter;
  h.variants = args.variants;
  for (const auto& path : args.python) h.python.push_back({path, file_content_hash(path)});
  return h;
}

std::optional<std::string> check_resume(const SessionOptions& args, const std::string& journal) {
  const std::optional<JournalHeader> was = read_journal_header(journal);
  if (!was)
    return fmt::format("--resume {}: the journal was written by an older harness and does not say which suite and "
                       "seed it ran; it cannot be checked against this run", journal);
  const JournalHeader now = run_header(args);
  const bool suites = same_suites(*was, now);
  if (suites && was->seed == now.seed && was->filter == now.filter && was->variants == now.variants &&
      same_files(was->python, now.python))
    return std::nullopt;
  // The same paths with other content: the suite was edited since.
  if (!suites && suite_paths(*was) == suite_paths(now))
    for (std::size_t i = 0; i < now.suites.size(); ++i)
      if (was->suites[i].hash != now.suites[i].hash)
        throw InputError(fmt::format("--resume {}: {} has changed since the journal was written (content {}, now {})",
                                     journal, now.suites[i].path, was->suites[i].hash, now.suites[i].hash));
  throw InputError(fmt::format("--resume {}: it was written by a run of {}; this run is {}", journal,
                               describe(*was, now), describe(now, *was)));
}

std::string resume_command(const SessionOptions& args, const std::string& journal) {
  // fmt::format rather than `" " + word`: GCC 12 at -O3 warns (-Wrestrict, a false
  // positive) on that string concatenation.
  std::string out = "harness run";
  for (const auto& s : args.suites) out += fmt::format(" {}", shell_word(s));
  if (args.seed != SessionOptions{}.seed) out += fmt::format(" --seed {}", args.seed);
  if (!args.filter.empty()) out += fmt::format(" --filter {}", shell_word(args.filter));
  if (!args.variants.empty()) out += fmt::format(" --variants {}", shell_word(args.variants));
  for (const auto& p : args.python) out += fmt::format(" --python {}", shell_word(p));
  if (!args.devices.empty()) out += fmt::format(" --devices {}", shell_word(args.devices));
  if (args.isolate) out += " --isolate";
  return out + fmt::format(" --resume {}", shell_word(journal));
}

}  // namespace harness
