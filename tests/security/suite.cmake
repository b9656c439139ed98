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
# The load test runs 60 s plus set-up; the gateway tests start cordond
# several times.
set_tests_properties(test-load-64-sessions PROPERTIES TIMEOUT 240)
