#pragma once
// `harness compare`'s renderings of a Comparison (compare/compare.hpp): text, markdown and
// JSON; the HTML page is render/compare_html.hpp.
#include <string>

#include <nlohmann/json.hpp>

#include "compare/compare.hpp"

namespace harness {

// `format` is text, md or json.
std::string render_comparison(const Comparison& c, const std::string& format);
nlohmann::json comparison_to_json(const Comparison& c);

}  // namespace harness
