#include "report/ExplanationJson.h"

#include <string>

#include "report/AddressHex.h"

namespace heapgraph::report {
namespace {

using json = nlohmann::ordered_json;

uint64_t FromHex(const json& value) {
  return std::stoull(value.get<std::string>(), nullptr, 16);
}

json NullIfEmpty(const std::string& s) {
  return s.empty() ? json(nullptr) : json(s);
}

std::string StringOrEmpty(const json& value) {
  return value.is_null() ? std::string() : value.get<std::string>();
}

json RootToJson(const ExplainRoot& r) {
  bool threaded = r.kind == "stack" || r.kind == "registers" || r.kind == "tls";
  bool region = r.region_end != 0;
  return {{"kind", r.kind},
          {"description", DescribeRoot(r)},
          {"thread", threaded ? json(r.thread) : json(nullptr)},
          {"address", r.kind == "registers" ? json(nullptr) : json(AddressHex(r.address))},
          {"register", NullIfEmpty(r.register_name)},
          {"stack_offset", r.kind == "stack" ? json(AddressHex(r.stack_offset)) : json(nullptr)},
          {"function", NullIfEmpty(r.function)},
          {"module", NullIfEmpty(r.module)},
          {"symbol", NullIfEmpty(r.symbol)},
          {"symbol_offset", r.symbol.empty() ? json(nullptr) : json(AddressHex(r.symbol_offset))},
          {"region", region ? json::array({AddressHex(r.region_begin), AddressHex(r.region_end)})
                            : json(nullptr)}};
}

ExplainRoot RootFromJson(const json& j) {
  ExplainRoot r;
  r.kind = j.at("kind").get<std::string>();
  if (!j.at("thread").is_null()) r.thread = j.at("thread").get<int>();
  if (!j.at("address").is_null()) r.address = FromHex(j.at("address"));
  r.register_name = StringOrEmpty(j.at("register"));
  if (!j.at("stack_offset").is_null()) r.stack_offset = FromHex(j.at("stack_offset"));
  r.function = StringOrEmpty(j.at("function"));
  r.module = StringOrEmpty(j.at("module"));
  r.symbol = StringOrEmpty(j.at("symbol"));
  if (!j.at("symbol_offset").is_null()) r.symbol_offset = FromHex(j.at("symbol_offset"));
  if (!j.at("region").is_null()) {
    r.region_begin = FromHex(j.at("region").at(0));
    r.region_end = FromHex(j.at("region").at(1));
  }
  return r;
}

json HopToJson(const ExplainHop& h, bool last) {
  return {{"address", AddressHex(h.address)},
          {"size", h.size},
          {"type", h.type},
          {"stack", h.stack},
          {"next_offset", last ? json(nullptr) : json(AddressHex(h.offset))}};
}

ExplainHop HopFromJson(const json& j) {
  ExplainHop h;
  h.address = FromHex(j.at("address"));
  h.size = j.at("size").get<uint64_t>();
  h.type = j.at("type").get<std::string>();
  h.stack = j.at("stack").get<std::vector<std::string>>();
  if (!j.at("next_offset").is_null())
    h.offset = static_cast<uint32_t>(FromHex(j.at("next_offset")));
  return h;
}

json BlockToJson(const ExplainedBlock& b) {
  json chain = json::array();
  for (size_t i = 0; i < b.chain.size(); ++i) {
    chain.push_back(HopToJson(b.chain[i], i + 1 == b.chain.size()));
  }
  return {{"address", AddressHex(b.address)},
          {"status", b.status},
          {"leak_kind", NullIfEmpty(b.leak_kind)},
          {"root", b.root ? RootToJson(*b.root) : json(nullptr)},
          {"chain", std::move(chain)}};
}

ExplainedBlock BlockFromJson(const json& j) {
  ExplainedBlock b;
  b.address = FromHex(j.at("address"));
  b.status = j.at("status").get<std::string>();
  b.leak_kind = StringOrEmpty(j.at("leak_kind"));
  if (!j.at("root").is_null()) b.root = RootFromJson(j.at("root"));
  for (const json& h : j.at("chain")) b.chain.push_back(HopFromJson(h));
  return b;
}

}  // namespace

nlohmann::ordered_json ExplanationsToJson(const std::vector<Explanation>& explanations) {
  json out = json::array();
  for (const Explanation& e : explanations) {
    json blocks = json::array();
    for (const ExplainedBlock& b : e.blocks) blocks.push_back(BlockToJson(b));
    out.push_back({{"target", e.target},
                   {"kind", e.function ? "function" : "address"},
                   {"matched", e.matched},
                   {"blocks", std::move(blocks)}});
  }
  return out;
}

std::vector<Explanation> ExplanationsFromJson(const nlohmann::ordered_json& array) {
  std::vector<Explanation> out;
  for (const json& j : array) {
    Explanation e;
    e.target = j.at("target").get<std::string>();
    e.function = j.at("kind").get<std::string>() == "function";
    e.matched = j.at("matched").get<uint64_t>();
    for (const json& b : j.at("blocks")) e.blocks.push_back(BlockFromJson(b));
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace heapgraph::report
