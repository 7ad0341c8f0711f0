// Small input writers shared by the analysis tests.
#pragma once
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "dcsgrid/analysis/batch_file.hpp"
#include "dcsgrid/analysis/stats.hpp"
#include "dcsgrid/core/atoms.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/engine/cpu_backend.hpp"
#include "dcsgrid/engine/metadata.hpp"
#include "dcsgrid/io/structure/read.hpp"

namespace dcsgrid::test {

// PQR text of one or more models (MODEL/ENDMDL records when more than one).
inline std::string pqr_text(const std::vector<AtomSet>& models) {
  std::string text;
  char line[128];
  for (std::size_t m = 0; m < models.size(); ++m) {
    if (models.size() > 1) text += "MODEL " + std::to_string(m + 1) + "\n";
    const AtomSet& a = models[m];
    for (std::size_t i = 0; i < a.size(); ++i) {
      std::snprintf(line, sizeof line, "ATOM  %5zu  C   MOL A   1    %8.3f%8.3f%8.3f %7.4f 1.7000\n",
                    i + 1, a.x[i], a.y[i], a.z[i], a.q[i]);
      text += line;
    }
    if (models.size() > 1) text += "ENDMDL\n";
  }
  return text;
}

inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) throw Error("test: cannot write " + path.string());
}

inline void write_pqr(const std::filesystem::path& path, const AtomSet& atoms) {
  write_text(path, pqr_text({atoms}));
}

// The atoms as a PQR file stores them (3 decimals in Å, 4 in e), so references use the same
// numbers the reader returns.
inline AtomSet as_stored(const AtomSet& atoms) {
  AtomSet out;
  for (std::size_t i = 0; i < atoms.size(); ++i) {
    char buf[64];
    double x, y, z, q;
    std::snprintf(buf, sizeof buf, "%.3f %.3f %.3f %.4f", atoms.x[i], atoms.y[i], atoms.z[i], atoms.q[i]);
    std::sscanf(buf, "%lf %lf %lf %lf", &x, &y, &z, &q);
    out.push_back(x, y, z, q);
  }
  return out;
}

// A batch file of the structures on the union of their boxes grown by padding, every frame
// computed (direct, CPU) and complete with its stats: the fixture of the analysis tests that read
// batch files (the batch pipeline itself is tested in test_app_batch).
inline void write_batch_file(const std::vector<std::string>& files, const std::filesystem::path& output,
                             double spacing, double padding) {
  std::vector<io::Structure> structures;
  analysis::BatchLayout layout;
  for (const auto& f : files) {
    structures.push_back(io::read_structure(f));
    analysis::FrameRecord record;
    record.source = f;
    layout.frames.push_back(record);
  }
  Box all = bounding_box(structures.front().atoms);
  for (const auto& s : structures) all = union_box(all, bounding_box(s.atoms));
  layout.grid = grid_around(all, spacing, padding);
  layout.meta = engine::method_metadata(engine::PotentialRequest{});
  layout.histogram_bins = analysis::HistogramOptions{}.bins;
  analysis::BatchFile::create(output, layout);
  analysis::BatchFile file(output, true);
  auto backend = engine::make_cpu_backend();
  for (std::size_t i = 0; i < structures.size(); ++i) {
    engine::PotentialRequest request;
    request.atoms = &structures[i].atoms;
    request.grid = layout.grid;
    const std::vector<float> map = engine::compute_grid(*backend, request);
    analysis::FrameRecord record = layout.frames[i];
    record.atom_count = structures[i].atoms.size();
    record.total_charge = structures[i].atoms.total_charge();
    record.status = analysis::FrameStatus::complete;
    const analysis::MapStats stats = analysis::map_stats(map);
    file.write_frame(i, map.data(), record, &stats);
  }
}

}  // namespace dcsgrid::test

