/* The child set-up of every program vaultctl starts (ChildSpawn in Swift, and the gate's start, which may run
   in a constructor before main): only descriptors 0, 1 and 2 (every other one closed in the child, even
   those vaultctl itself inherited without close-on-exec: the last file action), the signal mask emptied and
   SIGPIPE (which vaultctl ignores) back to its default; with `own_group`, the child leads a new process
   group. `actions` holds the caller's own file actions (the dups); `search` uses PATH (posix_spawnp).
   0 with the pid in `*pid`, or the errno. Allocates nothing. */
#ifndef VAULTCTL_SPAWN_H
#define VAULTCTL_SPAWN_H

#include <signal.h>
#include <spawn.h>
#include <sys/types.h>

extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);

static inline int vaultctl_spawn(pid_t *pid, const char *path, int search, int own_group, void *file_actions,
                                 char *const argv[], char *const envp[]) {
    posix_spawn_file_actions_t *actions = (posix_spawn_file_actions_t *)file_actions;
    int rc = posix_spawn_file_actions_addclosefrom_np(actions, 3);
    if (rc != 0) return rc;
    posix_spawnattr_t attr;
    if ((rc = posix_spawnattr_init(&attr)) != 0) return rc;
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
    rc = posix_spawnattr_setsigmask(&attr, &none);
    if (rc == 0) rc = posix_spawnattr_setsigdefault(&attr, &defaults);
    if (rc == 0 && own_group) {
        rc = posix_spawnattr_setpgroup(&attr, 0);
        flags |= POSIX_SPAWN_SETPGROUP;
    }
    if (rc == 0) rc = posix_spawnattr_setflags(&attr, flags);
    if (rc == 0) rc = search ? posix_spawnp(pid, path, actions, &attr, argv, envp) : posix_spawn(pid, path, actions, &attr, argv, envp);
    posix_spawnattr_destroy(&attr);
    return rc;
}

#endif
