# The user's tools end to end, as a user runs them:
#   - `hearth config` with answers piped in (one invalid, asked again) writes
#     $XDG_CONFIG_HOME/hearth/config.json; `hearth config --default` too;
#   - `hearth env` names the file and what it sets;
#   - `hearth train` takes the device and output directory from it, a flag
#     overrides it, and the run writes metrics.jsonl, TensorBoard event files
#     and curves.svg, with no control characters in its piped output;
#   - `hearth plot` redraws curves.svg from metrics.jsonl.
#   cmake -DHEARTH=<binary> -DWORK_DIR=<scratch dir> -P config_logs_plot.cmake
if(NOT HEARTH OR NOT EXISTS "${HEARTH}")
  message(FATAL_ERROR "config_logs_plot: the hearth binary '${HEARTH}' does not exist; build the hearth_cli target")
endif()
if(NOT DEFINED ENV{OMP_WAIT_POLICY})
  set(ENV{OMP_WAIT_POLICY} passive)
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}/xdg")
set(ENV{XDG_CONFIG_HOME} "${WORK_DIR}/xdg")
set(config "${WORK_DIR}/xdg/hearth/config.json")

function(run_hearth out_var)
  execute_process(COMMAND "${HEARTH}" ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "hearth ${ARGN} exited with ${rc}; output:\n${out}${err}")
  if(NOT rc STREQUAL "0")
    message(FATAL_ERROR "config_logs_plot: 'hearth ${ARGN}' exited with ${rc}")
  endif()
  set(${out_var} "${out}${err}" PARENT_SCOPE)
endfunction()

function(expect text regex what)
  if(NOT text MATCHES "${regex}")
    message(FATAL_ERROR "config_logs_plot: ${what}: no match for '${regex}'")
  endif()
endfunction()

# ---- hearth config, answers piped in ----
file(WRITE "${WORK_DIR}/answers.txt" "tpu\ncpu\n2\n\nno\n${WORK_DIR}/from-config\n")
execute_process(COMMAND "${HEARTH}" config INPUT_FILE "${WORK_DIR}/answers.txt" RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
message(STATUS "hearth config exited with ${rc}:\n${out}${err}")
if(NOT rc STREQUAL "0")
  message(FATAL_ERROR "config_logs_plot: hearth config failed")
endif()
expect("${out}" "\"tpu\" is not valid for device: expected auto, cpu, gpu or a device kind such as cuda or vulkan, with :N for the N-th" "the invalid answer")
expect("${out}" "hearth config: wrote ${config}" "where the file went")
file(READ "${config}" written)
expect("${written}" "\"device\": \"cpu\"" "config.json")
expect("${written}" "\"num_processes\": 2" "config.json")
expect("${written}" "\"precision\": \"fp32\"" "config.json")

run_hearth(out config --default --config_file "${WORK_DIR}/defaults.json")
file(READ "${WORK_DIR}/defaults.json" defaults)
expect("${defaults}" "\"device\": \"auto\"" "--default")
# No output_dir unless asked: every program keeps its own.
if(defaults MATCHES "output_dir")
  message(FATAL_ERROR "config_logs_plot: hearth config --default stores an output_dir:\n${defaults}")
endif()

# ---- hearth env shows it ----
run_hearth(out env)
expect("${out}" "config file: ${config} \\(sets device=cpu, num_processes=2, precision=fp32, cpu_fallback=no, output_dir=" "hearth env")

# ---- hearth train reads it; logs for people ----
set(train train --model mlp --dataset fashion_mnist --max_train_samples 64 --max_eval_samples 32 --max_steps 4
    --per_device_train_batch_size 16 --logging_steps 1 --eval_strategy steps --eval_steps 2 --save_strategy no)
run_hearth(out ${train})
expect("${out}" "hearth: config ${config} sets device=cpu" "train names the config")
expect("${out}" "hearth: training on cpu \\(device is cpu\\)" "the config's device")
string(FIND "${out}" "\r" cr)
string(ASCII 27 esc)
string(FIND "${out}" "${esc}" escape)
if(NOT cr EQUAL -1 OR NOT escape EQUAL -1)
  message(FATAL_ERROR "config_logs_plot: piped training output holds control characters")
endif()
set(run "${WORK_DIR}/from-config")
foreach(f metrics.jsonl curves.svg)
  if(NOT EXISTS "${run}/${f}")
    message(FATAL_ERROR "config_logs_plot: ${run}/${f} was not written")
  endif()
endforeach()
file(GLOB_RECURSE events "${run}/runs/*/events.out.tfevents.*")
list(LENGTH events n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "config_logs_plot: expected one TensorBoard event file under ${run}/runs, found ${n}")
endif()

# A flag wins over the config.
run_hearth(out ${train} --output_dir "${WORK_DIR}/from-flag" --report_to jsonl)
if(NOT EXISTS "${WORK_DIR}/from-flag/curves.svg" OR EXISTS "${WORK_DIR}/from-flag/runs")
  message(FATAL_ERROR "config_logs_plot: --output_dir and --report_to did not override the config")
endif()

# ---- hearth plot redraws the curves ----
file(READ "${run}/curves.svg" drawn)
file(REMOVE "${run}/curves.svg")
run_hearth(out plot "${run}")
expect("${out}" "hearth plot: wrote ${run}/curves.svg from [0-9]+ log entries. loss 4 points. eval_loss 2 points" "plot")
file(READ "${run}/curves.svg" redrawn)
if(NOT drawn STREQUAL redrawn)
  message(FATAL_ERROR "config_logs_plot: hearth plot drew something else than training did")
endif()
