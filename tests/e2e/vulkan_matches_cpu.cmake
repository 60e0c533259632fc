# Every program trains on the Vulkan device as on the CPU: the same flags with
# --device vulkan and --device cpu print the same losses and accuracy, to the
# last digit the progress lines show (one unit of it apart at most). On lavapipe (Mesa's CPU Vulkan)
# in CI; skipped where no Vulkan device is available.
#   hearth train: the MLP on Fashion-MNIST, 120 steps, then evaluated on 2,000
#                 test images; the small CNN, 6 steps.
#   hearth train --precision 16-mixed (float16 products, float32 weights, loss
#                 scaling; only where the device has float16): the MLP, 40
#                 steps, evaluated on 500 images; the small CNN, 6 steps. A
#                 float16 result rounded to the other side of a half ulp
#                 changes what follows, so these agree within 1% of each
#                 printed value, not to the last digit.
#   cv_example:   resnet_tiny on the fixture images, one epoch.
#   run_glue:     the tiny BERT on a tiny MRPC-style set, one epoch.
# Inputs: HEARTH, CV_EXAMPLE, RUN_GLUE, IMAGES (fixture folder), BERT_DIR, WORK_DIR.
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/tiny_mrpc.cmake)

execute_process(COMMAND ${HEARTH} env OUTPUT_VARIABLE env_out ERROR_VARIABLE env_err)
if(NOT env_out MATCHES "backend vulkan: [1-9][0-9]* device")
  message(STATUS "vulkan_matches_cpu: skipped, no Vulkan device here")
  return()
endif()
# `hearth env` lists what device 0 offers the kernels.
if(NOT env_out MATCHES "\n  vulkan:0 [^\n]*: driver [^\n]*; memory [0-9.]+ GiB device-local, [^\n]*; subgroup size [0-9]+; float16 (yes|no); float64 (yes|no); cooperative matrix \\(VK_KHR_cooperative_matrix\\) (yes|no)")
  message(FATAL_ERROR "hearth env does not describe vulkan:0 as expected:\n${env_out}")
endif()
string(REGEX MATCH "\n  vulkan:0 [^\n]*; float16 yes" vulkan_float16 "${env_out}")
set(ENV{OMP_WAIT_POLICY} passive)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
write_tiny_mrpc("${WORK_DIR}/glue" 48)

# Runs one program on both devices; the lines matching `pattern` must agree:
# each number but for one unit of its last printed digit, or with
# TOLERANCE_PERMILLE set, within that many thousandths of the larger value
# (and one unit).
function(same_on_both name pattern)
  if(NOT DEFINED TOLERANCE_PERMILLE)
    set(TOLERANCE_PERMILLE 0)
  endif()
  set(lines_cpu "")
  foreach(device cpu vulkan)
    string(REPLACE "@DEVICE@" ${device} args "${ARGN}")
    string(REPLACE "@OUT@" "${WORK_DIR}/${name}-${device}" args "${args}")
    execute_process(COMMAND ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc STREQUAL "0")
      message(FATAL_ERROR "${name} on ${device} exited with ${rc}:\n${out}${err}")
    endif()
    string(REGEX MATCHALL "${pattern}" found "${out}${err}")
    list(LENGTH found count)
    if(count EQUAL 0)
      message(FATAL_ERROR "${name} on ${device}: no line matching '${pattern}' in:\n${out}${err}")
    endif()
    if(out MATCHES "fallback" OR err MATCHES "fallback")
      message(FATAL_ERROR "${name} on ${device}: an op fell back to the CPU:\n${out}${err}")
    endif()
    set(lines_${device} "${found}")
  endforeach()
  # Each printed number alike, but for the last printed digit (a float32
  # sum in another order may round a value that sits on a half to either side).
  list(LENGTH lines_vulkan count_vulkan)
  set(same TRUE)
  if(NOT count EQUAL count_vulkan)
    set(same FALSE)
  else()
    math(EXPR last "${count} - 1")
    foreach(i RANGE ${last})
      list(GET lines_cpu ${i} a)
      list(GET lines_vulkan ${i} b)
      if(NOT a STREQUAL b)
        string(REGEX MATCH "[0-9.]+$" a "${a}")
        string(REGEX MATCH "[0-9.]+$" b "${b}")
        string(LENGTH "${a}" la)
        string(LENGTH "${b}" lb)
        string(REPLACE "." "" ia "${a}")
        string(REPLACE "." "" ib "${b}")
        string(REGEX REPLACE "^0+" "" ia "0${ia}")
        string(REGEX REPLACE "^0+" "" ib "0${ib}")
        if(ia STREQUAL "")
          set(ia 0)
        endif()
        if(ib STREQUAL "")
          set(ib 0)
        endif()
        if(NOT la EQUAL lb)
          set(same FALSE)
        else()
          math(EXPR diff "${ia} - ${ib}")
          if(diff LESS 0)
            math(EXPR diff "0 - ${diff}")
          endif()
          set(larger ${ia})
          if(ib GREATER ia)
            set(larger ${ib})
          endif()
          # diff <= 1 + larger * permille / 1000, in units of the last digit.
          math(EXPR allowed "1 + (${larger} * ${TOLERANCE_PERMILLE}) / 1000")
          if(diff GREATER allowed)
            set(same FALSE)
          endif()
        endif()
      endif()
    endforeach()
  endif()
  if(NOT same)
    message(FATAL_ERROR "${name}: vulkan and cpu differ\ncpu:    ${lines_cpu}\nvulkan: ${lines_vulkan}")
  endif()
  message(STATUS "${name}: ${count} lines alike on vulkan and cpu (tolerance ${TOLERANCE_PERMILLE}/1000):\n"
                 "  cpu:    ${lines_cpu}\n  vulkan: ${lines_vulkan}")
