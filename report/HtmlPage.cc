#include "report/HtmlPage.h"

#include "report/HtmlEscape.h"

namespace heapgraph::report {
namespace {

constexpr char kStyle[] = R"(
body { font-family: sans-serif; margin: 1.5em; color: #222; max-width: 80em; }
h1 { font-size: 1.4em; } h2 { font-size: 1.2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; } td, th { padding: 0.15em 0.6em; text-align: left; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
.group { border: 1px solid #ddd; border-radius: 4px; margin: 0.5em 0; padding: 0.3em 0.6em; }
.group > details > summary { cursor: pointer; }
.frames { font-family: monospace; font-size: 0.9em; margin: 0.3em 0; padding-left: 1.5em; }
.frames li.system { color: #888; }
pre.source { background: #f6f8fa; padding: 0.4em; font-size: 0.85em; overflow-x: auto; }
pre.source .hit { background: #fde2e1; font-weight: bold; }
.bar { display: inline-block; height: 0.9em; background: #7aa6da; vertical-align: middle; }
.bar.leak, .bar.suspect { background: #d9534f; }
.chart td { padding: 0.1em 0.4em; }
.verdict { font-size: 1.1em; font-weight: bold; }
.cycle { margin: 0.8em 0; } .cycle svg { max-width: 100%; height: auto; }
.muted { color: #777; } .warn { color: #a94442; }
#controls { margin: 0.5em 0; }
)";

constexpr char kScript[] = R"(
(function () {
  var list = document.getElementById('groups');
  var filter = document.getElementById('filter');
  var sort = document.getElementById('sort');
  if (!list || !filter || !sort) return;
  function apply() {
    var query = filter.value.toLowerCase();
    var key = sort.value;
    var items = Array.prototype.slice.call(list.children);
    items.sort(function (a, b) { return Number(b.dataset[key]) - Number(a.dataset[key]); });
    items.forEach(function (item) {
      item.style.display = item.dataset.text.indexOf(query) >= 0 ? '' : 'none';
      list.appendChild(item);
    });
  }
  filter.addEventListener('input', apply);
  sort.addEventListener('change', apply);
})();
)";

}  // namespace

std::string HtmlPage(const std::string& title, const std::string& body) {
  std::string page = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  page += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  page += "<title>" + HtmlEscape(title) + "</title>\n<style>" + kStyle + "</style>\n</head>\n";
  page += "<body>\n" + body + "<script>" + kScript + "</script>\n</body>\n</html>\n";
  return page;
}

std::string GroupControls() {
  return "<div id=\"controls\"><label>Filter <input id=\"filter\" type=\"search\" "
         "placeholder=\"function, file, type\"></label> <label>Sort by <select id=\"sort\">"
         "<option value=\"retained\">retained bytes</option><option value=\"size\">leaked "
         "bytes</option><option value=\"count\">blocks</option></select></label></div>\n";
}

}  // namespace heapgraph::report
