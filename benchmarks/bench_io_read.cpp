// Structure reading speed against awk summing four columns of the same file (issue 16's baseline),
// serial (1 thread) and parallel (all threads), for PQR, PDBQT, XYZ and gzipped PQR made from one
// water box; PDB and mmCIF against gemmi's own readers, PDB also gemmi in chunks on all threads;
// optionally the whole `dcsgrid FILE -o x.h5 --spacing 20` process.
//   bench_io_read [--atoms N (742875)] [--pqr FILE (instead of the water box)] [--dcsgrid BINARY]
// Threads: OMP_NUM_THREADS. Writes io_read.json (see report.hpp).
#include <omp.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gemmi/cif.hpp>
#include <gemmi/mmcif.hpp>
#include <gemmi/pdb.hpp>
#include <iterator>
#include <string>

#include "dcsgrid/core/waterbox.hpp"
#include "dcsgrid/io/structure/read.hpp"
#include "io/text/chunks.hpp"
#include "io/structure/pdb_chunks.hpp"
#include "report.hpp"

namespace dcsgrid::bench {
namespace {

namespace fs = std::filesystem;
constexpr int kRepeats = 3;

std::string pqr_text(const AtomSet& a) {
  std::string text;
  char line[128];
  for (std::size_t i = 0; i < a.size(); ++i) {
    const bool oxygen = i % 3 == 0;
    std::snprintf(line, sizeof line, "ATOM %6zu  %-3s %4s %5zu     %8.3f %8.3f %8.3f %6.3f %5.3f\n",
                  (i + 1) % 1000000, oxygen ? "OH2" : (i % 3 == 1 ? "H1" : "H2"), "TIP3",
                  (i / 3 + 1) % 100000, a.x[i], a.y[i], a.z[i], a.q[i], oxygen ? 1.52 : 1.0);
    text += line;
  }
  return text;
}

std::string pdbqt_text(const AtomSet& a) {
  std::string text;
  char line[128];
  for (std::size_t i = 0; i < a.size(); ++i) {
    std::snprintf(line, sizeof line,
                  "ATOM  %5zu %-4s HOH A%4zu    %8.3f%8.3f%8.3f  1.00  0.00    %+6.3f %-2s\n",
                  (i + 1) % 100000, i % 3 == 0 ? " O" : " H", (i / 3 + 1) % 10000, a.x[i], a.y[i],
                  a.z[i], a.q[i], i % 3 == 0 ? "OA" : "HD");
    text += line;
  }
  return text;
}

// The box as TIP3P waters of a PDB file (AMBER's WAT residue), for the gemmi-based reader.
std::string pdb_text(const AtomSet& a) {
  std::string text;
  char line[96];
  static const char* kNames[3] = {" O  ", " H1 ", " H2 "};
  for (std::size_t i = 0; i < a.size(); ++i) {
    std::snprintf(line, sizeof line,
                  "HETATM%5zu %-4s WAT W%4zu    %8.3f%8.3f%8.3f  1.00  0.00           %s\n",
                  (i + 1) % 100000, kNames[i % 3], (i / 3 + 1) % 10000, a.x[i], a.y[i], a.z[i],
                  i % 3 == 0 ? "O" : "H");
    text += line;
  }
  return text;
}

// The box as the waters of an mmCIF _atom_site loop (the columns the PDB archive writes), in chains
// of 1,000 waters: gemmi 0.5.7 finds a residue by a linear search of its chain, which takes
// minutes for 2.5e5 waters in one chain (docs/performance.md).
std::string mmcif_text(const AtomSet& a) {
  std::string text =
      "data_box\nloop_\n_atom_site.group_PDB\n_atom_site.id\n_atom_site.type_symbol\n"
      "_atom_site.label_atom_id\n_atom_site.label_alt_id\n_atom_site.label_comp_id\n"
      "_atom_site.label_asym_id\n_atom_site.label_entity_id\n_atom_site.label_seq_id\n"
      "_atom_site.pdbx_PDB_ins_code\n_atom_site.Cartn_x\n_atom_site.Cartn_y\n_atom_site.Cartn_z\n"
      "_atom_site.occupancy\n_atom_site.B_iso_or_equiv\n_atom_site.pdbx_formal_charge\n"
      "_atom_site.auth_seq_id\n_atom_site.auth_asym_id\n_atom_site.pdbx_PDB_model_num\n";
  char line[128];
  static const char* kNames[3] = {"O", "H1", "H2"};
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::size_t water = i / 3, chain = water / 1000;
    std::snprintf(line, sizeof line,
                  "HETATM %zu %s %s . WAT W%zu 1 . ? %.3f %.3f %.3f 1 0 ? %zu W%zu 1\n", i + 1,
                  i % 3 == 0 ? "O" : "H", kNames[i % 3], chain, a.x[i], a.y[i], a.z[i],
                  water % 1000 + 1, chain);
    text += line;
  }
  return text;
}

std::string xyz_text(const AtomSet& a) {
  std::string text = std::to_string(a.size()) + "\nwater box\n";
  char line[96];
  for (std::size_t i = 0; i < a.size(); ++i) {
    std::snprintf(line, sizeof line, "%s %.4f %.4f %.4f %.4f\n", i % 3 == 0 ? "O" : "H", a.x[i],
                  a.y[i], a.z[i], a.q[i]);
    text += line;
  }
  return text;
}

struct Timing {
  double wall = 1e300, cpu = 0;  // the fastest run's wall-clock and CPU seconds (all threads)
};

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

// The machine may be shared: CPU seconds give the per-thread speed that a busy machine hides.
template <typename F>
Timing best_timing(F&& fn) {
  fn();
  Timing best;
  for (int r = 0; r < kRepeats; ++r) {
    const double c0 = cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (wall < best.wall) best = {wall, cpu_seconds() - c0};
  }
  return best;
}

double children_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_CHILDREN, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// A shell command's fastest run (wall and the CPU time of its processes); wall < 0 when it fails.
Timing best_command_timing(const std::string& command) {
  Timing best;
  for (int r = 0; r < kRepeats; ++r) {
    const double c0 = children_cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    if (std::system(command.c_str()) != 0) return {-1, 0};
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (wall < best.wall) best = {wall, children_cpu_seconds() - c0};
  }
  return best;
}

std::size_t atom_count(const gemmi::Structure& st) {
  std::size_t n = 0;
  for (const gemmi::Model& m : st.models)
    for (const gemmi::Chain& c : m.chains)
      for (const gemmi::Residue& r : c.residues) n += r.atoms.size();
  return n;
}

std::string whole_file(const fs::path& path) {
  std::string text(fs::file_size(path), '\0');
  std::ifstream(path, std::ios::binary).read(text.data(), std::streamsize(text.size()));
  return text;
}

class Bench {
 public:
  Bench()
      : report_("io_read", {"input", "reader", "threads", "MB", "s", "MB/s", "CPU s", "MB/CPU s",
                            "vs awk", "check"}) {
    report_.set_context("cpu", cpu_description());
    report_.set_context("threads", omp_get_max_threads());
    report_.set_context("timing", "best of " + std::to_string(kRepeats) + " (std::chrono)");
    report_.set_context("awk", "awk '{s+=$7+$8+$9+$10} END {print s}' FILE (PQR only)");
  }

