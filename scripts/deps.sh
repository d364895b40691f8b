#!/usr/bin/env bash
# Installs the Debian 12 packages collscope needs that this machine lacks.
# As root it runs apt-get; otherwise it prints the exact command to run.
#   scripts/deps.sh           what building, testing and the window need
#   scripts/deps.sh --fuzz    also clang and its runtimes (scripts/fuzz.sh) and clang-format
#                             (scripts/format.sh and its test)
#   scripts/deps.sh --video   also ffmpeg, which `--video FILE.mp4` pipes its frames to (optional:
#                             without it collscope says so, and the real-encode test is skipped)
# The flags combine: scripts/deps.sh --fuzz --video
set -euo pipefail

packages=(build-essential cmake ninja-build pkg-config
          nlohmann-json3-dev libcli11-dev doctest-dev
          libimgui-dev libglfw3-dev libstb-dev fonts-dejavu-core libfontconfig-dev libgl1-mesa-dri
          libcgif-dev xvfb xauth openmpi-bin libopenmpi-dev
          python3-torch)  # torch.distributed on gloo: `collscope record` and its tests
for flag in "$@"; do
  case "$flag" in
    --fuzz) packages+=(clang libclang-rt-14-dev clang-format) ;;
    --video) packages+=(ffmpeg) ;;
    *) echo "scripts/deps.sh: unknown flag $flag (use --fuzz and/or --video)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
cmd="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "collscope needs these Debian packages: ${missing[*]}" >&2
  echo "run as root:  apt-get update && $cmd" >&2
  exit 2
fi
echo "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
$cmd
