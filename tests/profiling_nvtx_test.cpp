// NVTX ranges seen by an attached tool (label cpu): the test injection library
// (tests/nvtx_injection) records every push and pop; these tests read its log.
//  - the probe program: names made safe for ncu filters, nesting, colours, categories,
//    registered strings, RAII (move, end()), and no cost without a tool;
//  - a smoke run of the harness: suite > case > variant > phase nesting with names that
//    carry the parameters.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profile/nvtx.hpp"
#include "test_support.hpp"

namespace {

using harness::NvtxPhase;

// One pushed range, with what was pushed inside it.
struct Range {
  std::string name;
  unsigned category = 0;
  std::string color;
  std::vector<std::unique_ptr<Range>> children;
};

struct Trees {
  std::vector<std::unique_ptr<Range>> roots;  // harness domain, all threads and processes
  std::vector<std::string> errors;            // unbalanced pops, ranges never popped
  std::size_t pushes = 0;
};

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : line) {
    if (c == '\t') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  out.push_back(cur);
  return out;
}

// Builds the range trees of the "harness" domain, one stack per (pid, tid).
Trees parse_log(const std::string& text) {
  Trees t;
  std::map<std::string, std::vector<Range*>> stacks;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const auto f = split_tabs(line);
    if (f.size() < 4 || f[3] != harness::kNvtxDomain) continue;
    const std::string who = f[1] + "/" + f[2];
    auto& stack = stacks[who];
    if (f[0] == "push" && f.size() >= 7) {
      auto r = std::make_unique<Range>();
      r->category = static_cast<unsigned>(std::stoul(f[4]));
      r->color = f[5];
      r->name = f[6];
      Range* raw = r.get();
      if (stack.empty()) t.roots.push_back(std::move(r));
      else stack.back()->children.push_back(std::move(r));
      stack.push_back(raw);
      ++t.pushes;
    } else if (f[0] == "pop") {
      if (stack.empty()) t.errors.push_back("pop without a push in " + who);
      else stack.pop_back();
    }
  }
  for (const auto& [who, stack] : stacks)
    for (const Range* r : stack) t.errors.push_back("range '" + r->name + "' never popped in " + who);
  return t;
}

unsigned category(NvtxPhase p) { return static_cast<unsigned>(p) + 1; }

std::string hex_color(NvtxPhase p) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08X", harness::nvtx_color(p));
  return buf;
}

std::optional<NvtxPhase> phase_named(const std::string& name) {
  for (NvtxPhase p : {NvtxPhase::check, NvtxPhase::warmup, NvtxPhase::timed, NvtxPhase::profile})
    if (harness::to_string(p) == name) return p;
  return std::nullopt;
}

void all_ranges(const Range& r, std::vector<const Range*>& out) {
  out.push_back(&r);
  for (const auto& c : r.children) all_ranges(*c, out);
}

struct Probe {
  std::string output;
  std::string log;
  int exit_code = -1;
};

Probe run_probe(bool with_tool) {
  Probe p;
  const std::string log = harness::test::temp_path("probe-nvtx.log");
  std::remove(log.c_str());
  std::string cmd = std::string(HARNESS_NVTX_PROBE);
  if (with_tool) cmd = "NVTX_INJECTION64_PATH=" + std::string(HARNESS_NVTX_INJECTION) + " HARNESS_NVTX_LOG=" + log + " " + cmd;
  else cmd = "env -u NVTX_INJECTION64_PATH " + cmd;
  const auto r = harness::test::run_command(cmd);
  p.output = r.output;
  p.exit_code = r.exit_code;
  p.log = harness::test::read_file(log);
  std::remove(log.c_str());
  return p;
}

TEST(NvtxProbe, WithoutAToolRangesAreNoOps) {
  const Probe p = run_probe(false);
  ASSERT_EQ(p.exit_code, 0) << p.output;
  EXPECT_NE(p.output.find("enabled=0"), std::string::npos) << p.output;
  const auto at = p.output.find("ns_per_range=");
  ASSERT_NE(at, std::string::npos) << p.output;
  const double ns = std::stod(p.output.substr(at + 13));
  // A load and a branch: a few ns. The bound only catches real work (formatting,
  // registering, locking) being done without a tool.
  EXPECT_LT(ns, 250.0) << p.output;
}

TEST(NvtxProbe, AnAttachedToolSeesNestedSafeNamedRanges) {
  const Probe p = run_probe(true);
  ASSERT_EQ(p.exit_code, 0) << p.output;
  EXPECT_NE(p.output.find("enabled=1"), std::string::npos) << p.output;
  const Trees t = parse_log(p.log);
  EXPECT_TRUE(t.errors.empty()) << ::testing::PrintToString(t.errors);
  ASSERT_EQ(t.roots.size(), 11u) << p.log;  // the suite, then 10 timing-loop steps

  const Range& suite = *t.roots[0];
  EXPECT_EQ(suite.name, "probe.suite_1");
  EXPECT_EQ(suite.category, category(NvtxPhase::suite));
  EXPECT_EQ(suite.color, hex_color(NvtxPhase::suite));
  ASSERT_EQ(suite.children.size(), 1u);
  const Range& c = *suite.children[0];
  EXPECT_EQ(c.name, "square: gemm M=4096 op=copy.x_y(0)_");
  EXPECT_EQ(c.category, category(NvtxPhase::case_));
  ASSERT_EQ(c.children.size(), 2u);
  const char* variants[] = {"gemm.tiled M=4096 op=copy.x_y(0)_", "gemm.naive M=4096 op=copy.x_y(0)_"};
  for (std::size_t i = 0; i < 2; ++i) {
    const Range& v = *c.children[i];
    EXPECT_EQ(v.name, variants[i]);
    EXPECT_EQ(v.category, category(NvtxPhase::variant));
    EXPECT_EQ(v.color, hex_color(NvtxPhase::variant));
    ASSERT_EQ(v.children.size(), 4u);
    const NvtxPhase phases[] = {NvtxPhase::check, NvtxPhase::warmup, NvtxPhase::timed, NvtxPhase::profile};
    for (std::size_t k = 0; k < 4; ++k) {
      EXPECT_EQ(v.children[k]->name, std::string(harness::to_string(phases[k])));
      EXPECT_EQ(v.children[k]->category, category(phases[k]));
      EXPECT_EQ(v.children[k]->color, hex_color(phases[k]));
      EXPECT_TRUE(v.children[k]->children.empty());
    }
  }
  std::vector<const Range*> all;
  for (const auto& r : t.roots) all_ranges(*r, all);
  for (const Range* r : all) {
    EXPECT_EQ(r->name.find('/'), std::string::npos) << r->name;
    EXPECT_EQ(r->name.find('@'), std::string::npos) << r->name;
  }
}

