// The frame index cache: a binary file of native-order integers (a cache, not an interchange
// format; the byte-order mark makes a foreign one read as malformed, so it is rebuilt):
//   "DCSGFIDX", u32 0x01020304, u32 version, u64 file count, then per file
//   u64 path length, path bytes, u64 size, i64 mtime (ns), u64 hash, u64 frames, u64 offsets[].
#include "dcsgrid/io/trajectory/frame_index_cache.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/files/atomic_file.hpp"

namespace dcsgrid::io {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'D', 'C', 'S', 'G', 'F', 'I', 'D', 'X'};
constexpr std::uint32_t kByteOrderMark = 0x01020304;
constexpr std::uint32_t kVersion = 1;
constexpr std::size_t kHashedBytes = 1024;  // at each end of the file
constexpr std::uint64_t kMaxPathBytes = 1 << 16;

// What must be unchanged for a file's cached index to be used.
struct FileStamp {
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::uint64_t hash = 0;  // FNV-1a over the first and the last KiB
  bool operator==(const FileStamp&) const = default;
};

struct CachedIndex {
  std::string path;  // absolute, normalised
  FileStamp stamp;
  std::vector<std::uint64_t> offsets;
};

std::uint64_t fnv1a(const char* p, std::size_t n, std::uint64_t h) {
  for (std::size_t i = 0; i < n; ++i) h = (h ^ static_cast<unsigned char>(p[i])) * 1099511628211ull;
  return h;
}

FileStamp stamp_of(const fs::path& path) {
  FileStamp s;
  std::error_code ec;
  s.size = fs::file_size(path, ec);
  const auto mtime = fs::last_write_time(path, ec);
  if (ec) throw InputError(path.string(), 0, "cannot read its size and time: " + ec.message());
  s.mtime_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(mtime.time_since_epoch()).count();
  std::ifstream in(path, std::ios::binary);
  const std::size_t n = std::size_t(std::min<std::uint64_t>(s.size, kHashedBytes));
  std::vector<char> bytes(n);
  std::uint64_t h = 14695981039346656037ull;
  for (const std::uint64_t at : {std::uint64_t(0), s.size - n}) {
    in.seekg(std::streamoff(at));
    in.read(bytes.data(), std::streamsize(n));
    h = fnv1a(bytes.data(), n, h);
  }
  if (!in) throw InputError(path.string(), 0, "cannot read its first and last KiB");
  s.hash = h;
  return s;
}

template <class T>
bool get(std::istream& in, T& value) {
  return bool(in.read(reinterpret_cast<char*>(&value), sizeof(T)));
}
template <class T>
void put(std::ostream& out, const T& value) {
  out.write(reinterpret_cast<const char*>(&value), sizeof(T));
}

// The cache's entries; empty when there is none. Throws Error for a malformed one.
std::vector<CachedIndex> read_cache(const fs::path& cache) {
  std::error_code ec;
  if (!fs::exists(cache, ec)) return {};
  const std::uint64_t cache_size = fs::file_size(cache, ec);
  std::ifstream in(cache, std::ios::binary);
  char magic[8];
  std::uint32_t mark = 0, version = 0;
  std::uint64_t files = 0;
  if (!in.read(magic, 8) || std::memcmp(magic, kMagic, 8) != 0 || !get(in, mark) ||
      mark != kByteOrderMark || !get(in, version) || version != kVersion || !get(in, files))
    throw Error("not a frame index cache of this version");
  std::vector<CachedIndex> entries;
  for (std::uint64_t k = 0; k < files; ++k) {
    CachedIndex e;
    std::uint64_t length = 0, frames = 0;
    if (!get(in, length) || length > kMaxPathBytes) throw Error("bad path length");
    e.path.resize(std::size_t(length));
    if (!in.read(e.path.data(), std::streamsize(length)) || !get(in, e.stamp.size) ||
        !get(in, e.stamp.mtime_ns) || !get(in, e.stamp.hash) || !get(in, frames))
      throw Error("ends inside an entry");
    if (frames > cache_size / sizeof(std::uint64_t)) throw Error("frame count larger than the file");
    e.offsets.resize(std::size_t(frames));
    if (!in.read(reinterpret_cast<char*>(e.offsets.data()), std::streamsize(frames * 8)))
      throw Error("ends inside an index");
    entries.push_back(std::move(e));
  }
  return entries;
}

void write_cache(const fs::path& cache, const std::vector<CachedIndex>& entries) {
  AtomicFile file(cache);
  {
    std::ofstream out(file.temp_path(), std::ios::binary);
    out.write(kMagic, 8);
    put(out, kByteOrderMark);
    put(out, kVersion);
    put(out, std::uint64_t(entries.size()));
    for (const auto& e : entries) {
      put(out, std::uint64_t(e.path.size()));
      out.write(e.path.data(), std::streamsize(e.path.size()));
      put(out, e.stamp.size);
      put(out, e.stamp.mtime_ns);
      put(out, e.stamp.hash);
      put(out, std::uint64_t(e.offsets.size()));
      out.write(reinterpret_cast<const char*>(e.offsets.data()), std::streamsize(8 * e.offsets.size()));
    }
    out.close();
    if (!out) throw Error(cache.string() + ": cannot write the frame index cache");
  }
  file.commit();
}

std::vector<CachedIndex> read_cache_or_nothing(const fs::path& cache) {
  try {
    return read_cache(cache);
  } catch (const std::exception& e) {
    spdlog::warn("{}: {}; the frame indexes are rebuilt", cache.string(), e.what());
    return {};
  }
}

}  // namespace

FrameIndexUse apply_frame_index_cache(TrajectoryReader& reader, const fs::path& cache) {
  FrameIndexUse use;
  IndexedTrajectory* indexed = as_indexed(reader);
  if (!indexed) return use;
  const std::vector<std::string> files = reader.files();
  std::vector<CachedIndex> entries = read_cache_or_nothing(cache);
  std::vector<CachedIndex> now;
  for (std::size_t k = 0; k < files.size(); ++k) {
    if (!indexed->needs_index(k)) continue;
    CachedIndex entry{fs::absolute(files[k]).lexically_normal().string(), stamp_of(files[k]), {}};
    const auto hit = std::find_if(entries.begin(), entries.end(), [&](const CachedIndex& e) {
      return e.path == entry.path && e.stamp == entry.stamp;
    });
    bool from_cache = false;
    if (hit != entries.end()) {
      try {
        indexed->set_frame_offsets(hit->offsets, k);
        entry.offsets = std::move(hit->offsets);
        from_cache = true;
      } catch (const InputError& e) {
        spdlog::warn("{} (the index is rebuilt)", e.what());
      }
    }
    if (!from_cache) entry.offsets = indexed->frame_offsets(k);
    ++(from_cache ? use.cached : use.built);
    now.push_back(std::move(entry));
  }
  if (use.built == 0) return use;
  try {
    write_cache(cache, now);
  } catch (const std::exception& e) {
    spdlog::warn("{} (the frame indexes are not kept for the next run)", e.what());
  }
  return use;
}

}  // namespace dcsgrid::io
