#include "dcsgrid/io/hdf5/util.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "dcsgrid/core/error.hpp"
#include "io/hdf5/vlen_string.hpp"

namespace dcsgrid::io::hdf5 {

namespace fs = std::filesystem;

Handle& Handle::operator=(Handle&& other) noexcept {
  if (this != &other) {
    close();
    id_ = other.id_;
    closer_ = other.closer_;
    other.id_ = -1;
  }
  return *this;
}

herr_t Handle::close() {
  if (id_ < 0) return 0;
  const herr_t status = closer_(id_);
  id_ = -1;
  return status;
}

namespace {

// HDF5 1.10 keeps a file whose H5Fclose failed (its last flush hit a full disk) in its table after
// freeing part of it; the exit hook H5_term_library then closes it again and crashes. Every file
// we open we close ourselves, so the hook is not needed: it is disabled at static initialization,
// before HDF5's first call.
[[maybe_unused]] const herr_t kNoExitHook = H5dont_atexit();

}  // namespace

std::mutex& library_mutex() {
  static std::mutex mutex;
  silence_errors();
  return mutex;
}

// The thread-safe HDF5 builds (Debian's) keep the error-printing setting per thread: each thread
// that calls HDF5 turns it off once.
void silence_errors() {
  thread_local const bool silenced = H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr) >= 0;
  (void)silenced;
}

namespace {

// What HDF5's error stack says about the failure, for the end of our message, then clears the
// stack: its most specific entry (where the failure was detected) on one line. A failed system call
// appears there as "file write failed: time = ..., errno = 28, error message = 'No space left on
// device', buf = ..., ...": that becomes ": No space left on device (HDF5: file write failed)".
std::string take_error_detail() {
  std::string message;
  auto innermost = [](unsigned n, const H5E_error2_t* err, void* out) -> herr_t {
    if (n == 0 && err->desc) *static_cast<std::string*>(out) = err->desc;
    return 0;
  };
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost, &message);
  H5Eclear2(H5E_DEFAULT);
  if (message.empty()) return "";
  const std::size_t errno_at = message.find("errno = ");
  if (errno_at != std::string::npos) {
    const int code = std::atoi(message.c_str() + errno_at + 8);
    if (code > 0)
      return std::string(": ") + std::strerror(code) + " (HDF5: " +
             message.substr(0, message.find_first_of(":,\n")) + ")";
  }
  std::replace(message.begin(), message.end(), '\n', ' ');
  return " (HDF5: " + message + ")";
}

[[noreturn]] void fail(const fs::path& file, const std::string& problem) {
  throw InputError(file.string(), 0, problem);
}

// Fixed-length string attributes longer than this are damage (ours are variable-length).
constexpr std::size_t kMaxFixedString = std::size_t(1) << 20;

std::string attribute_label(const std::string& name) { return "attribute '" + name + "'"; }

// Scalar dataspace for count 0, 1-D of count elements otherwise.
Handle make_space(std::size_t count, const fs::path& file) {
  if (count == 0) return checked_handle(H5Screate(H5S_SCALAR), H5Sclose, file, "create a dataspace");
  const hsize_t dims[1] = {count};
  return checked_handle(H5Screate_simple(1, dims, nullptr), H5Sclose, file, "create a dataspace");
}

void write_numeric(hid_t object, const std::string& name, hid_t file_type, hid_t memory_type,
                   const void* data, std::size_t count, const fs::path& file, Handle space = {}) {
  const std::string what = "write " + attribute_label(name);
  if (space.get() < 0) space = make_space(count, file);
  Handle attr = checked_handle(H5Acreate2(object, name.c_str(), file_type, space.get(), H5P_DEFAULT,
                                          H5P_DEFAULT),
                               H5Aclose, file, what);
  check(H5Awrite(attr.get(), memory_type, data), file, what);
}

Handle open_attribute(hid_t object, const std::string& name, const fs::path& file) {
  if (!has_attribute(object, name, file)) fail(file, "missing " + attribute_label(name));
  return checked_handle(H5Aopen(object, name.c_str(), H5P_DEFAULT), H5Aclose, file,
                        "open " + attribute_label(name));
}

