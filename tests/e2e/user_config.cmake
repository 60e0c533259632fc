# The user's config (`hearth config`) read by every entry point, as a user
# runs them, one program per CASE:
#   cv_example  examples/cv_example on the fixture images (tiny ResNet, 2 steps)
#   run_glue    examples/run_glue on a few JSON lines (tiny BERT, 2 steps)
#   launch      `hearth launch` running `hearth env` and, with Gloo, `hearth train`;
#               `hearth config` writing the file HEARTH_CONFIG_FILE names
# For each: the file under $XDG_CONFIG_HOME is read; a file given by
# --config_file is read instead; a flag overrides what the file sets; a bad
# file stops the program with exit code 2 and a message naming the file, the
# key and what was expected.
#   cmake -DCASE=<case> -DPROGRAM=<binary> [-DHEARTH=<hearth binary>] [-DDATA_DIR=<dir>]
#         [-DMODEL_DIR=<dir>] [-DGLOO=ON|OFF] -DWORK_DIR=<scratch dir> -P user_config.cmake
include(${CMAKE_CURRENT_LIST_DIR}/review_rows.cmake)
if(NOT PROGRAM OR NOT EXISTS "${PROGRAM}")
  message(FATAL_ERROR "user_config: the program '${PROGRAM}' does not exist; build it first")
endif()
if(NOT DEFINED ENV{OMP_WAIT_POLICY})
  set(ENV{OMP_WAIT_POLICY} passive)
endif()
set(ENV{OMP_NUM_THREADS} 1)
unset(ENV{HEARTH_CONFIG_FILE})
unset(ENV{HEARTH_ENABLE_CPU_FALLBACK})
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}/xdg/hearth")
set(ENV{XDG_CONFIG_HOME} "${WORK_DIR}/xdg")
set(xdg_config "${WORK_DIR}/xdg/hearth/config.json")

# Runs PROGRAM with the arguments; sets <out_var> (stdout and stderr) and <out_var>_rc.
function(run out_var)
  execute_process(COMMAND "${PROGRAM}" ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "${PROGRAM} ${ARGN} exited with ${rc}; output:\n${out}${err}")
  set(${out_var} "${out}${err}" PARENT_SCOPE)
  set(${out_var}_rc "${rc}" PARENT_SCOPE)
endfunction()

function(expect_rc what rc want)
  if(NOT rc STREQUAL "${want}")
    message(FATAL_ERROR "user_config ${CASE}: ${what} exited with ${rc}, expected ${want}")
  endif()
endfunction()

function(expect what text)
  foreach(re ${ARGN})
    if(NOT text MATCHES "${re}")
      message(FATAL_ERROR "user_config ${CASE}: ${what}: no match for '${re}' in the output")
    endif()
  endforeach()
endfunction()

function(expect_not what text)
  foreach(re ${ARGN})
    if(text MATCHES "${re}")
      message(FATAL_ERROR "user_config ${CASE}: ${what}: '${re}' matched, but should not")
    endif()
  endforeach()
endfunction()

function(expect_files what)
  foreach(f ${ARGN})
    if(NOT EXISTS "${f}")
      message(FATAL_ERROR "user_config ${CASE}: ${what}: ${f} was not written")
    endif()
  endforeach()
endfunction()

# A file of each kind of mistake, shared by the cases.
file(WRITE "${WORK_DIR}/wrong_type.json" "{\"device\": \"cpu\", \"precision\": 16}\n")
file(WRITE "${WORK_DIR}/unknown_value.json" "{\"device\": \"tpu\"}\n")
file(WRITE "${WORK_DIR}/not_json.json" "{\"device\": \"cpu\",\n \"output_dir\": }\n")
set(bad_files wrong_type unknown_value not_json)
set(bad_messages
    "\\[config\\] ${WORK_DIR}/wrong_type.json: key 'precision': expected fp32, bf16-mixed or fp16-mixed as a JSON string, got 16, a JSON number"
    "\\[config\\] ${WORK_DIR}/unknown_value.json: key 'device': expected auto, cpu, gpu or a device kind such as cuda or vulkan, with :N for the N-th, got \"tpu\""
    "\\[config\\] ${WORK_DIR}/not_json.json: is not valid JSON \\(line 2, column [0-9]+: ")

