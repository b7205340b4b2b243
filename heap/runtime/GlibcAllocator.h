// heap/runtime/: glibc's own allocator entry points, under the names glibc exports for them. The
// interposed malloc family (Interposer.cc) calls these, never the interposed names; every block the
// recorder sees is one of theirs (GlibcChunk.h reads its header). Declarations only.
#pragma once

#include <cstddef>

extern "C" {
void* __libc_malloc(size_t size);
void* __libc_calloc(size_t count, size_t size);
void* __libc_realloc(void* address, size_t size);
void __libc_free(void* address);
void* __libc_memalign(size_t alignment, size_t size);
void* __libc_valloc(size_t size);
void* __libc_pvalloc(size_t size);
}
