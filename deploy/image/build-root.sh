#!/usr/bin/env bash
# Builds muxctl and installs it, with its completions and man page, under
# ROOT/usr/local: what the container image's runtime stage copies in. The
# Dockerfile's build stage runs this; so does CI, outside Docker, and then runs
# the command-line tests (the sharding and Kubernetes example included)
# against ROOT/usr/local/bin/muxctl. It then checks that every shared library
# the binary needs comes from runtime-packages-CODENAME.txt (this Debian
# release's) or the base image (check-libraries.sh), and prints the sizes.
#
#   bash deploy/image/build-root.sh ROOT
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
root="${1:?usage: build-root.sh ROOT}"
mkdir -p "$root"
root="$(cd "$root" && pwd)"

cd "$repo"
make install PREFIX="$root/usr/local"
binary="$root/usr/local/bin/muxctl"

bash "$here/check-libraries.sh" "$binary"
codename="$(. /etc/os-release && echo "${VERSION_CODENAME:-}")"
mapfile -t runtime < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$here/runtime-packages-$codename.txt")

"$binary" --version
echo "build-root: $(du -sh "$root/usr/local" | cut -f1) in $root/usr/local ($(du -h "$binary" | cut -f1) muxctl)"

# What the runtime packages add to debian:CODENAME-slim, by apt's own
# resolution from nothing installed (Installed-Size, documentation included,
# which the slim image leaves out: an upper bound).
installed_set() { # PACKAGE...: the packages apt would install on an empty system
  apt-get install -s --no-install-recommends -o Dir::State::status=/dev/null "$@" 2>/dev/null | awk '/^Inst /{ print $2 }' | sort -u
}
kib_of() { # PACKAGE...: the sum of their Installed-Size, in one apt-cache call
  # (one per package loads apt's cache each time: minutes for 143 of them)
  apt-cache show --no-all-versions "$@" 2>/dev/null | awk '/^Package:/ { counted = 0 } /^Installed-Size:/ && !counted { total += $2; counted = 1 } END { print total + 0 }'
}
required="$(apt-cache dumpavail | awk '/^Package:/ { p = $2 } /^Priority: required/ { print p }' | sort -u)"
# shellcheck disable=SC2086
added="$(comm -23 <(installed_set apt $required "${runtime[@]}") <(installed_set apt $required))"
# shellcheck disable=SC2086
echo "build-root: the runtime packages add $(wc -w <<<"$added") Debian packages, at most $(( $(kib_of $added) / 1024 )) MiB, to debian:$codename-slim"
