#include "scanner/types/DebugLayouts.h"

#include <dwarf.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <unordered_map>

#include "scanner/types/ElfutilsLibrary.h"

namespace heapgraph::scanner::types {

using elfutils::Dw;

struct DebugLayouts::Module {
  int fd = -1;
  Dwarf* dwarf = nullptr;
  uint64_t bias = 0;
  bool indexed = false;
  std::unordered_map<std::string, Dwarf_Off> classes;  // qualified name -> definition DIE

  ~Module() {
    if (dwarf != nullptr) Dw().dwarf_end(dwarf);
    if (fd >= 0) close(fd);
  }
};

namespace {

bool IsClass(int tag) {
  return tag == DW_TAG_class_type || tag == DW_TAG_structure_type || tag == DW_TAG_union_type;
}

std::string Name(Dwarf_Die* die) {
  const char* name = Dw().dwarf_diename(die);
  return name != nullptr ? name : "";
}

// Indexes every class definition under `parent` with its qualified name.
void IndexChildren(Dwarf_Die* parent, const std::string& prefix,
                   std::unordered_map<std::string, Dwarf_Off>& classes, int depth) {
  Dwarf_Die child;
  if (depth > 16 || Dw().dwarf_child(parent, &child) != 0) return;
  do {
    int tag = Dw().dwarf_tag(&child);
    if (tag != DW_TAG_namespace && !IsClass(tag)) continue;
    std::string name = Name(&child);
    if (name.empty() && tag == DW_TAG_namespace) name = "(anonymous namespace)";
    if (name.empty()) continue;
    std::string qualified = prefix.empty() ? name : prefix + "::" + name;
    if (IsClass(tag) && !Dw().dwarf_hasattr(&child, DW_AT_declaration)) {
      classes.emplace(qualified, Dw().dwarf_dieoffset(&child));
    }
    IndexChildren(&child, qualified, classes, depth + 1);
  } while (Dw().dwarf_siblingof(&child, &child) == 0);
}

// The type a member's DW_AT_type names, through typedefs and cv-qualifiers.
bool MemberType(Dwarf_Die* die, Dwarf_Die* type) {
  Dwarf_Attribute attribute;
  if (Dw().dwarf_attr_integrate(die, DW_AT_type, &attribute) == nullptr ||
      Dw().dwarf_formref_die(&attribute, type) == nullptr) {
    return false;
  }
  for (int i = 0; i < 16; ++i) {
    int tag = Dw().dwarf_tag(type);
    if (tag != DW_TAG_typedef && tag != DW_TAG_const_type && tag != DW_TAG_volatile_type) {
      return true;
    }
    if (Dw().dwarf_attr_integrate(type, DW_AT_type, &attribute) == nullptr ||
        Dw().dwarf_formref_die(&attribute, type) == nullptr) {
      return false;
    }
  }
  return false;
}

bool MemberOffset(Dwarf_Die* die, uint64_t* offset) {
  Dwarf_Attribute attribute;
  Dwarf_Word value = 0;
  if (Dw().dwarf_attr(die, DW_AT_data_member_location, &attribute) == nullptr) {
    *offset = 0;  // union members, or a member at 0 written without a location
    return true;
  }
  if (Dw().dwarf_formudata(&attribute, &value) != 0) return false;
  *offset = value;
  return true;
}

bool StartsWith(const std::string& s, const char* prefix) {
  return s.rfind(prefix, 0) == 0;
}

// Capture fields of GCC lambdas are named "__x"; the variable is "x".
std::string MemberName(Dwarf_Die* die) {
  std::string name = Name(die);
  if (StartsWith(name, "__") && name.size() > 2) return name.substr(2);
  return name;
}

void AddFields(Dwarf_Die* type, uint64_t base, const std::string& prefix, int depth,
               std::vector<FieldDescription>& out);

// One member or base of class type: smart pointers by name, other classes expanded.
void AddClassMember(Dwarf_Die* type, uint64_t offset, const std::string& name, int depth,
                    std::vector<FieldDescription>& out) {
  std::string type_name = Name(type);
  auto add = [&](uint64_t at, FieldStrength strength, EdgeLabel label) {
    out.push_back({static_cast<uint32_t>(at), strength, label, name});
  };
  if (StartsWith(type_name, "shared_ptr<") || StartsWith(type_name, "__shared_ptr<")) {
    add(offset, FieldStrength::kWeak, EdgeLabel::kNone);  // the element: the control block owns
    add(offset + 8, FieldStrength::kStrong, EdgeLabel::kSharedOwner);
  } else if (StartsWith(type_name, "weak_ptr<") || StartsWith(type_name, "__weak_ptr<")) {
    add(offset, FieldStrength::kWeak, EdgeLabel::kNone);
    add(offset + 8, FieldStrength::kWeak, EdgeLabel::kNone);
  } else if (StartsWith(type_name, "unique_ptr<")) {
    add(offset, FieldStrength::kStrong, EdgeLabel::kNone);
  } else if (StartsWith(type_name, "function<")) {
    add(offset, FieldStrength::kConservative, EdgeLabel::kNone);
  } else if (depth < DebugLayouts::kMaxDepth) {
    AddFields(type, offset, name, depth + 1, out);
  }
}

void AddFields(Dwarf_Die* type, uint64_t base, const std::string& prefix, int depth,
               std::vector<FieldDescription>& out) {
  Dwarf_Die child;
  if (Dw().dwarf_child(type, &child) != 0) return;
  do {
    int tag = Dw().dwarf_tag(&child);
    bool inherited = tag == DW_TAG_inheritance;
    // Static members (external) and the compiler's vptr members (artificial) are no fields.
    if ((tag != DW_TAG_member && !inherited) || Dw().dwarf_hasattr(&child, DW_AT_external) ||
        Dw().dwarf_hasattr(&child, DW_AT_artificial)) {
      continue;
    }
    Dwarf_Die member_type;
    uint64_t offset = 0;
    if (!MemberType(&child, &member_type) || !MemberOffset(&child, &offset)) continue;
    std::string name = inherited ? prefix : MemberName(&child);
    if (!inherited && !prefix.empty()) name = prefix + "." + name;
    int member_tag = Dw().dwarf_tag(&member_type);
    if (member_tag == DW_TAG_pointer_type || member_tag == DW_TAG_reference_type) {
      out.push_back({static_cast<uint32_t>(base + offset), FieldStrength::kConservative,
                     EdgeLabel::kNone, name});
    } else if (IsClass(member_tag)) {
      AddClassMember(&member_type, base + offset, name, depth, out);
    }
  } while (Dw().dwarf_siblingof(&child, &child) == 0);
}

std::vector<FieldDescription> Sorted(std::vector<FieldDescription> fields) {
  std::stable_sort(
      fields.begin(), fields.end(),
      [](const FieldDescription& a, const FieldDescription& b) { return a.offset < b.offset; });
  return fields;
}

// Follows DW_AT_abstract_origin / DW_AT_specification to the declaration inside the class.
void ToDeclaration(Dwarf_Die* die) {
  for (int i = 0; i < 8; ++i) {
    Dwarf_Attribute attribute;
    if (Dw().dwarf_attr(die, DW_AT_abstract_origin, &attribute) == nullptr &&
        Dw().dwarf_attr(die, DW_AT_specification, &attribute) == nullptr) {
      return;
    }
    if (Dw().dwarf_formref_die(&attribute, die) == nullptr) return;
  }
}

}  // namespace

DebugLayouts::DebugLayouts() = default;
DebugLayouts::~DebugLayouts() = default;

DebugLayouts::Module* DebugLayouts::Open(uint32_t module, const ModuleSegments& modules) {
  auto it = modules_.find(module);
  if (it != modules_.end()) return it->second.get();
  auto m = std::make_unique<Module>();
  if (module < modules.modules().size() && !modules.modules()[module].path.empty()) {
    m->bias = modules.modules()[module].bias;
    m->fd = open(modules.modules()[module].path.c_str(), O_RDONLY | O_CLOEXEC);
    if (m->fd >= 0 && elfutils::Libdw() != nullptr)
      m->dwarf = Dw().dwarf_begin(m->fd, DWARF_C_READ);
  }
  return modules_.emplace(module, std::move(m)).first->second.get();
}

std::vector<FieldDescription> DebugLayouts::Fields(const std::string& qualified_name, uint32_t base,
                                                   const ModuleSegments& modules) {
  for (uint32_t i = 0; i < modules.modules().size(); ++i) {
    Module* m = Open(i, modules);
    if (m->dwarf == nullptr) continue;
    if (!m->indexed) {
      m->indexed = true;
      Dwarf_Off offset = 0, next = 0;
      size_t header = 0;
      while (Dw().dwarf_nextcu(m->dwarf, offset, &next, &header, nullptr, nullptr, nullptr) == 0) {
        Dwarf_Die cu;
        if (Dw().dwarf_offdie(m->dwarf, offset + header, &cu) != nullptr) {
          IndexChildren(&cu, "", m->classes, 0);
        }
        offset = next;
      }
    }
    auto found = m->classes.find(qualified_name);
    Dwarf_Die type;
    if (found == m->classes.end() || Dw().dwarf_offdie(m->dwarf, found->second, &type) == nullptr) {
      continue;
    }
    std::vector<FieldDescription> fields;
    AddFields(&type, base, "", 0, fields);
    return Sorted(std::move(fields));
  }
  return {};
}

std::vector<FieldDescription> DebugLayouts::FunctorFields(uint64_t manager,
                                                          const ModuleSegments& modules) {
  const Segment* segment = modules.Find(manager);
  if (segment == nullptr) return {};
  Module* m = Open(segment->module, modules);
  if (m->dwarf == nullptr) return {};
  Dwarf_Addr pc = manager - m->bias;
  Dwarf_Die cu;
  if (Dw().dwarf_addrdie(m->dwarf, pc, &cu) == nullptr) return {};
  Dwarf_Die* scopes = nullptr;
  int n = Dw().dwarf_getscopes(&cu, pc, &scopes);
  Dwarf_Die function;
  bool found = false;
  for (int i = 0; i < n && !found; ++i) {
    if (Dw().dwarf_tag(&scopes[i]) == DW_TAG_subprogram) {
      function = scopes[i];
      found = true;
    }
  }
  std::free(scopes);
  if (!found) return {};
  ToDeclaration(&function);
  Dwarf_Die* parents = nullptr;
  n = Dw().dwarf_getscopes_die(&function, &parents);
  std::vector<FieldDescription> fields;
  Dwarf_Die child;
  if (n >= 2 && IsClass(Dw().dwarf_tag(&parents[1])) &&
      Dw().dwarf_child(&parents[1], &child) == 0) {
    do {
      Dwarf_Die functor;
      if (Dw().dwarf_tag(&child) == DW_TAG_template_type_parameter && Name(&child) == "_Functor" &&
          MemberType(&child, &functor)) {
        AddFields(&functor, 0, "", 0, fields);
        break;
      }
    } while (Dw().dwarf_siblingof(&child, &child) == 0);
  }
  std::free(parents);
  return Sorted(std::move(fields));
}

}  // namespace heapgraph::scanner::types
