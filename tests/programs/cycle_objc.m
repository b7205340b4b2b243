/* tests/programs: Objective-C retain cycles on GNUstep Base (GCC's runtime, manual
   retain/release), for tests/scanner/BlocksObjcCycleTest. Usage: cycle_objc CASE; run under
   `heapgraph run`.
     timer_target       HGPoller keeps (retains) the repeating NSTimer it scheduled on the main run
                        loop, and the timer retains its target: a reachable timer-target cycle
                        (the run loop still holds the timer)
     timer_invalidated  control: the same, but the timer was invalidated (GNUstep releases and
                        clears its target): no cycle
     strong_delegate    HGLayerOwner keeps a CAAnimation (modeled on Core Animation's, which
                        retains its delegate) whose delegate is the owner: a leaked delegate cycle
     assign_delegate    control: HGController keeps an HGView whose _delegate (assign, not
                        retained) is the controller, held by a global: no cycle
     leaked_delegate    HGController keeps an HGView whose _delegate (assign: weak by name, a
                        class outside the exceptions table) is the controller; both dropped: a
                        leaked cycle, kind delegate (it leaked, so the _delegate word held)
     all                every case
   Prints nothing; exits 0 (64 on a bad argument). */
#import <Foundation/Foundation.h>
#include <string.h>

@interface CAAnimation : NSObject
{
@public
  id delegate; /* retained, as Core Animation's CAAnimation does */
}
@end
@implementation CAAnimation
- (void) dealloc
{
  [delegate release];
  [super dealloc];
}
@end

@interface HGPoller : NSObject
{
@public
  NSTimer *_timer;
  int _polls;
}
- (void) poll: (NSTimer *)timer;
@end
@implementation HGPoller
- (void) poll: (NSTimer *)timer
{
  _polls++;
}
@end

@interface HGLayerOwner : NSObject
{
@public
  CAAnimation *_animation;
}
@end
@implementation HGLayerOwner
@end

@interface HGView : NSObject
{
@public
  id _delegate; /* assign */
}
@end
@implementation HGView
@end

@interface HGController : NSObject
{
@public
  HGView *_view;
}
@end
@implementation HGController
@end

static HGController *g_controller;

static void schedule_poller(BOOL invalidate)
{
  HGPoller *poller = [HGPoller new];
  NSTimer *timer = [NSTimer scheduledTimerWithTimeInterval: 1000
                                                    target: poller
                                                  selector: @selector(poll:)
                                                  userInfo: nil
                                                   repeats: YES];
  poller->_timer = [timer retain];
  if (invalidate)
    {
      [timer invalidate];
    }
  [poller release];
}

static void timer_target(void) { schedule_poller(NO); }
static void timer_invalidated(void) { schedule_poller(YES); }

static void strong_delegate(void)
{
  HGLayerOwner *owner = [HGLayerOwner new];
  CAAnimation *animation = [CAAnimation new];
  owner->_animation = animation;
  animation->delegate = [owner retain];
  [owner release];
}

static void assign_delegate(void)
{
  g_controller = [HGController new];
  g_controller->_view = [HGView new];
  g_controller->_view->_delegate = g_controller;
}

static void leaked_delegate(void)
{
  HGController *controller = [HGController new];
  controller->_view = [HGView new];
  controller->_view->_delegate = controller;
}

/* Overwrites the stack below main's frame: no dead frame keeps a case's objects. */
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
  } cases[] = {{"timer_target", timer_target},
               {"timer_invalidated", timer_invalidated},
               {"strong_delegate", strong_delegate},
               {"assign_delegate", assign_delegate},
               {"leaked_delegate", leaked_delegate}};
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
