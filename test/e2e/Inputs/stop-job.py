"""Ends a running dist-run job from outside and reports what was left.

    stop-job.py term|int|kill-mpiexec DIST-RUN-ARGS...

Starts `dist-run DIST-RUN-ARGS... --dump DIR` with TMPDIR set to a fresh
folder, waits until a rank reports the injected hang (so the job is up),
then sends SIGTERM or SIGINT to dist-run, or SIGKILL to its mpiexec. Prints
dist-run's stderr, its exit (`exit: N` or `killed by: SIGNAME`), how many
processes of the job are left (ranks carry DIR in their arguments) and how
many entries its temporary folder still holds. Everything is bounded: the
job is given 60 s to start and 30 s to end (SIGTERM used to leave
mpiexec and the ranks running, and the temporary folder behind).
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time


def children(pid):
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        if int(stat[stat.rindex(")") + 2:].split()[1]) == pid:
            out.append(int(entry))
    return out


def processes_mentioning(text):
    count = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if text.encode() in f.read():
                    count += 1
        except OSError:
            continue
    return count


def main():
    how, args = sys.argv[1], sys.argv[2:]
    work = tempfile.mkdtemp(prefix="dist-stop-job-")
    tmp, dump = os.path.join(work, "tmp"), os.path.join(work, "dump")
    os.mkdir(tmp)
    env = dict(os.environ, TMPDIR=tmp)
    log = open(os.path.join(work, "stderr"), "w+")
    front = subprocess.Popen(["dist-run", *args, "--dump", dump], env=env,
                             stdout=subprocess.DEVNULL, stderr=log)
    deadline = time.time() + 60
    while time.time() < deadline:
        log.seek(0)
        if "injected fault: stopping" in log.read():
            break
        time.sleep(0.1)
    else:
        front.kill()
        print("the job never started")
        return 1
    if how == "kill-mpiexec":
        os.kill(children(front.pid)[0], signal.SIGKILL)
    else:
        front.send_signal(signal.SIGTERM if how == "term" else signal.SIGINT)
    try:
        code = front.wait(timeout=30)
    except subprocess.TimeoutExpired:
        front.kill()
        print("dist-run did not end within 30 s")
        return 1
    time.sleep(1)  # let the kernel finish tearing the job down
    log.seek(0)
    sys.stdout.write(log.read())
    print(f"exit: {code}" if code >= 0
          else f"killed by: {signal.Signals(-code).name}")
    print(f"job processes left: {processes_mentioning(dump)}")
    print(f"temporary folder entries left: {len(os.listdir(tmp))}")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
