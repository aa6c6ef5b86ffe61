// harness list [PROBLEM|problems|variants|all] [--verbose] [--json] [--plugin LIB] [--plugin-dir DIR]
//              [--python FILE.py]
// Every problem and variant says where it came from: "built-in" or the plugin's file.
#include <algorithm>
#include <cstdio>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "core/suggest.hpp"
#include "harness/error.hpp"
#include "harness/registry.hpp"
#include "plugin/plugin_loader.hpp"
#include "python/python_variants.hpp"
#include "types/settings.hpp"

namespace harness::cli {

namespace {

nlohmann::json param_json(const ParamSpec& s) {
  nlohmann::json j = {{"name", s.name},
                      {"type", std::string(to_string(s.type))},
                      {"default", to_string(s.default_value)},
                      {"domain", s.describe_domain()},
                      {"help", s.help}};
  if (s.min) j["min"] = *s.min;
  if (s.max) j["max"] = *s.max;
  if (!s.choices.empty()) j["choices"] = s.choices;
  return j;
}

nlohmann::json variant_json(const Variant& v) {
  return {{"problem", v.problem},
          {"name", v.name},
          {"backend", std::string(to_string(v.backend))},
          {"description", v.description},
          {"has_constraints", static_cast<bool>(v.constraint)},
          {"declares_workspace", static_cast<bool>(v.workspace_bytes)},
          {"origin", v.origin}};
}

// steady's default for a problem (types/settings.hpp): on for its tensor-core dtypes.
std::vector<std::string> steady_dtypes(const Problem& p) {
  std::vector<std::string> out;
  for (const auto& s : p.params())
    if (s.name == "dtype")
      for (const auto& c : s.choices)
        if (is_tensor_core_dtype(c)) out.push_back(c);
  return out;
}

std::string steady_text(const Problem& p) {
  const auto dtypes = steady_dtypes(p);
  if (dtypes.empty()) return "off by default (no tensor-core dtype)";
  return fmt::format("on by default for dtype {} (tensor cores), off otherwise", fmt::join(dtypes, ", "));
}

// Built-in variants say nothing; a plugin's name their file.
std::string origin_note(const std::string& origin) {
  return origin == "built-in" ? std::string() : "  [from " + origin + "]";
}

// One problem in full: its parameters, tolerance rule, steady default and variants (in
// detail, or by name only for `list problems`).
void print_problem(const Problem& p, bool variant_detail) {
  const Registry& reg = Registry::instance();
  fmt::print("{}: {}\n", p.name(), p.description());
  fmt::print("  from: {}\n", reg.problem_origin(p.name()));
  fmt::print("  parameters:\n");
  for (const auto& s : p.params())
    fmt::print("    {:<10} {:<6} default {:<10} {}{}\n", s.name, to_string(s.type), to_string(s.default_value),
               s.describe_domain(), s.help.empty() ? "" : " - " + s.help);
  if (!p.tolerance_rule().empty()) fmt::print("  tolerance: {}\n", p.tolerance_rule());
  fmt::print("  steady: {}\n", steady_text(p));
  if (!variant_detail) {
    fmt::print("  variants: {}\n\n", fmt::join(reg.variant_names(p.name()), ", "));
    return;
  }
  fmt::print("  variants:\n");
  for (const Variant* v : reg.variants(p.name()))
    fmt::print("    {:<12} {:<5} {}{}{}\n", v->name, to_string(v->backend), v->description,
               v->constraint ? "  [constrained: unsupported parameters are skipped with the reason]" : "",
               origin_note(v->origin));
  fmt::print("\n");
}

// The default listing (issue 34: the full text was hundreds of lines of paragraphs): one
// line per problem with its variants, the steady rule once, and how to see more.
void print_compact(const std::vector<const Problem*>& problems) {
  const Registry& reg = Registry::instance();
  std::size_t w = 0;
  for (const Problem* p : problems) w = std::max(w, p->name().size());
  for (const Problem* p : problems)
    fmt::print("{:<{}}  {}{}\n", p->name(), w, fmt::join(reg.variant_names(p->name()), ", "),
               origin_note(reg.problem_origin(p->name())));
  fmt::print("\nsteady: {}\n", kSteadyDefaultRule);
  fmt::print("interleave: {}\n", kInterleaveDefaultRule);
  fmt::print("`harness list PROBLEM`: a problem's parameters, tolerance rule, steady default and variants; "
             "`--verbose`: all of them\n");
}

void print_variants(const std::vector<const Problem*>& problems) {
  for (const Problem* p : problems)
    for (const Variant* v : Registry::instance().variants(p->name()))
      fmt::print("{:<28} {:<5} {}{}{}\n", v->full_name(), to_string(v->backend), v->description,
                 v->constraint ? "  [constrained]" : "", origin_note(v->origin));
}

// what: "" (compact), problems, variants, all, or one problem's name (in full).
void print_text(const std::string& what, const std::vector<const Problem*>& problems) {
  if (what.empty()) return print_compact(problems);
  if (what == "variants") return print_variants(problems);
  for (const Problem* p : problems) print_problem(*p, what != "problems");
  fmt::print("steady: {}\n", kSteadyDefaultRule);
  fmt::print("interleave: {}\n", kInterleaveDefaultRule);
}

nlohmann::json problems_json(const std::vector<const Problem*>& problems) {
  const Registry& reg = Registry::instance();
  nlohmann::json out = nlohmann::json::array();
  for (const Problem* p : problems) {
    nlohmann::json params = nlohmann::json::array();
    for (const auto& s : p->params()) params.push_back(param_json(s));
    out.push_back({{"name", p->name()},
                   {"description", p->description()},
                   {"parameters", params},
                   {"tolerance_rule", p->tolerance_rule()},
                   {"steady_default", steady_text(*p)},
                   {"origin", reg.problem_origin(p->name())},
                   {"variants", reg.variant_names(p->name())}});
  }
  return out;
}

void print_json(const std::string& what, const std::vector<const Problem*>& problems) {
  nlohmann::json out = nlohmann::json::object();
  if (what != "variants") {
    out["problems"] = problems_json(problems);
    out["steady_rule"] = std::string(kSteadyDefaultRule);
    out["interleave_rule"] = std::string(kInterleaveDefaultRule);
  }
  if (what != "problems") {
    nlohmann::json variants = nlohmann::json::array();
    for (const Problem* p : problems)
      for (const Variant* v : Registry::instance().variants(p->name())) variants.push_back(variant_json(*v));
    out["variants"] = variants;
  }
  fmt::print("{}\n", out.dump(2));
}

// The problems `what` selects: all of them, or the one it names (an unknown name is an
// input error, with the closest problem's name).
std::vector<const Problem*> selected_problems(const std::string& what) {
  const Registry& reg = Registry::instance();
  if (what.empty() || what == "problems" || what == "variants" || what == "all") return reg.problems();
  if (const Problem* p = reg.find_problem(what)) return {p};
  throw InputError(fmt::format("list: '{}' is not a problem (nor problems, variants or all){}", what,
                               did_you_mean(what, reg.problem_names())));
}

}  // namespace

void add_list_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("list", "List registered problems and their variants");
  auto what = std::make_shared<std::string>();
  auto verbose = std::make_shared<bool>(false);
  auto json = std::make_shared<bool>(false);
  auto plugins = std::make_shared<std::vector<std::string>>();
  auto plugin_dirs = std::make_shared<std::vector<std::string>>();
  cmd->add_option("what", *what,
                  "Default: one line per problem with its variants. A problem's name: its parameters,\n"
                  "tolerance rule, steady default and variants in full. problems: every problem's\n"
                  "parameters; variants: one line per variant; all: everything in full");
  cmd->add_flag("-v,--verbose", *verbose, "Everything in full (as `all`)");
  cmd->add_flag("--json", *json, "Machine-readable output (every field, whatever the listing)");
  cmd->add_option("--plugin", *plugins, "Load variants from a plugin shared library (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--plugin-dir", *plugin_dirs,
                  "Load every plugin (*.so) of a directory (repeatable; also HARNESS_PLUGIN_PATH)")
      ->allow_extra_args(false);
  auto python = std::make_shared<std::vector<std::string>>();
  add_python_option(cmd, *python);
  cmd->callback([=, &exit_code] {
    load_plugins(*plugins, *plugin_dirs, Registry::instance());
    load_python_variants(*python, Registry::instance());
    const std::string listing = what->empty() && *verbose ? "all" : *what;
    const auto problems = selected_problems(listing);
    if (*json) print_json(listing, problems);
    else print_text(listing, problems);
    exit_code = kExitOk;
  });
}

}  // namespace harness::cli
