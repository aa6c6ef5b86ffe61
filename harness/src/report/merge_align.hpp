#pragma once
// The results of several reports made comparable (`harness report --merge`, through
// merge_reports): the engine's run and reports/pytorch_transformer.py's describe the same
// configurations with different parameter sets (PyTorch's results lack the engine-only
// ones: graph, world_size, bucket_mb, ...) and may share variant names across reports
// (pytorch_bf16_compile once per compile mode). Without this the pages pair nothing
// across reports and print two rows of one name.
#include <string>
#include <vector>

#include "report/report_model.hpp"

namespace harness {

// Per problem:
//  - a parameter that only some results have and that holds one value wherever it is
//    present (an engine-only setting at its one value) is left out of every result's
//    params, so that the results pair by the parameters both sides have; each one left
//    out is said once in the returned notes ("graph=true (only in ours.json)");
//  - a parameter only some results have that varies stays; results without it take it
//    from their name where the name has it ("train_transformer/v/graph:false/...");
//  - numbers equal in value are made one type (clip_norm 1.0 and 1), and the parameters
//    put in one order (first appearance), so that the pages' keys match;
//  - variants of one name that appear twice at one shape are told apart by what differs:
//    "pytorch_bf16_compile compile_mode=reduce-overhead" (extra's string and boolean
//    fields, compile_mode first when it differs), else by the report's file name, else
//    by " (2)", " (3)" in report order.
// A result whose params or variant changed gets its name rebuilt from them
// (problem/variant/k:v/...), which the curves read their configuration from.
// `source[i]` is the index of the report results[i] came from; `paths` those reports'.
std::vector<std::string> align_merged_results(std::vector<Result>& results, const std::vector<std::size_t>& source,
                                              const std::vector<std::string>& paths);

}  // namespace harness
