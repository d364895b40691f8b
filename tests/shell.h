// Running a command line from a test: its exit status and what it printed.
#pragma once

#include <doctest/doctest.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace test_shell {

struct Output {
  int code = -1;    // exit status; -1 when the process did not exit normally
  std::string out;  // what it wrote to stdout (and stderr where the command redirects it)
};

// Runs `cmd` with /bin/sh; the caller adds redirections ("2>&1", "2>/dev/null").
inline Output shell(const std::string& cmd) {
  Output o;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) o.out.append(buf, n);
  const int status = pclose(p);
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

}  // namespace test_shell
