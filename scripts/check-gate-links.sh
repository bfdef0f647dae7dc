#!/bin/bash
# Fails (1) when vaultctl-gate links code of a module it must not run (issue 34, point 1): the Secret Service
# client, sd-bus, libgcrypt, the KeePassXC connector, and the CLI's Vault module (its façade, hand-off,
# clipboard, credentials, input and the gate's client); GATE_FORBIDDEN_MODULES and GATE_FORBIDDEN_TYPES (types
# of the Vault module by name) add more.
# Usage: check-gate-links.sh PATH/TO/vaultctl-gate (an unstripped build: `swift build`, or make's release
# before any strip).
set -euo pipefail
gate=${1:?usage: check-gate-links.sh PATH/TO/vaultctl-gate}
[ -f "$gate" ] || { echo "check-gate-links: no such file: $gate" >&2; exit 66; }
command -v nm >/dev/null || { echo "check-gate-links: nm (binutils) is missing" >&2; exit 69; }
# Swift mangles a symbol of module M as $s<len(M)>M…, and a use of M's types inside another module's symbol
# (a generic specialisation, a witness table) as <len(M)>M… too: both are caught. No digit may come before
# the length: `15VaultLockRecord` must not match `5Vault`.
read -r -a modules <<<"SecretService Vault ${GATE_FORBIDDEN_MODULES:-}"
read -r -a types <<<"${GATE_FORBIDDEN_TYPES:-}"
pattern='^vaultctl_bus_'  # the connector's C functions (bus_connector.c)
for m in "${modules[@]}"; do pattern+="|(^|[^0-9])${#m}${m}"; done
for t in "${types[@]}"; do pattern+="|(^|[^0-9])5Vault${#t}${t}"; done
bad=$(nm --defined-only "$gate" | awk '{print $NF}' | grep -E "$pattern" || true)
# The names the sd-bus and libgcrypt loaders look up with dlsym (CSystemd's and CGcrypt's shim.h): strings,
# not symbols, since nothing links those libraries.
looked=$(grep -aoE '(sd_bus|gcry)_[a-z_]+' "$gate" | sort -u | head -5 || true)
if [ -n "$bad$looked" ]; then
  echo "vaultctl-gate links code it must not run ($(grep -c . <<<"$bad" || true) symbols):" >&2
  # How many of each forbidden module's, so its name is said whichever symbols the first lines show.
  for m in "${modules[@]}"; do
    n=$(grep -cE "(^|[^0-9])${#m}${m}" <<<"$bad" || true)
    [ "$n" -gt 0 ] && echo "  $n of module $m" >&2
  done
  [ -n "$bad" ] && head -20 <<<"$bad" | (swift demangle --compact 2>/dev/null || cat) | sed 's/^/  /' >&2
  [ -n "$looked" ] && echo "  and it looks up $(tr '\n' ' ' <<<"$looked")… (sd-bus, libgcrypt) with dlsym" >&2
  exit 1
fi
echo "vaultctl-gate: no code of ${modules[*]}${types:+ or of ${types[*]}}, the KeePassXC connector, sd-bus or libgcrypt"
