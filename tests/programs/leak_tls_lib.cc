// tests/programs: a library that leak_traps dlopens. Its __thread slot uses the global-dynamic
// TLS model, so each thread's copy lives in a block that __tls_get_addr allocates with malloc
// (reachable only through the thread's DTV).
#include <stdint.h>

namespace {

__thread void* volatile t_slot;
__thread uint64_t t_padding[6];  // a TLS block of more than one word

}  // namespace

extern "C" __attribute__((noinline, used)) void LeakTlsLibStore(void* p) {
  t_slot = p;
  t_padding[0] = 1;
}

extern "C" __attribute__((noinline, used)) void* LeakTlsLibLoad() {
  return t_slot;
}
