// A thin layer over the HDF5 C API: owning handles, checked calls whose errors name the file, and
// typed attributes (scalars, 3-vectors, variable-length UTF-8 strings that h5py reads as str).
#pragma once
#include <hdf5.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "dcsgrid/core/cell.hpp"

namespace dcsgrid::io::hdf5 {

// Owns one HDF5 identifier and closes it with the matching H5?close.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  Handle(Handle&& other) noexcept : id_(other.id_), closer_(other.closer_) { other.id_ = -1; }
  Handle& operator=(Handle&& other) noexcept;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { close(); }  // unchecked: call close() where a failure matters (files)

  hid_t get() const { return id_; }
  // Closes now; negative when HDF5 reports a failure (closing a file flushes it, which can fail).
  herr_t close();
  // Gives the identifier up unclosed: for a file every MPI rank opened, whose close is a
  // collective call that a rank leaving on an error must not enter alone.
  void release() { id_ = -1; }

 private:
  hid_t id_ = -1;
  Closer closer_ = nullptr;
};

// HDF5 as packaged (serial, not thread-safe) must not be entered by two threads at once: every
// dcsgrid function that calls HDF5 holds this lock. Getting it also silences errors for the
// calling thread.
std::mutex& library_mutex();

// Stops HDF5 from printing its error stack on stderr in the calling thread (the setting is per
// thread): failures are reported as dcsgrid::Error instead. Cheap after the first call.
void silence_errors();

// Throws Error "<file>: cannot <what> (HDF5: <innermost message>)" when result is negative
// (a failed call returning hid_t or herr_t); returns result otherwise.
hid_t check(hid_t result, const std::filesystem::path& file, const std::string& what);
// The same, wrapping a new identifier in a Handle.
Handle checked_handle(hid_t id, Handle::Closer closer, const std::filesystem::path& file,
                      const std::string& what);

// Creates a new file at `temp` (which must not exist) in the HDF5 1.10 format: object headers,
// heaps and the superblock carry checksums, so a damaged byte there is refused before libhdf5
// parses it (the 1.8 format let it read freed memory on such files). `shown` names the file in
// errors.
// every_rank: every rank of the MPI job creates it at once (a collective call), through MPI-IO.
Handle create_file(const std::filesystem::path& temp, const std::filesystem::path& shown,
                   const std::string& what, bool every_rank = false);
// File access through MPI-IO on MPI_COMM_WORLD, for a file every rank opens (Error in builds
// without MPI).
Handle every_rank_access(const std::filesystem::path& path);

// Closes a file being written under a temporary name (to be removed on failure). When the close
// fails (its last flush hit a full disk), HDF5 1.10 keeps the file and its descriptor open until
// the process ends: the file is then cut to length 0, so that the disk gets its space back when the
// temporary is removed. Returns what H5Fclose returned.
herr_t close_temporary_file(Handle& file);

// Attributes on an object (file, group or dataset). file names the file in error messages.
// Scalars are written with a scalar dataspace, arrays as 1-D, integers as int64, strings as
// variable-length UTF-8.
void write_attribute(hid_t object, const std::string& name, double value,
                     const std::filesystem::path& file);
void write_attribute(hid_t object, const std::string& name, std::int64_t value,
                     const std::filesystem::path& file);
void write_attribute(hid_t object, const std::string& name, std::size_t value,
                     const std::filesystem::path& file);
void write_attribute(hid_t object, const std::string& name, const std::string& value,
                     const std::filesystem::path& file);
void write_attribute(hid_t object, const std::string& name, const std::array<double, 3>& value,
                     const std::filesystem::path& file);
void write_attribute(hid_t object, const std::string& name,
                     const std::array<std::int64_t, 3>& value, const std::filesystem::path& file);
// A 3×3 attribute, one row a vector.
void write_attribute(hid_t object, const std::string& name, const Mat3& value, const std::filesystem::path& file);
bool has_attribute(hid_t object, const std::string& name, const std::filesystem::path& file);
// The text attribute `name` written anew, an existing one of that name deleted first.
void replace_attribute(hid_t object, const std::string& name, const std::string& value,
                       const std::filesystem::path& file);

// Readers for the same; they throw InputError naming the file and attribute when it is missing
// or holds the wrong kind or number of values. Numbers convert (an int attribute reads as double);
// strings may be variable- or fixed-length.
void read_attribute(hid_t object, const std::string& name, double& value,
                    const std::filesystem::path& file);
void read_attribute(hid_t object, const std::string& name, std::int64_t& value,
                    const std::filesystem::path& file);
void read_attribute(hid_t object, const std::string& name, std::size_t& value,
                    const std::filesystem::path& file);
void read_attribute(hid_t object, const std::string& name, std::string& value,
                    const std::filesystem::path& file);
void read_attribute(hid_t object, const std::string& name, std::array<double, 3>& value,
                    const std::filesystem::path& file);
void read_attribute(hid_t object, const std::string& name, std::array<std::int64_t, 3>& value,
                    const std::filesystem::path& file);

// Names of all attributes of object, in name order.
std::vector<std::string> attribute_names(hid_t object, const std::filesystem::path& file);

}  // namespace dcsgrid::io::hdf5
