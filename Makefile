# vaultctl — the two set-up commands are `make demo` and `make test`; both install what is missing first.
SHELL := /bin/bash
PREFIX ?= /usr/local
SWIFT ?= swift
# Build dependencies (what `make` needs) apart from test dependencies (what `make test`, the demo and the
# benchmark need too); `make install` needs neither. tpm2-tss (libtss2-dev) builds the vaultctl-tpm helper;
# swtpm, swtpm-tools and tpm2-tools give the tests a software TPM and a cross-check of the stored blobs;
# python3-dbus/-gi play scripted Secret Service providers, python3-cryptography the other side of the session
# encryption, and keepassxc is the second real provider; openssh-server and iproute2 run the receiving
# machine of send/receive in a network namespace of its own; fprintd (its virtual reader), libpam-fprintd and
# python3-dbusmock (polkit) give the presence tests a real fingerprint stack, libpam-u2f the security-key one.
BUILD_PACKAGES := libsodium-dev libpam0g-dev libsystemd-dev libgcrypt20-dev libtss2-dev pkg-config
TEST_PACKAGES := libpam-wrapper gnome-keyring libsecret-tools dbus-daemon dbus libglib2.0-bin util-linux \
                 openssh-client openssh-server iproute2 groff-base man-db bash zsh fish git python3 xvfb xclip xsel wl-clipboard sway \
                 python3-dbus python3-gi python3-cryptography keepassxc xdotool swtpm swtpm-tools tpm2-tools strace pamtester \
                 fprintd libpam-fprintd python3-dbusmock libpam-u2f binutils
DEBIAN_PACKAGES := $(BUILD_PACKAGES) $(TEST_PACKAGES)
# What `make demo` uses beyond the build: a private bus with gnome-keyring (gdbus checks it is up),
# secret-tool for one step, pam_wrapper for the demo's PAM stack. Not the shells, sway or KeePassXC.
DEMO_PACKAGES := libpam-wrapper gnome-keyring libsecret-tools dbus-daemon dbus libglib2.0-bin

.PHONY: all deps build-deps demo-deps deb-deps build release dist test test-fast demo install uninstall clean fuzz bench bench-smoke sanitize deb deb-check deb-cycle

# `make`: as yourself, the release binary and the files `make install` copies (into $(DIST)).
all: release
	@$(MAKE) --no-print-directory dist BIN="$(RELEASE_BIN)"

