// Streams built from readers: several files one after the other, and a frame selection.
#include <algorithm>
#include <charconv>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/trajectory/trajectory.hpp"

namespace dcsgrid::io {
namespace {

class ChainedTrajectory final : public TrajectoryReader, public IndexedTrajectory {
 public:
  explicit ChainedTrajectory(const std::vector<std::filesystem::path>& paths);
  std::size_t atom_count() const override { return atoms_; }
  bool next(float* xyz, FrameInfo& info) override { return step(&xyz, info); }
  bool skip(FrameInfo& info) override { return step(nullptr, info); }
  bool can_seek() const override { return seekable_; }
  void seek(std::int64_t frame) override;
  std::optional<std::int64_t> frame_count() const override;
  std::vector<std::string> files() const override;
  bool needs_index(std::size_t file) const override { return needs_index_.at(file); }
  const std::vector<std::uint64_t>& frame_offsets(std::size_t file) override;
  void set_frame_offsets(std::vector<std::uint64_t> offsets, std::size_t file) override;

 private:
  bool step(float* const* xyz, FrameInfo& info);
  void open(std::size_t k);
  std::int64_t count_of(std::size_t k);

  std::vector<std::filesystem::path> paths_;
  std::vector<std::optional<std::int64_t>> counts_;  // complete frames per file, once known
  std::vector<char> needs_index_;                    // per file: XTC, TRR
  std::vector<std::optional<std::vector<std::uint64_t>>> offsets_;  // their indexes, once known
  std::unique_ptr<TrajectoryReader> current_;
  std::size_t k_ = 0;              // current file
  std::int64_t before_ = 0;        // frames in the files before it
  std::int64_t passed_ = 0;        // frames passed in it
  std::size_t atoms_ = 0;
  bool seekable_ = true;
};

ChainedTrajectory::ChainedTrajectory(const std::vector<std::filesystem::path>& paths)
    : paths_(paths), counts_(paths.size()), needs_index_(paths.size()), offsets_(paths.size()) {
  if (paths.empty()) throw Error("no trajectory files given");
  // Every header is read now, so a wrong file fails before any work is done.
  for (std::size_t k = 0; k < paths.size(); ++k) {
    auto reader = open_trajectory(paths[k]);
    if (k == 0) atoms_ = reader->atom_count();
    else if (reader->atom_count() != atoms_)
      throw InputError(paths[k].string(), 0,
                       "has " + std::to_string(reader->atom_count()) + " atoms but " +
                           paths[0].string() + " has " + std::to_string(atoms_));
    counts_[k] = reader->frame_count();
    needs_index_[k] = as_indexed(*reader) != nullptr;
    seekable_ = seekable_ && reader->can_seek();
  }
  open(0);
}

void ChainedTrajectory::open(std::size_t k) {
  current_.reset();
  current_ = open_trajectory(paths_[k]);
  if (offsets_[k]) as_indexed(*current_)->set_frame_offsets(*offsets_[k]);
  k_ = k;
  passed_ = 0;
}

const std::vector<std::uint64_t>& ChainedTrajectory::frame_offsets(std::size_t file) {
  if (!needs_index(file)) throw Error(paths_[file].string() + ": this format needs no frame index");
  if (!offsets_[file]) {
    auto reader = open_trajectory(paths_[file]);
    offsets_[file] = as_indexed(*reader)->frame_offsets();
    counts_[file] = std::int64_t(offsets_[file]->size());
  }
  return *offsets_[file];
}

void ChainedTrajectory::set_frame_offsets(std::vector<std::uint64_t> offsets, std::size_t file) {
  if (!needs_index(file)) throw Error(paths_[file].string() + ": this format needs no frame index");
  as_indexed(*open_trajectory(paths_[file]))->set_frame_offsets(offsets);  // checks it
  if (current_ && file == k_) as_indexed(*current_)->set_frame_offsets(offsets);
  counts_[file] = std::int64_t(offsets.size());
  offsets_[file] = std::move(offsets);
}

bool ChainedTrajectory::step(float* const* xyz, FrameInfo& info) {
  while (true) {
    if (current_) {
      const bool ok = xyz ? current_->next(*xyz, info) : current_->skip(info);
      if (ok) {
        ++passed_;
        info.file = k_;
        info.serial = before_ + passed_ - 1;
        return true;
      }
      const auto& lost = current_->truncations();
      truncations_.insert(truncations_.end(), lost.begin(), lost.end());
      if (!counts_[k_]) counts_[k_] = passed_;
      current_.reset();
    }
    if (k_ + 1 >= paths_.size()) return false;
    before_ += *counts_[k_];
    open(k_ + 1);
  }
}

std::int64_t ChainedTrajectory::count_of(std::size_t k) {
  if (!counts_[k] && needs_index(k)) frame_offsets(k);
  if (!counts_[k]) throw Error(paths_[k].string() + ": cannot count its frames to seek");
  return *counts_[k];
}

void ChainedTrajectory::seek(std::int64_t frame) {
  if (!seekable_) TrajectoryReader::seek(frame);
  for (std::size_t k = 0; k < paths_.size(); ++k) count_of(k);  // so frame_count() is known
  std::int64_t before = 0;
  std::size_t k = 0;
  for (; k + 1 < paths_.size() && frame >= before + *counts_[k]; ++k) before += *counts_[k];
  if (k != k_ || !current_) open(k);
  before_ = before;
  current_->seek(frame - before);
  passed_ = frame - before;
}

std::optional<std::int64_t> ChainedTrajectory::frame_count() const {
  std::int64_t total = 0;
  for (const auto& count : counts_) {
    if (!count) return std::nullopt;
    total += *count;
  }
  return total;
}

std::vector<std::string> ChainedTrajectory::files() const {
  std::vector<std::string> names;
  for (const auto& p : paths_) names.push_back(p.string());
  return names;
}

class SelectedTrajectory final : public TrajectoryReader {
 public:
  SelectedTrajectory(std::unique_ptr<TrajectoryReader> inner, const FrameSelection& selection)
      : inner_(std::move(inner)), selection_(selection), target_(selection.start) {}
  std::size_t atom_count() const override { return inner_->atom_count(); }
  bool next(float* xyz, FrameInfo& info) override {
    return reach_target() && finish(inner_->next(xyz, info));
  }
  bool skip(FrameInfo& info) override { return reach_target() && finish(inner_->skip(info)); }
  bool can_seek() const override { return inner_->can_seek(); }
  // Frame k of the selection (start + k·step of the stream).
  void seek(std::int64_t frame) override {
    target_ = selection_.start + std::max<std::int64_t>(frame, 0) * selection_.step;
    inner_->seek(target_);
    position_ = target_;
  }
  std::optional<std::int64_t> frame_count() const override;
  std::vector<std::string> files() const override { return inner_->files(); }

