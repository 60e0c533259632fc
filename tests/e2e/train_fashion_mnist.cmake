# End-to-end training through the `hearth` binary, as a user runs it: one
# epoch of the small CNN on a Fashion-MNIST subset on the CPU, then
#   - the accuracy is above a floor and the final metrics are printed,
#   - the checkpoint files and metrics.jsonl are written,
#   - a run resumed from a mid-epoch checkpoint logs the same losses, step for step,
#   - `hearth eval` on the final checkpoint reproduces the final accuracy,
#   - asking for an accelerator that cannot exist fails before training.
#   cmake -DHEARTH=<binary> -DWORK_DIR=<scratch dir> -P train_fashion_mnist.cmake
if(NOT HEARTH OR NOT EXISTS "${HEARTH}")
  message(FATAL_ERROR "train_fashion_mnist: the hearth binary '${HEARTH}' does not exist; build the hearth_cli target")
endif()
# ctest runs other tests beside this one: idle OpenMP threads that spin would
# starve them and this test (ten times slower on a busy machine).
if(NOT DEFINED ENV{OMP_WAIT_POLICY})
  set(ENV{OMP_WAIT_POLICY} passive)
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

# 2000 samples in batches of 32: 63 steps, a checkpoint every 25. Some settings
# come from a config file, one of which (learning_rate) a flag overrides.
file(WRITE "${WORK_DIR}/args.json"
     "{\"per_device_train_batch_size\": 32, \"learning_rate\": 0.5, \"warmup_steps\": 5, \"logging_steps\": 1}\n")
set(common train --model small_cnn --dataset fashion_mnist --seed 1 --max_train_samples 2000
    --max_eval_samples 1000 --num_train_epochs 1 --config "${WORK_DIR}/args.json" --learning_rate 3e-3
    --eval_strategy epoch --save_strategy steps --save_steps 25 --disable_tqdm)

function(run_hearth out_var)
  execute_process(COMMAND "${HEARTH}" ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "hearth ${ARGN} exited with ${rc}; output:\n${out}${err}")
  set(${out_var} "${out}${err}" PARENT_SCOPE)
  set(${out_var}_rc "${rc}" PARENT_SCOPE)
endfunction()

function(loss_lines path out_var)
  file(STRINGS "${path}" lines REGEX "\"loss\":")
  set(${out_var} "${lines}" PARENT_SCOPE)
endfunction()

# ---- one epoch ----
run_hearth(full ${common} --cpu --output_dir "${WORK_DIR}/full")
if(NOT full_rc STREQUAL "0")
  message(FATAL_ERROR "train_fashion_mnist: training exited with ${full_rc}")
endif()
foreach(re "hearth: training on cpu \\(use_cpu is set\\)" "hearth: finished 63 steps" "checkpoint: +.*checkpoint-63"
        "metrics: +.*metrics.jsonl")
  if(NOT full MATCHES "${re}")
    message(FATAL_ERROR "train_fashion_mnist: the output has no line matching '${re}'")
  endif()
endforeach()
if(NOT full MATCHES "eval_accuracy +([0-9.]+)")
  message(FATAL_ERROR "train_fashion_mnist: the output reports no eval_accuracy")
endif()
set(accuracy "${CMAKE_MATCH_1}")
if(accuracy LESS 0.65)
  message(FATAL_ERROR "train_fashion_mnist: accuracy ${accuracy} after one epoch on 2000 samples is below 0.65")
endif()

foreach(f model.safetensors optimizer.safetensors trainer_state.json training_args.json config.json)
  foreach(step 25 50 63)
    if(NOT EXISTS "${WORK_DIR}/full/checkpoint-${step}/${f}")
      message(FATAL_ERROR "train_fashion_mnist: checkpoint-${step}/${f} was not written")
    endif()
  endforeach()
endforeach()
file(READ "${WORK_DIR}/full/checkpoint-63/training_args.json" saved_args)
string(JSON saved_lr GET "${saved_args}" learning_rate)
string(JSON saved_batch GET "${saved_args}" per_device_train_batch_size)
if(NOT saved_lr EQUAL 0.003 OR NOT saved_batch EQUAL 32)
  message(FATAL_ERROR "train_fashion_mnist: training_args.json has learning_rate ${saved_lr} and batch size "
                      "${saved_batch}; expected the flag's 0.003 over the config's 0.5, and the config's 32")
endif()
loss_lines("${WORK_DIR}/full/metrics.jsonl" full_losses)
list(LENGTH full_losses n)
if(NOT n EQUAL 63)
  message(FATAL_ERROR "train_fashion_mnist: metrics.jsonl holds ${n} loss lines, expected 63")
endif()

# ---- resume from the middle of the epoch: the same losses, step for step ----
run_hearth(resumed ${common} --cpu --output_dir "${WORK_DIR}/resumed" --resume_from_checkpoint "${WORK_DIR}/full/checkpoint-25")
if(NOT resumed_rc STREQUAL "0")
  message(FATAL_ERROR "train_fashion_mnist: the resumed run exited with ${resumed_rc}")
endif()
if(NOT resumed MATCHES "resuming from .*checkpoint-25 at step 25")
  message(FATAL_ERROR "train_fashion_mnist: the resumed run does not say where it resumed from")
endif()
loss_lines("${WORK_DIR}/resumed/metrics.jsonl" resumed_losses)
if(NOT resumed_losses STREQUAL full_losses)
  message(FATAL_ERROR "train_fashion_mnist: the losses after resuming differ from the uninterrupted run's:\n"
                      "uninterrupted: ${full_losses}\nresumed: ${resumed_losses}")
endif()

# ---- hearth eval reproduces the final accuracy ----
run_hearth(evaluated eval --checkpoint "${WORK_DIR}/full/checkpoint-63" --cpu --max_eval_samples 1000)
if(NOT evaluated_rc STREQUAL "0" OR NOT evaluated MATCHES "eval_accuracy +([0-9.]+)")
  message(FATAL_ERROR "train_fashion_mnist: hearth eval failed")
endif()
if(NOT CMAKE_MATCH_1 STREQUAL accuracy)
  message(FATAL_ERROR "train_fashion_mnist: hearth eval reports accuracy ${CMAKE_MATCH_1}, training reported ${accuracy}")
endif()

# ---- a bad config value names the file and the field, exit code 2 ----
file(WRITE "${WORK_DIR}/bad.json" "{\"learning_rat\": 0.1}\n")
run_hearth(bad train --config "${WORK_DIR}/bad.json" --output_dir "${WORK_DIR}/bad")
if(NOT bad_rc STREQUAL "2" OR NOT bad MATCHES "bad.json: field 'learning_rat': expected a TrainingArguments name \\(did you mean 'learning_rate'\\?\\)")
  message(FATAL_ERROR "train_fashion_mnist: a config with an unknown key did not fail with exit code 2 and a message naming it")
endif()

# ---- an accelerator that cannot exist fails before training ----
run_hearth(absent ${common} --output_dir "${WORK_DIR}/absent" --device cuda:99)
if(absent_rc STREQUAL "0" OR NOT absent MATCHES "is not available on this system \\(.*\\)\\. Available: cpu.*Use --device auto or --cpu\\.")
  message(FATAL_ERROR "train_fashion_mnist: --device cuda:99 did not fail with the absent-accelerator message")
endif()
if(EXISTS "${WORK_DIR}/absent")
  message(FATAL_ERROR "train_fashion_mnist: the failed run created its output_dir")
endif()
