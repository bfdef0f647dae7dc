// vaultctl-gate started before main (in the release build, which links the Swift runtime statically, before
// the runtime's start-up too): a protected command's time is mostly the gate's
// own start-up, which then overlaps vaultctl's (the Swift runtime's start, the decoding and parsing of the
// words, the command's context). The command is named by the first one or two words, as vaultctl's command
// table names it (EarlyGateTests hold this table to CommandKind); nothing starts for `--help`, `-h` or
// `--version`, for a command that does not look at the vault, or under git's helper name. Only after
// start.c's constructor made vaultctl not dumpable (priority 101 runs first): a program running as you
// could otherwise open /proc/PID/fd/N of the gate's pipes and speak for it. main takes what was started
// (EarlyGate.launch); the parsed command adopts it, or a usage error leaves it to end at once (its input
// closes when vaultctl exits), before any request.
#include <limits.h>
#include <string.h>
#include "CStartHardening.h"

// The commands that look at the vault, and whether each authenticates as a rule (it is given the gate's
// `--authenticating` hint): CommandKind's looksAtVault and authenticatesAsARule.
static const struct { const char *name; int authenticates; } commands[] = {
    { "store", 0 }, { "read", 1 }, { "delete", 1 }, { "list", 0 }, { "status", 0 }, { "move", 1 },
    { "recovery generate", 0 }, { "recovery show", 1 }, { "recovery status", 0 },
    { "recovery confirm-copied", 1 }, { "supply", 1 }, { "askpass", 1 }, { "allow-supply", 1 },
    { "lock", 0 }, { "unlock", 1 }, { "log", 0 }, { "device-key status", 0 }, { "device-key seal", 1 },
    { "device-key protect", 1 }, { "credential get", 1 }, { "credential store", 0 },
    { "credential erase", 1 }, { "send", 1 }, { "receive", 0 }, { "target add", 0 }, { "target list", 0 },
    { "target remove", 0 },
};

static int find(const char *first, const char *second) {
    size_t a = strlen(first), b = second ? strlen(second) : 0;
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        const char *name = commands[i].name;
        if (second == NULL) {
            if (strcmp(name, first) == 0) return (int)i;
        } else if (strlen(name) == a + 1 + b && strncmp(name, first, a) == 0 && name[a] == ' '
                   && strcmp(name + a + 1, second) == 0) {
            return (int)i;
        }
    }
    return -1;
}

const char *vaultctl_early_gate_command(int argc, char *const argv[], int *authenticates) {
    if (argc < 2 || argv[0] == NULL || argv[1] == NULL) return NULL;
    const char *slash = strrchr(argv[0], '/');
    if (strcmp(slash ? slash + 1 : argv[0], "git-credential-vaultctl") == 0) return NULL;
    for (int i = 1; i < argc && argv[i] != NULL; i++) {
        if (strcmp(argv[i], "--") == 0) break;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--version") == 0) return NULL;
    }
    int found = argc > 2 && argv[2] != NULL ? find(argv[1], argv[2]) : -1;
    if (found < 0) found = find(argv[1], NULL);
    if (found < 0) return NULL;
    if (authenticates) *authenticates = commands[found].authenticates;
    return commands[found].name;
}

static struct vaultctl_early_gate started;
static char started_path[PATH_MAX];

__attribute__((constructor(102))) static void vaultctl_start_gate_early(int argc, char **argv, char **envp) {
    (void)envp;
    vaultctl_ensure_standard_descriptors();  // before the pipes: neither may become standard input or output
    int authenticates = 0;
    if (vaultctl_early_gate_command(argc, argv, &authenticates) == NULL) return;
    if (!vaultctl_installed_gate_path(started_path)) return;
    started.start = vaultctl_gate_spawn(started_path, authenticates);
    started.path = started_path;
}

int vaultctl_early_gate_linked(void) { return 0; }

struct vaultctl_early_gate vaultctl_take_early_gate(void) {
    struct vaultctl_early_gate taken = started;
    started.path = NULL;
    return taken;
}
