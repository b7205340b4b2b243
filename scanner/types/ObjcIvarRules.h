// scanner/types/: which object-typed instance variables of an Objective-C class own what they
// point to, for every ObjC reader (GNU runtime today, an Apple one later). May include heap/,
// roots/ and scanner/.
//
// An object-typed ivar ('@' type encoding: id, a class pointer, a Block) is strong, except by the
// delegate-is-weak convention: an ivar whose name contains "delegate", "dataSource" or "target"
// (any case) is weak (assign), as in Cocoa's target-action and delegate patterns — unless an
// exception says otherwise. Built-in exceptions, matched on the class that declares the ivar:
//   NSTimer _target and _info (userInfo): retained until -invalidate   label timer-target
//   CADisplayLink target/_target: retained until -invalidate           label timer-target
//   CAAnimation delegate/_delegate: retained by the animation          label delegate
//   NSURLSession delegate/_delegate: retained until the session ends   label delegate
// Users add or override entries with a file (HEAPGRAPH_OBJC_IVARS, `heapgraph run --objc-ivars`),
// one per line: `Class ivar strong|weak [delegate|timer-target|none]`; `#` starts a comment.
// A weak-named ivar that an exception makes strong keeps the label its name suggests (delegate or
// timer-target) unless the entry gives one; any other strong ivar has no label.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "scanner/types/ObjectModelReader.h"

namespace heapgraph::scanner::types {

struct IvarRule {
  std::string class_name;  // the class that declares the ivar
  std::string ivar;
  FieldStrength strength = FieldStrength::kStrong;
  EdgeLabel label = EdgeLabel::kNone;
};

class ObjcIvarRules {
 public:
  // The built-in exceptions.
  ObjcIvarRules();

  // Adds the entries of `path`; later entries override earlier ones. False and *error (one line,
  // with the line number) on an unreadable file or a malformed line; entries before it are kept.
  bool LoadFile(const std::string& path, std::string* error);
  // The same for the file's text; `name` (the path) prefixes the error.
  bool LoadText(std::string_view text, const std::string& name, std::string* error);
  // Adds one entry in the file's syntax. False on a malformed line.
  bool AddLine(std::string_view line);

  // The strength and label of an object-typed ivar named `ivar` declared by `class_name`.
  FieldDescription Classify(std::string_view class_name, std::string_view ivar) const;

  // True if the name follows the delegate-is-weak convention.
  static bool WeakByName(std::string_view ivar);

  const std::vector<IvarRule>& rules() const { return rules_; }

 private:
  const IvarRule* Find(std::string_view class_name, std::string_view ivar) const;

  std::vector<IvarRule> rules_;
};

}  // namespace heapgraph::scanner::types
