// Makes the derived files in data/ with gemmi (see data/README.md):
//   make_derived cif IN.pdb OUT.cif              the same structure as mmCIF
//   make_derived models N IN.pdb OUT.pdb|OUT.cif N models; model k is model 1 moved by
//                                                (k-1) * (10, -5, 2.5) Å
// Build (USE_STD_SNPRINTF: Debian ships gemmi without its stb_sprintf copy):
//   g++ -std=c++20 -O1 -DGEMMI_WRITE_IMPLEMENTATION -DUSE_STD_SNPRINTF data/tools/make_derived.cpp
//   \
//       -lz -o make_derived
#include <fstream>
#include <iostream>
#include <string>

#include <gemmi/gz.hpp>
#include <gemmi/mmread.hpp>
#include <gemmi/to_cif.hpp>
#include <gemmi/to_mmcif.hpp>
#include <gemmi/to_pdb.hpp>

namespace {

void write(const gemmi::Structure& st, const std::string& path) {
  std::ofstream out(path);
  if (path.ends_with(".cif"))
    gemmi::cif::write_cif_to_stream(out, gemmi::make_mmcif_document(st));
  else
    gemmi::write_pdb(st, out);
  if (!out) throw std::runtime_error("cannot write " + path);
}

gemmi::Structure with_models(gemmi::Structure st, int n) {
  st.models.erase(st.models.begin() + 1, st.models.end());
  for (int k = 1; k < n; ++k) {
    gemmi::Model m = st.models[0];
    m.name = std::to_string(k + 1);
    for (gemmi::Chain& ch : m.chains)
      for (gemmi::Residue& r : ch.residues)
        for (gemmi::Atom& a : r.atoms) a.pos += gemmi::Position(10.0 * k, -5.0 * k, 2.5 * k);
    st.models.push_back(std::move(m));
  }
  return st;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "cif" && argc == 4) {
      write(gemmi::read_structure(gemmi::MaybeGzipped(argv[2])), argv[3]);
    } else if (mode == "models" && argc == 5) {
      write(with_models(gemmi::read_structure(gemmi::MaybeGzipped(argv[3])), std::stoi(argv[2])),
            argv[4]);
    } else {
      std::cerr << "usage: make_derived cif IN OUT.cif | make_derived models N IN OUT\n";
      return 2;
    }
  } catch (const std::exception& e) {
    std::cerr << e.what() << '\n';
    return 1;
  }
}
