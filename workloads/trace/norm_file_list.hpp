// HugeCTR's Norm file list: a text file whose first line is the number of data files, then one
// data file path per line ("File List"; HugeCTR's data_readers/file_list.hpp).
//
// Relative paths resolve against the working directory, not the list's directory: HugeCTR's
// FileSource hands each line unchanged to std::ifstream::open, so a list that trains with HugeCTR
// from some directory reads with embscale from the same one (its examples run from the directory
// that holds the data, with "./simple_sparse_embedding/..." lines). A missing file's message
// names both directories, so a list written for the other convention is easy to fix.
//
// Stricter than HugeCTR, which reads `count` lines and ignores the rest: the count must equal the
// number of non-empty lines, and every listed file must exist. Trailing whitespace on a line
// (a CR of a Windows editor) is dropped; an empty line ends nothing and is skipped only after the
// last path. Errors name the list and the line.
#pragma once

#include <cstddef>
#include <filesystem>
#include <span>
#include <vector>

namespace embscale::trace {

std::vector<std::filesystem::path> read_norm_file_list(const std::filesystem::path& list);
// Written atomically; paths as given (relative ones stay relative: see above).
void write_norm_file_list(const std::filesystem::path& list, const std::vector<std::filesystem::path>& files);
// A first line of only digits (and optional trailing whitespace) ended by a newline: how
// detect_trace_format tells a list from a data file.
bool looks_like_norm_file_list(std::span<const std::byte> head);

}  // namespace embscale::trace
