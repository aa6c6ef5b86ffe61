#pragma once
// The first line of a run's journal: what run wrote it (its suite files with a hash of
// their content, the --python files alike, the seed, --filter and --variants), so that --resume can refuse to
// complete it with another run's results. An event line ("event":"run"): journal readers
// that do not know it skip it as they skip every event but results.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace harness {

inline constexpr const char* kRunEvent = "run";

struct JournalHeader {
  struct SuiteFile {
    std::string path;  // as typed on the command line
    std::string hash;  // "fnv1a64:<16 hex digits>" of the file's bytes
  };
  std::vector<SuiteFile> suites;
  // --python files (docs/python.md), hashed alike: their variants are part of what ran.
  // Absent from the line when there are none (and from journals written before them).
  std::vector<SuiteFile> python;
  std::uint64_t seed = 0;
  std::string filter;    // --filter as typed ("" = none)
  std::string variants;  // --variants as typed ("" = all)
};

// The content hash of a file (FNV-1a, 64 bits: a fingerprint against edits and mix-ups,
// not against an adversary); "" when it cannot be read.
std::string file_content_hash(const std::string& path);

nlohmann::json to_json(const JournalHeader& header);
// The header a journal starts with; nullopt for a journal written before headers existed
// (or an empty one). Throws InputError on a header line it cannot decode.
std::optional<JournalHeader> read_journal_header(const std::string& journal);

}  // namespace harness
