// The demo application recorded by the README's demo command: a small "chat client" that keeps
// some state alive, frees other state, and leaks a few things the way real programs do.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

struct Message {
  std::string text;
  Message* next = nullptr;
};

struct ChatSession {
  std::vector<std::unique_ptr<Message>> history;
  char* title = nullptr;
};

ChatSession* g_session = nullptr;        // reachable until exit
void* volatile g_last_avatar = nullptr;  // keeps the compiler from eliding the allocation

__attribute__((noinline)) void LoadHistory(ChatSession* session, int count) {
  for (int i = 0; i < count; ++i) {
    auto m = std::make_unique<Message>();
    m->text = "message number " + std::to_string(i) + " with enough text to leave SSO";
    session->history.push_back(std::move(m));
  }
}

__attribute__((noinline)) Message* BuildLeakedChain(int length) {
  Message* head = nullptr;
  for (int i = 0; i < length; ++i) {
    auto* m = new Message;
    m->text = "draft that nobody frees, part " + std::to_string(i);
    m->next = head;
    head = m;
  }
  return head;
}

__attribute__((noinline)) void CacheAvatar() {
  void* avatar = malloc(64 * 1024);  // leaked: the pointer is dropped below
  memset(avatar, 0x5a, 64 * 1024);
  g_last_avatar = avatar;
  g_last_avatar = nullptr;
}

__attribute__((noinline)) void TemporaryWork() {
  std::vector<std::string> scratch;
  for (int i = 0; i < 100; ++i) scratch.push_back(std::string(100, 'x'));
}

}  // namespace

int main() {
  g_session = new ChatSession;
  g_session->title = strdup("heapgraph demo chat");
  LoadHistory(g_session, 20);
  BuildLeakedChain(5);
  for (int i = 0; i < 3; ++i) CacheAvatar();
  TemporaryWork();
  std::printf("demo_app: %zu messages loaded\n", g_session->history.size());
  return 0;
}
