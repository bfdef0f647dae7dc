#ifndef VAULTCTL_START_HARDENING_H
#define VAULTCTL_START_HARDENING_H
// start.c's constructor makes vaultctl not dumpable before anything else of it runs. This function only
// lets Swift name the module, so that its object is linked (and its constructor with it).
int vaultctl_start_hardening_linked(void);
#endif
