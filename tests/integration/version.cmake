# `--version` on every installed program (issue 17): cordond, cordon-launch
# and each tools/*.c program (the same glob tools/CMakeLists.txt installs).
set(_version_args ${CORDON_VERSION_STRING} cordond $<TARGET_FILE:cordond> cordon-launch $<TARGET_FILE:cordon-launch>)
file(GLOB _version_tools CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tools/*.c)
foreach(src ${_version_tools})
  get_filename_component(_name ${src} NAME_WE)
  list(APPEND _version_args ${_name} $<TARGET_FILE:${_name}>)
endforeach()
cordon_add_test(NAME test-version-flag
  COMMAND ${CMAKE_CURRENT_LIST_DIR}/check-version
  ARGS ${_version_args}
  LABELS integration TIMEOUT 60)
