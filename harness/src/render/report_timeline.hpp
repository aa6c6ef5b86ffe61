#pragma once
// Timelines drawn as static SVG (no scripts):
//  - kernel_timelines_html: per result of a report, the kernels of the first traced run of
//    its profiling pass to scale (profile.kernels.timeline, written by the kernel trace),
//    idle stretches longer than the timed median cut out (report_kernel_timeline.cpp);
//  - render_trace_html: a `harness run --trace` file (Chrome Trace Event JSON) as a page:
//    the whole run (NVTX ranges, launches, GPU streams), then each variant's profiling
//    pass zoomed in with its launch -> kernel arrows and a table of kernel arguments.
#include <string>

#include <nlohmann/json.hpp>

#include "report/report_model.hpp"

namespace harness {

std::string kernel_timelines_html(const Report& report);

// Throws InputError when `trace` has no traceEvents array.
std::string render_trace_html(const nlohmann::json& trace, const std::string& path);

}  // namespace harness
