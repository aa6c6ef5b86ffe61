#pragma once
// `harness validate`: a report checked against reports/schema.json.
//
// The validator implements the part of JSON Schema (2020-12) that the report schema
// uses: type (one or a list), required, properties, additionalProperties (boolean or a
// schema), items, enum, const, minimum, maximum, minItems and $ref to "#/$defs/...".
// Annotations (title, description, $schema, $id, $comment, x-*) are ignored; any other
// keyword makes the schema itself an error, so that schema and validator cannot drift
// apart silently.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace harness {

struct SchemaIssue {
  std::string path;      // "results[3].stats.median_s" ("" for the document)
  std::string message;   // "expected number, got string"
};

class SchemaValidator {
 public:
  // Throws InputError when the schema uses a keyword the validator does not implement
  // or a $ref that does not resolve.
  explicit SchemaValidator(nlohmann::json schema);
  // Up to `max_issues` issues, in document order; empty when the document is valid.
  std::vector<SchemaIssue> validate(const nlohmann::json& doc, std::size_t max_issues = 50) const;
  const nlohmann::json& schema() const { return schema_; }

 private:
  nlohmann::json schema_;
};

// reports/schema.json as it was when the harness was built.
const nlohmann::json& embedded_report_schema();

struct ReportValidation {
  int schema_version = 0;
  std::size_t results = 0;
  std::vector<SchemaIssue> issues;   // schema violations and consistency problems
  bool ok() const { return issues.empty(); }
};

// Reads and validates a report. A file that cannot be read, is not JSON (truncated), is
// not a harness report, or has a schema_version newer than the schema's throws
// InputError with a one-line message. `schema_path` empty: the embedded schema.
ReportValidation validate_report_file(const std::string& path, const std::string& schema_path = "");

std::string format_issue(const SchemaIssue& issue);

}  // namespace harness
