/* tests/programs: Objective-C objects captured by Blocks (clang -fblocks -fobjc-runtime=gcc on
   GNUstep Base, manual retain/release), for tests/scanner/BlocksObjcCycleTest. Usage:
   cycle_objc_blocks CASE; run under `heapgraph run`.
     block_self       ChatSession keeps a copied Block (_onMessage) that captures self: a leaked
                      block-self cycle. Debian's libBlocksRuntime neither retains nor releases
                      captured objects (it exports no _Block_use_RR), and GNUstep Base's own Blocks
                      runtime (which does retain) cannot copy clang 14's blocks; so this program
                      links libBlocksRuntime first and supplies the runtime's object hooks itself:
                      _Block_object_assign/_dispose below retain and release
                      BLOCK_FIELD_IS_OBJECT captures, as Apple's, libobjc2's and GNUstep's do.
     byref_self       control: the Block captures a __block ChatSession * (manual retain/release:
                      the runtime neither retains nor releases it), the session held by a global
     unretained_self  control: the Block captures the session as a plain void * (held by a
                      global)
     thread_stale     4 threads each leak a 224-byte block whose only pointer stays in their dead
                      frame; joined (glibc keeps their stacks mapped). With the Blocks runtime and
                      libobjc loaded every type reader's Prepare runs in full: none may make that
                      dead frame look like a root (an earlier dlopen per module did)
     all              every case
   Prints nothing; exits 0 (64 on a bad argument). */
#import <Foundation/Foundation.h>
#include <Block.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum
{
  kBlockFieldIsObject = 3
};

/* The Blocks runtime's object hooks, retaining captured objects. Not inlined: the helpers call
   them, as they call the runtime's. */
void __attribute__((noinline)) _Block_object_assign(void *destination, const void *object, const int flags)
{
  static void (*next)(void *, const void *, const int);
  if (flags == kBlockFieldIsObject)
    {
      *(const void **)destination = object;
      [(id)object retain];
      return;
    }
  if (next == NULL)
    next = (void (*)(void *, const void *, const int))dlsym(RTLD_NEXT, "_Block_object_assign");
  next(destination, object, flags);
}

void __attribute__((noinline)) _Block_object_dispose(const void *object, const int flags)
{
  static void (*next)(const void *, const int);
  if (flags == kBlockFieldIsObject)
    {
      [(id)object release];
      return;
    }
  if (next == NULL)
    next = (void (*)(const void *, const int))dlsym(RTLD_NEXT, "_Block_object_dispose");
  next(object, flags);
}

@interface ChatSession : NSObject
{
@public
  void (^_onMessage)(void);
  int _messages;
}
- (void) start;
- (void) startByref;
- (void) startUnretained;
@end

@implementation ChatSession
- (void) start
{
  _onMessage = Block_copy(^{
    _messages++;
  });
}
- (void) startByref
{
  __block ChatSession *session = self;
  _onMessage = Block_copy(^{
    session->_messages++;
  });
}
- (void) startUnretained
{
  void *raw = self;
  _onMessage = Block_copy(^{
    ((ChatSession *)raw)->_messages++;
  });
}
@end

static ChatSession *g_byref_session;
static ChatSession *g_unretained_session;

static void block_self(void)
{
  ChatSession *session = [ChatSession new];
  [session start];
  [session release];
}

static void byref_self(void)
{
  g_byref_session = [ChatSession new];
  [g_byref_session startByref];
}

static void unretained_self(void)
{
  ChatSession *session = [ChatSession new];
  [session startUnretained];
  g_unretained_session = session;
}

static void *__attribute__((noinline)) leak_in_thread_stale(void *unused)
{
  void *volatile block = malloc(224);
  (void)unused;
  memset(block, 0, 224);
  __asm__ volatile("" : : "r"(&block) : "memory");
  return NULL;
}

static void thread_stale(void)
{
  pthread_t threads[4];
  unsigned i;
  for (i = 0; i < 4; i++)
    if (pthread_create(&threads[i], NULL, leak_in_thread_stale, NULL) != 0)
      abort();
  for (i = 0; i < 4; i++)
    pthread_join(threads[i], NULL);
}

static void __attribute__((noinline)) clear_stack(void)
{
  /* The asm keeps the compiler from dropping the dead stores, and with them the whole call. */
  char buffer[64 * 1024];
  memset(buffer, 0, sizeof(buffer));
  __asm__ volatile("" : : "r"(buffer) : "memory");
}

int main(int argc, char **argv)
{
  struct
  {
    const char *name;
    void (*run)(void);
  } cases[] = {{"block_self", block_self},
               {"byref_self", byref_self},
               {"unretained_self", unretained_self},
               {"thread_stale", thread_stale}};
  int any = 0;
  unsigned i;
  NSAutoreleasePool *pool;
  if (argc != 2)
    return 64;
  pool = [NSAutoreleasePool new];
  for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
    {
      if (strcmp(argv[1], "all") == 0 || strcmp(argv[1], cases[i].name) == 0)
        {
          cases[i].run();
          any = 1;
        }
    }
  [pool release];
  clear_stack();
  return any ? 0 : 64;
}
