// bench/pam-clock.c: a benchmark aid for the real-PAM rows (bench/run.py builds it with cc when it can).
//
// Preloaded (LD_PRELOAD) into `vaultctl read` and into `pamtester`, it wraps the libpam calls both make
// (pam_start, pam_authenticate, pam_acct_mgmt, pam_end; each forwards to the real one through
// dlsym(RTLD_NEXT)) and, at exit, appends one line "INSIDE_NS TOTAL_NS" to the file named by $PAMCLOCK_OUT:
// the time spent inside those calls (the PAM stack, unix_chkpwd and its yescrypt, and the program's own
// conversation callback), and the time from this library's constructor to exit. TOTAL - INSIDE is the
// program's own work after it was loaded. Never in vaultctl itself, never in a test.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <security/pam_appl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long started, inside;

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

__attribute__((constructor)) static void pam_clock_start(void) { started = now_ns(); }

__attribute__((destructor)) static void pam_clock_stop(void) {
    const char *out = getenv("PAMCLOCK_OUT");
    FILE *f = out ? fopen(out, "a") : NULL;
    if (!f) return;
    fprintf(f, "%lld %lld\n", inside, now_ns() - started);
    fclose(f);
}

#define PAM_CLOCK_WRAP(name, params, args)                                  \
    int name params {                                                       \
        static int (*real) params;                                          \
        if (!real) *(void **)&real = dlsym(RTLD_NEXT, #name);               \
        if (!real) return PAM_ABORT;                                        \
        long long t = now_ns();                                             \
        int r = real args;                                                  \
        inside += now_ns() - t;                                             \
        return r;                                                           \
    }

PAM_CLOCK_WRAP(pam_start, (const char *s, const char *u, const struct pam_conv *c, pam_handle_t **h), (s, u, c, h))
PAM_CLOCK_WRAP(pam_authenticate, (pam_handle_t *h, int f), (h, f))
PAM_CLOCK_WRAP(pam_acct_mgmt, (pam_handle_t *h, int f), (h, f))
PAM_CLOCK_WRAP(pam_end, (pam_handle_t *h, int s), (h, s))
