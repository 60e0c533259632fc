#!/usr/bin/env python3
"""trainer_state.json as transformers reads it: runs a short `hearth train` that
checkpoints, then loads its trainer_state.json files (the checkpoint's and the
final one) with transformers' TrainerState.load_from_json, and checks the
values read. Exits 77 (skipped) where transformers is not installed.

    trainer_state_loads.py --hearth build/bin/hearth --work DIR
"""
import argparse
import os
import shutil
import subprocess
import sys


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hearth", required=True)
    parser.add_argument("--work", required=True)
    a = parser.parse_args()
    try:
        from transformers import TrainerState
    except ImportError:
        print("transformers is not installed: skipped")
        return 77
    shutil.rmtree(a.work, ignore_errors=True)
    out = os.path.join(a.work, "run")
    env = dict(os.environ, OMP_NUM_THREADS="1", XDG_CONFIG_HOME=os.path.join(a.work, "xdg"))
    subprocess.run([a.hearth, "train", "--model", "mlp", "--max_train_samples", "32", "--max_eval_samples", "16",
                    "--per_device_train_batch_size", "8", "--max_steps", "2", "--save_steps", "2", "--eval_strategy",
                    "steps", "--eval_steps", "2", "--metric_for_best_model", "accuracy", "--cpu", "--disable_tqdm",
                    "--output_dir", out], check=True, env=env)
    for path in (os.path.join(out, "checkpoint-2", "trainer_state.json"), os.path.join(out, "trainer_state.json")):
        state = TrainerState.load_from_json(path)
        if state.global_step != 2 or state.total_flos <= 0 or state.best_metric is None:
            print(f"{path}: read global_step {state.global_step}, total_flos {state.total_flos}, "
                  f"best_metric {state.best_metric}")
            return 1
        print(f"{path}: loads with transformers' TrainerState (global_step {state.global_step}, "
              f"best_model_checkpoint {state.best_model_checkpoint})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