  // One file: awk (for PQR), our reader on 1 thread and on all threads.
  void file(const std::string& label, const fs::path& path, bool run_awk) {
    const double mb = double(fs::file_size(path)) / 1e6;
    double awk = -1;
    if (run_awk) {
      const Timing t = best_command_timing("awk '{s+=$7+$8+$9+$10} END {print s}' '" +
                                           path.string() + "' > /dev/null");
      awk = t.wall;
      add(label, "awk (4 columns summed)", 1, mb, t, awk, "");
    }
    const int all = omp_get_max_threads();
    io::ReadOptions serial_options;
    serial_options.threads = 1;
    const io::Structure serial = io::read_structure(path, serial_options);
    for (const int threads : {1, all}) {
      io::ReadOptions o;
      o.threads = threads == 1 ? 1 : 0;
      io::Structure s;
      const Timing t = best_timing([&] { s = io::read_structure(path, o); });
      const bool same = s.atoms.x == serial.atoms.x && s.atoms.y == serial.atoms.y &&
                        s.atoms.z == serial.atoms.z && s.atoms.q == serial.atoms.q;
      add(label, threads == 1 ? "dcsgrid serial" : "dcsgrid parallel", threads, mb, t, awk,
          std::to_string(s.atoms.size()) + " atoms" + (same ? ", = serial" : ", DIFFERS"));
      if (all == 1) break;
    }
  }

  // PDB or mmCIF: gemmi's own reader (atoms only) against ours (checks, gemmi, AMBER charges),
  // on one thread and on all.
  void macromolecule(const std::string& label, const fs::path& path) {
    const double mb = double(fs::file_size(path)) / 1e6;
    const bool pdb = path.extension() == ".pdb";
    std::size_t gemmi_atoms = 0;
    const Timing g = best_timing([&] {
      gemmi_atoms = atom_count(pdb ? gemmi::read_pdb_file(path.string())
                                   : gemmi::make_structure(gemmi::cif::read_file(path.string())));
    });
    add(label, pdb ? "gemmi::read_pdb_file (no charges)" : "gemmi cif::read_file + make_structure",
        1, mb, g, -1, std::to_string(gemmi_atoms) + " atoms");
    if (pdb) pdb_in_chunks(path, mb);
    for (const int threads : {1, 0}) {
      io::ReadOptions o;
      o.threads = threads;
      io::Structure s;
      const Timing t = best_timing([&] { s = io::read_structure(path, o); });
      add(label, "dcsgrid (checks, gemmi, AMBER charges)", threads == 1 ? 1 : omp_get_max_threads(),
          mb, t, -1,
          std::to_string(s.atoms.size()) + " atoms, " + std::to_string(t.wall / g.wall) +
              "x gemmi's time");
    }
  }

