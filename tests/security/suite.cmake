# The security suite's last test checks that nothing the suite created is
# left behind (cgroups, mounts, BPF attachments, processes, temp dirs, fds),
# so it must run after every other tests/security test, also under
# `ctest -j` (which otherwise orders serial tests by their recorded cost).
file(GLOB _sec_tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/test-*.c)
set(_sec_names)
foreach(src ${_sec_tests})
  get_filename_component(_name ${src} NAME_WE)
  if(NOT _name STREQUAL "test-zz-suite-leaves-nothing-behind")
    list(APPEND _sec_names ${_name})
  endif()
endforeach()
set_tests_properties(test-zz-suite-leaves-nothing-behind PROPERTIES DEPENDS "${_sec_names}")

# A marker touched before the suite runs: the leftovers check counts only
# temp dirs newer than it, so a directory some earlier, interrupted run left
# in /tmp does not fail this run (it is not this run's leak).
set(CORDON_SEC_MARKER ${CMAKE_BINARY_DIR}/tests/security-suite.start)
add_test(NAME security-suite-begin COMMAND ${CMAKE_COMMAND} -E touch ${CORDON_SEC_MARKER})
set_tests_properties(security-suite-begin PROPERTIES LABELS security FIXTURES_SETUP cordon_security_suite)
set_tests_properties(${_sec_names} test-zz-suite-leaves-nothing-behind PROPERTIES
  FIXTURES_REQUIRED cordon_security_suite)
set_property(TEST test-zz-suite-leaves-nothing-behind APPEND PROPERTY ENVIRONMENT
  "CORDON_SEC_MARKER=${CORDON_SEC_MARKER}")
# The load test runs 60 s plus set-up; the gateway tests start cordond
# several times.
set_tests_properties(test-load-64-sessions PROPERTIES TIMEOUT 240)
