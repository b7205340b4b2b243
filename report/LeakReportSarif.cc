#include "report/LeakReportSarif.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <vector>

#include "reader/ByteSize.h"
#include "report/CallerSelector.h"
#include "report/FoomReport.h"
#include "report/LeakSignature.h"

namespace heapgraph::report {
namespace {

using Json = nlohmann::ordered_json;

constexpr char kSchema[] =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

// One result before it is written: what it is about and where.
struct Finding {
  std::string rule;
  std::string level;  // "warning" or "note"
  std::string message;
  const FrameList* stack = nullptr;  // null: no stack known
  uint64_t bytes = 0;
};

// The leak signature (report/LeakSignature.h) with the rule as its kind: stable across runs and
// builds of the same code. A finding without a stack (a reachable cycle) is known by its message.
std::string Fingerprint(const Finding& f) {
  if (f.stack != nullptr) return LeakSignature(f.rule, *f.stack);
  return LeakSignature(f.rule, std::vector<SignatureFrame>{{f.message, ""}});
}

// A path as a URI reference: absolute paths as file:// URIs, relative ones (DWARF's, relative to
// the compilation directory) as they are; every byte outside RFC 3986's unreserved set and '/'
// percent-encoded.
std::string UriOf(const std::string& path) {
  std::string out = path.starts_with('/') ? "file://" : "";
  for (unsigned char c : path) {
    if (isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

Json MessageOf(const std::string& text) {
  return {{"text", text}};
}

// A frame's location: file and line when known, else the module as the artifact; the function in
// the logical location and the message.
Json LocationOf(const ReportFrame& f) {
  Json physical = Json::object();
  if (!f.file.empty()) {
    physical["artifactLocation"] = {{"uri", UriOf(f.file)}};
    physical["region"] = {{"startLine", std::max(f.line, 1)}};
  } else if (!f.module_path.empty()) {
    physical["artifactLocation"] = {{"uri", UriOf(f.module_path)}};
    physical["address"] = {{"relativeAddress", static_cast<int64_t>(f.offset & INT64_MAX)},
                           {"kind", "instruction"}};
  }
  Json location = Json::object();
  if (!physical.empty()) location["physicalLocation"] = std::move(physical);
  if (!f.function.empty()) {
    location["logicalLocations"] =
        Json::array({{{"fullyQualifiedName", f.function}, {"kind", "function"}}});
  }
  location["message"] = MessageOf(FrameLabel(f));
  return location;
}

// The first application frame with a source line (from Caller1 on), else any frame with one.
std::optional<size_t> PrimaryFrame(const FrameList& stack, CallerSelector& selector) {
  CallerSelector::Callers callers = selector.Select(stack.ToVector());
  size_t start = callers.caller1 >= 0 ? static_cast<size_t>(callers.caller1) : 0;
  for (size_t pass = 0; pass < 2; ++pass) {
    for (size_t i = pass == 0 ? start : 0; i < stack.size(); ++i) {
      if (!stack[i].file.empty()) return i;
    }
  }
  if (!stack.empty()) return start < stack.size() ? start : 0;
  return std::nullopt;
}

// The stack as one thread flow, outermost frame first (the order it ran in).
Json CodeFlowOf(const FrameList& stack) {
  Json locations = Json::array();
  size_t shown = std::min(stack.size(), kSarifMaxFlowLocations);
  for (size_t k = 0; k < shown; ++k) {
    const ReportFrame& f = stack[shown - 1 - k];
    locations.push_back({{"location", LocationOf(f)}, {"nestingLevel", static_cast<int>(k)}});
  }
  return Json::array({{{"threadFlows", Json::array({{{"locations", std::move(locations)}}})}}});
}

Json ResultOf(const Finding& f, const std::map<std::string, size_t>& rule_index,
              CallerSelector& selector) {
  Json result = {{"ruleId", f.rule},
                 {"ruleIndex", rule_index.at(f.rule)},
                 {"level", f.level},
                 {"message", MessageOf(f.message)}};
  if (f.stack != nullptr && !f.stack->empty()) {
    std::optional<size_t> primary = PrimaryFrame(*f.stack, selector);
    result["locations"] = Json::array({LocationOf((*f.stack)[*primary])});
    result["codeFlows"] = CodeFlowOf(*f.stack);
  }
  result["partialFingerprints"] = {{"heapgraphLeakSignature/v1", Fingerprint(f)}};
  result["properties"] = {{"bytes", f.bytes}};
  return result;
}

std::string LeakedCycleRule(const LeakCycle& c) {
  return "heapgraph/leaked-cycle/" + c.kind;
}

std::string CycleTypes(const LeakCycle& c) {
  std::string out;
  for (size_t i = 0; i < c.members.size() && i < 8; ++i) {
    out += (i > 0 ? " -> " : "") + (c.members[i].type.empty() ? "?" : c.members[i].type);
  }
  return c.members.size() > 8 ? out + " -> ..." : out;
}

std::string RecordMessage(const LeakRecord& r) {
  return fmt::format("Direct leak of {} in {} object(s) of type {}, retaining {}.",
                     ByteSize::Readable(r.size), r.count, r.type.empty() ? "?" : r.type,
                     ByteSize::Readable(r.retained_bytes));
}

std::vector<Finding> Findings(const LeakReport& report) {
  std::map<size_t, const LeakCycle*> cycle_of_record;  // a leaked cycle's representative record
  for (const LeakCycle& c : report.cycles) {
    if (!c.leaked || !c.representative) continue;
    size_t record = c.members[*c.representative].record;
    if (record != CycleMember::kNoRecord) cycle_of_record.emplace(record, &c);
  }
  std::vector<Finding> findings;
  for (size_t i = 0; i < report.leaks.size(); ++i) {
    const LeakRecord& r = report.leaks[i];
    if (r.kind != LeakKind::kDirect || !r.suppressed.empty()) continue;
    auto cycle = cycle_of_record.find(i);
    if (cycle == cycle_of_record.end()) {
      findings.push_back(
          {"heapgraph/direct-leak", "warning", RecordMessage(r), &r.stack, r.retained_bytes});
      continue;
    }
    const LeakCycle& c = *cycle->second;
    findings.push_back({LeakedCycleRule(c), "warning",
                        fmt::format("Leaked {} retain cycle of {} blocks ({}), retaining {}. {}",
                                    c.kind, c.members.size(), CycleTypes(c),
                                    ByteSize::Readable(c.retained_bytes), RecordMessage(r)),
                        &r.stack, c.retained_bytes});
  }
  for (const LeakCycle& c : report.cycles) {
    if (c.leaked && c.representative) continue;
    if (c.leaked) {
      size_t record = c.members.front().record;
      const FrameList* stack =
          record != CycleMember::kNoRecord ? &report.leaks[record].stack : nullptr;
      findings.push_back({LeakedCycleRule(c), "warning",
                          fmt::format("Leaked {} retain cycle of {} blocks ({}), retained by "
                                      "another leak.",
                                      c.kind, c.members.size(), CycleTypes(c)),
                          stack, c.retained_bytes});
      continue;
    }
    std::string root = c.root ? c.root->kind : "a root";
    if (c.root && !c.root->module.empty()) root += " in " + c.root->module;
    findings.push_back(
        {"heapgraph/reachable-cycle/" + c.kind, "note",
         fmt::format("Reachable {} retain cycle of {} blocks ({}), held by {} "
                     "through {} block(s); {} held.",
                     c.kind, c.members.size(), CycleTypes(c), root,
                     c.root ? c.root->path.size() : 0, ByteSize::Readable(c.retained_bytes)),
         nullptr, c.retained_bytes});
  }
  std::stable_sort(findings.begin(), findings.end(),
                   [](const Finding& a, const Finding& b) { return a.bytes > b.bytes; });
  return findings;
}

Json RuleOf(const std::string& id) {
  std::string name, text;
  if (id == "heapgraph/direct-leak") {
    name = "DirectLeak";
    text = "Memory that nothing references any more was never freed.";
  } else if (id.starts_with("heapgraph/leaked-cycle/")) {
    name = "LeakedRetainCycle";
    text = "Blocks that own each other in a cycle that nothing else references (" +
           id.substr(sizeof("heapgraph/leaked-cycle/") - 1) + ").";
  } else {
    name = "ReachableRetainCycle";
    text = "A retain cycle still reachable from a root: it is freed only if the root lets go (" +
           id.substr(sizeof("heapgraph/reachable-cycle/") - 1) + ").";
  }
  return {{"id", id},
          {"name", name},
          {"shortDescription", MessageOf(text)},
          {"help", MessageOf("heapgraph's docs/report-format.md and docs/leak-scan.md")},
          {"properties", {{"tags", Json::array({"memory", "leak"})}}}};
}

}  // namespace

std::string LeakReportSarifText(const LeakReport& report) {
  std::vector<Finding> findings = Findings(report);
  std::map<std::string, size_t> rule_index;
  Json rules = Json::array();
  size_t shown = std::min(findings.size(), kSarifMaxResults);
  for (size_t i = 0; i < shown; ++i) {
    if (rule_index.emplace(findings[i].rule, rules.size()).second) {
      rules.push_back(RuleOf(findings[i].rule));
    }
  }
  CallerSelector selector;
  Json results = Json::array();
  for (size_t i = 0; i < shown; ++i) results.push_back(ResultOf(findings[i], rule_index, selector));
  Json run = {{"tool", {{"driver", {{"name", "heapgraph"}, {"rules", std::move(rules)}}}}},
              {"results", std::move(results)},
              {"properties",
               {{"leaked_bytes", report.summary.leaked_bytes},
                {"results_left_out", findings.size() - shown},
                {"recording_dir", report.recording_dir}}}};
  Json log = {{"$schema", kSchema}, {"version", "2.1.0"}, {"runs", Json::array({std::move(run)})}};
  return log.dump(2, ' ', false, Json::error_handler_t::replace);
}

}  // namespace heapgraph::report
