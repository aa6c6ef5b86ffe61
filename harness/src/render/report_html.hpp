#pragma once
// Shared pieces of the self-contained HTML pages (report, speedup, history, comparison,
// timeline): the page frame with its one stylesheet and no scripts, and which variant a problem measures itself against.
#include <string>
#include <vector>

#include "report/report_model.hpp"

namespace harness::html {

// <!DOCTYPE html> ... <body>: the content security policy lets nothing be fetched and no
// script run; `title` is escaped.
std::string page_head(const std::string& title);
// The one stylesheet of every page (the report's own head uses it too).
const char* stylesheet();
std::string page_tail(const std::string& footer);

// The vendor library variant a problem's results compare against: the first variant
// named cublas, cub, cudnn or cusparse (also "cublas_lt", "cub_sort": the name up to an
// underscore), in that order of preference; "" when the problem has none.
std::string vendor_variant(const std::vector<const Result*>& rows);

// A result's parameters as "M=4096 N=4096 K=4096" (the problem's order).
std::string params_text(const Result& r);
// One parameter value as the pages show it ("256", "1.5", "true", "bf16").
std::string value_text(const ParamValue& v);

}  // namespace harness::html
