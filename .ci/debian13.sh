#!/usr/bin/env bash
# The test suite on Debian 13 (trixie), against its FFmpeg 7.1, from this
# checkout, on a Debian 12 machine: a trixie root made with debootstrap in
# .build/debian13-root, with this machine's Swift toolchain and Swift package
# mirror bound into it read-only, and `make test` run there with chroot.
#
#   bash .ci/debian13.sh prepare        make the root, or reuse it when complete, and install its packages
#   bash .ci/debian13.sh test [CMD...]  copy the checkout into the root and run CMD there (default: make test)
#   bash .ci/debian13.sh all            both (the default)
#   bash .ci/debian13.sh shell          a shell in the root, set up as for the tests
#
# `prepare` needs only the network, so CI can start it in the background
# while the Debian 12 tests run, and call `test` afterwards:
#
#   mkdir -p .build
#   bash .ci/debian13.sh prepare >.build/debian13-prepare.log 2>&1 &
#   prepared=$!
#   make test                      # Debian 12, FFmpeg 5.1
#   wait "$prepared" || { cat .build/debian13-prepare.log; exit 1; }
#   bash .ci/debian13.sh test
#
# `test` waits for a `prepare` still running (a lock) and prepares the root
# itself when it is not complete, so the order cannot go wrong.
#
# The copy: the checkout's committed HEAD is fetched into the same absolute
# path inside the root (git, so it is what a fresh clone holds), with a .build
# of its own: the host's .build holds the Debian 12 build, and the two FFmpeg
# versions must not meet in one build folder. DEBIAN13_WORKTREE=1 also
# copies the uncommitted changes and new files, to try work in progress.
# The real media the tests read (MEDIAMUX_SAMPLES, by default
# ../shared/media beside the checkout) is bound read-only at the path the
# tests compute inside the root.
#
# Mounts live in a mount and PID namespace of their own (unshare): the host
# never sees them, so nothing stays mounted under .build if this script is
# killed, and deleting .build from outside cannot reach /opt/swift or /dev
# through the root. A trap unmounts them all the same, in reverse order, and
# the namespace's end stops what the tests left running (a browser, a server).
#
# Needs root (it runs itself with sudo otherwise), util-linux's unshare and
# flock, git, and the network for Debian's mirror (DEBIAN13_MIRROR,
# DEBIAN13_SECURITY_MIRROR). The toolchain is the one `swift` on PATH belongs
# to, /opt/swift if none (DEBIAN13_TOOLCHAIN). Nothing is cached outside the
# checkout's .build: a fresh clone makes everything anew.
set -euo pipefail
umask 022

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
self="$here/$(basename "${BASH_SOURCE[0]}")"
repo="$(cd "$here/.." && pwd -P)"
build="$repo/.build"
root="$build/debian13-root"
suite=trixie
mirror="${DEBIAN13_MIRROR:-http://deb.debian.org/debian}"
security_mirror="${DEBIAN13_SECURITY_MIRROR:-http://deb.debian.org/debian-security}"

# The toolchain's folder (the one holding usr/bin/swift).
if [ -z "${DEBIAN13_TOOLCHAIN:-}" ]; then
  if swift_path="$(command -v swift 2>/dev/null)"; then
    DEBIAN13_TOOLCHAIN="$(cd "$(dirname "$(readlink -f "$swift_path")")/../.." && pwd -P)"
  else
    DEBIAN13_TOOLCHAIN=/opt/swift
  fi
fi
toolchain="$DEBIAN13_TOOLCHAIN"

# What the root holds. The toolchain's own needs (ldd of its programs; the
# check after installing names anything missing): its libraries, the C
# compiler and linker it drives (clang links through gcc's crt files and
# binutils' ld), libc and libstdc++ headers, zlib's (swift-nio-extras),
# git for SwiftPM, make and pkg-config for the Makefile and the FFmpeg
# system libraries. lldb alone stays unusable (it wants libpython3.10);
# nothing here runs it.
toolchain_packages=(libncurses6 libxml2 libcurl4t64 libedit2 libsqlite3-0 libpython3.13 binutils gcc libc6-dev
  libstdc++-14-dev zlib1g-dev git make pkg-config ca-certificates tzdata)
