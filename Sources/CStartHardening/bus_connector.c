// vaultctl as the session-bus connector (Sources/CBusConnector says why): when its only argument is
// VAULTCTL_BUS_CONNECTOR_ARGUMENT, it connects, hands the socket over on standard input and ends here,
// before the Swift runtime and main. start.c's constructor (priority 101) has made it not dumpable first;
// it becomes dumpable only once it holds nothing but the channel.
#include <string.h>
#include <unistd.h>
#include "CStartHardening.h"
#include "CBusConnector.h"

__attribute__((constructor(102))) static void vaultctl_bus_connector(int argc, char **argv, char **envp) {
    (void)envp;
    if (argc == 2 && argv[1] != NULL && strcmp(argv[1], VAULTCTL_BUS_CONNECTOR_ARGUMENT) == 0) _exit(vaultctl_run_bus_connector());
}

int vaultctl_bus_connector_linked(void) { return 0; }
