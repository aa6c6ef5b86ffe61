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
// Nothing for an empty pattern; InputError "<option> '<pattern>': not a valid regular expression: ...".
std::optional<std::regex> result_filter(const std::string& pattern, std::string_view option);

}  // namespace harness
