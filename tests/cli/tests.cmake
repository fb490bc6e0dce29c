# The CLI against hostile inputs and the newcomer's traps (tests/cli/inputs.sh,
# docs/CI.md "Guarantees: inputs"): one CTest test per class, label "inputs".
foreach(t links storage membudget verify_empty sources rules pipe preflight
          seed repro selftest report cwd_ids bench_interrupt
          bench_interrupt_twice progress empty_selection
          open_interrupt open_hang)
  add_test(NAME inputs.${t}
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/cli/inputs.sh ${t}
                   $<TARGET_FILE:mtpcheck> ${CMAKE_SOURCE_DIR}
                   $<TARGET_FILE:mtp_plugin_faulty>)
  set_tests_properties(inputs.${t} PROPERTIES LABELS "inputs" TIMEOUT 300)
endforeach()

# mtpcheck report against hostile and repeated inputs (tests/cli/report.sh).
foreach(t malformed weights scale again markdown)
  add_test(NAME report.${t}
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/cli/report.sh ${t}
                   $<TARGET_FILE:mtpcheck> ${CMAKE_SOURCE_DIR})
  set_tests_properties(report.${t} PROPERTIES LABELS "inputs" TIMEOUT 300)
endforeach()

# The report writers' outputs byte for byte against their golden files
# (tests/cli/golden_writers.py; refresh: python3 tests/cli/golden_writers.py
# build/mtpcheck . --update).
add_test(NAME report.golden
         COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/cli/golden_writers.py
                 $<TARGET_FILE:mtpcheck> ${CMAKE_SOURCE_DIR})
set_tests_properties(report.golden PROPERTIES LABELS "inputs" TIMEOUT 120)

# Empty batches (tests/cli/empty.sh, docs/CI.md "Guarantees: inputs"):
# cases/empty.case, every op at T = 0, on each backend CI runs, every result
# SKIPPED as nothing compared (125: the backend is not available here); and
# verify on dumps with nothing to compare, never PASSED. Label "empty".
set(_mtp_empty_backends ref)
if(MTP_HAVE_CPU)
  list(APPEND _mtp_empty_backends cpu)
endif()
if(MTP_HAVE_OPENCL)
  list(APPEND _mtp_empty_backends opencl)
endif()
if(MTP_HAVE_PYTHON)
  list(APPEND _mtp_empty_backends python:numpy)
endif()
# skipped (125) where the machine has no such device, as suite.cuda is
foreach(gpu CUDA HIP LEVEL_ZERO)
  if(MTP_HAVE_${gpu})
    string(TOLOWER ${gpu} _b)
    list(APPEND _mtp_empty_backends ${_b})
  endif()
endforeach()
foreach(be ${_mtp_empty_backends})
  string(REPLACE ":" "." _t ${be})
  add_test(NAME empty.${_t}
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/cli/empty.sh
                   $<TARGET_FILE:mtpcheck> ${CMAKE_SOURCE_DIR} suite ${be})
  string(REGEX REPLACE ":.*" "" _lb ${be})
  set(_labels "empty;backend=${_lb}")
  if(_lb MATCHES "^(cuda|hip|level_zero)$")
    list(APPEND _labels gpu)
  endif()
  set_tests_properties(empty.${_t} PROPERTIES LABELS "${_labels}"
    SKIP_RETURN_CODE 125 TIMEOUT 600)
  if(be MATCHES "^python")
    # the interpreter is never finalised: what it holds is no leak of ours
    set_tests_properties(empty.${_t} PROPERTIES
      ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0")
  endif()
endforeach()
if(MTP_HAVE_PYTHON)
  add_test(NAME empty.python.inputs
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/cli/empty.sh
                   $<TARGET_FILE:mtpcheck> ${CMAKE_SOURCE_DIR} adapter)
  set_tests_properties(empty.python.inputs PROPERTIES
    LABELS "empty;backend=python" SKIP_RETURN_CODE 125 TIMEOUT 300
    ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0")
endif()
add_test(NAME empty.dumps
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/cli/empty.sh
                 $<TARGET_FILE:mtpcheck> ${CMAKE_SOURCE_DIR} dumps)
set_tests_properties(empty.dumps PROPERTIES LABELS "empty" TIMEOUT 300)

# The one option table: each command's options in its --help, and refused in
# one line, exit 2, without a value, out of range or on another command
# (tests/cli/options.sh).
add_test(NAME cli.options
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/cli/options.sh $<TARGET_FILE:mtpcheck>)
set_tests_properties(cli.options PROPERTIES LABELS "inputs" TIMEOUT 300)

# The nightly suite over every GPU (issue 35): tools/ci/on_gpu.sh and
# tools/ci/gpu_resources.sh under CTest's own resource allocation, on two
# pretend GPUs (tests/cli/gpu_shards.sh).
add_test(NAME ci.gpu_shards COMMAND bash ${CMAKE_SOURCE_DIR}/tests/cli/gpu_shards.sh ${CMAKE_SOURCE_DIR})
set_tests_properties(ci.gpu_shards PROPERTIES LABELS "inputs" TIMEOUT 120)
