#!/usr/bin/env bash
# The Debian packages' life in a clean Debian 12 chroot: vaultctl alone installed and used (without the TPM
# package, and so without libtss2 and udev), then vaultctl-tpm added → upgrade → remove → purge, checking
# after each step what the packages say they do.
#
#   scripts/deb-cycle.sh vaultctl_VERSION_amd64.deb vaultctl-tpm_VERSION_amd64.deb
#
# The base system (debootstrap --variant=minbase, with the libraries vaultctl depends on, and the packages
# vaultctl-tpm depends on downloaded, not installed) is made once and kept in $VAULTCTL_CHROOT_CACHE
# (default /var/cache/vaultctl-chroot); each run works on an overlay of it in a mount namespace of its own,
# so nothing of a run stays and nothing on the host changes. vaultctl-tpm is installed by apt from that
# cache (--no-download), as a person's `apt install` would. A user made in the chroot with a password
# (chpasswd) stores and reads through vaultctl-gate on the real PAM stack (pam_unix). The upgrade installs
# the same packages with their version bumped (repacked, not rebuilt).
# Needs root, debootstrap, unshare, and the network once (Debian's archive).
set -euo pipefail

usage="usage: deb-cycle.sh vaultctl_VERSION_amd64.deb vaultctl-tpm_VERSION_amd64.deb"
deb=$(realpath "${1:?$usage}")
tpm_deb=$(realpath "${2:?$usage}")
cache=${VAULTCTL_CHROOT_CACHE:-/var/cache/vaultctl-chroot}
base=$cache/bookworm
libs=passwd,login,adduser,libpam-runtime,libpam-modules,libpam-modules-bin,libsodium23,libgcrypt20,libsystemd0
fail() { echo "deb-cycle: $*" >&2; exit 1; }
[ "$(dpkg-deb -f "$deb" Package)" = vaultctl ] && [ "$(dpkg-deb -f "$tpm_deb" Package)" = vaultctl-tpm ] || fail "$usage"
# What vaultctl-tpm depends on besides vaultctl (its libtss2 libraries, acl), to be downloaded into the base.
tpm_needs=$(dpkg-deb -f "$tpm_deb" Depends | tr ',' '\n' | sed 's/[(|].*//; s/ //g' | grep -vx -e vaultctl -e '' | sort | tr '\n' ' ')

[ "$(id -u)" = 0 ] || fail "needs root (a mount namespace and a chroot)"
# The base is made again when the packages it must hold change (the stamp names them).
if [ "$(cat "$base/.complete" 2>/dev/null)" != "$libs; $tpm_needs" ]; then
  command -v debootstrap >/dev/null || fail "debootstrap is missing (Debian package debootstrap; make deb-deps installs it)"
  rm -rf "$base"
  mkdir -p "$cache"
  echo "deb-cycle: making the base system in $base (once; kept for later runs)"
  # Bounded (the network): a mirror that stops answering fails the cycle in 20 minutes, not never.
  timeout 1200 debootstrap --variant=minbase --include="$libs" bookworm "$base" http://deb.debian.org/debian >"$cache/debootstrap.log" 2>&1 \
    || fail "debootstrap failed or took more than 20 minutes; see $cache/debootstrap.log"
  # vaultctl-tpm's dependencies, with what they pull in, into the base's apt cache (not installed).
  cp /etc/resolv.conf "$base/etc/resolv.conf" 2>/dev/null || true
  # shellcheck disable=SC2086 # a list of package names
  { timeout 600 chroot "$base" apt-get update && timeout 600 chroot "$base" apt-get install -y --download-only $tpm_needs; } >>"$cache/debootstrap.log" 2>&1 \
    || fail "downloading vaultctl-tpm's dependencies ($tpm_needs) failed; see $cache/debootstrap.log"
  printf '%s' "$libs; $tpm_needs" > "$base/.complete"
fi

