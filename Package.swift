// swift-tools-version:6.0
import PackageDescription

// vaultctl: CLI → Vault → Slots → C (libsodium, libpam; the Secret Service is spoken to over D-Bus directly).
// Dependencies point down only.
let package = Package(
    name: "vaultctl",
    products: [
        .executable(name: "vaultctl", targets: ["vaultctl"]),
    ],
    targets: [
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium",
                       providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(name: "CPAM", pkgConfig: "pam",
                       providers: [.apt(["libpam0g-dev"])]),
        .systemLibrary(name: "CTSS2", pkgConfig: "tss2-esys",  // tpm2-tss; the device key sealed by the TPM
                       providers: [.apt(["libtss2-dev"])]),
        .target(name: "Slots", dependencies: ["CSodium", "CTSS2"]),
        .systemLibrary(name: "CSystem"),  // prctl(2), which Glibc's module does not export
        .target(name: "Vault", dependencies: ["Slots", "CPAM", "CSystem"]),
        .executableTarget(name: "vaultctl", dependencies: ["Vault", "Slots"]),
        .testTarget(name: "SlotsTests", dependencies: ["Slots"]),
        .testTarget(name: "VaultTests", dependencies: ["Vault", "Slots"]),
        .testTarget(name: "vaultctlTests", dependencies: ["vaultctl", "Slots"]),  // Slots: the fake Secret Service speaks its wire format
    ],
    swiftLanguageModes: [.v6]
)
