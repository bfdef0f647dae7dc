#include <sys/prctl.h>
#include <sys/resource.h>
#include <fcntl.h>

/* prctl(2) is variadic, which Swift cannot call; these fixed-argument wrappers can be. */
static inline int vaultctl_set_dumpable(int dumpable) { return prctl(PR_SET_DUMPABLE, dumpable, 0, 0, 0); }
static inline int vaultctl_get_dumpable(void) { return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0); }

/* pipe2(2) is declared only under _GNU_SOURCE, which Swift's Glibc module is not built with. */
extern int pipe2(int pipefd[2], int flags);
static inline int vaultctl_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }
