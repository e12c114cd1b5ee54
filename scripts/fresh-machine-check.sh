#!/usr/bin/env bash
# Runs the README's first command (./scripts/demo.sh) — and with --all also the
# second (./scripts/test.sh, which must skip nothing) — on a pristine Debian 12,
# so that a package missing from scripts/install-deps.sh fails here even when
# every developer machine happens to have it.
#
# It builds a minimal Debian 12 root (mmdebstrap --variant=minbase) from this
# machine's own Debian apt sources (read from /etc/apt, never written into the
# repo; third-party repositories are left out, so node/npm come from Debian as
# they would for a new user), puts a `git clone` of HEAD in it (uncommitted
# files cannot help), and runs the command there as root, in a private mount
# and PID namespace whose root is pivot_root'ed into the new tree. pivot_root
# and not chroot: the kernel refuses to create a user namespace from inside a
# chroot (EPERM), so the codex sandbox (bubblewrap) would not work in one. The
# root is removed afterwards, also on failure or interrupt.
#
# Needs root on the host. Usage: scripts/fresh-machine-check.sh [--all] [--keep]
# FRESH_ROOT_PARENT sets where the root is built (default: /var/tmp).
# --keep leaves the root (and its build) in place and prints its path;
# FRESH_ROOT=that path runs again in it: no new mmdebstrap, its /src moved to
# this HEAD, what the last run installed and built still there (quick to
# iterate on a failure; the proof of a complete install is a run without it).
# There FRESH_CMD, when set, is run instead of the README's commands (e.g. one
# test: FRESH_CMD='CI=true ctest --test-dir build -R NAME').
set -euo pipefail
# All in one function, read whole before it runs: bash reads a script as it
# goes, and this one runs long enough for someone to edit it meanwhile.
main() {
cd "$(dirname "$0")/.."
repo=$(pwd)

all=0
keep=0
for arg in "$@"; do
  case "$arg" in
    --all) all=1 ;;
    --keep) keep=1 ;;
    *)
      echo "error: unknown argument '$arg'; usage: scripts/fresh-machine-check.sh [--all] [--keep]" >&2
      exit 2
      ;;
  esac
done
reuse="${FRESH_ROOT:-}"
if [[ -n "$reuse" && ! -d "$reuse/src/.git" ]]; then
  echo "error: FRESH_ROOT=$reuse is not a root a --keep run left (no $reuse/src/.git); unset it" >&2
  exit 2
fi
if [[ -n "$reuse" ]]; then keep=1; fi
if [[ -n "${FRESH_CMD:-}" && -z "$reuse" ]]; then
  echo "error: FRESH_CMD is for a kept root (FRESH_ROOT=...); a pristine check runs the README's commands" >&2
  exit 2
fi
if [[ $(id -u) -ne 0 ]]; then
  echo "error: building a Debian root and pivoting into it needs root; run it as root (or with sudo)" >&2
  exit 1
fi

start=$SECONDS
step_start=$SECONDS
times_file=$(mktemp)
step() {  # the step that just ended: its wall time, the total, and the CPU time of
  # everything run so far (`times`, in this shell: its second line is our
  # children's), the figure that does not depend on how busy the machine is
  times >"$times_file"
  local cpu
  cpu=$(tail -n 1 "$times_file")
  echo "== fresh machine: $1: $((SECONDS - step_start)) s wall (total $((SECONDS - start)) s; CPU so far: ${cpu/ / user, } sys)"
  step_start=$SECONDS
}

trap 'rm -f "$times_file"' EXIT
if ! command -v mmdebstrap >/dev/null; then
  echo "== fresh machine: installing mmdebstrap (the tool that builds the Debian root)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mmdebstrap >/dev/null
fi

