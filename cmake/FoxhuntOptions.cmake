# SPDX-License-Identifier: GPL-3.0-or-later
# Build options and the small helpers every layer uses.
option(FOXHUNT_BUILD_ENGINE "Build the engine, CLI and benchmarks (needs SQLite, zstd, date)" ON)
option(FOXHUNT_BUILD_GUI "Build the Qt GUI (needs Qt 6 Widgets + Charts)" ON)
option(FOXHUNT_BUILD_TESTS "Build the Qt Test suite" ON)
option(FOXHUNT_WARNINGS_AS_ERRORS "Treat compiler warnings as errors" OFF)
# Reverse-DNS application id: desktop entry, metainfo, icon and the window's desktop file name.
set(FOXHUNT_APP_ID "invalid.example.Foxhunt" CACHE STRING "Reverse-DNS application id (desktop entry, metainfo, icon)")
option(FOXHUNT_USE_PCH "Precompile the LibTorch headers for targets that use them" ON)
option(FOXHUNT_UNITY_BUILD "Compile the LibTorch libraries and the tests in batches of sources" ON)

set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)
set(CMAKE_EXPORT_COMPILE_COMMANDS ON)
if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE RelWithDebInfo CACHE STRING "Build type" FORCE)
endif()

find_program(FOXHUNT_CCACHE ccache)
if(FOXHUNT_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_CXX_COMPILER_LAUNCHER "${FOXHUNT_CCACHE}")
endif()

include(GNUInstallDirs)

# The linker. Every test executable links the static engine and models libraries with
# their debug information: GNU ld took about 5 s for one of them here, lld about 1 s
# and gold 1.6 s, across some 60 executables. The one global flag: it changes no object file.
option(FOXHUNT_FAST_LINKER "Link with lld (else gold) when the compiler accepts it" ON)
if(FOXHUNT_FAST_LINKER AND NOT CMAKE_EXE_LINKER_FLAGS MATCHES "-fuse-ld=")
  include(CheckLinkerFlag)
  foreach(linker lld gold)
    check_linker_flag(CXX "-fuse-ld=${linker}" FOXHUNT_LINKER_${linker})
    if(FOXHUNT_LINKER_${linker})
      add_link_options("-fuse-ld=${linker}")
      message(STATUS "Linking with ${linker}")
      break()
    endif()
  endforeach()
endif()

# Debian's hardening flags, as dpkg-buildflags gives them with hardening=+all: fortified libc
# calls, the stack protector, format-string checks, full RELRO and immediate binding. Only those
# are taken: the build type keeps -O and -g, and the checkout's -ffile-prefix-map is left out so
# one ccache serves every clone. _FORTIFY_SOURCE needs optimisation, so Debug builds go without.
option(FOXHUNT_HARDENING "Compile and link with Debian's hardening flags (dpkg-buildflags)" ON)
set(FOXHUNT_HARDENING_COMPILE_OPTIONS "")
set(FOXHUNT_HARDENING_LINK_OPTIONS "")
find_program(FOXHUNT_DPKG_BUILDFLAGS dpkg-buildflags)
if(FOXHUNT_HARDENING AND FOXHUNT_DPKG_BUILDFLAGS)
  foreach(kind CPPFLAGS CXXFLAGS LDFLAGS)
    execute_process(
      COMMAND ${CMAKE_COMMAND} -E env DEB_BUILD_MAINT_OPTIONS=hardening=+all ${FOXHUNT_DPKG_BUILDFLAGS} --get ${kind}
      OUTPUT_VARIABLE flags OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "dpkg-buildflags --get ${kind} failed (${rc}); configure with -DFOXHUNT_HARDENING=OFF to build without")
    endif()
    separate_arguments(flags UNIX_COMMAND "${flags}")
    foreach(flag IN LISTS flags)
      if(flag MATCHES "^-(g.*|O.*|ffile-prefix-map=.*|fdebug-prefix-map=.*)$")
        continue()
      elseif(kind STREQUAL "LDFLAGS")
        list(APPEND FOXHUNT_HARDENING_LINK_OPTIONS "${flag}")
      elseif(flag MATCHES "^-D_FORTIFY_SOURCE")
        list(APPEND FOXHUNT_HARDENING_COMPILE_OPTIONS "$<$<NOT:$<CONFIG:Debug>>:${flag}>")
      else()
        list(APPEND FOXHUNT_HARDENING_COMPILE_OPTIONS "${flag}")
      endif()
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES FOXHUNT_HARDENING_COMPILE_OPTIONS)
  message(STATUS "Hardening (dpkg-buildflags): ${FOXHUNT_HARDENING_COMPILE_OPTIONS} ${FOXHUNT_HARDENING_LINK_OPTIONS}")
