#!/usr/bin/env python3
"""Error against time for every fast method of an accuracy study, one panel per input.

    tools/plot_accuracy.py accuracy.json -o docs/accuracy_vs_time.png

accuracy.json comes from `tools/accuracy_study.py --json`. Each point is one map: its relative L2
error against direct summation (log scale) and its set-up + compute seconds; direct summation is
the dashed line (exact, its time). Points left of the line are faster than direct; the lower the
better. Needs matplotlib (python3-matplotlib).
"""
import argparse
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

MARKERS = {"cutoff truncated": "v", "cutoff shifted": "s", "cutoff switched": "D"}


def family(method):
    return "msm" if method.startswith("msm") else method


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("json")
    p.add_argument("-o", "--output", default="accuracy_vs_time.png")
    args = p.parse_args()
    with open(args.json) as f:
        study = json.load(f)
    inputs = list(dict.fromkeys(r["input"] for r in study["rows"]))
    fig, axes = plt.subplots(1, len(inputs), figsize=(5.2 * len(inputs), 4.6), squeeze=False)
    for ax, name in zip(axes[0], inputs):
        rows = [r for r in study["rows"] if r["input"] == name]
        direct = next(r for r in rows if r["method"] == "direct")
        for method in dict.fromkeys(r["method"] for r in rows if r["method"] != "direct"):
            group = [r for r in rows if r["method"] == method]
            marker = MARKERS.get(method, "o")
            filled = family(method) == "msm"
            ax.plot([r["seconds"] for r in group], [max(r["relative_l2"], 1e-7) for r in group], marker,
                    linestyle="-" if filled else ":", label=method, fillstyle="full" if filled else "none")
        ax.axvline(direct["seconds"], color="k", linestyle="--", linewidth=1, label="direct (exact)")
        ax.axhline(1e-3, color="grey", linewidth=0.6)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("set-up + compute, s (%s)" % direct.get("device", "").split(":")[0])
        ax.set_ylabel("relative L2 error vs direct")
        ax.set_title("%s, %d atoms, %.3g points" % (name, direct["atoms"], direct["points"]))
        ax.grid(True, which="major", linewidth=0.3)
    axes[0][-1].legend(fontsize=7, loc="best")
    fig.suptitle("Error against time, %g Å grid (%s)" % (study["spacing"], study["date"]), fontsize=10)
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)
    print("plot_accuracy: wrote %s" % args.output)


if __name__ == "__main__":
    main()
