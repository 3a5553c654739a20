# SPDX-License-Identifier: GPL-3.0-or-later
# CPack post-build script: CPack 3.25 writes the -dbgsym .ddeb's md5sums with the absolute paths
# of its staging tree (lintian: md5sums-lists-nonexistent-file) and without the doc folder Debian's
# own dbgsym packages carry. packaging/fix-dbgsym.sh repacks it the way dh_strip would.
foreach(file IN LISTS CPACK_PACKAGE_FILES)
  if(file MATCHES "\\.ddeb$")
    execute_process(COMMAND bash "${CMAKE_CURRENT_LIST_DIR}/fix-dbgsym.sh" "${file}" RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "fix-dbgsym.sh failed on ${file}")
    endif()
  endif()
endforeach()
