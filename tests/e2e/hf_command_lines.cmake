# Command lines written for Hugging Face's Trainer, Accelerate and Lightning
# run unchanged (where their meaning carries over), end to end:
#   - hearth train keeps Hugging Face's save defaults (--save_steps 3
#     --max_steps 9: checkpoint-3, -6, -9), says which defaults it chooses
#     itself, takes every field of TrainingArguments as a flag, reads its own
#     flags from --config, and ends with train_results.json, eval_results.json,
#     all_results.json, trainer_state.json and the final model in output_dir;
#   - hearth eval writes eval_results.json;
#   - Lightning's flags; --push_to_hub refused, naming why;
#   - run_glue --config_name trains a new BERT from a tiny config, then Hugging
#     Face's README command for run_glue, and its Apple-silicon page's (with
#     transformers 4.x's --use_mps_device), run on the folder that run saved;
#   - `accelerate launch --cpu cv_example.py --data_dir images` as hearth launch.
# Inputs: HEARTH, RUN_GLUE, CV_EXAMPLE, PETS_DIR (tests/fixtures/images/pets), WORK_DIR.
cmake_minimum_required(VERSION 3.25)
set(ENV{OMP_NUM_THREADS} 1)
set(ENV{OMP_WAIT_POLICY} passive)
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}/xdg")
set(ENV{XDG_CONFIG_HOME} "${WORK_DIR}/xdg")  # no user config takes part

function(run name expected_rc)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(${name} "${out}${err}" PARENT_SCOPE)
  if(NOT rc EQUAL ${expected_rc})
    message(FATAL_ERROR "hf_command_lines: ${name}: exit ${rc}, expected ${expected_rc}:\n${out}${err}")
  endif()
endfunction()
function(expect text what)
  foreach(re ${ARGN})
    if(NOT text MATCHES "${re}")
      message(FATAL_ERROR "hf_command_lines: ${what}: no match for '${re}' in:\n${text}")
    endif()
  endforeach()
endfunction()
function(expect_files dir)
  foreach(f ${ARGN})
    if(NOT EXISTS "${dir}/${f}")
      message(FATAL_ERROR "hf_command_lines: ${dir}/${f} was not written")
    endif()
  endforeach()
endfunction()

# ---- hearth train: Hugging Face's defaults and flags --------------------------
set(run "${WORK_DIR}/train")
file(WRITE "${WORK_DIR}/train.json"
     "{\"model\": \"mlp\", \"max_train_samples\": 48, \"max_eval_samples\": 32, \"per_device_train_batch_size\": 16}")
run(train 0 ${HEARTH} train --config "${WORK_DIR}/train.json" --dataset fashion_mnist --cpu --output_dir "${run}"
    --save_steps 3 --max_steps 9 --disable_tqdm
    --logging_dir "${run}/tb" --logging_strategy steps --run_name mine --evaluation_strategy epoch
    --label_smoothing_factor 0.1 --data_seed 3 --logging_first_step --save_only_model false --eval_on_start
    --torch_compile false --push_to_hub false --tf32 false --eval_accumulation_steps 2 --save_safetensors
    --dataloader_persistent_workers --do_train --do_eval --accelerator cpu --accumulate_grad_batches 1 --no_cuda)
expect("${train}" "hearth train"
       "hearth train: defaults that differ from Hugging Face's TrainingArguments[^\n]*learning_rate 0.002 \\(Hugging Face: 5e-05\\)"
       "model mlp" "48 training" "finished 9 steps")
if(train MATCHES "save_strategy epoch")
  message(FATAL_ERROR "hf_command_lines: hearth train still saves every epoch by default:\n${train}")
endif()
expect_files("${run}" checkpoint-3/model.safetensors checkpoint-6/model.safetensors checkpoint-9/model.safetensors
             model.safetensors config.json training_args.json train_results.json eval_results.json all_results.json
             trainer_state.json)
file(READ "${run}/train_results.json" results)
expect("${results}" "train_results.json" "\"train_runtime\"" "\"train_samples_per_second\"" "\"train_steps_per_second\""
       "\"train_loss\"" "\"epoch\"" "\"train_samples\": 48" "\"total_flos\": [1-9]")
