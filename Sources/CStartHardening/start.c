// vaultctl not dumpable, and with no core dumps, from before main (and, in the release build, the statically
// linked Swift runtime) runs: a program
// running as you that opened /proc/PID/mem, or attached with ptrace, while vaultctl was still dumpable would
// keep that access after it stops being dumpable (measured: a mem descriptor opened before PR_SET_DUMPABLE 0
// still reads after it). The constructor runs once the loader has mapped vaultctl and its libraries, before
// any other of vaultctl's constructors (priority 101, the first one a program may use); Hardening.apply()
// in main does the same again, for every program of the package.
#include <sys/prctl.h>
#include <sys/resource.h>
#include "CStartHardening.h"

__attribute__((constructor(101))) static void vaultctl_harden_at_start(void) {
    struct rlimit none = { 0, 0 };
    (void)setrlimit(RLIMIT_CORE, &none);
    (void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

// Named by main, so that this object and the other constructors' (early_gate.c, bus_connector.c) are linked.
int vaultctl_start_hardening_linked(void) { return 1 + vaultctl_early_gate_linked() + vaultctl_bus_connector_linked(); }
