#include "report/integrity_json.hpp"

#include "report/json_get.hpp"

namespace harness {

namespace {
const char* recheck_text(Recheck r) {
  switch (r) {
    case Recheck::passed: return "passed";
    case Recheck::failed: return "failed";
    case Recheck::not_run: break;
  }
  return "not_run";
}

nlohmann::json text_or_null(const std::optional<std::string>& s) { return s ? nlohmann::json(*s) : nlohmann::json(nullptr); }
}  // namespace

nlohmann::json integrity_to_json(const Integrity& in) {
  return {{"recheck", recheck_text(in.recheck)},
          {"recheck_seed", in.recheck_seed},
          {"recheck_note", in.recheck_note},
          {"roof_time_s", in.roof_time_s > 0 ? nlohmann::json(in.roof_time_s) : nlohmann::json(nullptr)},
          {"roof_basis", in.roof_basis},
          {"suspicious", in.suspicious.has_value()},
          {"suspicious_reason", text_or_null(in.suspicious)},
          {"outside_timed_region", in.outside.has_value()},
          {"outside_reason", text_or_null(in.outside)}};
}

Integrity integrity_from_json(const nlohmann::json& result) {
  using namespace json_get;
  Integrity in;
  const auto* j = at(result, {"integrity"});
  if (!j || !j->is_object()) return in;
  const std::string recheck = str_or(*j, {"recheck"});
  in.recheck = recheck == "passed" ? Recheck::passed : recheck == "failed" ? Recheck::failed : Recheck::not_run;
  in.recheck_note = str_or(*j, {"recheck_note"});
  in.roof_time_s = num_or(*j, {"roof_time_s"});
  in.roof_basis = str_or(*j, {"roof_basis"});
  if (boolean(*j, {"suspicious"}).value_or(false)) in.suspicious = str_or(*j, {"suspicious_reason"});
  if (boolean(*j, {"outside_timed_region"}).value_or(false)) in.outside = str_or(*j, {"outside_reason"});
  return in;
}

}  // namespace harness