# What `make test` installs on Debian 12 (the Makefile's deps and test
# targets, .ci/install-deps.sh): FFmpeg's -dev packages, python3 (the
# download tests' servers), Chromium, GStreamer, the ffmpeg CLI; and
# util-linux's setpriv, which the command-line tests run muxctl through as
# `nobody`.
test_packages=(libavformat-dev libavcodec-dev libavutil-dev libswresample-dev libswscale-dev libavfilter-dev
  python3 chromium gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-base-apps gstreamer1.0-plugins-good gstreamer1.0-libav
  ffmpeg util-linux)
packages=("${toolchain_packages[@]}" "${test_packages[@]}")
# What the chroot is started with: a clean environment, the toolchain first on PATH.
chroot_path="$toolchain/usr/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
chroot_env=(HOME=/root USER=root LOGNAME=root SHELL=/bin/bash LANG=C.UTF-8 TERM="${TERM:-dumb}" PATH="$chroot_path"
  DEBIAN_FRONTEND=noninteractive)

say() { echo "== debian13: $*"; }
fail() { echo "debian13: $*" >&2; exit 1; }

# The real media the tests read, as they find it (Tests/MediaMuxTests/Support/Fixtures.swift):
# MEDIAMUX_SAMPLES, relative to the package root, else ../shared/media beside it,
# with `..` taken away as written (not by following links).
samples_setting="${MEDIAMUX_SAMPLES:-../shared/media}"
case "$samples_setting" in
  /*) samples_written="$samples_setting" ;;
  *) samples_written="$repo/$samples_setting" ;;
esac
samples_inside="$(realpath -m -s "$samples_written")"

# Everything below needs root: debootstrap, mount, chroot.
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || fail "needs root, or sudo"
  # sudo resets the environment: the settings above go through env.
  settings=(DEBIAN13_TOOLCHAIN="$toolchain")
  for name in MEDIAMUX_SAMPLES DEBIAN13_MIRROR DEBIAN13_SECURITY_MIRROR DEBIAN13_WORKTREE TERM; do
    [ -n "${!name:-}" ] && settings+=("$name=${!name}")
  done
  exec sudo env "${settings[@]}" bash "$self" "$@"
fi

# Mounts, in order, for the trap to undo.
mounted=()
unmount_all() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount -R "${mounted[i]}" 2>/dev/null || umount -R -l "${mounted[i]}" || echo "debian13: could not unmount ${mounted[i]}" >&2
  done
  mounted=()
}
# bind SOURCE TARGET [ro]: SOURCE at TARGET inside the root (a folder or a file).
bind() {
  local source="$1" target="$root$2"
  if [ -d "$source" ]; then mkdir -p "$target"; else mkdir -p "$(dirname "$target")" && touch "$target"; fi
  mount --bind ${3:+-o ro} "$source" "$target"
  mounted+=("$target")
}
# The root's /proc (this PID namespace's), /sys (read-only) and a /dev of its
# own: the device nodes programs open, bound from the host's, a pty instance,
# and a /dev/shm of its own (Chromium's shared memory; a test wants it on
# another file system than /tmp).
mount_system() {
  mount -t proc -o nosuid,nodev,noexec proc "$root/proc"
  mounted+=("$root/proc")
  mount -t sysfs -o ro,nosuid,nodev,noexec sysfs "$root/sys"
  mounted+=("$root/sys")
  mount -t tmpfs -o mode=755,nosuid tmpfs "$root/dev"
  mounted+=("$root/dev")
  local node
  for node in null zero full random urandom tty; do
    touch "$root/dev/$node"
    mount --bind "/dev/$node" "$root/dev/$node"
  done
  mkdir "$root/dev/pts" "$root/dev/shm"
  mount -t devpts -o newinstance,ptmxmode=0666,mode=620,gid=5 devpts "$root/dev/pts"
  ln -s pts/ptmx "$root/dev/ptmx"
  mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$root/dev/shm"
  ln -s /proc/self/fd "$root/dev/fd"
  ln -s /proc/self/fd/0 "$root/dev/stdin"
  ln -s /proc/self/fd/1 "$root/dev/stdout"
  ln -s /proc/self/fd/2 "$root/dev/stderr"
}

# run_in_root MODE CMD...: CMD in the root, from inside a new mount and PID
# namespace (the script runs itself there as `_inside`). MODE `apt` mounts
# what package scripts need, and the toolchain; `test` (and `shell`, which
# keeps the terminal) adds the package mirrors git is pointed at and the
# samples folder, and starts in the copy.
run_in_root() {
  if [ "$1" = shell ]; then
    unshare --mount --pid --fork --kill-child -- bash "$self" _inside "$@"
    return
  fi
  # In the background (stdin /dev/null), so that a signal to this script
  # alone, not to its process group, is acted on at once: unshare ignores
  # SIGINT and SIGTERM while it waits, so it is killed, and takes its child
  # and with it the whole namespace. (The root's env gives back the signals
  # a background command ignores.)
  unshare --mount --pid --fork --kill-child -- bash "$self" _inside "$@" &
  local pid=$! status=0
  trap 'kill -KILL "$pid" 2>/dev/null || true' INT TERM HUP
  while :; do
    wait "$pid" || status=$?
    kill -0 "$pid" 2>/dev/null || break
  done
  trap - INT TERM HUP
  return "$status"
}
inside() { # the namespace's side of run_in_root
  local mode="$1"
  shift
  trap unmount_all EXIT
  mount --make-rprivate /
  mount_system
  bind "$toolchain" "$toolchain" ro
  local env=("${chroot_env[@]}") start=/
  if [ "$mode" != apt ]; then
    local folder
    while IFS= read -r folder; do
      [ -n "$folder" ] && bind "$folder" "$folder" ro
    done <"$root/.debian13-git-folders"
    if [ -d "$samples_written" ]; then
      bind "$(realpath "$samples_written")" "$samples_inside" ro
      env+=(MEDIAMUX_SAMPLES="$samples_inside")
    fi
    start="$repo"
  fi
  # A plain child (no exec) so that the trap runs when it is done.
  # shellcheck disable=SC2016 # expanded by the shell in the root
  chroot "$root" /usr/bin/env -i --default-signal "${env[@]}" /bin/bash -c 'cd "$1" && shift && "$@"' bash "$start" "$@"
}

# Whether anything is mounted at or under the root (in this namespace).
root_has_mounts() {
  local _ mount_point
  while read -r _ _ _ _ mount_point _; do
    mount_point="$(printf '%b' "$mount_point")"
    case "$mount_point" in "$root" | "$root"/*) return 0 ;; esac
  done </proc/self/mountinfo
  return 1
}

# The root: debootstrap's minimal base (once), then the packages (again when
# the list changes). Each step leaves a marker file when it is complete.
prepare() {
  local bootstrapped="$root/.debian13-bootstrapped" installed="$root/.debian13-packages"
  local wanted
  wanted="$(printf '%s\n' "$suite" "${packages[@]}")"
  if [ -f "$installed" ] && [ "$(cat "$installed")" = "$wanted" ]; then
    say "reusing the complete root in $root"
    return 0
  fi

  local start=$SECONDS
  if [ ! -f "$bootstrapped" ]; then
    if ! command -v debootstrap >/dev/null; then
      say "installing debootstrap"
      apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap
    fi
    if [ -e "$root" ]; then
      root_has_mounts && fail "something is mounted under $root; unmount it first"
      say "removing an incomplete root"
      rm -rf --one-file-system "$root"
    fi
    # dpkg without fsync, and without documentation, from the first package on.
    mkdir -p "$root/etc/dpkg/dpkg.cfg.d"
    cat >"$root/etc/dpkg/dpkg.cfg.d/90debian13-ci" <<'EOF'
force-unsafe-io
path-exclude=/usr/share/doc/*
path-exclude=/usr/share/man/*
path-exclude=/usr/share/info/*
EOF
    say "debootstrap $suite into $root"
    # In a mount namespace too: debootstrap mounts /proc and /sys in the root
    # while it works, and would leave them mounted if it were stopped.
    unshare --mount --fork --kill-child -- debootstrap --variant=minbase --components=main "$suite" "$root" "$mirror"
    touch "$bootstrapped"
    say "root created in $((SECONDS - start)) s"
  fi

  start=$SECONDS
  # The mirror's suites (point release, updates, security) in deb822 form.
  rm -f "$root/etc/apt/sources.list"
  cat >"$root/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: $suite $suite-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $security_mirror
Suites: $suite-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  cat >"$root/etc/apt/apt.conf.d/90debian13-ci" <<'EOF'
APT::Install-Recommends "false";
APT::Install-Suggests "false";
Acquire::Languages "none";
Acquire::Retries "3";
Dpkg::Use-Pty "false";
EOF
  # No service starts inside the root (dbus, say).
  printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
  chmod 755 "$root/usr/sbin/policy-rc.d"
  cp -L /etc/resolv.conf "$root/etc/resolv.conf"
  grep -qs '^127\.0\.0\.1[[:space:]].*localhost' "$root/etc/hosts" ||
    printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' >>"$root/etc/hosts"

  say "installing ${#packages[@]} packages and what they depend on"
  # Then the check that every library the toolchain's programs load is
  # there (lldb's aside), and the versions the tests will meet.
  # shellcheck disable=SC2016 # expanded by the shell in the root
  run_in_root apt bash -c '
    set -euo pipefail
    dpkg --configure -a
    apt-get update -qq
    apt-get install -y -qq "${@:2}" >/dev/null
    apt-get clean
    missing=$(ldd "$1"/usr/bin/{swift-frontend,swift-driver,swift-build,swift-test,swift-package,swift-autolink-extract,clang,ld.lld} \
      "$1"/usr/lib/swift/linux/lib{swiftCore,Foundation,FoundationNetworking,FoundationXML}.so 2>&1 | grep "not found" | sort -u || true)
    [ -z "$missing" ] || { echo "debian13: the toolchain misses libraries in the root:" >&2; echo "$missing" >&2; exit 1; }
    echo "FFmpeg $(pkg-config --modversion libavutil | sed "s/^/libavutil /"), $(pkg-config --modversion libavformat | sed "s/^/libavformat /"), $(pkg-config --modversion libavcodec | sed "s/^/libavcodec /")"
    ffmpeg -hide_banner -version | sed -n 1p
    chromium --version 2>/dev/null || true
    gst-launch-1.0 --version | sed -n 1p
    swift --version 2>&1 | sed -n 1p
  ' bash "$toolchain" "${packages[@]}"
  echo "$wanted" >"$installed"
  say "packages installed in $((SECONDS - start)) s ($(du -sh --one-file-system "$root" | cut -f1) in the root)"
}

# The checkout's HEAD (and with DEBIAN13_WORKTREE=1 its uncommitted work) at
# the same path inside the root. Its ignored files (.build, Package.resolved)
# stay from one run to the next, so a local re-run builds incrementally.
sync_copy() {
  local copy="$root$repo"
  # The checkout may belong to another user than root (sudo, CI's runner):
  # git 2.39 takes safe.directory only from a global or system file, so these
  # commands get a global file of their own (which also keeps a user's diff
  # settings away from the patch below).
  local git=(env GIT_CONFIG_GLOBAL="$root/.debian13-host-gitconfig" git)
  printf '[safe]\n\tdirectory = %s\n\tdirectory = %s\n' "$repo" "$repo/.git" >"$root/.debian13-host-gitconfig"
  if [ ! -d "$copy/.git" ]; then
    mkdir -p "$copy"
    "${git[@]}" -C "$copy" init -q
  fi
  # Only the commit (a shallow checkout can only give that much anyway).
  "${git[@]}" -C "$copy" fetch -q --depth=1 --no-tags "$repo" HEAD
  "${git[@]}" -C "$copy" checkout -q --force --detach FETCH_HEAD
  "${git[@]}" -C "$copy" clean -q -ffd
  if [ "${DEBIAN13_WORKTREE:-0}" = 1 ]; then
    "${git[@]}" -C "$repo" diff --binary HEAD >"$root/.debian13-worktree.diff"
    [ -s "$root/.debian13-worktree.diff" ] && "${git[@]}" -C "$copy" apply --binary "$root/.debian13-worktree.diff"
    "${git[@]}" -C "$repo" ls-files -z --others --exclude-standard | tar -C "$repo" --null -T - -cf - | tar -C "$copy" -xf -
    say "copied HEAD ($("${git[@]}" -C "$copy" rev-parse --short HEAD)) with the uncommitted changes into the root"
  else
    say "copied HEAD ($("${git[@]}" -C "$copy" rev-parse --short HEAD)) into the root"
  fi
}

# The URL rewriting git has here (system and global: the package mirror),
# in the root's /etc/gitconfig; the local folders it points at are listed
# for `inside` to bind read-only.
configure_git() {
  local config="$root/etc/gitconfig" entry key value base
  : >"$config"
  : >"$root/.debian13-git-folders"
  while IFS= read -r -d '' entry; do
    key="${entry%%$'\n'*}"
    value="${entry#*$'\n'}"
    git config --file "$config" --add "$key" "$value"
    base="${key#url.}"
    base="${base%.insteadof}"
    base="${base#file://}"
    if [ "${base:0:1}" = / ] && [ -d "$base" ] && ! grep -qxF "${base%/}" "$root/.debian13-git-folders"; then
      echo "${base%/}" >>"$root/.debian13-git-folders"
      git config --file "$config" --add safe.directory "${base%/}/*"
    fi
  done < <(cd / && { git config -z --get-regexp '^url\..*\.insteadof$' || true; })
}

test_in_root() { # [COMMAND...]; run_mode=shell for an interactive one
  local start=$SECONDS run_mode="${run_mode:-test}"
  [ $# -gt 0 ] || set -- make test
  sync_copy
  configure_git
  if [ -d "$samples_written" ]; then
    say "samples: $(realpath "$samples_written") at $samples_inside"
  else
    say "no samples folder at $samples_inside: the tests that read it are left out"
  fi
  say "running '$*' in $repo inside the root"
  local status=0
  run_in_root "$run_mode" "$@" || status=$?
  say "build+test took $((SECONDS - start)) s (exit status $status)"
  return "$status"
}

phase="${1:-all}"
[ $# -gt 0 ] && shift
if [ "$phase" = _inside ]; then
  inside "$@"
  exit
fi

mkdir -p "$build"
# One run at a time per checkout: `test` waits for a `prepare` in the background.
exec 9>"$build/debian13.lock"
if ! flock -n 9; then
  say "waiting for another run of this script (a prepare in the background?)"
  flock 9
fi

# (Not `prepare && ...`: a function called on the left of && runs without set -e.)
case "$phase" in
  prepare | test | all | shell) ;;
  *) fail "usage: bash .ci/debian13.sh [prepare | test [COMMAND...] | all | shell]" ;;
esac
prepare
case "$phase" in
  test) test_in_root "$@" ;;
  all) test_in_root ;;
  shell) run_mode=shell test_in_root bash -i ;;
esac
