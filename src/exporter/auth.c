/* auth.c - basic-auth password checks against the web config's bcrypt hashes through crypt(3)
 * (libxcrypt: $2b$, $2a$, $2y$). */
#include "clusterfit/exporter.h"

#include <crypt.h>
#include <stdlib.h>
#include <string.h>

int cfit_web_check_password(const cfit_web_config *wc, const char *user, const char *password)
{
    const char *hash = NULL;
    for (size_t i = 0; i < wc->nusers; i++)
        if (strcmp(wc->users[i], user) == 0)
            hash = wc->hashes[i];
    if (!hash)
        return 0;
    struct crypt_data *cd = calloc(1, sizeof *cd);
    if (!cd)
        return 0;
    const char *got = crypt_r(password, hash, cd);
    int ok = 0;
    if (got && strlen(got) == strlen(hash)) {
        unsigned char diff = 0;   /* constant time over the hash */
        for (size_t i = 0; hash[i]; i++)
            diff |= (unsigned char)(got[i] ^ hash[i]);
        ok = diff == 0;
    }
    free(cd);
    return ok;
}
