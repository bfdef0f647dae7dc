// swift-tools-version:6.0
import PackageDescription

// vaultctl: CLI → Vault → Slots → C (libsodium, libpam, sd-bus from libsystemd, libgcrypt; the TPM through
// the vaultctl-tpm helper, the only program linked with tpm2-tss).
// Dependencies point down only.
let package = Package(
    name: "vaultctl",
    products: [
        .executable(name: "vaultctl", targets: ["vaultctl"]),
        .executable(name: "vaultctl-tpm", targets: ["vaultctl-tpm"]),
    ],
    targets: [
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium",
                       providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(name: "CPAM", pkgConfig: "pam",
                       providers: [.apt(["libpam0g-dev"])]),
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd",  // sd-bus, for the Secret Service
                       providers: [.apt(["libsystemd-dev"])]),
        .systemLibrary(name: "CGcrypt", pkgConfig: "libgcrypt",  // the Secret Service session encryption
                       providers: [.apt(["libgcrypt20-dev"])]),
        .target(name: "Slots", dependencies: ["CSodium", "CSystemd", "CGcrypt", "CSystem"]),
        .systemLibrary(name: "CSystem"),  // prctl(2), which Glibc's module does not export
        .target(name: "Vault", dependencies: ["Slots", "CPAM", "CSystem"]),
        .executableTarget(name: "vaultctl", dependencies: ["Vault", "Slots"]),
        // The TPM: tpm2-tss (ESAPI pulls in libcrypto) is linked into a helper that vaultctl starts only to
        // seal or unseal, so no other command pays its load time (~2 ms).
        .systemLibrary(name: "CTSS2", pkgConfig: "tss2-esys", providers: [.apt(["libtss2-dev"])]),
        .target(name: "TPMSealing", dependencies: ["Slots", "CTSS2"]),
        .executableTarget(name: "vaultctl-tpm", dependencies: ["TPMSealing", "Slots", "Vault"]),
        .testTarget(name: "SlotsTests", dependencies: ["Slots"]),
        .testTarget(name: "VaultTests", dependencies: ["Vault", "Slots"]),
        .testTarget(name: "vaultctlTests", dependencies: ["vaultctl", "vaultctl-tpm", "Slots"]),
    ],
    swiftLanguageModes: [.v6]
)
