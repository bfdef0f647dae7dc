#include <sys/prctl.h>
#include <sys/resource.h>

/* prctl(2) is variadic, which Swift cannot call; these fixed-argument wrappers can be. */
static inline int vaultctl_set_dumpable(int dumpable) { return prctl(PR_SET_DUMPABLE, dumpable, 0, 0, 0); }
static inline int vaultctl_get_dumpable(void) { return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0); }
