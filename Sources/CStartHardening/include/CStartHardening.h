#ifndef VAULTCTL_START_HARDENING_H
#define VAULTCTL_START_HARDENING_H
#include "../../CSystem/gate_start.h"

// start.c's constructor makes vaultctl not dumpable before anything else of it runs. This function only
// lets Swift name the module, so that its object is linked (and its constructors with it).
int vaultctl_start_hardening_linked(void);
int vaultctl_early_gate_linked(void);
int vaultctl_bus_connector_linked(void);

// early_gate.c: the command `argv` names (its name as vaultctl's command table spells it, "recovery show"),
// when the installed gate is started for it before main; NULL otherwise. `authenticates` (may be NULL): 1 when
// the command authenticates as a rule (the gate's --authenticating hint).
const char *vaultctl_early_gate_command(int argc, char *const argv[], int *authenticates);

// What early_gate.c's constructor started: `path` NULL when it started nothing (or it was taken already);
// otherwise the gate's path and how its start went. Taken once.
struct vaultctl_early_gate {
    const char *path;
    struct vaultctl_gate_start start;
};
struct vaultctl_early_gate vaultctl_take_early_gate(void);
#endif