# Runs the program on each bad file, as PROGRAM <lead> --config_file <file>
# <the other arguments>: exit code 2, `prefix` and the message naming the
# file and the key.
function(expect_bad_files_refused prefix lead)
  foreach(i RANGE 2)
    list(GET bad_files ${i} name)
    list(GET bad_messages ${i} message)
    run(bad ${lead} --config_file "${WORK_DIR}/${name}.json" ${ARGN})
    expect_rc("${name}.json" "${bad_rc}" 2)
    expect("${name}.json" "${bad}" "${prefix}${message}")
  endforeach()
endfunction()

if(CASE STREQUAL "cv_example")
  set(common --data_dir "${DATA_DIR}" --model resnet_tiny --image_size 32 --num_epochs 1 --batch_size 10
      --num_workers 1 --seed 3 --with_tracking)
  # ---- $XDG_CONFIG_HOME/hearth/config.json: device, precision, output directory ----
  file(WRITE "${xdg_config}"
       "{\"device\": \"cpu\", \"precision\": \"bf16-mixed\", \"output_dir\": \"${WORK_DIR}/from-xdg\"}\n")
  run(out ${common})
  expect_rc("the run with the XDG config" "${out_rc}" 0)
  expect("the XDG config" "${out}" "hearth: config ${xdg_config} sets device=cpu, precision=bf16-mixed, output_dir="
         "precision bf16-mixed \\(bfloat16 compute" "finished 2 steps on cpu")
  expect_files("the config's output_dir" "${WORK_DIR}/from-xdg/metrics.jsonl")
  # ---- --config_file wins over the XDG file ----
  file(WRITE "${WORK_DIR}/given.json" "{\"device\": \"cpu\", \"output_dir\": \"${WORK_DIR}/from-file\"}\n")
  run(out ${common} --config_file "${WORK_DIR}/given.json")
  expect_rc("the run with --config_file" "${out_rc}" 0)
  expect("--config_file" "${out}" "hearth: config ${WORK_DIR}/given.json sets device=cpu, output_dir=")
  expect_not("--config_file" "${out}" "precision bf16-mixed")
  expect_files("--config_file's output_dir" "${WORK_DIR}/from-file/metrics.jsonl")
  # ---- the flags win over the file ----
  run(out ${common} --output_dir "${WORK_DIR}/from-flag" --mixed_precision no --device cpu)
  expect_rc("the run with flags" "${out_rc}" 0)
  expect_not("--mixed_precision no" "${out}" "precision bf16-mixed")
  expect_files("--output_dir" "${WORK_DIR}/from-flag/metrics.jsonl")
  file(WRITE "${xdg_config}" "{\"device\": \"cuda:7\"}\n")
  run(out ${common} --cpu --output_dir "${WORK_DIR}/cpu-flag")
  expect_rc("--cpu over device cuda:7" "${out_rc}" 0)
  expect("--cpu over device cuda:7" "${out}" "finished 2 steps on cpu")
  # ---- why there is no accelerator is said once, at the start ----
  file(WRITE "${xdg_config}" "{}\n")
  run(out ${common} --device auto --output_dir "${WORK_DIR}/auto")
  expect_rc("--device auto" "${out_rc}" 0)
  string(REGEX MATCHALL "no accelerator" said "${out}")
  list(LENGTH said times)
  if(times GREATER 1)
    message(FATAL_ERROR "user_config ${CASE}: the no-accelerator explanation was printed ${times} times:\n${out}")
  endif()
  # ---- bad files ----
  expect_bad_files_refused("cv_example: error: " "" ${common})