# Installs the Debian packages that are missing: deps for everything, build-deps for `make` only.
deps: PACKAGES = $(DEBIAN_PACKAGES)
build-deps: PACKAGES = $(BUILD_PACKAGES)
demo-deps: PACKAGES = $(BUILD_PACKAGES) $(DEMO_PACKAGES)
deps build-deps demo-deps deb-deps:
	@missing=$$(for p in $(PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "Installing: $$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

build: build-deps
	$(SWIFT) build

# Release builds are tuned for start-up, which is most of a command's time (docs/benchmarks.md):
# - the Swift runtime linked statically (--static-swift-stdlib), and libstdc++ too: loading the shared
#   libstdc++ was ~0.3 ms. The linker looks in $(STATIC_CXX) first, where libstdc++.so is a linker script
#   naming the static archive (when the compiler has one; else it is absent and the shared one is used);
# - generic type metadata reached through accessor functions instead of mangled names that the runtime
#   demangles on first use (~0.15 ms of a gated read);
# - no $ORIGIN run path: the loader looked for every shared library beside the binary first (20 failed
#   lookups), and a library planted beside an installed vaultctl would have been loaded;
# - libgcc linked statically: loading libgcc_s.so.1 and running its constructor (CPUID probes, each a
#   trap to the hypervisor in a VM) was ~0.1 ms. (GNU ld instead of gold looked faster still, but only
#   because its output had no RELRO and a writable .rodata.)
# - linked by lld (the Swift toolchain's own) with packed relative relocations (DT_RELR, glibc >= 2.36):
#   gold wrote ~23,000 relative relocations as 550 KB of RELA entries that the loader read page by page at
#   every start; as RELR they are 4 KB. ~0.15 ms a process, and a protected command is two (vaultctl and
#   vaultctl-gate). lld also keeps .rodata and the Swift metadata out of the executable segment, which
#   gold did not; RELRO is as before.
# - without the implicit import of the concurrency module (no vaultctl code is async): every Swift module
#   imports _Concurrency unless told not to, and with it the static concurrency runtime, libdispatch and
#   their constructors came into vaultctl-gate (libdispatch_init read sysfs twice at every start); without
#   them the gate is 1.1 MB smaller with 21 fewer pages to relocate, ~0.12 ms off a protected read and a
#   protected status (interleaved, 800 rounds).
# - no exported dynamic symbols (--no-export-dynamic after the -export-dynamic that the toolchain's
#   static-stdlib-args.lnk adds with --static-swift-stdlib): nothing loads
#   symbols from vaultctl or the gate (libpam and the PAM modules take theirs from libpam), and the ~1,700
#   public Swift symbols of our modules in .dynsym were mapped, hashed and, at every start, scanned one by
#   one by the runtime's dladdr (it looks for its own path); ~0.08 ms off a protected read or status.
# lld with packed relative relocations where the toolchain has ld.lld beside swift and the C library is
# glibc 2.36 or later (older ones cannot load DT_RELR); else the default linker, as before.
SWIFT_BIN_DIR := $(dir $(realpath $(shell command -v $(SWIFT) 2>/dev/null)))
GLIBC_VERSION := $(word 2,$(shell getconf GNU_LIBC_VERSION 2>/dev/null))
RELEASE_LINKER := $(if $(and $(wildcard $(SWIFT_BIN_DIR)ld.lld),$(shell printf '2.36\n%s\n' '$(GLIBC_VERSION)' | sort -V -C 2>/dev/null && echo yes)),\
                  -Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs)
STATIC_CXX := $(CURDIR)/.build/static-cxx
# Extra flags for a release build, empty unless given (debian/rules gives the package's; its C flags go
# through CC, debian/clang-buildflags): RELEASE_LDFLAGS as a C compiler driver takes them (dpkg-buildflags'
# LDFLAGS: -Wl,-z,relro becomes -Xlinker -z -Xlinker relro; any other word is passed with -Xlinker as it
# is); RELEASE_SWIFTFLAGS in SwiftPM's own form.
RELEASE_LDFLAGS ?=
RELEASE_SWIFTFLAGS ?=
comma := ,
release_ldflag = $(if $(filter -Wl$(comma)%,$(1)),$(foreach w,$(subst $(comma), ,$(patsubst -Wl$(comma)%,%,$(1))),-Xlinker $(w)),-Xlinker $(1))
RELEASE_FLAGS := -c release --static-swift-stdlib --disable-local-rpath -Xswiftc -L$(STATIC_CXX) \
                 -Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors \
                 -Xswiftc -Xfrontend -Xswiftc -disable-implicit-concurrency-module-import -Xlinker --no-export-dynamic \
                 -Xswiftc -Xclang-linker -Xswiftc -static-libgcc $(RELEASE_LINKER) \
                 $(foreach f,$(RELEASE_LDFLAGS),$(call release_ldflag,$(f))) $(RELEASE_SWIFTFLAGS)

# The release binary's path, asked of SwiftPM when a recipe runs (after `release` built it).
RELEASE_BIN = $$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/vaultctl

$(STATIC_CXX)/.made:
	@mkdir -p $(STATIC_CXX); \
	for cc in cc gcc clang; do a=$$($$cc -print-file-name=libstdc++.a 2>/dev/null) && [ -f "$$a" ] && break; a=; done; \
	if [ -n "$$a" ]; then echo "INPUT($$a)" > $(STATIC_CXX)/libstdc++.so; else rm -f $(STATIC_CXX)/libstdc++.so; fi; \
	touch $@

release: build-deps $(STATIC_CXX)/.made
	$(SWIFT) build $(RELEASE_FLAGS)

# Every test: unit tests with fakes, and end-to-end tests that run the built binary against a real
# gnome-keyring on private D-Bus buses and real libpam under pam_wrapper (the tests start and stop them).
test: deps
	$(SWIFT) build
	scripts/check-gate-links.sh "$$($(SWIFT) build --show-bin-path)/vaultctl-gate"
	scripts/gate-modules.py --check docs/gate.md
	$(SWIFT) test

# The fast tier, for a laptop: every test but the suites tagged needsRoot or needsServices
# (Tests/TestSupport/Tags.swift), so no root and none of the services above. Swift 6.3's `swift test` cannot
# select by tag (`--skip tag:needsRoot` is read as a name pattern), so scripts/tagged-suites.py reads the
# tagged suites from the sources and gives their names to --skip.
test-fast: build-deps
	skip=$$(scripts/tagged-suites.py) && $(SWIFT) test --skip "$$skip"

# An unattended tour: store, list, gated read and delete through a demo PAM stack; it fails when a step does
# not do what it shows (DemoTests runs it too).
demo: demo-deps release
	scripts/demo.sh "$(RELEASE_BIN)"

# Benchmark (bench/run.py): the release binary (--static-swift-stdlib) against secret-tool, pass, age and
# systemd-creds, on its own private Secret Service and pam_wrapper stack, and the JSON library probes
# (bench/json-probes); prints the table and writes docs/benchmarks.md. bench-smoke: tiny counts, writes nothing (CI). More options: BENCH_ARGS='--rounds 50'.
bench: deps release
	bench/run.sh "$(RELEASE_BIN)" $(BENCH_ARGS)

bench-smoke: deps release
	bench/run.sh "$(RELEASE_BIN)" --smoke $(BENCH_ARGS)

# The unit suites under AddressSanitizer, and the ones with concurrent parts (rate limit, record, state files,
# concurrent SecretBytes use, the two-thread status look) under ThreadSanitizer. The end-to-end suites cannot run
# sanitized: pam_wrapper dlopens libpam with RTLD_DEEPBIND, which the sanitizer runtimes refuse. Leak reports
# are off: the toolchain's XCTest and Foundation keep allocations to exit.
sanitize: deps
	ASAN_OPTIONS=detect_leaks=0 $(SWIFT) test --sanitize=address --build-path .build/asan --filter 'SlotsTests|VaultTests|GateServiceTests'
	TSAN_OPTIONS=halt_on_error=1 $(SWIFT) test --sanitize=thread --build-path .build/tsan \
	  --filter '(VaultTests|SlotsTests)\..*(RateLimiter|ModeRecord|StateFile|Interleaving|SecretBytes|BackgroundThread|ConcurrentStatus)'

# What `make install` copies, made from BIN (the release binary, by `make`) without root: the binary, the
# manual page and the three completion scripts, each generated by the binary from its command table.
DIST ?= $(CURDIR)/.build/dist
dist:
	@test -n "$(BIN)" || { echo "make dist: BIN=path/to/vaultctl is required" >&2; exit 2; }
	install -d $(DIST)
	install -m 0755 "$(BIN)" $(DIST)/vaultctl
	install -m 0755 "$$(dirname "$(BIN)")/vaultctl-tpm" $(DIST)/vaultctl-tpm
	install -m 0755 "$$(dirname "$(BIN)")/vaultctl-gate" $(DIST)/vaultctl-gate
	$(DIST)/vaultctl help --man > $(DIST)/vaultctl.1
	$(DIST)/vaultctl completion bash > $(DIST)/vaultctl.bash
	$(DIST)/vaultctl completion zsh > $(DIST)/_vaultctl
	$(DIST)/vaultctl completion fish > $(DIST)/vaultctl.fish

# `sudo make install` only copies what `make` made (and links git-credential-vaultctl, git's name for the
# credential helper, to the binary) (it runs no compiler and no apt-get, and writes nothing
# in the source tree). PREFIX and DESTDIR are honoured; the completion folders are the ones bash-completion,
# zsh and fish search under PREFIX (override BASHCOMPDIR, ZSHCOMPDIR, FISHCOMPDIR, MANDIR, PAMDIR). fish looks
# under PREFIX only when XDG_DATA_DIRS names it, which a login shell after `su -`, ssh or a console does not
# set: for any PREFIX but /usr its completion goes to /etc/fish/completions, which fish always searches.
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR ?= $(PREFIX)/share/zsh/site-functions
FISHCOMPDIR ?= $(if $(filter /usr,$(PREFIX)),$(PREFIX)/share/fish/vendor_completions.d,/etc/fish/completions)
PAMDIR ?= /etc/pam.d
# The PAM stack vaultctl authenticates with (policy/pam.d/, docs in docs/manual.md "Presence"): password (your login's,
# the default), fingerprint (pam_fprintd), security-key (pam_u2f) or password-and-key. `make install
# PAM_STACK=NAME` puts that one in $(PAMDIR)/vaultctl; without it the password stack goes there only when no
# stack is there, or the one there is the password stack vaultctl ships: a stack root chose stays.
PAM_STACK ?=
PAM_STACKS = password fingerprint security-key password-and-key
PAM_STACK_FILES = policy/pam.d/vaultctl $(foreach s,$(filter-out password,$(PAM_STACKS)),policy/pam.d/vaultctl-$(s))
# The documents messages and the manual page refer to, and the policy template (a copy to start a
# policy.json from) and the PAM stack as shipped.
DOCDIR ?= $(PREFIX)/share/doc/vaultctl
DOCS = README.md SECURITY.md CHANGELOG.md docs/manual.md docs/gate.md
# The gate (docs/gate.md): vaultctl looks for it at ../libexec/vaultctl/vaultctl-gate from its own folder, so
# LIBEXECDIR follows BINDIR's PREFIX. Its store and its configuration are fixed paths (not under PREFIX):
# the gate takes no path from anyone.
LIBEXECDIR = $(PREFIX)/libexec/vaultctl
GATE_GROUP = vaultctl
STOREDIR = /var/lib/vaultctl
CONFDIR = /etc/vaultctl
UDEVRULESDIR ?= /etc/udev/rules.d
INSTALLED = $(BINDIR)/vaultctl $(BINDIR)/vaultctl-tpm $(BINDIR)/git-credential-vaultctl $(MANDIR)/man1/vaultctl.1 \
            $(LIBEXECDIR)/vaultctl-gate $(LIBEXECDIR)/vaultctl-tpm \
            $(addprefix $(DOCDIR)/,$(DOCS)) $(DOCDIR)/policy.json $(addprefix $(DOCDIR)/pam.d/,$(notdir $(PAM_STACK_FILES))) \
            $(BASHCOMPDIR)/vaultctl $(ZSHCOMPDIR)/_vaultctl $(FISHCOMPDIR)/vaultctl.fish

install:
	@case " $(PAM_STACKS) " in *" $(or $(PAM_STACK),password) "*) ;; \
	  *) echo "make install: PAM_STACK=$(PAM_STACK) is not a stack vaultctl ships; give one of: $(PAM_STACKS)" >&2; exit 64 ;; esac
	@for f in vaultctl vaultctl-tpm vaultctl-gate vaultctl.1 vaultctl.bash _vaultctl vaultctl.fish; do \
	  [ -f "$(DIST)/$$f" ] || { echo "make install: $(DIST)/$$f is missing: run 'make' first as yourself, then 'sudo make install'" >&2; exit 1; }; \
	done
	install -D -m 0755 $(DIST)/vaultctl $(DESTDIR)$(BINDIR)/vaultctl
	install -D -m 0755 $(DIST)/vaultctl-tpm $(DESTDIR)$(BINDIR)/vaultctl-tpm
	ln -sfn vaultctl $(DESTDIR)$(BINDIR)/git-credential-vaultctl
	@# The PAM stack: the one asked for; else the password stack, unless root chose another.
	@stack=$(or $(PAM_STACK),password); src=policy/pam.d/vaultctl$$([ $$stack = password ] || echo -$$stack); \
	dest=$(DESTDIR)$(PAMDIR)/vaultctl; \
	if [ -n "$(PAM_STACK)" ] || [ ! -e "$$dest" ] || cmp -s "$$dest" policy/pam.d/vaultctl; then \
	  install -D -m 0644 "$$src" "$$dest" && echo "make install: $(PAMDIR)/vaultctl is the $$stack stack ($$src)"; \
	else \
	  echo "make install: kept $(PAMDIR)/vaultctl, a stack chosen before (PAM_STACK=NAME replaces it: $(PAM_STACKS))"; \
	fi
	@if [ -z "$(DESTDIR)" ] && [ "$(PAM_STACK)" = fingerprint ] && ! ls /usr/lib/*/security/pam_fprintd.so /lib*/security/pam_fprintd.so >/dev/null 2>&1; then \
	  echo "make install: pam_fprintd.so is not installed (Debian: libpam-fprintd), so this stack lets nobody read until it is"; fi
	@case "$(PAM_STACK)" in *key) \
	  [ -n "$(DESTDIR)" ] || ls /usr/lib/*/security/pam_u2f.so /lib*/security/pam_u2f.so >/dev/null 2>&1 || echo "make install: pam_u2f.so is not installed (Debian: libpam-u2f), so this stack lets nobody read until it is"; \
	  [ -s $(DESTDIR)$(CONFDIR)/u2f_mappings ] || echo "make install: enrol a key first: sudo sh -c 'pamu2fcfg -u USER >> $(CONFDIR)/u2f_mappings' (docs/manual.md, Presence)";; esac
	install -D -m 0644 $(DIST)/vaultctl.1 $(DESTDIR)$(MANDIR)/man1/vaultctl.1
	install -D -m 0644 $(DIST)/vaultctl.bash $(DESTDIR)$(BASHCOMPDIR)/vaultctl
	install -D -m 0644 $(DIST)/_vaultctl $(DESTDIR)$(ZSHCOMPDIR)/_vaultctl
	install -D -m 0644 $(DIST)/vaultctl.fish $(DESTDIR)$(FISHCOMPDIR)/vaultctl.fish
	for d in $(DOCS); do install -D -m 0644 $$d $(DESTDIR)$(DOCDIR)/$$d; done
	install -D -m 0644 policy/default.json $(DESTDIR)$(DOCDIR)/policy.json
	for f in $(PAM_STACK_FILES); do install -D -m 0644 $$f $(DESTDIR)$(DOCDIR)/pam.d/$$(basename $$f); done
	@# The old gate loses its group and execute bits before it is replaced, as the package manager does for set-ID files:
	@# a program holding it open could otherwise still run it, set-group-ID, through /proc/self/fd.
	@[ ! -f $(DESTDIR)$(LIBEXECDIR)/vaultctl-gate ] || chmod 0700 $(DESTDIR)$(LIBEXECDIR)/vaultctl-gate
	install -D -m 0755 $(DIST)/vaultctl-gate $(DESTDIR)$(LIBEXECDIR)/vaultctl-gate
	@# The TPM helper beside the gate too: the gate runs the one beside itself, with the TPM of gate.conf.
	install -D -m 0755 $(DIST)/vaultctl-tpm $(DESTDIR)$(LIBEXECDIR)/vaultctl-tpm
	@# The root policy the gate enforces and its configuration (the TPM): copies of the defaults, never
	@# over ones an administrator changed.
	@[ -e $(DESTDIR)$(CONFDIR)/policy.json ] || install -D -m 0644 policy/default.json $(DESTDIR)$(CONFDIR)/policy.json
	@[ -e $(DESTDIR)$(CONFDIR)/gate.conf ] || install -D -m 0644 policy/gate.conf $(DESTDIR)$(CONFDIR)/gate.conf
	@# The udev rule that gives group vaultctl the TPM (an ACL on /dev/tpmrm*), when asked for.
	@if [ "$(TPM_RULE)" = yes ]; then \
	  install -D -m 0644 policy/udev/60-vaultctl-tpm.rules $(DESTDIR)$(UDEVRULESDIR)/60-vaultctl-tpm.rules; \
	  if [ -z "$(DESTDIR)" ] && command -v udevadm >/dev/null && udevadm control --reload 2>/dev/null; then \
	    udevadm trigger --subsystem-match=tpmrm || true; \
	  fi; \
	fi
	@# The system steps: the group, the set-group-ID gate, the store. Into DESTDIR (a package's tree) they
	@# are said, not done: they belong to whoever installs the tree (a package's maintainer scripts).
	@if [ -n "$(DESTDIR)" ] || [ "$$(id -u)" != 0 ]; then \
	  echo "make install: still to run as root on the target system, for vaultctl-gate:"; \
	  echo "  groupadd --system $(GATE_GROUP)"; \
	  echo "  chown root:$(GATE_GROUP) $(LIBEXECDIR)/vaultctl-gate && chmod 2755 $(LIBEXECDIR)/vaultctl-gate"; \
	  echo "  install -d -m 0770 -o root -g $(GATE_GROUP) $(STOREDIR)"; \
	else \
	  getent group $(GATE_GROUP) >/dev/null || groupadd --system $(GATE_GROUP); \
	  chown root:$(GATE_GROUP) $(LIBEXECDIR)/vaultctl-gate && chmod 2755 $(LIBEXECDIR)/vaultctl-gate; \
	  install -d -m 0770 -o root -g $(GATE_GROUP) $(STOREDIR); \
	  chown root:$(GATE_GROUP) $(STOREDIR) && chmod 0770 $(STOREDIR); \
	  echo "make install: vaultctl-gate is set-group-ID $(GATE_GROUP) at $(LIBEXECDIR)/vaultctl-gate; new vaults are protected in $(STOREDIR)."; \
	fi

