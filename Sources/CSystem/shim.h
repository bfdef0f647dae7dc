#include <sys/prctl.h>
#include <sys/resource.h>
#include <fcntl.h>

/* prctl(2) is variadic, which Swift cannot call; these fixed-argument wrappers can be. */
static inline int vaultctl_set_dumpable(int dumpable) { return prctl(PR_SET_DUMPABLE, dumpable, 0, 0, 0); }
static inline int vaultctl_get_dumpable(void) { return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0); }

/* pipe2(2) is declared only under _GNU_SOURCE, which Swift's Glibc module is not built with. */
extern int pipe2(int pipefd[2], int flags);
static inline int vaultctl_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

/* glibc 2.34+: close every descriptor from `from` up in the child, as the last file action. Declared here
   because Swift's Glibc module is not built with the feature macros that declare it. */
#include <spawn.h>
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);
static inline int vaultctl_spawn_closefrom(void *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np((posix_spawn_file_actions_t *)actions, from);
}

/* For vaultctl-gate's start-up checks: AT_SECURE from the auxiliary vector, and closing every inherited
   descriptor from `from` up (close_range(2), Linux 5.9; glibc's wrapper is declared only under _GNU_SOURCE). */
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>
static inline unsigned long vaultctl_at_secure(void) { return getauxval(AT_SECURE); }
static inline int vaultctl_close_from(unsigned int from) { return (int)syscall(SYS_close_range, from, ~0U, 0); }

/* The birth time of `path` (a final link not followed) in nanoseconds since the epoch, or -1 when the file
   system keeps none or the call fails: statx(2), which glibc declares only under _GNU_SOURCE. */
#include <linux/stat.h>
static inline long long vaultctl_birth_time(const char *path) {
    struct statx st;
    if (syscall(SYS_statx, AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_BTIME, &st) != 0) return -1;
    if (!(st.stx_mask & STATX_BTIME)) return -1;
    return (long long)st.stx_btime.tv_sec * 1000000000LL + st.stx_btime.tv_nsec;
}
