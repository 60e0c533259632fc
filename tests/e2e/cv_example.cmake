# End-to-end run of examples/cv_example on the fixture images
# (tests/fixtures/images/pets: 24 images of 3 classes and one truncated JPEG),
# on the CPU with a tiny ResNet at 32x32, one epoch:
#   - it trains, evaluates, writes checkpoints (with classes.json) and metrics,
#   - the truncated file is reported once, by path, and skipped,
#   - a run resumed from a mid-epoch checkpoint logs the same losses,
#   - --model_path loads weights with fc replaced and trains only fc,
#   - bad flag values fail with exit code 2 and a message naming the flag.
#   cmake -DCV_EXAMPLE=<binary> -DDATA_DIR=<pets dir> -DWORK_DIR=<scratch dir> -P cv_example.cmake
if(NOT CV_EXAMPLE OR NOT EXISTS "${CV_EXAMPLE}")
  message(FATAL_ERROR "cv_example: the binary '${CV_EXAMPLE}' does not exist; build the cv_example target")
endif()
if(NOT DEFINED ENV{OMP_WAIT_POLICY})
  set(ENV{OMP_WAIT_POLICY} passive)
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

set(common --data_dir "${DATA_DIR}" --cpu --model resnet_tiny --image_size 32 --num_epochs 1 --batch_size 4
    --learning_rate 1e-2 --seed 3 --num_workers 2 --logging_steps 1 --with_tracking)

function(run_example out_var)
  execute_process(COMMAND "${CV_EXAMPLE}" ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "cv_example ${ARGN} exited with ${rc}; output:\n${out}${err}")
  set(${out_var} "${out}${err}" PARENT_SCOPE)
  set(${out_var}_rc "${rc}" PARENT_SCOPE)
endfunction()

function(expect text)
  foreach(re ${ARGN})
    if(NOT text MATCHES "${re}")
      message(FATAL_ERROR "cv_example: no match for '${re}' in the output")
    endif()
  endforeach()
endfunction()

# A command that fails as a bad command line does: exit code 2 and a message
# matching `pattern`.
function(expect_usage_error what pattern)
  run_example(out ${ARGN})
  if(NOT out_rc STREQUAL "2")
    message(FATAL_ERROR "cv_example: ${what} exited with ${out_rc}, expected 2")
  endif()
  expect("${out}" "${pattern}")
endfunction()

function(loss_lines path out_var)
  file(STRINGS "${path}" lines REGEX "\"loss\":")
  set(${out_var} "${lines}" PARENT_SCOPE)
endfunction()

# ---- one epoch, a checkpoint every 2 steps ----
run_example(full ${common} --checkpointing_steps 2 --output_dir "${WORK_DIR}/full")
if(NOT full_rc STREQUAL "0")
  message(FATAL_ERROR "cv_example: training exited with ${full_rc}")
endif()
expect("${full}" "25 images of 3 classes \\(flat layout\\).*: 20 for training, 5 for evaluation"
       "model resnet_tiny \\([0-9]+ parameters" "epoch 1\\.00: accuracy [0-9.]+%" "finished 5 steps on cpu"
       "\\[ImageFolder\\] skipping [^\n]*red_circle_9\\.jpg: truncated JPEG")
string(REGEX MATCHALL "skipping [^\n]*red_circle_9\\.jpg" reports "${full}")
list(LENGTH reports n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "cv_example: the corrupt file was reported ${n} times, expected once")
endif()
foreach(f checkpoint-2/model.safetensors checkpoint-4/optimizer.safetensors checkpoint-5/trainer_state.json
          checkpoint-5/classes.json metrics.jsonl)
  if(NOT EXISTS "${WORK_DIR}/full/${f}")
    message(FATAL_ERROR "cv_example: ${WORK_DIR}/full/${f} was not written")
  endif()
endforeach()
file(READ "${WORK_DIR}/full/checkpoint-5/classes.json" classes)
if(NOT classes MATCHES "^\\[\"blue_triangle\",\"green_square\",\"red_circle\"\\]")
  message(FATAL_ERROR "cv_example: classes.json holds ${classes}")
