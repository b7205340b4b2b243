// report/: checked reading of a saved heapgraph JSON report's fields, for the readers that turn a
// report back into its model (LeakReportJsonReader, FoomReportJsonReader). A ReportJsonFields is
// one JSON object and where it sits in the document ("leaks[3].stack[0]"); every accessor checks
// the key is there and the value has the type and range the model holds, and otherwise throws
// ReportJsonError with one line "<path>.<key>: <what is wrong>". A number too large for its field
// (JSON has no limit) is an error, never a wrapped value; addresses are "0x..." strings, as the
// writers write them.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace heapgraph::report {

// A document that is no heapgraph report of a known version, or a field of it that is missing,
// of another type or out of range. what() is one line.
class ReportJsonError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ReportJsonFields {
 public:
  using Json = nlohmann::ordered_json;

  // `value` must be an object (else ReportJsonError "<path>: not an object"); it must outlive
  // this. `path` is "" for the document itself.
  ReportJsonFields(const Json& value, std::string path);

  // For the document: its "format" is `format` and its "version" 1 to `max_version`; else
  // ReportJsonError "not a heapgraph <what> (...)" or "<format> version V is not supported ...".
  void ExpectFormat(const char* format, const char* what, uint64_t max_version) const;

  bool Has(const char* key) const;
  bool IsNull(const char* key) const;    // present and null
  bool IsString(const char* key) const;  // present and a string

  uint64_t Unsigned(const char* key) const;
  uint32_t Unsigned32(const char* key) const;
  int32_t Signed32(const char* key) const;
  double Number(const char* key) const;  // any JSON number
  bool Bool(const char* key) const;
  std::string String(const char* key) const;
  std::string StringOrNull(const char* key) const;  // null: ""
  // "0x1f" (or "0"): the writers' form of addresses and offsets.
  uint64_t Address(const char* key) const;
  uint64_t AddressOrNull(const char* key) const;  // null: 0

  ReportJsonFields Object(const char* key) const;
  std::optional<ReportJsonFields> ObjectOrNull(const char* key) const;
  // The elements of an array of objects, each with its path "<key>[i]".
  std::vector<ReportJsonFields> Objects(const char* key) const;
  std::vector<std::string> Strings(const char* key) const;
  std::vector<uint64_t> UnsignedArray(const char* key) const;
  std::vector<uint64_t> Addresses(const char* key) const;

  // Throws ReportJsonError "<path>.<key>: <problem>".
  [[noreturn]] void Fail(const char* key, const std::string& problem) const;

 private:
  const Json& Field(const char* key) const;
  const Json& Array(const char* key) const;
  std::string PathOf(const char* key) const;

  const Json& value_;
  std::string path_;
};

}  // namespace heapgraph::report