  // gemmi's PDB parse of the text read in, serial and in chunks on all threads (same run).
  void pdb_in_chunks(const fs::path& path, double mb) {
    std::size_t serial_atoms = 0, chunked_atoms = 0;
    const Timing m = best_timing([&] {
      const std::string text = whole_file(path);
      serial_atoms = atom_count(gemmi::read_pdb_from_memory(text.data(), text.size(), "box"));
    });
    add("PDB", "gemmi::read_pdb_from_memory (file read in)", 1, mb, m, -1,
        std::to_string(serial_atoms) + " atoms");
    const int all = omp_get_max_threads();
    const Timing c = best_timing([&] {
      const std::string text = whole_file(path);
      const auto st = io::detail::read_pdb_in_chunks(text, "box",
                                                     io::detail::chunk_count(text.size(), 0));
      chunked_atoms = st ? atom_count(*st) : 0;
    });
    add("PDB", "gemmi in chunks (" + std::to_string(all) + " threads, file read in)", all, mb, c,
        -1, std::to_string(chunked_atoms) + " atoms, " + std::to_string(c.wall / m.wall) +
                "x read_pdb_from_memory's time");
  }

  void process(const fs::path& binary, const fs::path& path) {
    const double mb = double(fs::file_size(path)) / 1e6;
    const fs::path out = fs::temp_directory_path() / "bench_io_read_out.h5";
    const Timing awk = best_command_timing("awk '{s+=$7+$8+$9+$10} END {print s}' '" +
                                           path.string() + "' > /dev/null");
    const Timing t = best_command_timing("rm -f '" + out.string() + "' && '" + binary.string() +
                                         "' '" + path.string() + "' -o '" + out.string() +
                                         "' --spacing 20 > /dev/null 2>&1");
    fs::remove(out);
    add("PQR", "awk (same run as the next row)", 1, mb, awk, awk.wall, "");
    add("PQR", "dcsgrid whole process, --spacing 20", omp_get_max_threads(), mb, t, awk.wall,
        t.wall < 0 ? "FAILED" : "");
  }

  void finish() const { report_.finish(); }

 private:
  void add(const std::string& input, const std::string& reader, int threads, double mb, Timing t,
           double awk, const std::string& check) {
    const auto cpu = t.cpu > 0 ? nlohmann::json(t.cpu) : nlohmann::json("");
    const auto per_cpu = t.cpu > 0 ? nlohmann::json(mb / t.cpu) : nlohmann::json("");
    report_.add_row({input, reader, threads, mb, t.wall, mb / t.wall, cpu, per_cpu,
                     awk > 0 ? nlohmann::json(awk / t.wall) : nlohmann::json(""), check});
  }

  Report report_;
};

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

void write_gzip(const fs::path& path, const std::string& text) {
  gzFile f = gzopen(path.c_str(), "wb1");
  gzwrite(f, text.data(), unsigned(text.size()));
  gzclose(f);
}

int run(int argc, char** argv) {
  std::size_t atoms = 742875;
  fs::path pqr, binary;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--atoms") atoms = std::stoul(argv[i + 1]);
    if (flag == "--pqr") pqr = argv[i + 1];
    if (flag == "--dcsgrid") binary = argv[i + 1];
  }
  const fs::path dir = fs::temp_directory_path() / ("bench_io_read_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const AtomSet box = water_box_atoms(atoms);
  if (pqr.empty()) write_file(pqr = dir / "box.pqr", pqr_text(box));
  write_file(dir / "box.pdbqt", pdbqt_text(box));
  write_file(dir / "box.xyz", xyz_text(box));
  write_file(dir / "box.pdb", pdb_text(box));
  write_file(dir / "box.cif", mmcif_text(box));
  std::ifstream in(pqr, std::ios::binary);
  write_gzip(dir / "box.pqr.gz", std::string(std::istreambuf_iterator<char>(in), {}));

  Bench bench;
  bench.file("PQR", pqr, true);
  bench.file("PQR gzip -1", dir / "box.pqr.gz", false);
  bench.file("PDBQT", dir / "box.pdbqt", false);
  bench.file("XYZ", dir / "box.xyz", false);
  bench.macromolecule("PDB", dir / "box.pdb");
  bench.macromolecule("mmCIF", dir / "box.cif");
  if (!binary.empty()) bench.process(binary, pqr);
  bench.finish();
  fs::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace dcsgrid::bench

int main(int argc, char** argv) { return dcsgrid::bench::run(argc, argv); }