 private:
  bool reach_target();
  bool finish(bool ok) {
    truncations_ = inner_->truncations();
    if (!ok) return false;
    ++position_;
    target_ += selection_.step;
    return true;
  }

  std::unique_ptr<TrajectoryReader> inner_;
  FrameSelection selection_;
  std::int64_t position_ = 0;  // stream number of the frame the inner reader gives next
  std::int64_t target_;        // stream number of the next selected frame
};

// Passes the frames before the target: one seek where the stream can, else skip() each.
bool SelectedTrajectory::reach_target() {
  if (selection_.stop && target_ >= *selection_.stop) return false;
  if (target_ == position_) return true;
  if (inner_->can_seek() && inner_->frame_count()) {
    if (target_ >= *inner_->frame_count()) return false;
    inner_->seek(target_);
    position_ = target_;
    return true;
  }
  for (; position_ < target_; ++position_)
    if (!inner_->skip()) {
      truncations_ = inner_->truncations();
      return false;
    }
  return true;
}

std::optional<std::int64_t> SelectedTrajectory::frame_count() const {
  const auto total = inner_->frame_count();
  if (!total) return std::nullopt;
  const std::int64_t end = selection_.stop ? std::min(*selection_.stop, *total) : *total;
  if (end <= selection_.start) return 0;
  return (end - selection_.start + selection_.step - 1) / selection_.step;
}

}  // namespace

std::unique_ptr<TrajectoryReader> open_trajectories(const std::vector<std::filesystem::path>& paths) {
  if (paths.size() == 1) return open_trajectory(paths[0]);
  return std::make_unique<ChainedTrajectory>(paths);
}

bool FrameSelection::contains(std::int64_t frame) const {
  return frame >= start && (!stop || frame < *stop) && (frame - start) % step == 0;
}

FrameSelection parse_frame_selection(const std::string& text) {
  const auto bad = [&](const std::string& why) {
    throw Error("--frames '" + text + "': " + why + " (expected START:STOP:STEP, e.g. 0:1000:10)");
  };
  std::vector<std::string> parts{""};
  for (char c : text) {
    if (c == ':') parts.emplace_back();
    else parts.back().push_back(c);
  }
  if (parts.size() > 3) bad("more than three fields");
  std::vector<std::optional<std::int64_t>> values;
  for (const auto& part : parts) {
    if (part.empty()) {
      values.emplace_back();
      continue;
    }
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (ec != std::errc() || end != part.data() + part.size()) bad("'" + part + "' is not an integer");
    if (v < 0) bad("frame numbers and the step are not negative");
    values.push_back(v);
  }
  FrameSelection s;
  s.start = values[0].value_or(0);
  if (parts.size() == 1) {
    if (!values[0]) bad("empty");
    s.stop = s.start + 1;  // one frame
    return s;
  }
  s.stop = values[1];
  if (parts.size() == 3 && values[2]) s.step = *values[2];
  if (s.step < 1) bad("the step must be 1 or more");
  if (s.stop && *s.stop < s.start) bad("STOP is before START");
  return s;
}

std::unique_ptr<TrajectoryReader> select_frames(std::unique_ptr<TrajectoryReader> reader,
                                                const FrameSelection& selection) {
  if (selection.start == 0 && !selection.stop && selection.step == 1) return reader;
  return std::make_unique<SelectedTrajectory>(std::move(reader), selection);
}

}  // namespace dcsgrid::io
