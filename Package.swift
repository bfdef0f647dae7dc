// swift-tools-version:6.0
import PackageDescription

// vaultctl: CLI → Vault → Slots → C (libsodium, libpam, sd-bus from libsystemd, libgcrypt).
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
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd",  // sd-bus, for the Secret Service
                       providers: [.apt(["libsystemd-dev"])]),
        .systemLibrary(name: "CGcrypt", pkgConfig: "libgcrypt",  // the Secret Service session encryption
                       providers: [.apt(["libgcrypt20-dev"])]),
        .target(name: "Slots", dependencies: ["CSodium", "CSystemd", "CGcrypt"]),
        .systemLibrary(name: "CSystem"),  // prctl(2), which Glibc's module does not export
        .target(name: "Vault", dependencies: ["Slots", "CPAM", "CSystem"]),
        .executableTarget(name: "vaultctl", dependencies: ["Vault", "Slots"]),
        .testTarget(name: "SlotsTests", dependencies: ["Slots"]),
        .testTarget(name: "VaultTests", dependencies: ["Vault", "Slots"]),
        .testTarget(name: "vaultctlTests", dependencies: ["vaultctl", "Slots"]),
    ],
    swiftLanguageModes: [.v6]
)
