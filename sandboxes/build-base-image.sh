#!/usr/bin/env bash
# Build the offline base image readbench-base:bookworm with debootstrap + `docker import`:
# a minimal Debian bookworm with python3, git and ripgrep, and NOTHING else Python-wise
# (no pip, no setuptools: both vendor packages that are benchmark sources, e.g. more_itertools
# and pyparsing -- docs/specs/corpus.md §4 "Leaks and pitfalls").
#
# It needs no image registry: the packages come from the Debian archive already configured in
# /etc/apt/sources.list* (the address is read from there, not written down here).
# Idempotent: does nothing when the image already exists (use --force to rebuild).
#
# Usage: sudo sandboxes/build-base-image.sh [--force] [--tag readbench-base:bookworm]
# Environment overrides:
#   READBENCH_DOCKER_CACHE  scratch space for the root filesystem (default /var/cache/readbench-docker)
#   READBENCH_BASE_SUITE    Debian suite (default bookworm; python3 must be 3.11 for the corpus pins)
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SCRIPT=build-base-image
. "$REPO/sandboxes/lib.sh"
export DEBIAN_FRONTEND=noninteractive

TAG=readbench-base:bookworm
SUITE="${READBENCH_BASE_SUITE:-bookworm}"
CACHE="${READBENCH_DOCKER_CACHE:-/var/cache/readbench-docker}"
# less: click's test suite pages through it (test_echo_via_pager[*-less] fails without it)
PACKAGES=python3,git,ripgrep,less
FORCE=0
while [ $# -gt 0 ]; do
  case "$1" in
    --force) FORCE=1; shift ;;
    --tag) TAG="${2:-}"; shift 2 ;;
    --tag=*) TAG="${1#--tag=}"; shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "build-base-image.sh: unknown argument: $1" >&2; exit 2 ;;
  esac
done
[ -n "$TAG" ] || { echo "build-base-image.sh: --tag needs a value" >&2; exit 2; }

[ "$(id -u)" = 0 ] || die "must run as root (debootstrap needs it)"
docker info >/dev/null 2>&1 || die "no Docker engine answers; run sandboxes/provision-docker.sh first"

if [ $FORCE = 0 ] && docker image inspect "$TAG" >/dev/null 2>&1; then
  have=$(docker image inspect --format '{{ index .Config.Labels "org.readbench.base.packages" }}' "$TAG")
  if [ "$have" = "$PACKAGES" ]; then
    say "skip: image $TAG already exists ($(docker image inspect --format '{{.Id}}' "$TAG" | cut -c1-19))"
    exit 0
  fi
  say "rebuild: image $TAG has packages '$have', wanted '$PACKAGES'"
fi

if ! command -v debootstrap >/dev/null; then
  say "apt-get install debootstrap"
  apt-get update -q >/dev/null
  apt-get install -y -q --no-install-recommends debootstrap >/dev/null
fi

. /etc/os-release
read -r MIRROR _KEY < <(debian_archive "${VERSION_CODENAME:-bookworm}") \
  || die "no Debian archive for '${VERSION_CODENAME:-?}' with component main found in /etc/apt/sources.list*"

mkdir -p "$CACHE"
ROOTFS=$(mktemp -d "$CACHE/rootfs-$SUITE.XXXXXX")
trap 'rm -rf "$ROOTFS"' EXIT
say "debootstrap --variant=minbase --include=$PACKAGES $SUITE $ROOTFS $MIRROR"
mkdir -p "$CACHE/debootstrap-debs"  # downloaded .debs are kept for the next --force
debootstrap --variant=minbase --cache-dir="$CACHE/debootstrap-debs" --include="$PACKAGES" \
  "$SUITE" "$ROOTFS" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 \
  || { tail -n 20 "$CACHE/debootstrap.log" >&2; die "debootstrap failed (log: $CACHE/debootstrap.log)"; }
say "done: debootstrap ($(du -sh "$ROOTFS" | cut -f1))"

# Guard the leak rule: no pip/setuptools (and so no vendored copies of benchmark sources).
leaks=$(find "$ROOTFS/usr/lib/python3" "$ROOTFS"/usr/lib/python3.* -maxdepth 3 \
          \( -name 'pip' -o -name 'setuptools' -o -name 'pkg_resources' -o -name 'more_itertools' -o -name 'pyparsing' \) \
          2>/dev/null || true)
[ -z "$leaks" ] || die "the root filesystem contains packages that leak benchmark sources: $leaks"

# Shrink: package caches and apt lists are not needed at run time.
rm -rf "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/lib/apt/lists/* "$ROOTFS"/var/log/*.log

say "docker import -> $TAG"
tar -C "$ROOTFS" -c . | docker import \
  --change 'ENV LANG=C.UTF-8' \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["/bin/bash"]' \
  --change "LABEL org.readbench.base.suite=$SUITE org.readbench.base.packages=$PACKAGES" \
  --message "debootstrap --variant=minbase $SUITE from $MIRROR" \
  - "$TAG" >/dev/null
py=$(docker run --rm --network none "$TAG" python3 --version)
rg=$(docker run --rm --network none "$TAG" rg --version | sed -n 1p)
say "OK: $TAG ($(docker image inspect --format '{{.Size}}' "$TAG" | awk '{printf "%.0f MB", $1/1e6}')): $py, $rg"
