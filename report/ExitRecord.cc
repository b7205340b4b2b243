#include "report/ExitRecord.h"

#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

#include "heap/session/ExitEvidenceProbe.h"
#include "reader/InputFile.h"

namespace heapgraph::report {
namespace {

constexpr size_t kMaxExitFile = 64 * 1024;

[[noreturn]] void Fail(const std::string& problem) {
  throw RecordingError("exit: " + problem);
}

uint64_t Unsigned(const std::map<std::string, std::string>& fields, const char* key) {
  auto it = fields.find(key);
  if (it == fields.end()) return 0;
  const std::string& v = it->second;
  if (v.empty() || v.size() > 20 || v.find_first_not_of("0123456789") != std::string::npos) {
    Fail(std::string("bad value for ") + key);
  }
  errno = 0;
  unsigned long long n = strtoull(v.c_str(), nullptr, 10);
  if (errno == ERANGE) Fail(std::string("bad value for ") + key);
  return n;
}

// The whole file, at most kMaxExitFile bytes; false when it does not exist. A link, FIFO or
// device, or a larger file, is refused with one line (reader/InputFile).
bool ReadExitFile(const std::string& dir, std::string* text) {
  std::optional<InputFile> file = InputFile::Open(dir + "/" + format::kExitFile, format::kExitFile);
  if (!file) return false;
  *text = file->ReadAll(kMaxExitFile);
  return true;
}

void ToHeader(const SessionInfo& s, format::SessionHeader& h) {
  memset(static_cast<void*>(&h), 0, sizeof(h));
  h.pid = s.pid;
  h.start_time_ns = s.start_time_ns;
  h.boot_time_ticks = s.boot_time_ticks;
  h.state.store(s.state);
  snprintf(h.executable, sizeof(h.executable), "%s", s.executable.c_str());
  h.record = s.record;
}

}  // namespace

ExitRecord ExitRecord::FromClassification(const ExitClassification& c, const std::string& source) {
  ExitRecord r;
  r.kind = ExitClassifier::Name(c.kind);
  r.reason = c.reason;
  r.source = source;
  r.signal = c.signal;
  r.signal_code = c.signal_code;
  r.signal_address = c.signal_address;
  r.exit_status_known = c.exit_status_known;
  r.exit_status = c.exit_status;
  r.oom_kills_before = c.oom_kills_before;
  r.oom_kills_now = c.oom_kills_now;
  r.stall_ms = c.stall_ms;
  r.foreground = c.foreground;
  return r;
}

ExitRecord ExitRecord::Parse(const std::string& text) {
  if (text.size() > kMaxExitFile) Fail("too large");
  std::map<std::string, std::string> fields;
  std::istringstream in(text);
  std::string line;
  bool first = true;
  while (std::getline(in, line)) {
    if (first && line != "heapgraph-exit 1") Fail("not a heapgraph exit file (first line)");
    first = false;
    size_t space = line.find(' ');
    if (space == std::string::npos) continue;
    fields[line.substr(0, space)] = line.substr(space + 1);
  }
  if (first) Fail("empty");
  ExitClass kind;
  auto k = fields.find("kind");
  if (k == fields.end() || !ExitClassifier::FromName(k->second.c_str(), &kind)) {
    Fail("missing or unknown kind");
  }
  ExitRecord r;
  r.kind = k->second;
  r.reason = fields["reason"];
  r.source = "exit file";
  r.signal = static_cast<uint32_t>(Unsigned(fields, "signal"));
  r.signal_code = static_cast<int32_t>(Unsigned(fields, "signal_code"));
  r.signal_address = Unsigned(fields, "signal_address");
  r.exit_status_known = Unsigned(fields, "exit_status_known") != 0;
  r.exit_status = static_cast<int32_t>(Unsigned(fields, "exit_status"));
  r.oom_kills_before = fields.count("oom_kills_before") != 0 ? Unsigned(fields, "oom_kills_before")
                                                             : format::kUnknownCounter;
  r.oom_kills_now = fields.count("oom_kills_now") != 0 ? Unsigned(fields, "oom_kills_now")
                                                       : format::kUnknownCounter;
  r.stall_ms = Unsigned(fields, "stall_ms");
  r.foreground = fields.count("foreground") == 0 || Unsigned(fields, "foreground") != 0;
  return r;
}

ExitRecord ExitRecord::For(const RecordingReader& reader) {
  std::string text;
  if (ReadExitFile(reader.directory(), &text)) return Parse(text);
  const std::optional<SessionInfo>& s = reader.session();
  if (!s) {
    ExitRecord r;
    r.reason = "the directory has no session file";
    r.source = "classified now";
    return r;
  }
  auto header = std::make_unique<format::SessionHeader>();
  ToHeader(*s, *header);
  ExitEvidence now = ExitEvidenceProbe::Gather(*header, s->has_record);
  return FromClassification(ExitClassifier::Classify(*header, s->has_record, now),
                            "classified now");
}

}  // namespace heapgraph::report
