#include "io/hdf5/vlen_string.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <vector>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/hdf5/util.hpp"

namespace dcsgrid::io::hdf5 {

namespace fs = std::filesystem;

namespace {

// The stored form of one variable-length element (file format, 8-byte addresses): its length,
// then the global heap ID (collection address, object index).
constexpr std::size_t kReferenceBytes = 4 + 8 + 4;
// Collection header: "GCOL", version 1, 3 reserved, collection size (8); object header: index (2),
// reference count (2), reserved (4), size (8); object data padded to 8 bytes.
constexpr std::size_t kCollectionHeader = 16, kObjectHeader = 16;
// Our longest strings are JSON reports of a few kB; a larger claim is damage, not data.
constexpr std::uint64_t kMaxCollectionBytes = std::uint64_t(64) << 20;

template <typename T>
T little_endian(const unsigned char* p) {
  T value = 0;
  for (std::size_t i = sizeof(T); i-- > 0;) value = T(value << 8) | T(p[i]);
  return value;
}

[[noreturn]] void damaged(const fs::path& file, const std::string& problem) {
  throw InputError(file.string(), 0, "damaged string attribute: " + problem);
}

// A conversion HDF5 applies from any variable-length string to kRawTag: a plain copy of the
// stored references (HDF5 passes them in file form), so nothing follows them.
constexpr const char* kRawTag = "dcsgrid stored variable-length string reference";

herr_t copy_references(hid_t source, hid_t destination, H5T_cdata_t* cdata, std::size_t, std::size_t,
                       std::size_t, void*, void*, hid_t) {
  if (cdata->command == H5T_CONV_INIT) {
    char* tag = H5Tget_class(destination) == H5T_OPAQUE ? H5Tget_tag(destination) : nullptr;
    const bool ours = tag && std::strcmp(tag, kRawTag) == 0 && H5Tis_variable_str(source) > 0 &&
                      H5Tget_size(source) == kReferenceBytes;
    H5free_memory(tag);
    cdata->need_bkg = H5T_BKG_NO;
    return ours ? 0 : -1;
  }
  return 0;  // H5T_CONV_CONV: the buffer already holds the references; H5T_CONV_FREE: nothing held
}

// The opaque memory type the references are read as (registered once with its conversion).
hid_t reference_type() {
  static const hid_t type = [] {
    const hid_t raw = H5Tcreate(H5T_OPAQUE, kReferenceBytes);
    H5Tset_tag(raw, kRawTag);
    const hid_t variable = H5Tcopy(H5T_C_S1);
    H5Tset_size(variable, H5T_VARIABLE);
    H5Tregister(H5T_PERS_SOFT, "dcsgrid: stored string references", variable, raw, copy_references);
    H5Tclose(variable);
    return raw;
  }();
  return type;
}

// The data of object `index` in the global heap collection at `address` of the file on disk.
std::string heap_object(const fs::path& on_disk, std::uint64_t address, std::uint32_t index,
                        const fs::path& file) {
  std::ifstream in(on_disk, std::ios::binary);
  in.seekg(0, std::ios::end);
  const std::uint64_t file_size = std::uint64_t(in.tellg());
  if (!in || address > file_size || file_size - address < kCollectionHeader)
    damaged(file, "heap address " + std::to_string(address) + " is outside the file");
  unsigned char header[kCollectionHeader];
  in.seekg(std::streamoff(address));
  in.read(reinterpret_cast<char*>(header), kCollectionHeader);
  if (!in || std::memcmp(header, "GCOL", 4) != 0 || header[4] != 1)
    damaged(file, "no heap collection at byte " + std::to_string(address));
  const std::uint64_t size = little_endian<std::uint64_t>(header + 8);
  if (size < kCollectionHeader || size > kMaxCollectionBytes || size > file_size - address)
    damaged(file, "heap collection at byte " + std::to_string(address) + " claims " +
                      std::to_string(size) + " bytes");
  std::vector<unsigned char> heap(size);
  in.seekg(std::streamoff(address));
  in.read(reinterpret_cast<char*>(heap.data()), std::streamsize(size));
  if (!in) damaged(file, "cannot read the heap collection at byte " + std::to_string(address));
  for (std::size_t at = kCollectionHeader; size - at >= kObjectHeader;) {
    const std::uint16_t object = little_endian<std::uint16_t>(&heap[at]);
    const std::uint64_t object_size = little_endian<std::uint64_t>(&heap[at + 8]);
    if (object == 0) break;  // free space: the rest of the collection
    const std::uint64_t room = size - at - kObjectHeader;
    if (object_size > room) break;
    if (object == index) return std::string(reinterpret_cast<const char*>(&heap[at + kObjectHeader]),
                                            std::size_t(object_size));
    at += kObjectHeader + std::size_t(std::min<std::uint64_t>(room, (object_size + 7) / 8 * 8));
  }
  damaged(file, "no intact object " + std::to_string(index) + " in the heap collection at byte " +
                    std::to_string(address));
}

}  // namespace

std::string read_variable_string(hid_t attribute, const fs::path& file) {
  const std::string what = "read a string attribute";
  unsigned char stored[kReferenceBytes];
  check(H5Aread(attribute, reference_type(), stored), file, what);
  const std::uint32_t length = little_endian<std::uint32_t>(stored);
  const std::uint64_t address = little_endian<std::uint64_t>(stored + 4);
  const std::uint32_t index = little_endian<std::uint32_t>(stored + 12);
  if (length == 0) return "";

  const ssize_t name_length = H5Fget_name(attribute, nullptr, 0);
  std::string on_disk(std::size_t(std::max<ssize_t>(name_length, 0)), '\0');
  if (name_length <= 0 || H5Fget_name(attribute, on_disk.data(), on_disk.size() + 1) < 0)
    check(-1, file, what);
  const std::string object = heap_object(on_disk, address, index, file);
  if (length > object.size())
    damaged(file, "string of " + std::to_string(length) + " bytes in a heap object of " +
                      std::to_string(object.size()));
  std::string text = object.substr(0, length);
  return text.substr(0, text.find('\0'));
}

}  // namespace dcsgrid::io::hdf5
