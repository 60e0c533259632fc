#!/usr/bin/env python3
"""Crash safety of `hearth train`, proven by killing it.

A small job (small_cnn on a Fashion-MNIST subset, a checkpoint every few steps)
is killed over and over: SIGKILL at random steps, SIGKILL while a checkpoint is
being written (HEARTH_TEST_PAUSE_WRITE_MS holds each save open long enough for
the kill to land inside it), then SIGINT and SIGTERM, which must save before
exiting. Each restart resumes from the newest complete checkpoint. The final
model.safetensors and optimizer.safetensors must equal, byte for byte, those
of a run that was never interrupted (CPU, one thread: deterministic).

  kill_resume.py --hearth build/bin/hearth --work /tmp/kill-resume [--seed 1]
"""
import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time

STEPS = 45  # 480 samples in batches of 32 = 15 steps per epoch, 3 epochs
SAVE_STEPS = 4
CHECKPOINT_FILES = ("model.safetensors", "optimizer.safetensors", "trainer_state.json", "training_args.json",
                    "config.json")
COMPLETE = re.compile(r"^checkpoint-(\d+)$")
UNFINISHED = re.compile(r"^checkpoint-\d+\.(tmp|old)-")


def fail(msg):
    print(f"kill_resume: FAIL: {msg}", flush=True)
    sys.exit(1)


def train_args(output_dir):
    return ["train", "--model", "small_cnn", "--dataset", "fashion_mnist", "--cpu", "--seed", "3",
            "--max_train_samples", "480", "--max_eval_samples", "32", "--per_device_train_batch_size", "32",
            "--num_train_epochs", "3", "--learning_rate", "2e-3", "--save_strategy", "steps",
            "--save_steps", str(SAVE_STEPS), "--eval_strategy", "no", "--logging_steps", "1", "--report_to", "jsonl",
            "--disable_tqdm", "--output_dir", output_dir]


def environment(pause_ms):
    env = dict(os.environ)
    env.update({"OMP_NUM_THREADS": "1", "OMP_WAIT_POLICY": "passive", "OPENBLAS_NUM_THREADS": "1"})
    env.pop("HEARTH_TEST_FAIL_WRITE", None)
    if pause_ms:
        env["HEARTH_TEST_PAUSE_WRITE_MS"] = str(pause_ms)
    return env


def complete_checkpoints(output_dir):
    if not os.path.isdir(output_dir):
        return []
    steps = [int(m.group(1)) for m in map(COMPLETE.match, os.listdir(output_dir)) if m]
    return sorted(steps)


def unfinished(output_dir):
    if not os.path.isdir(output_dir):
        return []
    return [n for n in os.listdir(output_dir) if UNFINISHED.match(n)]


def check_checkpoints(output_dir, context):
    """Every directory named checkpoint-N is whole: all files, a readable safetensors header, valid JSON."""
    for step in complete_checkpoints(output_dir):
        d = os.path.join(output_dir, f"checkpoint-{step}")
        for f in CHECKPOINT_FILES:
            if not os.path.isfile(os.path.join(d, f)):
                fail(f"{context}: {d} exists but has no {f}: a partial checkpoint under a final name")
        with open(os.path.join(d, "model.safetensors"), "rb") as fh:
            data = fh.read()
        n = int.from_bytes(data[:8], "little")
        header = json.loads(data[8:8 + n])
        end = max(v["data_offsets"][1] for k, v in header.items() if k != "__metadata__")
        if 8 + n + end != len(data):
            fail(f"{context}: {d}/model.safetensors is truncated ({len(data)} bytes, header says {8 + n + end})")
        with open(os.path.join(d, "trainer_state.json")) as fh:
            if json.load(fh)["global_step"] != step:
                fail(f"{context}: {d}/trainer_state.json names another step")


def metrics_size(output_dir):
    try:
        return os.path.getsize(os.path.join(output_dir, "metrics.jsonl"))
    except FileNotFoundError:
        return 0


def last_logged_step(output_dir, offset):
    """The newest step logged after byte `offset` of metrics.jsonl (what this process wrote)."""
    path = os.path.join(output_dir, "metrics.jsonl")
    step = 0
    try:
        with open(path) as fh:
            if os.path.getsize(path) < offset:
                offset = 0  # a fresh run started the file over
            fh.seek(offset)
            for line in fh:
                try:
                    step = max(step, int(json.loads(line).get("step", 0)))
                except (ValueError, AttributeError):
                    pass  # a line being written
    except FileNotFoundError:
        pass
    return step


def start(hearth, output_dir, log_path, pause_ms):
    args = [hearth] + train_args(output_dir)
    if complete_checkpoints(output_dir):
        args += ["--resume_from_checkpoint", "latest"]
    else:
        args += ["--overwrite_output_dir"]
    log = open(log_path, "w")
    return subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=environment(pause_ms)), log