work=$(mktemp -d /tmp/vaultctl-deb-cycle.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/upper" "$work/work" "$work/root"
cp "$deb" "$work/vaultctl.deb"
cp "$tpm_deb" "$work/vaultctl-tpm.deb"
# The upgrade: the same files, the version bumped by one Debian revision (vaultctl-tpm's exact dependency
# on vaultctl too).
version=$(dpkg-deb -f "$deb" Version)
bumped="${version%-*}-$(( ${version##*-} + 1 ))"
for p in vaultctl vaultctl-tpm; do
  dpkg-deb -R "$work/$p.deb" "$work/repack-$p"
  sed -i -e "s/^Version: .*/Version: $bumped/" -e "s/vaultctl (= $version)/vaultctl (= $bumped)/" "$work/repack-$p/DEBIAN/control"
  dpkg-deb -b "$work/repack-$p" "$work/$p-bumped.deb" >/dev/null
done

cat > "$work/inside.sh" <<'INSIDE'
set -euo pipefail
export PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8
fail() { echo "deb-cycle: $*" >&2; exit 1; }
step() { echo "deb-cycle: $*"; }
gate=/usr/libexec/vaultctl/vaultctl-gate
expect_mode() { # PATH OWNER:GROUP MODE
  [ "$(stat -c '%U:%G %a' "$1")" = "$2 $3" ] || fail "$1 is $(stat -c '%U:%G %a' "$1"), not $2 $3"
}
as_alice() { setpriv --reuid alice --regid alice --init-groups env -i HOME=/home/alice PATH=/usr/bin:/bin "$@"; }
helper=/usr/libexec/vaultctl/vaultctl-tpm
rule=/lib/udev/rules.d/60-vaultctl-tpm.rules
check_installed() {
  getent group vaultctl >/dev/null || fail "no group vaultctl"
  expect_mode "$gate" root:vaultctl 2755
  dpkg-statoverride --list "$gate" | grep -q "^root vaultctl 2755 $gate\$" || fail "no statoverride for the gate"
  expect_mode /var/lib/vaultctl root:vaultctl 770
  expect_mode /etc/pam.d/vaultctl root:root 644
  expect_mode /etc/vaultctl/policy.json root:root 644
  expect_mode /etc/vaultctl/gate.conf root:root 644
  [ -L /usr/bin/git-credential-vaultctl ] && [ "$(readlink /usr/bin/git-credential-vaultctl)" = vaultctl ] || fail "no git-credential-vaultctl link"
  dpkg --verify vaultctl || fail "dpkg --verify found changed files"
  [ -f /usr/share/man/man1/vaultctl.1.gz ] && [ -f /usr/share/bash-completion/completions/vaultctl ] \
    && [ -f /usr/share/fish/vendor_completions.d/vaultctl.fish ] && [ -f /usr/share/zsh/vendor-completions/_vaultctl ] \
    && [ -f /usr/share/doc/vaultctl/copyright ] \
    || fail "a documented file is missing"
}
# vaultctl alone: no TPM helper, no udev rule, none of what tpm2-tss brings (libtss2, udev, tpm-udev), and
# not acl (the rule's setfacl).
check_without_tpm() {
  [ ! -e "$helper" ] && [ ! -e "$rule" ] || fail "vaultctl alone has the TPM helper or its udev rule"
  pulled=$(dpkg-query -W -f '${db:Status-Abbrev} ${Package}\n' 2>/dev/null | awk '$1 ~ /^i/ && $2 ~ /^(libtss2|udev$|tpm-udev$|acl$)/ {print $2}' | tr '\n' ' ')
  [ -z "$pulled" ] || fail "vaultctl alone has $pulled installed"
}
check_tpm_installed() {
  expect_mode "$helper" root:root 755
  [ -f "$rule" ] || fail "no udev rule $rule"
  [ -L /usr/share/doc/vaultctl-tpm ] && [ -f /usr/share/doc/vaultctl-tpm/copyright ] || fail "no documentation for vaultctl-tpm"
  dpkg --verify vaultctl-tpm || fail "dpkg --verify found changed files in vaultctl-tpm"
  # The helper's libraries load: with no TPM here it answers with its one failure line.
  out=$(head -c 32 /dev/zero | "$helper" seal device:/dev/tpmrm0 2>/dev/null) && fail "the helper sealed with no TPM"
  case $out in unavailable*) ;; *) fail "the helper did not run: '$out'" ;; esac
}

