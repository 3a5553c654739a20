# SPDX-License-Identifier: GPL-3.0-or-later
# Install layout and CPack (.deb). Included only from the top-level CMakeLists.
#
#   cmake --build build --target package      -> build/foxhunt_<version>_<arch>.deb
#
# Everything a user gets is in the Runtime component: both executables, their
# man pages, and (with the GUI) the desktop entry, AppStream metainfo and the
# icon in SVG and PNG sizes. The package never touches the user's data folder
# ($XDG_DATA_HOME/foxhunt) or settings, so removing it leaves them in place.

# FOXHUNT_APP_ID (cmake/FoxhuntOptions.cmake) names the desktop entry, the metainfo
# and the icon alike, as AppStream wants; it derives from HOMEPAGE_URL (example.invalid).

# Date of the release that PROJECT_VERSION names; bump both together.
set(FOXHUNT_RELEASE_DATE "2026-11-29")

set(foxhunt_pkg_src ${PROJECT_SOURCE_DIR}/packaging)
set(foxhunt_pkg_out ${PROJECT_BINARY_DIR}/packaging)
file(MAKE_DIRECTORY ${foxhunt_pkg_out}/man ${foxhunt_pkg_out}/icons)

# Man pages come from the binaries' own --help (help2man), plus hand-written
# sections in packaging/man/*.h2m, so they cannot drift from the options.
find_program(FOXHUNT_HELP2MAN help2man)

# foxhunt_add_manpage(<target> <include.h2m> [QT]): <target>.1.gz in man1.
function(foxhunt_add_manpage target include)
  if(NOT FOXHUNT_HELP2MAN)
    message(WARNING "help2man not found (apt install help2man): no man page for ${target}")
    return()
  endif()
  set(page ${foxhunt_pkg_out}/man/${target}.1)
  add_custom_command(OUTPUT ${page}.gz
    COMMAND bash ${foxhunt_pkg_src}/man/make-manpage.sh ${FOXHUNT_HELP2MAN}
            $<TARGET_FILE:${target}> ${include} ${page}
    DEPENDS ${target} ${include} ${foxhunt_pkg_src}/man/make-manpage.sh
    COMMENT "Writing the ${target}(1) man page"
    VERBATIM)
  add_custom_target(${target}_manpage ALL DEPENDS ${page}.gz)
  install(FILES ${page}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT Runtime)
endfunction()

if(FOXHUNT_BUILD_ENGINE)
  foxhunt_add_manpage(foxhunt-cli ${foxhunt_pkg_src}/man/foxhunt-cli.h2m)
endif()

if(FOXHUNT_BUILD_GUI)
  foxhunt_add_manpage(foxhunt ${foxhunt_pkg_src}/man/foxhunt.h2m)

  # Desktop integration. The icon is named after the app id, as the desktop
  # entry and metainfo refer to it.
  configure_file(${foxhunt_pkg_src}/desktop/foxhunt.desktop.in
    ${foxhunt_pkg_out}/${FOXHUNT_APP_ID}.desktop @ONLY)
  configure_file(${foxhunt_pkg_src}/desktop/foxhunt.metainfo.xml.in
    ${foxhunt_pkg_out}/${FOXHUNT_APP_ID}.metainfo.xml @ONLY)
  install(FILES ${foxhunt_pkg_out}/${FOXHUNT_APP_ID}.desktop
    DESTINATION ${CMAKE_INSTALL_DATADIR}/applications COMPONENT Runtime)
  install(FILES ${foxhunt_pkg_out}/${FOXHUNT_APP_ID}.metainfo.xml
    DESTINATION ${CMAKE_INSTALL_DATADIR}/metainfo COMPONENT Runtime)
  # .dbn and .dbn.zst files open in Foxhunt, which imports them.
  configure_file(${foxhunt_pkg_src}/mime/foxhunt-mime.xml.in ${foxhunt_pkg_out}/${FOXHUNT_APP_ID}.xml COPYONLY)
  install(FILES ${foxhunt_pkg_out}/${FOXHUNT_APP_ID}.xml
    DESTINATION ${CMAKE_INSTALL_DATADIR}/mime/packages COMPONENT Runtime)
  install(FILES resources/icons/foxhunt.svg RENAME ${FOXHUNT_APP_ID}.svg
    DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps COMPONENT Runtime)

  # PNG sizes are rendered from the one SVG at build time, so they never go
  # stale when the SVG changes (rsvg-convert: Debian's librsvg2-bin).
  find_program(FOXHUNT_RSVG_CONVERT rsvg-convert)
  if(NOT FOXHUNT_RSVG_CONVERT)
    message(FATAL_ERROR "rsvg-convert not found: run packaging/setup-deps.sh (Debian: librsvg2-bin), "
                        "or configure with -DFOXHUNT_BUILD_GUI=OFF")
  endif()
  set(foxhunt_pngs)
  foreach(size 16 22 24 32 48 64 128 256 512)
    set(png ${foxhunt_pkg_out}/icons/${size}x${size}/${FOXHUNT_APP_ID}.png)
    add_custom_command(OUTPUT ${png}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${foxhunt_pkg_out}/icons/${size}x${size}
      COMMAND ${FOXHUNT_RSVG_CONVERT} --width ${size} --height ${size} --keep-aspect-ratio
              --output ${png} ${PROJECT_SOURCE_DIR}/resources/icons/foxhunt.svg
      DEPENDS ${PROJECT_SOURCE_DIR}/resources/icons/foxhunt.svg
      VERBATIM)
    list(APPEND foxhunt_pngs ${png})
    install(FILES ${png} DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/${size}x${size}/apps
      COMPONENT Runtime)
  endforeach()
  add_custom_target(foxhunt_icons ALL DEPENDS ${foxhunt_pngs})