def wait_until(proc, condition, timeout=60.0, poll=0.002):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        if proc.poll() is not None:
            return False
        time.sleep(poll)
    fail("timed out waiting for the run to make progress")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--hearth", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--seed", type=int, default=int(os.environ.get("HEARTH_KILL_SEED", "1")))
    p.add_argument("--pause-ms", type=int, default=40)
    a = p.parse_args()
    rng = random.Random(a.seed)
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    t0 = time.monotonic()

    ref_dir = os.path.join(a.work, "reference")
    ref = subprocess.run([a.hearth] + train_args(ref_dir), env=environment(0), capture_output=True, text=True)
    if ref.returncode != 0:
        fail(f"the uninterrupted run exited with {ref.returncode}:\n{ref.stdout}{ref.stderr}")
    final = f"checkpoint-{STEPS}"
    if not os.path.isdir(os.path.join(ref_dir, final)):
        fail(f"the uninterrupted run wrote no {final}: {os.listdir(ref_dir)}")
    print(f"kill_resume: reference run: {time.monotonic() - t0:.1f} s (seed {a.seed})", flush=True)

    out = os.path.join(a.work, "interrupted")
    rounds = ["kill-random", "kill-in-save", "kill-random", "kill-in-save", "kill-in-save", "SIGINT", "SIGTERM"]
    kills_inside_saves = 0
    for i, kind in enumerate(rounds):
        before = complete_checkpoints(out)
        start_step = before[-1] if before else 0
        offset = metrics_size(out)
        log_path = os.path.join(a.work, f"round-{i}-{kind}.log")
        proc, log = start(a.hearth, out, log_path, a.pause_ms)
        context = f"round {i} ({kind}, from step {start_step})"
        if kind == "kill-random":
            target = start_step + rng.randint(1, SAVE_STEPS + 2)
            wait_until(proc, lambda: last_logged_step(out, offset) >= target)
            time.sleep(rng.uniform(0, 0.05))
            sig = signal.SIGKILL
        elif kind == "kill-in-save":
            # Inside this process's first or second save: the second lets a
            # resumed run complete a checkpoint before it is killed in the next.
            wait_until(proc, lambda: last_logged_step(out, offset) > start_step)
            for _ in range(rng.randint(1, 2) - 1):
                wait_until(proc, lambda: bool(unfinished(out)))
                wait_until(proc, lambda: not unfinished(out))
            wait_until(proc, lambda: bool(unfinished(out)))
            time.sleep(rng.uniform(0, 3 * a.pause_ms / 1000.0))
            sig = signal.SIGKILL
        else:
            target = start_step + rng.randint(1, SAVE_STEPS - 1)
            wait_until(proc, lambda: last_logged_step(out, offset) >= target)
            sig = signal.SIGINT if kind == "SIGINT" else signal.SIGTERM
        if proc.poll() is not None:
            fail(f"{context}: the run ended (exit {proc.returncode}) before it could be interrupted; see {log_path}")
        proc.send_signal(sig)
        rc = proc.wait(timeout=60)
        log.close()
        left = unfinished(out)
        if sig == signal.SIGKILL:
            if rc != -signal.SIGKILL:
                fail(f"{context}: expected death by SIGKILL, got exit {rc}")
            if kind == "kill-in-save" and left:
                kills_inside_saves += 1
        else:
            want = 130 if sig == signal.SIGINT else 128 + signal.SIGTERM
            text = open(log_path).read()
            if rc != want:
                fail(f"{context}: {kind} should exit with {want}, got {rc}:\n{text}")
            m = re.search(r"stopped by " + kind + r" at step (\d+); saved (\S+)\.", text)
            if not m:
                fail(f"{context}: no 'stopped by {kind} at step N; saved ...' line:\n{text}")
            step = int(m.group(1))
            if complete_checkpoints(out)[-1] != step:
                fail(f"{context}: stopped at step {step} but the newest checkpoint is {complete_checkpoints(out)[-1]}")
            if left:
                fail(f"{context}: a clean stop left unfinished saves: {left}")
        check_checkpoints(out, context)
        after = complete_checkpoints(out)
        print(f"kill_resume: {context}: exit {rc}; checkpoints {after[-3:] if after else 'none'}"
              f"{'; killed inside a save: ' + ', '.join(left) if left else ''}", flush=True)

    if kills_inside_saves == 0:
        fail("no SIGKILL landed inside a checkpoint save; the test did not test what it claims")

    log_path = os.path.join(a.work, "round-final.log")
    proc, log = start(a.hearth, out, log_path, 0)
    rc = proc.wait(timeout=120)
    log.close()
    if rc != 0:
        fail(f"the final resumed run exited with {rc}:\n{open(log_path).read()}")
    if unfinished(out):
        fail(f"unfinished saves were not cleared on restart: {unfinished(out)}")
    check_checkpoints(out, "final")
    for f in ("model.safetensors", "optimizer.safetensors"):
        with open(os.path.join(ref_dir, final, f), "rb") as x, open(os.path.join(out, final, f), "rb") as y:
            if x.read() != y.read():
                fail(f"{final}/{f} of the interrupted run differs from the uninterrupted run's")
    print(f"kill_resume: PASS: {len(rounds)} interruptions ({kills_inside_saves} inside a save), final weights "
          f"identical to the uninterrupted run; {time.monotonic() - t0:.1f} s", flush=True)


if __name__ == "__main__":
    main()
