#include "tools/OptionValue.h"

#include <fmt/format.h>

#include <stdexcept>

namespace heapgraph::tools {

std::string QuoteOptionValue(const std::string& value, const char* flag) {
  bool starts_quoted = !value.empty() && (value[0] == '"' || value[0] == '\'');
  if (value.find_first_of(",:") == std::string::npos && !starts_quoted) return value;
  if (value.find('"') == std::string::npos) return "\"" + value + "\"";
  if (value.find('\'') == std::string::npos) return "'" + value + "'";
  throw std::runtime_error(fmt::format("{} {}: must not contain both ' and \"", flag, value));
}

}  // namespace heapgraph::tools
