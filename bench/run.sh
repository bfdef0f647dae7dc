#!/usr/bin/env bash
# vaultctl benchmark: bench/run.sh PATH/TO/vaultctl [--smoke] [options]  (see bench/run.py --help)
#
# pam_wrapper gives every process it is preloaded into a folder /tmp/pam.X (a fixed path) and removes it at
# exit. On an ext4 /tmp that a test suite has just churned, each of those file creations took ~0.3 ms (new
# inodes skip recently deleted ones), so the test PAM stack's start-up swung between 0.4 and 1.8 ms from run
# to run. As root, the benchmark therefore runs in a mount namespace of its own with a private tmpfs on /tmp
# (as many distributions mount /tmp anyway); its work folder, where vaultctl and the peers keep their
# state, stays on disk under /var/tmp. Not when the checkout, the binary or the current folder is under
# /tmp (the tmpfs would hide them) or no namespace can be made: then /tmp is the shared one, and the
# report says so.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
under_tmp() { case "$(realpath -m "$1")/" in /tmp/*) return 0 ;; *) return 1 ;; esac; }
if [ -z "${VAULTCTL_BENCH_IN_NAMESPACE:-}" ] && [ "$(id -u)" = 0 ] && [ $# -ge 1 ] \
   && ! under_tmp "$here" && ! under_tmp "$1" && ! under_tmp "$PWD" \
   && command -v unshare >/dev/null && unshare --mount --propagation private true 2>/dev/null; then
  exec env VAULTCTL_BENCH_IN_NAMESPACE=1 unshare --mount --propagation private -- "$here/run.sh" "$@"
fi
if [ "${VAULTCTL_BENCH_IN_NAMESPACE:-}" = 1 ]; then
  if mount -t tmpfs -o mode=1777,size=256m vaultctl-bench-tmp /tmp; then
    export VAULTCTL_BENCH_PRIVATE_TMP=1
    # The protected-mode rows install vaultctl-gate as `make install` does (a group, /var/lib/vaultctl, a
    # PAM stack): into overlays on /etc and /var/lib whose changes live in this namespace's /tmp only.
    o=/tmp/vaultctl-bench-overlay
    mkdir -p "$o"/etc "$o"/etc.work "$o"/varlib "$o"/varlib.work
    if mount -t overlay overlay -o "lowerdir=/etc,upperdir=$o/etc,workdir=$o/etc.work" /etc \
       && mount -t overlay overlay -o "lowerdir=/var/lib,upperdir=$o/varlib,workdir=$o/varlib.work" /var/lib; then
      export VAULTCTL_BENCH_OVERLAYS=1
    fi
  else
    echo "bench: could not mount a private tmpfs on /tmp; pam_wrapper's folders stay on the shared /tmp" >&2
  fi
fi
exec python3 "$here/run.py" "$@"
