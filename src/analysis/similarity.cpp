// Similarity of maps: mask, Gram matrix by the in-house GEMM, indices, clustering, outputs.
#include "dcsgrid/engine/engine.hpp"
#include "dcsgrid/analysis/similarity.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include "batch_hdf5.hpp"
#include "dcsgrid/analysis/batch_file.hpp"
#include "dcsgrid/analysis/compare.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/threads.hpp"
#include "dcsgrid/io/files/atomic_file.hpp"
#include "dcsgrid/prims/gemm.hpp"
#include "dcsgrid/io/maps/reader.hpp"
#include "similarity_cuda.hpp"

namespace dcsgrid::analysis {

namespace fs = std::filesystem;

std::vector<std::uint8_t> distance_mask(const GridSpec& grid, const std::vector<AtomSet>& structures,
                                        double distance) {
  validate(grid);
  if (!(distance >= 0) || !std::isfinite(distance))
    throw Error(fmt::format("mask distance must be a finite number of Å ≥ 0, got {}", distance));
  std::vector<std::uint8_t> mask(grid.point_count(), 1);
  const double d2 = distance * distance;
  const auto& h = grid.spacing;
  // Plane by plane (no two threads write the same point): clear the points of plane k within
  // distance of an atom, visiting only the atom's bounding square.
#pragma omp parallel for num_threads(team_size()) schedule(dynamic)
  for (std::int64_t k = 0; k < grid.nz(); ++k) {
    const double z = grid.origin[2] + k * h[2];
    std::uint8_t* plane = mask.data() + std::size_t(k) * grid.plane_size();
    for (const AtomSet& atoms : structures)
      for (std::size_t a = 0; a < atoms.size(); ++a) {
        const double dz = z - atoms.z[a];
        const double r2 = d2 - dz * dz;
        if (r2 < 0) continue;
        const double r = std::sqrt(r2);
        // Clamped in double before the conversion: an atom far beyond the grid would give an index
        // beyond int64 (undefined).
        auto range = [&](int axis, double c, std::int64_t& lo, std::int64_t& hi) {
          const double last = double(grid.dims[axis] - 1);
          lo = std::int64_t(std::clamp(std::ceil((c - r - grid.origin[axis]) / h[axis]), 0.0, last + 1));
          hi = std::int64_t(std::clamp(std::floor((c + r - grid.origin[axis]) / h[axis]), -1.0, last));
        };
        std::int64_t i0, i1, j0, j1;
        range(0, atoms.x[a], i0, i1);
        range(1, atoms.y[a], j0, j1);
        for (std::int64_t j = j0; j <= j1; ++j) {
          const double dy = grid.origin[1] + j * h[1] - atoms.y[a];
          for (std::int64_t i = i0; i <= i1; ++i) {
            const double dx = grid.origin[0] + i * h[0] - atoms.x[a];
            if (dx * dx + dy * dy + dz * dz <= d2) plane[std::size_t(j) * grid.nx() + i] = 0;
          }
        }
      }
  }
  return mask;
}

std::vector<double> gram_matrix(const float* maps, std::size_t n_maps, std::size_t n_points,
                                const std::string& device) {
  if (engine::use_gpu(device)) {
#ifdef DCSGRID_HAVE_CUDA
    return gram_on_gpu_from_host(maps, n_maps, n_points);
#endif
  }
  std::vector<double> gram(n_maps * n_maps, 0.0);
  std::vector<float> partial(n_maps * n_maps);
  const auto n = std::int64_t(n_maps), ld = std::int64_t(n_points);
  for (std::size_t k0 = 0; k0 < n_points; k0 += kGramBlock) {
    const auto k = std::int64_t(std::min(kGramBlock, n_points - k0));
    prims::gemm_cpu(prims::Op::none, prims::Op::transpose, n, n, k, 1.0f, maps + k0, ld, maps + k0,
                    ld, 0.0f, partial.data(), n);
    for (std::size_t i = 0; i < gram.size(); ++i) gram[i] += partial[i];
  }
  return gram;
}

namespace {

// The atoms the mask keeps away from (see SimilarityOptions).
std::vector<AtomSet> mask_atoms(const SimilarityOptions& o) {
  std::vector<AtomSet> atoms = o.mask_atoms;
  io::ReadOptions read = o.read_options;
  read.unknown_zero = true;  // only positions matter here
  for (const auto& s : o.mask_structures) atoms.push_back(io::read_structure(s, read).atoms);
  if (!o.mask_batch_inputs) return atoms;
  for (const auto& path : o.maps) {
    if (!is_batch_file(path)) continue;
    const BatchFile batch(path);
    for (const FrameRecord& f : batch.frames()) {
      if (f.status != FrameStatus::complete) continue;
      read.model = f.model;
      atoms.push_back(io::read_structure(f.source, read).atoms);
    }
  }
  return atoms;
}

// Every map of the files, as rows over the points kept by the mask.
struct MapRows {
  GridSpec grid;
  std::string units;
  std::vector<std::string> labels;
  std::vector<float> rows;  // labels.size() × kept
  std::size_t kept = 0;
};

MapRows load_maps(const SimilarityOptions& o) {
  MapRows m;
  std::vector<std::uint8_t> mask;
  std::vector<std::size_t> kept_points;  // empty: every point
  std::vector<float> map;
  for (const auto& path : o.maps) {
    const io::MapReader reader(path);
    if (&path == &o.maps.front()) {
      m.grid = reader.grid();
      m.units = reader.meta().units;
      if (o.mask_distance > 0) {
        const std::vector<AtomSet> atoms = mask_atoms(o);
        if (atoms.empty())
          throw Error("similarity: a mask distance needs the structures' atoms (none given)");
        mask = distance_mask(m.grid, atoms, o.mask_distance);
        for (std::size_t i = 0; i < mask.size(); ++i)
          if (mask[i]) kept_points.push_back(i);
        if (kept_points.empty())
          throw Error(fmt::format("similarity: no grid point lies farther than {} Å from the atoms",
                                  o.mask_distance));
      }
      m.kept = mask.empty() ? m.grid.point_count() : kept_points.size();
      map.resize(m.grid.point_count());
    } else {
      try {
        require_same_grid(m.grid, reader.grid());
      } catch (const Error& e) {
        throw Error(fmt::format("similarity: {} against {}: {}; maps must share one grid",
                                o.maps[0].string(), path.string(), e.what()));
      }
      // Empty units: a format that records none (CCP4/MRC from other programs).
      if (!reader.meta().units.empty() && !m.units.empty() && reader.meta().units != m.units)
        throw Error(fmt::format("similarity: {} is in {}, {} in {}", path.string(),
                                reader.meta().units, o.maps[0].string(), m.units));
    }
    m.rows.reserve(m.rows.size() + reader.size() * m.kept);
    for (std::size_t i = 0; i < reader.size(); ++i) {
      reader.read(i, map.data());
      if (mask.empty()) {
        m.rows.insert(m.rows.end(), map.begin(), map.end());
      } else {
        for (std::size_t p : kept_points) m.rows.push_back(map[p]);
      }
      m.labels.push_back(reader.label(i));
    }
  }
  return m;
}

}  // namespace

SimilarityResult compute_similarity(const SimilarityOptions& o) {
  if (o.maps.empty()) throw Error("similarity: no map files given");
  const MapRows m = load_maps(o);
  if (m.labels.size() < 2)
    throw Error(fmt::format("similarity: needs at least two maps, found {}", m.labels.size()));
  SimilarityResult r;
  r.labels = m.labels;
  r.n = m.labels.size();
  r.points_used = m.kept;
  r.gram = gram_matrix(m.rows.data(), r.n, m.kept, o.device);
  require_nonzero_maps(r.gram, r.labels);
  r.hodgkin = hodgkin_from_gram(r.gram, r.n);
  r.carbo = carbo_from_gram(r.gram, r.n);
  std::vector<double> distance(r.hodgkin.size());
  std::transform(r.hodgkin.begin(), r.hodgkin.end(), distance.begin(),
                 [](double si) { return 1.0 - si; });
  r.order = average_linkage_order(distance, r.n);
  if (!o.output_h5.empty()) write_similarity_h5(o.output_h5, r);
  if (!o.output_csv.empty()) write_similarity_csv(o.output_csv, r);
  return r;
}

nlohmann::json SimilarityResult::to_json() const {
  auto square = [&](const std::vector<double>& v) {
    nlohmann::json rows = nlohmann::json::array();
    for (std::size_t a = 0; a < n; ++a) {
      nlohmann::json row = nlohmann::json::array();
      for (std::size_t b = 0; b < n; ++b)
        row.push_back(std::isfinite(v[a * n + b]) ? nlohmann::json(v[a * n + b]) : nlohmann::json(nullptr));
      rows.push_back(std::move(row));
    }
    return rows;
  };
  return {{"labels", labels}, {"points_used", points_used}, {"hodgkin", square(hodgkin)},
          {"carbo", square(carbo)}, {"order", order}};
}

void write_similarity_h5(const fs::path& path, const SimilarityResult& r) {
  std::lock_guard lock(io::hdf5::library_mutex());
  io::hdf5::silence_errors();
  io::AtomicFile atomic(path);
  {
    io::hdf5::Handle file = io::hdf5::create_file(atomic.temp_path(), path, "create the file");
    const hid_t f = file.get();
    const std::vector<hsize_t> square = {r.n, r.n};
    h5::create_column(f, "gram", square, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, r.gram.data(), path);
    io::hdf5::Handle hodgkin = h5::create_column(f, "hodgkin", square, H5T_IEEE_F64LE,
                                                 H5T_NATIVE_DOUBLE, r.hodgkin.data(), path);
    io::hdf5::write_attribute(hodgkin.get(), "definition", std::string("2<a,b>/(<a,a>+<b,b>)"), path);
    io::hdf5::Handle carbo = h5::create_column(f, "carbo", square, H5T_IEEE_F64LE,
                                               H5T_NATIVE_DOUBLE, r.carbo.data(), path);
    io::hdf5::write_attribute(carbo.get(), "definition", std::string("<a,b>/sqrt(<a,a><b,b>)"), path);
    const std::vector<std::int64_t> order(r.order.begin(), r.order.end());
    io::hdf5::Handle o = h5::create_column(f, "order", {r.n}, H5T_STD_I64LE, H5T_NATIVE_INT64,
                                           order.data(), path);
    io::hdf5::write_attribute(o.get(), "definition",
                              std::string("leaf order of average-linkage clustering on 1 - hodgkin"),
                              path);
    std::size_t longest = 1;
    for (const auto& l : r.labels) longest = std::max(longest, l.size() + 1);
    h5::create_string_column(f, "labels", r.labels, longest, path);
    io::hdf5::write_attribute(f, "points_used", r.points_used, path);
    // Datasets first: the file's real close (its last flush, which a full disk fails) is the
    // last handle's, and only the file's close is checked.
    for (io::hdf5::Handle* d : {&hodgkin, &carbo, &o}) d->close();
    io::hdf5::check(io::hdf5::close_temporary_file(file), path, "finish writing the file");
  }
  atomic.commit();
}

void write_similarity_csv(const fs::path& path, const SimilarityResult& r) {
  io::AtomicFile atomic(path);
  {
    std::ofstream out(atomic.temp_path());
    if (!out) throw Error("cannot create " + path.string());
    auto quoted = [](const std::string& s) { return "\"" + s + "\""; };
    out << "map";
    for (const auto& l : r.labels) out << ',' << quoted(l);
    out << '\n';
    for (std::size_t a = 0; a < r.n; ++a) {
      out << quoted(r.labels[a]);
      for (std::size_t b = 0; b < r.n; ++b) out << ',' << fmt::format("{:.9g}", r.hodgkin[a * r.n + b]);
      out << '\n';
    }
    out.flush();
    if (!out) throw Error("cannot write " + path.string() + " (disk full?)");
  }
  atomic.commit();
}

}  // namespace dcsgrid::analysis
