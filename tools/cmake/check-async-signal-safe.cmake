# cmake -DNM=<nm> -DOBJECTS=<obj>[;<obj>...] -P check-async-signal-safe.cmake
#
# Fails if an object file references (nm -u) a function that is not
# async-signal-safe in a way that matters for code running after clone3 in a
# child of a possibly multi-threaded parent, or sharing the parent's memory
# (CLONE_VM): spawn-child.c.
#  - The allocator (malloc, calloc, realloc, free, and what allocates for the
#    caller: strdup, asprintf, opendir, getpw*/getgr* through NSS): another
#    thread may have held the arena lock at clone time, so the child could
#    deadlock, and a CLONE_VM child would corrupt the parent's heap.
#  - stdio, including snprintf and its _FORTIFY_SOURCE __*_chk forms: FILE
#    locks (same deadlock), buffers flushed twice, and glibc's printf core may
#    allocate and reads locale state. Formatting in the child is by hand
#    (spawn-child.c's s_cat/s_cpy).
#  - exit(): runs atexit handlers and flushes stdio in the child; the child
#    leaves with _exit().
#  - strerror (locale, static buffer) and syslog (locks, allocates).
# Only direct references are visible here: a library function the child
# calls (libcap-ng, libseccomp's load) is trusted by review, not by this check.
cmake_minimum_required(VERSION 3.13) # IN_LIST

if(NOT NM OR NOT OBJECTS)
  message(FATAL_ERROR "usage: cmake -DNM=<nm> -DOBJECTS=<objects> -P ${CMAKE_CURRENT_LIST_FILE}")
endif()

set(_forbidden
  malloc calloc realloc reallocarray free aligned_alloc posix_memalign memalign valloc pvalloc
  strdup strndup asprintf vasprintf __asprintf_chk __vasprintf_chk
  opendir fdopendir closedir readdir readdir64 scandir getpwnam getpwuid getgrnam getgrgid
  getpwnam_r getpwuid_r getgrnam_r getgrgid_r
  printf fprintf dprintf sprintf snprintf vprintf vfprintf vdprintf vsprintf vsnprintf
  __printf_chk __fprintf_chk __dprintf_chk __sprintf_chk __snprintf_chk
  __vprintf_chk __vfprintf_chk __vdprintf_chk __vsprintf_chk __vsnprintf_chk
  fopen fopen64 fdopen fclose fflush fputs fputc putc puts putchar fwrite fread fgets fgetc getc
  getline getdelim perror stdin stdout stderr setvbuf
  exit strerror strerror_r syslog vsyslog)

set(_bad)
foreach(obj ${OBJECTS})
  execute_process(COMMAND ${NM} -u --format=posix ${obj}
    OUTPUT_VARIABLE _out RESULT_VARIABLE _rc ERROR_VARIABLE _err)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "${NM} -u ${obj} failed: ${_err}")
  endif()
  string(REPLACE "\n" ";" _lines "${_out}")
  foreach(line ${_lines})
    # posix format: "<name> U" (name may carry @VERSION).
    string(REGEX REPLACE " .*$" "" _sym "${line}")
    string(REGEX REPLACE "@.*$" "" _sym "${_sym}")
    if(_sym AND _sym IN_LIST _forbidden)
      list(APPEND _bad "${_sym} (${obj})")
    endif()
  endforeach()
endforeach()

if(_bad)
  list(JOIN _bad "\n  " _msg)
  message(FATAL_ERROR "not async-signal-safe, referenced by post-clone child code:\n  ${_msg}")
endif()
message(STATUS "no allocator or stdio symbol in: ${OBJECTS}")
