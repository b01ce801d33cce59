# The Debian package of the plugin for the QGIS this tree is built against (docs/installing.md):
#
#   cmake --build build && (cd build && cpack -G DEB)
#
# writes build/qgis-plugin-vbas_<plugin version>+qgis<QGIS version>_<arch>.deb. It installs the plugin
# folder where Debian's QGIS looks for plugins, /usr/share/qgis/python/plugins/vbas, and the sample
# layers in /usr/share/qgis-plugin-vbas/sample_layers. The library loads only in the QGIS release it was
# built for, so the package depends on exactly that libqgis-core.

# The Debian package that holds the libqgis_core this build links against, and its version.
get_filename_component(VBAS_QGIS_CORE_FILE ${QGIS_CORE_LIBRARY} REALPATH)
execute_process(COMMAND dpkg-query -S ${VBAS_QGIS_CORE_FILE} OUTPUT_VARIABLE VBAS_QGIS_CORE_OWNER
                RESULT_VARIABLE VBAS_DPKG_RESULT ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT VBAS_DPKG_RESULT EQUAL 0)
  message(STATUS "No Debian package holds ${VBAS_QGIS_CORE_FILE}: cpack -G DEB is not set up")
  return()
endif()
string(REGEX REPLACE "[:,].*" "" VBAS_QGIS_CORE_PACKAGE "${VBAS_QGIS_CORE_OWNER}")
execute_process(COMMAND dpkg-query -W -f=\${Version} ${VBAS_QGIS_CORE_PACKAGE}
                OUTPUT_VARIABLE VBAS_QGIS_CORE_VERSION COMMAND_ERROR_IS_FATAL ANY)

# Only the package installs the sample layers (cmake --install installs the plugin folder alone).
file(GLOB VBAS_SAMPLE_LAYERS ${CMAKE_SOURCE_DIR}/sample_layers/*.gpkg ${CMAKE_SOURCE_DIR}/sample_layers/*.csv ${CMAKE_SOURCE_DIR}/sample_layers/*.model3)
install(FILES ${VBAS_SAMPLE_LAYERS} ${CMAKE_SOURCE_DIR}/sample_layers/README.md DESTINATION sample_layers COMPONENT samples EXCLUDE_FROM_ALL)
install(PROGRAMS ${CMAKE_SOURCE_DIR}/sample_layers/run_sample.sh DESTINATION sample_layers COMPONENT samples EXCLUDE_FROM_ALL)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/sample_layers/hierarchies DESTINATION sample_layers COMPONENT samples EXCLUDE_FROM_ALL)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME qgis-plugin-vbas)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION}+qgis${QGIS_VERSION})
# The package's Maintainer: who builds it (cmake -DVBAS_MAINTAINER="Name <address>"); a package built
# without it says it was built locally rather than naming a made-up address.
set(VBAS_MAINTAINER "VBAS for QGIS, built locally <root@localhost>" CACHE STRING "The Debian package's Maintainer field")
set(CPACK_PACKAGE_CONTACT "${VBAS_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "VBAS for QGIS: k-anonymous release of health records with geography (QGIS ${QGIS_VERSION})")
set(CPACK_PACKAGE_DESCRIPTION "Processing provider vbas for QGIS ${QGIS_VERSION}: Voronoi-based aggregation and suppression make a k-anonymous release of records that carry a small area. Enable the plugin once per QGIS profile (Plugins > Manage and Install Plugins, or qgis_process.bin plugins enable vbas). Sample layers: /usr/share/qgis-plugin-vbas/sample_layers.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
# qgis: QGIS desktop and qgis_process, which load the plugin.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "${VBAS_QGIS_CORE_PACKAGE} (= ${VBAS_QGIS_CORE_VERSION}), qgis, python3-qgis, qgis-providers")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${CMAKE_SOURCE_DIR}/cmake/debian/prerm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
set(CPACK_PACKAGING_INSTALL_PREFIX /)
# (build folder, project, component, folder) for the plugin folder and the sample layers.
set(CPACK_INSTALL_CMAKE_PROJECTS
  ${CMAKE_BINARY_DIR} vbas plugin /usr/share/qgis/python/plugins
  ${CMAKE_BINARY_DIR} vbas samples /usr/share/qgis-plugin-vbas)
include(CPack)