endfunction()

set(train_common --dataset fashion_mnist --per_device_train_batch_size 64 --per_device_eval_batch_size 500
    --learning_rate 2e-3 --logging_steps 20 --save_strategy no --seed 11 --max_eval_samples 2000
    --disable_tqdm --overwrite_output_dir)
same_on_both(mlp "loss [0-9.]+|accuracy [0-9.]+"
  ${HEARTH} train --model mlp --max_steps 120 --eval_strategy steps --eval_steps 120 ${train_common}
  --device @DEVICE@ --output_dir @OUT@)
same_on_both(small_cnn "loss [0-9.]+"
  ${HEARTH} train --model small_cnn --max_steps 6 --logging_steps 2 --eval_strategy no --dataset fashion_mnist
  --per_device_train_batch_size 16 --learning_rate 2e-3 --save_strategy no --seed 11 --disable_tqdm
  --overwrite_output_dir --device @DEVICE@ --output_dir @OUT@)
if(vulkan_float16)
  set(TOLERANCE_PERMILLE 10)
  same_on_both(mlp_16_mixed "loss [0-9.]+|accuracy [0-9.]+"
    ${HEARTH} train --model mlp --precision 16-mixed --max_steps 40 --logging_steps 10 --eval_strategy steps
    --eval_steps 40 --dataset fashion_mnist --per_device_train_batch_size 64 --per_device_eval_batch_size 500
    --learning_rate 2e-3 --save_strategy no --seed 11 --max_eval_samples 500 --disable_tqdm --overwrite_output_dir
    --device @DEVICE@ --output_dir @OUT@)
  same_on_both(small_cnn_16_mixed "loss [0-9.]+"
    ${HEARTH} train --model small_cnn --precision 16-mixed --max_steps 6 --logging_steps 2 --eval_strategy no
    --max_eval_samples 64 --dataset fashion_mnist --per_device_train_batch_size 16 --learning_rate 2e-3
    --save_strategy no --seed 11 --disable_tqdm --overwrite_output_dir --device @DEVICE@ --output_dir @OUT@)
  unset(TOLERANCE_PERMILLE)
else()
  message(STATUS "16-mixed: skipped, vulkan:0 has no float16")
endif()
same_on_both(cv_example "loss [0-9.]+|accuracy [0-9.]+"
  ${CV_EXAMPLE} --data_dir ${IMAGES} --model resnet_tiny --image_size 32 --num_epochs 1 --batch_size 4
  --learning_rate 1e-2 --seed 3 --num_workers 2 --logging_steps 1 --device @DEVICE@ --output_dir @OUT@)
same_on_both(run_glue "loss [0-9.]+|eval_accuracy += [0-9.]+"
  ${RUN_GLUE} --model_name_or_path ${BERT_DIR} --task_name mrpc --data_dir ${WORK_DIR}/glue
  --ignore_mismatched_sizes --do_train --do_eval --max_seq_length 32 --per_device_train_batch_size 8
  --learning_rate 1e-3 --num_train_epochs 1 --logging_steps 4 --seed 7 --disable_tqdm --device @DEVICE@
  --output_dir @OUT@ --overwrite_output_dir)
