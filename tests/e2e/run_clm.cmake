# run_clm end to end, replaying Hugging Face's run_clm.py command line on
# tiny models: a new GPT-2 and a new Llama built from the fixtures' config
# files (--config_name), the fixture tokenizer, a text file of short
# sentences, a few dozen steps on the CPU. Checks that the loss falls, that
# eval_results.json holds perplexity = exp(eval_loss) and eval_accuracy, and
# that output_dir is a model folder that `hearth generate` continues text
# with; then a prompt/completion run.
# Inputs: RUN_CLM (the program), HEARTH (the hearth command), FIXTURES (tests/fixtures/causal_lm), WORK_DIR.
cmake_minimum_required(VERSION 3.25)

function(run_checked out_var rc_var)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(${out_var} "${out}${err}" PARENT_SCOPE)
  set(${rc_var} "${rc}" PARENT_SCOPE)
endfunction()

# The first and the last training loss logged in trainer_state.json.
function(first_and_last_loss dir first_var last_var)
  file(READ ${dir}/trainer_state.json state)
  string(JSON n LENGTH "${state}" log_history)
  math(EXPR last_index "${n} - 1")
  set(first "")
  set(last "")
  foreach(i RANGE 0 ${last_index})
    string(JSON loss ERROR_VARIABLE none GET "${state}" log_history ${i} loss)
    if(NOT none)
      if(first STREQUAL "")
        set(first ${loss})
      endif()
      set(last ${loss})
    endif()
  endforeach()
  set(${first_var} ${first} PARENT_SCOPE)
  set(${last_var} ${last} PARENT_SCOPE)
endfunction()

function(check_run name dir out)
  foreach(f train_results.json eval_results.json all_results.json trainer_state.json config.json model.safetensors
            tokenizer.json tokenizer_config.json)
    if(NOT EXISTS ${dir}/${f})
      message(FATAL_ERROR "${name}: run_clm wrote no ${f} into output_dir:\n${out}")
    endif()
  endforeach()
  first_and_last_loss(${dir} first last)
  if(first STREQUAL "" OR NOT last LESS first)
    message(FATAL_ERROR "${name}: the training loss did not fall (first ${first}, last ${last}):\n${out}")
  endif()
  file(READ ${dir}/eval_results.json eval)
  foreach(key eval_loss eval_accuracy perplexity eval_samples)
    string(JSON value ERROR_VARIABLE missing GET "${eval}" ${key})
    if(missing)
      message(FATAL_ERROR "${name}: eval_results.json has no ${key}:\n${eval}")
    endif()
  endforeach()
  string(JSON loss GET "${eval}" eval_loss)
  string(JSON ppl GET "${eval}" perplexity)
  string(JSON accuracy GET "${eval}" eval_accuracy)
  # perplexity = exp(eval_loss), checked through ln: |ln(ppl) - loss| small.
  execute_process(COMMAND /bin/sh -c "awk 'BEGIN { d = log(${ppl}) - ${loss}; print (d < 1e-6 && d > -1e-6) ? \"ok\" : \"bad\" }'"
                  OUTPUT_VARIABLE verdict OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT verdict STREQUAL "ok" OR accuracy LESS 0 OR accuracy GREATER 1)
    message(FATAL_ERROR "${name}: perplexity ${ppl} is not exp(eval_loss ${loss}), or accuracy ${accuracy} is out of [0, 1]")
  endif()
  file(READ ${dir}/all_results.json all)
  string(JSON value ERROR_VARIABLE missing GET "${all}" perplexity)
  if(missing)
    message(FATAL_ERROR "${name}: all_results.json has no perplexity:\n${all}")
  endif()
  message(STATUS "${name}: loss ${first} -> ${last}, eval_loss ${loss}, perplexity ${ppl}, accuracy ${accuracy}")
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(common --tokenizer_name ${FIXTURES}/tiny_tokenizer --do_train --do_eval --per_device_train_batch_size 8
    --learning_rate 5e-3 --max_steps 30 --logging_steps 5 --seed 7 --use_cpu --disable_tqdm --overwrite_output_dir)

# ---- a new GPT-2 (n_positions 20: blocks of 20 tokens by default) ------------
run_checked(out rc ${CMAKE_COMMAND} -E env OMP_NUM_THREADS=1
  ${RUN_CLM} --config_name ${FIXTURES}/gpt2_tiny/config.json --train_file ${FIXTURES}/tiny_corpus.txt ${common}
  --output_dir ${WORK_DIR}/gpt2)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "run_clm (gpt2) failed (exit ${rc}):\n${out}")
endif()
check_run(gpt2 ${WORK_DIR}/gpt2 "${out}")

# ---- hearth generate on the trained model: greedy, the text through its tokenizer
run_checked(out rc ${HEARTH} generate --model ${WORK_DIR}/gpt2 --prompt "the dog" --max_new_tokens 5 --do_sample false
  --cpu)
if(NOT rc EQUAL 0 OR NOT out MATCHES "(^|\n)the dog [a-z .]+\n")
  message(FATAL_ERROR "hearth generate on the trained GPT-2 failed (exit ${rc}) or printed no continuation:\n${out}")
endif()
message(STATUS "generate: ${out}")

# ---- a new Llama, blocks of 32 tokens ----------------------------------------
run_checked(out rc ${CMAKE_COMMAND} -E env OMP_NUM_THREADS=1
  ${RUN_CLM} --config_name ${FIXTURES}/llama_tiny/config.json --train_file ${FIXTURES}/tiny_corpus.txt ${common}
  --block_size 32 --output_dir ${WORK_DIR}/llama)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "run_clm (llama) failed (exit ${rc}):\n${out}")
endif()
check_run(llama ${WORK_DIR}/llama "${out}")

# ---- prompt/completion rows: the completion alone is learnt ------------------
run_checked(out rc ${CMAKE_COMMAND} -E env OMP_NUM_THREADS=1
  ${RUN_CLM} --config_name ${FIXTURES}/llama_tiny/config.json --train_file ${FIXTURES}/tiny_prompt_completion.jsonl
  ${common} --validation_split_percentage 10 --block_size 16 --output_dir ${WORK_DIR}/completion)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "run_clm (prompt/completion) failed (exit ${rc}):\n${out}")
endif()
check_run(completion ${WORK_DIR}/completion "${out}")

# ---- --model_type with --config_overrides: a new GPT-2 of the default config, shrunk
run_checked(out rc ${CMAKE_COMMAND} -E env OMP_NUM_THREADS=1
  ${RUN_CLM} --model_type gpt2 --config_overrides n_embd=24,n_layer=2,n_head=4,vocab_size=48,n_positions=20
  --train_file ${FIXTURES}/tiny_corpus.txt ${common} --output_dir ${WORK_DIR}/model_type)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "run_clm (--model_type) failed (exit ${rc}):\n${out}")
endif()
check_run(model_type ${WORK_DIR}/model_type "${out}")
