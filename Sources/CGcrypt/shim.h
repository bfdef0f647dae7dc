// libgcrypt (pkg-config libgcrypt). Imported only by Slots/SecretService/SessionCrypto/Gcrypt.swift.
#include <gcrypt.h>

// gcry_control is variadic, which Swift does not import: the initialisation sequence the libgcrypt manual
// gives for a program that uses secure memory ("Initializing the library"), in one call. Returns the
// library's version, or NULL when it is older than `required`. Safe to call more than once: a library that
// is already initialised (by another part of the process) is left as it is.
static inline const char *vaultctl_gcry_initialize(const char *required) {
    const char *version = gcry_check_version(required);
    if (version == NULL) return NULL;
    if (gcry_control(GCRYCTL_INITIALIZATION_FINISHED_P)) return version;
    gcry_control(GCRYCTL_SUSPEND_SECMEM_WARN);
    gcry_control(GCRYCTL_INIT_SECMEM, 32768, 0);
    gcry_control(GCRYCTL_RESUME_SECMEM_WARN);
    gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
    return version;
}