# This machine's Debian sources, as one-line entries for mmdebstrap. Only
# Debian's own bookworm suites: a third-party repository (nodesource, a cloud
# SDK) would give the root packages a new user does not have.
debian_sources() {
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [[ -f "$f" ]] || continue
    # deb [options] URI SUITE COMPONENTS...
    sed -e 's/#.*//' -e 's/\[[^]]*\]//' "$f" | awk '$1 == "deb" && NF >= 4 {
      line = "deb " $2 " " $3; for (i = 4; i <= NF; i++) line = line " " $i; print line }'
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ -f "$f" ]] || continue
    # deb822 stanzas: Types, URIs, Suites, Components (continuation lines not used by apt for these)
    awk 'function flush(  u, s, nu, ns, us, ss, i, j) {
           if (types ~ /(^| )deb( |$)/ && enabled != "no" && uris != "" && suites != "") {
             nu = split(uris, us, " "); ns = split(suites, ss, " ")
             for (i = 1; i <= nu; i++) for (j = 1; j <= ns; j++) print "deb " us[i] " " ss[j] " " comps
           }
           types = ""; uris = ""; suites = ""; comps = ""; enabled = ""
         }
         /^[ \t]*#/ { next }
         /^[ \t]*$/ { flush(); next }
         { key = tolower($1); sub(/:$/, "", key); $1 = ""; sub(/^ +/, "")
           if (key == "types") types = $0; else if (key == "uris") uris = $0
           else if (key == "suites") suites = $0; else if (key == "components") comps = $0
           else if (key == "enabled") enabled = tolower($0) }
         END { flush() }' "$f"
  done
}
mapfile -t sources < <(debian_sources | awk '$3 ~ /^bookworm(-updates|-security)?$/' | sort -u)
if ((${#sources[@]} == 0)); then
  echo "error: no Debian bookworm apt source found in /etc/apt/sources.list{,.d}; add one (deb.debian.org or a mirror)" >&2
  exit 1
fi

parent="${FRESH_ROOT_PARENT:-/var/tmp}"
if [[ -n "$reuse" ]]; then
  root=$(cd "$reuse" && pwd)
else
  root=$(mktemp -d "$parent/codex-fresh-root-XXXXXX")
fi
cleanup() {
  if ((keep)); then
    rm -f "$times_file"
    echo "== fresh machine: kept the root: FRESH_ROOT=$root scripts/fresh-machine-check.sh runs in it again; rm -rf --one-file-system $root removes it"
    return
  fi
  # The mounts live in the namespace of the command below and died with it;
  # --one-file-system still keeps rm away from anything left mounted.
  if findmnt -rn -o TARGET | grep -q "^$root"; then
    echo "error: something is still mounted under $root; not removing it" >&2
    return
  fi
  rm -rf --one-file-system "$root"
  rm -f "$root.log" "$times_file"
}
trap cleanup EXIT
trap 'exit 130' INT TERM  # so that the EXIT trap runs

if [[ -n "$reuse" ]]; then
  echo "== fresh machine: reusing the root $root (not pristine: the last run's packages and build are in it)"
  git -C "$root/src" fetch --quiet "$repo" HEAD
  git -C "$root/src" checkout --quiet --detach "$(git rev-parse HEAD)"
else
  echo "== fresh machine: building a minimal Debian 12 root in $root from ${#sources[@]} apt sources"
  mmdebstrap --quiet --variant=minbase --include=ca-certificates bookworm "$root" "${sources[@]}"
  step "mmdebstrap"
  git clone --quiet --no-hardlinks "$repo" "$root/src"
  git -C "$root/src" checkout --quiet --detach "$(git rev-parse HEAD)"
fi
# The root shares this machine's network, so it gets what the network needs:
# the resolver, and the certificate authorities added locally (a proxy that
# intercepts TLS: npm in `--all` fails without them). Packages are not copied.
cp /etc/resolv.conf "$root/etc/resolv.conf"
net_env=()
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
  chroot "$root" update-ca-certificates >/dev/null 2>&1
  echo "== fresh machine: added this machine's local certificate authorities to the root (for its network)"
  # Node.js trusts its own bundled authorities unless told otherwise.
  net_env+=(NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt)
fi
for v in http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY; do
  if [[ -n "${!v:-}" ]]; then net_env+=("$v=${!v}"); fi
done
echo "== fresh machine: $root/src is a clone of HEAD $(git rev-parse --short HEAD)"

cmd="./scripts/demo.sh"
if ((all)); then cmd="./scripts/demo.sh && CI=true ./scripts/test.sh"; fi
if [[ -n "${FRESH_CMD:-}" ]]; then cmd=$FRESH_CMD; fi

# In a new mount + PID namespace: bind the root onto itself, give it /proc,
# /sys, /dev and a fresh /tmp, pivot_root into it, drop the old root, and run
# the commands as a newcomer would (a login shell's PATH, HOME=/root).
inner=$(
  cat <<'INNER'
set -euo pipefail
root=$1
cmd=$2
shift 2  # the rest: NAME=VALUE of this machine's network settings
mount --make-rprivate /
mount --bind "$root" "$root"
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"
mount -t tmpfs -o mode=1777 tmpfs "$root/tmp"
mkdir -p "$root/.old-root"
cd "$root"
pivot_root . .old-root
umount -l /.old-root
rmdir /.old-root
exec /usr/sbin/chroot / /usr/bin/env -i HOME=/root TERM="${TERM:-dumb}" LANG=C.UTF-8 \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@" \
  /bin/bash -c "cd /src && $cmd"
INNER
)
echo "== fresh machine: running '$cmd' inside it"
log="$root.log"
set +e
unshare --mount --pid --fork --kill-child /bin/bash -c "$inner" inner "$root" "$cmd" \
  "${net_env[@]}" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
step "'$cmd' inside the root"
if ((rc != 0)); then
  echo "== fresh machine: FAILED ('$cmd' exited $rc)" >&2
  exit "$rc"
fi
# The demo's shell call must have run under the full sandbox, not a fallback
# that a missing package (bubblewrap) or the root's setup would cause.
if [[ -z "${FRESH_CMD:-}" ]] && ! grep -qE '^namespaces +on ' "$log"; then
  echo "== fresh machine: FAILED: the demo's sandbox ran without its namespaces layer (see 'namespaces' above)" >&2
  exit 1
fi
echo "== fresh machine: passed"
}
main "$@"
exit
