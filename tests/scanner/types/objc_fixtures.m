/* tests/scanner/types: Objective-C objects on GNUstep Base (GCC's runtime, manual retain/release)
   for GnuObjcReaderTest, built into a shared library the test loads. */
#import <Foundation/Foundation.h>
#include <objc/runtime.h>

/* Modeled on Core Animation's CAAnimation, which retains its delegate. */
@interface CAAnimation : NSObject
{
@public
  id delegate;
}
@end
@implementation CAAnimation
@end

@interface HGOwner : NSObject
{
@public
  CAAnimation *_animation;
  id _delegate;
  id _dataSource;
  id _helper;
  int _count;
  NSTimer *_timer;
  void *_buffer;
  id _onMessage; /* a Block in real code; '@' typed either way */
}
- (void) tick: (NSTimer *)timer;
@end
@implementation HGOwner
- (void) tick: (NSTimer *)timer
{
}
@end

id hg_fixture_owner(void) { return [HGOwner new]; }
id hg_fixture_plain_owner(void) { return class_createInstance([HGOwner class], 0); }
id hg_fixture_animation(void) { return [CAAnimation new]; }
id hg_fixture_timer(id target, id info)
{
  return [[NSTimer alloc] initWithFireDate: [NSDate dateWithTimeIntervalSinceNow: 1000]
                                  interval: 1000
                                    target: target
                                  selector: @selector(tick:)
                                  userInfo: info
                                   repeats: YES];
}
void hg_fixture_set(id owner, id animation, id delegate, id data_source, id helper, id timer,
                    id on_message)
{
  HGOwner *o = owner;
  o->_animation = animation;
  o->_delegate = delegate;
  o->_dataSource = data_source;
  o->_helper = helper;
  o->_timer = timer;
  o->_onMessage = on_message;
  o->_buffer = o;
}
void hg_fixture_set_delegate(id animation, id delegate)
{
  ((CAAnimation *)animation)->delegate = delegate;
}
void *hg_fixture_class(id object) { return (void *)object_getClass(object); }
void hg_fixture_release(id object) { [object release]; }