[ -s /etc/machine-id ] || tr -d '-' < /proc/sys/kernel/random/uuid > /etc/machine-id
useradd -m -s /bin/sh alice
echo 'alice:Corr3ct-horse' | chpasswd

step "install vaultctl alone (what a container without a TPM needs)"
dpkg -i /tmp/vaultctl.deb >/tmp/dpkg.log 2>&1 || { cat /tmp/dpkg.log; fail "dpkg -i failed"; }
check_installed
check_without_tpm
step "use: alice stores and reads through the gate on pam_unix"
printf 'alices-secret' | as_alice vaultctl store mail >/dev/null
[ "$(printf 'Corr3ct-horse\n' | as_alice vaultctl read mail --password-stdin)" = alices-secret ] || fail "alice could not read her secret"
printf 'wrong\n' | as_alice vaultctl read mail --password-stdin >/dev/null 2>&1 && fail "a wrong password read the secret"
as_alice vaultctl status mail --json | grep -q '"boundary":"gate"' || fail "alice's vault is not behind the gate"
[ -n "$(ls -A /var/lib/vaultctl)" ] || fail "nothing in the gate's store"
as_alice ls /var/lib/vaultctl >/dev/null 2>&1 && fail "alice can look into the gate's store directly"

step "the gate's file gone: 69, naming the package's reinstall; run as printed from the package file, it is back"
mv "$gate" /tmp/gate.aside
code=0; printf 'other' | as_alice vaultctl store other >/dev/null 2>/tmp/alice.err || code=$?
[ "$code" = 69 ] && grep -qF "install vaultctl again with 'sudo apt install --reinstall ./vaultctl_*.deb'" /tmp/alice.err \
  || fail "a missing gate: exit $code, $(cat /tmp/alice.err)"
mkdir -p /tmp/pkg && cp /tmp/vaultctl.deb "/tmp/pkg/vaultctl_$(dpkg-deb -f /tmp/vaultctl.deb Version)_amd64.deb"
# The command as the message prints it, without its sudo (this is root), no answer to give on its input.
printed=$(grep -o "'sudo apt install --reinstall ./vaultctl_\*.deb'" /tmp/alice.err | head -n 1 | tr -d "'")
(cd /tmp/pkg && eval "${printed#sudo }" </dev/null) >/tmp/apt.log 2>&1 || { cat /tmp/apt.log; fail "the reinstall as printed ($printed) failed"; }
rm -rf /tmp/gate.aside /tmp/pkg
check_installed
[ "$(printf 'Corr3ct-horse\n' | as_alice vaultctl read mail --password-stdin)" = alices-secret ] || fail "the reinstalled gate did not give alice her secret"

step "a deleted account's uid given to a new account: the new one gets nothing of the old one's"
useradd -m -s /bin/sh erin
echo 'erin:Erin-pw-1' | chpasswd
as_erin() { setpriv --reuid "$1" --regid "$1" --init-groups env -i HOME="$(getent passwd "$1" | cut -d: -f6)" PATH=/usr/bin:/bin "${@:2}"; }
printf 'erins-secret' | as_erin erin vaultctl store bank >/dev/null
erin_uid=$(id -u erin)
userdel -r erin 2>/dev/null || true
useradd -m -u "$erin_uid" -s /bin/sh frank
echo 'frank:Frank-pw-1' | chpasswd
out=$(printf 'Frank-pw-1\n' | as_erin frank vaultctl read bank --password-stdin 2>/tmp/frank.err) && fail "frank read erin's secret: $out"
[ -z "$out" ] && grep -q "belongs to the account 'erin'" /tmp/frank.err || fail "frank was not told whose vault it is: $(cat /tmp/frank.err)"
as_erin frank vaultctl list >/dev/null 2>&1 && fail "frank listed erin's slots"
as_erin frank vaultctl log >/dev/null 2>&1 && fail "frank read erin's log"
rm -r "/var/lib/vaultctl/$erin_uid"   # root retires it, as the refusal says
printf 'franks-secret' | as_erin frank vaultctl store bank >/dev/null
[ "$(printf 'Frank-pw-1\n' | as_erin frank vaultctl read bank --password-stdin)" = franks-secret ] || fail "frank's own vault did not work"
userdel -r frank 2>/dev/null || true; rm -r "/var/lib/vaultctl/$erin_uid"