file(READ "${run}/eval_results.json" results)
expect("${results}" "eval_results.json" "\"eval_loss\"" "\"eval_accuracy\"" "\"eval_samples\": 32"
       "\"eval_steps_per_second\"")
file(READ "${run}/trainer_state.json" results)
expect("${results}" "trainer_state.json" "\"total_flos\": [1-9]" "\"is_world_process_zero\": true")
file(READ "${run}/all_results.json" results)
expect("${results}" "all_results.json" "\"train_loss\"" "\"eval_loss\"")
file(READ "${run}/checkpoint-9/training_args.json" saved)
expect("${saved}" "training_args.json" "\"run_name\": \"mine\"" "\"label_smoothing_factor\": 0.1")
file(GLOB events "${run}/tb/events.out.tfevents.*")
if(NOT events)
  message(FATAL_ERROR "hf_command_lines: --logging_dir ${run}/tb holds no TensorBoard events")
endif()

# ---- hearth eval: eval_results.json beside the model or in --output_dir -------
run(eval 0 ${HEARTH} eval --checkpoint "${run}" --cpu --max_eval_samples 16 --output_dir "${WORK_DIR}/eval")
expect_files("${WORK_DIR}/eval" eval_results.json)
file(READ "${WORK_DIR}/eval/eval_results.json" results)
expect("${results}" "hearth eval" "\"eval_loss\"" "\"eval_samples\": 16")

# ---- refusals name the flag and why -------------------------------------------
run(hub 2 ${HEARTH} train --model mlp --dataset fashion_mnist --cpu --output_dir "${WORK_DIR}/hub" --push_to_hub)
expect("${hub}" "--push_to_hub" "--push_to_hub: true is not supported: hearth has no network access")
run(devices 2 ${RUN_GLUE} --model_name_or_path "${WORK_DIR}" --task_name mrpc --do_train --devices 2)
expect("${devices}" "--devices" "hearth launch --nproc_per_node 2")

# ---- --help: types and defaults -----------------------------------------------
run(help 0 ${HEARTH} train --help)
expect("${help}" "--help" "--use_cpu(,--no_cuda)? BOOL=false" "--save_steps INT=500" "--logging_strategy TEXT=steps")

# ---- run_glue: a new BERT from a tiny config, then Hugging Face's README command
file(MAKE_DIRECTORY "${WORK_DIR}/tiny" "${WORK_DIR}/glue")
set(words good bad movie film great awful fun plot actor story the was it said not she)
string(REPLACE ";" "\n" vocab "[PAD];[UNK];[CLS];[SEP];[MASK];.;!;,;${words}")
file(WRITE "${WORK_DIR}/tiny/vocab.txt" "${vocab}\n")
file(WRITE "${WORK_DIR}/tiny/config.json"
     "{\"model_type\": \"bert\", \"vocab_size\": 32, \"hidden_size\": 16, \"num_hidden_layers\": 1, "
     "\"num_attention_heads\": 2, \"intermediate_size\": 32, \"max_position_embeddings\": 128}\n")
foreach(split train dev)
  set(text "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n")
  foreach(i RANGE 1 24)
    math(EXPR a "${i} % 10")
    math(EXPR label "${i} % 2")
    list(GET words ${a} w)
    if(label)
      string(APPEND text "1\t${i}\t${i}0\tthe ${w} was good .\tit said the ${w} was good !\n")
    else()
      string(APPEND text "0\t${i}\t${i}0\tthe ${w} was bad .\tshe said not ${w} , fun\n")
    endif()
  endforeach()
  file(WRITE "${WORK_DIR}/glue/${split}.tsv" "${text}")
endforeach()
# run_glue's own flags from --config, as Hugging Face's scripts read a JSON file.
file(WRITE "${WORK_DIR}/glue.json"
     "{\"task_name\": \"mrpc\", \"data_dir\": \"${WORK_DIR}/glue\", \"max_seq_length\": 32, \"do_train\": true, "
     "\"max_steps\": 2, \"per_device_train_batch_size\": 8, \"save_strategy\": \"no\", \"disable_tqdm\": true}")
