// A string argument that names one of a fixed set of choices (reduce='sum', ...): the value it stands for, or
// gpuprim's ValueError listing the choices in the order given.
#pragma once
#include <c10/util/string_view.h>

#include <initializer_list>
#include <string>
#include <utility>

#include "common/torch_utils.h"

namespace gpuprim {

template <typename Value>
Value parse_choice(const char* op, const char* argument, c10::string_view name,
                   std::initializer_list<std::pair<const char*, Value>> choices) {
  std::string listed;
  for (const auto& [choice, value] : choices) {
    if (name == choice) return value;
    listed += (listed.empty() ? "one of '" : ", '") + std::string(choice) + "'";
  }
  GPUPRIM_CHECK_ARG(false, op, argument, listed, "'" + std::string(name) + "'");
  return choices.begin()->second;  // unreachable
}

}  // namespace gpuprim