elseif(CASE STREQUAL "run_glue")
  write_review_rows("${WORK_DIR}/reviews.jsonl" 8)
  set(common --model_name_or_path "${MODEL_DIR}" --train_file "${WORK_DIR}/reviews.jsonl" --validation_file
      "${WORK_DIR}/reviews.jsonl" --ignore_mismatched_sizes --do_train --do_eval --max_seq_length 16
      --per_device_train_batch_size 4 --num_train_epochs 1 --disable_tqdm --save_strategy no)
  # ---- $XDG_CONFIG_HOME/hearth/config.json ----
  file(WRITE "${xdg_config}"
       "{\"device\": \"cpu\", \"precision\": \"bf16-mixed\", \"output_dir\": \"${WORK_DIR}/from-xdg\"}\n")
  run(out ${common})
  expect_rc("the run with the XDG config" "${out_rc}" 0)
  expect("the XDG config" "${out}" "hearth: config ${xdg_config} sets device=cpu, precision=bf16-mixed, output_dir="
         "precision bf16-mixed \\(bfloat16 compute" "hearth: training on cpu")
  expect_files("the config's output_dir" "${WORK_DIR}/from-xdg/eval_results.json")
  # ---- --config_file wins over the XDG file ----
  file(WRITE "${WORK_DIR}/given.json" "{\"device\": \"cpu\", \"output_dir\": \"${WORK_DIR}/from-file\"}\n")
  run(out ${common} --config_file "${WORK_DIR}/given.json")
  expect_rc("the run with --config_file" "${out_rc}" 0)
  expect("--config_file" "${out}" "hearth: config ${WORK_DIR}/given.json sets device=cpu, output_dir=")
  expect_not("--config_file" "${out}" "precision bf16-mixed")
  expect_files("--config_file's output_dir" "${WORK_DIR}/from-file/eval_results.json")
  # ---- the flags win over the file: --fp16 replaces bf16-mixed rather than clashing ----
  run(out ${common} --output_dir "${WORK_DIR}/from-flag" --fp16)
  expect_rc("the run with flags" "${out_rc}" 0)
  expect("--fp16 over bf16-mixed" "${out}" "precision fp16-mixed \\(float16 compute")
  expect_files("--output_dir" "${WORK_DIR}/from-flag/eval_results.json")
  file(WRITE "${xdg_config}" "{\"device\": \"cuda:7\"}\n")
  run(out ${common} --use_cpu --output_dir "${WORK_DIR}/cpu-flag")
  expect_rc("--use_cpu over device cuda:7" "${out_rc}" 0)
  expect("--use_cpu over device cuda:7" "${out}" "hearth: training on cpu")
  # ---- bad files ----
  expect_bad_files_refused("run_glue: error: " "" ${common})

