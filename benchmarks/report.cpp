#include "report.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <thread>

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

namespace dcsgrid::bench {

Report::Report(std::string benchmark, std::vector<std::string> columns)
    : name_(std::move(benchmark)), columns_(std::move(columns)) {}

void Report::add_row(const std::vector<nlohmann::json>& values) { rows_.push_back(values); }

void Report::set_context(const std::string& key, nlohmann::json value) {
  context_[key] = std::move(value);
}

static std::string cell(const nlohmann::json& v) {
  if (v.is_number_float()) return fmt::format("{:.4g}", v.get<double>());
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

void Report::finish() const {
  std::vector<std::size_t> width(columns_.size());
  for (std::size_t c = 0; c < columns_.size(); ++c) width[c] = columns_[c].size();
  for (const auto& row : rows_)
    for (std::size_t c = 0; c < row.size() && c < width.size(); ++c)
      width[c] = std::max(width[c], cell(row[c]).size());
  std::cout << "\n== " << name_ << "\n";
  for (std::size_t c = 0; c < columns_.size(); ++c) std::cout << fmt::format("{:>{}}  ", columns_[c], width[c]);
  std::cout << "\n";
  for (const auto& row : rows_) {
    for (std::size_t c = 0; c < row.size() && c < width.size(); ++c)
      std::cout << fmt::format("{:>{}}  ", cell(row[c]), width[c]);
    std::cout << "\n";
  }
  nlohmann::json out;
  out["benchmark"] = name_;
  out["context"] = context_;
  out["rows"] = nlohmann::json::array();
  for (const auto& row : rows_) {
    nlohmann::json r;
    for (std::size_t c = 0; c < row.size() && c < columns_.size(); ++c) r[columns_[c]] = row[c];
    out["rows"].push_back(r);
  }
  const char* dir = std::getenv("DCSGRID_BENCH_OUT");
  const std::filesystem::path path = std::filesystem::path(dir ? dir : ".") / (name_ + ".json");
  std::ofstream(path) << out.dump(2) << "\n";
  std::cout << "(written " << path.string() << ")\n";
}

void log_debug() { spdlog::set_level(spdlog::level::debug); }

std::string cpu_description() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, model = "unknown CPU";
  while (std::getline(cpuinfo, line))
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  return fmt::format("{}, {} hardware threads", model, std::thread::hardware_concurrency());
}

}  // namespace dcsgrid::bench
