# A tiny two-class sentiment set as JSON lines with named labels ("pos" and
# "neg" alternating), for the run_glue end-to-end scripts.
function(write_review_rows path count)
  set(rows "")
  foreach(i RANGE 1 ${count})
    math(EXPR k "${i} % 2")
    if(k)
      string(APPEND rows "{\"text\": \"a good fun film\", \"label\": \"pos\"}\n")
    else()
      string(APPEND rows "{\"text\": \"an awful bad plot\", \"label\": \"neg\"}\n")
    endif()
  endforeach()
  file(WRITE "${path}" "${rows}")
endfunction()
