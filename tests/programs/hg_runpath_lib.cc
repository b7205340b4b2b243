// tests/programs: libhg_runpath_lib.so lives in runpath_libs/, which only hg_dlopen's RUNPATH
// ($ORIGIN/runpath_libs) names: dlopen("libhg_runpath_lib.so") finds it only when the loader sees
// hg_dlopen, not libheapgraph.so, as the caller.
extern "C" __attribute__((visibility("default"))) int HgRunpathValue() {
  return 42;
}
