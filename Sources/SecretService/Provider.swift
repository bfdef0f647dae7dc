import Slots

/// The program that owns `org.freedesktop.secrets`, known by its process name (`/proc/PID/comm`, at most 15
/// bytes): what vaultctl knows of each provider's ways is said here, once. A provider not named here is taken
/// at the specification's word.
struct Provider: Sendable, Equatable {
    let processName: String

    /// KeePassXC (2.7), the one provider with ways of its own:
    private var isKeePassXC: Bool { processName == "keepassxc" }

    /// It names its clients by their executables, so vaultctl reaches it through `BusConnector`.
    var namesClientsByExecutable: Bool { isKeePassXC }

    /// It keeps what is deleted (Recycle Bin) or replaced (History) by default: `KeptCopies`.
    var keepsCopies: Bool { isKeePassXC }

    /// It holds each item locked until a person allows the asking connection in its dialog ("Confirm when
    /// passwords are retrieved by clients", on by default), whose "Remember" lasts that one connection.
    var confirmsEachAccess: Bool { isKeePassXC }

    /// Its dialog stays on screen after vaultctl gave up and dismissed the prompt (KeePassXC 2.7 does not close
    /// it on `Prompt.Dismiss`); answering it then changes nothing.
    var leavesDialogAfterDismiss: Bool { isKeePassXC }

    /// Its `Service.SearchItems` may show an unlock dialog (`SecretServiceClient.searchMayPrompt`).
    var searchMayPrompt: Bool { isKeePassXC }

    /// Its program in words a person recognizes.
    var programName: String {
        switch processName {
        case "keepassxc": return "KeePassXC"
        case "gnome-keyring-d": return "gnome-keyring"
        case "kwalletd5", "kwalletd6", "ksecretd": return "KWallet"
        default: return SlotErrorText.oneLine(processName, limit: 40)
        }
    }
}
