# Compiler flags. Two interface libraries:
#   cordon_flags        warnings + hardening + the configured sanitizers
#   cordon_flags_nosan  warnings + hardening, never sanitized: for programs
#                       that run inside a sandbox in tests (seccomp would
#                       refuse the sanitizer runtime's own syscalls) and for
#                       anything exec'd where the runtime would be missing.
include(CheckCCompilerFlag)

set(_warn -Wall -Wextra -Wformat=2 -Wshadow -Wpointer-arith -Wstrict-prototypes
    -Wmissing-prototypes -Wundef -Wvla -Wno-unused-parameter)
if(CORDON_WERROR)
  list(APPEND _warn -Werror)
endif()

set(_harden -fstack-protector-strong -fno-strict-overflow -fno-delete-null-pointer-checks)
foreach(f -fstack-clash-protection -fcf-protection)
  string(MAKE_C_IDENTIFIER "HAVE${f}" _var)
  check_c_compiler_flag(${f} ${_var})
  if(${_var})
    list(APPEND _harden ${f})
  endif()
endforeach()

add_library(cordon_flags_nosan INTERFACE)
target_compile_options(cordon_flags_nosan INTERFACE ${_warn} ${_harden}
  # _FORTIFY_SOURCE needs optimisation to do anything.
  $<$<NOT:$<CONFIG:Debug>>:-D_FORTIFY_SOURCE=2>)
target_compile_definitions(cordon_flags_nosan INTERFACE _GNU_SOURCE)
target_link_options(cordon_flags_nosan INTERFACE -pie -Wl,-z,relro,-z,now -Wl,-z,noexecstack)

add_library(cordon_flags INTERFACE)
target_link_libraries(cordon_flags INTERFACE cordon_flags_nosan)
if(CORDON_SANITIZE)
  target_compile_options(cordon_flags INTERFACE -fsanitize=${CORDON_SANITIZE}
    -fno-omit-frame-pointer -fno-sanitize-recover=all)
  target_link_options(cordon_flags INTERFACE -fsanitize=${CORDON_SANITIZE})
endif()
