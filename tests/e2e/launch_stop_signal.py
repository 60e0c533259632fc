#!/usr/bin/env python3
"""A stop signal sent to `hearth launch` is a stop, not a failure.

Two CPU ranks train; once both are stepping, the launcher gets SIGHUP (a
closed terminal, a scheduler's stop). It forwards the signal, every rank saves
and stops, and the launcher says it stopped on that signal (exit status 128 +
the signal's number), never that the run failed.

  launch_stop_signal.py --hearth build/bin/hearth --work /tmp/launch-stop
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time


def fail(msg, output=""):
    print(f"launch_stop_signal: FAIL: {msg}\n--- output ---\n{output}", flush=True)
    sys.exit(1)


def start(command, env):
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                            start_new_session=True)
    lines = []

    def read():
        for line in proc.stdout:
            lines.append(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    return proc, lines, reader


def wait_for(lines, pattern, seconds, proc):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if any(re.search(pattern, line) for line in list(lines)):
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.05)
    return False


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--hearth", required=True)
    p.add_argument("--work", required=True)
    a = p.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    out = os.path.join(a.work, "run")
    env = dict(os.environ, OMP_NUM_THREADS="1", OMP_WAIT_POLICY="passive", OPENBLAS_NUM_THREADS="1")
    train = [a.hearth, "train", "--model", "mlp", "--cpu", "--max_train_samples", "4000", "--num_train_epochs", "100",
             "--eval_strategy", "no", "--report_to", "none", "--logging_steps", "5", "--disable_tqdm",
             "--output_dir", out]
    launch = [a.hearth, "launch", "--nproc_per_node", "2", "--cpu"] + train

    proc, lines, reader = start(launch, env)
    if not wait_for(lines, r"\[rank 0\] step \d+", 120, proc):
        proc.kill()
        fail("the ranks never reported a step", "".join(lines))
    proc.send_signal(signal.SIGHUP)
    try:
        rc = proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        fail("the launch did not stop within 120 s of SIGHUP", "".join(lines))
    reader.join(timeout=5)
    text = "".join(lines)
    if rc != 128 + signal.SIGHUP:
        fail(f"exit status {rc}, expected {128 + signal.SIGHUP}", text)
    if "hearth launch: stopped by SIGHUP (forwarded to every rank)" not in text:
        fail("the launcher did not say it stopped by SIGHUP", text)
    if "hearth launch: failed" in text:
        fail("the launcher called a requested stop a failure", text)
    saved = re.search(r"stopped by SIGHUP at step \d+; saved (\S+)\.", text)
    if not saved or not os.path.isdir(saved.group(1)):
        fail("rank 0 did not save a checkpoint on the way out", text)
    print(f"launch_stop_signal: ok: stopped by SIGHUP with status {rc}, saved {saved.group(1)}")


if __name__ == "__main__":
    main()
