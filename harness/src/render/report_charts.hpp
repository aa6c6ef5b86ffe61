#pragma once
// The charts of the HTML report: which parameter goes on the x axis and how rows fall
// into series (the layout), throughput against size per problem, the roofline, extra
// device memory against size. Drawn with the SVG primitives of render/report_svg.hpp.
#include <cstddef>
#include <string>
#include <vector>

#include "render/report_svg.hpp"
#include "report/report_model.hpp"

namespace harness {

std::string throughput_chart(const std::string& problem, const std::vector<const Result*>& prow, std::size_t index,
                             svg::ColorMap& colors);
std::string roofline_chart(const Report& report, const std::vector<Result>& rows, std::string& note,
                           svg::ColorMap& colors);
std::string memory_charts(const std::vector<Result>& rows, svg::ColorMap& colors);

}  // namespace harness
