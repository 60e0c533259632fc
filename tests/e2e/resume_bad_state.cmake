# A checkpoint whose trainer_state.json holds values no run writes is bad
# input, as a bad flag is: resuming it stops before training with one line
# naming the file and the field, and exit status 2.
#   cmake -DHEARTH=<binary> -DWORK_DIR=<scratch dir> -P resume_bad_state.cmake
if(NOT HEARTH OR NOT EXISTS "${HEARTH}")
  message(FATAL_ERROR "resume_bad_state: the hearth binary '${HEARTH}' does not exist; build the hearth_cli target")
endif()
if(NOT DEFINED ENV{OMP_WAIT_POLICY})
  set(ENV{OMP_WAIT_POLICY} passive)
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(common train --cpu --model mlp --dataset fashion_mnist --max_train_samples 128 --per_device_train_batch_size 32
    --save_steps 2 --eval_strategy no --disable_tqdm --report_to none)

execute_process(COMMAND "${HEARTH}" ${common} --max_steps 2 --output_dir "${WORK_DIR}/good"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT EXISTS "${WORK_DIR}/good/checkpoint-2/trainer_state.json")
  message(FATAL_ERROR "resume_bad_state: the first run failed (${rc}):\n${out}${err}")
endif()
file(READ "${WORK_DIR}/good/checkpoint-2/trainer_state.json" state)

# Each case: a regular expression over the saved state, its replacement, and
# what the message must say.
set(cases
    "\"global_step\": 2|\"global_step\": 1e15|field 'global_step': expected an integer \\(digits only"
    "\"global_step\": 2|\"global_step\": 1000000000000000|field 'global_step': expected an integer from -1 to"
    "\"total_loss\": [-0-9.e+]+|\"total_loss\": 1e308|field 'total_loss': expected a finite sum"
    "\"batches_yielded\": [0-9]+|\"batches_yielded\": 100000000000000|field 'data_position.batches_yielded': expected an integer from -1 to")
set(n 0)
foreach(case IN LISTS cases)
  string(REPLACE "|" ";" parts "${case}")
  list(GET parts 0 pattern)
  list(GET parts 1 replacement)
  list(GET parts 2 expected)
  math(EXPR n "${n} + 1")
  set(dir "${WORK_DIR}/bad${n}")
  file(COPY "${WORK_DIR}/good/" DESTINATION "${dir}")
  string(REGEX REPLACE "${pattern}" "${replacement}" bad "${state}")
  if(bad STREQUAL state)
    message(FATAL_ERROR "resume_bad_state: '${pattern}' is not in the saved trainer_state.json:\n${state}")
  endif()
  file(WRITE "${dir}/checkpoint-2/trainer_state.json" "${bad}")
  execute_process(COMMAND "${HEARTH}" ${common} --max_steps 4 --output_dir "${dir}"
                          --resume_from_checkpoint "${dir}/checkpoint-2"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 2 OR NOT err MATCHES "checkpoint-2/trainer_state.json.*${expected}")
    message(FATAL_ERROR "resume_bad_state: with ${replacement}: expected exit 2 and '${expected}', got ${rc}:\n"
                        "${out}${err}")
  endif()
  if(EXISTS "${dir}/checkpoint-4")
    message(FATAL_ERROR "resume_bad_state: with ${replacement} the run went on to train")
  endif()
endforeach()
message(STATUS "resume_bad_state: ${n} corrupt states refused with exit 2")
