// swift-tools-version:6.0
import PackageDescription

// vaultctl: CLI → Vault → GateProtocol → VaultRules → JSON → Slots → C (libsodium, libpam; the TPM through
// the vaultctl-tpm helper, the only program linked with tpm2-tss). The gate: vaultctl-gate → GateService →
// GateProtocol, VaultRules, JSON, Slots: never Vault (the CLI's side) nor SecretService (sd-bus, libgcrypt),
// which only the CLI depends on (scripts/check-gate-links.sh checks the built gate). Dependencies point down.
let package = Package(
    name: "vaultctl",
    products: [
        .executable(name: "vaultctl", targets: ["vaultctl"]),
        .executable(name: "vaultctl-tpm", targets: ["vaultctl-tpm"]),
        .executable(name: "vaultctl-gate", targets: ["vaultctl-gate"]),
    ],
    targets: [
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium",
                       providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(name: "CPAM"),  // headers only (Debian libpam0g-dev): loaded at the first authentication
        // sd-bus (libsystemd) for the Secret Service, and libgcrypt for its session encryption: headers only
        // (Debian libsystemd-dev, libgcrypt20-dev), no pkg-config, so nothing links them. They are loaded with
        // dlopen at first use (see their shim.h), and the commands that never reach the bus do not load them;
        // libpam likewise, at the first authentication.
        .systemLibrary(name: "CSystemd"),
        .systemLibrary(name: "CGcrypt"),
        // The session-bus connector for KeePassXC (Sources/CBusConnector/bus_connector.c): both of its ends.
        .target(name: "CBusConnector"),
        .target(name: "Slots", dependencies: ["CSodium", "CSystem"]),
        // The sync slot: the Secret Service client over sd-bus, its session crypto (libgcrypt) and the KeePassXC
        // connector. Only the CLI depends on it; an `import SecretService` in Vault or the gate does not compile.
        .target(name: "SecretService", dependencies: ["Slots", "CSystemd", "CGcrypt", "CBusConnector"]),
        .systemLibrary(name: "CSystem"),  // prctl(2), which Glibc's module does not export
        // The strict JSON codec of vaultctl's files and outputs (a parser that refuses duplicates and depth).
        .target(name: "JSON", dependencies: ["Slots"]),
        // The rules the gate and the CLI both apply: errors, policy, origin, PAM, rate limit, audit, vault lock.
        .target(name: "VaultRules", dependencies: ["JSON", "Slots", "CPAM", "CSystem"]),
        // The gate's protocol: frames, requests, refusals, scope, and the constants of the gate's start-up.
        .target(name: "GateProtocol", dependencies: ["VaultRules", "Slots", "CSodium", "CSystem"]),
        // The CLI's side: the façade, mode record, move, status, supply, recovery, hand-off, clipboard, credentials,
        // input, and the gate's client. The gate does not link it.
        .target(name: "Vault", dependencies: ["GateProtocol", "VaultRules", "JSON", "Slots", "CPAM", "CSystem"]),
        // Not dumpable before anything of vaultctl runs, and the installed gate started then: C constructors
        // (Sources/CStartHardening), which start the gate as GateClient does (CSystem's gate_start.h).
        .target(name: "CStartHardening", dependencies: ["CSystem", "CBusConnector"]),
        .executableTarget(name: "vaultctl", dependencies: ["Vault", "GateProtocol", "VaultRules", "JSON", "SecretService", "Slots", "CStartHardening"]),
        // The TPM: tpm2-tss (ESAPI pulls in libcrypto) is linked into a helper that vaultctl starts only to
        // seal or unseal, so no other command pays its load time (~2 ms).
        .systemLibrary(name: "CTSS2", pkgConfig: "tss2-esys", providers: [.apt(["libtss2-dev"])]),
        .target(name: "TPMSealing", dependencies: ["Slots", "CTSS2"]),
        .executableTarget(name: "vaultctl-tpm", dependencies: ["TPMSealing", "Slots"]),
        // The set-group-ID gate (docs/gate.md): the protected store's only door. No Foundation, no D-Bus.
        .target(name: "GateService", dependencies: ["GateProtocol", "VaultRules", "JSON", "Slots", "CSystem"]),
        .executableTarget(name: "vaultctl-gate", dependencies: ["GateService", "GateProtocol", "VaultRules", "Slots", "CSystem"]),
        // What every test target shares (issue 34, point 5): a library target no product links. Its process
        // runner starts programs through the product's own spawn (Slots' ChildSpawn).
        .target(name: "TestSupport", dependencies: ["Slots"], path: "Tests/TestSupport"),
        .testTarget(name: "SlotsTests", dependencies: ["Slots", "SecretService", "CBusConnector", "TestSupport"]),
        .testTarget(name: "VaultTests", dependencies: ["Vault", "GateProtocol", "VaultRules", "JSON", "Slots", "TestSupport"]),
        // The gate's session in process: its rules over pipes, with a gate and a store of the test's own (no root);
        // Vault for the CLI's halves of the protocol (a request as sent, a refusal read back).
        .testTarget(name: "GateServiceTests", dependencies: ["GateService", "GateProtocol", "VaultRules", "Slots", "Vault", "TestSupport"]),
        .testTarget(name: "vaultctlTests", dependencies: ["vaultctl", "vaultctl-tpm", "vaultctl-gate", "GateService", "GateProtocol", "VaultRules", "Vault", "Slots", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
