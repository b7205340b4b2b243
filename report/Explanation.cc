#include "report/Explanation.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <stdexcept>

#include "reader/RecordingReader.h"
#include "report/StackResolver.h"

namespace heapgraph::report {
namespace {

#if defined(__x86_64__)
// struct user_regs_struct's order (roots/ThreadInfo.h).
constexpr std::array<const char*, 27> kRegisterNames = {
    "r15",    "r14", "r13", "r12",     "rbp",     "rbx", "r11",      "r10", "r9",
    "r8",     "rax", "rcx", "rdx",     "rsi",     "rdi", "orig_rax", "rip", "cs",
    "eflags", "rsp", "ss",  "fs_base", "gs_base", "ds",  "es",       "fs",  "gs"};
#endif

std::string RegisterName(uint32_t reg) {
#if defined(__x86_64__)
  if (reg < kRegisterNames.size()) return kRegisterNames[reg];
#elif defined(__aarch64__)
  if (reg <= 30) return fmt::format("x{}", reg);
  if (reg == 31) return "sp";
  if (reg == 32) return "pc";
#endif
  return fmt::format("register {}", reg);
}

bool IsHexAddress(std::string_view item) {
  if (item.size() < 3 || item.size() > 18 || item[0] != '0' || (item[1] != 'x' && item[1] != 'X')) {
    return false;
  }
  return std::all_of(item.begin() + 2, item.end(),
                     [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
}

// The function (outermost of an inline chain) at runtime code address `pc`, "" if unknown.
std::string FunctionAt(uint64_t pc, const scanner::types::ModuleSegments& modules,
                       Symbolizer& symbolizer) {
  const scanner::types::Segment* s = modules.Find(pc, 1);
  if (s == nullptr) return "";
  const scanner::types::Module& m = modules.modules()[s->module];
  std::vector<SourceFrame> frames = symbolizer.Symbolize(m.path, pc - m.bias);
  return frames.empty() ? "" : frames.back().function;
}

ExplainRoot Root(const scanner::RootOrigin& o, const scanner::types::ModuleSegments& modules,
                 Symbolizer& symbolizer) {
  ExplainRoot r;
  r.thread = o.thread;
  r.address = o.address;
  r.region_begin = o.region_begin;
  r.region_end = o.region_end;
  switch (o.kind) {
    case scanner::RootKind::kRegisters:
      r.kind = "registers";
      r.register_name = RegisterName(o.reg);
      break;
    case scanner::RootKind::kStack:
      r.kind = "stack";
      r.stack_offset = o.address >= o.stack_pointer ? o.address - o.stack_pointer : 0;
      // A return address names the call before it.
      if (o.frame_pc != 0) r.function = FunctionAt(o.frame_pc - 1, modules, symbolizer);
      break;
    case scanner::RootKind::kGlobal:
      r.kind = "global";
      if (o.module < modules.modules().size()) {
        const scanner::types::Module& m = modules.modules()[o.module];
        r.module = m.path;
        if (auto symbol = symbolizer.SymbolAt(m.path, o.address - m.bias)) {
          r.symbol = symbol->name;
          r.symbol_offset = symbol->offset;
        }
      }
      break;
    case scanner::RootKind::kTls:
      r.kind = "tls";
      break;
    case scanner::RootKind::kOther:
      r.kind = o.region_end != 0 ? "mapping" : "other";
      break;
  }
  return r;
}

std::string FrameText(const ReportFrame& f) {
  std::string name = f.function.empty() ? fmt::format("{:#x}", f.address) : f.function;
  if (f.line != 0) return fmt::format("{} {}:{}", name, f.file, f.line);
  if (!f.module.empty() && f.function.empty()) return fmt::format("{} ({})", name, f.module);
  return name;
}

// The type of the block at `address`: a reader's name, else its size category.
std::string TypeOf(const scanner::ExplainStep& s, const scanner::ScanResult& scan,
                   const std::vector<std::string>& types) {
  const auto& objects = scan.typed.objects;
  auto it = std::lower_bound(
      objects.begin(), objects.end(), s.address,
      [](const scanner::TypedObject& o, uint64_t address) { return o.address < address; });
  if (it != objects.end() && it->address == s.address) {
    size_t i = static_cast<size_t>(it - objects.begin());
    if (i < types.size() && !types[i].empty()) return types[i];
  }
  return CategoryName(s.function, s.size);
}

ExplainHop Hop(const scanner::ExplainStep& s, uint32_t next_offset, const scanner::ScanResult& scan,
               StackResolver& stacks, const std::vector<std::string>& types) {
  ExplainHop hop{s.address, s.size, next_offset, TypeOf(s, scan, types), {}};
  const FrameList& frames = stacks.Resolve(s.stack);
  for (const ReportFrame& f : frames) {
    if (hop.stack.size() == ExplainedBlock::kMaxFrames) break;
    hop.stack.push_back(FrameText(f));
  }
  return hop;
}

// "direct" or "indirect" for a block the scan reported, else "".
std::string LeakKindOf(uint64_t address, const scanner::ScanResult& scan,
                       const graph::LeakGraph& graph) {
  auto it =
      std::lower_bound(scan.leaked.begin(), scan.leaked.end(), address,
                       [](const scanner::LeakedBlock& b, uint64_t a) { return b.address < a; });
  if (it == scan.leaked.end() || it->address != address) return "";
  return graph.is_direct(static_cast<uint32_t>(it - scan.leaked.begin())) ? "direct" : "indirect";
}

ExplainedBlock Block(const scanner::ExplainChain& chain, const scanner::ScanResult& scan,
                     const graph::LeakGraph& graph, StackResolver& stacks, Symbolizer& symbolizer,
                     const scanner::types::ModuleSegments& modules,
                     const std::vector<std::string>& types) {
  ExplainedBlock b;
  b.address = chain.steps.empty() ? 0 : chain.steps.back().address;
  for (size_t i = 0; i < chain.steps.size(); ++i) {
    uint32_t next = i + 1 < chain.steps.size() ? chain.steps[i + 1].offset : 0;
    b.chain.push_back(Hop(chain.steps[i], next, scan, stacks, types));
  }
  if (chain.leaked) {
    b.status = "leaked";
    b.leak_kind = LeakKindOf(b.address, scan, graph);
  } else if (chain.reached) {
    b.status = "reachable";
    b.root = Root(chain.root, modules, symbolizer);
  } else {
    b.status = "no-path";
  }
  return b;
}

}  // namespace

std::vector<ExplainTarget> ParseExplainTargets(std::string_view list) {
  std::vector<ExplainTarget> targets;
  size_t functions = 0;
  while (!list.empty()) {
    size_t slash = list.find('/');
    std::string_view item = list.substr(0, slash);
    list = slash == std::string_view::npos ? std::string_view() : list.substr(slash + 1);
    if (item.empty()) continue;
    ExplainTarget t{std::string(item), IsHexAddress(item), 0};
    if (t.is_address) {
      t.address = std::stoull(t.text, nullptr, 16);
    } else if (++functions > scanner::ExplainRequest::kMaxFunctions) {
      throw std::invalid_argument(
          fmt::format("more than {} functions to explain", scanner::ExplainRequest::kMaxFunctions));
    }
    targets.push_back(std::move(t));
  }
  return targets;
}

scanner::ExplainRequest MakeExplainRequest(const std::vector<ExplainTarget>& targets,
                                           const scanner::types::ModuleSegments& modules,
                                           Symbolizer& symbolizer) {
  scanner::ExplainRequest request;
  for (const ExplainTarget& t : targets) {
    if (t.is_address) request.addresses.push_back(t.address);
  }
  for (const ExplainTarget& t : targets) {
    if (t.is_address) continue;
    for (const scanner::types::Module& m : modules.modules()) {
      for (auto [begin, end] : symbolizer.FunctionRanges(m.path, t.text)) {
        request.code.push_back({begin + m.bias, end + m.bias, request.functions});
      }
    }
    ++request.functions;
  }
  return request;
}

std::string DescribeRoot(const ExplainRoot& r) {
  if (r.kind == "registers")
    return fmt::format("register {} of thread {}", r.register_name, r.thread);
  if (r.kind == "stack") {
    std::string frame = r.function.empty() ? "" : fmt::format(" in the frame of {}", r.function);
    return fmt::format("stack of thread {}{} at sp+{:#x} ({:#x})", r.thread, frame, r.stack_offset,
                       r.address);
  }
  if (r.kind == "global") {
    std::string module = r.module.substr(r.module.rfind('/') + 1);
    if (r.symbol.empty()) return fmt::format("global {:#x} of {}", r.address, module);
    return fmt::format("global {}+{:#x} of {} ({:#x})", r.symbol, r.symbol_offset, module,
                       r.address);
  }
  if (r.kind == "tls") return fmt::format("TLS of thread {} ({:#x})", r.thread, r.address);
  if (r.kind == "mapping") {
    return fmt::format("anonymous mapping [{:#x}-{:#x}] ({:#x})", r.region_begin, r.region_end,
                       r.address);
  }
  return fmt::format("other root memory ({:#x})", r.address);
}

std::vector<Explanation> BuildExplanations(const std::vector<ExplainTarget>& targets,
                                           const scanner::ScanResult& scan,
                                           const graph::LeakGraph& graph, StackResolver& stacks,
                                           Symbolizer& symbolizer,
                                           const scanner::types::ModuleSegments& modules,
                                           const std::vector<std::string>& types) {
  // Scan target numbers: the addresses first, then the functions (ExplainRequest).
  std::vector<size_t> order;
  for (size_t i = 0; i < targets.size(); ++i) {
    if (targets[i].is_address) order.push_back(i);
  }
  for (size_t i = 0; i < targets.size(); ++i) {
    if (!targets[i].is_address) order.push_back(i);
  }
  std::vector<Explanation> out(targets.size());
  for (size_t n = 0; n < order.size(); ++n) {
    Explanation& e = out[order[n]];
    e.target = targets[order[n]].text;
    e.function = !targets[order[n]].is_address;
    e.matched = n < scan.explained.matched.size() ? scan.explained.matched[n] : 0;
  }
  for (const scanner::ExplainChain& chain : scan.explained.chains) {
    if (chain.target >= order.size()) continue;
    out[order[chain.target]].blocks.push_back(
        Block(chain, scan, graph, stacks, symbolizer, modules, types));
  }
  return out;
}

}  // namespace heapgraph::report
