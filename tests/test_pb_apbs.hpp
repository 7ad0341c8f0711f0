// APBS run by the tests as the independent implementation of Poisson–Boltzmann (Debian apbs).
#pragma once
#include <array>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <utility>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/engine/pb.hpp"
#include "dcsgrid/io/maps/io.hpp"

namespace dcsgrid::test {

inline bool have_apbs() { return std::system("command -v apbs > /dev/null 2>&1") == 0; }

inline std::string read_apbs_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs APBS's mg-manual on pqr with grid and options (smol or mol, spl2 or spl0, mdh or zero,
// linear); returns its map (none without write_map, for timings) and its total energy (kJ/mol).
// With coarse_size, APBS's mg-auto: grid is the fine grid (fglen, fgcent), the coarse one of
// coarse_size centred on the molecule (cglen, cgcent mol 1), the energy the finest grid's.
inline std::pair<io::MapFile, double> run_apbs(const std::filesystem::path& pqr, const GridSpec& grid,
                                        const engine::PbOptions& o, const std::filesystem::path& dir,
                                        double* seconds, const std::array<double, 3>* coarse_size = nullptr,
                                        bool write_map = true) {
  const auto c = [&](int d) { return grid.origin[d] + 0.5 * grid.spacing[d] * double(grid.dims[d] - 1); };
  const auto length = [&](int d) { return grid.spacing[d] * double(grid.dims[d] - 1); };
  std::ostringstream in;
  in.precision(17);
  in << "read\n  mol pqr " << pqr.string() << "\nend\nelec name pb\n  " << (coarse_size ? "mg-auto" : "mg-manual")
     << "\n  dime " << grid.nx() << ' ' << grid.ny() << ' ' << grid.nz() << "\n";
  if (coarse_size)
    in << "  cglen " << (*coarse_size)[0] << ' ' << (*coarse_size)[1] << ' ' << (*coarse_size)[2] << "\n"
       << "  cgcent mol 1\n  fglen " << length(0) << ' ' << length(1) << ' ' << length(2) << "\n"
       << "  fgcent " << c(0) << ' ' << c(1) << ' ' << c(2) << "\n  mol 1\n";
  else
    in << "  grid " << grid.spacing[0] << ' ' << grid.spacing[1] << ' ' << grid.spacing[2] << "\n"
       << "  gcent " << c(0) << ' ' << c(1) << ' ' << c(2) << "\n  mol 1\n";
  in << "  bcfl " << engine::keyword(o.bcfl) << "\n"
     << "  pdie " << o.pdie << "\n  sdie " << o.sdie << "\n";
  for (const engine::PbIon& ion : o.ions)
    in << "  ion charge " << ion.charge << " conc " << ion.concentration << " radius " << ion.radius << "\n";
  in << (o.nonlinear ? "  npbe\n" : "  lpbe\n") << "  srfm " << engine::keyword(o.srfm) << "\n"
     << "  chgm " << engine::keyword(o.chgm) << "\n"
     << "  sdens " << o.sdens << "\n  srad " << o.srad << "\n  swin " << o.swin << "\n  temp " << o.temp
     << "\n"
     << "  calcenergy total\n  calcforce no\n";
  if (write_map) in << "  write pot dx " << (dir / "apbs_pot").string() << "\n";
  in << "end\nquit\n";
  std::ofstream(dir / "apbs.in") << in.str();
  const auto start = std::chrono::steady_clock::now();
  const std::string command = "cd '" + dir.string() + "' && apbs apbs.in > apbs.out 2>&1";
  if (std::system(command.c_str()) != 0) throw Error("apbs failed: see " + (dir / "apbs.out").string());
  *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string out = read_apbs_text(dir / "apbs.out");
  // mg-auto prints each level's energy, the finest last.
  const std::regex energy(R"(Total electrostatic energy = ([-+0-9.eE]+) kJ/mol)");
  std::smatch m;
  for (auto it = std::sregex_iterator(out.begin(), out.end(), energy); it != std::sregex_iterator(); ++it) m = *it;
  if (m.empty()) throw Error("no energy in " + (dir / "apbs.out").string());
  if (!write_map) return {io::MapFile{}, std::stod(m[1].str())};
  // APBS built with MPI names the map after its rank.
  const auto map = std::filesystem::exists(dir / "apbs_pot.dx") ? dir / "apbs_pot.dx" : dir / "apbs_pot-PE0.dx";
  return {io::read_dx(map), std::stod(m[1].str())};
}

}  // namespace dcsgrid::test
