# Install layout and CPack (.deb). Included only from the top-level CMakeLists.
install(FILES resources/icons/foxhunt.svg
  DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps COMPONENT Runtime)

set(CPACK_PACKAGE_NAME "foxhunt")
set(CPACK_PACKAGE_VENDOR "Foxhunt")
set(CPACK_PACKAGE_CONTACT "Foxhunt developers <dev@foxhunt.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_GENERATOR "DEB")
set(CPACK_DEB_COMPONENT_INSTALL OFF)
set(CPACK_COMPONENTS_ALL Runtime)
set(CPACK_DEBIAN_PACKAGE_SECTION "science")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libopenblas0-pthread, tzdata")
include(CPack)
