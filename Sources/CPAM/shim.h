// libpam. Imported only by Vault/Presence/PAMGate.swift.
//
// libpam is not linked: it is loaded with dlopen(3) the first time a command authenticates, so the commands
// that never do (status, list, help, a store of a new value) do not pay for loading it and what it links
// (libaudit, libcap-ng: about 0.3 ms a process, measured). It is opened into the global scope and its
// functions are looked up there, exactly as the linker would have bound them: a library preloaded in front
// of it (cwrap's pam_wrapper, in the tests) still takes the calls, as it would for a linked libpam.
#include <security/pam_appl.h>
#include <dlfcn.h>
#include <stddef.h>

#define VAULTCTL_PAM_FUNCTIONS(X) X(pam_start) X(pam_set_item) X(pam_authenticate) X(pam_acct_mgmt) X(pam_strerror) X(pam_end)

/// The libpam functions vaultctl calls, by name.
struct vaultctl_pam {
#define VAULTCTL_FIELD(name) typeof(name) *_Nonnull name;
    VAULTCTL_PAM_FUNCTIONS(VAULTCTL_FIELD)
#undef VAULTCTL_FIELD
};

/// Loads libpam (by its soname, from the system's library path) and fills `api`. Returns 0, or -1 with
/// `*error` set to dlerror(3)'s words. Call it once (the Swift side keeps the result).
static inline int vaultctl_pam_load(struct vaultctl_pam *_Nonnull api, const char *_Nullable *_Nonnull error) {
    if (dlopen("libpam.so.0", RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE) == NULL) { *error = dlerror(); return -1; }
#define VAULTCTL_LOOKUP(name) \
    if ((*(void **)&api->name = dlsym(RTLD_DEFAULT, #name)) == NULL) { *error = dlerror(); return -1; }
    VAULTCTL_PAM_FUNCTIONS(VAULTCTL_LOOKUP)
#undef VAULTCTL_LOOKUP
    return 0;
}
