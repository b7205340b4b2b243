#include "report/ReportJsonFields.h"

#include <fmt/format.h>

#include <charconv>
#include <limits>

namespace heapgraph::report {
namespace {

using Json = ReportJsonFields::Json;

const char* TypeName(const Json& v) {
  return v.type_name();
}

uint64_t UnsignedValue(const Json& v, const ReportJsonFields& at, const char* key) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer()) at.Fail(key, "negative");
  if (v.is_number_float()) at.Fail(key, "not an integer (or too large)");
  at.Fail(key, fmt::format("expected a number, found {}", TypeName(v)));
}

uint64_t AddressValue(const Json& v, const ReportJsonFields& at, const char* key) {
  if (!v.is_string())
    at.Fail(key, fmt::format("expected a \"0x...\" string, found {}", TypeName(v)));
  const std::string& s = v.get_ref<const std::string&>();
  uint64_t out = 0;
  bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  const char* begin = s.data() + (hex ? 2 : 0);
  const char* end = s.data() + s.size();
  auto [ptr, error] = std::from_chars(begin, end, out, hex ? 16 : 10);
  if (begin == end || error != std::errc() || ptr != end) {
    at.Fail(key, "not a 64-bit address (\"0x...\")");
  }
  return out;
}

}  // namespace

ReportJsonFields::ReportJsonFields(const Json& value, std::string path)
    : value_(value), path_(std::move(path)) {
  if (!value_.is_object()) {
    throw ReportJsonError(fmt::format("{}: expected an object, found {}",
                                      path_.empty() ? "document" : path_, TypeName(value_)));
  }
}

std::string ReportJsonFields::PathOf(const char* key) const {
  return path_.empty() ? std::string(key) : path_ + "." + key;
}

void ReportJsonFields::Fail(const char* key, const std::string& problem) const {
  throw ReportJsonError(fmt::format("{}: {}", PathOf(key), problem));
}

void ReportJsonFields::ExpectFormat(const char* format, const char* what,
                                    uint64_t max_version) const {
  if (!IsString("format") || String("format") != format) {
    throw ReportJsonError(fmt::format("not a heapgraph {} (no \"format\": \"{}\")", what, format));
  }
  uint64_t version = Unsigned("version");
  if (version < 1 || version > max_version) {
    throw ReportJsonError(
        fmt::format("{} version {} is not supported (this heapgraph reads 1 to {})", format,
                    version, max_version));
  }
}

bool ReportJsonFields::Has(const char* key) const {
  return value_.contains(key);
}

bool ReportJsonFields::IsNull(const char* key) const {
  auto it = value_.find(key);
  return it != value_.end() && it->is_null();
}

bool ReportJsonFields::IsString(const char* key) const {
  auto it = value_.find(key);
  return it != value_.end() && it->is_string();
}

const Json& ReportJsonFields::Field(const char* key) const {
  auto it = value_.find(key);
  if (it == value_.end()) Fail(key, "missing");
  return *it;
}

uint64_t ReportJsonFields::Unsigned(const char* key) const {
  return UnsignedValue(Field(key), *this, key);
}

uint32_t ReportJsonFields::Unsigned32(const char* key) const {
  uint64_t v = Unsigned(key);
  if (v > std::numeric_limits<uint32_t>::max()) Fail(key, "too large");
  return static_cast<uint32_t>(v);
}

int32_t ReportJsonFields::Signed32(const char* key) const {
  const Json& v = Field(key);
  if (!v.is_number_integer()) Fail(key, fmt::format("expected an integer, found {}", TypeName(v)));
  if (v.is_number_unsigned()) {
    if (v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
      Fail(key, "too large");
    }
    return static_cast<int32_t>(v.get<uint64_t>());
  }
  int64_t s = v.get<int64_t>();
  if (s < std::numeric_limits<int32_t>::min()) Fail(key, "too small");
  return static_cast<int32_t>(s);
}

double ReportJsonFields::Number(const char* key) const {
  const Json& v = Field(key);
  if (!v.is_number()) Fail(key, fmt::format("expected a number, found {}", TypeName(v)));
  return v.get<double>();
}

bool ReportJsonFields::Bool(const char* key) const {
  const Json& v = Field(key);
  if (!v.is_boolean()) Fail(key, fmt::format("expected true or false, found {}", TypeName(v)));
  return v.get<bool>();
}

std::string ReportJsonFields::String(const char* key) const {
  const Json& v = Field(key);
  if (!v.is_string()) Fail(key, fmt::format("expected a string, found {}", TypeName(v)));
  return v.get<std::string>();
}

std::string ReportJsonFields::StringOrNull(const char* key) const {
  return IsNull(key) ? std::string() : String(key);
}

uint64_t ReportJsonFields::Address(const char* key) const {
  return AddressValue(Field(key), *this, key);
}

uint64_t ReportJsonFields::AddressOrNull(const char* key) const {
  return IsNull(key) ? 0 : Address(key);
}

ReportJsonFields ReportJsonFields::Object(const char* key) const {
  return ReportJsonFields(Field(key), PathOf(key));
}

std::optional<ReportJsonFields> ReportJsonFields::ObjectOrNull(const char* key) const {
  if (IsNull(key)) return std::nullopt;
  return Object(key);
}

const Json& ReportJsonFields::Array(const char* key) const {
  const Json& v = Field(key);
  if (!v.is_array()) Fail(key, fmt::format("expected an array, found {}", TypeName(v)));
  return v;
}

std::vector<ReportJsonFields> ReportJsonFields::Objects(const char* key) const {
  const Json& array = Array(key);
  std::vector<ReportJsonFields> out;
  out.reserve(array.size());
  for (size_t i = 0; i < array.size(); ++i) {
    out.emplace_back(array[i], fmt::format("{}[{}]", PathOf(key), i));
  }
  return out;
}

std::vector<std::string> ReportJsonFields::Strings(const char* key) const {
  std::vector<std::string> out;
  for (const Json& v : Array(key)) {
    if (!v.is_string()) Fail(key, fmt::format("expected strings, found {}", TypeName(v)));
    out.push_back(v.get<std::string>());
  }
  return out;
}

std::vector<uint64_t> ReportJsonFields::UnsignedArray(const char* key) const {
  std::vector<uint64_t> out;
  for (const Json& v : Array(key)) out.push_back(UnsignedValue(v, *this, key));
  return out;
}

std::vector<uint64_t> ReportJsonFields::Addresses(const char* key) const {
  std::vector<uint64_t> out;
  for (const Json& v : Array(key)) out.push_back(AddressValue(v, *this, key));
  return out;
}

}  // namespace heapgraph::report
