#!/usr/bin/env python3
"""Pictures of dcsgrid output, as PNG files (python3 with h5py, numpy and matplotlib).

  plot_map.py slice MAP.h5 [--frame N] [--axis z] [--at Å | --index K] [--atoms FILE.pqr|.pdb]
                           [--limit L] [-o slice.png]
      A plane of the potential (a single map, or frame N of a batch file) in Å coordinates,
      with the atoms near the plane drawn on top. Colours: blue negative, red positive, clipped
      at ±L (default: the 98th percentile of |φ| on the plane, since φ is steep at atoms).
  plot_map.py histogram MAP.h5 [--frame N] [--bins B] [-o histogram.png]
      The distribution of potential values: the histogram stored under /analysis (dcsgrid batch
      or stats) when there is one, else computed here over the map's own range.
  plot_map.py similarity SIM.h5 [--index hodgkin|carbo] [-o similarity.png]
      The similarity matrix written by dcsgrid similarity, in its clustered order.
"""
import argparse
import gzip
import os
import sys

import numpy as np

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import h5py  # noqa: E402

AXES = {"x": 0, "y": 1, "z": 2}


def text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def read_map(path, frame):
    """The potential of one map as an array [nz][ny][nx], with origin, spacing and units."""
    with h5py.File(path, "r") as f:
        ds = f["potential"]
        origin = np.asarray(ds.attrs["origin"], dtype=float)
        spacing = np.asarray(ds.attrs["spacing"], dtype=float)
        units = text(ds.attrs.get("units", ""))
        if ds.ndim == 4:
            status = f["frames/status"][...]
            if frame >= ds.shape[0]:
                sys.exit(f"plot_map: {path} has {ds.shape[0]} frames, no frame {frame}")
            if status[frame] != 1:
                sys.exit(f"plot_map: frame {frame} of {path} is not complete")
            data = ds[frame]
        elif ds.ndim == 3:
            data = ds[...]
        else:
            sys.exit(f"plot_map: {path}: /potential is neither 3-D nor 4-D")
    return data, origin, spacing, units


def read_atoms(path):
    """x, y, z of ATOM/HETATM records: PQR by whitespace fields, PDB by fixed columns (.gz too)."""
    name = path.lower()[:-3] if path.lower().endswith(".gz") else path.lower()
    pqr = name.endswith(".pqr")
    xyz = []
    with (gzip.open(path, "rt") if path.lower().endswith(".gz") else open(path)) as f:
        for number, line in enumerate(f, 1):
            if not line.startswith(("ATOM", "HETATM")):
                continue
            try:
                if pqr:
                    fields = line.split()
                    xyz.append([float(v) for v in fields[-5:-2]])
                else:
                    xyz.append([float(line[30:38]), float(line[38:46]), float(line[46:54])])
            except (ValueError, IndexError):
                sys.exit(f"plot_map: {path}:{number}: cannot read the coordinates")
    return np.array(xyz).reshape(-1, 3)


def plot_slice(args):
    data, origin, spacing, units = read_map(args.map, args.frame)
    axis = AXES[args.axis]
    n = data.shape[2 - axis]  # data is [z][y][x]
    if args.index is not None:
        k = args.index
    elif args.at is not None:
        k = int(round((args.at - origin[axis]) / spacing[axis]))
    else:
        k = n // 2
    if not 0 <= k < n:
        sys.exit(f"plot_map: plane {k} is outside the grid's {n} planes along {args.axis}")
    plane = np.take(data, k, axis=2 - axis)  # 2-D, rows = slower remaining axis
    shown = [a for a in (0, 1, 2) if a != axis]  # the two axes in the plane, x before y before z
    lo = origin[shown]
    hi = origin[shown] + spacing[shown] * (np.array(plane.shape[::-1]) - 1)
    finite = np.abs(plane[np.isfinite(plane)])
    limit = args.limit or (np.percentile(finite, 98) if finite.size else 1.0) or 1.0
    fig, ax = plt.subplots(figsize=(7, 6))
    image = ax.imshow(plane, origin="lower", cmap="RdBu_r", vmin=-limit, vmax=limit,
                      extent=[lo[0], hi[0], lo[1], hi[1]], interpolation="bilinear")
    fig.colorbar(image, ax=ax, label=f"potential ({units})" if units else "potential")
    position = origin[axis] + k * spacing[axis]
    if args.atoms:
        atoms = read_atoms(args.atoms)
        near = np.abs(atoms[:, axis] - position) <= args.thickness
        ax.scatter(atoms[near, shown[0]], atoms[near, shown[1]], s=8, c="k", marker=".",
                   label=f"atoms within {args.thickness:g} Å ({near.sum()})")
        ax.legend(loc="upper right", fontsize=8)
    names = "xyz"
    ax.set_xlabel(f"{names[shown[0]]} (Å)")
    ax.set_ylabel(f"{names[shown[1]]} (Å)")
    title = f"{os.path.basename(args.map)}: {args.axis} = {position:.2f} Å"
    ax.set_title(title + (f", frame {args.frame}" if args.frame else ""))
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)