// ---------------------------------------------------------------------------------------
// A smoke run of the harness under the injection library. Passes once the runner pushes
// suite > case > variant > phase ranges (see docs/profiling.md).

TEST(NvtxSmokeRun, RangesNestSuiteCaseVariantPhase) {
  const std::string log = harness::test::temp_path("smoke-nvtx.log");
  const std::string report = harness::test::temp_path("smoke-nvtx.json");
  std::remove(log.c_str());
  const std::string cmd = "NVTX_INJECTION64_PATH=" + std::string(HARNESS_NVTX_INJECTION) + " HARNESS_NVTX_LOG=" + log +
                          " " + HARNESS_EXE + " run suites/smoke.yaml --quiet --out " + report;
  const auto r = harness::test::run_command(cmd);
  ASSERT_EQ(r.exit_code, 0) << cmd << "\n" << r.output;
  const std::string text = harness::test::read_file(log);
  const auto j = nlohmann::json::parse(harness::test::read_file(report));
  std::remove(log.c_str());
  std::remove(report.c_str());
  std::remove((report + ".journal.jsonl").c_str());

  const Trees t = parse_log(text);
  ASSERT_GT(t.pushes, 0u) << "no harness NVTX range was pushed: the runner does not push its ranges yet";
  EXPECT_TRUE(t.errors.empty()) << ::testing::PrintToString(t.errors);

  // One suite range, cases under it, variants under those, phases under those.
  ASSERT_EQ(t.roots.size(), 1u);
  const Range& suite = *t.roots[0];
  EXPECT_EQ(suite.name, j["suite"]["name"].get<std::string>());
  EXPECT_EQ(suite.category, category(NvtxPhase::suite));
  EXPECT_EQ(suite.color, hex_color(NvtxPhase::suite));

  // "recheck": the check on fresh inputs after timing (issue 33), category check.
  const std::set<std::string> phase_names = {"check", "warmup", "timed", "recheck", "profile"};
  std::vector<const Range*> variants;
  for (const auto& c : suite.children) {
    EXPECT_EQ(c->category, category(NvtxPhase::case_)) << c->name;
    for (const auto& v : c->children) {
      EXPECT_EQ(v->category, category(NvtxPhase::variant)) << v->name;
      variants.push_back(v.get());
      for (const auto& ph : v->children) {
        EXPECT_TRUE(phase_names.count(ph->name)) << "unexpected range '" << ph->name << "' in " << v->name;
        if (auto p = phase_named(ph->name)) {
          EXPECT_EQ(ph->category, category(*p)) << ph->name;
        }
      }
    }
  }
  std::vector<const Range*> all;
  all_ranges(suite, all);
  for (const Range* x : all) {
    EXPECT_EQ(x->name.find('/'), std::string::npos) << x->name;
    EXPECT_EQ(x->name.find('@'), std::string::npos) << x->name;
  }

  // Every result that ran has its variant range, named "<problem>.<variant> k=v ...",
  // inside a case range named "<case>: <problem> k=v ...", with a check and a timed phase.
  std::size_t ran = 0;
  for (const auto& res : j["results"]) {
    const std::string status = res["status"];
    if (status != "passed" && status != "failed") continue;
    ++ran;
    const std::string head = res["problem"].get<std::string>() + "." + res["variant"].get<std::string>() + " ";
    std::vector<std::string> kv;
    for (const auto& [k, v] : res["params"].items())
      kv.push_back(" " + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump()));
    const Range* found = nullptr;
    const Range* parent = nullptr;
    for (const auto& c : suite.children)
      for (const auto& v : c->children) {
        if (v->name.rfind(head, 0) != 0) continue;
        std::string padded = " ";  // (built by appends: GCC 12 warns -Wrestrict on " " + substr(...))
        padded += v->name.substr(head.size() - 1);
        padded += ' ';
        if (std::all_of(kv.begin(), kv.end(), [&](const std::string& s) { return padded.find(s + " ") != std::string::npos; })) {
          found = v.get();
          parent = c.get();
        }
      }
    ASSERT_NE(found, nullptr) << "no variant range for " << res["name"];
    EXPECT_EQ(parent->name.rfind(res["case"].get<std::string>() + ": " + res["problem"].get<std::string>(), 0), 0u)
        << parent->name;
    std::set<std::string> phases;
    for (const auto& ph : found->children) phases.insert(ph->name);
    EXPECT_TRUE(phases.count("check")) << found->name;
    if (status == "passed") {
      EXPECT_TRUE(phases.count("timed")) << found->name;
    }
  }
  EXPECT_GT(ran, 0u) << "the smoke suite ran nothing";
  EXPECT_GE(variants.size(), ran);
}

}  // namespace