run(new_bert 0 ${RUN_GLUE} --config "${WORK_DIR}/glue.json" --config_name "${WORK_DIR}/tiny/config.json"
    --tokenizer_name "${WORK_DIR}/tiny" --output_dir "${WORK_DIR}/new_bert" --use_cpu)
expect_files("${WORK_DIR}/new_bert" model.safetensors config.json vocab.txt train_results.json)
run(readme 0 ${RUN_GLUE} --model_name_or_path "${WORK_DIR}/new_bert" --task_name mrpc --do_train --do_eval
    --max_seq_length 128 --per_device_train_batch_size 32 --learning_rate 2e-5 --num_train_epochs 3
    --output_dir "${WORK_DIR}/readme" --data_dir "${WORK_DIR}/glue")
expect_files("${WORK_DIR}/readme" model.safetensors train_results.json eval_results.json all_results.json)
file(READ "${WORK_DIR}/readme/eval_results.json" results)
expect("${results}" "run_glue README command" "\"eval_accuracy\"" "\"eval_f1\"" "\"epoch\": 3")
# Hugging Face's Apple-silicon page, as transformers 4.x wrote it: --use_mps_device
# (no effect: the accelerator is the default) and --overwrite_output_dir.
run(apple 0 ${RUN_GLUE} --model_name_or_path "${WORK_DIR}/new_bert" --task_name mrpc --use_mps_device --do_train
    --do_eval --max_seq_length 128 --per_device_train_batch_size 32 --learning_rate 2e-5 --num_train_epochs 3
    --output_dir "${WORK_DIR}/readme" --overwrite_output_dir --data_dir "${WORK_DIR}/glue")
expect_files("${WORK_DIR}/readme" eval_results.json)
# run_glue.py's Hub spellings: --dataset_name glue --dataset_config_name is the
# task; the download options have no effect; what needs the network is refused.
run(hub_names 0 ${RUN_GLUE} --model_name_or_path "${WORK_DIR}/new_bert" --dataset_name glue
    --dataset_config_name mrpc --data_dir "${WORK_DIR}/glue" --do_eval --cache_dir "${WORK_DIR}/cache"
    --model_revision main --token abc --use_auth_token --use_fast_tokenizer false --trust_remote_code false
    --overwrite_cache --output_dir "${WORK_DIR}/hub_names")
expect_files("${WORK_DIR}/hub_names" eval_results.json)
run(hub_data 2 ${RUN_GLUE} --model_name_or_path "${WORK_DIR}/new_bert" --dataset_name imdb --do_train)
expect("${hub_data}" "--dataset_name imdb" "--dataset_name imdb: hearth has no network access[^\n]*--train_file")
run(hub_revision 2 ${RUN_GLUE} --model_name_or_path "${WORK_DIR}/new_bert" --task_name mrpc --do_train
    --model_revision v2)
expect("${hub_revision}" "--model_revision v2" "--model_revision v2: hearth reads --model_name_or_path as it is")

# ---- accelerate launch --cpu cv_example.py --data_dir images -------------------
file(MAKE_DIRECTORY "${WORK_DIR}/images")
file(GLOB pets "${PETS_DIR}/*_1.*" "${PETS_DIR}/*_2.*" "${PETS_DIR}/*_3.*")
file(COPY ${pets} DESTINATION "${WORK_DIR}/images")
run(launched 0 ${HEARTH} launch --cpu ${CV_EXAMPLE} --data_dir "${WORK_DIR}/images"
    --model resnet_tiny --image_size 32 --num_epochs 1 --batch_size 4 --num_workers 0
    --output_dir "${WORK_DIR}/cv")
expect("${launched}" "hearth launch --cpu cv_example" "cv_example: defaults that differ from Hugging Face's"
       "eval_strategy epoch \\(Hugging Face: no\\)" "cv_example: finished [0-9]+ steps? on cpu")
