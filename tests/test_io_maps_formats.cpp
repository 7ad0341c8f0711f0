// The map format registry and every format's round trip through io::read_map; CCP4 placement on
// and off the lattice; gzipped DX and cube files; frames
// of batch files; and the independent readers (gemmi, mrcfile, GridDataFormats, h5py, xarray with
// h5netcdf, ASE) run on our files by tests/python/check_map_readers.py.
#include <gtest/gtest.h>

#include <zlib.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/hdf5/maps.hpp"
#include "dcsgrid/io/maps/io.hpp"
#include "helpers.hpp"

namespace dcsgrid::io {
namespace {

namespace fs = std::filesystem;

// Origin on the lattice of each axis' spacing (-7, 9, 10 steps), unequal spacings and point
// counts: a transposed or mis-strided reader cannot pass.
GridSpec lattice_grid() {
  GridSpec g;
  g.dims = {6, 5, 4};
  g.origin = {-3.5, 2.25, 10.0};
  g.spacing = {0.5, 0.25, 1.0};
  return g;
}

// A multilinear function of position (Å): trilinear interpolation reproduces it exactly, so any
// reader's value at any coordinate inside the grid can be checked against it. The Python checker
// (tests/python/check_map_readers.py) computes the same function.
double field(double x, double y, double z) { return 1.5 + 0.5 * x - 0.25 * y + 0.125 * z + 0.01 * x * y * z; }

std::vector<float> sample_field(const GridSpec& g) {
  std::vector<float> data(g.point_count());
  for (std::int64_t k = 0; k < g.nz(); ++k)
    for (std::int64_t j = 0; j < g.ny(); ++j)
      for (std::int64_t i = 0; i < g.nx(); ++i) {
        const auto p = g.position(i, j, k);
        data[g.index(i, j, k)] = float(field(p[0], p[1], p[2]));
      }
  return data;
}

MapMetadata meta() {
  MapMetadata m;
  m.units = "kcal/mol/e";
  m.method = "direct";
  m.program_version = "0.1.0";
  m.input_file = "in.pqr";
  return m;
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

void expect_grid_near(const GridSpec& got, const GridSpec& expected, double tolerance) {
  EXPECT_EQ(got.dims, expected.dims);
  for (int a = 0; a < 3; ++a) {
    EXPECT_NEAR(got.origin[a], expected.origin[a], tolerance) << "axis " << a;
    EXPECT_NEAR(got.spacing[a], expected.spacing[a], tolerance) << "axis " << a;
  }
}

TEST(MapFormats, RegistryParsesEachNameOnce) {
  EXPECT_STREQ(map_format_from_path("a/b.h5")->name, "HDF5 + XDMF");
  EXPECT_STREQ(map_format_from_path("b.HDF5")->name, "HDF5 + XDMF");
  EXPECT_STREQ(map_format_from_path("b.dx")->name, "OpenDX");
  EXPECT_STREQ(map_format_from_path("b.DX.GZ")->name, "OpenDX, gzipped");
  EXPECT_STREQ(map_format_from_path("a.b.dx.gz")->name, "OpenDX, gzipped");
  EXPECT_STREQ(map_format_from_path("b.mrc")->name, "CCP4/MRC");
  EXPECT_STREQ(map_format_from_path("b.cube")->name, "Gaussian cube");
  for (const char* bad : {"b.gz", "b.pdb.gz", ".dx", "dx", "b.vtk"}) {
    try {
      map_format_from_path(bad);
      ADD_FAILURE() << bad << " was taken for a map";
    } catch (const Error& e) {
      const std::string message = e.what();
      for (const MapFormatInfo& f : map_formats())
        EXPECT_NE(message.find(f.extensions), std::string::npos) << message;
    }
  }
  // Every extension of every row picks that row, in any case.
  for (const MapFormatInfo& f : map_formats()) {
    std::stringstream extensions(f.extensions);
    for (std::string extension; std::getline(extensions, extension, '/');) {
      EXPECT_EQ(map_format_from_path("m" + extension), &f) << extension;
      std::string upper = extension;
      for (char& c : upper) c = char(std::toupper((unsigned char)c));
      EXPECT_EQ(map_format_from_path("m" + upper), &f) << upper;
    }
  }
}

TEST(MapFormats, EveryFormatRoundTripsTheSameValuesAndGrid) {
  const fs::path dir = test::temp_dir("maps_formats");
  const GridSpec g = lattice_grid();
  const std::vector<float> data = sample_field(g);
  const MapMetadata m = meta();
  for (const char* name : {"m.h5", "m.dx", "m.dx.gz", "m.ccp4", "m.mrc", "m.map", "m.cube"}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(write_map(dir / name, g, data.data(), m), "");  // on the lattice: no warning
    const MapFile back = read_map(dir / name);
    EXPECT_EQ(back.data, data);
    // Text formats print the shortest exact text; CCP4 stores the cell in float32; cube in Bohr.
    expect_grid_near(back.grid, g, 1e-6);
    EXPECT_EQ(back.meta.units, m.units);
  }
  // .dx.gz is gzip data (APBS's own .dx.gz opens with zlib), holding the .dx text exactly.
  gzFile gz = gzopen((dir / "m.dx.gz").c_str(), "rb");
  ASSERT_NE(gz, nullptr);
  EXPECT_EQ(gzdirect(gz), 0) << "not compressed";
  std::string text(1 << 20, '\0');
  text.resize(std::size_t(gzread(gz, text.data(), unsigned(text.size()))));
  gzclose(gz);
  std::ifstream plain(dir / "m.dx", std::ios::binary);
  EXPECT_EQ(text, std::string(std::istreambuf_iterator<char>(plain), {}));
  fs::remove_all(dir);
}

TEST(MapFormats, CcpOriginOnAndOffTheLatticeReadsBackInPlace) {
  const fs::path dir = test::temp_dir("maps_ccp4place");
  GridSpec g = lattice_grid();
  g.origin = {0.3, -1.1, 2.05};  // off the lattice on every axis
  const std::vector<float> data = sample_field(g);
  const std::string warning = write_map(dir / "off.mrc", g, data.data(), meta());
  EXPECT_NE(warning.find("gemmi"), std::string::npos) << warning;
  const MapFile off = read_map(dir / "off.mrc");
  expect_grid_near(off.grid, g, 1e-6);  // from the ORIGIN words
  EXPECT_EQ(off.data, data);
  // Large origins on the lattice (a protein far from 0): still NXSTART, exact.
  g.origin = {-1234.5, 987.25, 4321.0};
  EXPECT_EQ(write_map(dir / "far.ccp4", g, data.data(), meta()), "");
  expect_grid_near(read_map(dir / "far.ccp4").grid, g, 1e-3);
  fs::remove_all(dir);
}

TEST(MapFormats, CubeCarriesAtomsInBohr) {
  const fs::path dir = test::temp_dir("maps_cube");
  const GridSpec g = lattice_grid();
  const std::vector<float> data = sample_field(g);
  AtomSet atoms;
  atoms.push_back(1.0, -2.0, 10.5, -0.5);
  atoms.push_back(0.0, 3.0, 11.0, 0.25);
  WriteOptions options;
  options.atoms = &atoms;
  write_map(dir / "a.cube", g, data.data(), meta(), options);
  std::ifstream in(dir / "a.cube");
  std::string line;
  for (int i = 0; i < 3; ++i) std::getline(in, line);
  const double bohr = 0.529177210903;
  std::istringstream head(line);
  double count = 0, ox = 0;
  head >> count >> ox;
  EXPECT_EQ(count, 2);
  EXPECT_NEAR(ox * bohr, g.origin[0], 1e-12);
  for (int i = 0; i < 3; ++i) std::getline(in, line);
  std::getline(in, line);
  std::istringstream atom(line);
  double z = -1, q = 0, x = 0;
  atom >> z >> q >> x;
  EXPECT_EQ(z, 0);
  EXPECT_EQ(q, -0.5);
  EXPECT_NEAR(x * bohr, 1.0, 1e-12);
  EXPECT_EQ(read_map(dir / "a.cube").data, data);  // the reader skips the atoms
  fs::remove_all(dir);
}

TEST(MapFormats, MalformedCubeFilesGiveTheLine) {
  const fs::path dir = test::temp_dir("maps_cubebad");
  const std::string head = "title\ncomment\n0 0 0 0\n2 1 0 0\n2 0 1 0\n2 0 0 1\n";
  auto expect_error = [&](const std::string& name, const std::string& text, const std::string& where) {
    write_text(dir / name, text);
    try {
      read_map(dir / name);
      ADD_FAILURE() << name << " was accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(name + where), std::string::npos) << e.what();
    }
  };
  expect_error("short.cube", head + "1 2 3 4\n5 6\n", ":8: the file ends after 6 of 8 values");
  expect_error("extra.cube", head + "1 2\n3 4\n5 6\n7 8\n9\n", ":11: more values than the 8");
  expect_error("word.cube", head + "1 2 x 4\n", ":7: 'x' is not a number");
  expect_error("skew.cube", "t\nc\n0 0 0 0\n2 1 0.5 0\n", ":4: the step vector of axis 1 has a component along axis 2");
  expect_error("orbital.cube", "t\nc\n-1 0 0 0\n", ":3: orbital cube files");
  expect_error("huge.cube", "t\nc\n0 0 0 0\n1000 1 0 0\n1000 0 1 0\n1000 0 0 1\n1\n",
               ":6: 1000000000 points announced, but the file holds only");
  // Negative counts mean Å, as the format allows.
  write_text(dir / "angstrom.cube", "t\nc\n0 1 2 3\n-2 0.5 0 0\n-1 0 1 0\n-1 0 0 1\n4 5\n");
  const MapFile a = read_map(dir / "angstrom.cube");
  EXPECT_EQ(a.grid.origin, (std::array<double, 3>{1, 2, 3}));
  EXPECT_EQ(a.grid.spacing[0], 0.5);
  EXPECT_EQ(a.data, (std::vector<float>{4, 5}));
  EXPECT_EQ(a.meta.units, "");  // not written by dcsgrid: units unknown
  fs::remove_all(dir);
}

// A copy of a good CCP4 map with 4 bytes at `offset` replaced (or the file cut to `cut` bytes).
void corrupt(const fs::path& from, const fs::path& to, std::size_t offset, const void* bytes,
             std::size_t cut = 0) {
  fs::copy_file(from, to, fs::copy_options::overwrite_existing);
  if (cut) fs::resize_file(to, cut);
  if (!bytes) return;
  std::fstream f(to, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(std::streamoff(offset));
  f.write(static_cast<const char*>(bytes), 4);
}

TEST(MapFormats, MalformedCcp4FilesNameTheProblem) {
  const fs::path dir = test::temp_dir("maps_ccp4bad");
  const GridSpec g = lattice_grid();
  const std::vector<float> data = sample_field(g);
  write_map(dir / "good.ccp4", g, data.data(), meta());
  auto expect_error = [&](const char* name, const std::string& what) {
    try {
      read_map(dir / name);
      ADD_FAILURE() << name << " was accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string(name) + ": " + what), std::string::npos)
          << e.what();
    }
  };
  const std::size_t size = 1024 + 4 * g.point_count();
  ASSERT_EQ(fs::file_size(dir / "good.ccp4"), size);
  corrupt(dir / "good.ccp4", dir / "cut.ccp4", 0, nullptr, size - 4);
  expect_error("cut.ccp4", "the file has " + std::to_string(size - 4) + " bytes, its header describes " +
                               std::to_string(size));
  const std::int32_t huge = 1 << 30;
  corrupt(dir / "good.ccp4", dir / "huge.ccp4", 0, &huge);  // NC, word 1
  expect_error("huge.ccp4", "the header describes more points than the file has bytes");
  corrupt(dir / "good.ccp4", dir / "nomap.ccp4", 208, "ABCD");
  expect_error("nomap.ccp4", "not a CCP4/MRC map");
  const float angle = 190.0f;  // (a skewed cell's angles are read: --grid cell writes them)
  corrupt(dir / "good.ccp4", dir / "angle.ccp4", 4 * 13, &angle);  // ALPHA, word 14
  expect_error("angle.ccp4", "the header describes an invalid grid");
  corrupt(dir / "good.ccp4", dir / "head.ccp4", 0, nullptr, 100);
  expect_error("head.ccp4", "shorter than a CCP4/MRC header");
  // Found by fuzz_ccp4 (fuzz/): NXSTART near 2^31 with the axes in another order made gemmi's
  // reordering overflow an int (undefined behaviour; UBSan stops there).
  const std::int32_t high_start = std::numeric_limits<std::int32_t>::max() - 1, mapc = 2, mapr = 1;
  corrupt(dir / "good.ccp4", dir / "start.ccp4", 4 * 4, &high_start);  // NXSTART, word 5
  {
    std::fstream f(dir / "start.ccp4", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(4 * 16);  // MAPC, MAPR: words 17 and 18
    f.write(reinterpret_cast<const char*>(&mapc), 4).write(reinterpret_cast<const char*>(&mapr), 4);
  }
  expect_error("start.ccp4", "NXSTART + NX (or NY, NZ) beyond the 32-bit range");
  fs::remove_all(dir);
}

// Found by fuzz_ccp4 (fuzz/): a first label "dcsgrid ...: electrostatic potential, " with only
// spaces after it threw std::out_of_range (the units were cut at an offset found before the
// trailing spaces were trimmed). The map reads, without units.
TEST(MapFormats, Ccp4LabelWithoutUnitsReads) {
  const fs::path dir = test::temp_dir("maps_ccp4label");
  const GridSpec g = lattice_grid();
  const std::vector<float> data = sample_field(g);
  write_map(dir / "label.ccp4", g, data.data(), meta());
  std::string label = "dcsgrid 0.1.0: electrostatic potential, ";
  label.resize(80, ' ');
  {
    std::fstream f(dir / "label.ccp4", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(224);  // the first of the ten 80-byte labels (word 57)
    f.write(label.data(), 80);
  }
  const MapFile map = read_map(dir / "label.ccp4");
  EXPECT_EQ(map.meta.units, "");
  EXPECT_EQ(map.data, data);
  fs::remove_all(dir);
}

TEST(MapFormats, SelectorsAreForHdf5Only) {
  const fs::path dir = test::temp_dir("maps_select");
  const GridSpec g = lattice_grid();
  const std::vector<float> data = sample_field(g);
  write_map(dir / "a.dx", g, data.data(), meta());
  Hdf5MapWriter w(dir / "a.h5", g, meta());
  w.write_planes(0, g.nz(), data.data());
  std::vector<float> twice(data);
  for (float& v : twice) v *= 2;
  const std::size_t second = w.add_stream("potential_cutoff", meta());
  w.write_planes(second, 0, g.nz(), twice.data());
  // Planes written can be read back before finish() (the main job compares maps slab by slab).
  std::vector<float> back(g.plane_size());
  w.read_planes(second, g.nz() - 1, 1, back.data());
  EXPECT_TRUE(std::equal(back.begin(), back.end(), twice.end() - std::ptrdiff_t(g.plane_size())));
  w.finish();

  EXPECT_EQ(read_map(parse_map_argument((dir / "a.h5").string() + ":potential_cutoff")).data, twice);
  EXPECT_THROW(read_map(dir / "a.dx", MapSelector{"other", {}}), InputError);
  EXPECT_THROW(read_map(dir / "a.dx", MapSelector{"potential", 0}), InputError);
  const MapArgument plain = parse_map_argument((dir / "a.dx").string());
  EXPECT_EQ(plain.path, dir / "a.dx");
  EXPECT_FALSE(plain.selector.frame);
  EXPECT_THROW(read_map(dir / "missing.dx"), InputError);
  fs::remove_all(dir);
}

// A two-frame batch file through io's HDF5 layout (what analysis::BatchFile writes): frame 1
// complete, frame 0 pending.
void write_batch(const fs::path& path, const GridSpec& g, const std::vector<float>& frame) {
  std::lock_guard lock(hdf5::library_mutex());
  hdf5::Handle file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
  const hid_t f = file.get();
  hdf5::Handle potential = hdf5::create_map_dataset(f, "potential", {2}, g, path);
  hdf5::write_map_attributes(potential.get(), g, meta(), hdf5::kBatchAxisOrder, path);
  hdf5::attach_coordinates(f, potential.get(), g, 2, path);
  hdf5::write_map(potential.get(), 1, g, frame.data(), path, false);
  hdf5::create_group(f, "frames", path);
  const std::int8_t status[2] = {0, 1};
  hdf5::Handle type = hdf5::status_type(path);
  hdf5::create_column(f, hdf5::names::status, {2}, type.get(), type.get(), status, path);
}

TEST(MapFormats, BatchFramesReadOneByOne) {
  const fs::path dir = test::temp_dir("maps_batchframe");
  const GridSpec g = lattice_grid();
  const std::vector<float> data = sample_field(g);
  write_batch(dir / "b.h5", g, data);
  const MapFile frame = read_map(parse_map_argument((dir / "b.h5").string() + "#1"));
  EXPECT_EQ(frame.data, data);
  expect_grid_near(frame.grid, g, 0);
  for (const char* bad : {"#0", "#2"}) {
    try {
      read_map(parse_map_argument((dir / "b.h5").string() + bad));
      ADD_FAILURE() << bad << " was read";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("frame ") + (bad + 1)), std::string::npos)
          << e.what();
    }
  }
  try {
    read_map(dir / "b.h5");
    ADD_FAILURE() << "a batch file read as one map";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("#FRAME"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

// gemmi (CCP4/MRC), mrcfile's validator, GridDataFormats (.dx, .dx.gz, .ccp4), h5py and xarray
// with h5netcdf (HDF5 maps and batch files, as netCDF-4 with coordinates) and ASE (cube) read our
// files: origin, spacing, axis order and values at coordinates against field().
TEST(MapFormats, IndependentReadersPlaceEveryFormatAlike) {
  const fs::path dir = test::temp_dir("maps_readers");
  const GridSpec g = lattice_grid();
  const std::vector<float> data = sample_field(g);
  AtomSet atoms;
  atoms.push_back(-2.0, 2.5, 11.0, 0.5);
  WriteOptions options;
  options.atoms = &atoms;
  for (const char* name : {"m.h5", "m.dx", "m.dx.gz", "m.ccp4", "m.mrc", "m.cube"})
    write_map(dir / name, g, data.data(), meta(), options);
  write_batch(dir / "batch.h5", g, data);
  const std::string script = std::string(DCSGRID_SOURCE_DIR) + "/tests/python/check_map_readers.py";
  const test::CommandResult r = test::run_command("/usr/bin/python3 " + script + " " + dir.string());
  if (r.status == 127) GTEST_SKIP() << "/usr/bin/python3 is missing: " << r.output;
  if (r.status == 77) GTEST_SKIP() << r.output;  // no reader installed
  EXPECT_EQ(r.status, 0) << r.output;
  std::printf("%s", r.output.c_str());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace dcsgrid::io
