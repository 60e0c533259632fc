# transformers' TrainingArguments.to_dict(), saved as JSON, taken unchanged by
# a program as --config: the dump with every field at its default and the one
# with common overrides (tests/fixtures/hf/training_args_*.json, made by
# tests/fixtures/make_training_args_dumps.py). Flags on the command line keep
# the run tiny; they win over the file. Checks that the run ends well and, for
# hearth train, that the file's values and the flags reached the run
# (training_args.json).
# Inputs: PROGRAM (train, run_glue or cv_example), PROGRAM_PATH, FIXTURES
# (tests/fixtures), WORK_DIR.
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/tiny_mrpc.cmake)
set(ENV{OMP_NUM_THREADS} 1)
set(ENV{OMP_WAIT_POLICY} passive)
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}/xdg")
set(ENV{XDG_CONFIG_HOME} "${WORK_DIR}/xdg")  # no user config takes part

foreach(dump defaults overrides)
  set(config "${FIXTURES}/hf/training_args_${dump}.json")
  set(out_dir "${WORK_DIR}/${dump}")
  if(PROGRAM STREQUAL "train")
    set(command ${PROGRAM_PATH} train --config ${config} --model mlp --dataset fashion_mnist --max_train_samples 32
                --max_eval_samples 16 --per_device_train_batch_size 8 --gradient_accumulation_steps 1 --max_steps 2
                --dataloader_num_workers 0 --disable_tqdm --cpu --output_dir ${out_dir})
  elseif(PROGRAM STREQUAL "run_glue")
    write_tiny_mrpc("${WORK_DIR}/data" 8)
    set(command ${PROGRAM_PATH} --config ${config} --model_name_or_path ${FIXTURES}/golden/bert_tiny --task_name mrpc
                --data_dir ${WORK_DIR}/data --ignore_mismatched_sizes --do_train --do_eval --max_seq_length 16
                --per_device_train_batch_size 4 --gradient_accumulation_steps 1 --max_steps 2
                --dataloader_num_workers 0 --bf16 F --disable_tqdm --use_cpu --output_dir ${out_dir})
  elseif(PROGRAM STREQUAL "cv_example")
    set(command ${PROGRAM_PATH} --config ${config} --data_dir ${FIXTURES}/images/pets --model resnet_tiny
                --image_size 16 --batch_size 4 --num_epochs 1 --num_workers 0 --mixed_precision no --cpu
                --output_dir ${out_dir})
  else()
    message(FATAL_ERROR "hf_dump_config: unknown PROGRAM '${PROGRAM}'")
  endif()
  # The overrides' relative paths (logging_dir) land in the work directory.
  execute_process(COMMAND ${command} WORKING_DIRECTORY "${WORK_DIR}" RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "hf_dump_config: ${PROGRAM} --config training_args_${dump}.json: exit ${rc}:\n${out}${err}")
  endif()
  if(PROGRAM STREQUAL "train")
    file(READ "${out_dir}/training_args.json" saved)
    string(JSON optim GET "${saved}" optim)
    string(JSON steps GET "${saved}" max_steps)
    if(NOT optim STREQUAL "adamw_torch_fused" OR NOT steps EQUAL 2)
      message(FATAL_ERROR "hf_dump_config: training_args.json has optim '${optim}' and max_steps ${steps}, expected "
                          "the file's adamw_torch_fused and the flag's 2")
    endif()
  endif()
  message(STATUS "hf_dump_config: ${PROGRAM} took training_args_${dump}.json:\n${out}${err}")
endforeach()
