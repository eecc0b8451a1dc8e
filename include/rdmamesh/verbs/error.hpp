// verbs_error: a failed verbs call, named with its arguments, carrying errno.
#pragma once

#include <cerrno>
#include <string>
#include <system_error>

namespace rdmamesh::verbs {

class verbs_error : public std::system_error {
 public:
  // `call` names the function and its arguments, e.g. "ibv_reg_mr(addr=0x.., len=4096, access=0x7)".
  verbs_error(const std::string& call, int err) : std::system_error(err, std::generic_category(), call + " failed") {}
};

// Verbs calls that return an errno-style code (0 = success, some return -1 and set errno).
inline void check_rc(int rc, const std::string& call) {
  if (rc == 0) return;
  throw verbs_error(call, rc > 0 ? rc : errno);
}

template <class T>
T* check_ptr(T* p, const std::string& call) {
  if (p == nullptr) throw verbs_error(call, errno ? errno : EIO);
  return p;
}

}  // namespace rdmamesh::verbs
