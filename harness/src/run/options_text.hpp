#pragma once
// Command-line values shared by `run` and `gbench`: comma-separated lists and the result
// filter (a regular expression; an invalid one is an InputError naming the option).
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

namespace harness {

// "tiled,cublas" -> {"tiled", "cublas"}; empty items are dropped.
std::vector<std::string> split_list(const std::string& text);
// The console prints parameters as k=v ("stream/cpu op=copy n=1000"), result names hold
// k:v ("stream/cpu/op:copy/n:1000"). Names never contain '=', so a filter's '=' is read as
// ':' -- except in a lookahead "(?=" / "(?<=" or escaped as "\\=".
std::string console_form_to_name(const std::string& pattern);
// "nothing to run: --filter 'x' select no result (result names look like <example>)".
std::string nothing_selected(const std::string& filter, const std::string& variants, const std::string& example);
// The pattern after console_form_to_name; nothing for an empty pattern; InputError "<option> '<pattern>': not a valid regular expression: ...".
std::optional<std::regex> result_filter(const std::string& pattern, std::string_view option);

}  // namespace harness
