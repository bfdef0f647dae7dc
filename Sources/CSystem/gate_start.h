/* Starting vaultctl-gate: the one way vaultctl does it, from Swift (GateClient) and from the C constructor
   that starts it before the Swift runtime and main (Sources/CStartHardening/early_gate.c), which cannot
   call Swift. Also the standard descriptors made safe first, for the same two callers. */
#ifndef VAULTCTL_GATE_START_H
#define VAULTCTL_GATE_START_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>
#include "spawn.h"

extern int pipe2(int pipefd[2], int flags);

/* The PATH the gate sets for itself, and the only variables it keeps (as polkit's helper keeps them: the
   language of PAM's messages), separated by spaces. vaultctl gives it only these, so it never starts twice. */
#define VAULTCTL_GATE_PATH_VARIABLE "/usr/sbin:/usr/bin:/sbin:/bin"
#define VAULTCTL_GATE_KEPT_VARIABLES "LANG LANGUAGE LC_MESSAGES"
/* The gate's one argument: the command may authenticate (it makes ready for that; it changes nothing else). */
#define VAULTCTL_GATE_AUTHENTICATING_HINT "--authenticating"

/* Opens /dev/null on any of descriptors 0, 1 and 2 that is closed (`vaultctl read s <&-`), as setuid
   programs do; otherwise the first file opened would become standard input or output (a password line read
   from a lock file, a secret written into one). With no /dev/null (a bare sandbox), a read-only directory,
   on which reads and writes fail; with nothing at all to hold the place, the process ends (1). */
static inline void vaultctl_ensure_standard_descriptors(void) {
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
        int opened = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
        if (opened < 0) opened = open("/", O_RDONLY | O_DIRECTORY);
        if (opened < 0) _exit(1);
        if (opened != fd) {
            (void)dup2(opened, fd);
            (void)close(opened);
        }
    }
}

/* Where the gate is for the vaultctl that runs: ../libexec/vaultctl/vaultctl-gate from the folder of its own
   binary, as `make install` puts them. 1 with the path in `path` (PATH_MAX bytes) when there is a file there;
   0 otherwise. */
static inline int vaultctl_installed_gate_path(char path[PATH_MAX]) {
    static const char tail[] = "/libexec/vaultctl/vaultctl-gate";
    ssize_t n = readlink("/proc/self/exe", path, PATH_MAX - 1);
    if (n <= 0) return 0;
    path[n] = 0;
    for (int i = 0; i < 2; i++) {  /* the folder of the folder of the binary; "" for the root */
        char *slash = strrchr(path, '/');
        if (slash == NULL) return 0;
        *slash = 0;
    }
    size_t length = strlen(path);
    if (length + sizeof tail > PATH_MAX) return 0;
    memcpy(path + length, tail, sizeof tail);
    return access(path, F_OK) == 0;
}

/* How a start went: `failed` 0 (started), VAULTCTL_GATE_NO_PIPE or VAULTCTL_GATE_NOT_STARTED, with `error`
   the errno; on success vaultctl's ends of the two pipes (close-on-exec) and the gate's pid. */
enum { VAULTCTL_GATE_STARTED = 0, VAULTCTL_GATE_NO_PIPE = 1, VAULTCTL_GATE_NOT_STARTED = 2 };
struct vaultctl_gate_start {
    int failed;
    int error;
    pid_t pid;
    int to_gate;
    int from_gate;
};

/* The variable `name` as environ holds it ("NAME=value"), or NULL: the first one, as getenv finds it. */
static inline char *vaultctl_environment_entry(const char *name, size_t length) {
    for (char **e = __environ; e != NULL && *e != NULL; e++)
        if (strncmp(*e, name, length) == 0 && (*e)[length] == '=') return *e;
    return NULL;
}

/* Starts the gate at `path` (as every child: spawn.h) with its standard input and output on two new pipes,
   and only PATH and the kept variables in its environment. Allocates nothing: it may run before main. */
static inline struct vaultctl_gate_start vaultctl_gate_spawn(const char *path, int authenticating) {
    struct vaultctl_gate_start r = { VAULTCTL_GATE_STARTED, 0, -1, -1, -1 };
    int input[2], output[2];
    if (pipe2(input, O_CLOEXEC) != 0) {
        r.failed = VAULTCTL_GATE_NO_PIPE;
        r.error = errno;
        return r;
    }
    if (pipe2(output, O_CLOEXEC) != 0) {
        r.failed = VAULTCTL_GATE_NO_PIPE;
        r.error = errno;
        (void)close(input[0]);
        (void)close(input[1]);
        return r;
    }
    char *environment[8];
    int count = 0;
    environment[count++] = (char *)"PATH=" VAULTCTL_GATE_PATH_VARIABLE;
    const char *kept = VAULTCTL_GATE_KEPT_VARIABLES;
    while (*kept) {
        size_t length = strcspn(kept, " ");
        char *entry = vaultctl_environment_entry(kept, length);
        if (entry != NULL && count < 7) environment[count++] = entry;
        kept += length;
        while (*kept == ' ') kept++;
    }
    environment[count] = NULL;
    char *argv[] = { (char *)path, authenticating ? (char *)VAULTCTL_GATE_AUTHENTICATING_HINT : NULL, NULL };

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    int rc = posix_spawn_file_actions_adddup2(&actions, input[0], 0);
    if (rc == 0) rc = posix_spawn_file_actions_adddup2(&actions, output[1], 1);
    pid_t pid = -1;
    if (rc == 0) rc = vaultctl_spawn(&pid, path, 0, 0, &actions, argv, environment);
    posix_spawn_file_actions_destroy(&actions);
    (void)close(input[0]);
    (void)close(output[1]);
    if (rc != 0) {
        r.failed = VAULTCTL_GATE_NOT_STARTED;
        r.error = rc;
        (void)close(input[1]);
        (void)close(output[0]);
        return r;
    }
    r.pid = pid;
    r.to_gate = input[1];
    r.from_gate = output[0];
    return r;
}

#endif
