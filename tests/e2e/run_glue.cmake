# run_glue end to end: writes a tiny MRPC-style data set in the original GLUE
# layout (pairs of sentences from the tiny BERT's vocabulary, label 1 when the
# second sentence restates the first), fine-tunes the tiny BERT fixture on it
# for one epoch on the CPU, and checks the files run_glue.py would write.
# Then checks that a model id that is not a local folder gets the way out.
# Inputs: RUN_GLUE (the program), MODEL_DIR (tests/fixtures/golden/bert_tiny), WORK_DIR.
include(${CMAKE_CURRENT_LIST_DIR}/review_rows.cmake)
cmake_minimum_required(VERSION 3.25)

function(run_checked out_var rc_var)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(${out_var} "${out}${err}" PARENT_SCOPE)
  set(${rc_var} "${rc}" PARENT_SCOPE)
endfunction()

# ---- the data: MRPC's header and columns, quotes left unbalanced on purpose --
set(words good bad movie film great awful fun plot actor story)
# With `test` set, the unlabelled test layout (an index column instead of Quality).
function(write_split path count)
  set(test ${ARGN})
  if(test)
    set(text "index\t#1 ID\t#2 ID\t#1 String\t#2 String\n")
  else()
    set(text "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n")
  endif()
  foreach(i RANGE 1 ${count})
    math(EXPR a "${i} % 10")
    math(EXPR b "(${i} * 3 + 1) % 10")
    math(EXPR c "(${i} * 7 + 2) % 10")
    math(EXPR label "${i} % 2")
    list(GET words ${a} wa)
    list(GET words ${b} wb)
    list(GET words ${c} wc)
    set(first "the ${wa} ${wb} was ${wc} .")
    if(label)
      set(second "it said the ${wa} ${wb} was ${wc} !")
    else()
      set(second "\"the ${wc} was not ${wa} , she said")
    endif()
    if(test)
      math(EXPR index "${i} - 1")
      string(APPEND text "${index}\t${i}\t${i}0\t${first}\t${second}\n")
    else()
      string(APPEND text "${label}\t${i}\t${i}0\t${first}\t${second}\n")
    endif()
  endforeach()
  file(WRITE ${path} "${text}")
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/data)
write_split(${WORK_DIR}/data/train.tsv 64)
write_split(${WORK_DIR}/data/dev.tsv 24)
write_split(${WORK_DIR}/data/test.tsv 20 test)

# ---- one epoch on the CPU ----------------------------------------------------
run_checked(out rc ${CMAKE_COMMAND} -E env OMP_NUM_THREADS=1
  ${RUN_GLUE} --model_name_or_path ${MODEL_DIR} --task_name mrpc --data_dir ${WORK_DIR}/data
  --ignore_mismatched_sizes --do_train --do_eval --max_seq_length 32 --per_device_train_batch_size 8
  --learning_rate 1e-3 --num_train_epochs 1 --logging_steps 4 --seed 7 --use_cpu --disable_tqdm
  --output_dir ${WORK_DIR}/out --overwrite_output_dir)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "run_glue failed (exit ${rc}):\n${out}")
endif()
foreach(f train_results.json eval_results.json all_results.json trainer_state.json config.json model.safetensors
          vocab.txt)
  if(NOT EXISTS ${WORK_DIR}/out/${f})
    message(FATAL_ERROR "run_glue wrote no ${f} into output_dir:\n${out}")
  endif()
endforeach()
file(READ ${WORK_DIR}/out/eval_results.json eval)
foreach(key eval_accuracy eval_f1 eval_combined_score eval_loss eval_samples)
  string(JSON value ERROR_VARIABLE missing GET "${eval}" ${key})
  if(missing)
    message(FATAL_ERROR "eval_results.json has no ${key}:\n${eval}")
  endif()
endforeach()
string(JSON accuracy GET "${eval}" eval_accuracy)
string(JSON samples GET "${eval}" eval_samples)
if(accuracy LESS 0 OR accuracy GREATER 1 OR NOT samples EQUAL 24)
  message(FATAL_ERROR "eval_accuracy ${accuracy} is not a fraction, or eval_samples ${samples} is not 24:\n${eval}")
endif()
file(READ ${WORK_DIR}/out/all_results.json all)
foreach(key train_loss train_samples eval_accuracy)
  string(JSON value ERROR_VARIABLE missing GET "${all}" ${key})
  if(missing)
    message(FATAL_ERROR "all_results.json has no ${key}:\n${all}")
  endif()
endforeach()
file(READ ${WORK_DIR}/out/trainer_state.json state)
string(JSON steps GET "${state}" global_step)
if(NOT steps EQUAL 8)
  message(FATAL_ERROR "64 samples in batches of 8 are 8 steps, trainer_state.json says ${steps}")
endif()
# The saved folder names the task's labels.
file(READ ${WORK_DIR}/out/config.json config)
string(JSON label1 GET "${config}" id2label 1)
if(NOT label1 STREQUAL "equivalent")
  message(FATAL_ERROR "config.json's id2label[1] is '${label1}', expected 'equivalent'")
endif()
message(STATUS "run_glue: eval_accuracy ${accuracy}")