// Reads count numbers (count 1: a scalar or a one-element array) converted to memory_type.
void read_numeric(hid_t object, const std::string& name, hid_t memory_type, void* data,
                  std::size_t count, const fs::path& file) {
  Handle attr = open_attribute(object, name, file);
  Handle type = checked_handle(H5Aget_type(attr.get()), H5Tclose, file,
                               "get the type of " + attribute_label(name));
  const H5T_class_t type_class = H5Tget_class(type.get());
  if (type_class != H5T_INTEGER && type_class != H5T_FLOAT)
    fail(file, attribute_label(name) + " is not a number");
  Handle space = checked_handle(H5Aget_space(attr.get()), H5Sclose, file,
                                "get the shape of " + attribute_label(name));
  const hssize_t points = H5Sget_simple_extent_npoints(space.get());
  if (points != hssize_t(count))
    fail(file, attribute_label(name) + " holds " + std::to_string(points) + " values, expected " +
                   std::to_string(count));
  check(H5Aread(attr.get(), memory_type, data), file, "read " + attribute_label(name));
}

}  // namespace

hid_t check(hid_t result, const fs::path& file, const std::string& what) {
  if (result < 0) {
    throw Error(file.string() + ": cannot " + what + take_error_detail());
  }
  return result;
}

Handle checked_handle(hid_t id, Handle::Closer closer, const fs::path& file, const std::string& what) {
  return Handle(check(id, file, what), closer);
}

Handle every_rank_access(const fs::path& path) {
#ifdef DCSGRID_HAVE_MPI
  Handle fapl = checked_handle(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, path, "set up MPI-IO access");
  check(H5Pset_fapl_mpio(fapl.get(), MPI_COMM_WORLD, MPI_INFO_NULL), path, "set up MPI-IO access");
  return fapl;
#else
  throw Error(path.string() + ": cannot be opened by every MPI rank: this build has no MPI");
#endif
}

Handle create_file(const std::filesystem::path& temp, const std::filesystem::path& shown,
                   const std::string& what, bool every_rank) {
  Handle fapl = every_rank ? every_rank_access(shown)
                           : checked_handle(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, shown, what);
  check(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V110, H5F_LIBVER_LATEST), shown, what);
  // The 1.10 format stores object times in group headers unless told not to: the same run a
  // second later would give other bytes (and resume would not reproduce the file).
  Handle fcpl = checked_handle(H5Pcreate(H5P_FILE_CREATE), H5Pclose, shown, what);
  check(H5Pset_obj_track_times(fcpl.get(), false), shown, what);
  return checked_handle(H5Fcreate(temp.c_str(), H5F_ACC_EXCL, fcpl.get(), fapl.get()), H5Fclose, shown, what);
}

herr_t close_temporary_file(Handle& file) {
  int descriptor = -1;
  void* handle = nullptr;
  Handle access(H5Fget_access_plist(file.get()), H5Pclose);
  if (access.get() >= 0 && H5Pget_driver(access.get()) == H5FD_SEC2 &&
      H5Fget_vfd_handle(file.get(), H5P_DEFAULT, &handle) >= 0 && handle)
    descriptor = *static_cast<int*>(handle);
  const herr_t status = file.close();
  // Should the cut fail too, the space comes back when the process ends.
  if (status < 0 && descriptor >= 0) (void)!ftruncate(descriptor, 0);
  return status;
}

void write_attribute(hid_t object, const std::string& name, double value, const fs::path& file) {
  write_numeric(object, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value, 0, file);
}

void write_attribute(hid_t object, const std::string& name, std::int64_t value,
                     const fs::path& file) {
  write_numeric(object, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &value, 0, file);
}

void write_attribute(hid_t object, const std::string& name, std::size_t value,
                     const fs::path& file) {
  write_attribute(object, name, std::int64_t(value), file);
}

void write_attribute(hid_t object, const std::string& name, const std::array<double, 3>& value,
                     const fs::path& file) {
  write_numeric(object, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, value.data(), 3, file);
}

void write_attribute(hid_t object, const std::string& name, const Mat3& value, const fs::path& file) {
  const hsize_t dims[2] = {3, 3};
  Handle space = checked_handle(H5Screate_simple(2, dims, nullptr), H5Sclose, file, "create a dataspace");
  const double rows[9] = {value[0][0], value[0][1], value[0][2], value[1][0], value[1][1],
                          value[1][2], value[2][0], value[2][1], value[2][2]};
  write_numeric(object, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, rows, 9, file, std::move(space));
}

bool has_attribute(hid_t object, const std::string& name, const fs::path& file) {
  const htri_t exists = H5Aexists(object, name.c_str());
  check(exists, file, "look for " + attribute_label(name));
  return exists > 0;
}

void write_attribute(hid_t object, const std::string& name,
                     const std::array<std::int64_t, 3>& value, const fs::path& file) {
  write_numeric(object, name, H5T_STD_I64LE, H5T_NATIVE_INT64, value.data(), 3, file);
}