endif()
loss_lines("${WORK_DIR}/full/metrics.jsonl" full_losses)
list(LENGTH full_losses n)
if(NOT n EQUAL 5)
  message(FATAL_ERROR "cv_example: expected a loss line per step in metrics.jsonl, found ${n}")
endif()

# ---- resumed from step 2: the same losses as the uninterrupted run ----
run_example(resumed ${common} --output_dir "${WORK_DIR}/resumed" --resume_from_checkpoint "${WORK_DIR}/full/checkpoint-2")
if(NOT resumed_rc STREQUAL "0")
  message(FATAL_ERROR "cv_example: the resumed run exited with ${resumed_rc}")
endif()
expect("${resumed}" "resuming from [^\n]*checkpoint-2 at step 2" "finished 5 steps")
loss_lines("${WORK_DIR}/resumed/metrics.jsonl" resumed_losses)
if(NOT resumed_losses STREQUAL full_losses)
  message(FATAL_ERROR "cv_example: the losses after resuming differ from the uninterrupted run's:\n"
                      "uninterrupted: ${full_losses}\nresumed: ${resumed_losses}")
endif()

# ---- weights from a file, fc replaced, only fc trained ----
run_example(pretrained ${common} --output_dir "${WORK_DIR}/pretrained"
            --model_path "${WORK_DIR}/full/checkpoint-5/model.safetensors")
if(NOT pretrained_rc STREQUAL "0")
  message(FATAL_ERROR "cv_example: training from --model_path exited with ${pretrained_rc}")
endif()
# fc of the tiny ResNet: 64 x 3 weights + 3 biases.
expect("${pretrained}" "\\([0-9]+ parameters, 195 trained\\), weights from [^\n]*model\\.safetensors")

# ---- bad values ----
expect_usage_error("--checkpointing_steps often"
                   "--checkpointing_steps: expected a number of steps >= 1 or \"epoch\", got \"often\""
                   ${common} --output_dir "${WORK_DIR}/bad" --checkpointing_steps often)
run_example(bad_model ${common} --output_dir "${WORK_DIR}/bad" --model resnet18
            --model_path "${WORK_DIR}/full/checkpoint-5/model.safetensors")
if(bad_model_rc STREQUAL "0")
  message(FATAL_ERROR "cv_example: resnet18 loaded the tiny ResNet's weights")
endif()
expect("${bad_model}" "cv_example: error: .*(conv1|layer|bn1)")
# Mixed precision: trains where the Trainer supports it, else an error that
# names the request (this example's own when the Trainer knows no mixed precision).
run_example(amp ${common} --output_dir "${WORK_DIR}/amp" --mixed_precision bf16)
if(NOT amp_rc STREQUAL "0")
  expect("${amp}" "cv_example: error: [^\n]*bf16")
  if(amp MATCHES "does not support mixed precision" AND NOT amp MATCHES "--mixed_precision bf16: this build's Trainer")
    message(FATAL_ERROR "cv_example: the mixed-precision error does not name the flag")
  endif()
endif()

# ---- commands as Hugging Face's documentation writes them ----
# A bad flag is exit code 2, as everywhere else; a repeated one takes its last value.
run_example(unknown ${common} --output_dir "${WORK_DIR}/bad" --no_such_flag)
if(NOT unknown_rc STREQUAL "2")
  message(FATAL_ERROR "cv_example: an unknown flag exited with ${unknown_rc}, expected 2")
endif()
expect("${unknown}" "cv_example: error: .*--no_such_flag")
run_example(repeated ${common} --output_dir "${WORK_DIR}/bad" --model resnet18 --model resnet9000)
if(NOT repeated_rc STREQUAL "2")
  message(FATAL_ERROR "cv_example: a bad last --model exited with ${repeated_rc}, expected 2")
endif()
expect("${repeated}" "resnet9000")
# 20 training images in batches of 19: the last batch of one, which batch norm
# cannot train on, is dropped, and said once.
set(drop_dir "${WORK_DIR}/drop")
run_example(drop ${common} --batch_size 19 --checkpointing_steps epoch --output_dir "${drop_dir}")
if(NOT drop_rc STREQUAL "0")
  message(FATAL_ERROR "cv_example: a last batch of one exited with ${drop_rc}")
