// The demo application recorded by the README's demo command: a small "chat client" that keeps
// some state alive, frees other state, and leaks a few things the way real programs do: a dropped
// buffer, a chain of drafts, and two typed retain cycles that no pointer scan alone can name (a
// contact and its conversation holding each other through shared_ptr members, and a typing
// indicator whose std::function callback captures a shared_ptr to its owner).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
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

struct Conversation;
struct Contact {
  std::string name;
  std::shared_ptr<Conversation> conversation;  // strong: the owner's reference
};
struct Conversation {
  std::shared_ptr<Contact> peer;  // strong as well: the cycle (should be a weak_ptr)
  std::vector<std::string> unread;
};

struct TypingIndicator {
  std::function<void()> on_timeout;  // its lambda captures a shared_ptr to this indicator
  int ticks = 0;
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

__attribute__((noinline)) void OpenConversation(const char* name) {
  auto contact = std::make_shared<Contact>();
  contact->name = std::string(name) + ", a contact whose name leaves SSO";
  auto conversation = std::make_shared<Conversation>();
  conversation->unread.push_back("unread message that keeps the conversation non-trivial");
  contact->conversation = conversation;
  conversation->peer = contact;  // both handles go out of scope: a leaked shared_ptr cycle
}

__attribute__((noinline)) void StartTypingIndicator() {
  auto indicator = std::make_shared<TypingIndicator>();
  indicator->on_timeout = [indicator] { ++indicator->ticks; };  // self-capture: a leaked cycle
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
  OpenConversation("Ada");
  StartTypingIndicator();
  TemporaryWork();
  std::printf("demo_app: %zu messages loaded\n", g_session->history.size());
  return 0;
}
