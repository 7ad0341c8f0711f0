// dcsgrid merge PARTS... -o FRAMES.h5: the parts of a sharded batch (batch --shard I/N) joined
// into one batch file (analysis::merge_batch_parts).
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "dcsgrid/analysis/batch_merge.hpp"
#include "dcsgrid/cli/commands.hpp"
#include "shared_options.hpp"

namespace dcsgrid::cli {

namespace {

const char* kExamples = R"(Examples:
  dcsgrid batch @frames.txt -o part_$SLURM_ARRAY_TASK_ID.h5 --shard $SLURM_ARRAY_TASK_ID/16
  dcsgrid merge part_*.h5 -o frames.h5          the 16 parts as one batch file (no copy)
  dcsgrid merge part_*.h5 -o frames.h5 --copy   the same, the maps copied into it

Without --copy, frames.h5's /potential is an HDF5 virtual dataset over the parts' (any HDF5
reader, h5py among them, reads it as an ordinary dataset): keep the parts beside it (they are
found relative to its folder), or move them together. The frame table and the statistics are
copied either way. The parts must be every shard of one batch, made with the same options.)";

}  // namespace

int merge_command(int argc, char** argv) {
  CLI::App app{"dcsgrid merge: the parts of a sharded batch (batch --shard I/N) as one batch file",
               "dcsgrid merge"};
  app.footer(kExamples);
  analysis::MergeOptions options;
  MessageOptions messages;
  std::vector<std::string> parts;
  app.add_option("parts", parts, "The parts (.h5 files written by batch --shard), in any order")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("-o,--output", options.output, "Merged batch file to write (.h5)")->required();
  app.add_flag("--copy", options.copy, "Copy the maps into the merged file (else: refer to the parts)");
  app.add_flag("--overwrite", options.overwrite, "Replace an existing output");
  add_message_options(app, messages, "Print the summary as JSON on stdout");
  if (const auto status = parse_and_set_up_logging(app, argc, argv, messages)) return *status;
  options.parts.assign(parts.begin(), parts.end());

  const analysis::MergeResult r = analysis::merge_batch_parts(options);
  if (messages.json)
    std::printf("%s\n", nlohmann::json{{"output", options.output.string()},
                                       {"parts", r.parts},
                                       {"frames", r.frames},
                                       {"complete", r.complete},
                                       {"failed", r.failed},
                                       {"pending", r.pending},
                                       {"copied", options.copy}}
                            .dump(2)
                            .c_str());
  else if (!messages.quiet)
    std::fprintf(stderr, "merge: %zu parts, %zu frames (%zu complete, %zu failed, %zu pending) in %s%s\n",
                 r.parts, r.frames, r.complete, r.failed, r.pending, options.output.c_str(),
                 options.copy ? "" : " (maps in the parts)");
  return 0;
}

}  // namespace dcsgrid::cli
