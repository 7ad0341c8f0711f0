// The bytes of an input's text, owned. Its memory is not written before the text is read into
// it: a large file's pages are then first touched by the threads that read it, in parallel,
// where a std::string would have zeroed every page on one thread first.
#pragma once
#include <cstddef>
#include <memory>
#include <string_view>

namespace dcsgrid::io {

class TextBuffer {
 public:
  TextBuffer() = default;
  explicit TextBuffer(std::string_view text);
  TextBuffer(const TextBuffer& other) : TextBuffer(other.view()) {}
  TextBuffer& operator=(const TextBuffer& other) { return *this = TextBuffer(other.view()); }
  TextBuffer(TextBuffer&&) noexcept = default;
  TextBuffer& operator=(TextBuffer&&) noexcept = default;

  std::string_view view() const { return {bytes_.get(), size_}; }
  operator std::string_view() const { return view(); }
  const char* data() const { return bytes_.get(); }
  char* data() { return bytes_.get(); }
  std::size_t size() const { return size_; }
  char& operator[](std::size_t i) { return bytes_[i]; }
  char operator[](std::size_t i) const { return bytes_[i]; }
  std::size_t find(std::string_view what, std::size_t from = 0) const { return view().find(what, from); }
  std::size_t find(char c, std::size_t from = 0) const { return view().find(c, from); }

  std::size_t capacity() const { return capacity_; }
  // Room for `capacity` bytes, the text kept.
  void reserve(std::size_t capacity);
  // Makes the text `size` bytes long: within the capacity, the bytes past the old size are
  // whatever the memory held until written.
  void resize(std::size_t size);

 private:
  std::unique_ptr<char[]> bytes_;
  std::size_t size_ = 0, capacity_ = 0;
};

}  // namespace dcsgrid::io
