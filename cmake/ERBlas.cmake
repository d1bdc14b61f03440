# cmake/ERBlas.cmake: find a CBLAS for the engine's certified binary64 products (cpu/cpu_gemm.c).
#
# ER_WITH_BLAS: AUTO (default: use one when found), ON (fail when none is found), OFF (never; the
# hand-written kernel computes every product).  Tried in order: OpenBLAS, BLIS, any other CBLAS
# (libcblas, then a libblas that holds cblas_dgemm).  Each candidate must compile and link a call of
# cblas_dgemm.  Sets:
#   ER_HAVE_BLAS        1 when one was found, else 0
#   ER_BLAS_VENDOR      "OpenBLAS", "BLIS", "CBLAS" or "none"
#   ER_BLAS_INCLUDE_DIR the directory holding its cblas.h
#   ER_BLAS_LIBRARY     the library's full path
#   ER_BLAS_LINK_NAME   its name (openblas, blis, cblas, blas)
#   ER_BLAS_RUNTIME     the file the library's path resolves to (what cpu/cpu_gemm.c loads first)
#   ER_BLAS_SONAME      its SONAME where objdump tells it (loaded next), else empty
# The library is not linked: cpu/cpu_gemm.c loads it at run time (docs/building.md).
include(CheckCSourceCompiles)

set(ER_HAVE_BLAS 0)
set(ER_BLAS_VENDOR "none")
set(ER_BLAS_INCLUDE_DIR "")
set(ER_BLAS_LIBRARY "")
set(ER_BLAS_LINK_NAME "")

# Does `inc`/cblas.h with `lib` compile and link a cblas_dgemm call?  Result in `var`.
function(_er_blas_try var inc lib)
  set(CMAKE_REQUIRED_INCLUDES ${inc})
  set(CMAKE_REQUIRED_LIBRARIES ${lib} ${CMAKE_THREAD_LIBS_INIT} m)
  set(CMAKE_REQUIRED_QUIET ON)
  check_c_source_compiles("
#include <cblas.h>
int main(void)
{
    double a[1] = {1.0}, b[1] = {2.0}, c[1] = {0.0};
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 1, 1, 1, 1.0, a, 1, b, 1, 0.0, c, 1);
    return c[0] == 2.0 ? 0 : 1;
}" ${var})
  set(${var} ${${var}} PARENT_SCOPE)
endfunction()

# _er_blas_take(var vendor inc lib link): where `inc`/cblas.h with `lib` works (_er_blas_try, result in
# `var`), it becomes the engine's BLAS (ER_HAVE_BLAS, ER_BLAS_VENDOR, _INCLUDE_DIR, _LIBRARY, _LINK_NAME).
macro(_er_blas_take var vendor inc lib link)
  _er_blas_try(${var} "${inc}" "${lib}")
  if(${var})
    set(ER_HAVE_BLAS 1)
    set(ER_BLAS_VENDOR "${vendor}")
    set(ER_BLAS_INCLUDE_DIR "${inc}")
    set(ER_BLAS_LIBRARY "${lib}")
    set(ER_BLAS_LINK_NAME "${link}")
  endif()
endmacro()

if(NOT ER_WITH_BLAS STREQUAL "OFF")
  # 1. OpenBLAS: pkg-config's directories first, then the usual places (Debian: openblas-pthread/).
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(ER_PC_OPENBLAS QUIET openblas)
  endif()
  find_path(ER_OPENBLAS_INCLUDE_DIR cblas.h HINTS ${ER_PC_OPENBLAS_INCLUDE_DIRS}
    PATH_SUFFIXES openblas openblas-pthread openblas-openmp openblas-serial)
  find_library(ER_OPENBLAS_LIBRARY NAMES openblas HINTS ${ER_PC_OPENBLAS_LIBRARY_DIRS}
    PATH_SUFFIXES openblas-pthread openblas-openmp openblas-serial)
  if(ER_OPENBLAS_INCLUDE_DIR AND ER_OPENBLAS_LIBRARY)
    _er_blas_take(ER_OPENBLAS_WORKS OpenBLAS "${ER_OPENBLAS_INCLUDE_DIR}" "${ER_OPENBLAS_LIBRARY}" openblas)
  endif()

  # 2. BLIS (built with its CBLAS layer: blis/cblas.h).
  if(NOT ER_HAVE_BLAS)
    if(PKG_CONFIG_FOUND)
      pkg_check_modules(ER_PC_BLIS QUIET blis)
    endif()
    find_path(ER_BLIS_ROOT blis/cblas.h HINTS ${ER_PC_BLIS_INCLUDE_DIRS})
    find_library(ER_BLIS_LIBRARY NAMES blis HINTS ${ER_PC_BLIS_LIBRARY_DIRS} PATH_SUFFIXES blis-pthread blis-openmp)
    if(ER_BLIS_ROOT AND ER_BLIS_LIBRARY)
      set(ER_BLIS_INCLUDE_DIR "${ER_BLIS_ROOT}/blis")
      _er_blas_take(ER_BLIS_WORKS BLIS "${ER_BLIS_INCLUDE_DIR}" "${ER_BLIS_LIBRARY}" blis)
    endif()
  endif()

  # 3. Any CBLAS: libcblas, else a libblas that holds the CBLAS functions.
  if(NOT ER_HAVE_BLAS)
    find_path(ER_CBLAS_INCLUDE_DIR cblas.h)
    find_library(ER_CBLAS_LIBRARY NAMES cblas blas)
    if(ER_CBLAS_INCLUDE_DIR AND ER_CBLAS_LIBRARY)
      get_filename_component(_er_blas_name "${ER_CBLAS_LIBRARY}" NAME_WE)
      string(REGEX REPLACE "^lib" "" _er_blas_name "${_er_blas_name}")
      _er_blas_take(ER_CBLAS_WORKS CBLAS "${ER_CBLAS_INCLUDE_DIR}" "${ER_CBLAS_LIBRARY}" "${_er_blas_name}")
    endif()
  endif()

  if(NOT ER_HAVE_BLAS AND ER_WITH_BLAS STREQUAL "ON")
    message(FATAL_ERROR "ER_WITH_BLAS=ON but no CBLAS (OpenBLAS, BLIS or another cblas.h with its library) was found "
      "(Debian: libopenblas-dev); -DER_WITH_BLAS=AUTO builds the hand-written kernel instead")
  endif()
endif()
set(ER_BLAS_RUNTIME "")
set(ER_BLAS_SONAME "")
if(ER_HAVE_BLAS)
  get_filename_component(ER_BLAS_RUNTIME "${ER_BLAS_LIBRARY}" REALPATH)
  if(CMAKE_OBJDUMP)
    execute_process(COMMAND ${CMAKE_OBJDUMP} -p "${ER_BLAS_RUNTIME}" OUTPUT_VARIABLE _er_blas_dump ERROR_QUIET)
    string(REGEX MATCH "SONAME[ \t]+([^ \t\r\n]+)" _er_blas_m "${_er_blas_dump}")
    if(_er_blas_m)
      set(ER_BLAS_SONAME "${CMAKE_MATCH_1}")
    endif()
  endif()
endif()
message(STATUS "exactref: BLAS for the engine's binary64 products: ${ER_BLAS_VENDOR} ${ER_BLAS_RUNTIME} ${ER_BLAS_SONAME}")