endif()

install(FILES ${foxhunt_pkg_src}/copyright
  DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT Runtime)
# The manual Help -> Foxhunt manual (F1) opens.
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/docs/about.png ${PROJECT_SOURCE_DIR}/docs/training.png
              ${PROJECT_SOURCE_DIR}/docs/settings.png ${PROJECT_SOURCE_DIR}/docs/main_window.png
  DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT Runtime)

# Debian wants the changelog compressed with gzip -9n (no name, no time stamp: reproducible).
find_program(FOXHUNT_GZIP gzip REQUIRED)
set(foxhunt_changelog ${foxhunt_pkg_out}/changelog.Debian.gz)
add_custom_command(OUTPUT ${foxhunt_changelog}
  COMMAND ${FOXHUNT_GZIP} -9nc ${foxhunt_pkg_src}/changelog > ${foxhunt_changelog}
  DEPENDS ${foxhunt_pkg_src}/changelog
  VERBATIM)
add_custom_target(foxhunt_changelog ALL DEPENDS ${foxhunt_changelog})
install(FILES ${foxhunt_changelog} DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT Runtime)

# CPack only for the top-level project: built inside another project (as a
# subdirectory), Foxhunt installs its files but leaves packaging to the parent.
if(NOT PROJECT_IS_TOP_LEVEL)
  return()
endif()

# Package metadata. Version, summary and homepage come from project().
set(CPACK_PACKAGE_NAME "foxhunt")
set(CPACK_PACKAGE_VENDOR "Foxhunt")
set(CPACK_PACKAGE_CONTACT "Foxhunt developers <dev@foxhunt.invalid>")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_DESCRIPTION
  "Foxhunt imports E-mini S&P 500 futures (ES.FUT) bars from Databento DBN and
CSV files into a local SQLite store and replays them, in time order and with
features that never look ahead, into reinforcement-learning agents and
forecasters written on LibTorch. The desktop app (foxhunt) charts the data and
the training; foxhunt-cli does the same work headless.")
set(CPACK_PACKAGE_HOMEPAGE_URL "${PROJECT_HOMEPAGE_URL}")
set(CPACK_RESOURCE_FILE_LICENSE "${foxhunt_pkg_src}/copyright")
set(CPACK_GENERATOR "DEB")
set(CPACK_COMPONENTS_ALL Runtime)
set(CPACK_DEB_COMPONENT_INSTALL OFF)
# CPACK_STRIP_FILES stays off: the dbgsym split below strips the binaries itself.
# Debug symbols go into foxhunt-dbgsym_<version>_<arch>.ddeb (/usr/lib/debug/.build-id), as
# Debian's automatic -dbgsym packages do, so the main package stays small and a crash can
# still be symbolised.
set(CPACK_DEBIAN_DEBUGINFO_PACKAGE ON)
set(CPACK_POST_BUILD_SCRIPTS ${foxhunt_pkg_src}/fix-dbgsym.cmake)
# gzip: xz took minutes over the ~290 MB of DWARF on a 2-core machine; both formats are valid .debs.
set(CPACK_DEBIAN_COMPRESSION_TYPE "gzip")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION "science")
set(CPACK_DEBIAN_PACKAGE_PRIORITY "optional")
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
# dpkg-shlibdeps (dpkg-dev) finds the linked libraries: Qt 6, LibTorch, SQLite,
# zstd, OpenSSL. The rest are loaded at run time and invisible to it: OpenBLAS
# behind LibTorch's libblas.so.3 (reference BLAS is ~30x slower), the time
# zone database, Qt's platform plugins and its SVG icon engine.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libopenblas0-pthread, tzdata")
if(FOXHUNT_BUILD_GUI)
  string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS ", qt6-qpa-plugins, libqt6svg6")
  set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "hicolor-icon-theme")
endif()
include(CPack)