# ---- long enough to learn: the pipeline is real, not just the files -----------
# Fifteen epochs, each batch padded to its longest row (--pad_to_max_length false).
run_checked(out rc ${CMAKE_COMMAND} -E env OMP_NUM_THREADS=1
  ${RUN_GLUE} --model_name_or_path ${MODEL_DIR} --task_name mrpc --data_dir ${WORK_DIR}/data
  --ignore_mismatched_sizes --do_train --do_eval --do_predict --max_seq_length 32 --pad_to_max_length false
  --per_device_train_batch_size 8 --learning_rate 3e-3 --num_train_epochs 15 --logging_steps 40 --seed 7
  --use_cpu --disable_tqdm --save_strategy no --output_dir ${WORK_DIR}/learn --overwrite_output_dir)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "run_glue (15 epochs) failed (exit ${rc}):\n${out}")
endif()
file(READ ${WORK_DIR}/learn/eval_results.json eval)
string(JSON accuracy GET "${eval}" eval_accuracy)
if(accuracy LESS 0.9)
  message(FATAL_ERROR "after 15 epochs eval_accuracy is ${accuracy}, expected at least 0.9:\n${out}")
endif()
# --do_predict: run_glue.py's file, label names by index; odd rows restate the first sentence.
file(STRINGS ${WORK_DIR}/learn/predict_results_mrpc.txt predictions)
list(LENGTH predictions lines)
list(GET predictions 0 header)
if(NOT lines EQUAL 21 OR NOT header STREQUAL "index\tprediction")
  message(FATAL_ERROR "predict_results_mrpc.txt: expected a header and 20 rows, got ${lines} lines:\n${predictions}")
endif()
set(right 0)
foreach(index RANGE 0 19)
  math(EXPR line "${index} + 1")
  math(EXPR odd "(${index} + 1) % 2")
  list(GET predictions ${line} row)
  if(odd)
    set(want "${index}\tequivalent")
  else()
    set(want "${index}\tnot_equivalent")
  endif()
  if(row STREQUAL want)
    math(EXPR right "${right} + 1")
  endif()
endforeach()
if(right LESS 18)
  message(FATAL_ERROR "only ${right} of 20 predictions are right:\n${predictions}")
endif()

# ---- other data: JSON lines with named labels, classes inferred --------------
write_review_rows(${WORK_DIR}/data/reviews.jsonl 16)
run_checked(out rc ${CMAKE_COMMAND} -E env OMP_NUM_THREADS=1
  ${RUN_GLUE} --model_name_or_path ${MODEL_DIR} --train_file ${WORK_DIR}/data/reviews.jsonl
  --validation_file ${WORK_DIR}/data/reviews.jsonl --ignore_mismatched_sizes --do_train --do_eval
  --max_seq_length 16 --num_train_epochs 1 --use_cpu --disable_tqdm --save_strategy no
  --output_dir ${WORK_DIR}/json --overwrite_output_dir)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "run_glue on JSON lines failed (exit ${rc}):\n${out}")
endif()
file(READ ${WORK_DIR}/json/eval_results.json eval)
string(JSON accuracy ERROR_VARIABLE missing GET "${eval}" eval_accuracy)
file(READ ${WORK_DIR}/json/config.json config)
string(JSON label0 GET "${config}" id2label 0)
if(missing OR NOT label0 STREQUAL "neg")
  message(FATAL_ERROR "JSON data: expected eval_accuracy and sorted labels (neg first), got ${label0}:\n${eval}")
endif()

# ---- a hub id is not a folder: no network, the way out -------------------------
run_checked(out rc ${RUN_GLUE} --model_name_or_path bert-base-uncased --task_name mrpc --data_dir ${WORK_DIR}/data
            --do_train --output_dir ${WORK_DIR}/out2)
if(rc EQUAL 0 OR NOT out MATCHES "no network: download elsewhere and pass the folder"
   OR NOT out MATCHES "huggingface-cli download bert-base-uncased")
  message(FATAL_ERROR "expected the no-network error for a hub id, got exit ${rc}:\n${out}")
endif()

# ---- mixed precision: --bf16 is Hugging Face's flag for bf16-mixed ----------------
run_checked(out rc ${CMAKE_COMMAND} -E env OMP_NUM_THREADS=1
  ${RUN_GLUE} --model_name_or_path ${MODEL_DIR} --task_name mrpc --data_dir ${WORK_DIR}/data --do_eval --bf16
  --use_cpu --output_dir ${WORK_DIR}/bf16 --ignore_mismatched_sizes)
if(NOT rc EQUAL 0 OR NOT EXISTS ${WORK_DIR}/bf16/eval_results.json)
  message(FATAL_ERROR "run_glue --bf16 failed (exit ${rc}):\n${out}")
endif()

# ---- a vocabulary larger than the model's vocab_size: refused naming both ----
# (its token ids past vocab_size would index past the word embeddings)
file(MAKE_DIRECTORY ${WORK_DIR}/big_vocab)
file(READ ${MODEL_DIR}/vocab.txt vocab)
foreach(i RANGE 1 51)
  string(APPEND vocab "extra${i}\n")
endforeach()
file(WRITE ${WORK_DIR}/big_vocab/vocab.txt "${vocab}")
run_checked(out rc ${RUN_GLUE} --model_name_or_path ${MODEL_DIR} --tokenizer_name ${WORK_DIR}/big_vocab
  --task_name mrpc --data_dir ${WORK_DIR}/data --ignore_mismatched_sizes --do_eval --use_cpu
  --output_dir ${WORK_DIR}/big_vocab_out)
if(NOT rc EQUAL 1 OR NOT out MATCHES "big_vocab: the tokenizer's vocabulary has 150 tokens, more than the vocab_size 99")
  message(FATAL_ERROR "run_glue with 150 tokens for a vocab_size of 99: expected exit 1 naming both, got ${rc}:\n${out}")
endif()