step "a TPM named in gate.conf without vaultctl-tpm: 69, naming the package"
useradd -m -s /bin/sh bob
cp /etc/vaultctl/gate.conf /tmp/gate.conf.shipped
printf '{"version": 1, "tpm": "device:/dev/tpmrm0"}\n' > /etc/vaultctl/gate.conf
code=0; printf 'bobs-secret' | as_erin bob vaultctl store mail >/dev/null 2>/tmp/bob.err || code=$?
[ "$code" = 69 ] && grep -q "apt install vaultctl-tpm" /tmp/bob.err || fail "bob's store with no helper: exit $code, $(cat /tmp/bob.err)"
cp /tmp/gate.conf.shipped /etc/vaultctl/gate.conf

step "install vaultctl-tpm (apt, its dependencies from the base's cache)"
# Not --no-download: apt then names the local .deb by a relative path and stops ("Pathname to install is
# not absolute"); everything else is in /var/cache/apt/archives already, so nothing is downloaded.
apt-get install -y /tmp/vaultctl-tpm.deb >/tmp/apt.log 2>&1 || { cat /tmp/apt.log; fail "apt-get install vaultctl-tpm failed"; }
grep -q '^Get:.*http' /tmp/apt.log && { cat /tmp/apt.log; fail "apt downloaded packages the base's cache should hold"; }
check_installed
check_tpm_installed
[ "$(printf 'Corr3ct-horse\n' | as_alice vaultctl read mail --password-stdin)" = alices-secret ] || fail "alice's secret did not read with vaultctl-tpm installed"
# Now the gate starts the helper for a TPM gate.conf names (here no TPM answers: 69, not the missing package).
printf '{"version": 1, "tpm": "device:/dev/tpmrm0"}\n' > /etc/vaultctl/gate.conf
code=0; printf 'bobs-secret' | as_erin bob vaultctl store mail >/dev/null 2>/tmp/bob.err || code=$?
[ "$code" = 69 ] && ! grep -q "apt install vaultctl-tpm" /tmp/bob.err || fail "bob's store with the helper and no TPM: exit $code, $(cat /tmp/bob.err)"
cp /tmp/gate.conf.shipped /etc/vaultctl/gate.conf
bob_uid=$(id -u bob); userdel -r bob 2>/dev/null || true; rm -rf "/var/lib/vaultctl/$bob_uid"

step "upgrade (the versions bumped), an administrator's statoverride kept"
dpkg-statoverride --remove "$gate"
dpkg-statoverride --update --add root vaultctl 2750 "$gate"
dpkg -i /tmp/vaultctl-bumped.deb /tmp/vaultctl-tpm-bumped.deb >/tmp/dpkg.log 2>&1 || { cat /tmp/dpkg.log; fail "the upgrade failed"; }
expect_mode "$gate" root:vaultctl 2750
dpkg-statoverride --remove "$gate"
dpkg-statoverride --update --add root vaultctl 2755 "$gate"
check_installed
check_tpm_installed
[ "$(printf 'Corr3ct-horse\n' | as_alice vaultctl read mail --password-stdin)" = alices-secret ] || fail "the upgrade lost alice's secret"

