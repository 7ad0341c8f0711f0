// Small input writers shared by the analysis tests.
#pragma once
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "dcsgrid/core/atoms.hpp"
#include "dcsgrid/core/error.hpp"

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

}  // namespace dcsgrid::test
