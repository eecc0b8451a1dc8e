// Where and with what a job ran, as root attributes of the results file: the libraries'
// versions, the kernel, and the Slurm allocation when there is one.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace rdmamesh::app {

// Rank 0's view; `n_nodes` comes from the job's node map.
std::vector<std::pair<std::string, std::string>> provenance();

// A fresh key for this job (16 hex digits, 64 random bits): the results file and the verdict
// carry it, and analysis/history files the job under it, however often it is ingested.
std::string new_job_id();

}  // namespace rdmamesh::app
