// Map writers and readers: HDF5 (checked with the raw HDF5 C API), XDMF, OpenDX, CCP4 (checked with
// gemmi's reader), format choice by extension, SHA-256.
#include <hdf5.h>

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>
#include <sstream>

#include <gemmi/ccp4.hpp>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/hdf5/maps.hpp"
#include "dcsgrid/io/maps/io.hpp"
#include "dcsgrid/io/maps/reader.hpp"
#include "dcsgrid/io/files/sha256.hpp"
#include "helpers.hpp"

namespace dcsgrid::io {
namespace {

namespace fs = std::filesystem;

// Asymmetric on purpose: a transposed or mis-strided layout cannot pass.
GridSpec small_grid() {
  GridSpec g;
  g.dims = {5, 4, 7};
  g.origin = {-3.5, 2.25, 10.0};  // on the lattice of its spacing: -7, 9, 10 steps
  g.spacing = {0.5, 0.25, 1.0};
  return g;
}

// A distinct value for every point, negative ones and fractions that are not short decimals.
float value_at(std::int64_t i, std::int64_t j, std::int64_t k) {
  return float(100 * i + 10 * j + k) / 3.0f - 7.0f;
}

std::vector<float> fill(const GridSpec& g) {
  std::vector<float> data(g.point_count());
  for (std::int64_t k = 0; k < g.nz(); ++k)
    for (std::int64_t j = 0; j < g.ny(); ++j)
      for (std::int64_t i = 0; i < g.nx(); ++i) data[g.index(i, j, k)] = value_at(i, j, k);
  return data;
}

MapMetadata sample_meta() {
  MapMetadata m;
  m.units = "kcal/mol/e";
  m.temperature = 310.5;
  m.method = "cutoff";
  m.parameters = {{"cutoff", "12"}, {"cutoff_form", "shifted"}};
  m.dielectric = 4.25;
  m.dielectric_model = "distance-dependent 4r";
  m.ionic_strength = 0.15;
  m.min_distance = 0.75;
  m.atom_count = 1234;
  m.total_charge = -3.5;
  m.input_file = "data/protein.pqr";
  m.input_sha256 = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
  m.program_version = "0.1.0";
  m.command_line = "dcsgrid protein.pqr -o pot.h5 --spacing 0.5  # 0.5 Å";
  return m;
}

void expect_same_meta(const MapMetadata& a, const MapMetadata& b) {
  EXPECT_EQ(a.units, b.units);
  EXPECT_EQ(a.temperature, b.temperature);
  EXPECT_EQ(a.method, b.method);
  EXPECT_EQ(a.parameters, b.parameters);
  EXPECT_EQ(a.dielectric, b.dielectric);
  EXPECT_EQ(a.dielectric_model, b.dielectric_model);
  EXPECT_EQ(a.ionic_strength, b.ionic_strength);
  EXPECT_EQ(a.min_distance, b.min_distance);
  EXPECT_EQ(a.atom_count, b.atom_count);
  EXPECT_EQ(a.total_charge, b.total_charge);
  EXPECT_EQ(a.input_file, b.input_file);
  EXPECT_EQ(a.input_sha256, b.input_sha256);
  EXPECT_EQ(a.program_version, b.program_version);
  EXPECT_EQ(a.command_line, b.command_line);
}

std::vector<std::string> folder_entries(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  return names;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// --- Raw HDF5 C API access, independent of the library's hdf5_util --------------------------------

struct RawAttribute {
  hid_t id;
  explicit RawAttribute(hid_t object, const char* name) : id(H5Aopen(object, name, H5P_DEFAULT)) {}
  ~RawAttribute() {
    if (id >= 0) H5Aclose(id);
  }
};

std::vector<double> raw_doubles(hid_t object, const char* name) {
  RawAttribute a(object, name);
  if (a.id < 0) ADD_FAILURE() << "no attribute " << name;
  if (a.id < 0) return {};
  const hid_t space = H5Aget_space(a.id);
  std::vector<double> values(std::size_t(H5Sget_simple_extent_npoints(space)));
  H5Sclose(space);
  EXPECT_GE(H5Aread(a.id, H5T_NATIVE_DOUBLE, values.data()), 0) << name;
  return values;
}

std::vector<std::int64_t> raw_int64s(hid_t object, const char* name) {
  RawAttribute a(object, name);
  if (a.id < 0) ADD_FAILURE() << "no attribute " << name;
  if (a.id < 0) return {};
  const hid_t type = H5Aget_type(a.id);
  EXPECT_EQ(H5Tget_class(type), H5T_INTEGER) << name;
  H5Tclose(type);
  const hid_t space = H5Aget_space(a.id);
  std::vector<std::int64_t> values(std::size_t(H5Sget_simple_extent_npoints(space)));
  H5Sclose(space);
  EXPECT_GE(H5Aread(a.id, H5T_NATIVE_INT64, values.data()), 0) << name;
  return values;
}

// A variable-length UTF-8 string attribute, which h5py returns as str.
std::string raw_string(hid_t object, const char* name) {
  RawAttribute a(object, name);
  if (a.id < 0) ADD_FAILURE() << "no attribute " << name;
  if (a.id < 0) return {};
  const hid_t type = H5Aget_type(a.id);
  EXPECT_EQ(H5Tget_class(type), H5T_STRING) << name;
  EXPECT_GT(H5Tis_variable_str(type), 0) << name;
  EXPECT_EQ(H5Tget_cset(type), H5T_CSET_UTF8) << name;
  char* text = nullptr;
  EXPECT_GE(H5Aread(a.id, type, &text), 0) << name;
  std::string value = text ? text : "";
  const hid_t space = H5Aget_space(a.id);
  H5Dvlen_reclaim(type, space, H5P_DEFAULT, &text);
  H5Sclose(space);
  H5Tclose(type);
  return value;
}

struct RawDataset {
  std::vector<hsize_t> shape;
  std::vector<float> values;  // C order of shape
  std::vector<hsize_t> chunk;
  std::vector<H5Z_filter_t> filters;
};

// Opens file/potential with the C API, checks every attribute against grid and meta, returns the data.
RawDataset check_raw_hdf5(const fs::path& file, const GridSpec& grid, const MapMetadata& meta) {
  RawDataset out;
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) ADD_FAILURE() << "cannot open " << file;
  if (f < 0) return out;
  const hid_t ds = H5Dopen2(f, "/potential", H5P_DEFAULT);
  EXPECT_GE(ds, 0);

  const hid_t type = H5Dget_type(ds);
  EXPECT_EQ(H5Tget_class(type), H5T_FLOAT);
  EXPECT_EQ(H5Tget_size(type), 4u);
  H5Tclose(type);
  const hid_t space = H5Dget_space(ds);
  out.shape.resize(std::size_t(H5Sget_simple_extent_ndims(space)));
  H5Sget_simple_extent_dims(space, out.shape.data(), nullptr);
  H5Sclose(space);
  out.values.resize(grid.point_count());
  EXPECT_GE(H5Dread(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.values.data()), 0);

  const hid_t plist = H5Dget_create_plist(ds);
  EXPECT_EQ(H5Pget_layout(plist), H5D_CHUNKED);
  out.chunk.resize(3);
  EXPECT_EQ(H5Pget_chunk(plist, 3, out.chunk.data()), 3);
  for (int n = 0; n < H5Pget_nfilters(plist); ++n) {
    unsigned flags = 0, config = 0;
    std::size_t nelmts = 0;
    out.filters.push_back(H5Pget_filter2(plist, unsigned(n), &flags, &nelmts, nullptr, 0, nullptr, &config));
  }
  H5Pclose(plist);

  EXPECT_EQ(raw_doubles(ds, "origin"), std::vector<double>(grid.origin.begin(), grid.origin.end()));
  EXPECT_EQ(raw_doubles(ds, "spacing"), std::vector<double>(grid.spacing.begin(), grid.spacing.end()));
  EXPECT_EQ(raw_int64s(ds, "dims"), std::vector<std::int64_t>(grid.dims.begin(), grid.dims.end()));
  EXPECT_EQ(raw_string(ds, "axis_order"), "x fastest; dataset [nz][ny][nx]");
  EXPECT_EQ(raw_string(ds, "units"), meta.units);
  EXPECT_EQ(raw_doubles(ds, "temperature"), std::vector<double>{meta.temperature});
  EXPECT_EQ(raw_string(ds, "method"), meta.method);
  for (const auto& [name, value] : meta.parameters)
    EXPECT_EQ(raw_string(ds, ("parameter:" + name).c_str()), value);
  EXPECT_EQ(raw_doubles(ds, "dielectric"), std::vector<double>{meta.dielectric});
  EXPECT_EQ(raw_string(ds, "dielectric_model"), meta.dielectric_model);
  EXPECT_EQ(raw_doubles(ds, "ionic_strength"), std::vector<double>{meta.ionic_strength});
  EXPECT_EQ(raw_doubles(ds, "min_distance"), std::vector<double>{meta.min_distance});
  EXPECT_EQ(raw_int64s(ds, "atom_count"), std::vector<std::int64_t>{std::int64_t(meta.atom_count)});
  EXPECT_EQ(raw_doubles(ds, "total_charge"), std::vector<double>{meta.total_charge});
  EXPECT_EQ(raw_string(ds, "input_file"), meta.input_file);
  EXPECT_EQ(raw_string(ds, "input_sha256"), meta.input_sha256);
  EXPECT_EQ(raw_string(ds, "program_version"), meta.program_version);
  EXPECT_EQ(raw_string(ds, "command_line"), meta.command_line);
  H5Dclose(ds);
  H5Fclose(f);
  return out;
}

// Dataset [k][j][i] must hold value_at(i, j, k).
void expect_values_by_position(const RawDataset& raw, const GridSpec& g) {
  ASSERT_EQ(raw.shape, (std::vector<hsize_t>{hsize_t(g.nz()), hsize_t(g.ny()), hsize_t(g.nx())}));
  for (std::int64_t k = 0; k < g.nz(); ++k)
    for (std::int64_t j = 0; j < g.ny(); ++j)
      for (std::int64_t i = 0; i < g.nx(); ++i)
        ASSERT_EQ(raw.values[std::size_t((k * g.ny() + j) * g.nx() + i)], value_at(i, j, k))
            << i << "," << j << "," << k;
}

// --- HDF5 -----------------------------------------------------------------------------------------

TEST(Hdf5Map, SlabsOutOfOrderRoundTripWithAllAttributes) {
  const fs::path dir = test::temp_dir("maps_h5");
  const GridSpec g = small_grid();
  const std::vector<float> data = fill(g);
  const MapMetadata meta = sample_meta();
  const fs::path file = dir / "pot.h5";
  {
    Hdf5MapWriter writer(file, g, meta);
    const std::size_t plane = g.plane_size();
    writer.write_planes(5, 2, data.data() + 5 * plane);
    writer.write_planes(0, 3, data.data());
    writer.write_planes(3, 2, data.data() + 3 * plane);
    EXPECT_FALSE(fs::exists(file)) << "the target must appear only at finish()";
    writer.finish();
  }
  auto entries = folder_entries(dir);
  std::sort(entries.begin(), entries.end());
  EXPECT_EQ(entries, (std::vector<std::string>{"pot.h5", "pot.xmf"}));

  const RawDataset raw = check_raw_hdf5(file, g, meta);
  expect_values_by_position(raw, g);
  EXPECT_TRUE(raw.filters.empty());
  // Whole x rows, whole planes (this grid is far below 1 MiB a chunk).
  EXPECT_EQ(raw.chunk, (std::vector<hsize_t>{7, 4, 5}));

  const MapFile back = read_hdf5(file);
  EXPECT_TRUE(back.grid.same_as(g, 0.0));
  EXPECT_EQ(back.data, data);
  expect_same_meta(back.meta, meta);
  fs::remove_all(dir);
}

TEST(Hdf5Map, CompressedRoundTripIsSmallerAndChunkedByRows) {
  const fs::path dir = test::temp_dir("maps_h5z");
  GridSpec g;
  g.dims = {300, 220, 9};  // 258 KiB a plane: chunks of 3 planes
  g.spacing = {0.5, 0.5, 0.5};
  std::vector<float> data(g.point_count());
  for (std::size_t n = 0; n < data.size(); ++n) {
    const auto [i, j, k] = g.ijk(n);
    data[n] = float(std::sin(0.05 * i) * std::cos(0.03 * j) + 0.1 * k);  // smooth, compressible
  }
  const MapMetadata meta = sample_meta();
  WriteOptions zip;
  zip.compress = true;
  write_hdf5(dir / "z.h5", g, data.data(), meta, zip);
  write_hdf5(dir / "plain.h5", g, data.data(), meta);

  const RawDataset raw = check_raw_hdf5(dir / "z.h5", g, meta);
  EXPECT_EQ(raw.values, data);
  EXPECT_EQ(raw.filters, (std::vector<H5Z_filter_t>{H5Z_FILTER_SHUFFLE, H5Z_FILTER_DEFLATE}));
  EXPECT_EQ(raw.chunk, (std::vector<hsize_t>{3, 220, 300}));
  EXPECT_LT(fs::file_size(dir / "z.h5"), fs::file_size(dir / "plain.h5") * 3 / 4);
  EXPECT_EQ(read_hdf5(dir / "z.h5").data, data);
  EXPECT_EQ(read_hdf5(dir / "plain.h5").data, data);
  fs::remove_all(dir);
}

TEST(Hdf5Map, LargePlanesAreChunkedByRowsUnderOneMebibyte) {
  const fs::path dir = test::temp_dir("maps_h5rows");
  GridSpec g;
  g.dims = {1024, 600, 2};  // 2.4 MiB a plane: 600 rows in 3 even chunks of 200 rows of 4 KiB
  std::vector<float> data(g.point_count());
  for (std::size_t n = 0; n < data.size(); ++n) data[n] = float(n % 9973);
  const MapMetadata meta = sample_meta();
  write_hdf5(dir / "rows.h5", g, data.data(), meta);
  const RawDataset raw = check_raw_hdf5(dir / "rows.h5", g, meta);
  EXPECT_EQ(raw.chunk, (std::vector<hsize_t>{1, 200, 1024}));
  EXPECT_EQ(raw.values, data);
  fs::remove_all(dir);
}

// hdf5::write_block: chunks a block covers whole are written directly, and so is a dataset's
// partial edge chunk that a block holds all of (zero-padded: "planes" from plane 9, "rows",
// "frames"), the rest (block ends, an edge chunk split between blocks: "split edge") through
// H5Dwrite and the chunk cache; blocks out of order, split chunks completed by a later block,
// chunks of planes, of rows and of 4-D frames, and a filtered dataset (no direct writes) all read
// back as written, through HDF5's own reader.
TEST(Hdf5Block, WholeChunksDirectAndTheRestThroughTheCacheReadBackAsWritten) {
  namespace h5 = hdf5;
  const fs::path dir = test::temp_dir("maps_h5block");
  const fs::path path = dir / "blocks.h5";
  struct Case {
    const char* name;
    std::vector<hsize_t> dims, chunk;
    bool deflate;
    std::vector<std::pair<hsize_t, hsize_t>> blocks;  // [first, end) along the first dimension
  };
  const std::vector<Case> cases = {
      {"planes", {10, 6, 5}, {3, 6, 5}, false, {{5, 10}, {0, 4}, {4, 5}}},
      {"rows", {3, 7, 4}, {1, 3, 4}, false, {{2, 3}, {0, 2}}},
      {"frames", {4, 5, 6, 7}, {1, 2, 6, 7}, false, {{3, 4}, {0, 1}, {1, 3}}},
      {"deflate", {10, 6, 5}, {3, 6, 5}, true, {{0, 4}, {4, 10}}},
      {"split edge", {11, 2, 3}, {4, 2, 3}, false, {{0, 9}, {9, 11}}},
  };
  {
    h5::Handle file = h5::create_file(path, path, "create");
    for (const Case& c : cases) {
      SCOPED_TRACE(c.name);
      h5::Handle space(H5Screate_simple(int(c.dims.size()), c.dims.data(), nullptr), H5Sclose);
      h5::Handle create(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
      ASSERT_GE(H5Pset_chunk(create.get(), int(c.chunk.size()), c.chunk.data()), 0);
      if (c.deflate) ASSERT_GE(H5Pset_deflate(create.get(), 1), 0);
      h5::Handle dataset(H5Dcreate2(file.get(), c.name, H5T_IEEE_F32LE, space.get(), H5P_DEFAULT,
                                    create.get(), H5P_DEFAULT),
                         H5Dclose);
      ASSERT_GE(dataset.get(), 0);
      hsize_t inner = 1;
      for (std::size_t d = 1; d < c.dims.size(); ++d) inner *= c.dims[d];
      for (const auto& [first, end] : c.blocks) {
        std::vector<float> values((end - first) * inner);
        for (std::size_t n = 0; n < values.size(); ++n) values[n] = float(first * inner + n);
        std::vector<hsize_t> start(c.dims.size(), 0), count(c.dims);
        start[0] = first;
        count[0] = end - first;
        h5::write_block(dataset.get(), start, count, values.data(), path, "write a block", false);
      }
    }
  }
  h5::Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  ASSERT_GE(file.get(), 0);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    h5::Handle dataset(H5Dopen2(file.get(), c.name, H5P_DEFAULT), H5Dclose);
    hsize_t n = 1;
    for (hsize_t d : c.dims) n *= d;
    std::vector<float> back(n, -1.0f);
    ASSERT_GE(H5Dread(dataset.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back.data()), 0);
    for (std::size_t i = 0; i < back.size(); ++i) ASSERT_EQ(back[i], float(i)) << "element " << i;
  }
  fs::remove_all(dir);
}

// --compress's chunks (shuffle, then deflate) are encoded by write_block on every core: each
// stored chunk must be the very bytes HDF5's own filter pipeline stores for it (zlib is
// deterministic), and read back through that pipeline as written, for smooth and random values,
// two levels, and a partial edge chunk.
TEST(Hdf5Block, ChunksEncodedInParallelAreTheBytesHdf5Stores) {
  namespace h5 = hdf5;
  const fs::path dir = test::temp_dir("maps_h5encode");
  const fs::path path = dir / "encoded.h5";
  const std::vector<hsize_t> dims{11, 24, 17}, chunk{3, 24, 17};
  const std::size_t n = dims[0] * dims[1] * dims[2];
  std::mt19937 rng(5);
  std::normal_distribution<float> noise;
  std::vector<float> smooth(n), random(n);
  for (std::size_t i = 0; i < n; ++i) {
    smooth[i] = std::sin(0.01f * float(i)) / (1.0f + 0.001f * float(i));
    random[i] = noise(rng);
  }
  h5::Handle file = h5::create_file(path, path, "create");
  for (const int level : {1, 6})
    for (const std::vector<float>* values : {&smooth, &random}) {
      SCOPED_TRACE("level " + std::to_string(level) + (values == &smooth ? ", smooth" : ", random"));
      h5::Handle space(H5Screate_simple(3, dims.data(), nullptr), H5Sclose);
      h5::Handle create(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
      ASSERT_GE(H5Pset_chunk(create.get(), 3, chunk.data()), 0);
      ASSERT_GE(H5Pset_shuffle(create.get()), 0);
      ASSERT_GE(H5Pset_deflate(create.get(), unsigned(level)), 0);
      std::array<h5::Handle, 2> sets;  // written by write_block, and by HDF5's pipeline
      for (int k = 0; k < 2; ++k) {
        const std::string name = "d" + std::to_string(level) + std::to_string(values == &smooth) + std::to_string(k);
        sets[k] = h5::Handle(H5Dcreate2(file.get(), name.c_str(), H5T_IEEE_F32LE, space.get(),
                                        H5P_DEFAULT, create.get(), H5P_DEFAULT),
                             H5Dclose);
        ASSERT_GE(sets[k].get(), 0);
      }
      h5::write_block(sets[0].get(), {0, 0, 0}, dims, values->data(), path, "write", false);
      ASSERT_GE(H5Dwrite(sets[1].get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values->data()), 0);
      ASSERT_GE(H5Fflush(file.get(), H5F_SCOPE_LOCAL), 0);
      for (hsize_t z = 0; z < dims[0]; z += chunk[0]) {
        const std::array<hsize_t, 3> at{z, 0, 0};
        std::array<std::vector<unsigned char>, 2> stored;
        for (int k = 0; k < 2; ++k) {
          hsize_t size = 0;
          ASSERT_GE(H5Dget_chunk_storage_size(sets[k].get(), at.data(), &size), 0);
          stored[k].resize(size);
          std::uint32_t mask = 1;
          ASSERT_GE(H5Dread_chunk(sets[k].get(), H5P_DEFAULT, at.data(), &mask, stored[k].data()), 0);
          EXPECT_EQ(mask, 0u) << "chunk at " << z << ": a filter was skipped";
        }
        EXPECT_EQ(stored[0], stored[1]) << "chunk at plane " << z;
      }
      std::vector<float> back(n, -1.0f);
      ASSERT_GE(H5Dread(sets[0].get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back.data()), 0);
      EXPECT_EQ(back, *values);
    }
  file = {};
  fs::remove_all(dir);
}

TEST(Hdf5Map, NothingLeftOnDiskWithoutFinish) {
  const fs::path dir = test::temp_dir("maps_h5abort");
  const GridSpec g = small_grid();
  const std::vector<float> data = fill(g);
  // Abandoned after some planes.
  {
    Hdf5MapWriter writer(dir / "a.h5", g, sample_meta());
    writer.write_planes(0, 3, data.data());
  }
  EXPECT_TRUE(folder_entries(dir).empty());
  // An exception in the middle of the writing (the way a failing computation unwinds).
  try {
    Hdf5MapWriter writer(dir / "b.h5", g, sample_meta());
    writer.write_planes(0, 2, data.data());
    writer.write_planes(6, 2, data.data());  // past the last plane
    FAIL() << "planes outside the grid were accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("b.h5"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(folder_entries(dir).empty());
  // finish() with a plane missing refuses, and leaves nothing either.
  try {
    Hdf5MapWriter writer(dir / "c.h5", g, sample_meta());
    writer.write_planes(0, 3, data.data());
    writer.write_planes(4, 3, data.data() + 4 * g.plane_size());
    writer.finish();
    FAIL() << "finish() accepted a map with plane 3 missing";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("plane 3"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(folder_entries(dir).empty());
  fs::remove_all(dir);
}

TEST(Hdf5Map, ReplacesAnExistingFileAndNamesTheFileOnErrors) {
  const fs::path dir = test::temp_dir("maps_h5err");
  const GridSpec g = small_grid();
  std::vector<float> data = fill(g);
  write_hdf5(dir / "p.h5", g, data.data(), sample_meta());
  data[7] = 42.0f;
  write_hdf5(dir / "p.h5", g, data.data(), sample_meta());
  EXPECT_EQ(read_hdf5(dir / "p.h5").data[7], 42.0f);
  EXPECT_EQ(folder_entries(dir).size(), 2u);  // p.h5, p.xmf: no temporaries

  try {
    write_hdf5(dir / "missing" / "q.h5", g, data.data(), sample_meta());
    FAIL() << "writing into a missing folder succeeded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("q.h5"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

TEST(Hdf5Map, ReaderNamesTheFileAndWhatIsWrong) {
  const fs::path dir = test::temp_dir("maps_h5bad");
  const GridSpec g = small_grid();
  const std::vector<float> data = fill(g);
  // Every reader of maps opens the dataset the same way (hdf5::open_map): the same message.
  auto expect_error = [](const fs::path& file, const std::string& fragment) {
    auto expect_refused = [&](const char* reader, auto&& read) {
      try {
        read();
        ADD_FAILURE() << reader << " accepted " << file;
      } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find(file.filename().string()), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << reader << ": " << e.what();
      }
    };
    expect_refused("read_hdf5", [&] { read_hdf5(file); });
    expect_refused("MapReader", [&] { MapReader reader(file); });
  };
  expect_error(dir / "absent.h5", "no such file");
  write_text(dir / "text.h5", "not HDF5\n");
  expect_error(dir / "text.h5", "not an HDF5 file");

  // Written correctly, then altered with the raw API.
  auto alter = [&](const std::string& name, auto&& change) {
    const fs::path file = dir / name;
    write_hdf5(file, g, data.data(), sample_meta());
    const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    ASSERT_GE(f, 0);
    change(f);
    H5Fclose(f);
  };
  alter("no_units.h5", [](hid_t f) { EXPECT_GE(H5Adelete_by_name(f, "potential", "units", H5P_DEFAULT), 0); });
  expect_error(dir / "no_units.h5", "attribute 'units'");
  alter("bad_dims.h5", [](hid_t f) {
    const hid_t ds = H5Dopen2(f, "potential", H5P_DEFAULT);
    const hid_t a = H5Aopen(ds, "dims", H5P_DEFAULT);
    const std::int64_t dims[3] = {4, 5, 7};  // x and y swapped
    EXPECT_GE(H5Awrite(a, H5T_NATIVE_INT64, dims), 0);
    H5Aclose(a);
    H5Dclose(ds);
  });
  expect_error(dir / "bad_dims.h5", "[nz][ny][nx] = [7][5][4]");
  alter("no_dataset.h5", [](hid_t f) { EXPECT_GE(H5Ldelete(f, "potential", H5P_DEFAULT), 0); });
  expect_error(dir / "no_dataset.h5", "no dataset /potential");
  alter("flat.h5", [](hid_t f) {
    EXPECT_GE(H5Ldelete(f, "potential", H5P_DEFAULT), 0);
    const hsize_t dims[2] = {4, 5};
    const hid_t space = H5Screate_simple(2, dims, nullptr);
    EXPECT_GE(H5Dclose(H5Dcreate2(f, "potential", H5T_NATIVE_FLOAT, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)), 0);
    H5Sclose(space);
  });
  expect_error(dir / "flat.h5", "/potential is neither a map (3-D) nor a batch (4-D)");
  fs::remove_all(dir);
}

TEST(Hdf5Map, ReaderAcceptsFixedLengthStrings) {
  // As h5py writes numpy byte strings: fixed length, NUL- or space-padded.
  const fs::path dir = test::temp_dir("maps_h5fixed");
  const GridSpec g = small_grid();
  const std::vector<float> data = fill(g);
  write_hdf5(dir / "f.h5", g, data.data(), sample_meta());
  const hid_t f = H5Fopen((dir / "f.h5").c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  const hid_t ds = H5Dopen2(f, "potential", H5P_DEFAULT);
  auto replace = [&](const char* name, const std::string& stored, H5T_str_t padding) {
    EXPECT_GE(H5Adelete(ds, name), 0);
    const hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, stored.size());
    H5Tset_strpad(type, padding);
    const hid_t space = H5Screate(H5S_SCALAR);
    const hid_t a = H5Acreate2(ds, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    EXPECT_GE(H5Awrite(a, type, stored.data()), 0);
    H5Aclose(a);
    H5Sclose(space);
    H5Tclose(type);
  };
  replace("units", std::string("kJ/mol/e\0\0\0", 11), H5T_STR_NULLPAD);
  replace("method", "direct    ", H5T_STR_SPACEPAD);
  H5Dclose(ds);
  H5Fclose(f);
  const MapFile map = read_hdf5(dir / "f.h5");
  EXPECT_EQ(map.meta.units, "kJ/mol/e");
  EXPECT_EQ(map.meta.method, "direct");
  fs::remove_all(dir);
}

// --- XDMF -----------------------------------------------------------------------------------------

// Element names in document order; fails the test unless every tag is closed in order.
std::vector<std::string> xml_elements(const std::string& xml) {
  std::vector<std::string> stack, seen;
  std::size_t pos = 0;
  while ((pos = xml.find('<', pos)) != std::string::npos) {
    const std::size_t end = xml.find('>', pos);
    if (end == std::string::npos) ADD_FAILURE() << "unterminated tag";
    if (end == std::string::npos) break;
    const std::string tag = xml.substr(pos + 1, end - pos - 1);
    pos = end + 1;
    if (tag[0] == '?' || tag[0] == '!') continue;
    if (tag[0] == '/') {
      if (stack.empty() || stack.back() != tag.substr(1)) ADD_FAILURE() << "unbalanced </" << tag;
      if (!stack.empty()) stack.pop_back();
      continue;
    }
    const std::string name = tag.substr(0, tag.find_first_of(" />"));
    seen.push_back(name);
    if (tag.back() != '/') stack.push_back(name);
  }
  EXPECT_TRUE(stack.empty()) << "unclosed <" << (stack.empty() ? "" : stack.back());
  return seen;
}

TEST(Xdmf, SidecarDescribesTheDatasetInZyxOrder) {
  const fs::path dir = test::temp_dir("maps_xmf");
  const GridSpec g = small_grid();
  const std::vector<float> data = fill(g);
  write_hdf5(dir / "pot-1.h5", g, data.data(), sample_meta());
  const std::string xml = read_text(dir / "pot-1.xmf");
  const auto elements = xml_elements(xml);
  for (const char* name : {"Xdmf", "Domain", "Grid", "Topology", "Geometry", "Attribute", "DataItem"})
    EXPECT_NE(std::find(elements.begin(), elements.end(), name), elements.end()) << name;
  EXPECT_NE(xml.find(R"(TopologyType="3DCoRectMesh" Dimensions="7 4 5")"), std::string::npos) << xml;
  EXPECT_NE(xml.find(R"(GeometryType="ORIGIN_DXDYDZ")"), std::string::npos) << xml;
  EXPECT_NE(xml.find(R"(Format="XML">10 2.25 -3.5</DataItem>)"), std::string::npos) << xml;  // z y x
  EXPECT_NE(xml.find(R"(Format="XML">1 0.25 0.5</DataItem>)"), std::string::npos) << xml;
  EXPECT_NE(xml.find(R"(Name="potential" AttributeType="Scalar" Center="Node")"), std::string::npos);
  EXPECT_NE(xml.find(R"(Dimensions="7 4 5" NumberType="Float" Precision="4" Format="HDF">pot-1.h5:/potential<)"),
            std::string::npos)
      << xml;
  fs::remove_all(dir);
}

// --- OpenDX ---------------------------------------------------------------------------------------

TEST(DxMap, ValuesAreListedWithXSlowestAndReadBackByPosition) {
  const fs::path dir = test::temp_dir("maps_dx");
  const GridSpec g = small_grid();
  const std::vector<float> data = fill(g);
  const MapMetadata meta = sample_meta();
  write_dx(dir / "pot.dx", g, data.data(), meta);
  EXPECT_EQ(folder_entries(dir), std::vector<std::string>{"pot.dx"});

  // Parse the text here, independently of read_dx.
  std::istringstream in(read_text(dir / "pot.dx"));
  std::string line;
  std::vector<std::string> header;
  while (std::getline(in, line) && line.find("data follows") == std::string::npos)
    if (line[0] != '#') header.push_back(line);
  EXPECT_EQ(line, "object 3 class array type double rank 0 items 140 data follows");
  EXPECT_EQ(header, (std::vector<std::string>{"object 1 class gridpositions counts 5 4 7",
                                              "origin -3.5 2.25 10", "delta 0.5 0 0",
                                              "delta 0 0.25 0", "delta 0 0 1",
                                              "object 2 class gridconnections counts 5 4 7"}));
  std::vector<float> listed;
  std::vector<std::string> trailer;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::vector<std::string> tokens;
    for (std::string w; words >> w;) tokens.push_back(w);
    if (tokens.empty()) continue;
    if (std::isalpha(static_cast<unsigned char>(tokens[0][0]))) {
      trailer.push_back(line);
      continue;
    }
    EXPECT_LE(tokens.size(), 3u);
    for (const auto& t : tokens) listed.push_back(std::stof(t));
  }
  ASSERT_EQ(listed.size(), g.point_count());
  std::size_t n = 0;
  for (std::int64_t i = 0; i < g.nx(); ++i)  // x slowest, z fastest
    for (std::int64_t j = 0; j < g.ny(); ++j)
      for (std::int64_t k = 0; k < g.nz(); ++k, ++n) ASSERT_EQ(listed[n], value_at(i, j, k)) << n;
  EXPECT_EQ(trailer.at(0), "attribute \"dep\" string \"positions\"");
  EXPECT_EQ(trailer.at(1), "object \"regular positions regular connections\" class field");
  EXPECT_EQ(trailer.size(), 5u);

  const MapFile back = read_dx(dir / "pot.dx");
  EXPECT_TRUE(back.grid.same_as(g, 0.0));
  EXPECT_EQ(back.data, data);  // the shortest round-trip text gives back every float exactly
  expect_same_meta(back.meta, meta);
  fs::remove_all(dir);
}

TEST(DxMap, ReadsApbsStyleFiles) {
  const fs::path dir = test::temp_dir("maps_dxapbs");
  // 2 x 3 x 2 grid as APBS writes it: x slowest, z fastest; value = 100 i + 10 j + k.
  write_text(dir / "apbs.dx",
             "# Data from APBS 3.0.0\n#\n# POTENTIAL (kT/e)\n#\n"
             "object 1 class gridpositions counts 2 3 2\n"
             "origin -1.000000E+01 5.000000E-01 2.000000E+00\n"
             "delta 1.500000E+00 0.000000E+00 0.000000E+00\n"
             "delta 0.000000E+00 2.000000E+00 0.000000E+00\n"
             "delta 0.000000E+00 0.000000E+00 2.500000E+00\n"
             "object 2 class gridconnections counts 2 3 2\n"
             "object 3 class array type double rank 0 items 12 data follows\n"
             "0.000000E+00 1.000000E+00 1.000000E+01\n"
             "1.100000E+01 2.000000E+01 2.100000E+01\n"
             "1.000000E+02 1.010000E+02 1.100000E+02\n"
             "1.110000E+02 1.200000E+02 1.210000E+02\n"
             "attribute \"dep\" string \"positions\"\n"
             "object \"regular positions regular connections\" class field\n"
             "component \"positions\" value 1\ncomponent \"connections\" value 2\n"
             "component \"data\" value 3\n");
  const MapFile map = read_dx(dir / "apbs.dx");
  EXPECT_EQ(map.grid.dims, (std::array<std::int64_t, 3>{2, 3, 2}));
  EXPECT_EQ(map.grid.origin, (std::array<double, 3>{-10, 0.5, 2}));
  EXPECT_EQ(map.grid.spacing, (std::array<double, 3>{1.5, 2, 2.5}));
  for (std::int64_t k = 0; k < 2; ++k)
    for (std::int64_t j = 0; j < 3; ++j)
      for (std::int64_t i = 0; i < 2; ++i)
        EXPECT_EQ(map.data[map.grid.index(i, j, k)], float(100 * i + 10 * j + k));
  fs::remove_all(dir);
}

TEST(DxMap, MalformedFilesGiveTheLine) {
  const fs::path dir = test::temp_dir("maps_dxbad");
  const std::string head =
      "object 1 class gridpositions counts 2 2 2\norigin 0 0 0\n"
      "delta 1 0 0\ndelta 0 1 0\ndelta 0 0 1\n"
      "object 2 class gridconnections counts 2 2 2\n"
      "object 3 class array type double rank 0 items 8 data follows\n";
  auto expect_error = [&](const std::string& name, const std::string& text, const std::string& where) {
    write_text(dir / name, text);
    try {
      read_dx(dir / name);
      ADD_FAILURE() << name << " was accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(name + where), std::string::npos) << e.what();
    }
  };
  expect_error("short.dx", head + "1 2 3\n4 5\n", ":9: the file ends after 5 of 8 values");
  expect_error("word.dx", head + "1 2 3\n4 x 6\n7 8\n", ":9: 'x' is not a number");
  expect_error("skew.dx",
               "object 1 class gridpositions counts 2 2 2\norigin 0 0 0\n"
               "delta 1 0.5 0\ndelta 0 1 0\ndelta 0 0 1\n"
               "object 3 class array type double rank 0 items 8 data follows\n1 2 3 4 5 6 7 8\n",
               ":6: delta line 1 has a component along axis 2");
  expect_error("items.dx", "object 1 class gridpositions counts 2 2 2\norigin 0 0 0\n"
                           "delta 1 0 0\ndelta 0 1 0\ndelta 0 0 1\n"
                           "object 3 class array type double rank 0 items 9 data follows\n",
               ":6: 9 items announced for a grid of 8 points");
  // Extra data: a duplicated value line (every later value would shift), numbers or text after
  // the values.
  const std::string trailer =
      "attribute \"dep\" string \"positions\"\n"
      "object \"regular positions regular connections\" class field\n"
      "component \"positions\" value 1\ncomponent \"connections\" value 2\n"
      "component \"data\" value 3\n";
  expect_error("dup.dx", head + "1 2 3\n4 5 6\n4 5 6\n7 8\n" + trailer, ":10: more values than the 8");
  expect_error("dupend.dx", head + "1 2 3\n4 5 6\n7 8\n7 8\n" + trailer, ":11: more values than the 8");
  expect_error("num.dx", head + "1 2 3\n4 5 6\n7 8\n" + trailer + "9\n", ":16: more values than the 8");
  expect_error("junk.dx", head + "1 2 3\n4 5 6\n7 8\n" + trailer + "garbage here\n",
               ":16: unexpected text after the data");
  // A header promising far more values than the file can hold: refused before allocating 4 GB.
  expect_error("huge.dx",
               "object 1 class gridpositions counts 1000 1000 1000\norigin 0 0 0\n"
               "delta 1 0 0\ndelta 0 1 0\ndelta 0 0 1\n"
               "object 3 class array type double rank 0 items 1000000000 data follows\n1 2 3\n",
               ":6: 1000000000 items announced, but the file holds only");
  // Without extras, with a blank line and a comment, the same file reads.
  write_text(dir / "ok.dx", head + "1 2 3\n4 5 6\n7 8\n\n" + trailer + "# comment\n");
  EXPECT_EQ(read_dx(dir / "ok.dx").data.size(), 8u);
  fs::remove_all(dir);
}

// --- CCP4 / MRC -----------------------------------------------------------------------------------

gemmi::Ccp4<float> read_with_gemmi(const fs::path& file) {
  gemmi::Ccp4<float> map;
  map.read_ccp4_file(file.string());
  return map;
}

// Where gemmi places point (i,j,k) of a map read as written (no reordering): fractional
// (NXSTART + i)/MX, ... in the header's unit cell.
gemmi::Position gemmi_position(const gemmi::Ccp4<float>& map, int i, int j, int k) {
  const auto start = map.header_3i32(5);
  const auto sampling = map.header_3i32(8);
  return map.grid.unit_cell.orthogonalize(gemmi::Fractional(double(start[0] + i) / sampling[0],
                                                            double(start[1] + j) / sampling[1],
                                                            double(start[2] + k) / sampling[2]));
}

TEST(Ccp4Map, GemmiReadsValuesAndPositions) {
  const fs::path dir = test::temp_dir("maps_ccp4");
  const GridSpec g = small_grid();
  const std::vector<float> data = fill(g);
  EXPECT_EQ(write_ccp4(dir / "pot.ccp4", g, data.data(), sample_meta()), "");  // no warning
  EXPECT_EQ(fs::file_size(dir / "pot.ccp4"), 1024 + 4 * g.point_count());

  const gemmi::Ccp4<float> map = read_with_gemmi(dir / "pot.ccp4");
  EXPECT_EQ(map.header_i32(4), 2);  // mode 2: float32
  EXPECT_EQ(map.header_3i32(17), (std::array<int, 3>{1, 2, 3}));  // columns x, rows y, sections z
  EXPECT_EQ(map.grid.nu, 5);
  EXPECT_EQ(map.grid.nv, 4);
  EXPECT_EQ(map.grid.nw, 7);
  EXPECT_EQ(map.header_3i32(5), (std::array<int, 3>{-7, 9, 10}));  // origin / spacing
  EXPECT_NEAR(map.grid.unit_cell.a, 5 * 0.5, 1e-5);
  EXPECT_NEAR(map.grid.unit_cell.b, 4 * 0.25, 1e-5);
  EXPECT_NEAR(map.grid.unit_cell.c, 7 * 1.0, 1e-5);
  EXPECT_EQ(map.grid.unit_cell.alpha, 90.0);
  // ORIGIN stays zero on the lattice: GridDataFormats adds it to NXSTART*spacing.
  for (int a = 0; a < 3; ++a) EXPECT_EQ(map.header_float(50 + a), 0.0f);

  // Values by index, and the physical position of some points.
  for (int k = 0; k < 7; ++k)
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 5; ++i) ASSERT_EQ(map.grid.data[map.grid.index_q(i, j, k)], value_at(i, j, k));
  const std::vector<std::array<int, 3>> points = {{0, 0, 0}, {4, 1, 6}, {2, 3, 5}};
  for (const auto& [i, j, k] : points) {
    const auto expected = g.position(i, j, k);
    const gemmi::Position p = gemmi_position(map, i, j, k);
    EXPECT_NEAR(p.x, expected[0], 1e-5);
    EXPECT_NEAR(p.y, expected[1], 1e-5);
    EXPECT_NEAR(p.z, expected[2], 1e-5);
  }
  // Header statistics.
  EXPECT_EQ(map.hstats.dmin, value_at(0, 0, 0));
  EXPECT_EQ(map.hstats.dmax, value_at(4, 3, 6));
  fs::remove_all(dir);
}

TEST(Ccp4Map, OriginOffTheLatticeIsInTheOriginWords) {
  const fs::path dir = test::temp_dir("maps_ccp4off");
  GridSpec g = small_grid();
  g.origin = {0.3, -1.1, 2.05};
  const std::vector<float> data = fill(g);
  const std::string warning = write_ccp4(dir / "pot.mrc", g, data.data(), sample_meta());
  for (const char* word : {"pot.mrc", "ORIGIN", "gemmi", "PyMOL", "(0.3, -1.1, 2.05)"})
    EXPECT_NE(warning.find(word), std::string::npos) << word << " not in: " << warning;
  const gemmi::Ccp4<float> map = read_with_gemmi(dir / "pot.mrc");
  EXPECT_EQ(map.header_3i32(5), (std::array<int, 3>{0, 0, 0}));
  for (int a = 0; a < 3; ++a) EXPECT_EQ(map.header_float(50 + a), float(g.origin[a]));
  // A point's position as ORIGIN + index * cell/sampling.
  const auto expected = g.position(3, 2, 6);
  const gemmi::Position offset = gemmi_position(map, 3, 2, 6);
  EXPECT_NEAR(map.header_float(50) + offset.x, expected[0], 1e-5);
  EXPECT_NEAR(map.header_float(51) + offset.y, expected[1], 1e-5);
  EXPECT_NEAR(map.header_float(52) + offset.z, expected[2], 1e-5);
  EXPECT_EQ(map.grid.data[map.grid.index_q(3, 2, 6)], value_at(3, 2, 6));
  fs::remove_all(dir);
}

// --- Format by extension --------------------------------------------------------------------------

TEST(WriteMap, PicksTheFormatByExtension) {
  EXPECT_STREQ(map_format_from_path("a/b.h5")->name, "HDF5 + XDMF");
  EXPECT_STREQ(map_format_from_path("b.HDF5")->name, "HDF5 + XDMF");
  EXPECT_STREQ(map_format_from_path("b.dx")->name, "OpenDX");
  EXPECT_STREQ(map_format_from_path("b.ccp4")->name, "CCP4/MRC");
  EXPECT_STREQ(map_format_from_path("b.map")->name, "CCP4/MRC");
  EXPECT_STREQ(map_format_from_path("b.Mrc")->name, "CCP4/MRC");

  const fs::path dir = test::temp_dir("maps_ext");
  const GridSpec g = small_grid();
  const std::vector<float> data = fill(g);
  write_map(dir / "a.h5", g, data.data(), sample_meta());
  write_map(dir / "a.dx", g, data.data(), sample_meta());
  write_map(dir / "a.map", g, data.data(), sample_meta());
  EXPECT_GT(H5Fis_hdf5((dir / "a.h5").c_str()), 0);
  EXPECT_TRUE(fs::exists(dir / "a.xmf"));
  EXPECT_EQ(read_dx(dir / "a.dx").data, data);
  EXPECT_EQ(read_with_gemmi(dir / "a.map").grid.data, data);

  try {
    write_map(dir / "a.vtk", g, data.data(), sample_meta());
    FAIL() << ".vtk was accepted";
  } catch (const Error& e) {
    const std::string message = e.what();
    for (const char* ext : {"a.vtk", ".h5", ".hdf5", ".dx", ".ccp4", ".map", ".mrc"})
      EXPECT_NE(message.find(ext), std::string::npos) << message;
  }
  EXPECT_FALSE(fs::exists(dir / "a.vtk"));
  EXPECT_THROW(map_format_from_path("noextension"), Error);
  fs::remove_all(dir);
}

// --- SHA-256 --------------------------------------------------------------------------------------

std::string sha256_of_text(const fs::path& dir, const std::string& text) {
  write_text(dir / "t.bin", text);
  return sha256_file(dir / "t.bin");
}

TEST(Sha256, KnownVectors) {
  const fs::path dir = test::temp_dir("maps_sha");
  // FIPS 180-4 examples (NIST CSRC).
  EXPECT_EQ(sha256_of_text(dir, ""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_of_text(dir, "abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_of_text(dir, "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_of_text(dir, std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  EXPECT_THROW(sha256_file(dir / "absent"), InputError);
  fs::remove_all(dir);
}

TEST(Sha256, AgreesWithSha256sumAcrossBlockBoundaries) {
  if (test::run_command("command -v sha256sum").status != 0) GTEST_SKIP() << "no sha256sum";
  const fs::path dir = test::temp_dir("maps_sha2");
  std::mt19937 rng(7);
  // Lengths around the 55/56/64-byte padding boundaries, and one past the 1 MiB read buffer.
  for (std::size_t size : {1, 55, 56, 57, 63, 64, 65, 119, 120, 128, (1 << 20) + 77}) {
    std::string bytes(size, '\0');
    for (char& c : bytes) c = char(rng());
    write_text(dir / "r.bin", bytes);
    const auto result = test::run_command("sha256sum '" + (dir / "r.bin").string() + "'");
    ASSERT_EQ(result.status, 0) << result.output;
    EXPECT_EQ(sha256_file(dir / "r.bin"), result.output.substr(0, 64)) << "size " << size;
  }
  fs::remove_all(dir);
}

// The CPU's SHA extensions (where present) and the portable code agree on random bytes of every
// length up to a few blocks and on a long string; the known vectors above run through the former.
TEST(Sha256, CpuExtensionsAndPortableCodeAgree) {
  if (!sha256_uses_cpu_extensions())
    GTEST_SKIP() << "this CPU has no SHA extensions: only the portable code runs here";
  std::mt19937 rng(11);
  std::vector<unsigned char> bytes(300000);
  for (auto& b : bytes) b = static_cast<unsigned char>(rng());
  for (std::size_t size = 0; size <= 260; ++size) {
    const std::span<const unsigned char> part(bytes.data(), size);
    EXPECT_EQ(sha256_hex(part), sha256_hex(part, Sha256Engine::portable)) << "size " << size;
  }
  EXPECT_EQ(sha256_hex(bytes), sha256_hex(bytes, Sha256Engine::portable));
  const std::string abc = "abc";
  EXPECT_EQ(sha256_hex({reinterpret_cast<const unsigned char*>(abc.data()), abc.size()},
                       Sha256Engine::portable),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace dcsgrid::io
