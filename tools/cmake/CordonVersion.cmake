# The version every binary prints for --version and /metrics shows in
# cordon_build_info: PROJECT_VERSION, plus `+g<commit>` (semver build
# metadata; `.dirty` with uncommitted changes) when the source tree is a git
# checkout and git is installed at configure time. Without git (a release
# tarball, a build host without it) it is PROJECT_VERSION alone; never an
# error. The header is <build>/generated/cordon-version.h, on the include
# path of every target through cordon_flags and cordon_flags_nosan.
set(CORDON_VERSION_STRING "${PROJECT_VERSION}")
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS "${CMAKE_SOURCE_DIR}/.git")
  execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${CMAKE_SOURCE_DIR}" describe --always --dirty=.dirty --abbrev=12 --exclude=*
                  OUTPUT_VARIABLE _cordon_git ERROR_QUIET RESULT_VARIABLE _cordon_git_rc
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  # Tags are excluded: only a plain commit id (a tag name could hold anything).
  if(_cordon_git_rc EQUAL 0 AND _cordon_git MATCHES "^[0-9a-f]+(\\.dirty)?$")
    set(CORDON_VERSION_STRING "${PROJECT_VERSION}+g${_cordon_git}")
  endif()
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/cordon-version.h.in ${CMAKE_BINARY_DIR}/generated/cordon-version.h @ONLY)
target_include_directories(cordon_flags INTERFACE ${CMAKE_BINARY_DIR}/generated)
target_include_directories(cordon_flags_nosan INTERFACE ${CMAKE_BINARY_DIR}/generated)
message(STATUS "cordon version: ${CORDON_VERSION_STRING}")