def stored_histogram(path, frame):
    with h5py.File(path, "r") as f:
        if "analysis/histogram" not in f or "analysis/histogram_edges" not in f:
            return None
        if f["potential"].ndim == 4 and f["frames/status"][frame] != 1:
            return None
        row = 0 if f["potential"].ndim == 3 else frame
        counts = f["analysis/histogram"][row]
        edges = f["analysis/histogram_edges"][row]
        return counts[:-2], edges, int(counts[-2]), int(counts[-1])


def plot_histogram(args):
    data, _, _, units = read_map(args.map, args.frame)
    stored = stored_histogram(args.map, args.frame)
    if stored is None:
        values = data[np.isfinite(data)].ravel()
        counts, edges = np.histogram(values, bins=args.bins)
        below = above = 0
        source = "computed"
    else:
        counts, edges, below, above = stored
        source = "stored"
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.stairs(counts, edges, fill=True, alpha=0.7)
    ax.set_yscale("log")
    ax.set_xlabel(f"potential ({units})" if units else "potential")
    ax.set_ylabel("grid points")
    note = f" ({below} below, {above} above the range)" if below or above else ""
    ax.set_title(f"{os.path.basename(args.map)}: {source} histogram{note}")
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)


def plot_similarity(args):
    with h5py.File(args.map, "r") as f:
        if args.index not in f:
            sys.exit(f"plot_map: {args.map} has no /{args.index}: not a similarity file")
        matrix = f[args.index][...]
        order = f["order"][...] if "order" in f else np.arange(matrix.shape[0])
        labels = [text(v) for v in f["labels"][...]] if "labels" in f else [str(i) for i in order]
    matrix = matrix[np.ix_(order, order)]
    labels = [os.path.basename(labels[i]) for i in order]
    fig, ax = plt.subplots(figsize=(7.5, 6.5))
    image = ax.imshow(matrix, cmap="viridis", vmin=min(0.0, np.nanmin(matrix)), vmax=1.0)
    fig.colorbar(image, ax=ax, label=f"{args.index} index")
    if len(labels) <= 40:
        ax.set_xticks(range(len(labels)), labels, rotation=90, fontsize=7)
        ax.set_yticks(range(len(labels)), labels, fontsize=7)
    ax.set_title(f"{args.index} similarity, clustered order")
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("slice", help="a plane of the potential with atoms")
    s.add_argument("map")
    s.add_argument("--frame", type=int, default=0, help="frame of a batch file")
    s.add_argument("--axis", choices="xyz", default="z", help="axis normal to the plane")
    s.add_argument("--at", type=float, help="plane position along the axis, Å")
    s.add_argument("--index", type=int, help="plane number along the axis")
    s.add_argument("--atoms", help="PQR or PDB file: atoms near the plane are drawn")
    s.add_argument("--thickness", type=float, default=1.0, help="atoms within this of the plane, Å")
    s.add_argument("--limit", type=float, help="colour scale ±limit (map units)")
    s.add_argument("-o", "--output", default="slice.png")
    h = sub.add_parser("histogram", help="distribution of potential values")
    h.add_argument("map")
    h.add_argument("--frame", type=int, default=0)
    h.add_argument("--bins", type=int, default=100, help="bins when none are stored")
    h.add_argument("-o", "--output", default="histogram.png")
    m = sub.add_parser("similarity", help="similarity matrix heat map")
    m.add_argument("map", help="file written by dcsgrid similarity")
    m.add_argument("--index", choices=["hodgkin", "carbo"], default="hodgkin")
    m.add_argument("-o", "--output", default="similarity.png")
    args = parser.parse_args(argv)
    {"slice": plot_slice, "histogram": plot_histogram, "similarity": plot_similarity}[args.command](args)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
