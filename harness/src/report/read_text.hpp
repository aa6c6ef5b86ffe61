#pragma once
// Reading a text file (a report, a trace) that may be gzip-compressed, as reports/baselines
// keeps them: the harness reads .json.gz as it is.
#include <string>

namespace harness {

// The file's bytes, inflated where they start with gzip's magic (every concatenated member, as
// `cat a.gz b.gz` makes). Throws InputError: "<path>: cannot open <what>: <errno text>"; a
// truncated or corrupt stream ("gzip-compressed but ... (truncated or corrupt?)"); more than
// 4 GiB inflated; or, in a build without zlib, a gzip file (saying how to decompress it).
std::string read_text_file(const std::string& path, const char* what);

}  // namespace harness
