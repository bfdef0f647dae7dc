#!/usr/bin/env python3
"""vaultctl benchmark: medians over interleaved runs, every figure as a ratio to `secret-tool lookup`.

    bench/run.py PATH/TO/vaultctl [--smoke] [--rounds N] [--sizes 10,100,1000] [--out FILE] [--no-install]

Builds nothing: give it a release binary (the Makefile's `bench` target builds one with
--static-swift-stdlib). It starts its own private D-Bus bus with an unlocked gnome-keyring
(scripts/secret-service.sh) and a pam_wrapper + pam_matrix PAM stack (scripts/pam-stack.sh), keeps every
file under one temporary folder (HOME, XDG_STATE_HOME, XDG_CONFIG_HOME, GNUPGHOME, PASSWORD_STORE_DIR, the
systemd-creds host key) and removes it, and stops what it started, at the end.

For each size (slots per backend) it fills the vault up to that size, checks once that every command gives
the expected answer, then runs ROUNDS interleaved rounds (each round runs every command once, in a shuffled
order, after one warm-up round that is not counted) and reports the median wall time of each command
(time.perf_counter_ns around spawn + os.wait4) and its peak RSS (wait4's ru_maxrss, read by GNU time in a
few separate untimed runs: see Runner). As root in bench/run.sh's mount namespace, vaultctl-gate is installed
in it and the protected rows run as root and as a throwaway non-root user (through setpriv and env -i); that
user's rows are shown and judged net of the launcher, which is timed alone in the same rounds (net_times).
The markdown goes to stdout and, unless --smoke, to docs/benchmarks.md. After each size's rounds, the JSON probes (bench/json-probes: what a JSON library would
cost a command instead of vaultctl's codec, issue 11) run in --json-rounds rounds of their own. Peers (pass,
gnupg, age, GNU time; libjansson-dev and libjson-c-dev for the probes) are installed with apt-get only when missing, as
root, outside smoke mode and without --no-install; systemd is never installed, and systemd-creds runs with
a host key in the temporary folder (SYSTEMD_CREDENTIAL_SECRET), never the real one.

Exit status: 0 when every command ran and answered as expected (a missed target is not a failure),
1 when a command failed or answered wrongly, 2 on bad usage or a broken set-up.
Standard library only.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import os
import platform
import pwd
import random
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCHEMA = "org.vaultctl.Slot"
KEYRING_PASSWORD = "bench-keyring-password"
PAM_PASSWORD = "bench-pam-password"
# The throwaway user's password on the real PAM stack (pam_unix hashes it with yescrypt, as chpasswd does),
# and the value its device slot holds.
REAL_PAM_PASSWORD = "Bench-" + secrets.token_urlsafe(12)
REAL_PAM_VALUE = b"bench-real-pam-value"
# Issue 13: vaultctl's own share of a read on the real PAM stack (read minus pamtester) at most this.
REAL_PAM_OWN_SHARE = 0.05
PAM_LINE = f"{PAM_PASSWORD}\n".encode()
PEER_PACKAGES = {"pamtester": ["pamtester"], "pass": ["pass", "gnupg"], "gpg": ["gnupg"], "age": ["age"], "time": ["time"],
                 "jansson": ["libjansson-dev"], "json-c": ["libjson-c-dev"]}

# Targets from the issue. Ratios are to `secret-tool lookup` in the same rounds unless `against` says otherwise.
RSS_TARGET_MIB = 16.0
# Issue 11, point 4: a JSON library replaces the codec when it costs at most this per command (median over the
# floor probe) at every size measured.
JSON_RULE_MS = 0.2
# What keeps a library from replacing the codec whatever it costs.
JSON_UNFIT = {"json-jsonc": "keeps the last of two equal keys, a \\u0000 in a string and 1e400 (as infinity) without a word"}


class BenchError(Exception):
    """A command failed or answered wrongly: the benchmark is broken (exit 1)."""


class SetupError(Exception):
    """The benchmark could not be set up (exit 2)."""


@dataclass
class Cmd:
    key: str                      # stable id
    label: str                    # what the table shows
    argv: list[str]
    env: dict[str, str]
    stdin: bytes | None = None
    group: str = "vaultctl"       # vaultctl | peer | floor | startup | json
    target: tuple[str, float] | None = None   # (against key, max ratio)
    # (launcher key, spawn-floor key): the row is shown and judged net of its launcher (net_times).
    net_of: tuple[str, str] | None = None
    # Under pam_wrapper, a process that ends without its exit handlers leaves /tmp/pam.X behind: expected
    # of dash (the askpass script), a bug in vaultctl.
    leaves_pam_folder: bool = False
    times: list[int] = field(default_factory=list)   # ns
    rss: list[int] = field(default_factory=list)     # KiB


@dataclass
class Peer:
    name: str
    ok: bool
    note: str = ""


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def sh(argv: list[str], env: dict[str, str] | None = None, stdin: bytes | None = None,
       check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess:
    """Runs a set-up command (not timed)."""
    p = subprocess.run(argv, env=env, input=stdin if stdin is not None else b"",
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    if check and p.returncode != 0:
        raise BenchError(f"{' '.join(argv)} exited {p.returncode}: "
                         f"{p.stderr.decode(errors='replace').strip()[:800]}")
    return p


def source_env(path: str) -> dict[str, str]:
    """Reads the `export NAME='value'` lines the scripts write."""
    out = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line.startswith("export "):
                continue
            name, _, value = line[len("export "):].partition("=")
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            out[name] = value
    return out


class Runner:
    """Spawns one command and waits for it with wait4.

    Timed runs spawn the command directly. Peak RSS comes from separate, untimed runs under GNU time
    (`/usr/bin/time -f %M`): ru_maxrss of a process forked from this Python process starts at Python's own
    resident size (the kernel records the pre-exec copy's high-water mark at exec, vfork or not), so it has
    to be read by a small parent. GNU time's %M is the wait4 ru_maxrss of its child, in KiB.
    """

    def __init__(self, work: str, time_bin: str | None):
        self.err_path = os.path.join(work, "last-stderr")
        self.err_fd = os.open(self.err_path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
        self.rss_path = os.path.join(work, "last-rss")
        self.time_bin = time_bin

    def run(self, cmd: Cmd, rss: bool = False) -> tuple[int, int | None, int]:
        """(wall ns, peak RSS KiB or None, exit code)"""
        os.ftruncate(self.err_fd, 0)
        os.lseek(self.err_fd, 0, os.SEEK_SET)
        argv = cmd.argv
        if rss:
            argv = [self.time_bin, "-f", "%M", "-o", self.rss_path, *argv]
        self.started_at = time.time()   # wall clock, to tell folders this run made from older ones
        t0 = time.perf_counter_ns()
        p = subprocess.Popen(argv, env=cmd.env, close_fds=True,
                             stdin=subprocess.PIPE if cmd.stdin is not None else subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=self.err_fd)
        if cmd.stdin is not None:
            try:
                p.stdin.write(cmd.stdin)
            except BrokenPipeError:
                pass
            finally:
                p.stdin.close()
        _, status, _ru = os.wait4(p.pid, 0)
        t1 = time.perf_counter_ns()
        p.returncode = os.waitstatus_to_exitcode(status)  # reaped here; keep Popen from waiting again
        peak = None
        if rss:
            with open(self.rss_path) as f:   # "Command exited with non-zero status N" may come first
                lines = f.read().split()
            peak = int(lines[-1]) if lines and lines[-1].isdigit() else None
        return t1 - t0, peak, p.returncode

    def stderr(self) -> str:
        os.lseek(self.err_fd, 0, os.SEEK_SET)
        return os.read(self.err_fd, 4000).decode(errors="replace").strip()

    def check(self, cmd: Cmd) -> None:
        dt, _, rc = self.run(cmd)
        check_pam_folders(cmd, self.started_at)
        if rc != 0:
            raise BenchError(f"{cmd.label}: exit {rc}: {self.stderr()}")
        cmd.times.append(dt)

    def check_rss(self, cmd: Cmd) -> None:
        _, peak, rc = self.run(cmd, rss=True)
        check_pam_folders(cmd, self.started_at)
        if rc != 0:
            raise BenchError(f"{cmd.label} (under time for its RSS): exit {rc}: {self.stderr()}")
        if peak is None:
            raise BenchError(f"{cmd.label}: GNU time reported no peak RSS")
        cmd.rss.append(peak)


def sweep_pam_wrapper_dirs() -> list[float]:
    """Removes the /tmp/pam.X folders of processes that are gone, as the test suite does. dash (the askpass
    script's shell) ends with _exit, so pam_wrapper's destructor never removes its folder, and each stale
    folder makes every later pam_wrapper start-up slower: it checks them one by one. Untimed, after every
    run under pam_wrapper, so each gated run starts from the same clean /tmp. Returns the modification times
    of the folders it removed."""
    try:
        names = os.listdir("/tmp")
    except OSError:
        return []
    removed: list[float] = []
    for name in names:
        if not (name.startswith("pam.") and len(name) == 5):
            continue
        path = f"/tmp/{name}"
        try:
            with open(f"{path}/pid") as f:
                pid = int(f.read().strip() or "0")
        except (OSError, ValueError):
            continue  # no pid yet: a process that is starting right now
        if pid <= 0:
            continue
        try:
            os.kill(pid, 0)
            continue  # alive
        except ProcessLookupError:
            pass
        except PermissionError:
            continue
        try:
            changed = os.stat(path).st_mtime
        except OSError:
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(changed)
    return removed


def check_pam_folders(cmd: "Cmd", since: float) -> None:
    """After a run under pam_wrapper that started at `since` (wall clock): sweeps, and refuses a command that
    should leave no folder but left one. Older folders (a test suite's, before the benchmark) are only swept."""
    if "PAM_WRAPPER" not in cmd.env:
        return
    left = [t for t in sweep_pam_wrapper_dirs() if t >= since - 0.01]
    if left and not cmd.leaves_pam_folder:
        raise BenchError(f"{cmd.label}: {len(left)} pam_wrapper folder(s) of exited processes were left in /tmp; "
                         "a process under pam_wrapper ended without running its exit handlers (or another "
                         "program under pam_wrapper ran meanwhile: benchmark a quiet machine)")


def capture(cmd: Cmd) -> tuple[int, bytes, str]:
    since = time.time()
    p = subprocess.run(cmd.argv, env=cmd.env, input=cmd.stdin if cmd.stdin is not None else b"",
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    check_pam_folders(cmd, since)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace").strip()


class Bench:
    def __init__(self, args: argparse.Namespace):
        self.args = args
        # On disk, where a user's state is (run.sh may put a private tmpfs on /tmp); short, for gpg-agent's
        # socket paths.
        self.private_tmp = os.environ.get("VAULTCTL_BENCH_PRIVATE_TMP") == "1"
        self.work = tempfile.mkdtemp(prefix="vb-", dir="/var/tmp" if os.path.isdir("/var/tmp") else "/tmp")
        os.chmod(self.work, 0o700)
        self.started_bus = False
        self.gnupg_home: str | None = None
        self.peers: dict[str, Peer] = {}
        self.notes: list[str] = []
        self.installed: list[str] = []
        self.values: dict[str, bytes] = {}
        self.count = 0          # slots per backend so far
        self.real_pam: list[Cmd] = []       # the rows on the system's own PAM stack, when they ran
        self.real_pam_user: str | None = None
        self.real_pam_home: str | None = None
        self.installed_pam_service = False
        self.real_pam_clock: dict[str, list[tuple[float, float]]] = {}
        self.gate_env: dict[str, str] | None = None
        self.gate_pam_stack = False
        # The non-root user of the protected-mode rows (setup_gate_user), removed by teardown_gate_user.
        self.gate_user: str | None = None
        self.gate_user_home: str | None = None
        self.gate_user_bus: str | None = None
        self.gate_user_env: dict[str, str] | None = None

    # ---- set-up -------------------------------------------------------------------------------------

    def setup(self) -> None:
        w = self.work
        sweep_pam_wrapper_dirs()  # what earlier programs left (a test suite's askpass scripts) slows pam_wrapper
        src = os.path.realpath(self.args.vaultctl)
        if not (os.path.isfile(src) and os.access(src, os.X_OK)):
            raise SetupError(f"{self.args.vaultctl} is not an executable file; build it first "
                             "(make bench builds it with --static-swift-stdlib)")
        os.makedirs(f"{w}/bin", mode=0o700)  # vaultctl runs its TPM helper only from a folder others cannot write
        # A private copy: another build replacing the binary mid-run cannot mix two versions.
        self.vaultctl = f"{w}/bin/vaultctl"
        shutil.copy2(src, self.vaultctl)
        helper = os.path.join(os.path.dirname(src), "vaultctl-tpm")  # the TPM helper, found beside vaultctl
        if os.path.isfile(helper):
            shutil.copy2(helper, f"{w}/bin/vaultctl-tpm")
            os.chmod(f"{w}/bin/vaultctl-tpm", 0o755)  # and only when no one else can write it
        with open(self.vaultctl, "rb") as f:
            self.binary_sha = hashlib.sha256(f.read()).hexdigest()[:12]
        self.binary_size = os.path.getsize(self.vaultctl)
        self.needed = shared_libraries(self.vaultctl)
        for d in ("home", "state", "config"):
            os.makedirs(f"{w}/{d}", mode=0o700)

        missing = [t for t in ("secret-tool", "dbus-daemon", "gnome-keyring-daemon", "gdbus") if not shutil.which(t)]
        if missing:
            raise SetupError(f"missing {', '.join(missing)}; run 'make deps'")

        log("starting a private D-Bus bus with an unlocked gnome-keyring")
        self.bus_script = self.secret_service_script()
        self.started_bus = True
        sh([self.bus_script, "start", f"{w}/bus", "unlocked", KEYRING_PASSWORD])
        bus = source_env(f"{w}/bus/env")
        user = subprocess.run(["id", "-un"], stdout=subprocess.PIPE, check=True).stdout.decode().strip()
        sh([f"{ROOT}/scripts/pam-stack.sh", f"{w}/pam", user, PAM_PASSWORD])
        pam = source_env(f"{w}/pam/env")

        self.askpass = f"{w}/bin/askpass"
        with open(self.askpass, "w") as f:
            f.write(f"#!/bin/sh\nprintf '%s\\n' '{PAM_PASSWORD}'\n")
        os.chmod(self.askpass, 0o700)

        base = {
            "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "HOME": f"{w}/home",
            "XDG_STATE_HOME": f"{w}/state",
            "XDG_CONFIG_HOME": f"{w}/config",
            "XDG_RUNTIME_DIR": f"{w}/bus/run",
            **bus,
        }
        # The machine-id rows stay machine-id on a machine with /dev/tpmrm0; the TPM row has its own state.
        base["VAULTCTL_TPM2_TCTI"] = "none"
        self.env = base
        # The PAM stack (LD_PRELOAD of pam_wrapper) only for the gated commands, as in the tests.
        # PAM_WRAPPER_RUNTIME_DIR is a placeholder that pam_wrapper's constructor overwrites in place. Without
        # it the constructor *adds* the variable, glibc moves `environ` to the heap, and a binary linked with
        # --static-swift-stdlib (whose runtime finds argv by walking back from `environ` on the initial stack,
        # and runs its constructors after the preloaded library's) sees no arguments at all: exit 64, "No
        # command given". The dynamically linked debug build the tests use is not affected.
        self.gated_env = {**base, **pam, "PAM_WRAPPER_RUNTIME_DIR": f"{w}/pam-runtime-placeholder",
                          "VAULT_ASKPASS": self.askpass}

        self.time_bin = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None
        if self.time_bin is None and self.maybe_install("time", "/usr/bin/time"):
            self.time_bin = "/usr/bin/time"
        if self.time_bin is None:
            self.notes.append("peak RSS not measured: GNU time (/usr/bin/time, Debian package `time`) is missing")
        self.runner = Runner(w, self.time_bin)
        self.setup_peers()
        self.setup_tpm()
        self.setup_gate()
        self.startup_probes = self.build_startup_probes()
        self.json_probes = self.build_json_probes()

    # The issue asks which imports and linking a Swift command should start with; these programs answer it in
    # the same run: one line of output each, with Glibc alone, with FoundationEssentials or Foundation
    # (one JSONDecoder call, so the module is really linked), statically and dynamically linked stdlib.
    STARTUP_PROBES = [
        ("glibc-static", "Swift start-up: Glibc only, --static-stdlib", "import Glibc\nputs(\"ok\")\n", ["-static-stdlib"]),
        ("glibc-shared", "Swift start-up: Glibc only, shared stdlib", "import Glibc\nputs(\"ok\")\n", []),
        ("fe-static", "Swift start-up: FoundationEssentials, --static-stdlib",
         "import FoundationEssentials\nlet v = try? JSONDecoder().decode([Int].self, from: Data(\"[1]\".utf8))\nprint(v == nil ? \"no\" : \"ok\")\n",
         ["-static-stdlib"]),
        ("foundation-static", "Swift start-up: Foundation, --static-stdlib",
         "import Foundation\nlet v = try? JSONDecoder().decode([Int].self, from: Data(\"[1]\".utf8))\nprint(v == nil ? \"no\" : \"ok\")\n",
         ["-static-stdlib"]),
    ]

    def build_startup_probes(self) -> list[tuple[str, str, str]]:
        """(key, label, binary) of each probe that built; none in smoke mode or without swiftc."""
        swiftc = shutil.which("swiftc")
        if self.args.smoke or self.args.no_startup or not swiftc:
            if not self.args.smoke and not self.args.no_startup:
                self.notes.append("start-up probes not built: no swiftc on PATH")
            return []
        os.makedirs(f"{self.work}/probes", mode=0o700)
        built = []
        for key, label, source, flags in self.STARTUP_PROBES:
            src, out = f"{self.work}/probes/{key}.swift", f"{self.work}/probes/{key}"
            with open(src, "w") as f:
                f.write(source)
            log(f"building start-up probe {key}")
            p = subprocess.run([swiftc, "-O", *flags, src, "-o", out], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            if p.returncode != 0 or subprocess.run([out], stdout=subprocess.PIPE).stdout.strip() != b"ok":
                self.notes.append(f"start-up probe {key} did not build or run: {p.stderr.decode(errors='replace').strip()[-200:]}")
                continue
            built.append((key, label, out))
        return built

    # Issue 11, point 4: what a well-kept JSON parser would cost a command instead of vaultctl's own codec.
    # Each probe is one program (bench/json-probes: main.swift plus one Probe*.swift) that reads the documents
    # a gated read reads (the policy, the vault's own modes.json at this size, a rate-limit state), parses
    # them with one library and looks up one slot's entry, as `ModeRecord.hint(for:)` does. All are built with
    # the release build's flags, so the floor probe (files read, nothing parsed) leaves, subtracted, what
    # loading the library and parsing cost: the library's price per command. (key, label, sources, flags,
    # package a C library needs).
    # -package-name: the codec's declarations have `package` access (it is a module of vaultctl's package).
    JSON_PROBE_FLAGS = ["-O", "-static-stdlib", "-Xfrontend", "-disable-concrete-type-metadata-mangled-name-accessors",
                        "-Xclang-linker", "-static-libgcc", "-package-name", "vaultctl"]
    JSON_PROBES = [
        ("json-floor", "JSON probe: files read, nothing parsed (floor)", ["ProbeFloor.swift"], [], None),
        ("json-codec", "JSON probe: vaultctl's own codec (Sources/JSON)", ["ProbeCodec.swift", "@codec"], [], None),
        ("json-jansson", "JSON probe: jansson, shared libjansson (JSON_REJECT_DUPLICATES)",
         ["ProbeJansson.swift", "@value"], ["-I", "@probes/CJansson", "-ljansson"], "jansson"),
        ("json-jansson-static", "JSON probe: jansson, static libjansson.a",
         ["ProbeJansson.swift", "@value"], ["-I", "@probes/CJansson", "-Xlinker", "@libdir/libjansson.a"], "jansson"),
        ("json-jsonc", "JSON probe: json-c, shared libjson-c (keeps duplicate keys: information only)",
         ["ProbeJSONC.swift", "@value"], ["-I", "@probes/CJSONC", "-ljson-c"], "json-c"),
        ("json-fe", "JSON probe: FoundationEssentials JSONDecoder, static", ["ProbeFoundationEssentials.swift"], [], None),
    ]
    JSON_PROBE_HEADERS = {"jansson": "/usr/include/jansson.h", "json-c": "/usr/include/json-c/json.h"}

    def build_json_probes(self) -> list[tuple[str, str, str]]:
        """(key, label, binary) of each JSON probe that built; none in smoke mode or without swiftc."""
        swiftc = shutil.which("swiftc")
        if self.args.smoke or self.args.no_json_probes or not swiftc:
            if not self.args.smoke and not self.args.no_json_probes:
                self.notes.append("JSON probes not built: no swiftc on PATH")
            return []
        src = f"{ROOT}/bench/json-probes"
        d = f"{self.work}/json-probes"
        os.makedirs(f"{d}/codec", mode=0o700)
        # The codec as it is in this checkout, with the two Slots helpers it uses, compiled into one module.
        codec = []
        for name in sorted(os.listdir(f"{ROOT}/Sources/JSON")) + ["UTF8Validation.swift", "TypedUnsafeBytes.swift"]:
            origin = f"{ROOT}/Sources/JSON/{name}" if name.startswith("JSON") else f"{ROOT}/Sources/Slots/System/{name}"
            with open(origin) as f:
                text = "".join(l for l in f if l.strip() != "import Slots")
            with open(f"{d}/codec/{name}", "w") as f:
                f.write(text)
            codec.append(f"{d}/codec/{name}")
        # libstdc++ linked statically, as `make release` does (its STATIC_CXX linker script).
        flags = list(self.JSON_PROBE_FLAGS)
        cxx = next((a for cc in ("cc", "gcc", "clang") if shutil.which(cc)
                    for a in [subprocess.run([cc, "-print-file-name=libstdc++.a"], stdout=subprocess.PIPE,
                                             stderr=subprocess.DEVNULL).stdout.decode().strip()] if os.path.isfile(a)), None)
        if cxx:
            os.makedirs(f"{d}/static-cxx")
            with open(f"{d}/static-cxx/libstdc++.so", "w") as f:
                f.write(f"INPUT({cxx})\n")
            flags += ["-L", f"{d}/static-cxx"]
        libdir = subprocess.run(["pkg-config", "--variable=libdir", "jansson"], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL).stdout.decode().strip() if shutil.which("pkg-config") else ""
        # The documents: the policy vaultctl ships, and a rate limit as a gated read leaves it with two
        # failures on record and one attempt in progress. modes.json is copied from the vault at each size.
        shutil.copy(f"{ROOT}/policy/default.json", f"{d}/policy.json")
        now = time.time()
        with open(f"{d}/ratelimit.json", "w") as f:
            f.write('{"failures":[%r,%r],"pending":[{"pid":4242,"time":%r}],"version":1}' % (now - 120.25, now - 60.5, now))
        self.json_probe_dir = d
        built = []
        for key, label, files, extra, library in self.JSON_PROBES:
            if library and not self.maybe_install(library, self.JSON_PROBE_HEADERS[library]):
                self.notes.append(f"JSON probe {key} not built: {PEER_PACKAGES[library][0]} is missing")
                continue
            sources = [f"{src}/main.swift"]
            for name in files:
                sources += codec if name == "@codec" else [f"{d}/codec/JSONValue.swift"] if name == "@value" else [f"{src}/{name}"]
            args = [a.replace("@probes", src).replace("@libdir", libdir or "/usr/lib") for a in extra]
            out = f"{d}/{key}"
            log(f"building JSON probe {key}")
            p = subprocess.run([swiftc, *flags, *sources, *args, "-o", out], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            if p.returncode != 0:
                self.notes.append(f"JSON probe {key} did not build: {p.stderr.decode(errors='replace').strip()[-300:]}")
                continue
            built.append((key, label, out))
        return built

    def json_probe_commands(self, size: int) -> list[Cmd]:
        """The JSON probes on this size's modes.json (a copy of the vault's), finding `sync-0000`."""
        if not self.json_probes:
            return []
        d = self.json_probe_dir
        modes = f"{d}/modes-{size}.json"
        shutil.copy(f"{self.work}/config/vaultctl/modes.json", modes)
        argv = [f"{d}/policy.json", modes, f"{d}/ratelimit.json", "sync-0000", "sync"]
        return [Cmd(key, label, [binary, *argv], self.env, group="json") for key, label, binary in self.json_probes]

    def secret_service_script(self) -> str:
        """scripts/secret-service.sh, with a session bus's reply limit when it does not set one itself.

        dbus-daemon's built-in limit is 128 pending replies per connection; a desktop session bus
        (/usr/share/dbus-1/session.conf) allows 50000. libsecret loads every item of a search at once, so
        on the script's bus `secret-tool search --all` fails ("No such secret item at path …") once a few
        hundred items match. The copy differs from the script only in that one <limit> line.
        """
        original = f"{ROOT}/scripts/secret-service.sh"
        with open(original) as f:
            text = f.read()
        if "max_replies_per_connection" in text:
            return original
        limit = '  <limit name="max_replies_per_connection">50000</limit>\n</busconfig>\nCONF'
        if text.count("</busconfig>\nCONF") != 1:
            self.notes.append("scripts/secret-service.sh's bus keeps dbus-daemon's limit of 128 pending replies per "
                              "connection (a session bus allows 50000) and could not be adjusted; "
                              "`secret-tool search --all` may fail above ~128 items")
            return original
        copy = f"{self.work}/bin/secret-service.sh"
        with open(copy, "w") as f:
            f.write(text.replace("</busconfig>\nCONF", limit))
        os.chmod(copy, 0o700)
        self.notes.append("The private bus is scripts/secret-service.sh's with one line added: a session bus's "
                          "`max_replies_per_connection` of 50000 (session.conf) instead of dbus-daemon's built-in 128, "
                          "without which `secret-tool search --all` fails at 1000 items (libsecret asks for every "
                          "item at once).")
        return copy

    def maybe_install(self, tool: str, path: str | None = None) -> bool:
        """Whether `tool` (or the file at `path`: an executable, or a header of a -dev package) is there,
        installing its PEER_PACKAGES when it is missing and that is allowed."""
        def present() -> bool:
            if not path:
                return bool(shutil.which(tool))
            return os.path.exists(path) if path.endswith(".h") else os.access(path, os.X_OK)
        if present():
            return True
        if self.args.smoke or self.args.no_install or os.geteuid() != 0 or not shutil.which("apt-get"):
            return False
        pkgs = PEER_PACKAGES[tool]
        log(f"installing {' '.join(pkgs)} (for {tool})")
        p = subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *pkgs],
                           env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if p.returncode != 0:
            self.notes.append(f"apt-get install {' '.join(pkgs)} failed: {p.stderr.decode(errors='replace').strip()[:200]}")
            return False
        self.installed += pkgs
        return present()

    def setup_peers(self) -> None:
        w = self.work
        # pass, with a throwaway GnuPG home and a passphrase-less key made in batch mode.
        if self.maybe_install("pass") and self.maybe_install("gpg"):
            try:
                self.gnupg_home = f"{w}/gnupg"
                os.makedirs(self.gnupg_home, mode=0o700)
                self.pass_env = {**self.env, "GNUPGHOME": self.gnupg_home,
                                 "PASSWORD_STORE_DIR": f"{w}/password-store"}
                sh(["gpg", "--batch", "--pinentry-mode", "loopback", "--passphrase", "",
                    "--quick-gen-key", "vaultctl bench <bench@example.invalid>", "future-default", "default", "never"],
                   env=self.pass_env)
                out = sh(["gpg", "--batch", "--with-colons", "--list-secret-keys"], env=self.pass_env).stdout.decode()
                fpr = next(l.split(":")[9] for l in out.splitlines() if l.startswith("fpr:"))
                sh(["pass", "init", fpr], env=self.pass_env)
                sh(["pass", "insert", "-m", "-f", "bench/show"], env=self.pass_env, stdin=secrets.token_hex(16).encode())
                sh(["pass", "show", "bench/show"], env=self.pass_env)
                self.peers["pass"] = Peer("pass", True)
            except (BenchError, StopIteration, subprocess.TimeoutExpired) as e:
                self.peers["pass"] = Peer("pass", False, f"set-up failed: {e}")
        else:
            self.peers["pass"] = Peer("pass", False, "pass/gpg not installed" +
                                      (" (smoke mode installs nothing)" if self.args.smoke else ""))

        # age: an identity, one file encrypted once.
        if self.maybe_install("age") and shutil.which("age-keygen"):
            try:
                os.makedirs(f"{w}/age", mode=0o700)
                sh(["age-keygen", "-o", f"{w}/age/key"], env=self.env)
                rcpt = sh(["age-keygen", "-y", f"{w}/age/key"], env=self.env).stdout.decode().strip()
                sh(["age", "-e", "-r", rcpt, "-o", f"{w}/age/secret.age"], env=self.env,
                   stdin=secrets.token_hex(16).encode())
                self.peers["age"] = Peer("age", True)
            except BenchError as e:
                self.peers["age"] = Peer("age", False, f"set-up failed: {e}")
        else:
            self.peers["age"] = Peer("age", False, "age not installed" +
                                     (" (smoke mode installs nothing)" if self.args.smoke else ""))

        # systemd-creds --with-key=host, with the host key in our folder (SYSTEMD_CREDENTIAL_SECRET), so the
        # real /var/lib/systemd/credential.secret is neither read nor created. systemd itself is never installed.
        if shutil.which("systemd-creds"):
            try:
                os.makedirs(f"{w}/creds", mode=0o700)
                self.creds_env = {**self.env, "SYSTEMD_CREDENTIAL_SECRET": f"{w}/creds/credential.secret"}
                sh(["systemd-creds", "setup"], env=self.creds_env)
                with open(f"{w}/creds/plain", "wb") as f:
                    f.write(secrets.token_hex(16).encode())
                sh(["systemd-creds", "encrypt", "--with-key=host", "--name=bench",
                    f"{w}/creds/plain", f"{w}/creds/secret.cred"], env=self.creds_env)
                sh(["systemd-creds", "decrypt", "--with-key=host", "--name=bench",
                    f"{w}/creds/secret.cred", "-"], env=self.creds_env)
                self.peers["systemd-creds"] = Peer("systemd-creds", True)
            except BenchError as e:
                self.peers["systemd-creds"] = Peer("systemd-creds", False, f"cannot run here: {e}")
        else:
            self.peers["systemd-creds"] = Peer("systemd-creds", False, "systemd-creds not installed (not installed by the benchmark)")

    def setup_gate(self) -> None:
        """vaultctl-gate installed as `make install` puts it, in the overlays bench/run.sh made (root, in its
        own mount namespace): the group, /var/lib/vaultctl, vaultctl with the gate 2755 root:vaultctl beside it
        on the namespace's tmpfs, and /etc/pam.d/vaultctl authenticating root through pam_matrix (by absolute
        path: pam_wrapper cannot preload into a set-group-ID program) with the same password file the other
        rows use, so the rows differ by the gate alone. A protected vault of root's with one device slot."""
        self.gate_env = None
        gate_src = os.path.join(os.path.dirname(os.path.realpath(self.args.vaultctl)), "vaultctl-gate")
        matrix = next((p for p in ("/usr/lib/x86_64-linux-gnu/pam_wrapper/pam_matrix.so", "/usr/lib/aarch64-linux-gnu/pam_wrapper/pam_matrix.so",
                                   "/usr/lib/pam_wrapper/pam_matrix.so") if os.path.exists(p)), None)
        why = None
        if os.environ.get("VAULTCTL_BENCH_OVERLAYS") != "1":
            why = "not root in the benchmark's own mount namespace with overlays on /etc and /var/lib (bench/run.sh)"
        elif not os.path.isfile(gate_src):
            why = f"no vaultctl-gate beside {self.args.vaultctl}"
        elif matrix is None:
            why = "pam_matrix.so (pam_wrapper) is missing"
        if why:
            self.notes.append(f"protected-mode (vaultctl-gate) rows skipped, root's and the non-root user's: {why}.")
            return
        if subprocess.run(["getent", "group", "vaultctl"], stdout=subprocess.DEVNULL).returncode != 0:
            sh(["groupadd", "--system", "vaultctl"])
        os.makedirs("/var/lib/vaultctl", exist_ok=True)
        sh(["chown", "root:vaultctl", "/var/lib/vaultctl"])
        os.chmod("/var/lib/vaultctl", 0o770)
        prefix = tempfile.mkdtemp(prefix="vb-gate-", dir="/tmp")  # the namespace's tmpfs (not nosuid)
        os.chmod(prefix, 0o755)
        os.makedirs(f"{prefix}/bin")
        os.makedirs(f"{prefix}/libexec/vaultctl")
        shutil.copy2(self.vaultctl, f"{prefix}/bin/vaultctl")
        shutil.copy2(gate_src, f"{prefix}/libexec/vaultctl/vaultctl-gate")
        sh(["chown", "root:vaultctl", f"{prefix}/libexec/vaultctl/vaultctl-gate"])
        os.chmod(f"{prefix}/libexec/vaultctl/vaultctl-gate", 0o2755)
        self.gate_vaultctl, self.gate_binary = f"{prefix}/bin/vaultctl", f"{prefix}/libexec/vaultctl/vaultctl-gate"
        # PAM runs in the gate as the caller with the group vaultctl, so the password file is the group's to read
        # (the work folder is root's alone): root's line, and the non-root user's (setup_gate_user).
        self.gate_user_name = f"vbgate{os.getpid()}"
        passdb = f"{prefix}/pam-passdb"
        with open(passdb, "w") as f:
            f.write(f"root:{PAM_PASSWORD}:vaultctl\n{self.gate_user_name}:{PAM_PASSWORD}:vaultctl\n")
        sh(["chown", "root:vaultctl", passdb])
        os.chmod(passdb, 0o640)
        os.makedirs("/etc/pam.d", exist_ok=True)
        with open("/etc/pam.d/vaultctl", "w") as f:
            f.write(f"auth required {matrix} passdb={passdb}\naccount required {matrix} passdb={passdb}\n")
        # libpam reads the `other` service beside every service and loads its modules. The pam_wrapper stack
        # of the other rows has a one-module `other` (scripts/pam-stack.sh); the same one here, so that the
        # system's (pam_unix, pam_systemd, ... and what they link) is not counted against the gate alone.
        with open("/etc/pam.d/other", "w") as f:
            f.write(f"auth required {matrix} passdb=/nonexistent\naccount required {matrix} passdb=/nonexistent\n")
        self.gate_pam_stack = True
        for d in ("gate-home", "gate-state", "gate-config"):
            os.makedirs(f"{self.work}/{d}", mode=0o700)
        self.gate_env = {"PATH": self.env["PATH"], "LANG": "C.UTF-8", "HOME": f"{self.work}/gate-home",
                         "XDG_STATE_HOME": f"{self.work}/gate-state", "XDG_CONFIG_HOME": f"{self.work}/gate-config",
                         "DBUS_SESSION_BUS_ADDRESS": self.env["DBUS_SESSION_BUS_ADDRESS"], "VAULT_ASKPASS": self.askpass}
        self.values["gate-0000"] = b"bench-gate-value"
        sh([self.gate_vaultctl, "store", "gate-0000"], env=self.gate_env, stdin=self.values["gate-0000"])
        # One hello and one look, for the gate's own peak RSS (vaultctl does not wait for it, so its own row
        # does not include the gate's).
        self.gate_alone_input = b"request 19\n1 holding gate-0000"
        self.setup_gate_user()

    def setup_gate_user(self) -> None:
        """A throwaway non-root user (useradd, in the namespace's overlay on /etc) with a protected vault of its
        own behind the same installed gate and PAM stack as root's rows, and its own private bus with an
        unlocked gnome-keyring as root's rows have (`status` asks the Secret Service too). Its commands run
        through `setpriv --reuid --regid --init-groups -- env -i …`, as the end-to-end tests reach a user; the
        launcher alone is a row of its own, so that the report can take it off (`net_times`). Removed by
        teardown_gate_user, even when a step here fails."""
        self.gate_user_env = None
        setpriv, env_bin = shutil.which("setpriv"), shutil.which("env")
        why = None
        if not (setpriv and env_bin):
            why = "setpriv or env is missing (util-linux, coreutils)"
        elif not all(shutil.which(t) for t in ("useradd", "userdel")):
            why = "useradd or userdel is missing"
        if why:
            self.notes.append(f"non-root protected-mode rows skipped: {why}.")
            return
        user = self.gate_user_name
        home = tempfile.mkdtemp(prefix="vb-gate-user-", dir="/var/tmp")  # on disk, as root's gate-home is
        self.gate_user_home = home
        sh(["useradd", "--no-create-home", "--home-dir", home, "--shell", "/usr/sbin/nologin", user])
        self.gate_user = user
        entry = pwd.getpwnam(user)
        os.makedirs(f"{home}/bin")
        for d in ("state", "config"):
            os.makedirs(f"{home}/{d}", mode=0o700)
        # The user's own copies: the askpass script and the bus script (with pids.sh, which it sources) are
        # in folders only root may enter.
        askpass = f"{home}/bin/askpass"
        shutil.copy2(self.askpass, askpass)
        shutil.copy2(self.bus_script, f"{home}/bin/secret-service.sh")
        shutil.copy2(f"{ROOT}/scripts/pids.sh", f"{home}/bin/pids.sh")
        for root_dir, dirs, files in os.walk(home):
            for name in [root_dir, *(os.path.join(root_dir, n) for n in dirs + files)]:
                os.chown(name, entry.pw_uid, entry.pw_gid)
        os.chmod(home, 0o700)
        self.gate_user_launcher = [setpriv, f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--init-groups", "--",
                                   env_bin, "-i"]
        # What setpriv itself is given (env -i clears it for the command).
        self.gate_user_outer_env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"}
        bus_dir = f"{home}/bus"
        self.gate_user_bus = bus_dir
        p = subprocess.run(self.gate_user_launcher + ["PATH=/usr/bin:/bin", f"HOME={home}", "LANG=C.UTF-8",
                                                      f"{home}/bin/secret-service.sh", "start", bus_dir, "unlocked", KEYRING_PASSWORD],
                           env=self.gate_user_outer_env, cwd=home, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        if p.returncode != 0:
            raise SetupError(f"the non-root user's bus (scripts/secret-service.sh as {user}): exit {p.returncode}: "
                             f"{p.stderr.decode(errors='replace').strip()[:600]}")
        bus = source_env(f"{bus_dir}/env")
        # As root's gate rows, in the user's own places.
        self.gate_user_env = {"PATH": self.env["PATH"], "LANG": "C.UTF-8", "HOME": home,
                              "XDG_STATE_HOME": f"{home}/state", "XDG_CONFIG_HOME": f"{home}/config",
                              "DBUS_SESSION_BUS_ADDRESS": bus["DBUS_SESSION_BUS_ADDRESS"], "VAULT_ASKPASS": askpass}
        self.values["user-0000"] = b"bench-gate-user-value"
        sh(self.as_gate_user(self.gate_user_env, [self.gate_vaultctl, "store", "user-0000"]),
           env=self.gate_user_outer_env, stdin=self.values["user-0000"])
        # The gate made the user's folder in the protected store, the user's own: the vault is protected.
        if not os.path.isdir(f"/var/lib/vaultctl/{entry.pw_uid}"):
            raise SetupError(f"vaultctl store as {user} made no /var/lib/vaultctl/{entry.pw_uid}: the gate did not take the vault")

    def as_gate_user(self, env: dict[str, str], argv: list[str]) -> list[str]:
        """`argv` as the non-root user, with only `env`: setpriv, then env -i (the launcher the rows net out)."""
        return self.gate_user_launcher + [f"{k}={v}" for k, v in env.items()] + argv

    def setup_tpm(self) -> None:
        """A swtpm (scripts/swtpm.sh) and a second vault whose device key it seals, for the TPM read row."""
        self.tpm_env: dict[str, str] | None = None
        if not shutil.which("swtpm"):
            self.notes.append("no TPM row: swtpm is missing (Debian package `swtpm`; `make deps` installs it)")
            return
        w = self.work
        sh([f"{ROOT}/scripts/swtpm.sh", "start", f"{w}/tpm"])
        self.started_tpm = True
        tcti = source_env(f"{w}/tpm/env")["VAULTCTL_TPM2_TCTI"]
        for d in ("tpm-state", "tpm-config"):
            os.makedirs(f"{w}/{d}", mode=0o700)
        place = {"XDG_STATE_HOME": f"{w}/tpm-state", "XDG_CONFIG_HOME": f"{w}/tpm-config", "VAULTCTL_TPM2_TCTI": tcti}
        self.tpm_env = {**self.env, **place}
        self.tpm_gated_env = {**self.gated_env, **place}
        value = secrets.token_hex(16).encode()
        p = subprocess.run([self.vaultctl, "store", "tpm-0000"], env=self.tpm_env, input=value,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if p.returncode != 0 or not os.path.exists(f"{w}/tpm-state/vaultctl/device.tpm2"):
            raise SetupError(f"vaultctl store with the swtpm-sealed key: exit {p.returncode}: "
                             f"{p.stderr.decode(errors='replace').strip()}")
        self.values["tpm-0000"] = value

    # ---- the vault's contents -----------------------------------------------------------------------

    def populate(self, size: int) -> None:
        if size <= self.count:
            return
        t0 = time.monotonic()
        todo = [(mode, i) for i in range(self.count, size) for mode in ("device", "sync")]

        def one(item):
            mode, i = item
            name = f"{'dev' if mode == 'device' else 'sync'}-{i:04d}"
            value = secrets.token_hex(16).encode()
            argv = [self.vaultctl, "store", name] + (["--mode", "sync"] if mode == "sync" else [])
            p = subprocess.run(argv, env=self.env, input=value, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            if p.returncode != 0:
                raise BenchError(f"vaultctl store {name} --mode {mode}: exit {p.returncode}: "
                                 f"{p.stderr.decode(errors='replace').strip()}")
            return name, value

        with ThreadPoolExecutor(max_workers=self.args.jobs) as pool:
            for name, value in pool.map(one, todo):
                self.values[name] = value
        log(f"filled to {size} slots per backend in {time.monotonic() - t0:.1f} s "
            f"({len(todo)} stores, {self.args.jobs} in parallel)")
        self.count = size

    # ---- commands -----------------------------------------------------------------------------------

    def commands(self) -> list[Cmd]:
        v, e, g, w = self.vaultctl, self.env, self.gated_env, self.work
        gs = {**g, "VAULT_ASKPASS": "/bin/false"}
        lookup = Cmd("st-lookup", "`secret-tool lookup` (1 item)", ["secret-tool", "lookup", "xdg:schema", SCHEMA, "slot", "sync-0000"], e, group="peer")
        cmds = [
            # The gated reads the targets judge take the password from the VAULT_ASKPASS script (the SSH_ASKPASS
            # convention: a second process, which inherits pam_wrapper here). The -stdin rows are the same reads
            # answered from standard input (--password-stdin), no second process; VAULT_ASKPASS is /bin/false
            # for them, so a read that ignored the option would fail.
            Cmd("read-dev", "`vaultctl read` device (gated, password from the VAULT_ASKPASS script)", [v, "read", "dev-0000"], g,
                target=("st-lookup", 0.5), leaves_pam_folder=True),
            Cmd("read-sync", "`vaultctl read` sync (gated, password from the VAULT_ASKPASS script)", [v, "read", "sync-0000"], g,
                target=("st-lookup", 1.0), leaves_pam_folder=True),
            Cmd("read-dev-stdin", "`vaultctl read --password-stdin` device (gated)", [v, "read", "dev-0000", "--password-stdin"], gs,
                stdin=PAM_LINE),
            Cmd("read-sync-stdin", "`vaultctl read --password-stdin` sync (gated)", [v, "read", "sync-0000", "--password-stdin"], gs,
                stdin=PAM_LINE),
            # The targets of the sd-bus/libgcrypt client (issue 11): sync read ≤ 1.0×, status ≤ 0.45×.
            Cmd("status-dev", "`vaultctl status` device slot", [v, "status", "dev-0000"], e, target=("st-lookup", 0.45)),
            Cmd("status-sync", "`vaultctl status` sync slot", [v, "status", "sync-0000"], e, target=("st-lookup", 0.45)),
            Cmd("list", "`vaultctl list` (both backends)", [v, "list"], e),
            # Each round stores over the value the last one left: a replacement, so PAM first (gate.storeOver),
            # the password from the VAULT_ASKPASS script as in the read rows.
            Cmd("store-dev", "`vaultctl store` device, over a value (gated, password from the VAULT_ASKPASS script)",
                [v, "store", "dev-0001"], g, stdin=b"bench-store-device-value", leaves_pam_folder=True),
            Cmd("store-sync", "`vaultctl store --mode sync`, over a value (gated, password from the VAULT_ASKPASS script)",
                [v, "store", "sync-0001", "--mode", "sync"], g, stdin=b"bench-store-sync-value", leaves_pam_folder=True),
            Cmd("help", "`vaultctl help` (start-up floor)", [v, "help"], e, group="floor"),
            Cmd("help-pam", "`vaultctl help` under pam_wrapper (start-up floor of a gated command)", [v, "help"], g, group="floor"),
            Cmd("askpass", "askpass script alone (part of a gated read without --password-stdin)", [self.askpass, "Password:"], e, group="floor"),
            # A gated read's askpass child inherits LD_PRELOAD and PAM_WRAPPER, so the test PAM stack starts in
            # it too; on a real system it would not.
            Cmd("askpass-pam", "askpass script under pam_wrapper (as such a read runs it here)", [self.askpass, "Password:"], g, group="floor",
                leaves_pam_folder=True),
            Cmd("true", "`/bin/true` (spawn floor)", ["/bin/true"], e, group="floor"),
            lookup,
            Cmd("st-store", "`secret-tool store`", ["secret-tool", "store", "--label=vaultctl: sync-0002", "xdg:schema", SCHEMA, "slot", "sync-0002"], e,
                stdin=b"bench-secret-tool-store-value", group="peer"),
            Cmd("st-search", "`secret-tool search --all` (every vaultctl item, secrets loaded)", ["secret-tool", "search", "--all", "xdg:schema", SCHEMA], e, group="peer"),
        ]
        if self.tpm_env:
            # The device key sealed by swtpm: each read unseals it once, after PAM (a TPM round trip per read).
            cmds += [
                Cmd("read-dev-tpm", "`vaultctl read` device, key sealed by the TPM (swtpm; gated, password from the VAULT_ASKPASS script)",
                    [v, "read", "tpm-0000"], self.tpm_gated_env, leaves_pam_folder=True),
                Cmd("read-dev-tpm-stdin", "`vaultctl read --password-stdin` device, key sealed by the TPM (swtpm; gated)",
                    [v, "read", "tpm-0000", "--password-stdin"], {**self.tpm_gated_env, "VAULT_ASKPASS": "/bin/false"}, stdin=PAM_LINE),
            ]
        if self.gate_env:
            ge, gv = self.gate_env, self.gate_vaultctl
            # As root on root's vault: shown, no longer judged (the non-root rows below are what a user meets).
            cmds += [
                Cmd("gate-read", "`vaultctl read` device, protected (vaultctl-gate; password from the VAULT_ASKPASS script)",
                    [gv, "read", "gate-0000"], ge),
                Cmd("gate-read-stdin", "`vaultctl read --password-stdin` device, protected (vaultctl-gate)",
                    [gv, "read", "gate-0000", "--password-stdin"], {**ge, "VAULT_ASKPASS": "/bin/false"}, stdin=PAM_LINE),
                Cmd("gate-status", "`vaultctl status` device slot, protected (vaultctl-gate)", [gv, "status", "gate-0000"], ge),
                # As vaultctl starts it: the clean environment, so it starts once.
                Cmd("gate-alone", "vaultctl-gate alone: its hello and one look (its own peak RSS)", [self.gate_binary],
                    {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"}, stdin=self.gate_alone_input),
            ]
        if self.gate_env and self.gate_user_env:
            # The same three commands as a non-root user on its own protected vault (issue 34, point 6), judged
            # net of the launcher: setpriv and env, timed alone (running /bin/true) in the same rounds.
            ue, oe, gv, net = self.gate_user_env, self.gate_user_outer_env, self.gate_vaultctl, ("user-launcher", "true")
            cmds += [
                Cmd("user-gate-read", "`vaultctl read` device, protected, as a non-root user (net of the launcher; "
                    "password from the VAULT_ASKPASS script)", self.as_gate_user(ue, [gv, "read", "user-0000"]), oe,
                    target=("st-lookup", 0.6), net_of=net),
                Cmd("user-gate-read-stdin", "`vaultctl read --password-stdin` device, protected, as a non-root user (net of the launcher)",
                    self.as_gate_user({**ue, "VAULT_ASKPASS": "/bin/false"}, [gv, "read", "user-0000", "--password-stdin"]), oe,
                    stdin=PAM_LINE, target=("st-lookup", 0.45), net_of=net),
                Cmd("user-gate-status", "`vaultctl status` device slot, protected, as a non-root user (net of the launcher)",
                    self.as_gate_user(ue, [gv, "status", "user-0000"]), oe, target=("st-lookup", 0.4), net_of=net),
                Cmd("user-launcher", "launcher alone (setpriv + env, running `/bin/true` as the non-root user)",
                    self.as_gate_user(ue, ["/bin/true"]), oe, group="floor"),
            ]
        cmds += [Cmd(f"probe-{key}", label, [binary], e, group="startup") for key, label, binary in self.startup_probes]
        if self.peers.get("systemd-creds") and self.peers["systemd-creds"].ok:
            ce = self.creds_env
            cmds += [
                Cmd("creds-enc", "`systemd-creds encrypt --with-key=host`",
                    ["systemd-creds", "encrypt", "--with-key=host", "--name=bench", f"{w}/creds/plain", f"{w}/creds/out.cred"], ce, group="peer"),
                Cmd("creds-dec", "`systemd-creds decrypt --with-key=host`",
                    ["systemd-creds", "decrypt", "--with-key=host", "--name=bench", f"{w}/creds/secret.cred", "-"], ce, group="peer"),
            ]
        if self.peers.get("pass") and self.peers["pass"].ok:
            pe = self.pass_env
            cmds += [
                Cmd("pass-show", "`pass show` (gpg decrypt)", ["pass", "show", "bench/show"], pe, group="peer"),
                Cmd("pass-insert", "`pass insert`", ["pass", "insert", "-m", "-f", "bench/insert"], pe, stdin=b"bench-pass-insert-value\n", group="peer"),
            ]
        if self.peers.get("age") and self.peers["age"].ok:
            cmds.append(Cmd("age-d", "`age -d -i key file`", ["age", "-d", "-i", f"{w}/age/key", f"{w}/age/secret.age"], e, group="peer"))
        return cmds

    def verify(self, cmds: dict[str, Cmd], size: int) -> None:
        """Once per size, untimed: the commands say what they should."""
        def check(cmd: Cmd, pred, what: str) -> bytes:
            rc, out, err = capture(cmd)
            if rc != 0 or not pred(out):
                raise BenchError(f"{cmd.label}: expected {what}, got exit {rc}, "
                                 f"stdout {out[:200]!r}, stderr {err[-600:]!r}")
            return out

        def expect(key: str, pred, what: str) -> bytes:
            return check(cmds[key], pred, what)
        for key in ("read-dev", "read-dev-stdin"):
            expect(key, lambda o: o == self.values["dev-0000"], "the stored bytes")
        for key in ("read-dev-tpm", "read-dev-tpm-stdin"):
            if key in cmds:
                expect(key, lambda o: o == self.values["tpm-0000"], "the stored bytes")
        for key in ("read-sync", "read-sync-stdin"):
            expect(key, lambda o: o == self.values["sync-0000"], "the stored bytes")
        for key in ("gate-read", "gate-read-stdin"):
            if key in cmds:
                expect(key, lambda o: o == self.values["gate-0000"], "the stored bytes")
        for key in ("user-gate-read", "user-gate-read-stdin"):
            if key in cmds:
                expect(key, lambda o: o == self.values["user-0000"], "the stored bytes")
        if "user-gate-status" in cmds:
            us = cmds["user-gate-status"]
            expect("user-gate-status", lambda o: o.startswith(b"on-this-device: "), "on-this-device")
            check(Cmd("user-gate-status-verbose", us.label + " --verbose", us.argv + ["--verbose"], us.env),
                  lambda o: b"behind vaultctl-gate" in o, "a verbose status that names the gate")
            expect("user-launcher", lambda o: o == b"", "nothing")
        if "gate-status" in cmds:
            # Status names the gate only with --verbose (its first line says where the value is; the boundary
            # is a detail unless it is missing): checked untimed on a copy of the timed command.
            gs = cmds["gate-status"]
            expect("gate-status", lambda o: o.startswith(b"on-this-device: "), "on-this-device")
            check(Cmd("gate-status-verbose", gs.label + " --verbose", gs.argv + ["--verbose"], gs.env),
                  lambda o: b"behind vaultctl-gate" in o, "a verbose status that names the gate")
            expect("gate-alone", lambda o: o.startswith(b"hello ") and b"1 protected" in o and b"holds " in o, "a hello and a holding answer")
        expect("st-lookup", lambda o: o == self.values["sync-0000"], "the stored bytes")
        expect("status-dev", lambda o: b"on-this-device" in o or b"cannot-leave-device" in o, "on-this-device or cannot-leave-device")
        expect("status-sync", lambda o: b"in-slot" in o, "in-slot")
        out = expect("list", lambda o: True, "a listing")
        lines = [l for l in out.decode(errors="replace").splitlines() if "dev-" in l or "sync-" in l]
        if len(lines) != 2 * size:
            raise BenchError(f"vaultctl list: expected {2 * size} slots, saw {len(lines)} lines naming one:\n"
                             + out.decode(errors="replace")[:500])
        out = expect("st-search", lambda o: True, "items")
        n = out.count(b"\nlabel = ") + out.startswith(b"label = ")
        if n == 0:  # format differs between versions: count the item headers instead
            n = sum(1 for l in out.splitlines() if l.startswith(b"[/"))
        if n != size:
            raise BenchError(f"secret-tool search --all: expected {size} items, saw {n}")
        if "askpass" in cmds:
            expect("askpass", lambda o: o.strip() == PAM_PASSWORD.encode(), "the password")

    def measure(self, size: int) -> list[Cmd]:
        cmds = self.commands()
        by_key = {c.key: c for c in cmds}
        # the store targets hold their own values from now on
        runner = self.runner
        for c in cmds:
            if c.key in ("store-dev", "store-sync", "st-store"):
                runner.check(c)
                c.times.clear(); c.rss.clear()
        self.verify(by_key, size)
        rng = random.Random(self.args.seed + size)
        t0 = time.monotonic()
        total = self.args.rounds + self.args.warmup
        for r in range(total):
            order = cmds[:]
            rng.shuffle(order)
            for c in order:
                runner.check(c)
            if r < self.args.warmup:
                for c in cmds:
                    c.times.clear(); c.rss.clear()
            if (r + 1) % 10 == 0 or r + 1 == total:
                log(f"size {size}: round {r + 1}/{total} ({time.monotonic() - t0:.0f} s)")
        if self.time_bin:
            for _ in range(self.args.rss_runs):
                for c in cmds:
                    runner.check_rss(c)
        self.verify(by_key, size)  # still the same answers after the rounds
        return cmds + self.measure_json(size)

    def measure_json(self, size: int) -> list[Cmd]:
        """The JSON probes in rounds of their own, many more than the commands' (each run is ~2 ms, and
        a difference of a tenth of a millisecond is asked about): every round runs each probe once, in a
        shuffled order, so the report can take each probe's difference to the floor within a round."""
        cmds = self.json_probe_commands(size)
        for c in cmds:
            rc, out, err = capture(c)
            if rc != 0 or out.strip() != b"ok":
                raise BenchError(f"{c.label}: expected ok (every document parsed, sync-0000's mode found), "
                                 f"got exit {rc}, stdout {out[:200]!r}, stderr {err[-600:]!r}")
        rng = random.Random(self.args.seed + size + 1)
        t0 = time.monotonic()
        total = self.args.json_rounds + self.args.warmup
        for r in range(total):
            order = cmds[:]
            rng.shuffle(order)
            for c in order:
                self.runner.check(c)
            if r < self.args.warmup:
                for c in cmds:
                    c.times.clear()
        if cmds:
            log(f"size {size}: {self.args.json_rounds} rounds of the JSON probes ({time.monotonic() - t0:.0f} s)")
        return cmds

    # ---- the system's own PAM stack ------------------------------------------------------------------

    def setup_real_pam(self) -> bool:
        """A throwaway user with a known password (useradd + chpasswd), /etc/pam.d/vaultctl from policy/pam.d
        when there is none (put back as it was by teardown), a device slot stored as that user, and
        bench/pam-clock.c built to split each run into time inside libpam and outside it. Only as root, not
        in a smoke run; False (with a note) when something is missing."""
        why = None
        if self.args.smoke or self.args.no_real_pam:
            return False
        if os.geteuid() != 0:
            why = "not root (the rows need a throwaway user)"
        elif not all(shutil.which(t) for t in ("useradd", "userdel", "chpasswd", "runuser")):
            why = "useradd, userdel, chpasswd or runuser is missing"
        elif not self.maybe_install("pamtester"):
            why = "pamtester is missing (Debian package pamtester; make deps installs it)"
        if why:
            self.notes.append(f"real-PAM rows skipped: {why}.")
            return False
        user = f"vbench{os.getpid()}"
        home = tempfile.mkdtemp(prefix="vb-user-", dir="/var/tmp")
        sh(["useradd", "--no-create-home", "--home-dir", home, "--shell", "/usr/sbin/nologin", user])
        self.real_pam_user, self.real_pam_home = user, home
        sh(["chpasswd"], stdin=f"{user}:{REAL_PAM_PASSWORD}\n".encode())
        shutil.copy2(self.vaultctl, f"{home}/vaultctl")
        if self.gate_pam_stack:
            # The protected-mode rows' pam_matrix stack is in the namespace's overlay: the shipped one instead.
            shutil.copyfile(f"{ROOT}/policy/pam.d/vaultctl", "/etc/pam.d/vaultctl")
        elif not os.path.exists("/etc/pam.d/vaultctl"):
            shutil.copyfile(f"{ROOT}/policy/pam.d/vaultctl", "/etc/pam.d/vaultctl")
            os.chmod("/etc/pam.d/vaultctl", 0o644)
            self.installed_pam_service = True
        clock = None
        if shutil.which("cc") and os.path.exists("/usr/include/security/pam_appl.h"):
            p = subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", f"{home}/pam-clock.so", f"{ROOT}/bench/pam-clock.c", "-ldl"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            if p.returncode == 0:
                clock = f"{home}/pam-clock.so"
            else:
                self.notes.append(f"bench/pam-clock.c did not build: {p.stderr.decode(errors='replace').strip()[-200:]}")
        for path in (home, *(os.path.join(home, n) for n in os.listdir(home))):
            os.chown(path, pwd.getpwnam(user).pw_uid, -1)
        os.chmod(home, 0o700)
        # Only these variables, as a login would give (no pam_wrapper, no bus: a device slot needs none).
        env = ["env", "-i", "PATH=/usr/bin:/bin", f"HOME={home}", f"XDG_STATE_HOME={home}/state",
               f"XDG_CONFIG_HOME={home}/config", "VAULTCTL_TPM2_TCTI=none", "DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent"]
        self.real_pam_env = env
        self.real_pam_clock_lib = clock
        as_user = ["runuser", "-u", user, "--"]
        sh(as_user + env + [f"{home}/vaultctl", "store", "real-0000"], stdin=REAL_PAM_VALUE)
        return True

    def real_pam_commands(self) -> list[Cmd]:
        user, home, env = self.real_pam_user, self.real_pam_home, self.real_pam_env
        as_user = ["runuser", "-u", user, "--"]
        clocked = env + ([f"LD_PRELOAD={self.real_pam_clock_lib}", f"PAMCLOCK_OUT={home}/clock"] if self.real_pam_clock_lib else [])
        line = f"{REAL_PAM_PASSWORD}\n".encode()
        host = dict(os.environ)
        return [
            Cmd("real-read", "`vaultctl read --password-stdin` device, as the user", as_user + clocked + [f"{home}/vaultctl", "read", "--password-stdin", "real-0000"],
                host, stdin=line, group="realpam"),
            Cmd("real-pamtester", "`pamtester vaultctl USER authenticate acct_mgmt`, as the user", as_user + clocked + ["pamtester", "vaultctl", user, "authenticate", "acct_mgmt"],
                host, stdin=line, group="realpam"),
            Cmd("real-help", "`vaultctl help`, as the user (start-up floor)", as_user + env + [f"{home}/vaultctl", "help"], host, group="realpam"),
            Cmd("real-true", "`/bin/true`, as the user (floor of runuser and env)", as_user + env + ["/bin/true"], host, group="realpam"),
        ]

    def measure_real_pam(self) -> None:
        """The real-PAM rows in rounds of their own (they do not depend on the number of slots), interleaved
        and shuffled like the others; after each clocked run, its line from bench/pam-clock.c."""
        if not self.setup_real_pam():
            return
        cmds = self.real_pam_commands()
        clock_file = f"{self.real_pam_home}/clock"
        rc, out, err = capture(cmds[0])
        if rc != 0 or out != REAL_PAM_VALUE:
            raise BenchError(f"{cmds[0].label}: expected the stored bytes, got exit {rc}, stdout {out[:100]!r}, stderr {err[-400:]!r}")
        rng = random.Random(self.args.seed + 7)
        total = self.args.rounds + self.args.warmup
        t0 = time.monotonic()
        for r in range(total):
            order = cmds[:]
            rng.shuffle(order)
            for c in order:
                try:
                    os.unlink(clock_file)
                except FileNotFoundError:
                    pass
                self.runner.check(c)
                if r >= self.args.warmup and os.path.exists(clock_file):
                    with open(clock_file) as f:
                        inside, whole = (int(x) for x in f.read().split()[:2])
                    self.real_pam_clock.setdefault(c.key, []).append((inside / 1e6, whole / 1e6))
            if r < self.args.warmup:
                for c in cmds:
                    c.times.clear()
        log(f"real PAM stack: {self.args.rounds} rounds ({time.monotonic() - t0:.0f} s)")
        self.real_pam = cmds

    def teardown_real_pam(self) -> None:
        if self.installed_pam_service:
            try:
                os.unlink("/etc/pam.d/vaultctl")
            except FileNotFoundError:
                pass
            self.installed_pam_service = False
        if self.real_pam_user:
            subprocess.run(["userdel", self.real_pam_user], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.real_pam_user = None
        if self.real_pam_home:
            shutil.rmtree(self.real_pam_home, ignore_errors=True)
            self.real_pam_home = None

    # ---- clean-up -----------------------------------------------------------------------------------

    def teardown_gate_user(self) -> None:
        """Stops the non-root user's bus, then removes the user, its folder in the protected store and its home.
        The overlays would drop the first two with the namespace; removed anyway, so nothing of it outlives
        the run whatever holds the namespace."""
        if self.gate_user_bus and os.path.exists(f"{self.gate_user_bus}/pids"):
            subprocess.run([self.bus_script, "stop", self.gate_user_bus], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=30)
        self.gate_user_bus = None
        if self.gate_user:
            try:
                uid = pwd.getpwnam(self.gate_user).pw_uid
                shutil.rmtree(f"/var/lib/vaultctl/{uid}", ignore_errors=True)
            except KeyError:
                pass
            r = subprocess.run(["userdel", self.gate_user], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=30)
            if r.returncode != 0:
                log(f"userdel {self.gate_user} failed: {r.stderr.decode(errors='replace').strip()}")
            self.gate_user = None
        if self.gate_user_home:
            shutil.rmtree(self.gate_user_home, ignore_errors=True)
            self.gate_user_home = None

    def teardown(self) -> None:
        self.teardown_gate_user()
        self.teardown_real_pam()
        if self.gnupg_home and shutil.which("gpgconf"):
            subprocess.run(["gpgconf", "--kill", "all"], env={**os.environ, "GNUPGHOME": self.gnupg_home},
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if getattr(self, "started_tpm", False):
            subprocess.run([f"{ROOT}/scripts/swtpm.sh", "stop", f"{self.work}/tpm"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if self.started_bus:
            subprocess.run([self.bus_script, "stop", f"{self.work}/bus"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if self.args.keep:
            log(f"kept {self.work}")
        else:
            shutil.rmtree(self.work, ignore_errors=True)


# ---- report -----------------------------------------------------------------------------------------

def median_ms(c: Cmd) -> float:
    return statistics.median(c.times) / 1e6


def middle_half(c: Cmd, times: list[int] | None = None) -> str:
    """The 25th to 75th percentile of the round times (or of `times`), in ms: how much a median can be trusted."""
    times = c.times if times is None else times
    if len(times) < 4:
        return "—"
    q = statistics.quantiles(times, n=4)
    return f"{fmt_ms(q[0] / 1e6)}–{fmt_ms(q[2] / 1e6)}"


def net_times(c: Cmd, by_key: dict[str, Cmd]) -> list[int]:
    """A row's round times net of its launcher (ns), or its own times when it has none. In each round, the
    row's time less the launcher's (setpriv and env running /bin/true as the user) plus `/bin/true` spawned
    directly: what setpriv and env add is taken off, and the spawn every row pays (that `secret-tool lookup`'s
    row pays too) stays. Per round, because the three share the round's load (see paired_median_ms)."""
    if not c.net_of:
        return c.times
    launcher, floor = by_key[c.net_of[0]], by_key[c.net_of[1]]
    return [t - l + f for t, l, f in zip(c.times, launcher.times, floor.times)]


def shown_ms(c: Cmd, by_key: dict[str, Cmd]) -> float:
    """The median the table shows and the targets judge: net of the launcher for the rows that have one."""
    return statistics.median(net_times(c, by_key)) / 1e6


def peak_mib(c: Cmd) -> float | None:
    return max(c.rss) / 1024 if c.rss else None


def machine_line(b: Bench) -> str:
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    uname = f"{platform.system()} {platform.release()} {platform.machine()}"
    try:
        commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short=10", "HEAD"], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL).stdout.decode().strip() or "unknown"
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no", "--", "Sources", "Package.swift", "Makefile"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.strip()
        if dirty:
            commit += " (+ uncommitted changes in Sources, Package.swift or Makefile)"
    except OSError:
        commit = "unknown"
    mem = ""
    try:
        with open("/proc/meminfo") as f:
            kb = int(f.readline().split()[1])
            mem = f", {kb / 1024 / 1024:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    return (f"{uname}, {cpu}, {os.cpu_count()} CPUs{mem}; vaultctl {commit}, "
            f"binary sha256 {b.binary_sha}… ({b.binary_size / 1024 / 1024:.1f} MiB)")


def fmt_ms(x: float) -> str:
    return f"{x:.2f}" if x < 10 else f"{x:.1f}" if x < 100 else f"{x:.0f}"


def target_cell(c: Cmd, by_key: dict[str, Cmd], size: int, sizes: list[int]) -> tuple[str, list[tuple[str, bool, str]]]:
    """The table cell and the (target, ok, measured) entries for the summary."""
    parts, results = [], []
    if c.target:
        against, limit = c.target
        r = shown_ms(c, by_key) / median_ms(by_key[against])
        ok = r <= limit
        parts.append(f"≤ {limit:g}× {'✓' if ok else '✗'}")
        results.append((f"{c.label} ≤ {limit:g}× `secret-tool lookup`", ok, f"{r:.2f}×"))
    if c.key == "list" and size == 1000 and "st-search" in by_key:
        r = median_ms(c) / median_ms(by_key["st-search"])
        ok = r <= 0.1
        parts.append(f"≤ 0.1× search --all: {r:.3f}× {'✓' if ok else '✗'}")
        results.append(("`vaultctl list` at 1000 ≤ 0.1× `secret-tool search --all` at 1000", ok, f"{r:.3f}×"))
    if (c.group == "vaultctl" or c.key == "help") and peak_mib(c) is not None:
        ok = peak_mib(c) <= RSS_TARGET_MIB
        parts.append(f"RSS ≤ {RSS_TARGET_MIB:g} MiB {'✓' if ok else '✗'}")
        results.append((f"{c.label} peak RSS ≤ {RSS_TARGET_MIB:g} MiB", ok, f"{peak_mib(c):.1f} MiB"))
    return " · ".join(parts), results


def report(b: Bench, results: dict[int, list[Cmd]], started: float, elapsed: float) -> tuple[str, list]:
    args = b.args
    sizes = sorted(results)
    out = ["# vaultctl benchmarks", ""]
    if args.smoke:
        out += ["**Smoke run** (tiny counts, to keep the benchmark working; the figures mean little).", ""]
    out += [
        f"Machine: {machine_line(b)}.  ",
        f"Run: {_dt.datetime.fromtimestamp(started, _dt.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}, "
        f"{args.rounds} interleaved rounds per size (+{args.warmup} warm-up), shuffled order (seed {args.seed}), "
        f"medians; {elapsed / 60:.1f} min in all, filling the vault included. Load average at the end: "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}.",
        "",
        "Every time is a ratio to `secret-tool lookup` of one item measured in the same rounds on the same "
        "bus. The PAM module's own cost is out of the picture: the gated reads authenticate through pam_matrix "
        "under pam_wrapper (`scripts/pam-stack.sh`), against a private gnome-keyring (`scripts/secret-service.sh`). "
        "They take the password from a `VAULT_ASKPASS` program, a two-line `/bin/sh` script (the `SSH_ASKPASS` "
        "convention: a second process, which under this rig starts pam_wrapper again). The `--password-stdin` "
        "rows are the same reads with the password as one line on standard input and no second process, the "
        "closest measured stand-in for a person typing at the terminal prompt (which is not measured itself).",
        "",
    ]
    summary: list[tuple[str, bool, str, int]] = []
    tables = []
    for size in sizes:
        cmds = results[size]
        by_key = {c.key: c for c in cmds}
        base = median_ms(by_key["st-lookup"])
        rows = ["", f"### {size} slots per backend ({size} device + {size} sync items)", "",
                "| command | median ms | middle half ms | ratio to `secret-tool lookup` | peak RSS MiB | target |",
                "| --- | ---: | ---: | ---: | ---: | --- |"]
        order = {"vaultctl": 0, "floor": 1, "startup": 2, "json": 3, "peer": 4}
        for c in sorted(cmds, key=lambda c: order[c.group]):
            cell, res = target_cell(c, by_key, size, sizes)
            for what, ok, measured in res:
                summary.append((what, ok, measured, size))
            rows.append(f"| {c.label} | {fmt_ms(shown_ms(c, by_key))} | {middle_half(c, net_times(c, by_key))} | {shown_ms(c, by_key) / base:.2f}× | "
                        f"{'—' if peak_mib(c) is None else f'{peak_mib(c):.1f}'} | {cell} |")
        # Where a gated device read's time goes, from rows of this same run: the test PAM stack (pam_wrapper)
        # starts in vaultctl, and again in an askpass child, costs a real system does not have.
        need = ("read-dev", "read-dev-stdin", "help", "help-pam", "askpass", "askpass-pam")
        if all(k in by_key for k in need):
            read, stdin_read = median_ms(by_key["read-dev"]), median_ms(by_key["read-dev-stdin"])
            start, script = median_ms(by_key["help-pam"]), median_ms(by_key["askpass-pam"])
            rig = (start - median_ms(by_key["help"])) + (script - median_ms(by_key["askpass"]))
            rows += ["", f"Of the gated device read's {fmt_ms(read)} ms, roughly (medians of the rows above, subtracted): "
                     f"{fmt_ms(start)} ms is vaultctl starting under "
                     f"pam_wrapper, {fmt_ms(script)} ms the askpass script under pam_wrapper, and "
                     f"{fmt_ms(read - start - script)} ms the rest (PAM conversation, rate limit, files, decryption, "
                     f"audit line). pam_wrapper starting in both processes is {fmt_ms(rig)} ms of it, a cost a real "
                     f"system does not have. With --password-stdin (no second process) the read takes "
                     f"{fmt_ms(stdin_read)} ms ({stdin_read / base:.2f}×)."]
        if "read-dev-tpm" in by_key:
            tpm, tpm_stdin = median_ms(by_key["read-dev-tpm"]), median_ms(by_key["read-dev-tpm-stdin"])
            rows += ["", f"The TPM-sealed device key costs one unseal per read: the gated device read takes "
                     f"{fmt_ms(tpm)} ms with it against {fmt_ms(median_ms(by_key['read-dev']))} ms with the machine-id key, "
                     f"{fmt_ms(tpm - median_ms(by_key['read-dev']))} ms more ({fmt_ms(tpm_stdin - median_ms(by_key['read-dev-stdin']))} ms "
                     f"with --password-stdin): connecting, re-creating the ECC storage primary from its template, a salted "
                     f"session, loading the sealed object and unsealing, on swtpm (a hardware TPM is slower, tens of ms)."]
        if "user-launcher" in by_key:
            rows += ["", user_rows_paragraph(by_key, base)]
        tables += rows

    # Targets: one line each, the worst size decides.
    out += ["## Targets", "", "| target | result | worst (size) |", "| --- | --- | --- |"]
    seen: dict[str, list[tuple[bool, str, int]]] = {}
    for what, ok, measured, size in summary:
        key = what
        if "peak RSS" in what:
            key = "every vaultctl command: peak RSS ≤ 16 MiB"
        seen.setdefault(key, []).append((ok, measured, size, what))
    for what, entries in seen.items():
        bad = [e for e in entries if not e[0]]
        worst = (bad or entries)[-1]
        if "peak RSS" in what:
            worst = max(entries, key=lambda e: float(e[1].split()[0]))
        else:
            worst = max(entries, key=lambda e: float(e[1].rstrip("×")))
        verdict = "✓ met" if not bad else f"✗ missed at {', '.join(str(x) for x in sorted({e[2] for e in bad}))}"
        extra = f" — {worst[3].split(' peak')[0]}" if "peak RSS" in what else ""
        out.append(f"| {what} | {verdict} | {worst[1]} ({worst[2]}){extra} |")
    via = []
    for key, name, target_key in (("read-dev-stdin", "device", "read-dev"), ("read-sync-stdin", "sync", "read-sync")):
        cells, limit = [], None
        for n in sizes:
            by = {c.key: c for c in results[n]}
            if key in by and by[target_key].target:
                limit = by[target_key].target[1]
                r = median_ms(by[key]) / median_ms(by["st-lookup"])
                cells.append(f"{r:.2f}× at {n} {'✓' if r <= limit else '✗'}")
        if cells and limit is not None:
            via.append(f"{name} (≤ {limit:g}×): {', '.join(cells)}")
    if via:
        out += ["", "The same gated reads with the password as a line on standard input (`--password-stdin`), judged "
                "by the same targets (information, not the target rows): " + "; ".join(via) + "."]
    out += tables
    out += real_pam_section(b)
    out += json_section(results)
    out += ["", "## Notes", ""]
    out += [
        "- Wall time is `time.perf_counter_ns()` around spawning the command from Python and `os.wait4` on it, "
        "so every figure includes the same spawn cost (see `/bin/true`). Peak RSS is `ru_maxrss` from `wait4`, "
        f"read by GNU time (`/usr/bin/time -f %M`) in {args.rss_runs} separate untimed run(s) per command and "
        "size (the largest is shown): a child forked from the Python harness would report the harness's own "
        "resident size. It covers the command and the children it waited for (the askpass script for a gated "
        "read through VAULT_ASKPASS; gpg for `pass`), not daemons it talks to (gnome-keyring, gpg-agent); the `/bin/true` row is "
        "the floor of this method.",
        "- A gated read with `--password-stdin` gets the password line through a pipe written by the harness. "
        "Without the option it runs `VAULT_ASKPASS`, a two-line `/bin/sh` script; that fork+exec is part of "
        "those rows and is shown alone as \"askpass script alone\" (and under pam_wrapper, which it inherits "
        "here). `vaultctl help` is the binary's start-up floor.",
        ("- pam_wrapper's folders (`/tmp/pam.X`) were on a private tmpfs (a mount namespace of the benchmark's "
         "own, `bench/run.sh`); vaultctl's and the peers' state was on disk (`/var/tmp`)." if b.private_tmp else
         "- pam_wrapper's folders (`/tmp/pam.X`) were on the shared `/tmp` (no private tmpfs: not root, no mount "
         "namespace, or the checkout is under /tmp), whose file creation can be slow right after a test suite; "
         "the pam_wrapper start-up figures carry that."),
        "- pam_wrapper gives every process it is preloaded into a folder `/tmp/pam.X` and removes it at exit; "
        "dash (the askpass script) ends with `_exit`, so its folder stays, and every stale folder slows each "
        "later pam_wrapper start-up. After each run under pam_wrapper the harness removes the folders of "
        "processes that are gone (untimed), as the test suite does, and stops if a row that runs only vaultctl "
        "under pam_wrapper left one. Runs before this sweep (up to commit 2494138) are not comparable: part of "
        "their gated-read time was pam_wrapper checking stale folders.",
        "- \"Swift start-up\" rows are one-line programs built in this run with `swiftc -O` (Glibc alone; "
        "FoundationEssentials or Foundation with one `JSONDecoder` call; static or shared stdlib): what each "
        "choice of imports and linking costs before a command does anything. vaultctl imports no Foundation and "
        "speaks D-Bus itself instead of loading libsecret's GLib stack; `make release` links the stdlib, "
        "libstdc++ and libgcc statically."
        + (f" The release binary loads {', '.join(b.needed)} (`readelf -d`)." if b.needed else ""),
        "- vaultctl: `read`/`status` of one slot; `list` names every slot of both backends; `store` replaces one "
        "existing slot (the slot count stays the same), so it is gated: PAM first, the password from the "
        "VAULT_ASKPASS script. Non-gated commands run without pam_wrapper.",
        "- `secret-tool lookup`/`store` use vaultctl's own schema and attributes (the store replaces one existing "
        "sync item). `secret-tool search --all xdg:schema org.vaultctl.Slot` (libsecret "
        f"{libsecret_version()}) loads and prints every matching item's secret and attributes (to /dev/null); it "
        "would unlock the collection only with `--unlock` (the collection is unlocked here).",
    ]
    if any("user-launcher" in {c.key for c in results[n]} for n in sizes):
        out.append(
            "- Protected mode as a non-root user (issue 34, point 6): a throwaway user made with `useradd` in the "
            "benchmark's overlay on `/etc` (removed at the end, with its folder in `/var/lib/vaultctl`), on a protected "
            "vault of its own behind the gate installed as for root's rows, through the same one-module pam_matrix "
            "stack (its line in the same password file, which the gate reads with the group `vaultctl`), with its own "
            "private bus and unlocked gnome-keyring (`status` asks the Secret Service too, as root's does). Each of its "
            "commands runs through `setpriv --reuid --regid --init-groups -- env -i NAME=value …`, as the end-to-end "
            "tests reach a user, and that launcher is timed alone in the same rounds, running `/bin/true`. The rows "
            "marked \"net of the launcher\" show, and the targets judge, the median over the rounds of (row − launcher "
            "+ `/bin/true`) within each round. Within a round, because the three share that round's load, which drifts "
            "between rounds (a difference of two medians mixes rounds). `/bin/true` added back, because the launcher "
            "row is a process spawn of its own: taking all of it off would also take off the spawn and wait every "
            "row pays, `secret-tool lookup`'s included (about the `/bin/true` row), and flatter each ratio by that. "
            "Their middle half is of the same per-round net times; their peak RSS is the whole chain's, which is "
            "vaultctl's (setpriv and env exec into it) and its askpass child's. The root rows of the same commands stay, "
            "no longer judged.")
    for name, peer in b.peers.items():
        if not peer.ok:
            out.append(f"- {name}: skipped — {peer.note}.")
    if b.peers.get("systemd-creds") and b.peers["systemd-creds"].ok:
        out.append("- `systemd-creds --with-key=host` uses a host key made by `systemd-creds setup` in the "
                   "benchmark's temporary folder (`SYSTEMD_CREDENTIAL_SECRET`); the real "
                   "`/var/lib/systemd/credential.secret` is neither read nor created.")
    if b.peers.get("pass") and b.peers["pass"].ok:
        out.append("- `pass`: a throwaway `GNUPGHOME` with a passphrase-less ed25519/cv25519 key made in batch mode; "
                   "`PASSWORD_STORE_DIR` in the temporary folder (no git); gpg-agent is started by the warm-up round.")
    if b.installed:
        out.append(f"- Installed for this run: {' '.join(sorted(set(b.installed)))}.")
    out += b.notes and [f"- {n}" for n in b.notes] or []
    out += [f"- Rerun with `make bench` (quiet machine, as root or with the peers installed); "
            "CI runs `make bench-smoke`."]
    return "\n".join(out) + "\n", summary


def user_rows_paragraph(by_key: dict[str, Cmd], base: float) -> str:
    """How the non-root rows' net figures come from their raw times, beside the root rows of the same commands."""
    launcher, floor = by_key["user-launcher"], by_key["true"]
    own = paired_median_ms(launcher, floor)
    keys = [("user-gate-read-stdin", "gate-read-stdin", "`read --password-stdin`"), ("user-gate-read", "gate-read", "`read` with askpass"),
            ("user-gate-status", "gate-status", "`status`")]
    raw = ", ".join(f"{name} {fmt_ms(median_ms(by_key[k]))} ms" for k, _, name in keys)
    net = ", ".join(f"{name} {fmt_ms(shown_ms(by_key[k], by_key))} ms ({shown_ms(by_key[k], by_key) / base:.2f}×)" for k, _, name in keys)
    whole = ", ".join(f"{paired_median_ms(by_key[k], launcher) / base:.2f}×" for k, _, _ in keys)
    root = ", ".join(f"{median_ms(by_key[r]) / base:.2f}×" for _, r, _ in keys)
    return (f"As a non-root user (a throwaway user on its own protected vault behind the same gate and PAM stack, with its own "
            f"bus and unlocked gnome-keyring; each command through `setpriv --reuid --regid --init-groups -- env -i …`): "
            f"the launcher alone takes {fmt_ms(median_ms(launcher))} ms and `/bin/true` spawned directly "
            f"{fmt_ms(median_ms(floor))} ms, so setpriv and env add {fmt_ms(own)} ms (median of the per-round differences). "
            f"With the launcher: {raw}. Net of it (in each round, the row less the launcher plus `/bin/true`), as the "
            f"rows show and the targets judge: {net}. Less the whole launcher row instead (a process spawn fewer than "
            f"`secret-tool lookup`'s row pays): {whole}. As root on root's vault (not judged): {root}.")


def real_pam_section(b: "Bench") -> list[str]:
    """The rows on the system's own PAM stack, and where vaultctl's extra time over pamtester goes."""
    if not b.real_pam:
        return []
    by = {c.key: c for c in b.real_pam}
    read, tester, helprow, true = by["real-read"], by["real-pamtester"], by["real-help"], by["real-true"]
    out = ["", "## The system's own PAM stack", "",
           "A throwaway user with a known password (made with `useradd` and `chpasswd` for this run and removed "
           "after it) reads a device slot with `vaultctl read --password-stdin`, beside `pamtester vaultctl USER "
           "authenticate acct_mgmt` on the same service and user: `/etc/pam.d/vaultctl` as `policy/pam.d/vaultctl` "
           "installs it (`@include common-auth`, `@include common-account`: pam_unix, which as a non-root user "
           "checks the password through the setgid helper `unix_chkpwd` and its yescrypt hash), put in place for the "
           "run when there was none. Each runs as that user through `runuser -u USER -- env -i …`, no pam_wrapper, "
           f"{len(read.times)} interleaved rounds (+{b.args.warmup} warm-up), shuffled.", "",
           "| command | median ms | middle half ms |", "| --- | ---: | ---: |"]
    for c in b.real_pam:
        out.append(f"| {c.label} | {fmt_ms(median_ms(c))} | {middle_half(c)} |")
    extra = paired_median_ms(read, tester)
    clock = b.real_pam_clock
    bound = None
    if clock.get("real-read") and clock.get("real-pamtester"):
        def med(key, f):
            return statistics.median(f(a, w) for a, w in clock[key])
        in_v, in_t = med("real-read", lambda a, w: a), med("real-pamtester", lambda a, w: a)
        own_v, own_t = med("real-read", lambda a, w: w - a), med("real-pamtester", lambda a, w: w - a)
        start = paired_median_ms(helprow, true)
        bound = own_v - own_t + start
    # Judged on the breakdown when there is one: the direct difference carries the variance of the PAM work
    # itself (yescrypt in unix_chkpwd, tens of ms on a loaded machine), which is the same code for both.
    judged = bound if bound is not None else extra
    share = judged / median_ms(read)
    ok = share <= REAL_PAM_OWN_SHARE
    out += ["", f"vaultctl's own share of the read: {judged:.2f} ms, {share * 100:.1f} % of the read (target ≤ "
            f"{REAL_PAM_OWN_SHARE * 100:.0f} %: {'✓ met' if ok else '✗ missed'})"
            + (", from the breakdown below" if bound is not None else ", the median of the per-round differences read − pamtester")
            + "." + (f" Measured directly, as the median of the per-round differences read − pamtester, it is {extra:.2f} ms: "
                     "that difference also carries the variance of the PAM work itself, the same code in both, whose "
                     "middle half spans the widths in the table." if bound is not None else "")]
    if bound is not None:
        out += ["", "Where it goes, from `bench/pam-clock.c` (preloaded into both: it times the libpam calls and the "
                "process from the library's constructor to exit): inside libpam (the stack, three runs of "
                f"`unix_chkpwd` — blank-password check, the password, expiry — and the program's own conversation "
                f"callback) {in_v:.2f} ms for vaultctl and {in_t:.2f} ms for pamtester; outside it, after loading, "
                f"{own_v:.2f} ms for vaultctl (the lock, audit and rate-limit checks, the origin check, the rate "
                f"limit's place, opening the device slot, the audit line) and {own_t:.2f} ms for pamtester. Before "
                f"that, exec and loading: `vaultctl help` takes {start:.2f} ms more than `/bin/true` through the same "
                "`runuser` (per-round differences; an upper bound for loading, as it includes printing the help). "
                "The bound above is vaultctl's outside-libpam time less pamtester's, plus that start-up. The PAM work "
                "is the same for both: yescrypt in `unix_chkpwd` is the read."]
    return out


def paired_median_ms(c: Cmd, base: Cmd) -> float:
    """The median of c's time minus base's in the same round (both ran once in every round): steadier than
    the difference of the two medians on a machine whose load drifts."""
    return statistics.median(a - b for a, b in zip(c.times, base.times)) / 1e6


def json_section(results: dict[int, list[Cmd]]) -> list[str]:
    """What each JSON library costs per command at each size (issue 11, point 4), and which one the rule lets in."""
    sizes = [n for n in sorted(results) if any(c.key == "json-floor" for c in results[n])]
    if not sizes:
        return []
    out = ["", "## JSON: what a library would cost per command", "",
           "Each probe is one small program built in this run with the release build's flags "
           "(`bench/json-probes/`): it reads the documents a gated read reads — the policy vaultctl ships, the "
           "vault's own `modes.json` at that size (a copy), a rate-limit state with two failures and one attempt "
           "in progress — parses them with one library and finds one slot's mode, as `ModeRecord.hint(for:)` "
           "does. The C libraries' trees are converted to vaultctl's `JSONValue`, where the document rules "
           "would run in Swift (the mode record: only the entry looked up); FoundationEssentials decodes "
           "`Decodable` structs without the unknown-key rule, so its figure is a lower bound. The probes run in "
           "rounds of their own after the commands' (`--json-rounds`, each probe once per round, shuffled). "
           "\"Per command\" is the median over the rounds of the probe's time minus the floor probe's in the "
           "same round (the floor reads the same files and parses nothing), so it holds loading the library "
           "(a shared library's relocations and constructors, FoundationEssentials' static initialisers) and "
           "parsing; \"more than the codec\" is the same against the codec's probe. The rule (issue 11): a "
           f"library qualifies at ≤ {JSON_RULE_MS:g} ms per command at every size.", "",
           "| probe | " + " | ".join(f"median ms at {n}" for n in sizes) + " | "
           + " | ".join(f"per command ms at {n}" for n in sizes) + " | "
           + " | ".join(f"more than the codec, ms at {n}" for n in sizes) + " | rule |",
           "| --- |" + " ---: |" * (3 * len(sizes)) + " --- |"]
    keys = [c.key for c in results[sizes[0]] if c.group == "json"]
    fit = []
    for key in keys:
        rows = [{c.key: c for c in results[n]} for n in sizes]
        if not all(key in r for r in rows):
            continue
        med = [median_ms(r[key]) for r in rows]
        cost = [paired_median_ms(r[key], r["json-floor"]) for r in rows]
        extra = [paired_median_ms(r[key], r["json-codec"]) if "json-codec" in r else float("nan") for r in rows]
        if key == "json-floor":
            verdict = "(the floor)"
        elif key == "json-codec":
            verdict = "(today's codec)"
        elif key in JSON_UNFIT:
            verdict = f"unfit: {JSON_UNFIT[key]}"
        else:
            ok = all(x <= JSON_RULE_MS for x in cost)
            verdict = "✓ qualifies" if ok else "✗ over " + ", ".join(str(n) for n, x in zip(sizes, cost) if x > JSON_RULE_MS)
            if ok:
                fit.append(rows[0][key].label.removeprefix("JSON probe: "))
        out.append(f"| {rows[0][key].label.removeprefix('JSON probe: ')} | " + " | ".join(f"{x:.2f}" for x in med) + " | "
                   + " | ".join("—" if key == "json-floor" else f"{x:+.2f}" for x in cost) + " | "
                   + " | ".join("—" if key in ("json-floor", "json-codec") else f"{x:+.2f}" for x in extra)
                   + f" | {verdict} |")
    out += ["", "Qualifies by the rule: " + ("; ".join(fit) if fit else "none, so the codec stays") + ".",
            "", f"Versions: {json_versions()}."]
    return out


def json_versions() -> str:
    """The probes' libraries and compiler, as pkg-config and swiftc report them."""
    parts = []
    for name, module in (("jansson", "jansson"), ("json-c", "json-c")):
        p = subprocess.run(["pkg-config", "--modversion", module], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL) if shutil.which("pkg-config") else None
        parts.append(f"{name} {p.stdout.decode().strip() if p and p.returncode == 0 else '?'}")
    p = subprocess.run(["swiftc", "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT) if shutil.which("swiftc") else None
    first = p.stdout.decode(errors="replace").splitlines()[0] if p and p.stdout else "?"
    parts.append(first.split(" (")[0] + " (FoundationEssentials from its toolchain)")
    return ", ".join(parts)


def shared_libraries(binary: str) -> list[str]:
    """The NEEDED entries of an ELF file (readelf -d), so a library creeping back into the start-up shows."""
    if not shutil.which("readelf"):
        return []
    p = subprocess.run(["readelf", "-d", binary], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return [line.split("[", 1)[1].rstrip("]") for line in p.stdout.decode(errors="replace").splitlines()
            if "(NEEDED)" in line and "[" in line]


def libsecret_version() -> str:
    p = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "libsecret-tools"], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL) if shutil.which("dpkg-query") else None
    return p.stdout.decode().strip() if p and p.returncode == 0 else "?"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("vaultctl", help="path to the vaultctl binary (release build)")
    ap.add_argument("--smoke", action="store_true", help="tiny counts for CI: 3 rounds, 10 slots, no installs, no docs/")
    ap.add_argument("--rounds", type=int, help="measured rounds per size (default 30; smoke 3)")
    ap.add_argument("--warmup", type=int, default=1, help="uncounted rounds before each size (default 1)")
    ap.add_argument("--sizes", help="slots per backend, comma-separated (default 10,100,1000; smoke 10)")
    ap.add_argument("--rss-runs", type=int, help="untimed runs under GNU time per command and size for peak RSS (default 3; smoke 1)")
    ap.add_argument("--jobs", type=int, default=4, help="parallel stores while filling the vault (default 4)")
    ap.add_argument("--seed", type=int, default=20240601, help="shuffle seed")
    ap.add_argument("--out", help="markdown file to write (default docs/benchmarks.md; smoke: none)")
    ap.add_argument("--no-install", action="store_true", help="never apt-get install a missing peer")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    ap.add_argument("--no-startup", action="store_true", help="do not build and time the Swift start-up probes")
    ap.add_argument("--no-json-probes", action="store_true", help="do not build and time the JSON library probes")
    ap.add_argument("--no-real-pam", action="store_true", help="do not make a throwaway user and time reads on the system's own PAM stack")
    ap.add_argument("--json-rounds", type=int, default=300, help="rounds of the JSON probes per size (default 300)")
    args = ap.parse_args(argv)
    if args.rounds is None:
        args.rounds = 3 if args.smoke else 30
    if args.rss_runs is None:
        args.rss_runs = 1 if args.smoke else 3
    sizes = [int(s) for s in (args.sizes or ("10" if args.smoke else "10,100,1000")).split(",")]
    if args.rounds < 1 or args.json_rounds < 1 or any(s < 3 for s in sizes):
        ap.error("--rounds and --json-rounds must be ≥ 1 and every size ≥ 3")
    if args.out is None and not args.smoke:
        args.out = os.path.join(ROOT, "docs", "benchmarks.md")

    # SIGTERM/SIGHUP: unwind through the finally below, so the bus and keyring are stopped.
    def stop(signum, frame):
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGHUP, stop)

    started = time.time()
    t0 = time.monotonic()
    b = Bench(args)
    results: dict[int, list[Cmd]] = {}
    try:
        b.setup()
        for size in sorted(sizes):
            b.populate(size)
            results[size] = b.measure(size)
        b.measure_real_pam()
    except SetupError as e:
        print(f"bench: {e}", file=sys.stderr)
        return 2
    except BenchError as e:
        print(f"bench: FAILED: {e}", file=sys.stderr)
        return 1
    finally:
        b.teardown()
    md, summary = report(b, results, started, time.monotonic() - t0)
    print(md)
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        tmp = args.out + ".tmp"
        with open(tmp, "w") as f:
            f.write(md)
        os.replace(tmp, args.out)
        log(f"wrote {args.out}")
    missed = sorted({what for what, ok, _, _ in summary if not ok})
    log(f"done in {time.monotonic() - t0:.0f} s; targets missed: {len(missed)}" + (" (not a failure)" if missed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
