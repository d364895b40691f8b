// The table of temporary files and the interrupt handler (temp_files.h).
#include "io/temp_files.h"

#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>

#include "collscope/files.h"

namespace collscope {
namespace io {
namespace {

constexpr int kSlots = 64;
constexpr std::size_t kMaxPath = 4096;

struct Slot {
  std::atomic<bool> taken{false};
  std::atomic<unsigned> seq{0};  // odd while `path` or `armed` change
  std::atomic<bool> armed{false};
  std::atomic<char> path[kMaxPath];  // atomics: the handler reads them while others may write
};
Slot g_slots[kSlots];
std::atomic<bool> g_interrupted{false};

void set_slot(Slot& s, const std::string* path, bool armed) {
  s.seq.fetch_add(1, std::memory_order_seq_cst);
  if (path) {
    const std::size_t n = std::min(path->size(), kMaxPath - 1);
    for (std::size_t i = 0; i < n; ++i) s.path[i].store((*path)[i], std::memory_order_relaxed);
    s.path[n].store('\0', std::memory_order_relaxed);
  }
  s.armed.store(armed, std::memory_order_relaxed);
  s.seq.fetch_add(1, std::memory_order_seq_cst);
}

// Async-signal-safe from here on: atomics, unlink, write, signal, raise.
void remove_armed_files() {
  for (Slot& s : g_slots) {
    char name[kMaxPath];
    // A slot whose name is changing is looked at again for a moment: its owner runs
    // on another thread (if it was this one, waiting would not help, hence the bound).
    for (int tries = 0; tries < 1000; ++tries) {
      const unsigned a = s.seq.load(std::memory_order_seq_cst);
      if (a & 1u) {
        sched_yield();
        continue;
      }
      const bool armed = s.armed.load(std::memory_order_relaxed);
      std::size_t i = 0;
      if (armed)
        for (; i + 1 < kMaxPath; ++i)
          if ((name[i] = s.path[i].load(std::memory_order_relaxed)) == '\0') break;
      name[i] = '\0';
      if (s.seq.load(std::memory_order_seq_cst) != a) continue;
      if (armed && name[0]) ::unlink(name);
      break;
    }
  }
}

void say(const char* text) {
  std::size_t left = std::strlen(text);
  while (left > 0) {
    const ssize_t n = ::write(STDERR_FILENO, text, left);
    if (n <= 0) return;
    text += n;
    left -= static_cast<std::size_t>(n);
  }
}

void on_interrupt(int sig) {
  static std::atomic<bool> entered{false};
  if (entered.exchange(true)) {
    // Another thread is already cleaning up and will end the process.
    for (;;) ::pause();
  }
  g_interrupted.store(true, std::memory_order_seq_cst);
  remove_armed_files();
  const char* name = sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "SIGHUP";
  say("\nerror[cli.interrupted] interrupted by ");
  say(name);
  say(": stopped; files being written were removed and existing outputs are unchanged\n");
  // Die of the same signal, so that whoever started us sees how we ended.
  ::signal(sig, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  ::pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  ::raise(sig);
  ::_exit(128 + sig);
}

}  // namespace

std::string temp_name(const std::string& dir, const std::string& name, unsigned attempt) {
  static std::atomic<unsigned> counter{0};
  const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  return dir + "/." + name.substr(0, 128) + ".tmp-" + std::to_string(::getpid()) + "-" +
         std::to_string(static_cast<unsigned long long>(now)) + "-" + std::to_string(counter.fetch_add(1)) + "-" +
         std::to_string(attempt);
}

TempFile::~TempFile() {
  if (slot_ < 0) return;
  set_slot(g_slots[slot_], nullptr, false);
  g_slots[slot_].taken.store(false, std::memory_order_release);
}

bool TempFile::arm(const std::string& path) {
  path_ = path;
  if (slot_ < 0)
    for (int i = 0; i < kSlots && slot_ < 0; ++i) {
      bool expected = false;
      if (g_slots[i].taken.compare_exchange_strong(expected, true)) slot_ = i;
    }
  if (slot_ >= 0 && path.size() < kMaxPath) set_slot(g_slots[slot_], &path, true);
  return !g_interrupted.load(std::memory_order_seq_cst);
}

void TempFile::disarm() {
  if (slot_ >= 0) set_slot(g_slots[slot_], nullptr, false);
}

}  // namespace io

void install_interrupt_cleanup() {
  struct sigaction sa {};
  sa.sa_handler = io::on_interrupt;
  sigemptyset(&sa.sa_mask);
  // The others wait while one is handled: one message, one cleanup.
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&sa.sa_mask, s);
  sa.sa_flags = 0;
  for (int s : {SIGINT, SIGTERM, SIGHUP}) {
    // A signal ignored by whoever started us stays ignored (nohup, a shell's background job).
    struct sigaction old {};
    if (::sigaction(s, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    ::sigaction(s, &sa, nullptr);
  }
}

}  // namespace collscope
