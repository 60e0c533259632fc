# Fashion-MNIST through `hearth train` on the GPU and on the CPU, same seed and
# settings: the GPU run must pick cuda:0 by itself and reach the CPU's accuracy
# (the two differ only by floating-point order, TF32 and cuDNN's algorithms).
# Prints both wall times. Says "skipped, no usable GPU" (CTest marks it skipped)
# on a machine without one.
#   cmake -DHEARTH=<binary> -DWORK_DIR=<scratch dir> -P train_fashion_mnist_gpu.cmake
if(NOT HEARTH OR NOT EXISTS "${HEARTH}")
  message(FATAL_ERROR "train_fashion_mnist_gpu: the hearth binary '${HEARTH}' does not exist")
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

execute_process(COMMAND "${HEARTH}" env OUTPUT_VARIABLE env_out ERROR_VARIABLE env_err)
if(NOT env_out MATCHES "device=auto resolves to: cuda")
  message(STATUS "train_fashion_mnist_gpu: skipped, no usable GPU:\n${env_out}${env_err}")
  return()
endif()

set(common train --model small_cnn --dataset fashion_mnist --seed 3 --max_train_samples 30000
    --num_train_epochs 2 --per_device_train_batch_size 64 --per_device_eval_batch_size 512 --learning_rate 2e-3
    --weight_decay 0.01 --warmup_ratio 0.02 --lr_scheduler_type linear --eval_strategy epoch --save_strategy no
    --logging_steps 200 --disable_tqdm)

function(train label out_acc out_seconds)
  string(TIMESTAMP t0 "%s")
  execute_process(COMMAND "${HEARTH}" ${common} --output_dir "${WORK_DIR}/${label}" ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(TIMESTAMP t1 "%s")
  message(STATUS "${label}: exit ${rc}\n${out}${err}")
  if(NOT rc STREQUAL "0")
    message(FATAL_ERROR "train_fashion_mnist_gpu: the ${label} run exited with ${rc}")
  endif()
  if(label STREQUAL "gpu" AND NOT out MATCHES "hearth: training on cuda:0 \\(")
    message(FATAL_ERROR "train_fashion_mnist_gpu: device auto did not pick cuda:0")
  endif()
  string(REGEX MATCHALL "eval_accuracy +[0-9.]+" accs "${out}")
  list(GET accs -1 last)
  string(REGEX REPLACE "eval_accuracy +" "" acc "${last}")
  math(EXPR secs "${t1} - ${t0}")
  set(${out_acc} "${acc}" PARENT_SCOPE)
  set(${out_seconds} "${secs}" PARENT_SCOPE)
endfunction()

train(gpu gpu_acc gpu_s)
train(cpu cpu_acc cpu_s --cpu)
message(STATUS "Fashion-MNIST, 30000 samples x 2 epochs: cuda:0 ${gpu_acc} in ${gpu_s} s, cpu ${cpu_acc} in ${cpu_s} s")
if(gpu_acc LESS 0.85 OR cpu_acc LESS 0.85)
  message(FATAL_ERROR "train_fashion_mnist_gpu: accuracy below 0.85 (gpu ${gpu_acc}, cpu ${cpu_acc})")
endif()
string(REGEX REPLACE "^0\\." "" g "${gpu_acc}0000")
string(REGEX REPLACE "^0\\." "" c "${cpu_acc}0000")
string(SUBSTRING "${g}" 0 4 g)
string(SUBSTRING "${c}" 0 4 c)
math(EXPR diff "${g} - ${c}")
if(diff LESS -150 OR diff GREATER 150)
  message(FATAL_ERROR "train_fashion_mnist_gpu: gpu accuracy ${gpu_acc} and cpu accuracy ${cpu_acc} differ by more than 1.5 points")
endif()
