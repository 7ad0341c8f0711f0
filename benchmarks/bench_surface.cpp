// The molecular surface (analysis::molecular_surface) of a protein: SES and SAS meshes at two
// spacings, their areas and times, against FreeSASA (Lee–Richards, the same radii through
// --radius-from-occupancy) on the same atoms as the baseline; optionally the whole
// `dcsgrid surface` process (surface, potential, residue table). Each mesh on the CPU and, where a
// GPU is present, with its distance fields on the GPU (the same mesh: the CPU's row is the baseline).
//   bench_surface [--pqr FILE (data/1tii_pdb2pqr_amber.pqr.gz)] [--spacings 0.5,0.25] [--dcsgrid BINARY]
//                 [--devices cpu,gpu] [--kinds ses,sas] [--process-args "ARGS"] [--repeats N (1)]
// issue 34's 10^6-atom target: benchmarks/make_assembly.py data/1tii_pdb2pqr_amber.pqr.gz asm.pqr
// --copies 88, then --pqr asm.pqr --spacings 0.5 --kinds ses --dcsgrid BUILD/dcsgrid --process-args
// "--method cutoff" --repeats 2 (the default medium's salt rules out msm; direct is the reference).
// Threads: OMP_NUM_THREADS. Writes surface.json (see report.hpp).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>
#include <string>

#include "dcsgrid/analysis/surface.hpp"
#include "dcsgrid/core/text.hpp"
#include "dcsgrid/engine/engine.hpp"
#include "dcsgrid/io/structure/read.hpp"
#include "report.hpp"

namespace dcsgrid::bench {
namespace {

namespace fs = std::filesystem;

// The atoms as PDB records with the radius in the occupancy column, for FreeSASA.
void write_radius_pdb(const AtomSet& atoms, const fs::path& path) {
  std::ofstream out(path);
  char line[96];
  for (std::size_t a = 0; a < atoms.size(); ++a) {
    std::snprintf(line, sizeof line, "ATOM  %5zu  C   ALA A%4zu    %8.3f%8.3f%8.3f%6.3f  0.00           C\n",
                  (a + 1) % 100000, (a / 10 + 1) % 10000, atoms.x[a], atoms.y[a], atoms.z[a], atoms.r[a]);
    out << line;
  }
  out << "END\n";
}

double seconds_of(const std::string& command) {
  const auto t0 = std::chrono::steady_clock::now();
  if (std::system(command.c_str()) != 0) return -1;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// FreeSASA's total SAS area (Lee–Richards, 0.05 Å slices) and its time, or -1 without it.
std::pair<double, double> freesasa_area(const AtomSet& atoms, double probe) {
  const fs::path dir = fs::temp_directory_path() / ("bench_surface_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  write_radius_pdb(atoms, dir / "atoms.pdb");
  const std::string command = "freesasa --lee-richards --resolution=80 --radius-from-occupancy --hydrogen "
                              "--hetatm --probe-radius=" + std::to_string(probe) + " --format=json " +
                              (dir / "atoms.pdb").string() + " > " + (dir / "out.json").string() + " 2>/dev/null";
  const double s = seconds_of(command);
  double area = -1;
  if (s >= 0) {
    const auto json = nlohmann::json::parse(std::ifstream(dir / "out.json"));
    area = json["results"][0]["structure"][0]["area"]["total"].get<double>();
  }
  fs::remove_all(dir);
  return {area, s};
}

}  // namespace
}  // namespace dcsgrid::bench

int main(int argc, char** argv) {
  using namespace dcsgrid;
  std::string pqr = DCSGRID_SOURCE_DIR "/data/1tii_pdb2pqr_amber.pqr.gz", binary;
  std::vector<double> spacings = {0.5, 0.25};
  std::vector<std::string> devices = {"cpu"};
  std::string process_args;
  std::vector<analysis::SurfaceKind> kinds = {analysis::SurfaceKind::ses, analysis::SurfaceKind::sas};
  int repeats = 1;
  if (engine::gpu_available()) devices.push_back("gpu");
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--pqr") pqr = argv[i + 1];
    else if (std::string(argv[i]) == "--dcsgrid") binary = argv[i + 1];
    else if (std::string(argv[i]) == "--spacings") {
      spacings.clear();
      for (const std::string& h : split_list(argv[i + 1])) spacings.push_back(std::stod(h));
    } else if (std::string(argv[i]) == "--devices") devices = split_list(argv[i + 1]);
    else if (std::string(argv[i]) == "--process-args") process_args = argv[i + 1];
    else if (std::string(argv[i]) == "--kinds") {
      kinds.clear();
      for (const std::string& k : split_list(argv[i + 1])) kinds.push_back(analysis::parse_surface_kind(k));
    }
    else if (std::string(argv[i]) == "--repeats") repeats = std::stoi(argv[i + 1]);
  }
  const AtomSet atoms = io::read_structure(pqr).atoms;
  bench::Report report("surface", {"what", "spacing_A", "seconds", "area_A2", "vertices", "faces"});
  report.set_context("input", pqr);
  report.set_context("atoms", atoms.size());
  report.set_context("machine", bench::cpu_description());
  double sas_area = 0;
  for (const auto kind : kinds)
    for (const double h : spacings)
      for (const std::string& device : devices) {
        TriangleMesh mesh;
        const double s = bench::best_seconds(1, [&] { mesh = analysis::molecular_surface(atoms, {kind, 1.4, h}, device); });
        const double area = analysis::mesh_area(mesh);
        if (kind == analysis::SurfaceKind::sas && h == 0.5) sas_area = area;
        report.add_row({"dcsgrid " + analysis::surface_kind_name(kind) + " (" + device + ")", h, s, area,
                        mesh.vertices.size(), mesh.faces.size()});
      }
  const auto [free_area, free_seconds] = atoms.size() <= 100000 ? bench::freesasa_area(atoms, 1.4)
                                                                 : std::pair<double, double>{-1, -1};
  if (free_seconds >= 0) {
    report.add_row({"freesasa sas (lee-richards)", nullptr, free_seconds, free_area, nullptr, nullptr});
    report.set_context("sas_area_vs_freesasa", sas_area / free_area - 1);
  }
  if (!binary.empty()) {
    const std::string out = (std::filesystem::temp_directory_path() / "bench_surface_residues.csv").string();
    for (int r = 0; r < repeats; ++r) {
      const double s = bench::seconds_of(binary + " surface " + pqr + " -o " + out + " -q " + process_args);
      report.add_row({"dcsgrid surface process (ses, potential, residue table) " + process_args, 0.5, s, nullptr,
                      nullptr, nullptr});
    }
    std::filesystem::remove(out);
  }
  report.finish();
}
