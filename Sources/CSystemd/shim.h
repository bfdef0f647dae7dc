// sd-bus, systemd's D-Bus library (libsystemd). Imported only by Slots/SecretService/Bus/SDBus.swift.
//
// libsystemd is not linked: it is loaded with dlopen(3) the first time a command talks to the session bus,
// so the commands that never do (a device slot's read, help) do not pay for loading it and what it links (libgcrypt, libgpg-error, liblzma, libzstd, liblz4, libcap: about 0.6 ms a process, measured).
// systemd loads its own optional libraries the same way (src/shared/dlfcn-util.h, dlopen_many_sym_or_warn).
// The header gives the types and the prototypes, which `typeof` turns into the table's pointer types, so a
// function whose C signature changes fails to compile here rather than being called wrongly.
#include <systemd/sd-bus.h>
#include <dlfcn.h>
#include <stddef.h>

#define VAULTCTL_SD_BUS_FUNCTIONS(X) \
    X(sd_bus_new) X(sd_bus_set_address) X(sd_bus_set_bus_client) X(sd_bus_start) X(sd_bus_close_unref) \
    X(sd_bus_process) X(sd_bus_wait) X(sd_bus_is_ready) X(sd_bus_is_open) X(sd_bus_call_async) \
    X(sd_bus_add_match_async) X(sd_bus_slot_unref) X(sd_bus_message_new_method_call) X(sd_bus_message_ref) \
    X(sd_bus_message_unref) X(sd_bus_message_append_basic) X(sd_bus_message_append_array) \
    X(sd_bus_message_open_container) X(sd_bus_message_close_container) X(sd_bus_message_peek_type) \
    X(sd_bus_message_read_basic) X(sd_bus_message_read_array) X(sd_bus_message_enter_container) \
    X(sd_bus_message_exit_container) X(sd_bus_message_is_method_error) X(sd_bus_message_get_error) \
    X(sd_bus_get_fd) X(sd_bus_set_fd)

/// The sd-bus functions vaultctl calls, by name.
struct vaultctl_sd_bus {
#define VAULTCTL_FIELD(name) typeof(name) *_Nonnull name;
    VAULTCTL_SD_BUS_FUNCTIONS(VAULTCTL_FIELD)
#undef VAULTCTL_FIELD
};

/// Loads libsystemd (`soname`, found as a linked library would be) and fills `api`. Returns 0, or -1 with
/// `*error` set to dlerror(3)'s words (valid until the next dl* call). Call it once (the Swift side keeps
/// the result); the library stays loaded for the life of the process.
static inline int vaultctl_sd_bus_load(struct vaultctl_sd_bus *_Nonnull api, const char *_Nonnull soname,
                                       const char *_Nullable *_Nonnull error) {
    void *library = dlopen(soname, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (library == NULL) { *error = dlerror(); return -1; }
#define VAULTCTL_LOOKUP(name) \
    if ((*(void **)&api->name = dlsym(library, #name)) == NULL) { *error = dlerror(); return -1; }
    VAULTCTL_SD_BUS_FUNCTIONS(VAULTCTL_LOOKUP)
#undef VAULTCTL_LOOKUP
    return 0;
}
