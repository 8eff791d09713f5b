# Sourced by the scripts: makes sure Debian 12 packages are installed.
# ensure_packages PKG...: installs the missing ones when run as root (apt-get update first);
# otherwise prints the exact apt-get line and exits.
ensure_packages() {
  local missing=()
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -eq 0 ]; then
    echo "== installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
  else
    echo "minigrad needs these Debian packages; install them with:" >&2
    echo "  sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
}

# The packages every build needs.
# (the examples draw with cairo and read flags with CLI11; nlohmann-json3-dev parses the safetensors
# header, build-only; Open MPI builds minigrad::distributed and runs its tests with mpiexec;
# Graphviz's library builds minigrad::viz, which draws autograd graphs)
MINIGRAD_BUILD_PACKAGES=(g++ cmake make pkg-config libxtensor-dev xtl-dev libxsimd-dev libopenblas-dev
  libcli11-dev libcairo2-dev nlohmann-json3-dev libopenmpi-dev openmpi-bin libgraphviz-dev)

# Data the examples train on: char_gpt reads the English text of the fortunes package
# (/usr/share/games/fortunes); its test in tests/examples does too.
MINIGRAD_DATA_PACKAGES=(fortunes)
