#pragma once
// Shared by the unit tests that read text the tool prints.

#include <string_view>

inline bool has(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}
