#include "dcsgrid/analysis/frame_table.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "dcsgrid/core/error.hpp"

namespace dcsgrid::analysis {

std::string status_name(FrameStatus status) {
  switch (status) {
    case FrameStatus::pending: return "pending";
    case FrameStatus::complete: return "complete";
    case FrameStatus::failed: return "failed";
    case FrameStatus::missing: return "missing";
  }
  return "?";
}

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr CellParameters kNoCell{kNaN, kNaN, kNaN, kNaN, kNaN, kNaN};
}  // namespace

void FrameTable::reserve(std::size_t rows) {
  source_.reserve(rows);
  model_.reserve(rows);
  frame_index_.reserve(rows);
  time_ps_.reserve(rows);
  outcome_.reserve(rows);
  status_.reserve(rows);
}

void FrameTable::shrink_to_fit() {
  sources_.shrink_to_fit();
  source_.shrink_to_fit();
  model_.shrink_to_fit();
  frame_index_.shrink_to_fit();
  time_ps_.shrink_to_fit();
  cells_.shrink_to_fit();
  outcomes_.shrink_to_fit();
  outcome_.shrink_to_fit();
  status_.shrink_to_fit();
}

std::uint32_t FrameTable::source_index(std::string_view path, std::string_view sha256) {
  if (!sources_.empty() && sources_.back().path == path && sources_.back().sha256 == sha256)
    return std::uint32_t(sources_.size() - 1);
  if (sources_.size() >= std::numeric_limits<std::uint32_t>::max())
    throw Error("a batch takes at most 4294967295 input files");
  sources_.push_back({std::string(path), std::string(sha256)});
  return std::uint32_t(sources_.size() - 1);
}

void FrameTable::add(std::uint32_t source, int model, std::int64_t frame_index, double time_ps) {
  source_.push_back(source);
  model_.push_back(model);
  frame_index_.push_back(frame_index);
  time_ps_.push_back(time_ps);
  outcome_.push_back(0);
  status_.push_back(FrameStatus::pending);
  if (!cells_.empty()) cells_.push_back(kNoCell);
}

void FrameTable::push_back(const FrameRecord& r) {
  add(source_index(r.source, r.input_sha256), r.model, r.frame_index, r.time_ps);
  set_outcome(size() - 1, r.status, r.atom_count, r.total_charge, r.message);
  set_energies(size() - 1, r.energy_kj_per_mol, r.solvation_kj_per_mol);
  set_cell(size() - 1, r.cell);
}

FrameTable FrameTable::slice(std::size_t first, std::size_t end) const {
  FrameTable part;
  part.reserve(end - first);
  for (std::size_t i = first; i < end; ++i) {
    const FrameSource& s = source(i);
    part.add(part.source_index(s.path, s.sha256), model_[i], frame_index_[i], time_ps_[i]);
    part.set_outcome(i - first, status_[i], atom_count(i), total_charge(i), message(i));
    part.set_energies(i - first, energy_kj_per_mol(i), solvation_kj_per_mol(i));
    part.set_cell(i - first, cell(i));
  }
  return part;
}

void FrameTable::append(const FrameTable& other) {
  reserve(size() + other.size());
  for (std::size_t i = 0; i < other.size(); ++i) {
    const FrameSource& s = other.source(i);
    add(source_index(s.path, s.sha256), other.model_[i], other.frame_index_[i], other.time_ps_[i]);
    set_outcome(size() - 1, other.status_[i], other.atom_count(i), other.total_charge(i),
                other.message(i));
    set_energies(size() - 1, other.energy_kj_per_mol(i), other.solvation_kj_per_mol(i));
    set_cell(size() - 1, other.cell(i));
  }
}

FrameRecord FrameTable::operator[](std::size_t i) const {
  FrameRecord r;
  r.source = source(i).path;
  r.input_sha256 = source(i).sha256;
  r.model = model_[i];
  r.frame_index = frame_index_[i];
  r.time_ps = time_ps_[i];
  r.atom_count = atom_count(i);
  r.total_charge = total_charge(i);
  r.status = status_[i];
  r.message = message(i);
  r.energy_kj_per_mol = energy_kj_per_mol(i);
  r.solvation_kj_per_mol = solvation_kj_per_mol(i);
  r.cell = cell(i);
  return r;
}

std::optional<CellParameters> FrameTable::cell(std::size_t i) const {
  if (cells_.empty() || std::isnan(cells_[i][0])) return std::nullopt;
  return cells_[i];
}

void FrameTable::set_cell(std::size_t i, const std::optional<CellParameters>& cell) {
  if (!cell && cells_.empty()) return;
  if (cells_.empty()) cells_.assign(size(), kNoCell);
  cells_[i] = cell ? *cell : kNoCell;
}

double FrameTable::energy_kj_per_mol(std::size_t i) const {
  const auto it = energies_.find(i);
  return it == energies_.end() ? kNaN : it->second.first;
}

double FrameTable::solvation_kj_per_mol(std::size_t i) const {
  const auto it = energies_.find(i);
  return it == energies_.end() ? kNaN : it->second.second;
}

void FrameTable::set_energies(std::size_t i, double energy_kj_per_mol, double solvation_kj_per_mol) {
  if (std::isnan(energy_kj_per_mol) && std::isnan(solvation_kj_per_mol))
    energies_.erase(i);
  else
    energies_[i] = {energy_kj_per_mol, solvation_kj_per_mol};
}

const std::string& FrameTable::message(std::size_t i) const {
  static const std::string none;
  const auto it = messages_.find(i);
  return it == messages_.end() ? none : it->second;
}

std::size_t FrameTable::count(FrameStatus status) const {
  return std::size_t(std::count(status_.begin(), status_.end(), status));
}

void FrameTable::set_outcome(std::size_t i, FrameStatus status, std::size_t atom_count,
                             double total_charge, const std::string& message) {
  status_[i] = status;
  outcome_[i] = outcome_index(atom_count, total_charge);
  if (status == FrameStatus::failed || status == FrameStatus::missing)
    messages_[i] = message.substr(0, kMessageBytes);
  else
    messages_.erase(i);
}

std::uint32_t FrameTable::outcome_index(std::size_t atom_count, double total_charge) {
  const std::pair key(atom_count, std::bit_cast<std::uint64_t>(total_charge));
  const Outcome& last = outcomes_.back();
  if (last.atom_count == atom_count &&
      std::bit_cast<std::uint64_t>(last.total_charge) == key.second)
    return std::uint32_t(outcomes_.size() - 1);
  if (key == std::pair(std::size_t(0), std::uint64_t(0))) return 0;
  if (const auto it = outcome_of_.find(key); it != outcome_of_.end()) return it->second;
  if (outcomes_.size() >= std::numeric_limits<std::uint32_t>::max())
    throw Error("a batch table holds at most 4294967295 distinct atom counts and charges");
  outcomes_.push_back({atom_count, total_charge});
  outcome_of_.emplace(key, std::uint32_t(outcomes_.size() - 1));
  return std::uint32_t(outcomes_.size() - 1);
}

}  // namespace dcsgrid::analysis
