#!/usr/bin/env bash
# Proves the README's `npm ci && npm test` on a bare machine: no root, nothing installed with apt-get.
# A fresh clone of this checkout (with its uncommitted changes, without node_modules) runs as an
# unprivileged user (uid 65534) in its own mount namespace where the system's Redis, nginx, openssl,
# ab, curl and Prometheus binaries (what the other suites apt-install) are covered by an empty,
# non-executable file, with an empty HOME (so empty npm and pip caches) and an empty
# server cache (SWITCHYARD_CACHE). Needs root only to build that namespace; prints the counts and times.
#
# Usage: .ci/bare-machine.sh [TEST_FILE ...]   (files instead of the whole `npm test`, for a quick check)
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" != 0 ]; then
  echo "bare-machine.sh needs root to make the mount namespace and switch to an unprivileged user" >&2
  exit 1
fi
bare_uid=65534 # nobody: no home, no groups, owns nothing on the system
root=$(mktemp -d /tmp/switchyard-bare-XXXXXX)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/checkout" "$root/home" "$root/cache"
# A fresh clone (tests name the checkout by its commit), with the working tree's tracked and new
# files laid over it, so uncommitted changes are what runs; node_modules (a link in a worktree) stays behind.
git clone -q --no-hardlinks "$PWD" "$root/checkout"
git ls-files -z --cached --others --exclude-standard | grep -zv '^node_modules$' \
  | while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done \
  | tar --null -T - -cf - | tar -xf - -C "$root/checkout"
: >"$root/empty" # mode 644: cannot be executed (spawn gets EACCES, as if the package were absent)
chown -R "$bare_uid:$bare_uid" "$root/checkout" "$root/home" "$root/cache"
chmod 755 "$root"

hide=""
for name in redis-server redis-sentinel redis-cli redis-check-aof redis-check-rdb redis-benchmark nginx openssl ab curl promtool prometheus; do
  for dir in /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin; do
    if [ -e "$dir/$name" ]; then hide="$hide $(readlink -f "$dir/$name")"; fi
  done
done
hide=$(printf '%s\n' $hide | sort -u | paste -sd' ')
echo "bare machine: uid $bare_uid, HOME and SWITCHYARD_CACHE empty, hidden: ${hide:-nothing (none was installed)}"

tests=("$@")
export BARE_HIDE="$hide" BARE_ROOT="$root" BARE_UID="$bare_uid" BARE_TESTS="${tests[*]:-}"
# --propagation private: the covers stay inside this namespace.
unshare -m --propagation private bash -euo pipefail -c '
  for path in $BARE_HIDE; do mount --bind "$BARE_ROOT/empty" "$path"; done
  exec setpriv --reuid="$BARE_UID" --regid="$BARE_UID" --clear-groups \
    env -i HOME="$BARE_ROOT/home" SWITCHYARD_CACHE="$BARE_ROOT/cache" PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 \
      TESTS="$BARE_TESTS" bash -euo pipefail -c "
        cd \"$BARE_ROOT/checkout\"
        for name in redis-server redis-sentinel redis-cli nginx openssl; do
          if [ -x \"\$(command -v \$name)\" ]; then echo \"bare machine: \$name is still runnable\" >&2; exit 1; fi
        done
        start=\$SECONDS
        npm ci --no-audit --no-fund --loglevel=error
        echo \"bare machine: npm ci \$((SECONDS - start)) s\"
        start=\$SECONDS
        if [ -n \"\$TESTS\" ]; then
          npm run -s check-node && node_modules/.bin/node --test --test-concurrency=2 --test-timeout=120000 \$TESTS
        else
          npm test
        fi
        echo \"bare machine: tests \$((SECONDS - start)) s\"
      "
' 2>&1 | tee "$root/log"
status=${PIPESTATUS[0]}
# The caller may take the node_modules this run installed (the same `npm ci` from the same lockfile)
# instead of installing again: BARE_HAND_OVER_NODE_MODULES names where they go.
if [ "$status" = 0 ] && [ -n "${BARE_HAND_OVER_NODE_MODULES:-}" ] && [ ! -e "$BARE_HAND_OVER_NODE_MODULES" ]; then
  mv "$root/checkout/node_modules" "$BARE_HAND_OVER_NODE_MODULES"
  chown -R 0:0 "$BARE_HAND_OVER_NODE_MODULES"
fi
echo "bare machine: $(grep -E '^ℹ (tests|pass|fail|cancelled|skipped) ' "$root/log" | tail -5 | sed 's/^ℹ //' | paste -sd, | sed 's/,/, /g'), exit $status"
exit "$status"
