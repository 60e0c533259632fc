# Runs the hearth command and checks its exit status and output; used by the
# e2e.* tests in tests/CMakeLists.txt, so they need nothing beyond CMake.
#   cmake -DHEARTH=<binary> -DARGS="a;b" -DEXPECT="regex1;regex2" [-DEXPECT_NOT="regex3"] -DEXPECT_RC=0|nonzero
#         -P run_cli.cmake
# Each regular expression of EXPECT must match one line of the output (stdout
# and stderr); those of EXPECT_NOT must match none.
if(NOT HEARTH OR NOT EXISTS "${HEARTH}")
  message(FATAL_ERROR "run_cli: the hearth binary '${HEARTH}' does not exist; build the hearth_cli target")
endif()
execute_process(COMMAND "${HEARTH}" ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message(STATUS "hearth ${ARGS} exited with ${rc}; output:\n${out}${err}")

if(EXPECT_RC STREQUAL "nonzero")
  if(rc STREQUAL "0")
    message(FATAL_ERROR "run_cli: 'hearth ${ARGS}' succeeded, but it was expected to fail")
  endif()
elseif(NOT rc STREQUAL "${EXPECT_RC}")
  message(FATAL_ERROR "run_cli: 'hearth ${ARGS}' exited with ${rc}, expected ${EXPECT_RC}")
endif()

# One list element per line; semicolons would split a line, so they are replaced.
string(REPLACE ";" "," text "${out}${err}")
string(REPLACE "\n" ";" lines "${text}")
foreach(re IN LISTS EXPECT)
  set(found FALSE)
  foreach(line IN LISTS lines)
    if(line MATCHES "${re}")
      set(found TRUE)
      break()
    endif()
  endforeach()
  if(NOT found)
    message(FATAL_ERROR "run_cli: no line of the output of 'hearth ${ARGS}' matches '${re}'")
  endif()
endforeach()
foreach(re IN LISTS EXPECT_NOT)
  foreach(line IN LISTS lines)
    if(line MATCHES "${re}")
      message(FATAL_ERROR "run_cli: a line of the output of 'hearth ${ARGS}' matches '${re}': ${line}")
    endif()
  endforeach()
endforeach()
