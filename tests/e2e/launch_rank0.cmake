# A program under `hearth launch --nproc_per_node 2 --cpu`, several times over:
# every run succeeds, rank 0 alone prints (no "[rank 1]" line) and writes the
# run's files, once (no temporary file left behind). Small and fast: a few
# samples and steps, one thread per rank.
# Inputs: HEARTH (the hearth command), PROGRAM (train, run_glue or cv_example),
# PROGRAM_PATH (its binary; HEARTH for train), MODEL_DIR (the tiny BERT),
# PETS_DIR (the pets images), WORK_DIR, REPEAT (runs).
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/tiny_mrpc.cmake)
set(ENV{OMP_NUM_THREADS} 1)
set(ENV{OMP_WAIT_POLICY} passive)
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}/xdg")
set(ENV{XDG_CONFIG_HOME} "${WORK_DIR}/xdg")  # no user config takes part

set(out_dir "${WORK_DIR}/out")
if(PROGRAM STREQUAL "train")
  set(command ${HEARTH} train --model mlp --dataset fashion_mnist --max_train_samples 32 --max_eval_samples 16
              --per_device_train_batch_size 8 --max_steps 2 --save_steps 2 --eval_strategy steps --eval_steps 2
              --disable_tqdm --output_dir ${out_dir} --overwrite_output_dir)
  set(files model.safetensors train_results.json eval_results.json all_results.json trainer_state.json
            training_args.json checkpoint-2/model.safetensors)
elseif(PROGRAM STREQUAL "run_glue")
  write_tiny_mrpc("${WORK_DIR}/data" 16)
  set(command ${PROGRAM_PATH} --model_name_or_path ${MODEL_DIR} --task_name mrpc --data_dir ${WORK_DIR}/data
              --ignore_mismatched_sizes --do_train --do_eval --max_seq_length 16 --per_device_train_batch_size 4
              --max_steps 2 --save_steps 2 --disable_tqdm --output_dir ${out_dir} --overwrite_output_dir)
  set(files model.safetensors config.json vocab.txt train_results.json eval_results.json all_results.json
            trainer_state.json checkpoint-2/model.safetensors)
elseif(PROGRAM STREQUAL "cv_example")
  set(command ${PROGRAM_PATH} --data_dir ${PETS_DIR} --model resnet_tiny --image_size 16 --batch_size 4
              --num_epochs 1 --num_workers 0 --checkpointing_steps epoch --with_tracking --output_dir ${out_dir}
              --overwrite_output_dir)
  set(files metrics.jsonl)
else()
  message(FATAL_ERROR "launch_rank0: unknown PROGRAM '${PROGRAM}'")
endif()

foreach(run RANGE 1 ${REPEAT})
  file(REMOVE_RECURSE "${out_dir}")
  execute_process(COMMAND ${HEARTH} launch --nproc_per_node 2 --cpu ${command} RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(text "${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "launch_rank0: ${PROGRAM} run ${run}: exit ${rc}, expected 0:\n${text}")
  endif()
  if(text MATCHES "(^|\n)\\[rank 1\\]")
    message(FATAL_ERROR "launch_rank0: ${PROGRAM} run ${run}: rank 1 printed:\n${text}")
  endif()
  if(NOT text MATCHES "(^|\n)\\[rank 0\\]")
    message(FATAL_ERROR "launch_rank0: ${PROGRAM} run ${run}: rank 0 printed nothing:\n${text}")
  endif()
  foreach(f ${files})
    if(NOT EXISTS "${out_dir}/${f}")
      message(FATAL_ERROR "launch_rank0: ${PROGRAM} run ${run}: ${out_dir}/${f} was not written:\n${text}")
    endif()
  endforeach()
  # A file written by two ranks at once leaves a temporary file, or fails to rename.
  file(GLOB_RECURSE leftovers "${out_dir}/*.tmp*" "${out_dir}/.*tmp*")
  if(leftovers)
    message(FATAL_ERROR "launch_rank0: ${PROGRAM} run ${run}: temporary files left: ${leftovers}")
  endif()
endforeach()
message(STATUS "launch_rank0: ${PROGRAM}: ${REPEAT} runs under hearth launch --nproc_per_node 2, rank 0 alone printing")
