// Reading variable-length string attributes without trusting the file. HDF5 1.10 follows a stored
// string's global heap reference unchecked: a flipped byte there made it copy from a wild pointer
// (segfault) or loop forever over a collection whose object sizes were zeroed. Here HDF5 only
// hands over the stored reference (length, heap collection address, object index); the collection
// is read from the file and walked with every size checked against the file and its own length.
#pragma once
#include <hdf5.h>

#include <filesystem>
#include <string>

namespace dcsgrid::io::hdf5 {

// The string held by a scalar variable-length string attribute. Throws InputError naming `file`
// (for messages) when the reference or the heap collection is damaged. Caller holds
// library_mutex().
std::string read_variable_string(hid_t attribute, const std::filesystem::path& file);

}  // namespace dcsgrid::io::hdf5
