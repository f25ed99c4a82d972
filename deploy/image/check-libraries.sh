#!/usr/bin/env bash
# Checks that every shared library a muxctl binary needs comes from the
# runtime image's packages for this Debian release
# (runtime-packages-CODENAME.txt), from what FFmpeg's packages pull in, or
# from the slim base image; and that libavfilter, which muxctl opens with
# dlopen (so ldd does not list it), is among them.
#
#   bash deploy/image/check-libraries.sh BINARY
#
# build-root.sh runs it on the release build it installs. CI also runs it in
# its Debian 13 root on the debug build the tests used: libraries of the
# Swift toolchain, which a debug build loads and `make build` links in
# statically, are left out of the check.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
binary="${1:?usage: check-libraries.sh BINARY}"
codename="$(. /etc/os-release && echo "${VERSION_CODENAME:-}")"
list="$here/runtime-packages-$codename.txt"
[ -f "$list" ] || { echo "check-libraries: no runtime package list for Debian '$codename' ($list)" >&2; exit 1; }

# The runtime packages, without comments.
mapfile -t runtime < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$list")
# What debian:*-slim has already (Priority required, and apt's own libraries).
base=(libc6 libgcc-s1 libstdc++6 zlib1g)
toolchain="$(dirname "$(dirname "$(readlink -f "$(command -v swift 2>/dev/null || echo /opt/swift/usr/bin/swift)")")")"

missing=0
owner() {
  # Merged /usr: dpkg may know the file under /lib or under /usr/lib.
  local path="$1"
  dpkg -S "$path" 2>/dev/null || dpkg -S "$(readlink -f "$path")" 2>/dev/null || dpkg -S "/usr$path" 2>/dev/null || dpkg -S "${path#/usr}" 2>/dev/null || true
}
closure="$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces --no-enhances "${runtime[@]}" 2>/dev/null | grep -v '^ ' || true)"
while read -r library; do
  case "$library" in "$toolchain"/*) continue ;; esac
  package="$(owner "$library" | head -n1 | cut -d: -f1)"
  if [ -z "$package" ]; then
    echo "check-libraries: $library (needed by muxctl) belongs to no Debian package" >&2
    missing=1
    continue
  fi
  # Packages that FFmpeg's runtime packages pull in themselves are fine too.
  if printf '%s\n' "${runtime[@]}" "${base[@]}" | grep -qx "$package"; then continue; fi
  if grep -qx "$package" <<<"$closure"; then continue; fi
  echo "check-libraries: $library comes from $package, which $(basename "$list") does not bring" >&2
  missing=1
done < <(ldd "$binary" | awk '/=> \// { print $3 }')
# Opened at run time, so ldd does not list it: the package of the libavfilter it was built against.
filter="$(pkg-config --modversion libavfilter 2>/dev/null | cut -d. -f1)"
if [ -n "$filter" ] && ! printf '%s\n' "${runtime[@]}" | grep -qx "libavfilter$filter"; then
  echo "check-libraries: libavfilter$filter (dlopened) is not in $(basename "$list")" >&2
  missing=1
fi
[ "$missing" -eq 0 ] || exit 1
echo "check-libraries: every library $binary needs comes from $(basename "$list") or the base image (Debian $codename)"
