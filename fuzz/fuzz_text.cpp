// The text reader every text input goes through (io::read_text_input: structures, topologies, DX
// and cube maps, list files), on the paths a hostile input takes:
// - FUZZ_COMPRESSED (targets gz, bz2, xz): the bytes as a compressed file (FUZZ_FILE_NAME ends
//   .gz, .bz2 or .xz), input limit 64 KiB (small, so a bomb costs little a run): a decompression bomb must be refused, never held;
//   text that comes back is within the limit.
// - FUZZ_STREAM (target stream): the bytes streamed through a named pipe, as `dcsgrid <(...)`
//   reads them, must give what the same bytes give as a regular file: the same text, or an
//   error for both (each naming its file).
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>

#include "dcsgrid/io/structure/read.hpp"
#include "fuzz_input.hpp"

namespace {

constexpr std::size_t kInputLimit = std::size_t(64) << 10;

// The text, or nothing when the reader refused the input (cleanly: expect_clean checks it; the
// refusal's message into *refusal when given).
std::optional<std::string> read_text(const std::filesystem::path& path, std::string* refusal = nullptr) {
  std::optional<std::string> text;
  dcsgrid::fuzz::expect_clean(path, [&] {
    try {
      text = std::string(dcsgrid::io::read_text_input(path).view());
    } catch (const dcsgrid::Error& e) {
      if (refusal) *refusal = e.what();
      throw;
    }
  });
  if (text && text->size() > kInputLimit)
    dcsgrid::fuzz::finding("text beyond the input limit came back", path.c_str());
  return text;
}

#ifdef FUZZ_STREAM
// The bytes through a named pipe: a writer thread feeds it while the reader reads (a reader
// that stops early leaves the writer an EPIPE, which ends it).
std::optional<std::string> read_streamed(const std::uint8_t* data, std::size_t size, std::string& refusal) {
  const std::filesystem::path pipe = dcsgrid::fuzz::scratch_folder() / "stream";
  if (!std::filesystem::exists(pipe) && mkfifo(pipe.c_str(), 0600) != 0)
    dcsgrid::fuzz::finding("cannot make the named pipe", pipe.c_str());
  std::thread writer([&] {
    int fd = -1;
    while ((fd = open(pipe.c_str(), O_WRONLY)) < 0 && errno == EINTR) {  // libFuzzer's timer
    }
    if (fd < 0) return;
    for (std::size_t done = 0; done < size;) {
      const ssize_t n = write(fd, data + done, size - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += std::size_t(n);
    }
    close(fd);
  });
  std::optional<std::string> text = read_text(pipe, &refusal);
  // A reader that refused before opening the pipe leaves the writer waiting for one: open it.
  const int unblock = open(pipe.c_str(), O_RDONLY | O_NONBLOCK);
  writer.join();
  if (unblock >= 0) close(unblock);
  return text;
}
#endif

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("DCSGRID_MAX_INPUT_BYTES", "64K", 1);
  signal(SIGPIPE, SIG_IGN);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string file_refusal;
  const std::optional<std::string> file_text =
      read_text(dcsgrid::fuzz::input_file(data, size, FUZZ_FILE_NAME), &file_refusal);
#ifdef FUZZ_STREAM
  std::string stream_refusal;
  const std::optional<std::string> streamed = read_streamed(data, size, stream_refusal);
  if (file_text.has_value() != streamed.has_value())
    dcsgrid::fuzz::finding("the streamed and the file read disagree on refusing",
                           (file_text ? "the file was read; the stream refused: " + stream_refusal
                                      : "the stream was read; the file refused: " + file_refusal)
                               .c_str());
  if (file_text && *file_text != *streamed)
    dcsgrid::fuzz::finding("the streamed and the file read give different text", "");
#endif
  (void)file_text;
  return 0;
}
