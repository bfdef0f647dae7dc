# vaultctl — the two set-up commands are `make demo` and `make test`; both install what is missing first.
SHELL := /bin/bash
PREFIX ?= /usr/local
SWIFT ?= swift
DEBIAN_PACKAGES := libsecret-1-dev libsodium-dev libpam0g-dev libpam-wrapper gnome-keyring \
                   libsecret-tools dbus-daemon dbus libglib2.0-bin pkg-config util-linux

.PHONY: all deps build release test demo install clean

all: build

# Installs the Debian packages the build, the tests and the demo need (only those that are missing).
deps:
	@missing=$$(for p in $(DEBIAN_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "Installing: $$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

# Every test: unit tests with fakes, and end-to-end tests that run the built binary against a real
# gnome-keyring on private D-Bus buses and real libpam under pam_wrapper (the tests start and stop them).
test: deps
	$(SWIFT) build
	$(SWIFT) test

# An unattended tour: store, list, gated read through a demo PAM stack, delete.
demo: release
	scripts/demo.sh .build/release/vaultctl

install: release
	install -D -m 0755 .build/release/vaultctl $(DESTDIR)$(PREFIX)/bin/vaultctl
	install -D -m 0644 policy/pam.d/vaultctl $(DESTDIR)/etc/pam.d/vaultctl

clean:
	$(SWIFT) package clean
