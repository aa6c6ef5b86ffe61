#pragma once
// The training step side by side (`harness report`, md and html): for each result that
// recorded a training step (extra.phase_ms or extra.tokens_per_s, as train_transformer
// and reports/pytorch_transformer.py write them), ms/step, tokens/s, MFU and the forward /
// backward / optimizer split in one row per variant, so ours and PyTorch's modes read
// next to each other. The result tables show the harness's median time and GFLOP/s,
// which say nothing of where the step goes.
#include <string>
#include <vector>

#include "report/report_model.hpp"

namespace harness {

// The rows of one problem with a training step; empty when none has one.
std::vector<const Result*> training_rows(const std::vector<const Result*>& prow);

// One table (markdown / HTML) of a problem's training rows, with a note naming why a
// phase is missing (graph: true times the step as one launch). "" when no row.
std::string training_table_markdown(const std::vector<const Result*>& prow);
std::string training_table_html(const std::vector<const Result*>& prow);

}  // namespace harness
