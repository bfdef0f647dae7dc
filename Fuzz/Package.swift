// swift-tools-version:6.0
import PackageDescription

// libFuzzer harnesses for vaultctl. A separate package so the main build never sees `-sanitize=fuzzer`.
//
// The root package exports only the `vaultctl` executable, so this one compiles the same sources again:
// Sources/{Slots,JSON,VaultRules,GateProtocol,Vault,CSodium,CPAM,CSystem} are symlinks to ../../Sources/…, declared below with the
// dependencies the root manifest gives them (keep the two in step). Each harness's oracle is a symlink to
// the `*FuzzCheck.swift` file the corpus replay tests in Tests/{Slots,Vault}Tests/Fuzz use, so the fuzzer and
// `make test` check exactly the same things. Build and run with `make fuzz` (see README.md).
let testable: [SwiftSetting] = [.unsafeFlags(["-enable-testing"])]  // the sealed-file oracle uses @testable
let harness: [SwiftSetting] = [.unsafeFlags(["-parse-as-library"])]  // libFuzzer provides main

let package = Package(
    name: "vaultctl-fuzz",
    products: [
        .executable(name: "fuzz-sealed-file", targets: ["FuzzSealedFile"]),
        .executable(name: "fuzz-slot-name", targets: ["FuzzSlotName"]),
        .executable(name: "fuzz-policy", targets: ["FuzzPolicy"]),
        .executable(name: "fuzz-secret-reader", targets: ["FuzzSecretReader"]),
        .executable(name: "fuzz-askpass", targets: ["FuzzAskpass"]),
        .executable(name: "fuzz-gate-protocol", targets: ["FuzzGateProtocol"]),
    ],
    targets: [
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium"),
        .systemLibrary(name: "CPAM"),
        .systemLibrary(name: "CSystem"),
        .systemLibrary(name: "CFuzzer"),  // LLVMFuzzerRunDriver
        .target(name: "Slots", dependencies: ["CSodium", "CSystem"], swiftSettings: testable),
        .target(name: "JSON", dependencies: ["Slots"], swiftSettings: testable),
        .target(name: "VaultRules", dependencies: ["JSON", "Slots", "CPAM", "CSystem"], swiftSettings: testable),
        .target(name: "GateProtocol", dependencies: ["VaultRules", "Slots", "CSodium", "CSystem"], swiftSettings: testable),
        .target(name: "Vault", dependencies: ["GateProtocol", "VaultRules", "JSON", "Slots", "CPAM", "CSystem"], swiftSettings: testable),
        .executableTarget(name: "FuzzSealedFile", dependencies: ["CFuzzer", "Slots"], swiftSettings: harness),
        .executableTarget(name: "FuzzSlotName", dependencies: ["CFuzzer", "Slots"], swiftSettings: harness),
        .executableTarget(name: "FuzzPolicy", dependencies: ["CFuzzer", "VaultRules", "Vault"], swiftSettings: harness),
        .executableTarget(name: "FuzzSecretReader", dependencies: ["CFuzzer", "GateProtocol", "VaultRules", "Vault", "Slots"], swiftSettings: harness),
        .executableTarget(name: "FuzzAskpass", dependencies: ["CFuzzer", "GateProtocol", "VaultRules", "Vault", "Slots"], swiftSettings: harness),
        .executableTarget(name: "FuzzGateProtocol", dependencies: ["CFuzzer", "GateProtocol", "VaultRules", "Vault", "Slots"], swiftSettings: harness),
    ],
    swiftLanguageModes: [.v6]
)
