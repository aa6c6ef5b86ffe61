#include "run/options_text.hpp"

#include <sstream>

#include <fmt/format.h>

#include "harness/error.hpp"

namespace harness {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

std::string console_form_to_name(const std::string& pattern) {
  std::string out = pattern;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] != '=') continue;
    const bool escaped = i >= 1 && out[i - 1] == '\\';
    const bool lookaround = (i >= 2 && out.compare(i - 2, 2, "(?") == 0) || (i >= 3 && out.compare(i - 3, 3, "(?<") == 0);
    if (!escaped && !lookaround) out[i] = ':';
  }
  return out;
}

std::string nothing_selected(const std::string& filter, const std::string& variants, const std::string& example) {
  std::string what;
  if (!filter.empty()) what = fmt::format("--filter '{}'", filter);
  if (!variants.empty()) what += fmt::format("{}--variants '{}'", what.empty() ? "" : " and ", variants);
  if (what.empty()) what = "the filter and --variants";
  return fmt::format("nothing to run: {} select no result{}", what,
                     example.empty() ? "" : fmt::format(" (result names look like {})", example));
}

std::optional<std::regex> result_filter(const std::string& pattern, std::string_view option) {
  if (pattern.empty()) return std::nullopt;
  try {
    return std::regex(console_form_to_name(pattern), std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw InputError(fmt::format("{} '{}': not a valid regular expression: {}", option, pattern, e.what()));
  }
}

}  // namespace harness