void write_attribute(hid_t object, const std::string& name, const std::string& value,
                     const fs::path& file) {
  const std::string what = "write " + attribute_label(name);
  Handle type = checked_handle(H5Tcopy(H5T_C_S1), H5Tclose, file, what);
  check(H5Tset_size(type.get(), H5T_VARIABLE), file, what);
  check(H5Tset_cset(type.get(), H5T_CSET_UTF8), file, what);
  Handle space = make_space(0, file);
  Handle attr = checked_handle(
      H5Acreate2(object, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
      file, what);
  const char* text = value.c_str();
  check(H5Awrite(attr.get(), type.get(), &text), file, what);
}

void replace_attribute(hid_t object, const std::string& name, const std::string& value,
                       const fs::path& file) {
  if (has_attribute(object, name, file))
    check(H5Adelete(object, name.c_str()), file, "replace " + attribute_label(name));
  write_attribute(object, name, value, file);
}

void read_attribute(hid_t object, const std::string& name, double& value, const fs::path& file) {
  read_numeric(object, name, H5T_NATIVE_DOUBLE, &value, 1, file);
}

void read_attribute(hid_t object, const std::string& name, std::int64_t& value,
                    const fs::path& file) {
  read_numeric(object, name, H5T_NATIVE_INT64, &value, 1, file);
}

void read_attribute(hid_t object, const std::string& name, std::size_t& value,
                    const fs::path& file) {
  std::int64_t signed_value = 0;
  read_attribute(object, name, signed_value, file);
  if (signed_value < 0) fail(file, attribute_label(name) + " is negative");
  value = std::size_t(signed_value);
}

void read_attribute(hid_t object, const std::string& name, std::array<double, 3>& value,
                    const fs::path& file) {
  read_numeric(object, name, H5T_NATIVE_DOUBLE, value.data(), 3, file);
}

void read_attribute(hid_t object, const std::string& name, std::array<std::int64_t, 3>& value,
                    const fs::path& file) {
  read_numeric(object, name, H5T_NATIVE_INT64, value.data(), 3, file);
}

void read_attribute(hid_t object, const std::string& name, std::string& value,
                    const fs::path& file) {
  const std::string what = "read " + attribute_label(name);
  Handle attr = open_attribute(object, name, file);
  Handle type = checked_handle(H5Aget_type(attr.get()), H5Tclose, file, what);
  if (H5Tget_class(type.get()) != H5T_STRING) fail(file, attribute_label(name) + " is not a string");
  Handle space = checked_handle(H5Aget_space(attr.get()), H5Sclose, file, what);
  if (H5Sget_simple_extent_npoints(space.get()) != 1)
    fail(file, attribute_label(name) + " holds more than one string");

  if (check(H5Tis_variable_str(type.get()), file, what)) {
    value = read_variable_string(attr.get(), file);
    return;
  }
  // Fixed length: read the bytes as stored and drop the padding.
  const std::size_t size = H5Tget_size(type.get());
  if (size == 0 || size > kMaxFixedString)
    fail(file, attribute_label(name) + " claims a string of " + std::to_string(size) + " bytes");
  const H5T_str_t padding = H5Tget_strpad(type.get());
  Handle memory_type = checked_handle(H5Tcopy(H5T_C_S1), H5Tclose, file, what);
  check(H5Tset_cset(memory_type.get(), H5Tget_cset(type.get())), file, what);
  check(H5Tset_size(memory_type.get(), size), file, what);
  check(H5Tset_strpad(memory_type.get(), padding), file, what);
  std::string buffer(size, '\0');
  check(H5Aread(attr.get(), memory_type.get(), buffer.data()), file, what);
  if (padding == H5T_STR_SPACEPAD)
    buffer.erase(buffer.find_last_not_of(' ') + 1);
  else
    buffer.erase(std::min(buffer.find('\0'), buffer.size()));
  value = buffer;
}

std::vector<std::string> attribute_names(hid_t object, const fs::path& file) {
  std::vector<std::string> names;
  auto collect = [](hid_t, const char* name, const H5A_info_t*, void* out) -> herr_t {
    static_cast<std::vector<std::string>*>(out)->emplace_back(name);
    return 0;
  };
  // HDF5 1.10 crashes when an attribute it cannot decode turns up while it builds the table it
  // iterates over; looking for a name that no attribute has decodes every one of them first and
  // fails cleanly on a damaged one.
  check(H5Aexists(object, "\x01 no such attribute"), file, "read the attributes");
  check(H5Aiterate2(object, H5_INDEX_NAME, H5_ITER_INC, nullptr, collect, &names), file,
        "list the attributes");
  return names;
}

}  // namespace dcsgrid::io::hdf5
