#include "dcsgrid/io/text/text_buffer.hpp"

#include <algorithm>
#include <cstring>

#include "io/text/text.hpp"

namespace dcsgrid::io {

TextBuffer::TextBuffer(std::string_view text) {
  reserve(text.size());
  resize(text.size());
  if (!text.empty()) std::memcpy(bytes_.get(), text.data(), text.size());  // an empty text has no bytes_
}

void TextBuffer::reserve(std::size_t capacity) {
  if (capacity <= capacity_) return;
  std::unique_ptr<char[]> bytes(new char[capacity]);  // not value-initialised: no byte written
  detail::advise_huge_pages(bytes.get(), capacity);
  if (size_) std::memcpy(bytes.get(), bytes_.get(), size_);
  bytes_ = std::move(bytes);
  capacity_ = capacity;
}

void TextBuffer::resize(std::size_t size) {
  if (size > capacity_) reserve(std::max(size, 2 * capacity_));
  size_ = size;
}

}  // namespace dcsgrid::io
