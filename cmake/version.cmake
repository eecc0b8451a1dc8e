# Stamps the tool version (project version + git commit) into a generated header, at every
# build and not only at configure time: a rebuild after a pull or an edit names the commit it
# was built from. configure_file rewrites the header only when the string changes, so an
# unchanged tree recompiles nothing.
function(rdmamesh_write_version source_dir out version git)
  set(RDMAMESH_GIT_REV "unknown")
  if(git AND EXISTS "${source_dir}/.git")
    execute_process(
      COMMAND "${git}" describe --always --dirty --abbrev=10
      WORKING_DIRECTORY "${source_dir}"
      OUTPUT_VARIABLE RDMAMESH_GIT_REV
      OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(NOT RDMAMESH_GIT_REV)
      set(RDMAMESH_GIT_REV "unknown")
    endif()
  endif()
  set(PROJECT_VERSION "${version}")
  configure_file("${source_dir}/cmake/version.hpp.in" "${out}" @ONLY)
endfunction()

if(CMAKE_SCRIPT_MODE_FILE)  # cmake -P, from the target below
  rdmamesh_write_version("${SOURCE_DIR}" "${OUT}" "${VERSION}" "${GIT}")
  return()
endif()

find_package(Git QUIET)
set(RDMAMESH_VERSION_HEADER "${PROJECT_BINARY_DIR}/generated/rdmamesh/version.hpp")
rdmamesh_write_version("${PROJECT_SOURCE_DIR}" "${RDMAMESH_VERSION_HEADER}" "${PROJECT_VERSION}" "${GIT_EXECUTABLE}")
add_custom_target(rdmamesh_version
  COMMAND "${CMAKE_COMMAND}" "-DSOURCE_DIR=${PROJECT_SOURCE_DIR}" "-DOUT=${RDMAMESH_VERSION_HEADER}"
          "-DVERSION=${PROJECT_VERSION}" "-DGIT=${GIT_EXECUTABLE}" -P "${CMAKE_CURRENT_LIST_FILE}"
  BYPRODUCTS "${RDMAMESH_VERSION_HEADER}"
  VERBATIM)
