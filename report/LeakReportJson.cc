#include "report/LeakReportJson.h"

#include <fmt/format.h>

#include <iterator>
#include <string>
#include <string_view>
#include <unordered_map>

#include "report/AddressHex.h"
#include "report/ExplanationJson.h"
#include "report/LeakSignature.h"
#include "report/Utf8Sequence.h"

namespace heapgraph::report {
namespace {

using json = nlohmann::ordered_json;

json StringOrNull(const std::string& s) {
  return s.empty() ? json(nullptr) : json(s);
}

json MemberJson(const CycleMember& m) {
  return {{"address", AddressHex(m.address)},
          {"size", m.size},
          {"type", m.type},
          {"stack_id", m.stack_id},
          {"leak", m.record == CycleMember::kNoRecord ? json(nullptr) : json(m.record)},
          {"field", StringOrNull(m.field)}};
}

json RootJson(const std::optional<CycleRoot>& root) {
  if (!root) return nullptr;
  json path = json::array();
  for (const RetentionStep& s : root->path) {
    path.push_back({{"address", AddressHex(s.address)},
                    {"size", s.size},
                    {"type", s.type},
                    {"field", StringOrNull(s.field)}});
  }
  bool threaded = root->kind == "stack" || root->kind == "registers" || root->kind == "tls";
  return {{"kind", root->kind},
          {"thread", threaded ? json(root->thread) : json(nullptr)},
          {"module", StringOrNull(root->module)},
          {"address", root->address != 0 ? json(AddressHex(root->address)) : json(nullptr)},
          {"path", std::move(path)}};
}

json RepresentativeJson(const LeakCycle& c) {
  if (!c.representative) {
    return {{"member", nullptr},
            {"address", nullptr},
            {"reason", c.representative_reason},
            {"retained_by", c.retained_by ? json(AddressHex(*c.retained_by)) : json(nullptr)}};
  }
  return {{"member", *c.representative},
          {"address", AddressHex(c.members[*c.representative].address)},
          {"reason", c.representative_reason},
          {"retained_by", nullptr}};
}

json CycleJson(const LeakCycle& c) {
  json members = json::array();
  for (const CycleMember& m : c.members) members.push_back(MemberJson(m));
  return {{"kind", c.kind},
          {"leaked", c.leaked},
          {"typed", c.typed},
          {"members", std::move(members)},
          {"retained_bytes", c.retained_bytes},
          {"representative", RepresentativeJson(c)},
          {"path", c.path},
          {"root", RootJson(c.root)}};
}

json SummaryJson(const LeakSummary& s) {
  return {{"direct_blocks", s.direct_blocks},
          {"indirect_blocks", s.indirect_blocks},
          {"leaked_bytes", s.leaked_bytes},
          {"direct_bytes", s.direct_bytes},
          {"indirect_bytes", s.indirect_bytes},
          {"cycles", s.cycles},
          {"live_blocks", s.live_blocks},
          {"live_bytes", s.live_bytes},
          {"suppressed_blocks", s.suppressed_blocks},
          {"suppressed_bytes", s.suppressed_bytes}};
}

json ScanJson(const LeakReport& r) {
  const scanner::ScanTimings& t = r.timings;
  const scanner::ScanStats& s = r.stats;
  json j = {{"ok", r.ok},
            {"world_stopped_ms", t.world_stopped_ms},
            {"allocation_pause_ms", t.allocation_pause_ms},
            {"longest_allocation_wait_ms", t.longest_allocation_wait_ms},
            {"total_ms", t.total_ms},
            {"threads", s.threads},
            {"live_blocks", s.live_blocks},
            {"live_bytes", s.live_bytes},
            {"root_ranges", s.root_ranges},
            {"root_bytes", s.root_bytes},
            {"heap_words_scanned", s.heap_words_scanned},
            {"unreadable_pages", s.unreadable_pages},
            {"absent_pages", s.absent_pages},
            {"stop_method", s.stop_method},
            {"in_stopped_world", s.in_stopped_world},
            {"notice", r.notice}};
  if (!r.ok) j["error"] = r.error;
  return j;
}

json SuppressionsUsedJson(const LeakReport& report) {
  json used = json::array();
  for (const SuppressionUse& u : report.suppressions_used) {
    used.push_back({{"rule", u.rule}, {"count", u.count}, {"bytes", u.bytes}});
  }
  return used;
}

// The document with "leaks" and "categories" empty: LeakReportJsonText streams both.
json DocumentJson(const LeakReport& report) {
  json cycles = json::array();
  for (const LeakCycle& c : report.cycles) cycles.push_back(CycleJson(c));
  json document = {{"format", kLeakReportFormat},
                   {"version", kLeakReportVersion},
                   {"summary", SummaryJson(report.summary)},
                   {"leaks", json::array()},
                   {"cycles", std::move(cycles)},
                   {"categories", json::array()},
                   {"scan", ScanJson(report)},
                   {"recording_dir", report.recording_dir},
                   {"warnings", report.warnings},
                   {"suppressions_used", SuppressionsUsedJson(report)}};
  // Only a check with explain targets has the key (docs/report-format.md).
  if (!report.explanations.empty()) document["explain"] = ExplanationsToJson(report.explanations);
  // Only a delta check has the key.
  if (report.window) {
    document["window"] = {{"checkpoint", report.window->checkpoint},
                          {"from_seq", report.window->from_seq},
                          {"to_seq", report.window->to_seq}};
  }
  return document;
}

// ---- The records and categories, streamed: the rest goes through the tree. -----------------

// `s` as a JSON string the way dump() writes it (ensure_ascii off): '"', '\\' and control
// characters escaped, valid UTF-8 copied, each invalid byte replaced by U+FFFD.
void AppendString(std::string& out, const std::string& s) {
  out += '"';
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      size_t n = Utf8SequenceLength(s, i);
      out.append(n == 0 ? kReplacementCharacter : s.substr(i, n));
      i += n == 0 ? 1 : n;
      continue;
    }
    ++i;
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          fmt::format_to(std::back_inserter(out), "\\u{:04x}", c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

// Writes the members of one JSON object at `indent` spaces (its braces are the caller's), in the
// layout of dump(2): `"key": value`, comma-separated, one per line.
class ObjectWriter {
 public:
  ObjectWriter(std::string& out, int indent) : out_(out), indent_(indent) {}
  // Starts a member and returns the output, where the caller appends the value.
  std::string& Key(const char* key) {
    if (!first_) out_ += ",\n";
    first_ = false;
    out_.append(static_cast<size_t>(indent_), ' ');
    out_ += '"';
    out_ += key;
    out_ += "\": ";
    return out_;
  }
  void String(const char* key, const std::string& value) { AppendString(Key(key), value); }
  void StringOrNull(const char* key, bool present, const std::string& value) {
    present ? String(key, value) : void(Key(key) += "null");
  }
  template <typename Integer>
  void Number(const char* key, Integer value) {
    fmt::format_to(std::back_inserter(Key(key)), "{}", value);
  }

 private:
  std::string& out_;
  int indent_;
  bool first_ = true;
};

// One frame, as an element of a record's "stack" at `indent`.
void AppendFrame(std::string& out, const ReportFrame& f, int indent) {
  bool located = !f.module.empty() || !f.module_path.empty();
  bool positioned = !f.file.empty();
  out.append(static_cast<size_t>(indent), ' ');
  out += "{\n";
  ObjectWriter o(out, indent + 2);
  o.String("address", AddressHex(f.address));
  o.StringOrNull("module", located, f.module);
  o.StringOrNull("module_path", located, f.module_path);
  o.StringOrNull("build_id", !f.build_id.empty(), f.build_id);
  o.StringOrNull("offset", located, located ? AddressHex(f.offset) : std::string());
  o.StringOrNull("function", !f.function.empty(), f.function);
  o.StringOrNull("file", positioned, f.file);
  positioned ? o.Number("line", f.line) : void(o.Key("line") += "null");
  o.Key("inlined") += f.inlined ? "true" : "false";
  out += '\n';
  out.append(static_cast<size_t>(indent), ' ');
  out += '}';
}

// Each distinct frame's text as an element of a record's "stack" (indent 8), formatted once:
// records share their frames (FrameList), and 4,000 records of 9 frames hold far fewer distinct
// ones. Keyed by the frame's address, valid while the report is.
class FrameTexts {
 public:
  const std::string& Of(const ReportFrame& f) {
    auto [it, inserted] = texts_.try_emplace(&f);
    if (inserted) AppendFrame(it->second, f, 8);
    return it->second;
  }

 private:
  std::unordered_map<const ReportFrame*, std::string> texts_;
};

// An upper bound of the records' text: the buffer is reserved once (pages never written cost
// nothing) instead of doubling through copies of up to tens of MB.
size_t RecordsSizeBound(const LeakReport& report, FrameTexts& frames) {
  constexpr size_t kRecordFixed = 1024;  // > keys, numbers, examples, separators of a record
  size_t bound = 0;
  for (const LeakRecord& r : report.leaks) {
    bound += kRecordFixed + 6 * (r.type.size() + r.suppressed.size());  // escaped: "\u00xx"
    for (const ReportFrame& f : r.stack) bound += frames.Of(f).size() + 2;
  }
  return bound;
}

// One leak record, as an element of "leaks" (indent 4).
void AppendRecord(std::string& out, const LeakRecord& r, FrameTexts& frames) {
  out += "    {\n";
  ObjectWriter o(out, 6);
  o.String("kind", LeakKindName(r.kind));
  o.Number("size", r.size);
  o.Number("count", r.count);
  if (r.block_size != 0) o.Number("block_size", r.block_size);
  if (r.kind == LeakKind::kDirect) o.Number("retained_bytes", r.retained_bytes);
  o.Number("stack_id", r.stack_id);
  o.String("signature", LeakSignature(LeakKindName(r.kind), r.stack));
  std::string& stack = o.Key("stack");
  if (r.stack.empty()) {
    stack += "[]";
  } else {
    stack += "[\n";
    for (size_t i = 0; i < r.stack.size(); ++i) {
      if (i > 0) stack += ",\n";
      stack += frames.Of(r.stack[i]);
    }
    stack += "\n      ]";
  }
  o.String("type", r.type);
  if (!r.preview.empty()) o.String("preview", r.preview);
  std::string& examples = o.Key("examples");
  if (r.examples.empty()) {
    examples += "[]";
  } else {
    examples += "[\n";
    for (size_t i = 0; i < r.examples.size(); ++i) {
      if (i > 0) examples += ",\n";
      examples += "        ";
      AppendString(examples, AddressHex(r.examples[i]));
    }
    examples += "\n      ]";
  }
  o.StringOrNull("suppressed", !r.suppressed.empty(), r.suppressed);
  out += "\n    }";
}

// One category row, as an element of "categories" (indent 4). Streamed like the records: through
// the tree, a small program's fifty rows were three quarters of its report's time.
void AppendCategory(std::string& out, const CategoryRow& r) {
  out += "    {\n";
  ObjectWriter o(out, 6);
  o.String("type", r.type);
  o.Number("live_count", r.live_count);
  o.Number("live_bytes", r.live_bytes);
  o.Number("leaked_count", r.leaked_count);
  o.Number("leaked_bytes", r.leaked_bytes);
  out += "\n    }";
}

// The elements of a top-level array, each by `append`, and its closing bracket; the opening one
// is the caller's.
template <typename T, typename Append>
void AppendArray(std::string& out, const std::vector<T>& elements, Append append) {
  out += '\n';
  for (size_t i = 0; i < elements.size(); ++i) {
    if (i > 0) out += ",\n";
    append(out, elements[i]);
  }
  out += "\n  ]";
}

}  // namespace

std::string LeakReportJsonText(const LeakReport& report) {
  // The document with an empty "leaks" and "categories"; the first `"leaks": []` is that key's
  // (only "format", "version" and the numeric "summary" come before it), and the top-level
  // `\n  "categories": []` that one's (no string of "cycles" holds an unescaped quote). Bytes
  // that are not UTF-8 (a recording directory's path) become U+FFFD, as in the records.
  std::string head = DocumentJson(report).dump(2, ' ', false, json::error_handler_t::replace);
  constexpr std::string_view kLeaks = "\"leaks\": []";
  constexpr std::string_view kCategories = "\n  \"categories\": []";
  const size_t leaks_at = head.find(kLeaks);
  const size_t categories_at = head.find(kCategories);
  if (leaks_at == std::string::npos || categories_at == std::string::npos ||
      categories_at < leaks_at) {
    return head;
  }
  FrameTexts frames;
  std::string out;
  out.reserve(head.size() + RecordsSizeBound(report, frames) + 128 * report.categories.size());
  const size_t leaks_open = leaks_at + kLeaks.size() - 2;  // the '[' of "leaks"
  out.append(head, 0, leaks_open + 1);
  if (report.leaks.empty()) {
    out += ']';
  } else {
    AppendArray(out, report.leaks,
                [&frames](std::string& o, const LeakRecord& r) { AppendRecord(o, r, frames); });
  }
  const size_t categories_open = categories_at + kCategories.size() - 2;
  const size_t after_leaks = leaks_open + 2;  // past "[]"
  out.append(head, after_leaks, categories_open + 1 - after_leaks);
  if (report.categories.empty()) {
    out += ']';
  } else {
    AppendArray(out, report.categories, AppendCategory);
  }
  out.append(head, categories_open + 2, std::string::npos);
  return out;
}

// The records are written once, by the streamed text; the tree is that text parsed.
json LeakReportToJson(const LeakReport& report) {
  return json::parse(LeakReportJsonText(report));
}

}  // namespace heapgraph::report