elseif(FOXHUNT_HARDENING)
  message(STATUS "Hardening: dpkg-buildflags not found, building without Debian's hardening flags")
endif()

# Debug information in RelWithDebInfo builds. "lines" (-g1): file and line for every address, so
# backtraces and profiles read as source, without the types and variables of full -g, which cost
# a quarter to a third of a LibTorch translation unit's compile time (dqn.cpp: 67 s with -g, 47 s
# with -g1, same machine and load) and most of the binaries' size. "full" for a debugging session.
set(FOXHUNT_DEBUG_INFO "lines" CACHE STRING "Debug information in RelWithDebInfo builds: lines (-g1) or full (-g)")
set_property(CACHE FOXHUNT_DEBUG_INFO PROPERTY STRINGS lines full)

# foxhunt_target_defaults(target): C++20, warnings. No global flags.
function(foxhunt_target_defaults target)
  target_compile_features(${target} PUBLIC cxx_std_20)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    if(FOXHUNT_DEBUG_INFO STREQUAL "lines")
      target_compile_options(${target} PRIVATE $<$<CONFIG:RelWithDebInfo>:-g1>)
    endif()
    target_compile_options(${target} PRIVATE -Wall -Wextra ${FOXHUNT_HARDENING_COMPILE_OPTIONS})
    target_link_options(${target} PRIVATE ${FOXHUNT_HARDENING_LINK_OPTIONS})
    if(FOXHUNT_WARNINGS_AS_ERRORS)
      target_compile_options(${target} PRIVATE -Werror)
    endif()
  endif()
endfunction()

# foxhunt_qt_defaults(target): every Qt target compiles with QT_NO_KEYWORDS,
# because Qt's `slots` macro breaks the LibTorch headers.
function(foxhunt_qt_defaults target)
  target_compile_definitions(${target} PRIVATE QT_NO_KEYWORDS)
endfunction()

# foxhunt_torch_pch(target [SOURCES file...]): the models library's precompiled <torch/torch.h>
# for a target outside it that uses LibTorch: parsing LibTorch's headers is about a third of such a
# translation unit's compile time. With SOURCES only those files use it (the others, which never
# see LibTorch, skip it); without, all of the target's do. GCC takes a precompiled header only
# where the code model matches, so these compile with -fPIC like the models library.
function(foxhunt_torch_pch target)
  if(NOT FOXHUNT_USE_PCH OR NOT TARGET foxhunt_models)
    return()
  endif()
  cmake_parse_arguments(arg "UNITY" "" "SOURCES" ${ARGN})
  target_compile_options(${target} PRIVATE -fPIC)
  target_precompile_headers(${target} REUSE_FROM foxhunt_models)
  # AUTOMOC's mocs_compilation.cpp is empty where the sources include their own .moc, yet
  # with the header it would cost the header's deferred instantiations (about 6 s).
  get_target_property(automoc ${target} AUTOMOC)
  if(automoc)
    set_source_files_properties("${CMAKE_CURRENT_BINARY_DIR}/${target}_autogen/mocs_compilation.cpp"
      TARGET_DIRECTORY ${target} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
  endif()
  if(arg_SOURCES)
    get_target_property(sources ${target} SOURCES)
    foreach(source IN LISTS sources)
      if(source MATCHES "\\.cpp$" AND NOT source IN_LIST arg_SOURCES)
        set_source_files_properties(${source} TARGET_DIRECTORY ${target} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
      endif()
    endforeach()
  endif()
  # With UNITY, the LibTorch sources compile in unity batches of four (the header's deferred
  # instantiations once a batch); the target's other sources compile one by one.
  if(arg_UNITY AND arg_SOURCES AND FOXHUNT_UNITY_BUILD)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE GROUP)
    set(index 0)
    foreach(source IN LISTS arg_SOURCES)
      math(EXPR batch "${index} / 4")
      set_source_files_properties(${source} TARGET_DIRECTORY ${target} PROPERTIES UNITY_GROUP torch_${batch})
      math(EXPR index "${index} + 1")
    endforeach()
  endif()
endfunction()

# Torch targets take the system LibTorch 1.13 (CPU) on Debian, or the one in a
# PyTorch 2.x wheel when CMAKE_PREFIX_PATH points at it (tests/gpu/run.sh).
find_package(Torch REQUIRED)
