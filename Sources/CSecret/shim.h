/* The "unstable" part is the D-Bus path API (secret-paths.h), which secret-tool itself uses: it lets `list`
 * search for item paths without building a proxy object per item. */
#define SECRET_API_SUBJECT_TO_CHANGE 1
#include <libsecret/secret.h>
