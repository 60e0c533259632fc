# write_tiny_mrpc(DIR COUNT): train.tsv and dev.tsv of COUNT rows each in
# MRPC's layout, sentences from the tiny BERT fixture's vocabulary (label 1
# when the second restates the first). For run_glue tests that need data only
# to run, not to learn.
function(write_tiny_mrpc dir count)
  set(words good bad movie film great awful fun plot actor story)
  foreach(split train dev)
    set(text "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n")
    foreach(i RANGE 1 ${count})
      math(EXPR a "${i} % 10")
      math(EXPR b "(${i} * 3 + 1) % 10")
      math(EXPR label "${i} % 2")
      list(GET words ${a} wa)
      list(GET words ${b} wb)
      if(label)
        string(APPEND text "${label}\t${i}\t${i}0\tthe ${wa} was ${wb} .\tit said the ${wa} was ${wb} !\n")
      else()
        string(APPEND text "${label}\t${i}\t${i}0\tthe ${wa} was ${wb} .\tthe ${wb} was not ${wa} .\n")
      endif()
    endforeach()
    file(WRITE "${dir}/${split}.tsv" "${text}")
  endforeach()
endfunction()