endif()
expect("${drop}" "last training batch would hold 1 sample" "finished 1 step on")
# Checkpoint folders get mkdir's mode (0755 under umask 022), as Hugging Face's do, not 0700.
execute_process(COMMAND mkdir "${WORK_DIR}/by-mkdir")
execute_process(COMMAND stat -c %a "${drop_dir}/checkpoint-1" "${WORK_DIR}/by-mkdir" OUTPUT_VARIABLE modes)
string(REPLACE "\n" ";" modes "${modes}")
list(GET modes 0 mode)
list(GET modes 1 expected_mode)
if(NOT mode STREQUAL expected_mode)
  message(FATAL_ERROR "cv_example: checkpoint-1 has mode ${mode}, expected ${expected_mode} as mkdir gives")
endif()
# The error for a used output_dir recommends --overwrite_output_dir, which exists.
run_example(again ${common} --batch_size 19 --checkpointing_steps epoch --output_dir "${drop_dir}")
expect("${again}" "--overwrite_output_dir")
run_example(overwrite ${common} --batch_size 19 --checkpointing_steps epoch --output_dir "${drop_dir}"
            --overwrite_output_dir --dataloader_drop_last)
if(NOT overwrite_rc STREQUAL "0")
  message(FATAL_ERROR "cv_example: --overwrite_output_dir exited with ${overwrite_rc}")
endif()
# Accelerate's complete_cv_example spellings: --with_tracking writes TensorBoard
# event files too, under --project_dir/cv_example (or the older --logging_dir);
# --fp16 is --mixed_precision fp16; fp8 is refused with the way out.
run_example(tracked ${common} --output_dir "${WORK_DIR}/tracked" --project_dir "${WORK_DIR}/project")
if(NOT tracked_rc STREQUAL "0")
  message(FATAL_ERROR "cv_example: --project_dir exited with ${tracked_rc}")
endif()
file(GLOB events "${WORK_DIR}/project/cv_example/events.out.tfevents.*")
if(NOT events OR NOT EXISTS "${WORK_DIR}/tracked/metrics.jsonl")
  message(FATAL_ERROR "cv_example: --with_tracking --project_dir wrote no event file in ${WORK_DIR}/project/cv_example "
                      "or no metrics.jsonl in ${WORK_DIR}/tracked")
endif()
# (with Hugging Face's dataloader_prefetch_factor: batches each worker builds ahead)
run_example(older ${common} --output_dir "${WORK_DIR}/older" --logging_dir "${WORK_DIR}/older_logs"
            --dataloader_prefetch_factor 3)
file(GLOB events "${WORK_DIR}/older_logs/cv_example/events.out.tfevents.*")
if(NOT older_rc STREQUAL "0" OR NOT events)
  message(FATAL_ERROR "cv_example: --logging_dir exited with ${older_rc} or wrote no event file")
endif()
run_example(fp16 ${common} --output_dir "${WORK_DIR}/fp16" --fp16)
if(fp16_rc STREQUAL "0")
  expect("${fp16}" "precision fp16-mixed")
else()
  expect("${fp16}" "cv_example: error: [^\n]*fp16")
endif()
expect_usage_error("--mixed_precision fp8"
                   "--mixed_precision fp8: hearth trains in bf16 or fp16 mixed precision[^\n]*use --mixed_precision bf16"
                   ${common} --output_dir "${WORK_DIR}/fp8" --mixed_precision fp8)
# Batches are built ahead only by loader workers, as Hugging Face's check says.
expect_usage_error("--dataloader_prefetch_factor without workers"
                   "dataloader_prefetch_factor is 2 but dataloader_num_workers is 0"
                   --data_dir "${DATA_DIR}" --cpu --model resnet_tiny --image_size 32 --num_workers 0
                   --dataloader_prefetch_factor 2 --output_dir "${WORK_DIR}/prefetch")
# Lightning's accelerator="mps" (Apple's GPUs) is refused saying what it is.
expect_usage_error("--accelerator mps"
                   "--accelerator: expected [^\n]*got \"mps\" \\(PyTorch's name for Apple's GPUs through Metal"
                   ${common} --output_dir "${WORK_DIR}/mps" --accelerator mps)
