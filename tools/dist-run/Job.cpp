//===- Job.cpp - Run the MPI launcher, forward stop signals ---------------===//

#include "Job.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <optional>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char **environ;

using namespace dist::run;

namespace {
volatile sig_atomic_t stopSignal = 0;
/// The launcher's process group while it runs, else 0.
volatile sig_atomic_t jobGroup = 0;

/// Seconds between the stop signal and SIGKILL (mpiexec needs a moment to
/// end its ranks).
constexpr int kGraceSeconds = 10;

extern "C" void onStopSignal(int signal) {
  if (!stopSignal)
    stopSignal = signal;
  pid_t group = jobGroup;
  if (group > 0)
    ::kill(-group, signal);
}

/// The children of this process: with the subreaper flag, what remains of a
/// job whose launcher is gone.
std::vector<pid_t> children() {
  std::vector<pid_t> out;
  DIR *proc = ::opendir("/proc");
  if (!proc)
    return out;
  const pid_t self = ::getpid();
  while (dirent *entry = ::readdir(proc)) {
    char *end;
    long pid = std::strtol(entry->d_name, &end, 10);
    if (*end || pid <= 0)
      continue;
    char path[64], buf[512];
    std::snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      continue;
    ssize_t n = ::read(fd, buf, sizeof(buf) - 1);
    ::close(fd);
    if (n <= 0)
      continue;
    buf[n] = 0;
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
    const char *close = std::strrchr(buf, ')');
    long ppid = 0;
    if (close && std::sscanf(close + 1, " %*c %ld", &ppid) == 1 && ppid == self)
      out.push_back(pid_t(pid));
  }
  ::closedir(proc);
  return out;
}

/// Kills and reaps every remaining process of the job (for at most a few
/// seconds: a process in uninterruptible sleep cannot be waited for).
void endOrphans() {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < deadline) {
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    std::vector<pid_t> left = children();
    if (left.empty())
      return;
    for (pid_t pid : left)
      ::kill(pid, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}
} // namespace

void dist::run::catchStopSignals() {
  struct sigaction action = {}, old = {};
  action.sa_handler = onStopSignal;
  sigemptyset(&action.sa_mask);
  for (int signal : {SIGINT, SIGTERM, SIGHUP}) {
    // A signal ignored at start stays ignored (nohup; a shell's background
    // job ignores SIGINT), as the convention goes.
    if (::sigaction(signal, nullptr, &old) == 0 && old.sa_handler == SIG_IGN)
      continue;
    ::sigaction(signal, &action, nullptr);
  }
}

int dist::run::stopSignalReceived() { return stopSignal; }

void dist::run::dieBy(int signal) {
  std::signal(signal, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, signal);
  ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
  ::raise(signal);
  ::_exit(128 + signal);
}

std::string dist::run::signalName(int signal) {
  if (const char *abbrev = ::sigabbrev_np(signal))
    return std::string("SIG") + abbrev;
  return "signal " + std::to_string(signal);
}

Watchdog::Watchdog(Deadline deadline, std::string message, int exitCode)
    : thread([this, deadline, message = std::move(message), exitCode] {
        std::unique_lock<std::mutex> lock(mutex);
        if (cancelled.wait_until(lock, deadline, [this] { return done; }))
          return;
        // Unbuffered, then out without unwinding: the main thread is inside
        // some pass and holds whatever it holds.
        std::fputs(message.c_str(), stderr);
        std::fflush(stderr);
        ::_exit(exitCode);
      }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    done = true;
  }
  cancelled.notify_all();
  thread.join();
}

JobResult dist::run::runJob(const std::vector<std::string> &args,
                            std::optional<Deadline> deadline) {
  JobResult result;
  // Processes of the job whose launcher dies are reparented to the front,
  // which can then end them (ranks kept spinning after mpiexec was
  // killed).
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);

  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, 0, "/dev/null", O_RDONLY, 0);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setpgroup(&attributes, 0); // a group of its own
  sigset_t defaults, none;
  sigemptyset(&defaults);
  for (int signal : {SIGINT, SIGTERM, SIGHUP, SIGPIPE})
    sigaddset(&defaults, signal);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP |
                                            POSIX_SPAWN_SETSIGDEF |
                                            POSIX_SPAWN_SETSIGMASK);
  std::vector<char *> argv;
  for (const std::string &arg : args)
    argv.push_back(const_cast<char *>(arg.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  int error =
      posix_spawn(&pid, argv[0], &files, &attributes, argv.data(), environ);
  posix_spawn_file_actions_destroy(&files);
  posix_spawnattr_destroy(&attributes);
  if (error) {
    result.error = std::strerror(error);
    return result;
  }
  jobGroup = pid;
  // A signal that came before the group was known is forwarded now.
  if (int signal = stopSignal)
    ::kill(-pid, signal);

  using Clock = std::chrono::steady_clock;
  std::optional<Clock::time_point> endingSince;
  bool timedOut = false, killed = false;
  int status = 0;
  while (true) {
    pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid)
      break;
    if (done < 0 && errno != EINTR) {
      result.error = std::strerror(errno);
      break;
    }
    Clock::time_point now = Clock::now();
    if (deadline && !timedOut && !stopSignal && now >= *deadline) {
      timedOut = true;
      ::kill(-pid, SIGTERM);
    }
    if ((timedOut || stopSignal) && !endingSince)
      endingSince = now;
    if (endingSince && !killed &&
        now - *endingSince >= std::chrono::seconds(kGraceSeconds)) {
      killed = true;
      ::kill(-pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  jobGroup = 0;
  // Whatever is left of the group, then of the job's other processes.
  ::kill(-pid, SIGKILL);
  endOrphans();

  if (int signal = stopSignal) {
    result.kind = JobResult::Stopped;
    result.signal = signal;
  } else if (timedOut) {
    result.kind = JobResult::TimedOut;
  } else if (WIFSIGNALED(status)) {
    result.kind = JobResult::Killed;
    result.signal = WTERMSIG(status);
  } else {
    result.kind = JobResult::Exited;
    result.code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  }
  return result;
}