step "the gate's override removed, then an upgrade: 69, with the line that puts the gate back (README.Debian)"
dpkg-statoverride --remove "$gate"
dpkg -i /tmp/vaultctl-bumped.deb /tmp/vaultctl-tpm-bumped.deb >/tmp/dpkg.log 2>&1 || { cat /tmp/dpkg.log; fail "the reinstall failed"; }
expect_mode "$gate" root:root 755
fix="dpkg-statoverride --update --add root vaultctl 2755 $gate"
code=0; printf 'other' | as_alice vaultctl store other >/dev/null 2>/tmp/alice.err || code=$?
[ "$code" = 69 ] && grep -qF "'sudo $fix'" /tmp/alice.err || fail "a gate without its mode: exit $code, $(cat /tmp/alice.err)"
$fix
check_installed
[ "$(printf 'Corr3ct-horse\n' | as_alice vaultctl read mail --password-stdin)" = alices-secret ] || fail "the gate's override put back did not give alice her secret"

step "remove: the programs go, people's data and the configuration stay"
dpkg -r vaultctl-tpm vaultctl >/tmp/dpkg.log 2>&1 || { cat /tmp/dpkg.log; fail "dpkg -r failed"; }
[ ! -e /usr/bin/vaultctl ] && [ ! -e "$gate" ] && [ ! -e "$helper" ] && [ ! -e "$rule" ] || fail "a program is left after remove"
[ -d /var/lib/vaultctl ] && [ -n "$(ls -A /var/lib/vaultctl)" ] || fail "remove took people's data"
[ -f /etc/vaultctl/policy.json ] || fail "remove took a conffile"
dpkg-statoverride --list "$gate" >/dev/null 2>&1 || fail "remove took the gate's statoverride"
getent group vaultctl >/dev/null || fail "remove took the group"

step "purge: nothing of the package left but /var/lib/vaultctl"
dpkg -P vaultctl-tpm vaultctl >/tmp/dpkg.log 2>&1 || { cat /tmp/dpkg.log; fail "dpkg -P failed"; }
grep -q "kept /var/lib/vaultctl" /tmp/dpkg.log || fail "purge did not say that it kept /var/lib/vaultctl"
[ -d /var/lib/vaultctl ] && [ -n "$(ls -A /var/lib/vaultctl)" ] || fail "purge took people's data"
dpkg-statoverride --list "$gate" >/dev/null 2>&1 && fail "purge left the gate's statoverride"
left=$(for d in /tmp/vaultctl.deb /tmp/vaultctl-tpm.deb; do dpkg-deb -c "$d"; done | awk '{print $6}' | sed 's|^\.||' | while read -r p; do
  [ -n "$p" ] && [ "$p" != / ] && { [ -e "$p" ] || [ -L "$p" ]; } && [ ! -d "$p" ] && echo "$p"; done || true)
[ -z "$left" ] || fail "purge left: $left"
[ ! -e /etc/vaultctl ] && [ ! -e /etc/pam.d/vaultctl ] || fail "purge left configuration in /etc"
expect_mode /var/lib/vaultctl root:vaultctl 770
getent group vaultctl >/dev/null || fail "purge took the group, which the kept store belongs to"
step "done"
INSIDE

unshare -m --propagation private bash -c '
  set -euo pipefail
  work=$1 base=$2
  mount -t overlay overlay -o "lowerdir=$base,upperdir=$work/upper,workdir=$work/work" "$work/root"
  mount -t proc proc "$work/root/proc"
  # A /dev of its own: the usual nodes only, no device of the host (no TPM).
  mount -t tmpfs -o mode=755 tmpfs "$work/root/dev"
  for n in null zero full random urandom tty; do touch "$work/root/dev/$n"; mount --bind "/dev/$n" "$work/root/dev/$n"; done
  # Pseudo-terminals of its own (apt and dpkg want one for their logs).
  mkdir "$work/root/dev/pts" && mount -t devpts -o newinstance,ptmxmode=0666 devpts "$work/root/dev/pts"
  ln -s pts/ptmx "$work/root/dev/ptmx"
  mount -t tmpfs tmpfs "$work/root/tmp"
  mount -t tmpfs tmpfs "$work/root/run"
  cp "$work"/vaultctl*.deb "$work/inside.sh" "$work/root/tmp/"
  chroot "$work/root" /bin/bash /tmp/inside.sh
' deb-cycle "$work" "$base"
