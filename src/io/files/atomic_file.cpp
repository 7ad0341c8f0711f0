#include "dcsgrid/io/files/atomic_file.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>

#include <array>
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <system_error>

#include <unistd.h>

#include "dcsgrid/core/error.hpp"

namespace dcsgrid::io {

namespace {

// The temporaries that exist now, where a signal handler can read them: fixed buffers (no
// allocation or freeing the handler could race with) and a state per slot. A temporary that finds
// no free slot is still removed by its destructor, only not on a signal.
enum SlotState : int { kFree = 0, kFilling = 1, kLive = 2 };
struct Slot {
  std::atomic<int> state{kFree};
  char path[4096];
};
std::array<Slot, 64> g_temporaries;

int register_temporary(const std::filesystem::path& path) {
  const std::string& text = path.native();
  if (text.size() >= sizeof(Slot::path)) return -1;
  for (std::size_t i = 0; i < g_temporaries.size(); ++i) {
    int expected = kFree;
    Slot& slot = g_temporaries[i];
    if (!slot.state.compare_exchange_strong(expected, kFilling)) continue;
    std::memcpy(slot.path, text.c_str(), text.size() + 1);
    slot.state.store(kLive);
    return int(i);
  }
  return -1;
}

void release_slot(int slot) {
  if (slot >= 0) g_temporaries[std::size_t(slot)].state.store(kFree);
}

// The target of each live temporary, for messages (output_name); not read by signal handlers.
std::mutex g_targets_mutex;
std::map<std::filesystem::path, std::filesystem::path> g_targets;

void remember_target(const std::filesystem::path& temp, const std::filesystem::path& target) {
  std::lock_guard lock(g_targets_mutex);
  g_targets[temp] = target;
}

void forget_target(const std::filesystem::path& temp) {
  std::lock_guard lock(g_targets_mutex);
  g_targets.erase(temp);
}

extern "C" void remove_live_temporaries() {
  for (Slot& slot : g_temporaries)
    if (slot.state.load() == kLive) ::unlink(slot.path);  // async-signal-safe
}

extern "C" void remove_temporaries_and_exit(int signal_number) {
  remove_live_temporaries();
  ::_exit(128 + signal_number);
}

}  // namespace

AtomicFile::AtomicFile(std::filesystem::path target) : target_(std::move(target)) {
  std::random_device rd;
  // Same folder, so the final rename stays within one file system; hidden, so no viewer picks it up.
  temp_ = target_.parent_path() /
          ("." + target_.filename().string() + ".tmp-" + std::to_string(::getpid()) + "-" +
           std::to_string(rd() % 1000000));
  slot_ = register_temporary(temp_);
  remember_target(temp_, target_);
}

AtomicFile::AtomicFile(std::filesystem::path target, std::filesystem::path temp)
    : target_(std::move(target)), temp_(std::move(temp)), slot_(register_temporary(temp_)) {
  remember_target(temp_, target_);
}

AtomicFile::~AtomicFile() {
  release_slot(slot_);
  forget_target(temp_);
  if (!committed_) {
    std::error_code ec;
    std::filesystem::remove(temp_, ec);
  }
}

void AtomicFile::commit() {
  std::error_code ec;
  std::filesystem::rename(temp_, target_, ec);
  if (ec) throw Error("cannot move the finished " + temp_.string() + " to " + target_.string() +
                      ": " + ec.message());
  committed_ = true;
  release_slot(slot_);
  slot_ = -1;
}

std::filesystem::path output_name(const std::filesystem::path& path) {
  std::lock_guard lock(g_targets_mutex);
  std::filesystem::path name = path;
  // A writer may stage its own temporary inside another's: follow the chain to the output.
  for (auto it = g_targets.find(name); it != g_targets.end(); it = g_targets.find(name))
    name = it->second;
  return name;
}

void remove_temporaries_on_signals() {
  struct sigaction action {};
  action.sa_handler = remove_temporaries_and_exit;
  sigemptyset(&action.sa_mask);
  for (const int s : {SIGINT, SIGTERM, SIGHUP}) sigaction(s, &action, nullptr);
  // A library that ends the process with exit() (libgomp's "Thread creation failed") skips our
  // destructors; the temporaries still go.
  std::atexit(remove_live_temporaries);
}

void require_not_an_input(const std::filesystem::path& output,
                          const std::vector<std::filesystem::path>& inputs) {
  std::error_code ec;
  if (!std::filesystem::exists(output, ec)) return;
  for (const auto& input : inputs)
    if (std::filesystem::equivalent(output, input, ec))
      throw Error("output " + output.string() + " is the input " + input.string() +
                  ": choose another output name (the input would be replaced)");
}

void write_file_atomically(const std::filesystem::path& path, const std::string& bytes) {
  AtomicFile file(path);
  {
    std::ofstream out(file.temp_path(), std::ios::binary);
    out.write(bytes.data(), std::streamsize(bytes.size()));
    out.close();
    if (!out) throw Error("cannot write " + path.string() + ": " + std::strerror(errno));
  }
  file.commit();
}

}  // namespace dcsgrid::io
