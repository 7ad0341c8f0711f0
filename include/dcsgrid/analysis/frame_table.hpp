// The frame table of a batch in memory: one compact row per frame, so that a batch of 10^6
// trajectory frames holds tens of megabytes for it, not a copy of every path and checksum a frame.
// Paths and SHA-256 checksums are held once, in a list of sources that rows point into; so are
// the distinct (atom count, total charge) outcomes (a trajectory's frames share one); failure
// messages are held aside, for failed frames only. One table serves the batch pipeline and the
// batch file (BatchFile::frames()); its on-disk form is the /frames group (batch_file.hpp).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

#include "dcsgrid/core/cell.hpp"

namespace dcsgrid::analysis {

// missing: a frame the input announced but does not hold (the cut-off frame of a truncated
// trajectory read with --allow-truncated), kept as a row so the table shows the gap; never computed.
enum class FrameStatus : std::int8_t { pending = 0, complete = 1, failed = 2, missing = 3 };
std::string status_name(FrameStatus status);

// A unit cell as the table keeps it: a, b, c (Å), α, β, γ (degrees).
using CellParameters = std::array<double, 6>;
inline std::optional<CellParameters> cell_parameters(const std::optional<UnitCell>& c) {
  if (!c) return std::nullopt;
  return CellParameters{c->lengths[0], c->lengths[1], c->lengths[2], c->angles[0], c->angles[1], c->angles[2]};
}

// One frame's row, whole: what readers get from the table, and what writers give it.
struct FrameRecord {
  std::string source;      // input file as given
  int model = 1;           // model number in the file
  std::string input_sha256;
  std::size_t atom_count = 0;
  double total_charge = 0;
  FrameStatus status = FrameStatus::pending;
  std::string message;     // why it failed (truncated to 255 bytes in the file)
  std::int64_t frame_index = -1;  // trajectories: the frame's number in `source`, from 0
  double time_ps = std::numeric_limits<double>::quiet_NaN();  // trajectories: simulation time
  // A solved frame's (pb) total electrostatic energy and, with solvation, its solvation energy,
  // kJ/mol; NaN where the method solves nothing (or no solvation was asked).
  double energy_kj_per_mol = std::numeric_limits<double>::quiet_NaN();
  double solvation_kj_per_mol = std::numeric_limits<double>::quiet_NaN();
  // The frame's unit cell: the one a periodic method computed with, else the frame's own (a
  // trajectory frame's box, a structure's CRYST1 or _cell); none for a frame without one.
  std::optional<CellParameters> cell;
};

// An input file as the rows refer to it.
struct FrameSource {
  std::string path;    // as given
  std::string sha256;  // of its contents when the batch was set up (or resumed)
};

class FrameTable {
 public:
  std::size_t size() const { return status_.size(); }
  bool empty() const { return status_.empty(); }
  void reserve(std::size_t rows);
  void shrink_to_fit();

  // The index of source (path, sha256) for rows to refer to: the last one added when it is the
  // same (a file's frames come together), else a new one.
  std::uint32_t source_index(std::string_view path, std::string_view sha256);
  // A pending row of source `source` (an index from source_index).
  void add(std::uint32_t source, int model, std::int64_t frame_index = -1,
           double time_ps = std::numeric_limits<double>::quiet_NaN());
  // A row holding `record` (its source found by source_index).
  void push_back(const FrameRecord& record);
  // Rows [first, end) as a table of their own (a shard's block of the frames).
  FrameTable slice(std::size_t first, std::size_t end) const;
  // Appends every row of `other` (merge).
  void append(const FrameTable& other);

  // Row i whole (copies its source's strings: for reports, not for loops over every frame).
  FrameRecord operator[](std::size_t i) const;
  FrameRecord front() const { return (*this)[0]; }
  FrameRecord back() const { return (*this)[size() - 1]; }

  const std::vector<FrameSource>& sources() const { return sources_; }
  std::uint32_t source_of(std::size_t i) const { return source_[i]; }
  const FrameSource& source(std::size_t i) const { return sources_[source_[i]]; }
  int model(std::size_t i) const { return model_[i]; }
  std::int64_t frame_index(std::size_t i) const { return frame_index_[i]; }
  double time_ps(std::size_t i) const { return time_ps_[i]; }
  std::size_t atom_count(std::size_t i) const { return outcomes_[outcome_[i]].atom_count; }
  double total_charge(std::size_t i) const { return outcomes_[outcome_[i]].total_charge; }
  FrameStatus status(std::size_t i) const { return status_[i]; }
  const std::string& message(std::size_t i) const;  // "" unless the frame failed or is missing
  double energy_kj_per_mol(std::size_t i) const;     // NaN unless the frame was solved
  double solvation_kj_per_mol(std::size_t i) const;  // NaN unless its solvation was solved
  std::optional<CellParameters> cell(std::size_t i) const;
  std::size_t count(FrameStatus status) const;

  // What computing row i gave: its status, atom count and total charge, and the message of a
  // failed or missing frame (cut to 255 bytes, as in the file; dropped for other statuses).
  void set_outcome(std::size_t i, FrameStatus status, std::size_t atom_count, double total_charge,
                   const std::string& message = {});
  void set_sha256(std::uint32_t source, std::string sha256) { sources_[source].sha256 = std::move(sha256); }
  // A solved frame's energies (kJ/mol; NaN for none).
  void set_energies(std::size_t i, double energy_kj_per_mol, double solvation_kj_per_mol);
  void set_cell(std::size_t i, const std::optional<CellParameters>& cell);

  // Rows whole, one at a time.
  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = FrameRecord;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = FrameRecord;
    Iterator(const FrameTable* table, std::size_t i) : table_(table), i_(i) {}
    FrameRecord operator*() const { return (*table_)[i_]; }
    Iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator==(const Iterator& other) const { return i_ == other.i_; }

   private:
    const FrameTable* table_;
    std::size_t i_;
  };
  Iterator begin() const { return {this, 0}; }
  Iterator end() const { return {this, size()}; }

  // The longest text a failure message keeps (the file's fixed-length column, less its zero).
  static constexpr std::size_t kMessageBytes = 255;

 private:
  struct Outcome {
    std::size_t atom_count = 0;
    double total_charge = 0;
  };
  std::uint32_t outcome_index(std::size_t atom_count, double total_charge);

  std::vector<FrameSource> sources_;
  std::vector<Outcome> outcomes_{Outcome{}};  // [0]: none yet
  std::map<std::pair<std::size_t, std::uint64_t>, std::uint32_t> outcome_of_;  // charge's bits
  // Columns, one entry a row (29 bytes a row in all).
  std::vector<std::uint32_t> source_;
  std::vector<std::int32_t> model_;
  std::vector<std::int64_t> frame_index_;
  std::vector<double> time_ps_;
  std::vector<std::uint32_t> outcome_;
  std::vector<FrameStatus> status_;
  std::map<std::size_t, std::string> messages_;  // failed rows only
  std::map<std::size_t, std::pair<double, double>> energies_;  // solved rows only (pb batches are short)
  std::vector<CellParameters> cells_;  // empty until a row has a cell, then one a row (NaN: none)
};

}  // namespace dcsgrid::analysis
