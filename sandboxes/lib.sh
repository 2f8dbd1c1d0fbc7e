# Shared helpers for the sandboxes/*.sh scripts (sourced, not executed).
# The caller sets SCRIPT (a name for log lines) before sourcing.
T0=$(date +%s)
say() { printf '[%s %3ss] %s\n' "${SCRIPT:-sandboxes}" "$(( $(date +%s) - T0 ))" "$*"; }
die() { printf '[%s] ERROR: %s\n' "${SCRIPT:-sandboxes}" "$*" >&2; exit 1; }
version_ge() { dpkg --compare-versions "$1" ge "$2"; }

# Print "URI KEYRING" of the first Debian archive in the system's apt sources that serves the
# machine's own release (e.g. bookworm) with component main. Both deb822 (*.sources) and
# one-line (*.list) formats are read; nothing is written. APT_ETC overrides /etc/apt (tests).
debian_archive() {
  local codename="$1" f
  for f in "${APT_ETC:-/etc/apt}"/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk -v cn="$codename" '
      function flush() {
        if (types ~ /(^| )deb( |$)/ && (" " suites " ") ~ (" " cn " ") && comps ~ /(^| )main( |$)/ && uris != "") {
          split(uris, u, " "); print u[1], (key == "" ? "-" : key); found = 1; exit
        }
        types = suites = comps = uris = key = ""
      }
      /^[ \t]*$/ { flush(); next }
      /^[ \t]*#/ { next }
      { line = $0; sub(/^[^:]*:[ \t]*/, "", line) }
      tolower($1) == "types:" { types = line }
      tolower($1) == "uris:" { uris = line }
      tolower($1) == "suites:" { suites = line }
      tolower($1) == "components:" { comps = line }
      tolower($1) == "signed-by:" { key = line }
      END { if (!found) flush() }
    ' "$f" | head -n1 | grep . && return 0
  done
  for f in "${APT_ETC:-/etc/apt}"/sources.list "${APT_ETC:-/etc/apt}"/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    awk -v cn="$codename" '
      $1 == "deb" {
        key = "-"; i = 2
        if ($2 ~ /^\[/) {
          for (; i <= NF; i++) {
            if ($i ~ /^\[?signed-by=/) { key = $i; sub(/^\[?signed-by=/, "", key); sub(/\]$/, "", key) }
            if ($i ~ /\]$/) { i++; break }
          }
        }
        if ($(i + 1) == cn) { for (j = i + 2; j <= NF; j++) if ($j == "main") { print $i, key; exit } }
      }' "$f" | head -n1 | grep . && return 0
  done
  return 1
}

