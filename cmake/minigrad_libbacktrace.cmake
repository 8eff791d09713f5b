# GCC's libbacktrace (libbacktrace.a and backtrace.h, shipped by libgcc-12-dev, which g++
# installs): anomaly mode's in-process symboliser (Note [Anomaly mode], core/src/autograd/node.cpp).
# Used by the build (core/CMakeLists.txt) and by the installed minigradConfig.cmake, which must
# find the same static library for a consumer's final link.
#
# minigrad_find_libbacktrace(<var>) sets <var> to the absolute path of libbacktrace.a, or to ""
# when no compiler knows one. libbacktrace is GCC's, so the C++ compiler is asked when it is GCC,
# then `gcc` (also when the C++ compiler is clang, as in the TSan and fuzz builds): both answer
# `-print-file-name=libbacktrace.a` with the path, or with the bare name when there is none.
function(minigrad_find_libbacktrace var)
  set(_compilers "")
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    list(APPEND _compilers "${CMAKE_CXX_COMPILER}")
  endif()
  find_program(MINIGRAD_GCC NAMES gcc gcc-12)
  mark_as_advanced(MINIGRAD_GCC)
  if(MINIGRAD_GCC)
    list(APPEND _compilers "${MINIGRAD_GCC}")
  endif()
  set(_found "")
  foreach(_cc IN LISTS _compilers)
    if(_found STREQUAL "")
      execute_process(COMMAND "${_cc}" -print-file-name=libbacktrace.a
                      OUTPUT_VARIABLE _path OUTPUT_STRIP_TRAILING_WHITESPACE
                      RESULT_VARIABLE _rc ERROR_QUIET)
      if(_rc EQUAL 0 AND IS_ABSOLUTE "${_path}" AND EXISTS "${_path}")
        get_filename_component(_found "${_path}" REALPATH)
      endif()
    endif()
  endforeach()
  set(${var} "${_found}" PARENT_SCOPE)
endfunction()
