// scanner/types/: see ObjcIvarRules.h. May include heap/, roots/ and scanner/.
#include "scanner/types/ObjcIvarRules.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

namespace heapgraph::scanner::types {
namespace {

bool ContainsNoCase(std::string_view haystack, std::string_view needle) {
  auto it = std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(),
                        [](char a, char b) { return std::tolower(a) == std::tolower(b); });
  return it != haystack.end();
}

EdgeLabel LabelFromName(std::string_view ivar) {
  if (ContainsNoCase(ivar, "delegate") || ContainsNoCase(ivar, "dataSource")) {
    return EdgeLabel::kDelegate;
  }
  if (ContainsNoCase(ivar, "target")) return EdgeLabel::kTimerTarget;
  return EdgeLabel::kNone;
}

}  // namespace

ObjcIvarRules::ObjcIvarRules() {
  const FieldStrength s = FieldStrength::kStrong;
  rules_ = {
      {"NSTimer", "_target", s, EdgeLabel::kTimerTarget},
      {"NSTimer", "_info", s, EdgeLabel::kTimerTarget},
      {"NSTimer", "_userInfo", s, EdgeLabel::kTimerTarget},
      {"CADisplayLink", "target", s, EdgeLabel::kTimerTarget},
      {"CADisplayLink", "_target", s, EdgeLabel::kTimerTarget},
      {"CAAnimation", "delegate", s, EdgeLabel::kDelegate},
      {"CAAnimation", "_delegate", s, EdgeLabel::kDelegate},
      {"NSURLSession", "delegate", s, EdgeLabel::kDelegate},
      {"NSURLSession", "_delegate", s, EdgeLabel::kDelegate},
  };
}

bool ObjcIvarRules::WeakByName(std::string_view ivar) {
  return LabelFromName(ivar) != EdgeLabel::kNone;
}

bool ObjcIvarRules::AddLine(std::string_view line) {
  std::istringstream in{std::string(line.substr(0, line.find('#')))};
  IvarRule rule;
  std::string strength, label, extra;
  if (!(in >> rule.class_name)) return true;  // blank or comment
  if (!(in >> rule.ivar >> strength)) return false;
  if (strength == "strong") {
    rule.strength = FieldStrength::kStrong;
  } else if (strength == "weak") {
    rule.strength = FieldStrength::kWeak;
  } else {
    return false;
  }
  rule.label = LabelFromName(rule.ivar);
  if (in >> label) {
    if (label == "delegate") {
      rule.label = EdgeLabel::kDelegate;
    } else if (label == "timer-target") {
      rule.label = EdgeLabel::kTimerTarget;
    } else if (label == "none") {
      rule.label = EdgeLabel::kNone;
    } else {
      return false;
    }
  }
  if (in >> extra) return false;
  rules_.insert(rules_.begin(), std::move(rule));  // the newest entry wins in Find
  return true;
}

bool ObjcIvarRules::LoadFile(const std::string& path, std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = "cannot read Objective-C ivar rules " + path;
    return false;
  }
  std::stringstream text;
  text << in.rdbuf();
  return LoadText(text.str(), path, error);
}

bool ObjcIvarRules::LoadText(std::string_view text, const std::string& name, std::string* error) {
  int number = 1;
  for (size_t at = 0; at < text.size(); ++number) {
    size_t end = std::min(text.find('\n', at), text.size());
    if (!AddLine(text.substr(at, end - at))) {
      *error = name + ":" + std::to_string(number) +
               ": expected `Class ivar strong|weak [delegate|timer-target|none]`";
      return false;
    }
    at = end + 1;
  }
  return true;
}

const IvarRule* ObjcIvarRules::Find(std::string_view class_name, std::string_view ivar) const {
  for (const IvarRule& r : rules_) {
    if (r.class_name == class_name && r.ivar == ivar) return &r;
  }
  return nullptr;
}

FieldDescription ObjcIvarRules::Classify(std::string_view class_name, std::string_view ivar) const {
  FieldDescription f;
  f.name = std::string(ivar);
  if (const IvarRule* r = Find(class_name, ivar)) {
    f.strength = r->strength;
    f.label = r->label;
    return f;
  }
  bool weak = WeakByName(ivar);
  f.strength = weak ? FieldStrength::kWeak : FieldStrength::kStrong;
  f.label = weak ? LabelFromName(ivar) : EdgeLabel::kNone;
  return f;
}

}  // namespace heapgraph::scanner::types
