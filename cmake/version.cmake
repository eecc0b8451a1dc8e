# Stamps the tool version (project version + git commit) into a generated header.
find_package(Git QUIET)
set(RDMAMESH_GIT_REV "unknown")
if(GIT_FOUND AND EXISTS "${PROJECT_SOURCE_DIR}/.git")
  execute_process(
    COMMAND "${GIT_EXECUTABLE}" describe --always --dirty --abbrev=10
    WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
    OUTPUT_VARIABLE RDMAMESH_GIT_REV
    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT RDMAMESH_GIT_REV)
    set(RDMAMESH_GIT_REV "unknown")
  endif()
endif()
configure_file("${PROJECT_SOURCE_DIR}/cmake/version.hpp.in" "${PROJECT_BINARY_DIR}/generated/rdmamesh/version.hpp" @ONLY)