elseif(CASE STREQUAL "launch")
  if(NOT HEARTH OR NOT EXISTS "${HEARTH}")
    message(FATAL_ERROR "user_config: the hearth binary '${HEARTH}' does not exist; build the hearth_cli target")
  endif()
  # ---- num_processes from $XDG_CONFIG_HOME; every rank reads the same file ----
  file(WRITE "${xdg_config}" "{\"device\": \"cpu\", \"num_processes\": 2}\n")
  run(out launch "${HEARTH}" env)
  expect_rc("launch with the XDG config" "${out_rc}" 0)
  expect("the XDG config" "${out}" "hearth: config ${xdg_config} sets device=cpu, num_processes=2"
         "\\[rank 0\\] config file: ${xdg_config} \\(sets device=cpu, num_processes=2\\)"
         "\\[rank 1\\] config file: ${xdg_config} \\(sets device=cpu, num_processes=2\\)")
  # ---- --config_file: its path reaches the ranks (HEARTH_CONFIG_FILE), made absolute ----
  file(WRITE "${WORK_DIR}/given.json" "{\"num_processes\": 3, \"cpu_fallback\": true}\n")
  execute_process(COMMAND "${HEARTH}" launch --config_file given.json "${HEARTH}" env WORKING_DIRECTORY "${WORK_DIR}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "hearth launch --config_file given.json exited with ${rc}; output:\n${out}${err}")
  expect_rc("launch --config_file" "${rc}" 0)
  expect("--config_file" "${out}${err}"
         "\\[rank 2\\] config file: ${WORK_DIR}/given.json \\(sets num_processes=3, cpu_fallback=yes\\)"
         "\\[rank 1\\] HEARTH_ENABLE_CPU_FALLBACK: on")
  # ---- --nproc_per_node wins over num_processes ----
  run(out launch --nproc_per_node 1 "${HEARTH}" env)
  expect_rc("launch --nproc_per_node 1" "${out_rc}" 0)
  expect("--nproc_per_node 1" "${out}" "\\[rank 0\\] config file: ${xdg_config}")
  expect_not("--nproc_per_node 1" "${out}" "\\[rank 1\\]")
  # ---- torchrun's and accelerate launch's spellings ----
  run(out launch --nproc-per-node 2 --standalone --nnodes 1 --node-rank 0 "${HEARTH}" env)
  expect_rc("torchrun's spellings" "${out_rc}" 0)
  expect("torchrun's spellings" "${out}" "\\[rank 1\\] config file: ${xdg_config}")
  run(out launch --multi_gpu --num_processes 2 --num_machines 1 --machine_rank 0 --main_process_ip 127.0.0.1
      --cpu --mixed_precision bf16 "${HEARTH}" env)
  expect_rc("accelerate launch's spellings" "${out_rc}" 0)
  expect("accelerate launch's spellings" "${out}"
         "\\[rank 1\\] config file: [^\n]*hearth-launch-[^\n]*config.json \\(sets device=cpu, num_processes=2, precision=bf16-mixed\\)")
  # Any other option before the program is refused, never run as the program.
  run(bad launch --nproc_per_node 2 --no-such-option 3 "${HEARTH}" env)
  expect_rc("an unknown launcher option" "${bad_rc}" 2)
  expect("an unknown launcher option" "${bad}" "hearth launch: error: unknown option '--no-such-option' before the program")
  expect_not("an unknown launcher option" "${bad}" "\\[rank ")
  # ---- training under the launch: device, precision and output directory from the file ----
  if(GLOO)
    # cv_example prints from rank 0 only, as Accelerate's main process does.
    run(out launch --nproc_per_node 2 --cpu "${CV_EXAMPLE}" --data_dir "${DATA_DIR}" --model resnet_tiny --image_size 32
        --num_epochs 1 --batch_size 4 --num_workers 0 --output_dir "${WORK_DIR}/cv-ranks")
    expect_rc("launch cv_example" "${out_rc}" 0)
    expect("launch cv_example" "${out}" "\\[rank 0\\] cv_example: finished")
    expect_not("launch cv_example" "${out}" "\\[rank 1\\] cv_example:")
    file(WRITE "${WORK_DIR}/train.json" "{\"device\": \"cpu\", \"num_processes\": 2, \"precision\": \"bf16-mixed\", "
                                        "\"output_dir\": \"${WORK_DIR}/from-file\"}\n")
    set(train train --model mlp --dataset fashion_mnist --max_train_samples 64 --max_eval_samples 32 --max_steps 2
        --per_device_train_batch_size 8 --save_strategy no --report_to jsonl --disable_tqdm)
    run(out launch --config_file "${WORK_DIR}/train.json" "${HEARTH}" ${train})
    expect_rc("launch hearth train" "${out_rc}" 0)
    expect("launch hearth train" "${out}" "\\[rank 0\\] hearth: config ${WORK_DIR}/train.json sets device=cpu"
           "\\[rank 0\\] hearth: data-parallel over 2 processes" "\\[rank 0\\] hearth: training on cpu"
           "\\[rank 0\\] hearth: .*precision bf16-mixed \\(bfloat16 compute")
    expect_files("the config's output_dir" "${WORK_DIR}/from-file/metrics.jsonl")
    # The ranks' own flags win over the file.
    run(out launch --config_file "${WORK_DIR}/train.json" "${HEARTH}" ${train} --precision fp32 --output_dir
        "${WORK_DIR}/from-flag")
    expect_rc("launch hearth train with flags" "${out_rc}" 0)
    expect("launch hearth train with flags" "${out}" "\\[rank 0\\] hearth: data-parallel over 2 processes")
    expect_not("launch hearth train with flags" "${out}" "precision bf16-mixed")
    expect_files("--output_dir" "${WORK_DIR}/from-flag/metrics.jsonl")
  endif()
  # ---- bad files: refused once, before any rank starts ----
  expect_bad_files_refused("hearth launch: error: " launch "${HEARTH}" env)
  run(bad launch --config_file "${WORK_DIR}/wrong_type.json" "${HEARTH}" env)
  expect_not("a bad file" "${bad}" "\\[rank ")
  # `hearth config` writes where the programs read: the file HEARTH_CONFIG_FILE names.
  set(ENV{HEARTH_CONFIG_FILE} "${WORK_DIR}/named.json")
  run(out config --default)
  expect_rc("hearth config under HEARTH_CONFIG_FILE" "${out_rc}" 0)
  expect_files("hearth config under HEARTH_CONFIG_FILE" "${WORK_DIR}/named.json")
  # A file named by HEARTH_CONFIG_FILE must exist.
  set(ENV{HEARTH_CONFIG_FILE} "${WORK_DIR}/missing.json")
  run(bad launch "${HEARTH}" env)
  expect_rc("a missing HEARTH_CONFIG_FILE" "${bad_rc}" 2)
  expect("a missing HEARTH_CONFIG_FILE" "${bad}"
         "\\[config\\] ${WORK_DIR}/missing.json: no such config file \\(named by HEARTH_CONFIG_FILE\\)")
  unset(ENV{HEARTH_CONFIG_FILE})

else()
  message(FATAL_ERROR "user_config: unknown CASE '${CASE}'; expected cv_example, run_glue or launch")
endif()
