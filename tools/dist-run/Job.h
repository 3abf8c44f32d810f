//===- Job.h - Run the MPI launcher, forward stop signals -------*- C++ -*-===//
//
// dist-run's front process starts mpiexec (through dist-mpirun) and waits for
// it. A scheduler or subprocess.terminate() sends SIGTERM to the front, a
// terminal sends SIGINT; either must end the whole job (mpiexec and its
// ranks), not just the front. So the launcher runs in its own process group
// with stdin from /dev/null (a background group must not read the
// terminal), the front forwards SIGINT, SIGTERM and SIGHUP to that group
// (mpiexec ends its ranks on them), escalates to SIGKILL after a grace
// period, and, as the job's subreaper, kills any process of the job still
// alive once the launcher is gone (ranks orphaned by a killed mpiexec). The
// time limit (--timeout) is enforced the same way, and before the job by a
// watchdog over the compilation.
//
//===----------------------------------------------------------------------===//
#ifndef DIST_TOOLS_DISTRUN_JOB_H
#define DIST_TOOLS_DISTRUN_JOB_H

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace dist::run {

struct JobResult {
  enum Kind {
    Exited,   // the launcher exited with `code`
    Killed,   // the launcher was killed by `signal`, not by dist-run
    TimedOut, // past the time limit: dist-run ended it
    Stopped,  // dist-run received `signal` and ended the job
    NotStarted,
  } kind = NotStarted;
  int code = 0;
  int signal = 0;
  std::string error; // NotStarted: why
};

/// From here on, SIGINT, SIGTERM and SIGHUP are recorded instead of killing
/// the front (and forwarded to a job that runs). Call before creating what
/// must be cleaned up (the temporary folder).
void catchStopSignals();
/// The stop signal received so far, or 0.
int stopSignalReceived();
/// Restores the default action of `signal` and raises it, so that the front
/// ends as killed by it (what its parent expects after sending it).
[[noreturn]] void dieBy(int signal);

using Deadline = std::chrono::steady_clock::time_point;

/// Runs `args` (args[0] the program) to the end, or until `deadline`.
JobResult runJob(const std::vector<std::string> &args,
                 std::optional<Deadline> deadline);

/// Ends the process when work done in it (compiling the program: passes
/// cannot be interrupted, and a plan search or a pass may take any time)
/// outlasts a deadline: at the deadline it prints `message` and exits with
/// `exitCode`, unless it was destroyed first. Nothing is started yet that
/// would need ending.
class Watchdog {
public:
  Watchdog(Deadline deadline, std::string message, int exitCode);
  ~Watchdog();
  Watchdog(const Watchdog &) = delete;
  Watchdog &operator=(const Watchdog &) = delete;

private:
  std::mutex mutex;
  std::condition_variable cancelled;
  bool done = false;
  std::thread thread;
};

/// "SIGTERM", "SIGKILL", ... or "signal N".
std::string signalName(int signal);

} // namespace dist::run

#endif // DIST_TOOLS_DISTRUN_JOB_H
