// libgcrypt. Imported only by Slots/SecretService/SessionCrypto/Gcrypt.swift.
//
// libgcrypt is not linked: it is loaded with dlopen(3) the first time a value crosses the bus, as systemd
// loads it (on Debian 12 libsystemd links it, so it is already there by then; a libsystemd that dlopens it
// itself, as systemd 256 and later do, leaves the first key exchange to load it) (src/shared/gcrypt-util.c, dlopen_gcrypt). The
// header gives the types and prototypes; `typeof` turns them into the table's pointer types.
#include <gcrypt.h>
#include <dlfcn.h>
#include <stddef.h>

#define VAULTCTL_GCRY_FUNCTIONS(X) \
    X(gcry_check_version) X(gcry_control) X(gcry_malloc_secure) X(gcry_free) \
    X(gcry_mpi_new) X(gcry_mpi_snew) X(gcry_mpi_release) X(gcry_mpi_set) X(gcry_mpi_set_ui) \
    X(gcry_mpi_scan) X(gcry_mpi_print) X(gcry_mpi_get_nbits) X(gcry_mpi_cmp) X(gcry_mpi_cmp_ui) \
    X(gcry_mpi_sub_ui) X(gcry_mpi_powm) X(gcry_mpi_randomize) \
    X(gcry_cipher_open) X(gcry_cipher_setkey) X(gcry_cipher_setiv) X(gcry_cipher_encrypt) \
    X(gcry_cipher_decrypt) X(gcry_cipher_close)

/// The libgcrypt functions vaultctl calls, by name.
struct vaultctl_gcry {
#define VAULTCTL_FIELD(name) typeof(name) *_Nonnull name;
    VAULTCTL_GCRY_FUNCTIONS(VAULTCTL_FIELD)
#undef VAULTCTL_FIELD
};

/// Loads libgcrypt (`soname`: libgcrypt.so.20, the ABI since 1.6) and fills `api`; then the initialisation
/// sequence the libgcrypt manual gives for a program that uses secure memory ("Initializing the library"):
/// version check, a secure-memory pool, "initialization finished". gcry_control is variadic, which Swift does
/// not import, hence this C. Returns the library's version; NULL with `*error` set when it cannot be loaded
/// or is older than `required`. A library another part of the process initialised is left as it is.
static inline const char *_Nullable vaultctl_gcry_load(struct vaultctl_gcry *_Nonnull api, const char *_Nonnull soname,
                                                       const char *_Nonnull required,
                                                       const char *_Nullable *_Nonnull error) {
    void *library = dlopen(soname, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (library == NULL) { *error = dlerror(); return NULL; }
#define VAULTCTL_LOOKUP(name) \
    if ((*(void **)&api->name = dlsym(library, #name)) == NULL) { *error = dlerror(); return NULL; }
    VAULTCTL_GCRY_FUNCTIONS(VAULTCTL_LOOKUP)
#undef VAULTCTL_LOOKUP
    const char *version = api->gcry_check_version(required);
    if (version == NULL) { *error = "the installed libgcrypt is older than vaultctl requires"; return NULL; }
    if (api->gcry_control(GCRYCTL_INITIALIZATION_FINISHED_P)) return version;
    api->gcry_control(GCRYCTL_SUSPEND_SECMEM_WARN);
    api->gcry_control(GCRYCTL_INIT_SECMEM, 32768, 0);
    api->gcry_control(GCRYCTL_RESUME_SECMEM_WARN);
    api->gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
    return version;
}
