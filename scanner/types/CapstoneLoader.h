// scanner/types/: Capstone without a link-time dependency. heapgraph calls Capstone only to
// analyze Block dispose helpers (DisposeHelperAnalyzer, for programs using the Blocks runtime)
// and wrapper functions of reported leaks (report/ThinWrapperDetector), but loading
// libcapstone.so.4 (77,000 relocations, bound at load) took 13-21 ms of every leak check's load
// of libheapgraph_scan.so, most of a short-lived process's check at exit (issue 14). So the cs_*
// functions heapgraph uses are defined in CapstoneLoader.cc as forwarders: the first cs_open
// loads the library of the major version the headers describe (RTLD_LOCAL) and binds all of them
// at once, so that later calls (also in a forked snapshot process) never enter the dynamic
// loader. When the library cannot be loaded, cs_open returns CS_ERR_MEM and callers analyze
// nothing, as when Capstone refuses a handle. The other functions are only called with a handle
// cs_open returned.
#pragma once

namespace heapgraph::scanner::types {

// Loads Capstone if not loaded yet; false when it cannot be (cs_open then fails).
bool CapstoneLoaded();

}  // namespace heapgraph::scanner::types
