#!/usr/bin/env bash
# Installs the FFmpeg development packages MediaMux builds against, if missing.
set -euo pipefail
packages=(libavformat-dev libavcodec-dev libavutil-dev libswresample-dev libswscale-dev libavfilter-dev pkg-config "$@")
missing=()
for package in "${packages[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
echo "installing: ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
