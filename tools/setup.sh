#!/usr/bin/env bash
# Installs dcsgrid's build dependencies (Debian/Ubuntu packages) and builds it in build/.
#   tools/setup.sh            install what is missing, configure, build
#   BUILD_DIR=... CMAKE_ARGS="-DDCSGRID_CUDA=OFF" tools/setup.sh
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build ccache pkg-config
  libhdf5-dev libcli11-dev libspdlog-dev libfmt-dev libgtest-dev nlohmann-json3-dev zlib1g-dev
  libbz2-dev liblzma-dev       # .bz2 and .xz inputs
  gemmi-dev tao-pegtl-dev   # PDB/mmCIF/CCP4 through gemmi (header-only)
  python3-pdb2pqr           # AMBER/CHARMM/PARSE force-field tables for PDB/mmCIF charges
  libnetcdf-dev             # AMBER NetCDF trajectories (optional: DCSGRID_NETCDF)
  python3-mdanalysis        # independent trajectory/topology reader for the io tests
  python3-h5py python3-numpy python3-matplotlib   # tools/plot_map.py
  # independent map readers run by the tests (tests/python/check_map_readers.py)
  python3-gemmi python3-mrcfile python3-griddataformats python3-xarray python3-h5netcdf python3-ase
  python3-dev pybind11-dev python3-pytest   # the Python module (import dcsgrid) and its tests
  apbs                      # the Poisson–Boltzmann reference run by tests/test_engine_pb.cpp
  pymol python3-pil         # PyMOL runs the .pml scripts, Pillow decodes the PNG pictures (tests)
  freesasa                  # the SAS area reference run by tests/test_analysis_surface.cpp
  python3-pip               # to install trimesh (PyPI only), below
  # mpirun -n N dcsgrid (DCSGRID_MPI): OpenMPI, HDF5 and netCDF built on it (one HDF5 a process)
  openmpi-bin libopenmpi-dev libhdf5-openmpi-dev libnetcdf-mpi-dev
)
tools/install-packages.sh "${packages[@]}"
# trimesh (PyPI only): the independent mesh reader of tests/python/test_python_surface.py, which
# skips without it (no network: the install fails and the test skips).
if ! /usr/bin/python3 -c "import trimesh" 2>/dev/null && /usr/bin/python3 -m pip --version >/dev/null 2>&1; then
  /usr/bin/python3 -m pip install --quiet --break-system-packages trimesh ||
    echo "setup: trimesh could not be installed; tests/python/test_python_surface.py's mesh test will skip"
fi

build_dir=${BUILD_DIR:-build}
# shellcheck disable=SC2086
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE=/usr/bin/python3 \
  ${CMAKE_ARGS:-} >/dev/null
cmake --build "$build_dir" --parallel "$(nproc)"
echo "setup: built $build_dir/dcsgrid"

# `import dcsgrid` for the system python3: a .pth file naming the build's package folder.
if [ -d "$build_dir/python/dcsgrid" ]; then
  site=$(/usr/bin/python3 -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd mkdir -p "$site"
  echo "$(cd "$build_dir/python" && pwd)" | $sudo_cmd tee "$site/dcsgrid-build.pth" >/dev/null
  echo "setup: /usr/bin/python3 imports dcsgrid from $build_dir/python ($site/dcsgrid-build.pth)"
fi
