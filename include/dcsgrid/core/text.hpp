// Small text helpers shared by the readers and the format tables.
#pragma once
#include <string>

namespace dcsgrid {

// ASCII letters lowered (file extensions, format and keyword names); other bytes kept.
inline std::string ascii_lower(std::string text) {
  for (char& c : text)
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  return text;
}

}  // namespace dcsgrid
