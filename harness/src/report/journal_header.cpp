// The journal's header line (see journal_header.hpp).
#include "report/journal_header.hpp"

#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "core/fnv1a.hpp"
#include "harness/error.hpp"
#include "types/events.hpp"

namespace harness {

std::string file_content_hash(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  return fmt::format("fnv1a64:{:016x}", fnv1a64(bytes));
}

namespace {

nlohmann::json files_json(const std::vector<JournalHeader::SuiteFile>& files) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& s : files) out.push_back({{"path", s.path}, {"hash", s.hash}});
  return out;
}

std::vector<JournalHeader::SuiteFile> files_of(const nlohmann::json& list) {
  std::vector<JournalHeader::SuiteFile> out;
  for (const auto& s : list) out.push_back({s.at("path").get<std::string>(), s.at("hash").get<std::string>()});
  return out;
}

}  // namespace

nlohmann::json to_json(const JournalHeader& header) {
  nlohmann::json out = {{"event", kRunEvent}, {"suites", files_json(header.suites)}, {"seed", header.seed},
                        {"filter", header.filter}, {"variants", header.variants}};
  if (!header.python.empty()) out["python"] = files_json(header.python);
  return out;
}

std::optional<JournalHeader> read_journal_header(const std::string& journal) {
  std::ifstream in(journal);
  std::string line;
  while (std::getline(in, line) && line.empty()) {
  }
  if (line.empty()) return std::nullopt;
  const auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || events::kind(j) != kRunEvent) return std::nullopt;  // an older journal
  try {
    JournalHeader h;
    h.suites = files_of(j.at("suites"));
    if (j.contains("python")) h.python = files_of(j.at("python"));
    h.seed = j.at("seed").get<std::uint64_t>();
    h.filter = j.value("filter", "");
    h.variants = j.value("variants", "");
    return h;
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}:1: not a journal header: {}", journal, e.what()));
  }
}

}  // namespace harness
