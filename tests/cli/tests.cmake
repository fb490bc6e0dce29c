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
foreach(t malformed weights scale again)
  add_test(NAME report.${t}
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/cli/report.sh ${t}
                   $<TARGET_FILE:mtpcheck> ${CMAKE_SOURCE_DIR})
  set_tests_properties(report.${t} PROPERTIES LABELS "inputs" TIMEOUT 300)
endforeach()
