// Resuming a batch (private to src/app): the options a batch file records when it is made, and the
// check that a resumed run agrees with them and that the inputs of its complete frames are unchanged.
#pragma once
#include <atomic>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dcsgrid/analysis/batch_file.hpp"
#include "dcsgrid/app/batch.hpp"

namespace dcsgrid::app {

// The options a resume must agree with, as JSON (stored in the file).
nlohmann::json options_fingerprint(const BatchOptions& o, const std::vector<std::string>& files);

// The checksum of each input file as it is now ("" when it cannot be read).
using Checksums = std::map<std::string, std::string>;

// Throws Error naming the first option whose value in `recorded_json` (what made `file`) differs
// from the fingerprint now.
void require_same_options(const std::filesystem::path& file, const std::string& recorded_json,
                          const nlohmann::json& fingerprint);

// The SHA-256 of each input file as it is now ("" when it cannot be read, or when *stop became true
// before its end).
Checksums input_checksums(const std::vector<std::string>& files, const std::atomic<bool>* stop = nullptr);

// Checks an existing batch for resume: the options must match what made it, and the inputs of
// complete frames must be unchanged. Returns the inputs' checksums now, for the frames to come.
// Throws Error naming the first option that differs or the first input that changed.
Checksums check_resume(const analysis::BatchFile& file, const nlohmann::json& fingerprint,
                       const std::vector<std::string>& files);

}  // namespace dcsgrid::app