# Removes exactly the files install put there (folders stay: others may share them). The protected store
# stays: it holds people's secrets. The root policy stays when an administrator changed it.
uninstall:
	@[ ! -f $(DESTDIR)$(LIBEXECDIR)/vaultctl-gate ] || chmod 0700 $(DESTDIR)$(LIBEXECDIR)/vaultctl-gate
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	@# The PAM stack goes when it is one vaultctl ships; one root wrote stays.
	@for f in $(PAM_STACK_FILES); do cmp -s $$f $(DESTDIR)$(PAMDIR)/vaultctl && { rm -f $(DESTDIR)$(PAMDIR)/vaultctl; break; }; done; \
	if [ -e $(DESTDIR)$(PAMDIR)/vaultctl ]; then echo "make uninstall: kept $(PAMDIR)/vaultctl, which was changed"; fi
	@for f in policy.json:policy/default.json gate.conf:policy/gate.conf; do \
	  name=$${f%%:*}; shipped=$${f#*:}; \
	  if cmp -s $$shipped $(DESTDIR)$(CONFDIR)/$$name; then rm -f $(DESTDIR)$(CONFDIR)/$$name; \
	  elif [ -e $(DESTDIR)$(CONFDIR)/$$name ]; then echo "make uninstall: kept $(CONFDIR)/$$name, which was changed"; fi; \
	done
	rm -f $(DESTDIR)$(UDEVRULESDIR)/60-vaultctl-tpm.rules
	@if [ -d $(DESTDIR)$(STOREDIR) ]; then echo "make uninstall: kept $(STOREDIR): it holds the protected vaults (device keys and slots); remove it yourself once nobody needs them"; fi

# The Debian packages (debian/): vaultctl, and vaultctl-tpm (the TPM helper and its udev rule, Recommended
# by vaultctl), each with its -dbgsym, built from the release build (the swift on PATH: the toolchain is not
# a Debian package) by `dpkg-buildpackage -us -uc -b`, which leaves them in the folder above the source tree
# as Debian's tools do; make deb moves them, with the .buildinfo and the .changes that names them, to
# .build/deb. deb-check runs lintian on them (no error, no warning; each override in debian/ says why) and
# checks the version is vaultctl's own.
DEB_PACKAGES := debhelper dpkg-dev lintian debootstrap
deb-deps: PACKAGES = $(BUILD_PACKAGES) $(DEB_PACKAGES)
deb: deb-deps
	@echo "make deb: building with $$(command -v $(SWIFT)) ($$($(SWIFT) --version 2>/dev/null | head -n 1))"
	rm -rf .build/deb && mkdir -p .build/deb
	dpkg-buildpackage -us -uc -b
	@changes=../$$(dpkg-parsechangelog -S Source)_$$(dpkg-parsechangelog -S Version | sed 's/^[0-9]*://')_$$(dpkg-architecture -q DEB_HOST_ARCH).changes; \
	  for f in $$(awk '/^Files:/ { files = 1; next } /^[^ ]/ { files = 0 } files { print $$5 }' "$$changes"); do mv "../$$f" .build/deb/; done; \
	  mv "$$changes" .build/deb/
	@ls .build/deb

deb-check: deb
	lintian --fail-on error,warning .build/deb/vaultctl_*_amd64.changes
	@v=$$(dpkg-parsechangelog -S Version | sed 's/-[^-]*$$//'); \
	  d=$$(dpkg-deb --fsys-tarfile .build/deb/vaultctl_*_amd64.deb | tar -xO ./usr/bin/vaultctl > .build/deb/vaultctl.bin && chmod +x .build/deb/vaultctl.bin && .build/deb/vaultctl.bin --version); \
	  rm -f .build/deb/vaultctl.bin; \
	  [ "$$d" = "vaultctl $$v" ] || { echo "make deb-check: debian/changelog says $$v, the packaged binary '$$d'" >&2; exit 1; }; \
	  echo "make deb-check: lintian clean; the package's vaultctl is $$d"

# The packages' life in a clean Debian 12 chroot: vaultctl alone installed and used, vaultctl-tpm added,
# upgraded, removed and purged (root, the network once: the base system is kept in
# /var/cache/vaultctl-chroot; scripts/deb-cycle.sh says more).
deb-cycle: deb
	$$( [ "$$(id -u)" = 0 ] || echo sudo ) scripts/deb-cycle.sh .build/deb/vaultctl_*_amd64.deb .build/deb/vaultctl-tpm_*_amd64.deb

clean:
	$(SWIFT) package clean
	rm -rf $(DIST)

# libFuzzer harnesses (Fuzz/, a separate package; see Fuzz/README.md): builds them with -sanitize=fuzzer,address,
# then runs each for FUZZ_SECONDS over a scratch copy of its seed corpus Fuzz/corpus/<target>; new inputs
# and crash files go to that scratch folder, never into the repo. Fails (and keeps the folder) on any crash.
FUZZ_SECONDS ?= 30
FUZZ_TARGETS ?= sealed-file slot-name policy secret-reader askpass gate-protocol
fuzz: deps
	cd Fuzz && $(SWIFT) build -c release -Xswiftc -sanitize=fuzzer,address 2>&1 | grep -v -e 'prohibited flag' -e '__asan_extra_spill_area'; exit $${PIPESTATUS[0]}
	@scratch=$$(mktemp -d /tmp/vaultctl-fuzz.XXXXXX); failed=""; \
	for t in $(FUZZ_TARGETS); do \
	  case $$t in askpass) len=80000;; secret-reader) len=10000;; policy|gate-protocol) len=4096;; *) len=1024;; esac; \
	  mkdir -p $$scratch/$$t/corpus $$scratch/$$t/crashes; cp -R Fuzz/corpus/$$t/. $$scratch/$$t/corpus/; \
	  echo "fuzz-$$t: $(FUZZ_SECONDS) s"; \
	  if SWIFT_BACKTRACE=enable=no Fuzz/.build/release/fuzz-$$t $$scratch/$$t/corpus -max_total_time=$(FUZZ_SECONDS) -max_len=$$len \
	       -timeout=10 -print_final_stats=1 -artifact_prefix=$$scratch/$$t/crashes/ >$$scratch/$$t/log 2>&1; then \
	    grep -E '^(stat::number_of_executed_units|Done)' $$scratch/$$t/log | sed 's/^/  /'; \
	  else \
	    failed="$$failed $$t"; grep -E -A25 'fuzz check failed|ERROR: |deadly signal|Fatal error' $$scratch/$$t/log | head -60; \
	    ls $$scratch/$$t/crashes | sed "s|^|  input: $$scratch/$$t/crashes/|"; \
	  fi; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: crashes in:$$failed (logs and inputs in $$scratch)"; exit 1; fi; \
	rm -rf $$scratch; echo "fuzz: no crashes"
