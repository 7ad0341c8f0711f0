// Small text helpers shared by the readers and the format tables.
#pragma once
#include <string>
#include <vector>

namespace dcsgrid {

// ASCII letters lowered (file extensions, format and keyword names); other bytes kept.
inline std::string ascii_lower(std::string text) {
  for (char& c : text)
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  return text;
}

// The comma-separated items of text ("" items included, so "a,,b" reports the empty one).
inline std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::size_t pos = 0;
  while (true) {
    const std::size_t comma = text.find(',', pos);
    items.push_back(text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
    if (comma == std::string::npos) return items;
    pos = comma + 1;
  }
}

}  // namespace dcsgrid
