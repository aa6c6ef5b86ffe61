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

std::optional<std::regex> result_filter(const std::string& pattern, std::string_view option) {
  if (pattern.empty()) return std::nullopt;
  try {
    return std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw InputError(fmt::format("{} '{}': not a valid regular expression: {}", option, pattern, e.what()));
  }
}

}  // namespace harness
